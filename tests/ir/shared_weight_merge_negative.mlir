// RUN: magneto-opt %s --passes=shared-weight-merge,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=shared-weight-merge --debug-only=shared-weight-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Negative: big shared weights (merging would pay), but %y1/%y2 carry different epilogues (one
// merged Gemm has one), %y3/%y4 depend on each other (%y4 reads %y3), and %y5/%y6 have a
// symbolic row count: nothing merges.
// CHECK-LABEL: graph @keep
// CHECK: %y1 : f32[2,4096] = Gemm(%x, %w) {mg_act = "Relu"}
// CHECK: %y2 : f32[2,4096] = Gemm(%x2, %w) {mg_act = "Tanh"}
// CHECK: %y3 : f32[2,512] = Gemm(%x, %w2)
// CHECK: %y4 : f32[2,512] = Gemm(%y3s, %w2)
// CHECK-NOT: "batch"
// LOG: [shared-weight-merge] reject {{.*}}: symbolic shape
// LOG-NOT: merge [
graph @keep {
  symbol B [1, 8]
  input %x : f32[2,512]
  input %x2 : f32[2,512]
  input %xd : f32[8,512] as [B,512]
  input %xe : f32[8,512] as [B,512]
  const %w : f32[512,4096] = random<5>
  const %w2 : f32[512,512] = random<6>
  const %w3 : f32[512,4096] = random<7>
  %y1 = Gemm(%x, %w) {mg_act = "Relu"}
  %y2 = Gemm(%x2, %w) {mg_act = "Tanh"}
  %y3 = Gemm(%x, %w2)
  %y3s = Tanh(%y3)
  %y4 = Gemm(%y3s, %w2)
  %y5 = Gemm(%xd, %w3)
  %y6 = Gemm(%xe, %w3)
  output %y1, %y2, %y4, %y5, %y6
}
