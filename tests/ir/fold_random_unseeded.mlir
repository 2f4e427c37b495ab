// RUN: magneto-opt %s --passes=canonicalize,fold,fold-batchnorm,fold-affine,fold-conv-scale,fold-pad,fuse-epilogue,wide-merge,batch-merge,batch-merge-conv,fuse-elementwise,dce,place-concat-slices,recurrent-wavefront,parallel-co-optimize | FileCheck %s

// Two unseeded RandomUniform nodes with equal attributes are two draws, not one value: the
// default CPU pipeline neither folds them (kNoFold, src/ops/random_ops.cpp) nor merges them, so
// %d is not 0. (No --check-equivalence: unseeded draws differ from run to run by design.)
// CHECK-LABEL: graph @random
// CHECK-COUNT-2: = RandomUniform() {shape = [2, 3]}
// CHECK-NOT: = RandomUniform()
// CHECK: Sub(
graph @random {
  %u2 = RandomUniform() {shape = [2, 3]}
  %u3 = RandomUniform() {shape = [2, 3]}
  %d = Sub(%u2, %u3)
  output %d
}
