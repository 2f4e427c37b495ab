// RUN: magneto-opt %s --passes=canonicalize,fold,fuse-elementwise,dce --check-equivalence | FileCheck %s

// The random generators are kNoFold (src/ops/random_ops.cpp): fold keeps them even when they
// have no operand or only constant ones, and what reads their draws stays too. Seeded, the graph
// is a function of its seeds, so the interpreter's before/after comparison holds
// (--check-equivalence). Unseeded ones: fold_random_unseeded.mlir.
// CHECK-LABEL: graph @random
// CHECK: %u : f32[2,3] = RandomUniform() {seed = 1
// CHECK: %l : f32[2,3] = RandomNormalLike(%c) {seed = 2
// CHECK: %b : f32[2,3] = Bernoulli(%p) {seed = 3
// CHECK: MgElementwise(%u, %l, %b)
graph @random {
  const %c : f32[2,3] = dense<[1, 2, 3, 4, 5, 6]>
  const %p : f32[2,3] = dense<[0, 1, 0.5, 0.5, 1, 0]>
  %u = RandomUniform() {seed = 1.0, shape = [2, 3]}
  %l = RandomNormalLike(%c) {seed = 2.0}
  %b = Bernoulli(%p) {seed = 3.0}
  %s = Add(%u, %l)
  %t = Mul(%s, %b)
  output %t
}
