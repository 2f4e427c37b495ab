graph @keep {
  input %x : f32[4]
  %y = Identity(%x)
  %d, %m = Dropout(%x)
  output %y, %m
}
