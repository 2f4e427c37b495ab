graph @epi {
  input %x : f32[1,4,6,6]
  const %w : f32[4,4,3,3] = random<1>
  const %bias : f32[4,1,1] = random<2>
  const %gw : f32[144,5] = random<3>
  const %lo : f32[] = dense<[-1.0]>
  const %hi : f32[] = dense<[1.0]>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("conv")
  %cb = Add(%c, %bias)
  %sc = Sigmoid(%x)
  %res = Add(%cb, %sc)
  %y = Relu(%res)
  %f = Flatten(%x)
  %g = Gemm(%f, %gw)
  %gc = Clip(%g, %lo, %hi)
  %s2 = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("shared")
  %r2 = Relu(%s2)
  %t2 = Tanh(%s2)
  output %y, %gc, %r2, %t2
}
