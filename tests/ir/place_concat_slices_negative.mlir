// RUN: magneto-opt %s --passes=place-concat-slices --check-equivalence | FileCheck %s

// No slice is materialized where the Concat would run anyway: the copy would only move.
// CHECK-NOT: materialize
// Case 1: a graph input is an operand (it stays where the caller put it; the Concat copies it).
// CHECK-LABEL: graph @negative
// CHECK: MgChannelSlice(%w) {begin = 0, end = 4} loc("a")
// Case 2: the other operand sits 36 bytes in (3x3 floats): not 64-byte aligned, so not in place.
// CHECK: MgChannelSlice(%v) {begin = 0, end = 1} loc("s")
// Case 3: the Concat's result is a graph output (the caller's buffer, not the arena).
// CHECK: MgChannelSlice(%w) {begin = 4, end = 8} loc("d")
graph @negative {
  input %x : f32[1,8,8,8]
  input %t : f32[1,1,3,3]
  const %w16 : f32[16,8,1,1] = random<1>
  const %w2 : f32[2,1,1,1] = random<2>
  %w = Conv(%x, %w16) loc("wide")
  %a = MgChannelSlice(%w) {begin = 0, end = 4} loc("a")
  %cat1 = Concat(%a, %x) {axis = 1} loc("join1")
  %o1 = Relu(%cat1)
  %v = Conv(%t, %w2) loc("v")
  %s = MgChannelSlice(%v) {begin = 0, end = 1} loc("s")
  %s2 = Sigmoid(%t)
  %cat2 = Concat(%s2, %s) {axis = 1} loc("join2")
  %o2 = Relu(%cat2)
  %d = MgChannelSlice(%w) {begin = 4, end = 8} loc("d")
  %e = Relu(%x)
  %cat3 = Concat(%d, %e) {axis = 1} loc("join3")
  output %o1, %o2, %cat3
}
