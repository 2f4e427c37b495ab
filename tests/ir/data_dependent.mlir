// RUN: magneto-opt %s --passes=fold,fuse-elementwise,dce | FileCheck %s

// Data-dependent extents (docs/DYNAMIC_SHAPES.md): NonZero's count is the data symbol `nz`
// (range [0, 32]: at most every element of the [N,4] mask), printed with `data` and kept through
// print/parse. Its result keeps the bound as static dims; the consumers' shapes are fitted as
// expressions of `nz` (and of the input symbol N) and verified over both ranges; TopK with a
// run-time K gets the data symbol `k` shared by its two results.
// CHECK-LABEL: graph @dd
// CHECK: symbol N [1, 8]
// CHECK: symbol nz [0, 32] data
// CHECK: symbol k [0, 4] data
// CHECK: %nz : i64[2,32] as [2,nz] = NonZero(%mask)
// CHECK: %t : i64[32,2] as [nz,2] = Transpose(%nz)
// CHECK: %v : f32[32] as [nz] = GatherND(%x, %t)
// CHECK: %s : f32[] = ReduceSum(%v)
// CHECK: %pairs : i64[64] as [2*nz] = Reshape(%t, %flat)
// CHECK: %vals : f32[8,4] as [N,k], %idx : i64[8,4] as [N,k] = TopK(%x, %kk)
graph @dd {
  symbol N [1, 8]
  symbol nz [0, 32] data
  symbol k [0, 4] data
  input %x : f32[8,4] as [N,4]
  input %kk : i64[1]
  const %thr : f32[] = dense<[0.5]>
  const %flat : i64[1] = dense<[-1]>
  %mask = Greater(%x, %thr)
  %nz : i64[2,32] as [2,nz] = NonZero(%mask)
  %t = Transpose(%nz) {perm = [1, 0]}
  %v = GatherND(%x, %t)
  %s = ReduceSum(%v) {keepdims = 0}
  %pairs = Reshape(%t, %flat)
  %vals : f32[8,4] as [N,k], %idx : i64[8,4] as [N,k] = TopK(%x, %kk) {axis = 1}
  output %t, %v, %s, %pairs, %vals, %idx
}
