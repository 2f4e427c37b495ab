// RUN: magneto-opt %s --passes=decompose-attention,fuse-layernorm,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=decompose-attention,fuse-layernorm,dce --target=cuda --check-equivalence | FileCheck %s --check-prefix=GPU
// An opset-23 RMSNormalization: decompose-attention writes it out for every target; on cpu
// fuse-layernorm takes the chain back into the op (the CPU has a fast kernel for it), on cuda
// (no RMSNormalization program) the chain stays.
// CHECK-LABEL: graph @rms
// CHECK: %y : f32[2,3,8] = RMSNormalization(%x, %s) {axis = 2, epsilon = 9.99999975e-06}
// CHECK: %y2 : f32[2,3,8] = RMSNormalization(%x, %s2) {axis = 1, epsilon = 0.00100000005}
// CHECK-NOT: ReduceMean
// GPU-LABEL: graph @rms
// GPU-NOT: RMSNormalization
// GPU: ReduceMean
graph @rms {
  input %x : f32[2,3,8]
  const %s : f32[8] = random<1>
  const %s2 : f32[3,8] = random<2>
  %y = RMSNormalization(%x, %s) loc("rms")
  %y2 = RMSNormalization(%x, %s2) {axis = 1, epsilon = 0.001} loc("rms1")
  output %y, %y2
}
