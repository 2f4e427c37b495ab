// RUN: magneto-opt %s --passes=wide-merge,dce,parallel-co-optimize --device=h200 --target=cuda --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=wide-merge --device=h200 --target=cuda --debug-only=wide-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: magneto-opt %s --passes=wide-merge --debug-only=wide-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=HOST

// wide-merge is priced by the target's cost model against what it removes: the members left to
// parallel-co-optimize (here one joint kernel of the three). The same three Inception 1x1 heads
// (64, 48, 64 channels of 192, 35x35) on two inputs, one image and eight:
// - batch 1 (%x1): the channel slices of the wide conv are byte-offset views; one 176-channel
//   conv prices below the co-tuned joint kernel of three on the h200: merged.
// - batch 8 (%x8): every slice is a strided copy launch; the wide conv plus three copies prices
//   above the joint kernel: declined, recorded as an advisory "none" group, and the three convs
//   are left to parallel-co-optimize, which makes them one joint kernel.
// LOG: merge: 3 Convs on %x1 merged into one 1x1 Conv of 176 channels: merged [[M1:[0-9.]+]] us (wide 1x1 conv [[M1]] us + 0 slice copies 0.00 us) vs separate {{[0-9.]+}} us (joint of 3 with 0 other siblings
// LOG: decline: wide merge of 3 Convs on %x8 declined: merged {{[0-9.]+}} us (wide 1x1 conv {{[0-9.]+}} us + 3 slice copies {{[0-9.]+}} us) vs separate {{[0-9.]+}} us (joint of 3 with 0 other siblings
// On the cpu target the FLOPs rule alone decides (passes/wide_merge.cpp says why): both merge.
// HOST: merge: 3 Convs on %x1 merged into one 1x1 Conv of 176 channels
// HOST-NOT: declined
// HOST: merge: 3 Convs on %x8 merged into one 1x1 Conv of 176 channels
// CHECK-LABEL: graph @cost
// CHECK: parallel #0 "wide" "3 Convs on %x1 merged into one 1x1 Conv of 176 channels: merged
// CHECK-NEXT: %[[W:[a-z_0-9]+]] : f32[1,176,35,35] = Conv(%x1, %{{[a-z_0-9]+}}) {mg_act = "Relu"} loc("one_a_wide")
// CHECK-NEXT: }
// CHECK: MgChannelSlice(%[[W]]) {begin = 0, end = 64}
// CHECK: MgChannelSlice(%[[W]]) {begin = 64, end = 112}
// CHECK: MgChannelSlice(%[[W]]) {begin = 112, end = 176}
// CHECK: parallel #{{[0-9]+}} "joint"
// CHECK-NEXT: Conv(%x8, %wa) {mg_act = "Relu"} loc("eight_a")
// CHECK-NEXT: Conv(%x8, %wb) {mg_act = "Relu"} loc("eight_b")
// CHECK-NEXT: Conv(%x8, %wc) {mg_act = "Relu"} loc("eight_c")
// CHECK-NEXT: }
// CHECK-NOT: MgChannelSlice
graph @cost {
  input %x1 : f32[1,192,35,35]
  input %x8 : f32[8,192,35,35]
  const %wa : f32[64,192,1,1] = random<1>
  const %wb : f32[48,192,1,1] = random<2>
  const %wc : f32[64,192,1,1] = random<3>
  %a1 = Conv(%x1, %wa) {mg_act = "Relu"} loc("one_a")
  %b1 = Conv(%x1, %wb) {mg_act = "Relu"} loc("one_b")
  %c1 = Conv(%x1, %wc) {mg_act = "Relu"} loc("one_c")
  %a8 = Conv(%x8, %wa) {mg_act = "Relu"} loc("eight_a")
  %b8 = Conv(%x8, %wb) {mg_act = "Relu"} loc("eight_b")
  %c8 = Conv(%x8, %wc) {mg_act = "Relu"} loc("eight_c")
  %s1 = Concat(%a1, %b1) {axis = 1}
  %t1 = Tanh(%c1)
  %s8 = Concat(%a8, %b8) {axis = 1}
  %t8 = Tanh(%c8)
  output %s1, %t1, %s8, %t8
}
