graph @heads {
  input %x : f32[1,6,5,5]
  const %wa : f32[8,6,1,1] = random<1>
  const %wb : f32[4,6,1,1] = random<2>
  const %wc : f32[12,6,1,1] = random<3>
  const %bb : f32[4] = random<4>
  %a = Conv(%x, %wa) {mg_act = "Relu"} loc("head_a")
  %b = Conv(%x, %wb, %bb) {mg_act = "Relu"} loc("head_b")
  %c = Conv(%x, %wc) {mg_act = "Relu"} loc("head_c")
  %ta = Tanh(%a)
  %tc = Sigmoid(%c)
  output %ta, %b, %tc
}
