// RUN: magneto-opt %s --passes=decompose-attention --check-equivalence | FileCheck %s
// RMSNormalization over the last axis ([8] scale) and over axes 1..2 ([3,8] scale, epsilon 1e-3):
// X / Sqrt(ReduceMean(X * X) + epsilon) * scale.
// CHECK-LABEL: graph @rms
// CHECK: const %"rms/i" : i64[1] = dense<[2]>
// CHECK: const %"rms1/i" : i64[2] = dense<[1, 2]>
// CHECK: const %"rms1/c" : f32[] = dense<[0.00100000005]>
// CHECK: Mul(%x, %x)
// CHECK: f32[2,3,1] = ReduceMean({{.*}}, %"rms/i") {keepdims = 1}
// CHECK: Sqrt(
// CHECK: Div(%x,
// CHECK: %y : f32[2,3,8] = Mul({{.*}}, %s)
// CHECK: f32[2,1,1] = ReduceMean({{.*}}, %"rms1/i") {keepdims = 1}
// CHECK: %y2 : f32[2,3,8] = Mul({{.*}}, %s2)
// CHECK-NOT: RMSNormalization(
graph @rms {
  input %x : f32[2,3,8]
  const %s : f32[8] = random<1>
  const %s2 : f32[3,8] = random<2>
  %y = RMSNormalization(%x, %s) loc("rms")
  %y2 = RMSNormalization(%x, %s2) {axis = 1, epsilon = 0.001} loc("rms1")
  output %y, %y2
}
