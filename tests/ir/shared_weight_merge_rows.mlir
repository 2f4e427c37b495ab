// RUN: magneto-opt %s --passes=shared-weight-merge,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=shared-weight-merge --debug-only=shared-weight-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// MatMuls of rank-3 inputs with different row counts sharing %w (a time-distributed
// Linear over two sequences): the inputs are flattened to rows, stacked, multiplied once, and the
// results reshaped back.
// CHECK-LABEL: graph @towers
// CHECK: Reshape(%a,
// CHECK: Reshape(%c,
// CHECK: = Concat(%{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}) {axis = 0}
// CHECK: "2 MatMuls of K=512 N=4096 sharing weight %w on different inputs -> one MatMul of 5 rows
// CHECK: : f32[5,4096] = MatMul(
// CHECK: MgChannelSlice({{.*}}) {begin = 0, end = 2}
// CHECK: %ya : f32[2,1,4096] = Reshape(
// CHECK: MgChannelSlice({{.*}}) {begin = 2, end = 5}
// CHECK: %yc : f32[3,1,4096] = Reshape(
// LOG: [shared-weight-merge] #0 merge [lin_a, lin_c]
graph @towers {
  input %a : f32[2,1,512]
  input %c : f32[3,1,512]
  const %w : f32[512,4096] = random<4>
  %ya = MatMul(%a, %w) loc("lin_a")
  %yc = MatMul(%c, %w) loc("lin_c")
  output %ya, %yc
}
