// RUN: magneto-opt %s --passes=decompose-attention,canonicalize,fuse-attention,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=decompose-attention,canonicalize,fuse-attention,dce --target=cuda --check-equivalence | FileCheck %s --check-prefix=GPU
// Opset 23's Attention on the default pipeline's first steps: decompose-attention writes it out
// for every target; on cpu fuse-attention makes one Attention node of the chain again (the fused
// kernel), K read through its own transpose's inverse (none left), the mask as decompose-attention
// made it (Where(m, 0, -inf) plus the causal constant). With softcap (a Tanh between the scale
// and the mask) the chain stays decomposed. On cuda (no Attention program) every chain stays.
// CHECK-LABEL: graph @attn
// CHECK: %y : f32[2,4,3,6] = Attention(%{{.*}}, %k, %v, %{{.*}}) {scale = 0.353553
// CHECK: Tanh(
// CHECK: %y2 : f32[2,4,3,6] = MatMul(
// GPU-LABEL: graph @attn
// GPU-NOT: Attention(
graph @attn {
  input %q : f32[2,4,3,8]
  input %k : f32[2,4,5,8]
  input %v : f32[2,4,5,6]
  const %m : bool[2,1,3,5] = dense<[1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1]>
  %y = Attention(%q, %k, %v, %m) {is_causal = 1} loc("attn")
  %y2 = Attention(%q, %k, %v) {softcap = 3.0} loc("attn_cap")
  output %y, %y2
}
