// RUN: magneto-opt %s --passes=fold-conv-scale,dce --check-equivalence | FileCheck %s

// Case 1: a [C,1,1] scale after a Conv with a bias folds into both; the Add stays (fuse-epilogue's).
// Case 2: a scalar divisor, Conv without a bias: only the weights change.
// Not folded: a scale that varies over space (not per channel), a Conv result with another
// user, a constant divided by the Conv, a zero divisor.
// CHECK-LABEL: graph @scale
// CHECK: %c : f32[1,4,5,5] = Conv(%x, %w_scaled, %s1_bias)
// CHECK-NEXT: Add(%c, %t)
// CHECK: %c0 : f32[1,2,5,5] = Conv(%x2, %w2_scaled)
// CHECK-NOT: Div(%c0
// CHECK: Mul(%c1, %sp)
// CHECK: Mul(%c2, %s2)
// CHECK: Div(%s2, %c3)
// CHECK: Div(%c4, %z)
graph @scale {
  input %x : f32[1,3,5,5]
  input %x2 : f32[1,2,5,5]
  const %w : f32[4,3,3,3] = random<1>
  const %b : f32[4] = random<2>
  const %s : f32[4,1,1] = dense<[0.5, -2.0, 3.0, 0.25]>
  const %t : f32[4,1,1] = random<3>
  const %w2 : f32[2,2,1,1] = random<4>
  const %d : f32[] = dense<[4.0]>
  const %sp : f32[5,5] = random<6>
  const %s2 : f32[2,1,1] = dense<[2.0, 3.0]>
  const %z : f32[2,1,1] = dense<[2.0, 0.0]>
  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} loc("conv")
  %m = Mul(%s, %c) loc("s1")
  %y = Add(%m, %t) loc("a1")
  %c0 = Conv(%x2, %w2) loc("c0")
  %y0 = Div(%c0, %d) loc("d0")
  %c1 = Conv(%x2, %w2) loc("c1")
  %y1 = Mul(%c1, %sp) loc("m1")
  %c2 = Conv(%x2, %w2) loc("c2")
  %y2 = Mul(%c2, %s2) loc("m2")
  %y3 = Add(%c2, %y2) loc("a3")
  %c3 = Conv(%x2, %w2) loc("c3")
  %y4 = Div(%s2, %c3) loc("d4")
  %c4 = Conv(%x2, %w2) loc("c4")
  %y5 = Div(%c4, %z) loc("d5")
  output %y, %y0, %y1, %y3, %y4, %y5
}
