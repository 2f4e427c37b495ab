// RUN: magneto-opt %s --passes=print-parallel-groups | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize --device=h200 --target=cuda --check-equivalence | FileCheck %s --check-prefix=JOINT

// Roots that are not one shared tensor (issue #16): towers on the outputs of one Split, as
// torch.split/chunk export them, and towers on different graph inputs (a two-tower recommender).
// Their branches share no tensor, yet they are as independent as a fork's: the analysis groups
// them step by step. Relu on 4x32 elements is too small to be a group member (no kernel worth
// a slot), so each tower's second Gemm is its step 2.
// CHECK: // group 0: outputs of %split (Split) step 0 (branch step): t0a (Gemm), t1a (Gemm), t2a (Gemm)
// CHECK-NEXT: // group 1: outputs of %split (Split) step 2 (branch step): t0b (Gemm), t1b (Gemm), t2b (Gemm)
// CHECK-NOT: group 2
// CHECK-LABEL: graph @split_towers
// On the H200 profile each group becomes one joint kernel (three launches become one), only the
// schedule changing (numerics checked by --check-equivalence).
// JOINT-LABEL: graph @split_towers
// JOINT: parallel #0 "joint" "joint {{.*}} 1 launch instead of 3" {
// JOINT-NEXT: loc("t0a")
// JOINT-NEXT: loc("t1a")
// JOINT-NEXT: loc("t2a")
// JOINT: parallel #1 "joint" "joint {{.*}} 1 launch instead of 3" {
// JOINT-NEXT: loc("t0b")
graph @split_towers {
  input %x : f32[4,96]
  const %sizes : i64[3] = dense<[32, 32, 32]>
  const %w0 : f32[32,32] = random<1>
  const %w1 : f32[32,32] = random<2>
  const %w2 : f32[32,32] = random<3>
  const %v0 : f32[32,8] = random<4>
  const %v1 : f32[32,8] = random<5>
  const %v2 : f32[32,8] = random<6>
  %p0, %p1, %p2 = Split(%x, %sizes) {axis = 1} loc("split")
  %h0 = Gemm(%p0, %w0) loc("t0a")
  %r0 = Relu(%h0) loc("t0r")
  %o0 = Gemm(%r0, %v0) loc("t0b")
  %h1 = Gemm(%p1, %w1) loc("t1a")
  %r1 = Relu(%h1) loc("t1r")
  %o1 = Gemm(%r1, %v1) loc("t1b")
  %h2 = Gemm(%p2, %w2) loc("t2a")
  %r2 = Relu(%h2) loc("t2r")
  %o2 = Gemm(%r2, %v2) loc("t2b")
  %c = Concat(%o0, %o1, %o2) {axis = 1} loc("join")
  output %c
}
