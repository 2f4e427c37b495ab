// RUN: magneto-opt %s --passes=dce | FileCheck %s

// A consumer that cannot take a count down to 0 (TopK with the constant K = 3 over NonZero's
// values) raises the data symbol's lower bound to the least count its inference accepts: the
// package refuses fewer at run time, naming the NonZero and the range, instead of the compile
// failing at nz = 0. The TopK's results are static (K = 3).
// CHECK-LABEL: graph @lower
// CHECK: symbol nz [3, 12] data
// CHECK: %v : f32[12] as [nz] = GatherND(%x, %t)
// CHECK: %tv : f32[3], %ti : i64[3] = TopK(%v, %k)
graph @lower {
  symbol nz [0, 12] data
  input %x : f32[3,4]
  const %thr : f32[] = dense<[0.5]>
  const %k : i64[1] = dense<[3]>
  %mask = Greater(%x, %thr)
  %nz : i64[2,12] as [2,nz] = NonZero(%mask)
  %t = Transpose(%nz) {perm = [1, 0]}
  %v = GatherND(%x, %t)
  %tv, %ti = TopK(%v, %k)
  output %tv, %ti
}
