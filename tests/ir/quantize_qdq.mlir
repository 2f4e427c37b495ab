// RUN: magneto-opt %s --passes=fold,fuse-epilogue,fuse-elementwise,dce --check-equivalence | FileCheck %s

// A QDQ block as quantization tools write it. fold evaluates the DequantizeLinear of the constant
// int8 weight (per output channel, axis 0) into a float32 constant with the reference kernel;
// the Q/DQ pairs on activations stay (their operand is not constant); fuse-epilogue still gives
// the Conv its Relu; fuse-elementwise fuses the float32 Mul and Sigmoid after the DQ but neither
// the DQ nor the Q: they are not float32 elementwise ops.
// CHECK-LABEL: graph @qdq
// CHECK: const %w_const : f32[2,1,3,3] =
// CHECK-NOT: i8[2,1,3,3]
// CHECK: %xq : u8[1,1,4,4] = QuantizeLinear(%x, %xs, %xz)
// CHECK: %xd : f32[1,1,4,4] = DequantizeLinear(%xq, %xs, %xz)
// CHECK: Conv(%xd, %w_const) {mg_act = "Relu", pads = [1, 1, 1, 1]}
// CHECK: %hq : u8[1,2,4,4] = QuantizeLinear(%c, %hs, %hz)
// CHECK: %hd : f32[1,2,4,4] = DequantizeLinear(%hq, %hs, %hz)
// CHECK: MgElementwise(%hd, %k) {program = ["Mul i0 i1", "Sigmoid t0"]}
graph @qdq {
  input %x : f32[1,1,4,4]
  const %xs : f32[] = dense<[0.0625]>
  const %xz : u8[] = dense<[128]>
  const %wq : i8[2,1,3,3] = dense<[1, -2, 3, -4, 5, -6, 7, -8, 9, -1, 2, -3, 4, -5, 6, -7, 8, -9]>
  const %ws : f32[2] = dense<[0.25, 0.5]>
  const %hs : f32[] = dense<[0.125]>
  const %hz : u8[] = dense<[0]>
  const %k : f32[] = dense<[3]>
  %xq = QuantizeLinear(%x, %xs, %xz)
  %xd = DequantizeLinear(%xq, %xs, %xz)
  %w = DequantizeLinear(%wq, %ws) {axis = 0}
  %c = Conv(%xd, %w) {pads = [1, 1, 1, 1]}
  %r = Relu(%c)
  %hq = QuantizeLinear(%r, %hs, %hz)
  %hd = DequantizeLinear(%hq, %hs, %hz)
  %m = Mul(%hd, %k)
  %y = Sigmoid(%m)
  output %y
}
