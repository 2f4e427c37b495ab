graph @keep {
  input %x : f32[4]
  %y = Identity(%x)
  %d, %d = Identity(%x)
  