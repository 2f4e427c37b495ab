// RUN: magneto-opt %s --passes=fuse-qdq,dce --check-equivalence | FileCheck %s

// A quantized Conv in the QDQ form onnxruntime's static quantizer writes: uint8 activation per
// tensor, int8 weight per output channel (axis 0), int32 bias at scale x_scale * w_scale, a Relu
// before a QuantizeLinear whose zero point is 0. It becomes one QLinearConv on the quantized
// operands with the Conv's attributes; the Relu goes (QuantizeLinear's saturation at 0 is the
// Relu), the weight's and bias's DequantizeLinear go, the activation's stays for its other reader
// (%side). Scales are powers of two, so the float path and the integer path give the same bytes and
// --check-equivalence compares them exactly.
// CHECK-LABEL: graph @qdq_conv
// CHECK: %xd : f32[1,2,5,5] = DequantizeLinear(%xq, %xs, %xz)
// CHECK-NEXT: %yq : u8[1,2,5,5] = QLinearConv(%xq, %xs, %xz, %wq, %ws, %wz_const, %ys, %yz, %bq) {pads = [1, 1, 1, 1], strides = [1, 1]}
// CHECK-NEXT: %y : f32[1,2,5,5] = DequantizeLinear(%yq, %ys, %yz)
// CHECK-NEXT: %side : f32[1,2,5,5] = Neg(%xd)
// CHECK-NEXT: output %y, %side
graph @qdq_conv {
  input %xq : u8[1,2,5,5]
  const %xs : f32[] = dense<[0.0625]>
  const %xz : u8[] = dense<[128]>
  const %wq : i8[2,2,3,3] = dense<[1, -2, 3, -4, 5, -6, 7, -8, 9, -1, 2, -3, 4, -5, 6, -7, 8, -9, 3, 1, -2, 0, 4, -1, 2, 2, -3, 5, -5, 1, 0, 0, 7, -7, 1, 1]>
  const %ws : f32[2] = dense<[0.25, 0.5]>
  const %wz_const : i8[2] = dense<[0, 0]>
  const %bq : i32[2] = dense<[100, -37]>
  const %bs : f32[2] = dense<[0.015625, 0.03125]>
  const %ys : f32[] = dense<[0.5]>
  const %yz : u8[] = dense<[0]>
  %xd = DequantizeLinear(%xq, %xs, %xz)
  %w = DequantizeLinear(%wq, %ws, %wz_const) {axis = 0}
  %b = DequantizeLinear(%bq, %bs) {axis = 0}
  %c = Conv(%xd, %w, %b) {pads = [1, 1, 1, 1], strides = [1, 1]}
  %r = Relu(%c)
  %yq = QuantizeLinear(%r, %ys, %yz)
  %y = DequantizeLinear(%yq, %ys, %yz)
  %side = Neg(%xd)
  output %y
  output %side
}
