// RUN: magneto-opt %s --passes=fold,dce --check-equivalence | FileCheck %s

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape: the shape arithmetic folds to a constant
// and only the Reshape (and the Relu) remain. The Reshape is typed by hand: before folding, its
// shape operand is not a constant, so its type cannot be inferred (the verifier skips such nodes).
// CHECK-LABEL: graph @fold
// CHECK: const %{{.*}} : i64[2] = dense<[2, -1]>
// CHECK-NOT: Shape
// CHECK-NOT: Gather
// CHECK-NOT: Concat
// CHECK: Reshape(%r,
graph @fold {
  input %x : f32[2,3,4]
  const %i0 : i64[] = dense<[0]>
  const %m1 : i64[1] = dense<[-1]>
  const %ax : i64[1] = dense<[0]>
  %r = Relu(%x)
  %s = Shape(%r)
  %n = Gather(%s, %i0) {axis = 0}
  %nu = Unsqueeze(%n, %ax)
  %shape = Concat(%nu, %m1) {axis = 0}
  %y : f32[2,12] = Reshape(%r, %shape)
  output %y
}
