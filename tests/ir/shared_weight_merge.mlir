// RUN: magneto-opt %s --passes=shared-weight-merge,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=shared-weight-merge --debug-only=shared-weight-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// An unrolled recurrence h_t = Tanh(Gemm(h_{t-1}, U)) with a vocabulary projection of
// every step through ONE weight %w (an unrolled decoder's LM head): the four projections are
// mutually independent and become one Gemm of 4 x 2 rows after the last step, reading %w once;
// each projection is a row slice of it and keeps its output name. The recurrence's Gemms share
// %u too, but each depends on the one before: they stay.
// CHECK-LABEL: graph @decoder
// CHECK: %proj_0_shared_stack : f32[8,64] = Concat(%h1, %h2, %h3, %h4) {axis = 0}
// CHECK-NEXT: parallel #0 "batch" "4 Gemms of K=64 N=2048 sharing weight %w on different inputs -> one Gemm of 8 rows; merged {{[0-9.]+}} us (Concat + Gemm) vs sequential {{[0-9.]+}} us
// CHECK-NEXT: %proj_0_shared : f32[8,2048] = Gemm(%proj_0_shared_stack, %w, %b) {transB = 1}
// CHECK-NEXT: }
// CHECK-NEXT: %proj_0_shared_rows : f32[1,8,2048] = Reshape(%proj_0_shared,
// CHECK-NEXT: %proj_0_rows : f32[1,2,2048] = MgChannelSlice(%proj_0_shared_rows) {begin = 0, end = 2}
// CHECK-NEXT: %p1 : f32[2,2048] = Reshape(%proj_0_rows,
// CHECK: MgChannelSlice(%proj_0_shared_rows) {begin = 6, end = 8}
// CHECK-NEXT: %p4 : f32[2,2048] = Reshape(
// CHECK-NOT: Gemm(%h{{[0-9]}}, %w
// CHECK: output %p1, %p2, %p3, %p4
// LOG: [shared-weight-merge] #0 merge [proj_0, proj_1, proj_2, proj_3]
// LOG-NOT: merge [step
graph @decoder {
  input %h0 : f32[2,64]
  const %u : f32[64,64] = random<1>
  const %w : f32[2048,64] = random<2>
  const %b : f32[2048] = random<3>
  %g1 = Gemm(%h0, %u) loc("step_1")
  %h1 = Tanh(%g1)
  %p1 = Gemm(%h1, %w, %b) {transB = 1} loc("proj_0")
  %g2 = Gemm(%h1, %u) loc("step_2")
  %h2 = Tanh(%g2)
  %p2 = Gemm(%h2, %w, %b) {transB = 1} loc("proj_1")
  %g3 = Gemm(%h2, %u) loc("step_3")
  %h3 = Tanh(%g3)
  %p3 = Gemm(%h3, %w, %b) {transB = 1} loc("proj_2")
  %g4 = Gemm(%h3, %u) loc("step_4")
  %h4 = Tanh(%g4)
  %p4 = Gemm(%h4, %w, %b) {transB = 1} loc("proj_3")
  output %p1, %p2, %p3, %p4
}
