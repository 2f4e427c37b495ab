graph @inception {
  input %x : f32[1,8,8,8]
  const %w1 : f32[4,8,1,1] = random<1>
  const %w3 : f32[4,4,3,3] = random<2>
  const %w5 : f32[4,4,5,5] = random<3>
  %y0 = Conv(%x, %w1) loc("b0")
  %y1a = Conv(%x, %w1) loc("b1a")
  %y1b = Conv(%y1a, %w5) {pads = [2, 2, 2, 2]} loc("b1b")
  %y2a = Conv(%x, %w1) loc("b2a")
  %y2b = Conv(%y2a, %w3) {pads = [1, 1, 1, 1]} loc("b2b")
  %y2c = Conv(%y2b, %w3) {pads = [1, 1, 1, 1]} loc("b2c")
  %y3a = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} loc("b3a")
  %y3b = Conv(%y3a, %w1) loc("b3b")
  %c = Concat(%y0, %y1b, %y2c, %y3b) {axis = 1} loc("join")
  output %c
}
