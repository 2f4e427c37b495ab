// RUN: magneto-opt %s --passes=decompose-attention --check-equivalence | FileCheck %s
// Grouped-query attention, 3-D: 8 q heads over 2 kv heads. No K or V is copied per q head: the 4
// q heads of a kv head are contiguous, so the scaled Q [2,8,3,4] reshapes to [2,2,12,4] and one
// batched MatMul per kv head gives all their scores; they reshape back to [2,8,3,5] for the causal
// mask and the Softmax (the probabilities are the QK output, mode 3), and to [2,2,12,5] for P V.
// present_key is the transposed K (it keeps the node's result name).
// CHECK-LABEL: graph @gqa
// CHECK: const %"attn/c_5" : f32[3,5] = dense<[0.0, -inf, -inf, -inf, -inf, 0.0, 0.0, -inf, -inf, -inf, 0.0, 0.0, 0.0, -inf, -inf]>
// CHECK: f32[2,3,8,4] = Reshape(%q,
// CHECK: %pk : f32[2,2,5,4] = Transpose(
// CHECK-NOT: Expand
// CHECK: f32[2,2,12,4] = Reshape(
// CHECK: f32[2,2,4,5] = Transpose(%pk) {perm = [0, 1, 3, 2]}
// CHECK: f32[2,2,12,5] = MatMul(
// CHECK: f32[2,8,3,5] = Reshape(
// CHECK: %p : f32[2,8,3,5] = Softmax(
// CHECK: f32[2,2,12,5] = Reshape(%p,
// CHECK: f32[2,2,12,6] = MatMul(
// CHECK: %y : f32[2,3,48] = Reshape(
// CHECK-NOT: Attention(
graph @gqa {
  input %q : f32[2,3,32]
  input %k : f32[2,5,8]
  input %v : f32[2,5,12]
  %y, %pk, %pv, %p = Attention(%q, %k, %v) {q_num_heads = 8, kv_num_heads = 2, is_causal = 1, qk_matmul_output_mode = 3} loc("attn")
  output %y, %pk, %p
}
