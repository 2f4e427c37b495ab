// RUN: (magneto-opt %s --passes=decompose-attention 2>&1 || true) | FileCheck %s
// decompose-attention writes static Reshape targets and constants: a graph with dynamic
// dimensions is refused with an error naming the node (not a crash, not a wrong graph).
// CHECK: pass decompose-attention: node 'rms' (RMSNormalization): RMSNormalization in a graph with dynamic dimensions is not supported yet
graph @dyn {
  symbol N [1, 4]
  input %x : f32[4,3,8] as [N,3,8]
  const %s : f32[8] = random<1>
  %y = RMSNormalization(%x, %s) loc("rms")
  output %y
}
