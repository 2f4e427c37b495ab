// RUN: magneto-opt %s --passes=fuse-qdq,dce --check-equivalence | FileCheck %s

// A quantized MaxPool as the quantizers write it: DequantizeLinear, the float MaxPool, a
// QuantizeLinear with the same scale and zero point. It becomes MaxPool on the uint8 tensor
// (dequantizing is increasing, and quantizing back with the same parameters is exact), with its
// attributes; a second pool whose QuantizeLinear has another zero point stays in float.
// CHECK-LABEL: graph @qdq_maxpool
// CHECK: %pq : u8[1,2,3,3] = MaxPool(%xq) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
// CHECK: %p2 : f32[1,2,3,3] = MaxPool(%xd)
// CHECK: QuantizeLinear(%p2, %s, %z2)
graph @qdq_maxpool {
  input %xq : u8[1,2,5,5]
  const %s : f32[] = dense<[0.0625]>
  const %z : u8[] = dense<[128]>
  const %z2 : u8[] = dense<[120]>
  %xd = DequantizeLinear(%xq, %s, %z)
  %p = MaxPool(%xd) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
  %pq = QuantizeLinear(%p, %s, %z)
  %y = DequantizeLinear(%pq, %s, %z)
  %p2 = MaxPool(%xd) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
  %pq2 = QuantizeLinear(%p2, %s, %z2)
  %y2 = DequantizeLinear(%pq2, %s, %z2)
  output %y
  output %y2
}
