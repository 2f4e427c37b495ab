graph @chain {
  input %x : f32[1,4,16,16]
  const %w : f32[4,4,3,3] = random<1>
  %a = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("c1")
  %b = Relu(%a) loc("r1")
  %c = Conv(%b, %w) {pads = [1, 1, 1, 1]} loc("c2")
  output %c
}
