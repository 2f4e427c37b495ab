// RUN: magneto-opt %s --passes=batch-merge-conv,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=batch-merge-conv --debug-only=batch-merge-conv 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG
// RUN: magneto-opt %s --passes=wide-merge,batch-merge-conv,dce --check-equivalence | FileCheck %s --check-prefix=PIPE
// RUN: magneto-opt %s --passes=wide-merge,batch-merge-conv,fuse-elementwise,dce,parallel-co-optimize --check-equivalence | FileCheck %s --check-prefix=FULL
// RUN: magneto-opt %s --passes=wide-merge,batch-merge-conv --device=h200 --debug-only=batch-merge-conv 2>&1 >/dev/null | FileCheck %s --check-prefix=H200

// A ResNeXt block written as its 34 paths (form (a) of the ResNeXt paper, cardinality past
// kMaxJointMembers = 32, so no joint kernel): every path is 1x1 (8 -> 2), 3x3 (2 -> 2, Relu),
// 1x1 (2 -> 8), and the paths are summed.
// Alone, batch-merge-conv leaves the 1x1s on the shared input to wide-merge, stacks the 3x3s' 34
// different inputs with one Concat into a grouped conv (group 34), and merges the last 1x1s into a
// second grouped conv that reads the first one's result directly (its inputs already are its
// slices, in order): no Concat there.
// LOG-NOT: Concat
// CHECK-LABEL: graph @resnext_paths
// LOG: [batch-merge-conv] reject a1 with a0: same input (wide-merge's case)
// LOG: [batch-merge-conv] #0 merge [b0, b1, b2,
// LOG-SAME: 34 Convs 2x2x3x3 (group 1) on different inputs -> one grouped Conv (group 34); batch {{[0-9.]+}} us (2 kernels) vs sequential {{[0-9.]+}} us, joint n/a
// LOG: [batch-merge-conv] #1 merge [c0, c1, c2,
// LOG-SAME: batch {{[0-9.]+}} us (1 kernel, inputs already stacked)
// CHECK: %b0_batch_stack : f32[1,68,6,6] = Concat(%a0, %a1,
// CHECK: parallel #0 "batch" "34 Convs 2x2x3x3 (group 1) on different inputs -> one grouped Conv (group 34);
// CHECK-NEXT: %b0_batch : f32[1,68,6,6] = Conv(%b0_batch_stack, %b0_batch_w, %b0_batch_b) {group = 34, mg_act = "Relu", pads = [1, 1, 1, 1]}
// CHECK-NEXT: }
// CHECK: parallel #1 "batch" "34 Convs 8x2x1x1 (group 1) on different inputs -> one grouped Conv (group 34); {{.*}}; their Sum -> one ReduceSum"
// CHECK-NEXT: %c0_batch : f32[1,272,6,6] = Conv(%b0_batch, %c0_batch_w) {group = 34} loc("c0_batch")
// The last 1x1s' results are read only by the Sum: it becomes one ReduceSum over the grouped
// result seen as [1, 34, 8, 6, 6] (no slices at all). The 3x3s' slices of %b0_batch lost their
// last reader to the second merge: dce removed them.
// CHECK-NEXT: }
// CHECK-NEXT: %c0_batch_paths : f32[1,34,8,6,6] = Reshape(%c0_batch, %c0_batch_paths_shape)
// CHECK-NEXT: %s{{[_0-9]*}} : f32[1,8,6,6] = ReduceSum(%c0_batch_paths) {axes = [1], keepdims = 0} loc("join")
// CHECK-NOT: MgChannelSlice
// CHECK: output
// With wide-merge first, the 1x1s become one conv (8 -> 68) whose slices are the 3x3s' inputs in
// order: the whole block is two grouped convs and a wide one (ResNeXt's form (c)), no Concat.
// PIPE-LABEL: graph @resnext_paths
// PIPE-NOT: Concat
// PIPE: parallel #0 "wide"
// PIPE: parallel #1 "batch" "34 Convs 2x2x3x3 (group 1) on different inputs -> one grouped Conv (group 34); batch {{[0-9.]+}} us (1 kernel, inputs already stacked)
// PIPE-NEXT: Conv(%a0_wide, %b0_batch_w, %b0_batch_b) {{.*}}group = 34
// PIPE: parallel #2 "batch"
// PIPE-NEXT: Conv(%b0_batch, %c0_batch_w) {{.*}}group = 34
// PIPE-NOT: Concat
// PIPE: output
// On the H200 profile too (34 launches, or 34 joint members past the limit, against one).
// H200: [batch-merge-conv] #1 merge [b0, {{.*}} batch {{[0-9.]+}} us (1 kernel, inputs already stacked) vs sequential {{[0-9.]+}} us, joint n/a
// H200: [batch-merge-conv] #2 merge [c0, {{.*}} batch {{[0-9.]+}} us (1 kernel, inputs already stacked) vs sequential {{[0-9.]+}} us, joint n/a
// The rest of the parallel pipeline leaves the batch groups alone.
// FULL: parallel #1 "batch"
// FULL: parallel #2 "batch"
graph @resnext_paths {
  input %x : f32[1,8,6,6]
  const %wa0 : f32[2,8,1,1] = random<100>
  const %wb0 : f32[2,2,3,3] = random<200>
  const %bb0 : f32[2] = random<300>
  const %wc0 : f32[8,2,1,1] = random<400>
  const %wa1 : f32[2,8,1,1] = random<101>
  const %wb1 : f32[2,2,3,3] = random<201>
  const %bb1 : f32[2] = random<301>
  const %wc1 : f32[8,2,1,1] = random<401>
  const %wa2 : f32[2,8,1,1] = random<102>
  const %wb2 : f32[2,2,3,3] = random<202>
  const %bb2 : f32[2] = random<302>
  const %wc2 : f32[8,2,1,1] = random<402>
  const %wa3 : f32[2,8,1,1] = random<103>
  const %wb3 : f32[2,2,3,3] = random<203>
  const %bb3 : f32[2] = random<303>
  const %wc3 : f32[8,2,1,1] = random<403>
  const %wa4 : f32[2,8,1,1] = random<104>
  const %wb4 : f32[2,2,3,3] = random<204>
  const %bb4 : f32[2] = random<304>
  const %wc4 : f32[8,2,1,1] = random<404>
  const %wa5 : f32[2,8,1,1] = random<105>
  const %wb5 : f32[2,2,3,3] = random<205>
  const %bb5 : f32[2] = random<305>
  const %wc5 : f32[8,2,1,1] = random<405>
  const %wa6 : f32[2,8,1,1] = random<106>
  const %wb6 : f32[2,2,3,3] = random<206>
  const %bb6 : f32[2] = random<306>
  const %wc6 : f32[8,2,1,1] = random<406>
  const %wa7 : f32[2,8,1,1] = random<107>
  const %wb7 : f32[2,2,3,3] = random<207>
  const %bb7 : f32[2] = random<307>
  const %wc7 : f32[8,2,1,1] = random<407>
  const %wa8 : f32[2,8,1,1] = random<108>
  const %wb8 : f32[2,2,3,3] = random<208>
  const %bb8 : f32[2] = random<308>
  const %wc8 : f32[8,2,1,1] = random<408>
  const %wa9 : f32[2,8,1,1] = random<109>
  const %wb9 : f32[2,2,3,3] = random<209>
  const %bb9 : f32[2] = random<309>
  const %wc9 : f32[8,2,1,1] = random<409>
  const %wa10 : f32[2,8,1,1] = random<110>
  const %wb10 : f32[2,2,3,3] = random<210>
  const %bb10 : f32[2] = random<310>
  const %wc10 : f32[8,2,1,1] = random<410>
  const %wa11 : f32[2,8,1,1] = random<111>
  const %wb11 : f32[2,2,3,3] = random<211>
  const %bb11 : f32[2] = random<311>
  const %wc11 : f32[8,2,1,1] = random<411>
  const %wa12 : f32[2,8,1,1] = random<112>
  const %wb12 : f32[2,2,3,3] = random<212>
  const %bb12 : f32[2] = random<312>
  const %wc12 : f32[8,2,1,1] = random<412>
  const %wa13 : f32[2,8,1,1] = random<113>
  const %wb13 : f32[2,2,3,3] = random<213>
  const %bb13 : f32[2] = random<313>
  const %wc13 : f32[8,2,1,1] = random<413>
  const %wa14 : f32[2,8,1,1] = random<114>
  const %wb14 : f32[2,2,3,3] = random<214>
  const %bb14 : f32[2] = random<314>
  const %wc14 : f32[8,2,1,1] = random<414>
  const %wa15 : f32[2,8,1,1] = random<115>
  const %wb15 : f32[2,2,3,3] = random<215>
  const %bb15 : f32[2] = random<315>
  const %wc15 : f32[8,2,1,1] = random<415>
  const %wa16 : f32[2,8,1,1] = random<116>
  const %wb16 : f32[2,2,3,3] = random<216>
  const %bb16 : f32[2] = random<316>
  const %wc16 : f32[8,2,1,1] = random<416>
  const %wa17 : f32[2,8,1,1] = random<117>
  const %wb17 : f32[2,2,3,3] = random<217>
  const %bb17 : f32[2] = random<317>
  const %wc17 : f32[8,2,1,1] = random<417>
  const %wa18 : f32[2,8,1,1] = random<118>
  const %wb18 : f32[2,2,3,3] = random<218>
  const %bb18 : f32[2] = random<318>
  const %wc18 : f32[8,2,1,1] = random<418>
  const %wa19 : f32[2,8,1,1] = random<119>
  const %wb19 : f32[2,2,3,3] = random<219>
  const %bb19 : f32[2] = random<319>
  const %wc19 : f32[8,2,1,1] = random<419>
  const %wa20 : f32[2,8,1,1] = random<120>
  const %wb20 : f32[2,2,3,3] = random<220>
  const %bb20 : f32[2] = random<320>
  const %wc20 : f32[8,2,1,1] = random<420>
  const %wa21 : f32[2,8,1,1] = random<121>
  const %wb21 : f32[2,2,3,3] = random<221>
  const %bb21 : f32[2] = random<321>
  const %wc21 : f32[8,2,1,1] = random<421>
  const %wa22 : f32[2,8,1,1] = random<122>
  const %wb22 : f32[2,2,3,3] = random<222>
  const %bb22 : f32[2] = random<322>
  const %wc22 : f32[8,2,1,1] = random<422>
  const %wa23 : f32[2,8,1,1] = random<123>
  const %wb23 : f32[2,2,3,3] = random<223>
  const %bb23 : f32[2] = random<323>
  const %wc23 : f32[8,2,1,1] = random<423>
  const %wa24 : f32[2,8,1,1] = random<124>
  const %wb24 : f32[2,2,3,3] = random<224>
  const %bb24 : f32[2] = random<324>
  const %wc24 : f32[8,2,1,1] = random<424>
  const %wa25 : f32[2,8,1,1] = random<125>
  const %wb25 : f32[2,2,3,3] = random<225>
  const %bb25 : f32[2] = random<325>
  const %wc25 : f32[8,2,1,1] = random<425>
  const %wa26 : f32[2,8,1,1] = random<126>
  const %wb26 : f32[2,2,3,3] = random<226>
  const %bb26 : f32[2] = random<326>
  const %wc26 : f32[8,2,1,1] = random<426>
  const %wa27 : f32[2,8,1,1] = random<127>
  const %wb27 : f32[2,2,3,3] = random<227>
  const %bb27 : f32[2] = random<327>
  const %wc27 : f32[8,2,1,1] = random<427>
  const %wa28 : f32[2,8,1,1] = random<128>
  const %wb28 : f32[2,2,3,3] = random<228>
  const %bb28 : f32[2] = random<328>
  const %wc28 : f32[8,2,1,1] = random<428>
  const %wa29 : f32[2,8,1,1] = random<129>
  const %wb29 : f32[2,2,3,3] = random<229>
  const %bb29 : f32[2] = random<329>
  const %wc29 : f32[8,2,1,1] = random<429>
  const %wa30 : f32[2,8,1,1] = random<130>
  const %wb30 : f32[2,2,3,3] = random<230>
  const %bb30 : f32[2] = random<330>
  const %wc30 : f32[8,2,1,1] = random<430>
  const %wa31 : f32[2,8,1,1] = random<131>
  const %wb31 : f32[2,2,3,3] = random<231>
  const %bb31 : f32[2] = random<331>
  const %wc31 : f32[8,2,1,1] = random<431>
  const %wa32 : f32[2,8,1,1] = random<132>
  const %wb32 : f32[2,2,3,3] = random<232>
  const %bb32 : f32[2] = random<332>
  const %wc32 : f32[8,2,1,1] = random<432>
  const %wa33 : f32[2,8,1,1] = random<133>
  const %wb33 : f32[2,2,3,3] = random<233>
  const %bb33 : f32[2] = random<333>
  const %wc33 : f32[8,2,1,1] = random<433>
  %a0 = Conv(%x, %wa0) loc("a0")
  %b0 = Conv(%a0, %wb0, %bb0) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b0")
  %c0 = Conv(%b0, %wc0) loc("c0")
  %a1 = Conv(%x, %wa1) loc("a1")
  %b1 = Conv(%a1, %wb1, %bb1) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b1")
  %c1 = Conv(%b1, %wc1) loc("c1")
  %a2 = Conv(%x, %wa2) loc("a2")
  %b2 = Conv(%a2, %wb2, %bb2) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b2")
  %c2 = Conv(%b2, %wc2) loc("c2")
  %a3 = Conv(%x, %wa3) loc("a3")
  %b3 = Conv(%a3, %wb3, %bb3) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b3")
  %c3 = Conv(%b3, %wc3) loc("c3")
  %a4 = Conv(%x, %wa4) loc("a4")
  %b4 = Conv(%a4, %wb4, %bb4) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b4")
  %c4 = Conv(%b4, %wc4) loc("c4")
  %a5 = Conv(%x, %wa5) loc("a5")
  %b5 = Conv(%a5, %wb5, %bb5) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b5")
  %c5 = Conv(%b5, %wc5) loc("c5")
  %a6 = Conv(%x, %wa6) loc("a6")
  %b6 = Conv(%a6, %wb6, %bb6) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b6")
  %c6 = Conv(%b6, %wc6) loc("c6")
  %a7 = Conv(%x, %wa7) loc("a7")
  %b7 = Conv(%a7, %wb7, %bb7) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b7")
  %c7 = Conv(%b7, %wc7) loc("c7")
  %a8 = Conv(%x, %wa8) loc("a8")
  %b8 = Conv(%a8, %wb8, %bb8) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b8")
  %c8 = Conv(%b8, %wc8) loc("c8")
  %a9 = Conv(%x, %wa9) loc("a9")
  %b9 = Conv(%a9, %wb9, %bb9) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b9")
  %c9 = Conv(%b9, %wc9) loc("c9")
  %a10 = Conv(%x, %wa10) loc("a10")
  %b10 = Conv(%a10, %wb10, %bb10) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b10")
  %c10 = Conv(%b10, %wc10) loc("c10")
  %a11 = Conv(%x, %wa11) loc("a11")
  %b11 = Conv(%a11, %wb11, %bb11) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b11")
  %c11 = Conv(%b11, %wc11) loc("c11")
  %a12 = Conv(%x, %wa12) loc("a12")
  %b12 = Conv(%a12, %wb12, %bb12) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b12")
  %c12 = Conv(%b12, %wc12) loc("c12")
  %a13 = Conv(%x, %wa13) loc("a13")
  %b13 = Conv(%a13, %wb13, %bb13) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b13")
  %c13 = Conv(%b13, %wc13) loc("c13")
  %a14 = Conv(%x, %wa14) loc("a14")
  %b14 = Conv(%a14, %wb14, %bb14) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b14")
  %c14 = Conv(%b14, %wc14) loc("c14")
  %a15 = Conv(%x, %wa15) loc("a15")
  %b15 = Conv(%a15, %wb15, %bb15) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b15")
  %c15 = Conv(%b15, %wc15) loc("c15")
  %a16 = Conv(%x, %wa16) loc("a16")
  %b16 = Conv(%a16, %wb16, %bb16) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b16")
  %c16 = Conv(%b16, %wc16) loc("c16")
  %a17 = Conv(%x, %wa17) loc("a17")
  %b17 = Conv(%a17, %wb17, %bb17) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b17")
  %c17 = Conv(%b17, %wc17) loc("c17")
  %a18 = Conv(%x, %wa18) loc("a18")
  %b18 = Conv(%a18, %wb18, %bb18) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b18")
  %c18 = Conv(%b18, %wc18) loc("c18")
  %a19 = Conv(%x, %wa19) loc("a19")
  %b19 = Conv(%a19, %wb19, %bb19) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b19")
  %c19 = Conv(%b19, %wc19) loc("c19")
  %a20 = Conv(%x, %wa20) loc("a20")
  %b20 = Conv(%a20, %wb20, %bb20) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b20")
  %c20 = Conv(%b20, %wc20) loc("c20")
  %a21 = Conv(%x, %wa21) loc("a21")
  %b21 = Conv(%a21, %wb21, %bb21) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b21")
  %c21 = Conv(%b21, %wc21) loc("c21")
  %a22 = Conv(%x, %wa22) loc("a22")
  %b22 = Conv(%a22, %wb22, %bb22) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b22")
  %c22 = Conv(%b22, %wc22) loc("c22")
  %a23 = Conv(%x, %wa23) loc("a23")
  %b23 = Conv(%a23, %wb23, %bb23) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b23")
  %c23 = Conv(%b23, %wc23) loc("c23")
  %a24 = Conv(%x, %wa24) loc("a24")
  %b24 = Conv(%a24, %wb24, %bb24) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b24")
  %c24 = Conv(%b24, %wc24) loc("c24")
  %a25 = Conv(%x, %wa25) loc("a25")
  %b25 = Conv(%a25, %wb25, %bb25) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b25")
  %c25 = Conv(%b25, %wc25) loc("c25")
  %a26 = Conv(%x, %wa26) loc("a26")
  %b26 = Conv(%a26, %wb26, %bb26) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b26")
  %c26 = Conv(%b26, %wc26) loc("c26")
  %a27 = Conv(%x, %wa27) loc("a27")
  %b27 = Conv(%a27, %wb27, %bb27) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b27")
  %c27 = Conv(%b27, %wc27) loc("c27")
  %a28 = Conv(%x, %wa28) loc("a28")
  %b28 = Conv(%a28, %wb28, %bb28) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b28")
  %c28 = Conv(%b28, %wc28) loc("c28")
  %a29 = Conv(%x, %wa29) loc("a29")
  %b29 = Conv(%a29, %wb29, %bb29) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b29")
  %c29 = Conv(%b29, %wc29) loc("c29")
  %a30 = Conv(%x, %wa30) loc("a30")
  %b30 = Conv(%a30, %wb30, %bb30) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b30")
  %c30 = Conv(%b30, %wc30) loc("c30")
  %a31 = Conv(%x, %wa31) loc("a31")
  %b31 = Conv(%a31, %wb31, %bb31) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b31")
  %c31 = Conv(%b31, %wc31) loc("c31")
  %a32 = Conv(%x, %wa32) loc("a32")
  %b32 = Conv(%a32, %wb32, %bb32) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b32")
  %c32 = Conv(%b32, %wc32) loc("c32")
  %a33 = Conv(%x, %wa33) loc("a33")
  %b33 = Conv(%a33, %wb33, %bb33) {mg_act = "Relu", pads = [1, 1, 1, 1]} loc("b33")
  %c33 = Conv(%b33, %wc33) loc("c33")
  %s = Sum(%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16, %c17, %c18, %c19, %c20, %c21, %c22, %c23, %c24, %c25, %c26, %c27, %c28, %c29, %c30, %c31, %c32, %c33) loc("join")
  output %s
}
