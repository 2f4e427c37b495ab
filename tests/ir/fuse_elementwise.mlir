// RUN: magneto-opt %s --passes=fuse-elementwise --check-equivalence | FileCheck %s

// Case 1: BatchNorm-as-Mul+Add then LeakyRelu: one fused op, broadcast constants as inputs.
// CHECK-LABEL: graph @ew
// CHECK: MgElementwise(%x, %s, %t) {program = ["Mul i0 i1", "Add t0 i2", "LeakyRelu t1 alpha=0.1"]}
// Case 2: x * Sigmoid(x) (Swish) fuses with the shared value read twice as one input; the Exp
// producing it has two users, so it stays outside the chain.
// CHECK: %u : f32[1,3,4,4] = Exp(%x)
// CHECK: MgElementwise(%u) {program = ["Sigmoid i0", "Mul i0 t0"]}
// Case 3: a single op is not a chain.
// CHECK: Tanh(%x)
graph @ew {
  input %x : f32[1,3,4,4]
  const %s : f32[3,1,1] = random<1>
  const %t : f32[3,1,1] = random<2>
  %a = Mul(%x, %s)
  %b = Add(%a, %t)
  %r = LeakyRelu(%b) {alpha = 0.1}
  %u = Exp(%x)
  %sg = Sigmoid(%u)
  %sw = Mul(%u, %sg)
  %th = Tanh(%x)
  output %r, %sw, %th
}
