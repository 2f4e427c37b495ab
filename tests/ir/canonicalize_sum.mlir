// RUN: magneto-opt %s --passes=canonicalize --check-equivalence | FileCheck %s

// A two-operand Sum (how opset-9 ResNets write the shortcut) becomes Add under the same name, so
// fuse-epilogue can take it into the Conv; a three-operand Sum stays.
// CHECK-LABEL: graph @sum_to_add
// CHECK: %s : f32[1,2,4,4] = Add(%c, %x2)
// CHECK: %t : f32[1,2,4,4] = Sum(%s, %x2, %c)
// CHECK: output %s, %t
graph @sum_to_add {
  input %x : f32[1,3,4,4]
  input %x2 : f32[1,2,4,4]
  const %w : f32[2,3,1,1] = random<1>
  %c = Conv(%x, %w) loc("conv")
  %s = Sum(%c, %x2)
  %t = Sum(%s, %x2, %c)
  output %s, %t
}
