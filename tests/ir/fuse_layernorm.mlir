// RUN: magneto-opt %s --passes=fuse-layernorm --check-equivalence | FileCheck %s
// The LayerNorm chains exporters write below opset 17 become one LayerNormalization over the
// reduced trailing axes, epsilon from the Add's constant:
//   %y   torch 1.13's form: axes attribute [-1], Pow(D, 2), Div(D, Sqrt), Mul(gamma), Add(beta);
//   %y2  axes as the constant operand over the last two axes, Mul(D, D), Mul(D, Reciprocal(Sqrt)),
//        epsilon first in its Add, gamma first in its Mul ([1,4,8]: its leading 1 dropped), beta
//        first in its Add;
//   %y3  Mul(Div(1, Sqrt), D) and no affine (a scale of ones);
//   %y4  only gamma.
// CHECK-LABEL: graph @layernorm
// CHECK: const %[[G2:.*]] : f32[4,8] = blob
// CHECK: const %[[ONES:.*]] : f32[32] = blob
// CHECK: %y : f32[2,5,16] = LayerNormalization(%x, %g, %b) {axis = 2, epsilon = 9.99999975e-06}
// CHECK-NEXT: %y2 : f32[3,4,8] = LayerNormalization(%x2, %[[G2]], %b2) {axis = 1, epsilon = 9.99999996e-13}
// CHECK-NEXT: %y3 : f32[4,32] = LayerNormalization(%x3, %[[ONES]]) {axis = 1, epsilon = 0.00100000005}
// CHECK-NEXT: %y4 : f32[4,32] = LayerNormalization(%x3, %g4) {axis = 1, epsilon = 0.00100000005}
// CHECK-NEXT: output %y, %y2, %y3, %y4
graph @layernorm {
  input %x : f32[2,5,16]
  input %x2 : f32[3,4,8]
  input %x3 : f32[4,32]
  const %one : f32[] = dense<[1.0]>
  const %two : f32[] = dense<[2.0]>
  const %eps : f32[] = dense<[1e-5]>
  const %g : f32[16] = random<1>
  const %b : f32[16] = random<2>
  const %axes2 : i64[2] = dense<[1, 2]>
  const %eps2 : f32[1] = dense<[1e-12]>
  const %g2 : f32[1,4,8] = random<3>
  const %b2 : f32[8] = random<4>
  const %eps3 : f32[] = dense<[1e-3]>
  const %g4 : f32[32] = random<5>
  %m = ReduceMean(%x) {axes = [-1]}
  %d = Sub(%x, %m)
  %p = Pow(%d, %two)
  %v = ReduceMean(%p) {axes = [-1]}
  %ve = Add(%v, %eps)
  %s = Sqrt(%ve)
  %n = Div(%d, %s)
  %gm = Mul(%n, %g)
  %y = Add(%gm, %b)
  %m2 = ReduceMean(%x2, %axes2) {keepdims = 1}
  %d2 = Sub(%x2, %m2)
  %p2 = Mul(%d2, %d2)
  %v2 = ReduceMean(%p2, %axes2) {keepdims = 1}
  %ve2 = Add(%eps2, %v2)
  %s2 = Sqrt(%ve2)
  %r2 = Reciprocal(%s2)
  %n2 = Mul(%d2, %r2)
  %gm2 = Mul(%g2, %n2)
  %y2 = Add(%b2, %gm2)
  %m3 = ReduceMean(%x3) {axes = [1]}
  %d3 = Sub(%x3, %m3)
  %p3 = Pow(%d3, %two)
  %v3 = ReduceMean(%p3) {axes = [1]}
  %ve3 = Add(%v3, %eps3)
  %s3 = Sqrt(%ve3)
  %r3 = Div(%one, %s3)
  %y3 = Mul(%r3, %d3)
  %m4 = ReduceMean(%x3) {axes = [1]}
  %d4 = Sub(%x3, %m4)
  %p4 = Pow(%d4, %two)
  %v4 = ReduceMean(%p4) {axes = [1]}
  %ve4 = Add(%v4, %eps3)
  %s4 = Sqrt(%ve4)
  %n4 = Div(%d4, %s4)
  %y4 = Mul(%n4, %g4)
  output %y, %y2, %y3, %y4
}
