// RUN: magneto-opt %s --passes=dce | FileCheck %s

// A data symbol whose producer dce removes (its result is unused) is dropped with it: the graph
// is static again and the package has no symbol table (it would have no step to compute it).
// CHECK-LABEL: graph @dead
// CHECK-NOT: symbol
// CHECK: input %x : f32[4]
// CHECK-NOT: NonZero
// CHECK: Relu(%x)
graph @dead {
  symbol nz [0, 4] data
  input %x : f32[4]
  %nz : i64[1,4] as [1,nz] = NonZero(%x)
  %y = Relu(%x)
  output %y
}
