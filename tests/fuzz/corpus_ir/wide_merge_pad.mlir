graph @squeeze {
  input %s : f32[1,4,6,6]
  const %w1 : f32[2,4,1,1] = random<5>
  const %b1 : f32[2] = random<6>
  const %w3 : f32[8,4,3,3] = random<7>
  const %b3 : f32[8] = random<8>
  %e1 = Conv(%s, %w1, %b1) {mg_act = "Relu"} loc("expand1x1")
  %e3 = Conv(%s, %w3, %b3) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("expand3x3")
  %cat = Concat(%e1, %e3) {axis = 1}
  output %cat
}
