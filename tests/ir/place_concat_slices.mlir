// RUN: magneto-opt %s --passes=place-concat-slices --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=place-concat-slices,print-parallel-groups,parallel-co-optimize --device=h200 --check-equivalence | FileCheck %s --check-prefix=PIPE

// What wide-merge leaves behind an Inception module: one conv whose channel slices are a branch's
// result (%a, straight into the Concat) and the heads of two longer branches. Copying %a into
// its place lets the Concat be elided: %bb and %cc are written in place already.
// CHECK-LABEL: graph @wide
// CHECK: %a : f32[1,4,8,8] = MgChannelSlice(%w) {begin = 0, end = 4, materialize = 1}
// CHECK: %b : f32[1,4,8,8] = MgChannelSlice(%w) {begin = 4, end = 8}
// CHECK: %c : f32[1,8,8,8] = MgChannelSlice(%w) {begin = 8, end = 16}
// The copy is now a kernel at the same step as the two convolutions (views are no step), so
// parallel-co-optimize can put all three in one joint kernel.
// PIPE-LABEL: // group 0: fork %w step 0 (branch step): a (MgChannelSlice), bb (Conv), cc (Conv)
// PIPE: parallel #0 "joint"
// PIPE-NEXT: MgChannelSlice(%w) {begin = 0, end = 4, materialize = 1}
// PIPE-NEXT: Conv(%b,
// PIPE-NEXT: Conv(%c,
graph @wide {
  input %x : f32[1,8,8,8]
  const %w16 : f32[16,8,1,1] = random<1>
  const %w3 : f32[4,4,3,3] = random<2>
  const %w3c : f32[4,8,3,3] = random<3>
  %w = Conv(%x, %w16) loc("wide")
  %a = MgChannelSlice(%w) {begin = 0, end = 4} loc("a")
  %b = MgChannelSlice(%w) {begin = 4, end = 8} loc("b")
  %c = MgChannelSlice(%w) {begin = 8, end = 16} loc("c")
  %bb = Conv(%b, %w3) {pads = [1, 1, 1, 1]} loc("bb")
  %cc = Conv(%c, %w3c) {pads = [1, 1, 1, 1]} loc("cc")
  %cat = Concat(%a, %bb, %cc) {axis = 1} loc("join")
  %o = Relu(%cat)
  output %o
}
