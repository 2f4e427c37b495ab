// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=recurrent-wavefront,recurrent-wavefront --device=h200 --target=cuda | FileCheck %s
// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --debug-only=recurrent-wavefront 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: magneto-opt %s --passes=recurrent-wavefront --device=$(dirname %s)/host2.profile --check-equivalence | FileCheck %s --check-prefix=HOST

// Stacked unidirectional recurrent layers (nn.LSTM(num_layers=2) as PyTorch exports it, the zoo's lstm_lm_small shape: Y of
// layer 0, its direction axis squeezed, is X of layer 1) become one "wavefront" group on a GPU
// profile: the layers and the view between them, contiguous, nothing else changed
// (--check-equivalence). A node between the layers that does not depend on them (%side) moves
// before the group. Running the pass twice decides nothing again.
// CHECK-LABEL: graph @lstm2
// CHECK: Relu(%side_in) loc("side")
// CHECK-NEXT: parallel #0 "wavefront" "2 layers x 32 steps: 33 steps of {{[0-9.]+}} us (slowest layer's step + flag handshake), 4 blocks co-resident (device holds 1056); wavefront {{[0-9.]+}} us vs layer by layer {{[0-9.]+}} us (-{{[0-9.]+}}%)" {
// CHECK-NEXT: LSTM(%x, %w0, %r0, %b0) {hidden_size = 64} loc("l0")
// CHECK-NEXT: Squeeze(%y0, %axes1) loc("sq0")
// CHECK-NEXT: LSTM(%x1, %w1, %r1, %b1) {hidden_size = 64} loc("l1")
// CHECK-NEXT: }
// CHECK-NOT: parallel #1
// LOG: [recurrent-wavefront] #0 [l0, l1]: wavefront: 2 layers x 32 steps
// On the host (a 2-core profile) the same layers become a pipelined region, each layer on its own
// core: the model prices layer by layer as one parallel region per time step (fork/join each).
// HOST-LABEL: graph @lstm2
// HOST: parallel #0 "wavefront" "2 layers x 32 steps, each layer on one of 2 cores, {{[0-9.]+}} us per step (slowest layer's step on one core + handshake); pipelined {{[0-9.]+}} us vs layer by layer on all cores {{[0-9.]+}} us (-{{[0-9.]+}}%)" {
// HOST-NEXT: LSTM(%x, %w0, %r0, %b0) {hidden_size = 64} loc("l0")
// HOST-NEXT: Squeeze(%y0, %axes1) loc("sq0")
// HOST-NEXT: LSTM(%x1, %w1, %r1, %b1) {hidden_size = 64} loc("l1")
// HOST-NEXT: }
graph @lstm2 {
  input %x : f32[32,2,16]
  input %side_in : f32[4]
  const %w0 : f32[1,256,16] = random<1>
  const %r0 : f32[1,256,64] = random<2>
  const %b0 : f32[1,512] = random<3>
  const %w1 : f32[1,256,64] = random<4>
  const %r1 : f32[1,256,64] = random<5>
  const %b1 : f32[1,512] = random<6>
  const %axes1 : i64[1] = dense<[1]>
  %y0, %h0, %c0 = LSTM(%x, %w0, %r0, %b0) {hidden_size = 64} loc("l0")
  %side = Relu(%side_in) loc("side")
  %x1 = Squeeze(%y0, %axes1) loc("sq0")
  %y1, %h1, %c1 = LSTM(%x1, %w1, %r1, %b1) {hidden_size = 64} loc("l1")
  output %y1
  output %side
  output %h0
}
