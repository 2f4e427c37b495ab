graph @pad {
  input %x : f32[1,2,6,6]
  const %p : i64[8] = dense<[0, 0, 1, 1, 0, 0, 1, 1]>
  const %p2 : i64[8] = dense<[0, 0, 0, 1, 0, 0, 0, 1]>
  const %w : f32[3,2,3,3] = random<1>
  %a = Pad(%x, %p)
  %y = AveragePool(%a) {kernel_shape = [3, 3], strides = [1, 1]}
  %b = Pad(%x, %p2)
  %c = Conv(%b, %w) {pads = [1, 1, 1, 1]}
  %r = Pad(%x, %p2) {mode = "reflect"}
  %q = Pad(%x, %p)
  %m = MaxPool(%q) {kernel_shape = [2, 2]}
  output %y, %c, %r, %m
}
