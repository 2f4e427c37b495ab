// RUN: magneto-opt %s --passes=fuse-layernorm --check-equivalence | FileCheck %s
// The RMSNorm chains of Llama-style exports become one RMSNormalization:
//   %y   torch's x * rsqrt(mean(x^2) + eps) * w: Pow(x, 2), rsqrt as Div(1, Sqrt), Mul(x, r), Mul(w);
//   %y2  Mul(x, x) with Reciprocal(Sqrt), r first in its Mul, no weight (a scale of ones);
//   %y3  Div(x, Sqrt) with the weight first, over the last two axes (axes operand [-2, -1]).
// CHECK-LABEL: graph @rms
// CHECK: const %[[ONES:.*]] : f32[24] = blob
// CHECK: %y : f32[1,6,64] = RMSNormalization(%x, %w) {axis = 2, epsilon = 9.99999997e-07}
// CHECK-NEXT: %y2 : f32[3,24] = RMSNormalization(%x2, %[[ONES]]) {axis = 1, epsilon = 9.99999975e-06}
// CHECK-NEXT: %y3 : f32[2,3,8] = RMSNormalization(%x3, %w3) {axis = 1, epsilon = 9.99999975e-06}
// CHECK-NEXT: output %y, %y2, %y3
graph @rms {
  input %x : f32[1,6,64]
  input %x2 : f32[3,24]
  input %x3 : f32[2,3,8]
  const %one : f32[] = dense<[1.0]>
  const %two : f32[] = dense<[2.0]>
  const %eps : f32[] = dense<[1e-6]>
  const %w : f32[64] = random<1>
  const %eps2 : f32[] = dense<[1e-5]>
  const %axes3 : i64[2] = dense<[-2, -1]>
  const %w3 : f32[3,8] = random<2>
  %p = Pow(%x, %two)
  %v = ReduceMean(%p) {axes = [-1]}
  %ve = Add(%v, %eps)
  %s = Sqrt(%ve)
  %r = Div(%one, %s)
  %n = Mul(%x, %r)
  %y = Mul(%n, %w)
  %p2 = Mul(%x2, %x2)
  %v2 = ReduceMean(%p2) {axes = [1]}
  %ve2 = Add(%v2, %eps2)
  %s2 = Sqrt(%ve2)
  %r2 = Reciprocal(%s2)
  %y2 = Mul(%r2, %x2)
  %p3 = Mul(%x3, %x3)
  %v3 = ReduceMean(%p3, %axes3)
  %ve3 = Add(%v3, %eps2)
  %s3 = Sqrt(%ve3)
  %n3 = Div(%x3, %s3)
  %y3 = Mul(%w3, %n3)
  output %y, %y2, %y3
}
