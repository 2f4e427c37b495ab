graph @ew {
  input %x : f32[1,3,4,4]
  const %s : f32[3,1,1] = random<1>
  const %t : f32[3,1,1] = random<2>
  %a = Mul(%x, %s)
  %b = Add(%a, %t)
  %r = LeakyRelu(%b) {alpha = 0.1}
  %u = Exp(%x)
  %sg = Sigmoid(%u)
  %sw = Mul(%u, %sg)
  %th = Tanh(%x)
  output %r, %sw, %th
}
