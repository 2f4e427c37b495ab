// RUN: magneto-opt %s --passes=fuse-attention,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=fuse-attention,dce --target=cuda --check-equivalence | FileCheck %s --check-prefix=GPU
// The reference interpreter runs the chain before the pass and Attention's reference kernel
// after it: --check-equivalence compares them on seeded inputs.
//
// Case 1, the 4-D form BERT exports: K^T is Transpose(K heads, [0, 2, 3, 1]), so K is the same
// input under [0, 2, 1, 3]; the scale 0.125 after the MatMul and an additive mask [1,1,5,7].
// CHECK-LABEL: graph @attn
// CHECK: %[[K:.*]] : f32[2,4,7,8] = Transpose(%kh) {perm = [0, 2, 1, 3]}
// CHECK: %y : f32[2,4,5,6] = Attention(%q, %[[K]], %v, %m) {scale = 0.125}
// Case 2, nn.MultiheadAttention's 3-D form: Q prescaled by a Div, K^T = Transpose(K, [0, 2, 1])
// (K itself is read: no node), one head per batch entry.
// CHECK: %y3 : f32[6,5,4] = Attention(%q3, %k3, %v3) {kv_num_heads = 1, q_num_heads = 1, scale = 0.5}
// Case 3, K^T computed by a MatMul (no Transpose to take): a Transpose of it is added; two
// factors (Mul 2, Div 4).
// CHECK: %[[K4:.*]] : f32[1,2,9,3] = Transpose(%kt4) {perm = [0, 1, 3, 2]}
// CHECK: %y4 : f32[1,2,5,3] = Attention(%q4, %[[K4]], %v4) {scale = 0.5}
// CHECK-NOT: Softmax
// GPU-LABEL: graph @attn
// GPU-NOT: Attention(
// GPU: Softmax(
graph @attn {
  input %q : f32[2,4,5,8]
  input %kh : f32[2,7,4,8]
  input %v : f32[2,4,7,6]
  const %m : f32[1,1,5,7] = random<1>
  const %c : f32[] = dense<[0.125]>
  %kt = Transpose(%kh) {perm = [0, 2, 3, 1]}
  %t = MatMul(%q, %kt)
  %s = Mul(%t, %c)
  %x = Add(%m, %s)
  %p = Softmax(%x) {axis = -1}
  %y = MatMul(%p, %v)

  input %q3 : f32[6,5,8]
  input %k3 : f32[6,9,8]
  input %v3 : f32[6,9,4]
  const %two : f32[] = dense<[2.0]>
  %qs = Div(%q3, %two)
  %kt3 = Transpose(%k3) {perm = [0, 2, 1]}
  %t3 = MatMul(%qs, %kt3)
  %p3 = Softmax(%t3) {axis = 2}
  %y3 = MatMul(%p3, %v3)

  input %q4 : f32[1,2,5,3]
  input %a4 : f32[1,2,3,4]
  input %b4 : f32[1,2,4,9]
  input %v4 : f32[1,2,9,3]
  const %four : f32[] = dense<[4.0]>
  %kt4 = MatMul(%a4, %b4)
  %t4 = MatMul(%q4, %kt4)
  %s4 = Mul(%t4, %two)
  %u4 = Div(%s4, %four)
  %p4 = Softmax(%u4) {axis = -1}
  %y4 = MatMul(%p4, %v4)
  output %y, %y3, %y4
}
