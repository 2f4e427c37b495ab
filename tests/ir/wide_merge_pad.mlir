// RUN: magneto-opt %s --passes=wide-merge,dce --check-equivalence | FileCheck %s
// Case 2: a thin 1x1 beside a 3x3 (pads 1) becomes one 3x3 Conv (pads 1) whose first 2 channels are
// the 1x1 weights at the centre tap, zeros elsewhere (1.22x the FLOPs, under the CPU's limit of
// 1.5x); a Concat of both slices is the Conv itself.
// CHECK-LABEL: graph @squeeze
// CHECK: parallel #0 "wide" "2 Convs on %s merged into one 3x3 Conv of 10 channels" {
// CHECK-NEXT: %[[M:[a-z_0-9]+]] : f32[1,10,6,6] = Conv(%s, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}) {mg_act = "Relu", pads = [1, 1, 1, 1]}
// CHECK-NOT: Concat
// CHECK: output %[[M]]
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
