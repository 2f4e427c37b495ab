// RUN: magneto-opt %s --passes=fuse-qdq,dce --check-equivalence | FileCheck %s

// A quantized residual add as the quantizers write it: both operands dequantized (per tensor,
// one of them without a zero point), a float Add, a QuantizeLinear. It becomes one
// MgQuantizedAdd on the bytes (the three formulas per element), the missing zero point made
// explicit; the DequantizeLinear of %aq stays for its other reader. An Add that broadcasts
// (%c: [1,2,1,1]) stays in float.
// CHECK-LABEL: graph @qdq_add
// CHECK: %ad : f32[1,2,4,4] = DequantizeLinear(%aq, %as, %az)
// CHECK: %yq : u8[1,2,4,4] = MgQuantizedAdd(%aq, %as, %az, %bq, %bs, %{{.*}}zero_point{{.*}}, %ys, %yz)
// CHECK: %s2 : f32[1,2,4,4] = Add(%ad, %cd)
graph @qdq_add {
  input %aq : u8[1,2,4,4]
  input %bq : i8[1,2,4,4]
  input %cq : u8[1,2,1,1]
  const %as : f32[] = dense<[0.0625]>
  const %az : u8[] = dense<[128]>
  const %bs : f32[] = dense<[0.125]>
  const %ys : f32[] = dense<[0.25]>
  const %yz : u8[] = dense<[10]>
  %ad = DequantizeLinear(%aq, %as, %az)
  %bd = DequantizeLinear(%bq, %bs)
  %cd = DequantizeLinear(%cq, %as, %az)
  %s = Add(%ad, %bd)
  %yq = QuantizeLinear(%s, %ys, %yz)
  %y = DequantizeLinear(%yq, %ys, %yz)
  %s2 = Add(%ad, %cd)
  %y2q = QuantizeLinear(%s2, %ys, %yz)
  %y2 = DequantizeLinear(%y2q, %ys, %yz)
  output %y
  output %y2
}
