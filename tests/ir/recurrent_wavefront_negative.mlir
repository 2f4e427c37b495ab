// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --debug-only=recurrent-wavefront 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Not a wavefront: bidirectional layers (the backward direction of layer 0 writes time t last),
// and layers in opposite directions: nothing is recorded. Two small stacked layers (16 steps of
// hidden 32): a step costs about as much as the flag handshake, so the model finds no gain and
// records "none" with the figures.
// LOG: [recurrent-wavefront] [s0, s1]: none: wavefront {{[0-9.]+}} us vs layer by layer {{[0-9.]+}} us: gain below kMinGain 3%
// CHECK-LABEL: graph @not_stacked
// CHECK-NOT: parallel
// CHECK: output
graph @not_stacked {
  input %x : f32[8,2,8]
  input %xs : f32[16,2,8]
  const %ws : f32[1,128,8] = random<8>
  const %rs : f32[1,128,32] = random<9>
  const %ws1 : f32[1,128,32] = random<10>
  const %w0 : f32[2,128,8] = random<1>
  const %r0 : f32[2,128,32] = random<2>
  const %w1 : f32[2,128,64] = random<3>
  const %r1 : f32[2,128,32] = random<4>
  const %wf : f32[1,128,8] = random<5>
  const %rf : f32[1,128,32] = random<6>
  const %wr : f32[1,128,32] = random<7>
  const %shape : i64[3] = dense<[8, 2, 64]>
  const %axes1 : i64[1] = dense<[1]>
  %y0, %h0, %c0 = LSTM(%x, %w0, %r0) {direction = "bidirectional", hidden_size = 32} loc("bi0")
  %t0 = Transpose(%y0) {perm = [0, 2, 1, 3]} loc("t0")
  %x1 = Reshape(%t0, %shape) loc("rs0")
  %y1, %h1, %c1 = LSTM(%x1, %w1, %r1) {direction = "bidirectional", hidden_size = 32} loc("bi1")
  %f0, %fh, %fc = LSTM(%x, %wf, %rf) {hidden_size = 32} loc("fwd")
  %f1 = Squeeze(%f0, %axes1) loc("sqf")
  %r1y, %r1h, %r1c = LSTM(%f1, %wr, %rf) {direction = "reverse", hidden_size = 32} loc("rev")
  %s0y, %s0h, %s0c = LSTM(%xs, %ws, %rs) {hidden_size = 32} loc("s0")
  %s1x = Squeeze(%s0y, %axes1) loc("sqs")
  %s1y, %s1h, %s1c = LSTM(%s1x, %ws1, %rs) {hidden_size = 32} loc("s1")
  output %y1
  output %r1y
  output %s1y
}
