// RUN: magneto-opt %s --passes=parallel-co-optimize --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize --debug-only=parallel-co-optimize 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// A big GEMM and a small one that read the same tensor. On the host a joint region runs each
// member whole on one core: the big GEMM would run on one core while the other idles after the
// small one, slower than splitting the big GEMM over both cores. The pair is recorded as a "none"
// group for the report, but nothing is marked and the schedule is unchanged.
// CHECK-LABEL: graph @big_gemms
// CHECK-NOT: parallel #
// CHECK: MatMul(%x, %wa) loc("mm_a")
// CHECK-NEXT: Relu(%a) loc("relu_a")
// CHECK-NEXT: MatMul(%x, %wb) loc("mm_b")
// CHECK-NOT: parallel #

// LOG: [parallel-co-optimize] #0 fork %x step 0 [mm_a, mm_b]: none: joint {{[0-9.]+}} us vs sequential {{[0-9.]+}} us: {{(no gain|gain [0-9.]+% below kMinGain 3%)}}
graph @big_gemms {
  input %x : f32[256,512]
  const %wa : f32[512,512] = random<1>
  const %wb : f32[512,8] = random<2>
  %a = MatMul(%x, %wa) loc("mm_a")
  %ra = Relu(%a) loc("relu_a")
  %b = MatMul(%x, %wb) loc("mm_b")
  %s = Concat(%ra, %b) {axis = 1} loc("join")
  output %s
}
