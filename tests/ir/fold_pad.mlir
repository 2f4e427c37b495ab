// RUN: magneto-opt %s --passes=fold-pad --check-equivalence | FileCheck %s

// Case 1: PyTorch's AvgPool2d(padding=1, count_include_pad=True) export: Pad + AveragePool.
// CHECK-LABEL: graph @pad
// CHECK: AveragePool(%x) {count_include_pad = 1, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]}
// Case 2: a zero Pad before a Conv adds to the Conv's own pads.
// CHECK: Conv(%x, %w) {pads = [1, 2, 1, 2]}
// Case 3 (negative): a reflect Pad stays.
// CHECK: Pad(%x, %p2) {mode = "reflect"}
// Case 4 (negative): a Pad before a MaxPool stays (MaxPool pads act as -inf, not 0).
// CHECK: MaxPool(%q
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
