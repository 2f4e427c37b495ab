graph @bn {
  input %x : f32[1,4,5,5]
  const %w_bn : f32[4,4,3,3] = blob<0x3770af3ed82dac59>
  const %bn1_bias : f32[4] = dense<[0.74377352, -0.439116925, -0.0730925128, -0.515960634]>
  const %bn2_scale : f32[4,1,1] = dense<[1.37875736, 0.155255988, -0.302123427, 0.152708173]>
  const %bn2_shift : f32[4,1,1] = dense<[0.744355798, -0.439122796, -0.0731294975, -0.516002536]>
  %c : f32[1,4,5,5] = Conv(%x, %w_bn, %bn1_bias) {pads = [1, 1, 1, 1]} loc("conv")
  %"bn2/mul" : f32[1,4,5,5] = Mul(%x, %bn2_scale) loc("bn2/mul")
  %"bn2/add" : f32[1,4,5,5] = Add(%"bn2/mul", %bn2_shift) loc("bn2/add")
  output %c, %"bn2/add"
}
