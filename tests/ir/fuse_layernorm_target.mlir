// RUN: magneto-opt %s --passes=fuse-layernorm --target=cuda --check-equivalence | FileCheck %s --check-prefix=GPU
// RUN: magneto-opt %s --passes=fuse-layernorm --target=hip --check-equivalence | FileCheck %s --check-prefix=GPU
// RUN: magneto-opt %s --passes=fuse-layernorm --check-equivalence | FileCheck %s --check-prefix=CPU
// On cuda and hip (include/magneto/target/target_limits.h) fuse-layernorm makes only what their
// row program computes: a float32 LayerNormalization whose scale and bias hold every normalized
// element. A gamma broadcast over part of the normalized dims ([8] of [4,8]) stays a Mul after
// the op there (the CPU kernels take it), the RMSNorm chain stays as it is, and a float64 chain too.
// GPU-LABEL: graph @gpu
// GPU: %[[N:.*]] : f32[3,4,8] = LayerNormalization(%x, %{{.*}}) {axis = 1, epsilon = 9.99999975e-06}
// GPU-NEXT: %y : f32[3,4,8] = Mul(%[[N]], %g)
// GPU-NOT: RMSNormalization
// GPU: %yr : f32[3,8] = Mul(
// GPU-NOT: Normalization
// GPU: output
// CPU-LABEL: graph @gpu
// CPU: %y : f32[3,4,8] = LayerNormalization(%x, %g) {axis = 1, epsilon = 9.99999975e-06}
// CPU: %yr : f32[3,8] = RMSNormalization(%xr, %w) {axis = 1, epsilon = 9.99999975e-06}
// CPU: %yd : f64[3,8] = LayerNormalization(%xd, %{{.*}}) {axis = 1, epsilon = 1e-05}
graph @gpu {
  input %x : f32[3,4,8]
  input %xr : f32[3,8]
  input %xd : f64[3,8]
  const %axes : i64[2] = dense<[1, 2]>
  const %two : f32[] = dense<[2.0]>
  const %eps : f32[] = dense<[1e-5]>
  const %twod : f64[] = dense<[2.0]>
  const %epsd : f64[] = dense<[1e-5]>
  const %g : f32[8] = random<1>
  const %w : f32[8] = random<2>
  %m = ReduceMean(%x, %axes)
  %d = Sub(%x, %m)
  %p = Pow(%d, %two)
  %v = ReduceMean(%p, %axes)
  %ve = Add(%v, %eps)
  %s = Sqrt(%ve)
  %n = Div(%d, %s)
  %y = Mul(%n, %g)
  %pr = Pow(%xr, %two)
  %vr = ReduceMean(%pr) {axes = [-1]}
  %ver = Add(%vr, %eps)
  %sr = Sqrt(%ver)
  %nr = Div(%xr, %sr)
  %yr = Mul(%nr, %w)
  %md = ReduceMean(%xd) {axes = [-1]}
  %dd = Sub(%xd, %md)
  %pd = Pow(%dd, %twod)
  %vd = ReduceMean(%pd) {axes = [-1]}
  %ved = Add(%vd, %epsd)
  %sd = Sqrt(%ved)
  %yd = Div(%dd, %sd)
  output %y, %yr, %yd
}
