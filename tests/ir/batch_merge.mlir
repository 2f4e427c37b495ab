// RUN: magneto-opt %s --passes=batch-merge,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=batch-merge --debug-only=batch-merge 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: magneto-opt %s --passes=batch-merge,fuse-elementwise,dce,parallel-co-optimize --check-equivalence | FileCheck %s --check-prefix=PIPE

// Case 1: 34 two-layer expert towers, each fed by its own routed copy of %x (different inputs),
// past kMaxJointMembers (32), so no joint kernel: on the host profile one batched MatMul beats
// 34 sequential regions. Layer 1 (Gemm, transB, bias, Relu) -> Concat of the inputs, MatMul over
// stacked transposed weights, MgElementwise for bias+Relu; layer 2 (MatMul, Tanh epilogue) reads
// layer 1's batched result directly (its inputs already are the slices, in order): no Concat.
// CHECK-LABEL: graph @experts
// CHECK: Concat(%fc1_0_batch_in0, %fc1_0_batch_in1,
// CHECK: parallel #0 "batch" "34 Gemms of 4x16x32 on different inputs -> one MatMul batched 34; batch {{[0-9.]+}} us (3 kernels) vs sequential {{[0-9.]+}} us, joint n/a
// CHECK-NEXT: %fc1_0_batch : f32[1,34,4,32] = MatMul(%fc1_0_batch_stack, %fc1_0_batch_w)
// CHECK-NEXT: }
// CHECK-NEXT: %fc1_0_batch_epilogue : f32[1,34,4,32] = MgElementwise(%fc1_0_batch, %fc1_0_batch_b) {program = ["Add i0 i1", "Relu t0"]}
// CHECK-NEXT: parallel #1 "batch" "34 MatMuls of 4x32x8 on different inputs -> one MatMul batched 34; batch {{[0-9.]+}} us (1 kernel, inputs already stacked)
// CHECK-NEXT: %fc2_0_batch : f32[1,34,4,8] = MatMul(%fc1_0_batch_epilogue, %fc2_0_batch_w) {mg_act = "Tanh"}
// CHECK-NEXT: }
// CHECK-NEXT: %fc2_0_batch_slice0 : f32[1,1,4,8] = MgChannelSlice(%fc2_0_batch) {begin = 0, end = 1}
// CHECK-NEXT: %{{[a-z_0-9]+}} : f32[4,8] = Reshape(%fc2_0_batch_slice0, %{{[a-z_0-9]+}}) loc("fc2_0")
// CHECK: MgChannelSlice(%fc2_0_batch) {begin = 33, end = 34}
// CHECK-NOT: Gemm(
// CHECK-NOT: = MatMul(
// CHECK: output
// LOG: [batch-merge] #0 merge [fc1_0, fc1_1,
// LOG: [batch-merge] #1 merge [fc2_0, fc2_1,
// The rest of the parallel pipeline leaves the batch groups alone (marked nodes are skipped).
// PIPE: parallel #0 "batch"
// PIPE: parallel #1 "batch"
graph @experts {
  input %x : f32[4,16]
  const %s0 : f32[1] = random<1000>
  const %w0 : f32[32,16] = random<1>
  const %b0 : f32[32] = random<100>
  const %v0 : f32[32,8] = random<200>
  const %s1 : f32[1] = random<1001>
  const %w1 : f32[32,16] = random<2>
  const %b1 : f32[32] = random<101>
  const %v1 : f32[32,8] = random<201>
  const %s2 : f32[1] = random<1002>
  const %w2 : f32[32,16] = random<3>
  const %b2 : f32[32] = random<102>
  const %v2 : f32[32,8] = random<202>
  const %s3 : f32[1] = random<1003>
  const %w3 : f32[32,16] = random<4>
  const %b3 : f32[32] = random<103>
  const %v3 : f32[32,8] = random<203>
  const %s4 : f32[1] = random<1004>
  const %w4 : f32[32,16] = random<5>
  const %b4 : f32[32] = random<104>
  const %v4 : f32[32,8] = random<204>
  const %s5 : f32[1] = random<1005>
  const %w5 : f32[32,16] = random<6>
  const %b5 : f32[32] = random<105>
  const %v5 : f32[32,8] = random<205>
  const %s6 : f32[1] = random<1006>
  const %w6 : f32[32,16] = random<7>
  const %b6 : f32[32] = random<106>
  const %v6 : f32[32,8] = random<206>
  const %s7 : f32[1] = random<1007>
  const %w7 : f32[32,16] = random<8>
  const %b7 : f32[32] = random<107>
  const %v7 : f32[32,8] = random<207>
  const %s8 : f32[1] = random<1008>
  const %w8 : f32[32,16] = random<9>
  const %b8 : f32[32] = random<108>
  const %v8 : f32[32,8] = random<208>
  const %s9 : f32[1] = random<1009>
  const %w9 : f32[32,16] = random<10>
  const %b9 : f32[32] = random<109>
  const %v9 : f32[32,8] = random<209>
  const %s10 : f32[1] = random<1010>
  const %w10 : f32[32,16] = random<11>
  const %b10 : f32[32] = random<110>
  const %v10 : f32[32,8] = random<210>
  const %s11 : f32[1] = random<1011>
  const %w11 : f32[32,16] = random<12>
  const %b11 : f32[32] = random<111>
  const %v11 : f32[32,8] = random<211>
  const %s12 : f32[1] = random<1012>
  const %w12 : f32[32,16] = random<13>
  const %b12 : f32[32] = random<112>
  const %v12 : f32[32,8] = random<212>
  const %s13 : f32[1] = random<1013>
  const %w13 : f32[32,16] = random<14>
  const %b13 : f32[32] = random<113>
  const %v13 : f32[32,8] = random<213>
  const %s14 : f32[1] = random<1014>
  const %w14 : f32[32,16] = random<15>
  const %b14 : f32[32] = random<114>
  const %v14 : f32[32,8] = random<214>
  const %s15 : f32[1] = random<1015>
  const %w15 : f32[32,16] = random<16>
  const %b15 : f32[32] = random<115>
  const %v15 : f32[32,8] = random<215>
  const %s16 : f32[1] = random<1016>
  const %w16 : f32[32,16] = random<17>
  const %b16 : f32[32] = random<116>
  const %v16 : f32[32,8] = random<216>
  const %s17 : f32[1] = random<1017>
  const %w17 : f32[32,16] = random<18>
  const %b17 : f32[32] = random<117>
  const %v17 : f32[32,8] = random<217>
  const %s18 : f32[1] = random<1018>
  const %w18 : f32[32,16] = random<19>
  const %b18 : f32[32] = random<118>
  const %v18 : f32[32,8] = random<218>
  const %s19 : f32[1] = random<1019>
  const %w19 : f32[32,16] = random<20>
  const %b19 : f32[32] = random<119>
  const %v19 : f32[32,8] = random<219>
  const %s20 : f32[1] = random<1020>
  const %w20 : f32[32,16] = random<21>
  const %b20 : f32[32] = random<120>
  const %v20 : f32[32,8] = random<220>
  const %s21 : f32[1] = random<1021>
  const %w21 : f32[32,16] = random<22>
  const %b21 : f32[32] = random<121>
  const %v21 : f32[32,8] = random<221>
  const %s22 : f32[1] = random<1022>
  const %w22 : f32[32,16] = random<23>
  const %b22 : f32[32] = random<122>
  const %v22 : f32[32,8] = random<222>
  const %s23 : f32[1] = random<1023>
  const %w23 : f32[32,16] = random<24>
  const %b23 : f32[32] = random<123>
  const %v23 : f32[32,8] = random<223>
  const %s24 : f32[1] = random<1024>
  const %w24 : f32[32,16] = random<25>
  const %b24 : f32[32] = random<124>
  const %v24 : f32[32,8] = random<224>
  const %s25 : f32[1] = random<1025>
  const %w25 : f32[32,16] = random<26>
  const %b25 : f32[32] = random<125>
  const %v25 : f32[32,8] = random<225>
  const %s26 : f32[1] = random<1026>
  const %w26 : f32[32,16] = random<27>
  const %b26 : f32[32] = random<126>
  const %v26 : f32[32,8] = random<226>
  const %s27 : f32[1] = random<1027>
  const %w27 : f32[32,16] = random<28>
  const %b27 : f32[32] = random<127>
  const %v27 : f32[32,8] = random<227>
  const %s28 : f32[1] = random<1028>
  const %w28 : f32[32,16] = random<29>
  const %b28 : f32[32] = random<128>
  const %v28 : f32[32,8] = random<228>
  const %s29 : f32[1] = random<1029>
  const %w29 : f32[32,16] = random<30>
  const %b29 : f32[32] = random<129>
  const %v29 : f32[32,8] = random<229>
  const %s30 : f32[1] = random<1030>
  const %w30 : f32[32,16] = random<31>
  const %b30 : f32[32] = random<130>
  const %v30 : f32[32,8] = random<230>
  const %s31 : f32[1] = random<1031>
  const %w31 : f32[32,16] = random<32>
  const %b31 : f32[32] = random<131>
  const %v31 : f32[32,8] = random<231>
  const %s32 : f32[1] = random<1032>
  const %w32 : f32[32,16] = random<33>
  const %b32 : f32[32] = random<132>
  const %v32 : f32[32,8] = random<232>
  const %s33 : f32[1] = random<1033>
  const %w33 : f32[32,16] = random<34>
  const %b33 : f32[32] = random<133>
  const %v33 : f32[32,8] = random<233>
  %x0 = Mul(%x, %s0) loc("route0")
  %h0 = Gemm(%x0, %w0, %b0) {mg_act = "Relu", transB = 1} loc("fc1_0")
  %y0 = MatMul(%h0, %v0) {mg_act = "Tanh"} loc("fc2_0")
  %x1 = Mul(%x, %s1) loc("route1")
  %h1 = Gemm(%x1, %w1, %b1) {mg_act = "Relu", transB = 1} loc("fc1_1")
  %y1 = MatMul(%h1, %v1) {mg_act = "Tanh"} loc("fc2_1")
  %x2 = Mul(%x, %s2) loc("route2")
  %h2 = Gemm(%x2, %w2, %b2) {mg_act = "Relu", transB = 1} loc("fc1_2")
  %y2 = MatMul(%h2, %v2) {mg_act = "Tanh"} loc("fc2_2")
  %x3 = Mul(%x, %s3) loc("route3")
  %h3 = Gemm(%x3, %w3, %b3) {mg_act = "Relu", transB = 1} loc("fc1_3")
  %y3 = MatMul(%h3, %v3) {mg_act = "Tanh"} loc("fc2_3")
  %x4 = Mul(%x, %s4) loc("route4")
  %h4 = Gemm(%x4, %w4, %b4) {mg_act = "Relu", transB = 1} loc("fc1_4")
  %y4 = MatMul(%h4, %v4) {mg_act = "Tanh"} loc("fc2_4")
  %x5 = Mul(%x, %s5) loc("route5")
  %h5 = Gemm(%x5, %w5, %b5) {mg_act = "Relu", transB = 1} loc("fc1_5")
  %y5 = MatMul(%h5, %v5) {mg_act = "Tanh"} loc("fc2_5")
  %x6 = Mul(%x, %s6) loc("route6")
  %h6 = Gemm(%x6, %w6, %b6) {mg_act = "Relu", transB = 1} loc("fc1_6")
  %y6 = MatMul(%h6, %v6) {mg_act = "Tanh"} loc("fc2_6")
  %x7 = Mul(%x, %s7) loc("route7")
  %h7 = Gemm(%x7, %w7, %b7) {mg_act = "Relu", transB = 1} loc("fc1_7")
  %y7 = MatMul(%h7, %v7) {mg_act = "Tanh"} loc("fc2_7")
  %x8 = Mul(%x, %s8) loc("route8")
  %h8 = Gemm(%x8, %w8, %b8) {mg_act = "Relu", transB = 1} loc("fc1_8")
  %y8 = MatMul(%h8, %v8) {mg_act = "Tanh"} loc("fc2_8")
  %x9 = Mul(%x, %s9) loc("route9")
  %h9 = Gemm(%x9, %w9, %b9) {mg_act = "Relu", transB = 1} loc("fc1_9")
  %y9 = MatMul(%h9, %v9) {mg_act = "Tanh"} loc("fc2_9")
  %x10 = Mul(%x, %s10) loc("route10")
  %h10 = Gemm(%x10, %w10, %b10) {mg_act = "Relu", transB = 1} loc("fc1_10")
  %y10 = MatMul(%h10, %v10) {mg_act = "Tanh"} loc("fc2_10")
  %x11 = Mul(%x, %s11) loc("route11")
  %h11 = Gemm(%x11, %w11, %b11) {mg_act = "Relu", transB = 1} loc("fc1_11")
  %y11 = MatMul(%h11, %v11) {mg_act = "Tanh"} loc("fc2_11")
  %x12 = Mul(%x, %s12) loc("route12")
  %h12 = Gemm(%x12, %w12, %b12) {mg_act = "Relu", transB = 1} loc("fc1_12")
  %y12 = MatMul(%h12, %v12) {mg_act = "Tanh"} loc("fc2_12")
  %x13 = Mul(%x, %s13) loc("route13")
  %h13 = Gemm(%x13, %w13, %b13) {mg_act = "Relu", transB = 1} loc("fc1_13")
  %y13 = MatMul(%h13, %v13) {mg_act = "Tanh"} loc("fc2_13")
  %x14 = Mul(%x, %s14) loc("route14")
  %h14 = Gemm(%x14, %w14, %b14) {mg_act = "Relu", transB = 1} loc("fc1_14")
  %y14 = MatMul(%h14, %v14) {mg_act = "Tanh"} loc("fc2_14")
  %x15 = Mul(%x, %s15) loc("route15")
  %h15 = Gemm(%x15, %w15, %b15) {mg_act = "Relu", transB = 1} loc("fc1_15")
  %y15 = MatMul(%h15, %v15) {mg_act = "Tanh"} loc("fc2_15")
  %x16 = Mul(%x, %s16) loc("route16")
  %h16 = Gemm(%x16, %w16, %b16) {mg_act = "Relu", transB = 1} loc("fc1_16")
  %y16 = MatMul(%h16, %v16) {mg_act = "Tanh"} loc("fc2_16")
  %x17 = Mul(%x, %s17) loc("route17")
  %h17 = Gemm(%x17, %w17, %b17) {mg_act = "Relu", transB = 1} loc("fc1_17")
  %y17 = MatMul(%h17, %v17) {mg_act = "Tanh"} loc("fc2_17")
  %x18 = Mul(%x, %s18) loc("route18")
  %h18 = Gemm(%x18, %w18, %b18) {mg_act = "Relu", transB = 1} loc("fc1_18")
  %y18 = MatMul(%h18, %v18) {mg_act = "Tanh"} loc("fc2_18")
  %x19 = Mul(%x, %s19) loc("route19")
  %h19 = Gemm(%x19, %w19, %b19) {mg_act = "Relu", transB = 1} loc("fc1_19")
  %y19 = MatMul(%h19, %v19) {mg_act = "Tanh"} loc("fc2_19")
  %x20 = Mul(%x, %s20) loc("route20")
  %h20 = Gemm(%x20, %w20, %b20) {mg_act = "Relu", transB = 1} loc("fc1_20")
  %y20 = MatMul(%h20, %v20) {mg_act = "Tanh"} loc("fc2_20")
  %x21 = Mul(%x, %s21) loc("route21")
  %h21 = Gemm(%x21, %w21, %b21) {mg_act = "Relu", transB = 1} loc("fc1_21")
  %y21 = MatMul(%h21, %v21) {mg_act = "Tanh"} loc("fc2_21")
  %x22 = Mul(%x, %s22) loc("route22")
  %h22 = Gemm(%x22, %w22, %b22) {mg_act = "Relu", transB = 1} loc("fc1_22")
  %y22 = MatMul(%h22, %v22) {mg_act = "Tanh"} loc("fc2_22")
  %x23 = Mul(%x, %s23) loc("route23")
  %h23 = Gemm(%x23, %w23, %b23) {mg_act = "Relu", transB = 1} loc("fc1_23")
  %y23 = MatMul(%h23, %v23) {mg_act = "Tanh"} loc("fc2_23")
  %x24 = Mul(%x, %s24) loc("route24")
  %h24 = Gemm(%x24, %w24, %b24) {mg_act = "Relu", transB = 1} loc("fc1_24")
  %y24 = MatMul(%h24, %v24) {mg_act = "Tanh"} loc("fc2_24")
  %x25 = Mul(%x, %s25) loc("route25")
  %h25 = Gemm(%x25, %w25, %b25) {mg_act = "Relu", transB = 1} loc("fc1_25")
  %y25 = MatMul(%h25, %v25) {mg_act = "Tanh"} loc("fc2_25")
  %x26 = Mul(%x, %s26) loc("route26")
  %h26 = Gemm(%x26, %w26, %b26) {mg_act = "Relu", transB = 1} loc("fc1_26")
  %y26 = MatMul(%h26, %v26) {mg_act = "Tanh"} loc("fc2_26")
  %x27 = Mul(%x, %s27) loc("route27")
  %h27 = Gemm(%x27, %w27, %b27) {mg_act = "Relu", transB = 1} loc("fc1_27")
  %y27 = MatMul(%h27, %v27) {mg_act = "Tanh"} loc("fc2_27")
  %x28 = Mul(%x, %s28) loc("route28")
  %h28 = Gemm(%x28, %w28, %b28) {mg_act = "Relu", transB = 1} loc("fc1_28")
  %y28 = MatMul(%h28, %v28) {mg_act = "Tanh"} loc("fc2_28")
  %x29 = Mul(%x, %s29) loc("route29")
  %h29 = Gemm(%x29, %w29, %b29) {mg_act = "Relu", transB = 1} loc("fc1_29")
  %y29 = MatMul(%h29, %v29) {mg_act = "Tanh"} loc("fc2_29")
  %x30 = Mul(%x, %s30) loc("route30")
  %h30 = Gemm(%x30, %w30, %b30) {mg_act = "Relu", transB = 1} loc("fc1_30")
  %y30 = MatMul(%h30, %v30) {mg_act = "Tanh"} loc("fc2_30")
  %x31 = Mul(%x, %s31) loc("route31")
  %h31 = Gemm(%x31, %w31, %b31) {mg_act = "Relu", transB = 1} loc("fc1_31")
  %y31 = MatMul(%h31, %v31) {mg_act = "Tanh"} loc("fc2_31")
  %x32 = Mul(%x, %s32) loc("route32")
  %h32 = Gemm(%x32, %w32, %b32) {mg_act = "Relu", transB = 1} loc("fc1_32")
  %y32 = MatMul(%h32, %v32) {mg_act = "Tanh"} loc("fc2_32")
  %x33 = Mul(%x, %s33) loc("route33")
  %h33 = Gemm(%x33, %w33, %b33) {mg_act = "Relu", transB = 1} loc("fc1_33")
  %y33 = MatMul(%h33, %v33) {mg_act = "Tanh"} loc("fc2_33")
  %s = Sum(%y0, %y1, %y2, %y3, %y4, %y5, %y6, %y7, %y8, %y9, %y10, %y11, %y12, %y13, %y14, %y15, %y16, %y17, %y18, %y19, %y20, %y21, %y22, %y23, %y24, %y25, %y26, %y27, %y28, %y29, %y30, %y31, %y32, %y33) loc("join")
  output %s
}
