graph @canon {
  input %x : f32[1,3,4,4]
  const %w : f32[2,3,1,1] = random<1>
  %c = Conv(%x, %w) loc("conv")
  %i = Identity(%c)
  %d = Dropout(%i) {ratio = 0.5}
  %r = Relu(%d)
  output %r
}
