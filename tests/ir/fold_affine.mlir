// RUN: magneto-opt %s --passes=fold-affine,dce --check-equivalence | FileCheck %s

// Case 1: a BatchNormalization's Mul/Add followed by a per-channel scale layer (DenseNet-121 of
// the ONNX model zoo): four ops become one Mul and one Add, the Relu stays.
// Case 2: a value with a second use (%a2, a graph output) is not rewritten.
// Case 3: constants of different broadcast shapes combine into their broadcast; the result
// shape is unchanged.
// CHECK-LABEL: graph @affine
// CHECK: Mul(%x, %
// CHECK-NEXT: Add(%
// CHECK-NEXT: %r : f32[1,4,5,5] = Relu(
// CHECK: %a2 : f32[2,3] = Mul(%x2, %k)
// CHECK-NEXT: Mul(%a2, %k)
// CHECK-NEXT: %b3 : f32[2,3,4] = Add(%x3, %
// CHECK-NOT: Add(
// CHECK: output
graph @affine {
  input %x : f32[1,4,5,5]
  input %x2 : f32[2,3]
  input %x3 : f32[2,3,4]
  const %s : f32[4,1,1] = random<1>
  const %t : f32[4,1,1] = random<2>
  const %c : f32[1,4,1,1] = random<3>
  const %d : f32[1,4,1,1] = random<4>
  const %k : f32[3] = dense<[1.0, 2.0, 3.0]>
  const %p : f32[3,1] = random<5>
  const %q : f32[4] = random<6>
  %a = Mul(%x, %s)
  %b = Add(%a, %t)
  %m = Mul(%c, %b)
  %y = Add(%m, %d)
  %r = Relu(%y)
  %a2 = Mul(%x2, %k)
  %b2 = Mul(%a2, %k)
  %a3 = Add(%x3, %p)
  %b3 = Add(%q, %a3)
  output %r, %a2, %b2, %b3
}
