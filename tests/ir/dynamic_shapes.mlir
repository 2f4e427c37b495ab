// RUN: magneto-opt %s --passes=fold,fold-batchnorm,fuse-epilogue,dce | FileCheck %s

// Dynamic dimensions (docs/DYNAMIC_SHAPES.md): the input's batch and length are symbols; every
// value keeps its static dims at the maximum binding and prints its symbolic shape after `as`.
// The Conv's length is fitted as floor((T-1)/2)+1 = floor((T+1)/2); BatchNormalization folds into
// the Conv and Relu becomes its epilogue, and the shapes after the passes are inferred and
// verified again. The Reshape target is shape data of N (MgSymbolic): fold must keep it.
// CHECK-LABEL: graph @dyn
// CHECK: symbol N [1, 16] opt [1, 4]
// CHECK: symbol T [3, 40]
// CHECK: input %x : f32[16,2,40] as [N,2,T]
// CHECK: %target : i64[2] = MgSymbolic() {exprs = ["N", "-1"]
// CHECK: %c : f32[16,4,20] as [N,4,floor((T+1)/2)] = Conv(%x, {{.*}}mg_act = "Relu"
// CHECK-NOT: BatchNormalization
// CHECK: %flat : f32[16,80] as [N,4*floor((T+1)/2)] = Reshape(%c, %target)
graph @dyn {
  symbol N [1, 16] opt [1, 4]
  symbol T [3, 40]
  input %x : f32[16,2,40] as [N,2,T]
  const %w : f32[4,2,3] = random<3>
  const %scale : f32[4] = dense<[1.0, 0.5, 2.0, 1.5]>
  const %bias : f32[4] = dense<[0.1, 0.2, 0.3, 0.4]>
  const %mean : f32[4] = dense<[0.0, 0.1, -0.1, 0.2]>
  const %var : f32[4] = dense<[1.0, 2.0, 0.5, 1.0]>
  %target : i64[2] = MgSymbolic() {exprs = ["N", "-1"], shape = [2], to = 7}
  %c = Conv(%x, %w, _) {kernel_shape = [3], pads = [1, 1], strides = [2]}
  %b = BatchNormalization(%c, %scale, %bias, %mean, %var)
  %y = Relu(%b)
  %flat = Reshape(%y, %target)
  output %flat
}
