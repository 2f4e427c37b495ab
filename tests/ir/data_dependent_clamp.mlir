// RUN: magneto-opt %s --passes=fold,dce | FileCheck %s

// A slice of a run-time count (torchvision's keep[:300], here keep[:3] and keep[1:]) is the count
// clamped: min(nz, 3) and max(nz, 1)-1 (docs/DYNAMIC_SHAPES.md, "Clamped counts"), printed and
// parsed back, and its consumers are fitted in the clamp as a coordinate: a Concat of the top
// slice with itself is 2*min(nz, 3), a Gather of the kept rows min(nz, 3) rows. The verification
// checks every count in [0, 200]. (A sum of two different clamps of one count, min(nz, 3)+max(nz,
// 1)-1, fits in no coordinate of nz: refused by name, as any shape no expression fits.)
// CHECK-LABEL: graph @clamp
// CHECK: symbol nz [0, 200] data
// CHECK: %top : i64[3] as [min(nz, 3)] = Slice(%idx, %zero, %three, %zero)
// CHECK: %rest : i64[199] as [max(nz, 1)-1] = Slice(%idx, %one, %big, %zero)
// CHECK: %both : i64[6] as [2*min(nz, 3)] = Concat(%top, %top)
// CHECK: %rows : f32[3,4] as [min(nz, 3),4] = Gather(%x, %top)
graph @clamp {
  symbol nz [0, 200] data
  input %x : f32[200,4]
  input %m : bool[200]
  const %zero : i64[1] = dense<[0]>
  const %one : i64[1] = dense<[1]>
  const %three : i64[1] = dense<[3]>
  const %big : i64[1] = dense<[1000]>
  const %rowshape : i64[1] = dense<[-1]>
  %nzs : i64[1,200] as [1,nz] = NonZero(%m)
  %idx = Reshape(%nzs, %rowshape)
  %top = Slice(%idx, %zero, %three, %zero)
  %rest = Slice(%idx, %one, %big, %zero)
  %both = Concat(%top, %top) {axis = 0}
  %rows = Gather(%x, %top) {axis = 0}
  output %both, %rest, %rows
}
