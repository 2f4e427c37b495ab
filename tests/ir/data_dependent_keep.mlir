// RUN: magneto-opt %s --passes=dce | FileCheck %s

// Shape(NonZero(x)) folded into shape data leaves the NonZero without uses, but the shape data
// (and the ConstantOfShape reading it) names its count: dce keeps the producer of a data symbol
// that some value still names (the package binds the symbol after its step).
// CHECK-LABEL: graph @keep
// CHECK: symbol nz [0, 4] data
// CHECK: %nz : i64[1,4] as [1,nz] = NonZero(%x)
// CHECK: %z : f32[1,4] as [1,nz] = ConstantOfShape(%s)
graph @keep {
  symbol nz [0, 4] data
  input %x : f32[4]
  %nz : i64[1,4] as [1,nz] = NonZero(%x)
  %s : i64[2] = MgSymbolic() {exprs = ["1", "nz"], shape = [2], to = 7}
  %z = ConstantOfShape(%s)
  output %z
}
