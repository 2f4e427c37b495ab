// RUN: magneto-opt %s --passes=fuse-elementwise --check-equivalence | FileCheck %s --check-prefix=CPU
// RUN: magneto-opt %s --passes=fuse-elementwise --target=cuda --check-equivalence | FileCheck %s --check-prefix=GPU
// RUN: magneto-opt %s --passes=fuse-elementwise --target=hip --check-equivalence | FileCheck %s --check-prefix=GPU

// A chain of 7 ops reading 8 values from outside (as a mixture of experts' gate-weighted sum
// does). The CPU kernel takes any number of operands: one fused op. The GPU map kernel reads at
// most 6 (include/magneto/target/target_limits.h): the chain stops before the op that would add
// a 7th, and the rest is fused on its own.
// CPU-LABEL: graph @long_chain
// CPU: : f32[2,16] = MgElementwise(%x, %a, %b, %c, %d, %e, %f, %g)
// CPU-NOT: MgElementwise
// GPU-LABEL: graph @long_chain
// GPU: MgElementwise(%x, %a, %b, %c, %d, %e)
// GPU: : f32[2,16] = MgElementwise(%{{[^,]+}}, %f, %g)
// GPU-NOT: MgElementwise
graph @long_chain {
  input %x : f32[2,16]
  input %a : f32[2,16]
  input %b : f32[2,1]
  input %c : f32[2,16]
  input %d : f32[16]
  input %e : f32[2,16]
  input %f : f32[2,16]
  input %g : f32[2,1]
  %t1 = Add(%x, %a)
  %t2 = Mul(%t1, %b)
  %t3 = Add(%t2, %c)
  %t4 = Mul(%t3, %d)
  %t5 = Add(%t4, %e)
  %t6 = Mul(%t5, %f)
  %y = Sub(%t6, %g)
  output %y
}
