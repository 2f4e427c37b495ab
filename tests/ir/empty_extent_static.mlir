// RUN: magneto-opt %s --passes=fold,fuse-elementwise,dce --check-equivalence | FileCheck %s

// The same ops as empty_extent.mlir on static empty tensors through the reference interpreter (--check-equivalence
// runs the graph before and after the passes): Concat with an empty operand, MatMul with K = 0
// (zeros, plus the bias), ReduceSum over nothing (zeros), Softmax over an empty axis (empty).
// CHECK-LABEL: graph @empty
// CHECK: %k : f32[2,3,8] = Concat(%past, %new)
// CHECK: %ksm : f32[2,8,0] = Softmax(
graph @empty {
  input %q : f32[2,3,8]
  input %new : f32[2,3,8]
  input %past : f32[2,0,8]
  const %bias : f32[8] = random<3>
  %k = Concat(%past, %new) {axis = 1}
  %kT = Transpose(%k) {perm = [0, 2, 1]}
  %scores = MatMul(%q, %kT)
  %probs = Softmax(%scores) {axis = -1}
  %pT = Transpose(%past) {perm = [0, 2, 1]}
  %gram0 = MatMul(%pT, %past)
  %gram = Add(%gram0, %bias)
  %ksum = ReduceSum(%past) {axes = [1], keepdims = 1}
  %ksm = Softmax(%pT) {axis = -1}
  %tail = Relu(%past)
  output %probs, %gram, %ksum, %ksm, %tail
}
