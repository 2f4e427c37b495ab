// RUN: magneto-opt %s --passes=fuse-layernorm --check-equivalence | FileCheck %s
// What must not fuse, each a near miss of the torch 1.13 LayerNorm chain over [*, 16]:
//   %y1  the variance %v1 is also a graph output (another reader);
//   %y2  the mean is over axis 1 of [2,5,16] (not the trailing axes);
//   %y3  epsilon is a graph input, not a constant;
//   %y4  the mean of squares without keepdims ([3,3] / [3] then divides each row by the other
//        rows' statistics);
//   %y5  exponent 3;
//   %y6  the division the wrong way round (Sqrt / D);
// and what fuses only partly:
//   %y7  gamma [5,1] varies over a non-normalized axis: the normalization fuses, the Mul (and so
//        the Add after it) stay;
//   %y8  D = x - mean has another reader (a graph output): no LayerNormalization, but the rest of
//        the chain is an RMSNorm of D, and D stays;
//   %y9  the mean over the last axis and the variance over the last two: likewise an RMSNorm of D.
// CHECK-LABEL: graph @near_misses
// CHECK-NOT: Normalization(
// CHECK: %[[N7:.*]] : f32[2,5,16] = LayerNormalization(%x7, %{{.*}}) {axis = 2, epsilon = 9.99999975e-06}
// CHECK-NEXT: Mul(%[[N7]], %g7)
// CHECK-NEXT: %y7 : f32[2,5,16] = Add(
// CHECK: %d8 : f32[2,16] = Sub(%x1, %m8)
// CHECK-NEXT: %y8 : f32[2,16] = RMSNormalization(%d8, %{{.*}}) {axis = 1, epsilon = 9.99999975e-06}
// CHECK: %d9 : f32[2,4,8] = Sub(%x9, %m9)
// CHECK-NEXT: %y9 : f32[2,4,8] = RMSNormalization(%d9, %{{.*}}) {axis = 1, epsilon = 9.99999975e-06}
// CHECK-NOT: Normalization
// CHECK: output
graph @near_misses {
  input %x1 : f32[2,16]
  input %x2 : f32[2,5,16]
  input %eps3 : f32[]
  input %x4 : f32[3,3]
  input %x7 : f32[2,5,16]
  input %x9 : f32[2,4,8]
  const %two : f32[] = dense<[2.0]>
  const %three : f32[] = dense<[3.0]>
  const %eps : f32[] = dense<[1e-5]>
  const %g7 : f32[5,1] = random<1>
  const %b7 : f32[16] = random<2>
  %m1 = ReduceMean(%x1) {axes = [-1]}
  %d1 = Sub(%x1, %m1)
  %p1 = Pow(%d1, %two)
  %v1 = ReduceMean(%p1) {axes = [-1]}
  %ve1 = Add(%v1, %eps)
  %s1 = Sqrt(%ve1)
  %y1 = Div(%d1, %s1)
  %m2 = ReduceMean(%x2) {axes = [1]}
  %d2 = Sub(%x2, %m2)
  %p2 = Pow(%d2, %two)
  %v2 = ReduceMean(%p2) {axes = [1]}
  %ve2 = Add(%v2, %eps)
  %s2 = Sqrt(%ve2)
  %y2 = Div(%d2, %s2)
  %m3 = ReduceMean(%x1) {axes = [-1]}
  %d3 = Sub(%x1, %m3)
  %p3 = Pow(%d3, %two)
  %v3 = ReduceMean(%p3) {axes = [-1]}
  %ve3 = Add(%v3, %eps3)
  %s3 = Sqrt(%ve3)
  %y3 = Div(%d3, %s3)
  %p4 = Pow(%x4, %two)
  %v4 = ReduceMean(%p4) {axes = [-1], keepdims = 0}
  %ve4 = Add(%v4, %eps)
  %s4 = Sqrt(%ve4)
  %y4 = Div(%x4, %s4)
  %m5 = ReduceMean(%x1) {axes = [-1]}
  %d5 = Sub(%x1, %m5)
  %p5 = Pow(%d5, %three)
  %v5 = ReduceMean(%p5) {axes = [-1]}
  %ve5 = Add(%v5, %eps)
  %s5 = Sqrt(%ve5)
  %y5 = Div(%d5, %s5)
  %m6 = ReduceMean(%x1) {axes = [-1]}
  %d6 = Sub(%x1, %m6)
  %p6 = Pow(%d6, %two)
  %v6 = ReduceMean(%p6) {axes = [-1]}
  %ve6 = Add(%v6, %eps)
  %s6 = Sqrt(%ve6)
  %y6 = Div(%s6, %d6)
  %m7 = ReduceMean(%x7) {axes = [-1]}
  %d7 = Sub(%x7, %m7)
  %p7 = Pow(%d7, %two)
  %v7 = ReduceMean(%p7) {axes = [-1]}
  %ve7 = Add(%v7, %eps)
  %s7 = Sqrt(%ve7)
  %n7 = Div(%d7, %s7)
  %gm7 = Mul(%n7, %g7)
  %y7 = Add(%gm7, %b7)
  %m8 = ReduceMean(%x1) {axes = [-1]}
  %d8 = Sub(%x1, %m8)
  %p8 = Pow(%d8, %two)
  %v8 = ReduceMean(%p8) {axes = [-1]}
  %ve8 = Add(%v8, %eps)
  %s8 = Sqrt(%ve8)
  %y8 = Div(%d8, %s8)
  %m9 = ReduceMean(%x9) {axes = [-1]}
  %d9 = Sub(%x9, %m9)
  %p9 = Pow(%d9, %two)
  %v9 = ReduceMean(%p9) {axes = [-2, -1]}
  %ve9 = Add(%v9, %eps)
  %s9 = Sqrt(%ve9)
  %y9 = Div(%d9, %s9)
  output %y1, %v1, %y2, %y3, %y4, %y5, %y6, %y7, %y8, %d8, %y9
}
