// RUN: magneto-opt %s --passes=fuse-epilogue,dce --check-equivalence | FileCheck %s

// Case 1: bias Add + residual Add + Relu all fold into the Conv; the Conv moves after the
// shortcut's producer so that the residual exists when it runs.
// CHECK-LABEL: graph @epi
// CHECK: %sc : f32[1,4,6,6] = Sigmoid(%x)
// CHECK: Conv(%x, %w, %conv_bias, %sc) {mg_act = "Relu", pads = [1, 1, 1, 1]}
// CHECK-NOT: Add
// Case 2: a Clip with constant bounds becomes the Gemm's epilogue with its bounds.
// CHECK: Gemm(%f, %gw) {mg_act = "Clip", mg_alpha = -1.0, mg_beta = 1.0
// Case 3 (negative): the Conv result has a second user, so its Relu must stay separate.
// CHECK: Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("shared")
// CHECK: Relu(%s2)
graph @epi {
  input %x : f32[1,4,6,6]
  const %w : f32[4,4,3,3] = random<1>
  const %bias : f32[4,1,1] = random<2>
  const %gw : f32[144,5] = random<3>
  const %lo : f32[] = dense<[-1.0]>
  const %hi : f32[] = dense<[1.0]>
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("conv")
  %cb = Add(%c, %bias)
  %sc = Sigmoid(%x)
  %res = Add(%cb, %sc)
  %y = Relu(%res)
  %f = Flatten(%x)
  %g = Gemm(%f, %gw)
  %gc = Clip(%g, %lo, %hi)
  %s2 = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("shared")
  %r2 = Relu(%s2)
  %t2 = Tanh(%s2)
  output %y, %gc, %r2, %t2
}
