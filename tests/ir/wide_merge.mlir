// RUN: magneto-opt %s --passes=wide-merge,dce --check-equivalence | FileCheck %s

// Case 1: three Inception-style 1x1 heads on one input (one with a bias, all with Relu) become one
// 1x1 Conv of 24 channels read through channel slices in schedule order.
// CHECK-LABEL: graph @heads
// CHECK: parallel #0 "wide" "3 Convs on %x merged into one 1x1 Conv of 24 channels" {
// CHECK-NEXT: %[[M:[a-z_0-9]+]] : f32[1,24,5,5] = Conv(%x, %[[W:[a-z_0-9]+]], %{{[a-z_0-9]+}}) {mg_act = "Relu"}
// CHECK-NEXT: }
// CHECK-NEXT: MgChannelSlice(%[[M]]) {begin = 0, end = 8}
// CHECK: MgChannelSlice(%[[M]]) {begin = 8, end = 12}
// CHECK: MgChannelSlice(%[[M]]) {begin = 12, end = 24}
// CHECK-NOT: Conv(
// CHECK: output
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
