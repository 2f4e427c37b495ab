graph @dce {
  input %x : f32[4]
  input %unused : f32[4]
  const %c : f32[4] = random<2>
  %a = Sigmoid(%c)
  %b = Relu(%x)
  output %b
}
