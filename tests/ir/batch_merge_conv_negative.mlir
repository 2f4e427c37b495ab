// RUN: magneto-opt %s --passes=batch-merge-conv,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=batch-merge-conv --debug-only=batch-merge-conv 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Nothing here may become a grouped conv: the graph is unchanged and no group is recorded
// (declined sets are left to parallel-co-optimize). Every pair reads different inputs (%xa..%xn,
// each its own Mul of %x), so only the rule named in each case keeps it apart.
// CHECK-NOT: parallel #
// CHECK-NOT: group =
// Case 1: different strides.
// LOG-DAG: reject st_b with st_a: different strides
// Case 2: different weight shapes (3x3 beside 1x1) and different output channels.
// LOG-DAG: reject ws_b with st_a: different weight shapes
// Case 3: a Relu epilogue beside none.
// LOG-DAG: reject ep_b with st_a: different epilogue
// Case 4: a residual operand (fuse-epilogue's Add) has no grouped form here.
// LOG-DAG: reject res_a: has a residual operand
// Case 5: bias beside no bias.
// LOG-DAG: reject bi_a with st_a: different bias
// Case 6: batch 2: the members' results would not be contiguous channel runs.
// LOG-DAG: reject b2_a: batch 2 (slices are views only at batch 1)
// LOG-DAG: reject b2_b: batch 2
// Case 7: the cost model says no: on the host a joint region of the compatible members (what
// parallel-co-optimize builds: each member whole on a core) beats the grouped conv split over the
// cores plus the Concat that stacks the inputs. Two such sets here: the stride-1 3x3s and the
// stride-2 3x3s.
// LOG-DAG: decline [st_b, ws_a]: batch {{[0-9.]+}} us (2 kernels) vs sequential {{[0-9.]+}} us, joint {{[0-9.]+}} us: gain below kMinGain 3% on host
// LOG-DAG: decline [st_a, ep_a, cost_a, cost_b]: batch {{[0-9.]+}} us (2 kernels) vs sequential {{[0-9.]+}} us, joint {{[0-9.]+}} us: gain below kMinGain 3% on host
// CHECK-LABEL: graph @negative
// CHECK: Conv(%xa, %w3) {pads = [1, 1, 1, 1]} loc("st_a")
// CHECK: Conv(%xb, %w3b) {pads = [1, 1, 1, 1], strides = [2, 2]} loc("st_b")
// CHECK: Conv(%xk, %w3i) {pads = [1, 1, 1, 1]} loc("cost_a")
// CHECK: Conv(%xl, %w3j) {pads = [1, 1, 1, 1]} loc("cost_b")
// CHECK: output
graph @negative {
  input %x : f32[1,4,8,8]
  input %x2 : f32[2,4,8,8]
  const %k0 : f32[4,1,1] = random<1>
  const %k1 : f32[4,1,1] = random<2>
  const %k2 : f32[4,1,1] = random<3>
  const %k3 : f32[4,1,1] = random<4>
  const %k4 : f32[4,1,1] = random<5>
  const %k5 : f32[4,1,1] = random<6>
  const %k6 : f32[4,1,1] = random<7>
  const %k7 : f32[4,1,1] = random<8>
  const %k8 : f32[4,1,1] = random<9>
  const %k9 : f32[4,1,1] = random<10>
  const %w3 : f32[4,4,3,3] = random<11>
  const %w3b : f32[4,4,3,3] = random<12>
  const %w1 : f32[6,4,1,1] = random<13>
  const %w3c : f32[4,4,3,3] = random<14>
  const %w3d : f32[4,4,3,3] = random<15>
  const %w3e : f32[4,4,3,3] = random<16>
  const %w3f : f32[4,4,3,3] = random<17>
  const %w3g : f32[4,4,3,3] = random<18>
  const %w3i : f32[4,4,3,3] = random<20>
  const %w3j : f32[4,4,3,3] = random<21>
  const %w3k : f32[4,4,3,3] = random<22>
  const %w3l : f32[4,4,3,3] = random<23>
  const %bias : f32[4] = random<24>
  const %res : f32[1,4,8,8] = random<25>
  %xa = Mul(%x, %k0) loc("in_a")
  %xb = Mul(%x, %k1) loc("in_b")
  %xc = Mul(%x, %k2) loc("in_c")
  %xd = Mul(%x, %k3) loc("in_d")
  %xe = Mul(%x, %k4) loc("in_e")
  %xf = Mul(%x, %k5) loc("in_f")
  %xg = Mul(%x, %k6) loc("in_g")
  %xh = Mul(%x, %k7) loc("in_h")
  %xk = Mul(%x, %k8) loc("in_k")
  %xl = Mul(%x, %k9) loc("in_l")
  %xm = Mul(%x2, %k0) loc("in_m")
  %xn = Mul(%x2, %k1) loc("in_n")
  %st_a = Conv(%xa, %w3) {pads = [1, 1, 1, 1]} loc("st_a")
  %st_b = Conv(%xb, %w3b) {pads = [1, 1, 1, 1], strides = [2, 2]} loc("st_b")
  %ws_a = Conv(%xc, %w3c) {pads = [1, 1, 1, 1], strides = [2, 2]} loc("ws_a")
  %ws_b = Conv(%xd, %w1) {strides = [2, 2]} loc("ws_b")
  %ep_a = Conv(%xe, %w3d) {pads = [1, 1, 1, 1]} loc("ep_a")
  %ep_b = Conv(%xf, %w3e) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("ep_b")
  %res_a = Conv(%xg, %w3f, %bias, %res) {pads = [1, 1, 1, 1]} loc("res_a")
  %bi_a = Conv(%xh, %w3g, %bias) {pads = [1, 1, 1, 1]} loc("bi_a")
  %cost_a = Conv(%xk, %w3i) {pads = [1, 1, 1, 1]} loc("cost_a")
  %cost_b = Conv(%xl, %w3j) {pads = [1, 1, 1, 1]} loc("cost_b")
  %b2_a = Conv(%xm, %w3k) {pads = [1, 1, 1, 1]} loc("b2_a")
  %b2_b = Conv(%xn, %w3l) {pads = [1, 1, 1, 1]} loc("b2_b")
  output %st_a, %st_b, %ws_a, %ws_b, %ep_a, %ep_b, %res_a, %bi_a, %cost_a, %cost_b, %b2_a, %b2_b
}
