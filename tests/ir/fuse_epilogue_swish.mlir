// RUN: magneto-opt %s --passes=fuse-epilogue,dce --check-equivalence | FileCheck %s

// Swish (SiLU) as PyTorch exports it, y * Sigmoid(y), folds into the producing op's epilogue;
// so does hardswish written as y * HardSigmoid(y) with alpha 1/6 and beta 0.5.
// Case 1: Mul(y, Sigmoid(y)) after a Conv.
// CHECK-LABEL: graph @swish
// CHECK: %c : f32[1,4,6,6] = Conv(%x, %w) {mg_act = "Swish", pads = [1, 1, 1, 1]}
// Case 2: the operands the other way round, after a residual Add that folds first.
// CHECK: %c2 : f32[1,4,6,6] = Conv(%x, %w, _, %x) {mg_act = "Swish", pads = [1, 1, 1, 1]}
// Case 3 (negative): the Sigmoid's result has a second user, so it must stay.
// CHECK: %c3 : f32[1,4,6,6] = Conv(%x, %w) {pads = [1, 1, 1, 1]}
// CHECK: %s3 : f32[1,4,6,6] = Sigmoid(%c3)
// CHECK: Mul(%c3, %s3)
// Case 4 (negative): the Conv's result has a third user.
// CHECK: %c4 : f32[1,4,6,6] = Conv(%x, %w) {pads = [1, 1, 1, 1]}
// CHECK: Mul(%c4, %s4)
// Case 5: after a Gemm.
// CHECK: Gemm(%f, %gw) {mg_act = "Swish"}
// Case 6: hardswish as PyTorch exports it below opset 14, Mul(y, HardSigmoid(y), alpha 1/6).
// CHECK: %c6 : f32[1,4,6,6] = Conv(%x, %w) {mg_act = "HardSwish", pads = [1, 1, 1, 1]}
// Case 7 (negative): a HardSigmoid with the default alpha (0.2) is not hardswish.
// CHECK: %c7 : f32[1,4,6,6] = Conv(%x, %w) {pads = [1, 1, 1, 1]}
// CHECK: HardSigmoid(%c7)
// CHECK-NOT: Sigmoid(%g)
// CHECK: output %c, %c2, %y3, %t3, %y4, %r4, %g, %c6, %y7
graph @swish {
  input %x : f32[1,4,6,6]
  const %w : f32[4,4,3,3] = random<1>
  const %gw : f32[144,5] = random<3>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %s = Sigmoid(%c)
  %y = Mul(%c, %s)
  %c2 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %a2 = Add(%c2, %x)
  %s2 = Sigmoid(%a2)
  %y2 = Mul(%s2, %a2)
  %c3 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %s3 = Sigmoid(%c3)
  %y3 = Mul(%c3, %s3)
  %t3 = Tanh(%s3)
  %c4 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %s4 = Sigmoid(%c4)
  %y4 = Mul(%c4, %s4)
  %r4 = Relu(%c4)
  %f = Flatten(%x)
  %g = Gemm(%f, %gw)
  %sg = Sigmoid(%g)
  %yg = Mul(%g, %sg)
  %c6 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %h6 = HardSigmoid(%c6) {alpha = 0.1666666716337204}
  %y6 = Mul(%c6, %h6)
  %c7 = Conv(%x, %w) {pads = [1, 1, 1, 1]}
  %h7 = HardSigmoid(%c7)
  %y7 = Mul(%h7, %c7)
  output %y, %y2, %y3, %t3, %y4, %r4, %yg, %y6, %y7
}
