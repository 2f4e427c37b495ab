// RUN: magneto-opt %s --passes=wide-merge,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=wide-merge --debug-only=wide-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Negative cases: each pair below shares an input with a 1x1 reference conv %r (f32[4,4,1,1],
// no epilogue) but must NOT merge with it; only %r and %ok (the one compatible partner) merge.
// LOG-DAG: reject strided with ref: different strides
// LOG-DAG: reject act with ref: different epilogue
// LOG-DAG: reject grouped: group conv
// LOG-DAG: reject resid: has a residual operand
// LOG-DAG: reject dynw: weight is not a constant with data
// LOG-DAG: reject big5 with ref: zero padding would cost 2.7{{[0-9]*}}x the FLOPs
// LOG: merge: 2 Convs on %x merged into one 1x1 Conv of 8 channels
// CHECK-LABEL: graph @negative
// CHECK: "2 Convs on %x merged into one 1x1 Conv of 8 channels"
// CHECK: Conv(%x, %ws) {strides = [2, 2]} loc("strided")
// CHECK: Conv(%x, %w1) {mg_act = "Relu"} loc("act")
// CHECK: Conv(%x, %wg) {group = 2} loc("grouped")
// CHECK: Conv(%x, %w1, %b0, %y0) loc("resid")
// CHECK: Conv(%x, %dw) loc("dynw")
// CHECK: Conv(%x, %w5) {pads = [2, 2, 2, 2]} loc("big5")
// CHECK-NOT: Conv(
// CHECK-NOT: {begin = 8
graph @negative {
  input %x : f32[1,4,6,6]
  input %dw : f32[4,4,1,1]
  input %y0 : f32[1,4,6,6]
  const %w1 : f32[4,4,1,1] = random<1>
  const %w2 : f32[4,4,1,1] = random<2>
  const %ws : f32[4,4,1,1] = random<3>
  const %wg : f32[4,2,1,1] = random<4>
  const %w5 : f32[4,4,5,5] = random<5>
  const %b0 : f32[4] = random<6>
  %r = Conv(%x, %w1) loc("ref")
  %s = Conv(%x, %ws) {strides = [2, 2]} loc("strided")
  %a = Conv(%x, %w1) {mg_act = "Relu"} loc("act")
  %g = Conv(%x, %wg) {group = 2} loc("grouped")
  %q = Conv(%x, %w1, %b0, %y0) loc("resid")
  %d = Conv(%x, %dw) loc("dynw")
  %f = Conv(%x, %w5) {pads = [2, 2, 2, 2]} loc("big5")
  %ok = Conv(%x, %w2) loc("ok")
  output %r, %s, %a, %g, %q, %d, %f, %ok
}
