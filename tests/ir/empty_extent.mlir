// RUN: magneto-opt %s --passes=fold,fuse-elementwise,dce --check-equivalence | FileCheck %s

// A dynamic dim whose range starts at 0 (issue #40: a KV cache that is empty at prefill): the
// symbol P [0, 8] parses and prints, the consumers' shapes are fitted and verified over [0, 8]
// (P + T for the Concat with the new keys; the MatMul over K = P keeps its static [8,8]).
// CHECK-LABEL: graph @kv
// CHECK: symbol P [0, 8]
// CHECK: %k : f32[2,12,8] as [2,P+T,8] = Concat(%past, %new)
// CHECK: %probs : f32[2,4,12] as [2,T,P+T] = Softmax(
// CHECK: %gram : f32[2,8,8] = MatMul(
graph @kv {
  symbol T [1, 4]
  symbol P [0, 8]
  input %q : f32[2,4,8] as [2,T,8]
  input %new : f32[2,4,8] as [2,T,8]
  input %past : f32[2,8,8] as [2,P,8]
  %k = Concat(%past, %new) {axis = 1}
  %kT = Transpose(%k) {perm = [0, 2, 1]}
  %scores = MatMul(%q, %kT)
  %probs = Softmax(%scores) {axis = -1}
  %ctx = MatMul(%probs, %k)
  %pT = Transpose(%past) {perm = [0, 2, 1]}
  %gram = MatMul(%pT, %past)
  output %ctx, %probs, %gram
}
