// RUN: magneto-opt %s --passes=decompose-attention --check-equivalence | FileCheck %s
// The reference interpreter runs Attention's reference kernel before the pass and the plain ops
// after it: --check-equivalence compares them on seeded inputs.

// Case 1: 4-D with past_key/past_value, a boolean mask, is_causal, softcap and the QK output after
// the mask (mode 2). present_key/present_value are the Concats with the past (they keep the
// node's result names); the mask becomes Where(m, 0, -inf) plus the causal constant.
// CHECK-LABEL: graph @attn
// CHECK-NOT: Attention(
// CHECK: %"attn_add/c" : f32[] = dense<[0.25]>
// CHECK: %pko : f32[2,4,7,8] = Concat(%pk, %k) {axis = 2}
// CHECK: %pvo : f32[2,4,7,6] = Concat(%pv, %v) {axis = 2}
// CHECK: Mul(%q, %"attn/c")
// CHECK: Transpose(%pko) {perm = [0, 1, 3, 2]}
// CHECK: f32[2,4,3,7] = MatMul(
// CHECK: Tanh(
// CHECK: Where(%m, %"attn/c_3", %"attn/c_4")
// CHECK: %qk : f32[2,4,3,7] = Add(
// CHECK: Softmax(%qk) {axis = -1}
// CHECK: %y : f32[2,4,3,6] = MatMul(%"attn/Softmax{{[0-9]+}}", %pvo)
// Case 2: an additive mask and an explicit scale (0.25, the constant above), no past: K is read
// as it is.
// CHECK: Transpose(%k) {perm = [0, 1, 3, 2]}
// CHECK: Add(%"attn_add/MatMul{{[0-9]+}}", %am)
// CHECK: %y2 : f32[2,4,3,6] = MatMul(
// CHECK-NOT: Attention(
graph @attn {
  input %q : f32[2,4,3,8]
  input %k : f32[2,4,5,8]
  input %v : f32[2,4,5,6]
  input %pk : f32[2,4,2,8]
  input %pv : f32[2,4,2,6]
  const %m : bool[2,1,3,7] = dense<[1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1]>
  const %am : f32[3,5] = random<3>
  %y, %pko, %pvo, %qk = Attention(%q, %k, %v, %m, %pk, %pv) {is_causal = 1, softcap = 2.0, qk_matmul_output_mode = 2} loc("attn")
  %y2 = Attention(%q, %k, %v, %am) {scale = 0.25} loc("attn_add")
  output %y, %pko, %pvo, %qk, %y2
}
