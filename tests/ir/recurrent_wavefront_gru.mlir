// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --debug-only=recurrent-wavefront 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: magneto-opt %s --passes=recurrent-wavefront --device=$(dirname %s)/host2.profile --debug-only=recurrent-wavefront 2>&1 >/dev/null | FileCheck %s --check-prefix=HOST

// Three GRU layers running backwards, linked by Reshape, layout 0: one wavefront of three.
// CHECK-LABEL: graph @gru3
// CHECK: parallel #0 "wavefront" "3 layers x 24 steps: 26 steps of
// CHECK-NEXT: GRU(%x, %w0, %r0) {direction = "reverse", hidden_size = 48} loc("g0")
// CHECK-NEXT: Reshape(%y0, %shape) loc("rs0")
// CHECK-NEXT: GRU(%x1, %w1, %r1) {direction = "reverse", hidden_size = 48} loc("g1")
// CHECK-NEXT: Reshape(%y1, %shape) loc("rs1")
// CHECK-NEXT: GRU(%x2, %w1, %r1) {direction = "reverse", hidden_size = 48} loc("g2")
// CHECK-NEXT: }
// LOG: [recurrent-wavefront] #0 [g0, g1, g2]: wavefront: 3 layers x 24 steps
// On the host (2 cores) three layers would need three cores at once: refused, nothing marked.
// HOST: [recurrent-wavefront] [g0, g1, g2]: none: wavefront refused: 3 layers, each on its own core; host2 has 2
graph @gru3 {
  input %x : f32[24,3,48]
  const %w0 : f32[1,144,48] = random<1>
  const %r0 : f32[1,144,48] = random<2>
  const %w1 : f32[1,144,48] = random<3>
  const %r1 : f32[1,144,48] = random<4>
  const %shape : i64[3] = dense<[24, 3, 48]>
  %y0, %h0 = GRU(%x, %w0, %r0) {direction = "reverse", hidden_size = 48} loc("g0")
  %x1 = Reshape(%y0, %shape) loc("rs0")
  %y1, %h1 = GRU(%x1, %w1, %r1) {direction = "reverse", hidden_size = 48} loc("g1")
  %x2 = Reshape(%y1, %shape) loc("rs1")
  %y2, %h2 = GRU(%x2, %w1, %r1) {direction = "reverse", hidden_size = 48} loc("g2")
  output %y2
}
