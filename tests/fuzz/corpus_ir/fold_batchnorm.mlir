graph @bn {
  input %x : f32[1,4,5,5]
  const %w : f32[4,4,3,3] = random<1>
  const %s : f32[4] = random<2>
  const %b : f32[4] = random<3>
  const %m : f32[4] = random<4>
  const %v : f32[4] = dense<[0.5, 1.0, 2.0, 0.25]>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("conv")
  %y = BatchNormalization(%c, %s, %b, %m, %v) {epsilon = 0.001} loc("bn1")
  %z = BatchNormalization(%x, %s, %b, %m, %v) loc("bn2")
  output %y, %z
}
