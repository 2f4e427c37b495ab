// RUN: magneto-opt %s --passes=fold-batchnorm,dce --check-equivalence | FileCheck %s

// Case 1: BatchNormalization after a Conv folds into the Conv's weight and bias.
// CHECK-LABEL: graph @bn
// CHECK: %c : f32[1,4,5,5] = Conv(%x, %w_bn, %bn1_bias)
// CHECK-NOT: BatchNormalization
// Case 2: after a graph input (no Conv) it becomes Mul + Add with per-channel constants.
// CHECK: Mul(%x, %bn2_scale)
// CHECK: Add(%{{.*}}, %bn2_shift)
graph @bn {
  input %x : f32[1,4,5,5]
  const %w : f32[4,4,3,3] = random<1>
  const %s : f32[4] = random<2>
  const %b : f32[4] = random<3>
  const %m : f32[4] = random<4>
  const %v : f32[4] = dense<[0.5, 1.0, 2.0, 0.25]>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("conv")
  %y = BatchNormalization(%c, %s, %b, %m, %v) {epsilon = 0.001} loc("bn1")
  %z = BatchNormalization(%x, %s, %b, %m, %v) loc("bn2")
  output %y, %z
}
