// RUN: magneto-opt %s --passes=dce | FileCheck %s

// The unused Sigmoid and its constant go; the graph input stays even though unused.
// CHECK-LABEL: graph @dce
// CHECK: input %unused
// CHECK-NOT: Sigmoid
// CHECK-NOT: %c
// CHECK: Relu
graph @dce {
  input %x : f32[4]
  input %unused : f32[4]
  const %c : f32[4] = random<2>
  %a = Sigmoid(%c)
  %b = Relu(%x)
  output %b
}
