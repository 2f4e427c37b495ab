// RUN: magneto-opt %s --passes=print-parallel-groups | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize --device=h200 --target=cuda --check-equivalence | FileCheck %s --check-prefix=JOINT

// A two-tower recommender: the user tower on input %user, the item tower on input %item, joined
// by their dot product. No tensor is shared, but the towers are independent from the graph's
// inputs on: step 0 groups their first layers, step 1 their second ones.
// CHECK: // group 0: graph inputs step 0 (branch step): user_fc1 (Gemm), item_fc1 (Gemm)
// CHECK-NEXT: // group 1: graph inputs step 1 (branch step): user_fc2 (Gemm), item_fc2 (Gemm)
// CHECK-NOT: group 2
// CHECK-LABEL: graph @two_towers
// On the H200 profile both groups become joint kernels, only the schedule changing.
// JOINT-LABEL: graph @two_towers
// JOINT: parallel #0 "joint" "joint {{.*}} 1 launch instead of 2" {
// JOINT-NEXT: loc("user_fc1")
// JOINT-NEXT: loc("item_fc1")
// JOINT: parallel #1 "joint" "joint {{.*}} 1 launch instead of 2" {
// JOINT-NEXT: loc("user_fc2")
// JOINT-NEXT: loc("item_fc2")
graph @two_towers {
  input %user : f32[8,48]
  input %item : f32[8,24]
  const %wu1 : f32[48,64] = random<1>
  const %wu2 : f32[64,16] = random<2>
  const %wi1 : f32[24,64] = random<3>
  const %wi2 : f32[64,16] = random<4>
  %u1 = Gemm(%user, %wu1) {mg_act = "Relu"} loc("user_fc1")
  %u2 = Gemm(%u1, %wu2) loc("user_fc2")
  %i1 = Gemm(%item, %wi1) {mg_act = "Relu"} loc("item_fc1")
  %i2 = Gemm(%i1, %wi2) loc("item_fc2")
  %p = Mul(%u2, %i2) loc("dot_mul")
  %s = ReduceSum(%p) {axes = [1], keepdims = 0} loc("dot_sum")
  output %s
}
