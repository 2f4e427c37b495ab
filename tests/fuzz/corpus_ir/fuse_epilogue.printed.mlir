graph @epi {
  input %x : f32[1,4,6,6]
  const %w : f32[4,4,3,3] = blob<0x24985c55b9253d08>
  const %gw : f32[144,5] = blob<0xf4be4d589f3ed9b1>
  const %conv_bias : f32[4] = dense<[0.974938393, 0.155256763, -0.427268118, 0.0763556138]>
  %sc : f32[1,4,6,6] = Sigmoid(%x)
  %c : f32[1,4,6,6] = Conv(%x, %w, %conv_bias, %sc) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("conv")
  %f : f32[1,144] = Flatten(%x)
  %g : f32[1,5] = Gemm(%f, %gw) {mg_act = "Clip", mg_alpha = -1.0, mg_beta = 1.0}
  %s2 : f32[1,4,6,6] = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("shared")
  %r2 : f32[1,4,6,6] = Relu(%s2)
  %t2 : f32[1,4,6,6] = Tanh(%s2)
  output %c, %g, %r2, %t2
}
