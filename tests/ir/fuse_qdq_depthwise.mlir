// RUN: magneto-opt %s --passes=fuse-qdq,dce --check-equivalence | FileCheck %s

// A depthwise QDQ convolution (group == input channels == output channels, weights [3, 1, 3, 3]
// per output channel, an int32 bias at x_scale * w_scale, stride 2 and padding 1) becomes one
// QLinearConv that keeps the group: the CPU's depthwise integer kernel (f_qconv_dw.cpp) takes it.
// CHECK-LABEL: graph @qdq_depthwise
// CHECK-NOT: DequantizeLinear
// CHECK: %q : u8[1,3,3,3] = QLinearConv(%xq, %xs, %xz, %wq, %ws, %{{.*}}, %ys, %yz, %bq) {group = 3, pads = [1, 1, 1, 1], strides = [2, 2]}
// CHECK-NOT: Conv(
graph @qdq_depthwise {
  input %xq : u8[1,3,5,5]
  const %xs : f32[] = dense<[0.0625]>
  const %xz : u8[] = dense<[120]>
  const %wq : i8[3,1,3,3] = dense<[1, -2, 3, -4, 5, -6, 7, -8, 9, 2, 2, 2, -1, -1, -1, 0, 4, 0, -9, 8, -7, 6, -5, 4, -3, 2, -1]>
  const %ws : f32[3] = dense<[0.25, 0.125, 0.5]>
  const %bq : i32[3] = dense<[100, -37, 5]>
  const %bs : f32[3] = dense<[0.015625, 0.0078125, 0.03125]>
  const %ys : f32[] = dense<[0.5]>
  const %yz : u8[] = dense<[10]>
  %xd = DequantizeLinear(%xq, %xs, %xz)
  %w = DequantizeLinear(%wq, %ws) {axis = 0}
  %b = DequantizeLinear(%bq, %bs) {axis = 0}
  %c = Conv(%xd, %w, %b) {group = 3, pads = [1, 1, 1, 1], strides = [2, 2]}
  %q = QuantizeLinear(%c, %ys, %yz)
  output %q
}
