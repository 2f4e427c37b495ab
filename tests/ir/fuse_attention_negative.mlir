// RUN: magneto-opt %s --passes=fuse-attention,dce --check-equivalence | FileCheck %s
// What fuse-attention must leave as it is (passes/fuse_attention.cpp, "Legal because"):
//   a  the Softmax is over another axis than the last;
//   b  the scores are also a graph output (another reader would lose them);
//   c  the scale is not a constant;
//   d  the 3-D form with a [N, S, L] mask (it would broadcast against the head dim);
//   e  the MatMul broadcasts Q's batch dims against K^T's ([1,..] x [2,..]);
//   f  float64.
// CHECK-LABEL: graph @keep
// CHECK-NOT: Attention(
// CHECK: %ya : f32[2,5,4] = MatMul(
// CHECK: %yb : f32[2,5,4] = MatMul(
// CHECK: %yc : f32[2,5,4] = MatMul(
// CHECK: %yd : f32[2,5,4] = MatMul(
// CHECK: %ye : f32[2,5,4] = MatMul(
// CHECK: %yf : f64[2,5,4] = MatMul(
graph @keep {
  input %q : f32[2,5,8]
  input %kt : f32[2,8,7]
  input %v : f32[2,7,4]
  input %sc : f32[]
  const %m3 : f32[2,5,7] = random<1>
  %ta = MatMul(%q, %kt)
  %pa = Softmax(%ta) {axis = 1}
  %ya = MatMul(%pa, %v)
  %tb = MatMul(%q, %kt)
  %pb = Softmax(%tb) {axis = -1}
  %yb = MatMul(%pb, %v)
  %tc = MatMul(%q, %kt)
  %sc2 = Mul(%tc, %sc)
  %pc = Softmax(%sc2) {axis = -1}
  %yc = MatMul(%pc, %v)
  %td = MatMul(%q, %kt)
  %xd = Add(%td, %m3)
  %pd = Softmax(%xd) {axis = -1}
  %yd = MatMul(%pd, %v)
  input %q1 : f32[1,5,8]
  %te = MatMul(%q1, %kt)
  %pe = Softmax(%te) {axis = -1}
  %ye = MatMul(%pe, %v)
  input %qf : f64[2,5,8]
  input %ktf : f64[2,8,7]
  input %vf : f64[2,7,4]
  %tf = MatMul(%qf, %ktf)
  %pf = Softmax(%tf) {axis = -1}
  %yf = MatMul(%pf, %vf)
  output %ya, %yb, %tb, %yc, %yd, %ye, %yf
}
