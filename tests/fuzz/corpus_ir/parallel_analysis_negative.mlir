graph @chain {
  input %x : f32[1,4,16,16]
  const %w : f32[4,4,1,1] = random<1>
  %a = Conv(%x, %w) loc("a")
  %b = Mul(%a, %x) loc("b")
  output %b
}
