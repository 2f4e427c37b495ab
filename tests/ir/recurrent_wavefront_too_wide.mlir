// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=recurrent-wavefront --device=h200 --target=cuda --debug-only=recurrent-wavefront 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// A batch too large for the launch to be co-resident (2 x 600 blocks; the H200 holds 1056 of
// them at once): recorded as "none" with why, nothing marked.
// LOG: [recurrent-wavefront] [w0, w1]: none: wavefront refused: 1200 blocks of 64 threads and 2048 B shared memory; 1056 fit on h200 at once
// CHECK-LABEL: graph @too_wide
// CHECK-NOT: parallel
// CHECK: output
graph @too_wide {
  input %x : f32[4,600,8]
  const %w0 : f32[1,128,8] = random<1>
  const %r0 : f32[1,128,32] = random<2>
  const %w1 : f32[1,128,32] = random<3>
  const %axes1 : i64[1] = dense<[1]>
  %y0, %h0, %c0 = LSTM(%x, %w0, %r0) {hidden_size = 32} loc("w0")
  %x1 = Squeeze(%y0, %axes1) loc("wsq")
  %y1, %h1, %c1 = LSTM(%x1, %w1, %r0) {hidden_size = 32} loc("w1")
  output %y1
}
