// RUN: magneto-opt %s --passes=fuse-epilogue,dce --check-equivalence | FileCheck %s

// Activations that are epilogues because their line in the activation table
// (runtime/common/mg_acts.h) carries flag E: ThresholdedRelu and Celu fold into the producing
// op with their alpha (the table's default when the attribute is absent); Mish (no flag E) stays.
// Case 1: Conv + ThresholdedRelu.
// CHECK-LABEL: graph @table
// CHECK: %c : f32[1,4,6,6] = Conv(%x, %w) {mg_act = "ThresholdedRelu", mg_alpha = 0.5, pads = [1, 1, 1, 1]}
// Case 2: Conv + ThresholdedRelu with the default alpha (1).
// CHECK: %c2 : f32[1,4,6,6] = Conv(%x, %w) {mg_act = "ThresholdedRelu", mg_alpha = 1.0, pads = [1, 1, 1, 1]}
// Case 3: Gemm + Celu.
// CHECK: %g : f32[1,5] = Gemm(%f, %gw) {mg_act = "Celu", mg_alpha = 0.5}
// Case 4 (negative): Mish is no epilogue.
// CHECK: %c4 : f32[1,4,6,6] = Conv(%x, %w) {pads = [1, 1, 1, 1]}
// CHECK: Mish(%c4)
graph @table {
  input %x : f32[1,4,6,6]
  const %w : f32[4,4,3,3] = random<1>
  const %gw : f32[144,5] = random<3>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %t = ThresholdedRelu(%c) {alpha = 0.5}
  %c2 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %t2 = ThresholdedRelu(%c2)
  %f = Flatten(%x)
  %g = Gemm(%f, %gw)
  %e = Celu(%g) {alpha = 0.5}
  %c4 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %m4 = Mish(%c4)
  output %t, %t2, %e, %m4
}
