// RUN: magneto-opt %s --passes=fuse-qdq,dce --check-equivalence | FileCheck %s

// QDQ convolutions fuse-qdq must leave in float, each for a reason its header gives:
//  - %c1: a Relu before a QuantizeLinear whose zero point (3) is not the type's lowest value:
//    quantize(relu(v)) gives 3 for v < 0 where quantize(v) could give 0..2, so the Relu matters;
//  - %c2: a float32 bias (QLinearConv's bias is int32 at scale x_scale * w_scale);
//  - %c3: an int32 bias whose DequantizeLinear scale (0.02) is not x_scale * w_scale (0.015625);
//  - %c4: its result is read by the QuantizeLinear and by a graph output, which would lose it;
//  - %c5: a grouped convolution that is not depthwise (2 groups of one input channel, two
//    outputs each): the integer kernels are ungrouped or depthwise (fuse_qdq_depthwise.mlir).
// CHECK-LABEL: graph @qdq_kept
// CHECK-NOT: QLinearConv
// CHECK: %c1 : f32[1,2,4,4] = Conv(%xd, %w)
// CHECK: Relu(%c1)
// CHECK: %c2 : f32[1,2,4,4] = Conv(%xd, %w, %bf)
// CHECK: %c3 : f32[1,2,4,4] = Conv(%xd, %w, %b3)
// CHECK: %c4 : f32[1,2,4,4] = Conv(%xd, %w)
// CHECK: %c5 : f32[1,4,4,4] = Conv(%xd, %wd) {group = 2}
// CHECK-NOT: QLinearConv
graph @qdq_kept {
  input %xq : u8[1,2,4,4]
  const %xs : f32[] = dense<[0.0625]>
  const %xz : u8[] = dense<[128]>
  const %wq : i8[2,2,1,1] = dense<[1, -2, 3, -4]>
  const %wdq : i8[4,1,1,1] = dense<[3, -5, 2, 7]>
  const %ws4 : f32[4] = dense<[0.25, 0.25, 0.125, 0.5]>
  const %ws : f32[2] = dense<[0.25, 0.25]>
  const %bf : f32[2] = dense<[0.5, -0.25]>
  const %bq : i32[2] = dense<[100, -37]>
  const %bs3 : f32[2] = dense<[0.02, 0.02]>
  const %ys : f32[] = dense<[0.5]>
  const %yz3 : u8[] = dense<[3]>
  const %yz : u8[] = dense<[0]>
  %xd = DequantizeLinear(%xq, %xs, %xz)
  %w = DequantizeLinear(%wq, %ws) {axis = 0}
  %wd = DequantizeLinear(%wdq, %ws4) {axis = 0}
  %c1 = Conv(%xd, %w)
  %r1 = Relu(%c1)
  %q1 = QuantizeLinear(%r1, %ys, %yz3)
  %y1 = DequantizeLinear(%q1, %ys, %yz3)
  %c2 = Conv(%xd, %w, %bf)
  %q2 = QuantizeLinear(%c2, %ys, %yz)
  %y2 = DequantizeLinear(%q2, %ys, %yz)
  %b3 = DequantizeLinear(%bq, %bs3) {axis = 0}
  %c3 = Conv(%xd, %w, %b3)
  %q3 = QuantizeLinear(%c3, %ys, %yz)
  %y3 = DequantizeLinear(%q3, %ys, %yz)
  %c4 = Conv(%xd, %w)
  %q4 = QuantizeLinear(%c4, %ys, %yz)
  %y4 = DequantizeLinear(%q4, %ys, %yz)
  %c5 = Conv(%xd, %wd) {group = 2}
  %q5 = QuantizeLinear(%c5, %ys, %yz)
  %y5 = DequantizeLinear(%q5, %ys, %yz)
  output %y1
  output %y5
  output %y2
  output %y3
  output %y4
  output %c4
}
