// RUN: magneto-opt %s --passes=canonicalize --check-equivalence | FileCheck %s

// Identity and Dropout between two ops disappear; the Relu reads the Conv directly.
// CHECK-LABEL: graph @canon
// CHECK-NOT: Identity
// CHECK-NOT: Dropout
// CHECK: %r : f32[1,2,4,4] = Relu(%c)
graph @canon {
  input %x : f32[1,3,4,4]
  const %w : f32[2,3,1,1] = random<1>
  %c = Conv(%x, %w) loc("conv")
  %i = Identity(%c)
  %d = Dropout(%i) {ratio = 0.5}
  %r = Relu(%d)
  output %r
}
