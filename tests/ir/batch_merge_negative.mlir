// RUN: magneto-opt %s --passes=batch-merge,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=batch-merge --debug-only=batch-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Nothing here may become a batched MatMul: the graph is unchanged and no group is recorded
// (declined sets are left to parallel-co-optimize).
// CHECK-NOT: parallel #
// CHECK-NOT: batch

// Case 1: different weight shapes (K x 8 beside K x 12) on different inputs.
// LOG-DAG: reject shape_b with shape_a: different weight shapes
// CHECK-LABEL: graph @negative
// CHECK: MatMul(%xa, %w8) loc("shape_a")
// CHECK: MatMul(%xb, %w12) loc("shape_b")
// Case 2: different attributes: a Relu epilogue beside none; Gemm transB beside not.
// LOG-DAG: reject act_a with shape_a: different epilogue
// LOG-DAG: reject tb_b with {{.*}}with tb_a: different weight shapes
// CHECK: MatMul(%xc, %w8b) {mg_act = "Relu"} loc("act_a")
// CHECK: MatMul(%xd, %w8c) loc("act_b")
// CHECK: Gemm(%xe, %g1) loc("tb_a")
// CHECK: Gemm(%xf, %g2) {transB = 1} loc("tb_b")
// Case 3: same input: wide-merge / parallel-co-optimize territory, not batch-merge's.
// LOG-DAG: reject same_b with same_a: same input
// CHECK: MatMul(%x, %w8d) loc("same_a")
// CHECK: MatMul(%x, %w8e) loc("same_b")
// Case 4: dependent members: dep_b reads dep_a's result (same shapes, same weights shape): never
// one sibling group, so never merged.
// CHECK: MatMul(%xg, %s16a) loc("dep_a")
// CHECK: MatMul(%da, %s16b) loc("dep_b")
// Case 5: the cost model says no: two small same-shape MatMuls on different inputs. On the host
// profile a joint region (what parallel-co-optimize would choose) costs one region overhead; the
// batched MatMul plus the Concat that stacks the inputs costs two.
// All siblings of %x are one group; the compatible ones form one set (act_b fits shape_a).
// LOG-DAG: decline [shape_a, act_b, cost_a, cost_b]: batch {{[0-9.]+}} us (2 kernels) vs sequential {{[0-9.]+}} us, joint {{[0-9.]+}} us: gain below kMinGain 3% on host
// CHECK: MatMul(%xh, %c1) loc("cost_a")
// CHECK: MatMul(%xi, %c2) loc("cost_b")
// CHECK: output
graph @negative {
  input %x : f32[4,16]
  const %k1 : f32[1] = random<1>
  const %k2 : f32[1] = random<2>
  const %w8 : f32[16,8] = random<3>
  const %w12 : f32[16,12] = random<4>
  const %w8b : f32[16,8] = random<5>
  const %w8c : f32[16,8] = random<6>
  const %g1 : f32[16,8] = random<7>
  const %g2 : f32[8,16] = random<8>
  const %w8d : f32[16,8] = random<9>
  const %w8e : f32[16,8] = random<10>
  const %s16a : f32[16,16] = random<11>
  const %s16b : f32[16,16] = random<12>
  const %c1 : f32[16,8] = random<13>
  const %c2 : f32[16,8] = random<14>
  %xa = Mul(%x, %k1) loc("ra")
  %xb = Mul(%x, %k2) loc("rb")
  %ya = MatMul(%xa, %w8) loc("shape_a")
  %yb = MatMul(%xb, %w12) loc("shape_b")
  %xc = Sub(%x, %k1) loc("rc")
  %xd = Sub(%x, %k2) loc("rd")
  %yc = MatMul(%xc, %w8b) {mg_act = "Relu"} loc("act_a")
  %yd = MatMul(%xd, %w8c) loc("act_b")
  %xe = Add(%x, %k1) loc("re")
  %xf = Add(%x, %k2) loc("rf")
  %ye = Gemm(%xe, %g1) loc("tb_a")
  %yf = Gemm(%xf, %g2) {transB = 1} loc("tb_b")
  %yg = MatMul(%x, %w8d) loc("same_a")
  %yh = MatMul(%x, %w8e) loc("same_b")
  %xg = Div(%x, %k1) loc("rg")
  %da = MatMul(%xg, %s16a) loc("dep_a")
  %db = MatMul(%da, %s16b) loc("dep_b")
  %xh = Max(%x, %k1) loc("rh")
  %xi = Min(%x, %k2) loc("ri")
  %yi = MatMul(%xh, %c1) loc("cost_a")
  %yj = MatMul(%xi, %c2) loc("cost_b")
  output %ya, %yb, %yc, %yd, %ye, %yf, %yg, %yh, %db, %yi, %yj
}
