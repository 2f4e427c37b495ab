// GPU lowering of the opset 18-21 operators (codegen/gpu/lower_opset*.cpp): which program each
// becomes, that a scatter is a copy launch then an update launch, that Resize's taps are tables
// baked into the program, that lower_opset gets only what the float32 lowerings refuse, and
// that what the kernels do not cover stops the compile with kUnsupported naming the node, and that
// QuantizeLinear / DequantizeLinear read their per-axis parameters along the axis. The
// numerics are checked by kernels.{Scatter,GroupNorm,Window,Resize}Kernel.* and TypedHelpers.*
// (the programs) and end to end by tests/opset/run_opset_tests.sh --target cuda --emulate.
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

TEST(GpuOpsetLowering, ScatterIsACopyThenTheUpdatesInAnotherLaunch) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[4,3,2]
  input %i : i64[5,1]
  input %u : f32[5,3,2]
  %y = ScatterND(%x, %i, %u) {reduction = "mul"}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "2");
  const std::string& k = vars->at("KERNELS");
  EXPECT_LT(k.find("mgk::mapBlock<"), k.find("mgk::scatterNDBlock<float, 256>"));
  EXPECT_TRUE(testing::contains(k, "phase 2 of 2")) << k;
  const std::string& init = vars->at("INIT_PARAMS");
  // 5 tuples of one index, a slice of 3*2 elements, reduction mul (2), int64 indices.
  EXPECT_TRUE(testing::contains(init, "p.tuples = 5; p.slice = 6; p.last = 1; p.rank = 3;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.reduction = 2; p.indexBytes = 8;")) << init;
}

TEST(GpuOpsetLowering, ScatterElementsThreadPerIndexLine) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : i64[2,2,3]
  input %i : i32[2,2,2]
  input %u : i64[2,2,2]
  %y = ScatterElements(%x, %i, %u) {axis = -2, reduction = "max"}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_TRUE(testing::contains(vars->at("KERNELS"), "mgk::scatterElementsBlock<int64_t, 256>"));
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.lines = 4; p.rank = 3; p.axis = 1;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.reduction = 3; p.indexBytes = 4;")) << init;
}

TEST(GpuOpsetLowering, ResizeTapsAreTablesOfTheCpuPlanner) {
  // Linear, half_pixel, 2 -> 4 along the last axis: output x maps to (x + 0.5) / 2 - 0.5, i.e.
  // -0.25, 0.25, 0.75, 1.25, whose taps clamp to the border.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,1,2,2]
  const %s : f32[4] = dense<[1, 1, 1, 2]>
  %y = Resize(%x, _, %s) {mode = "linear"}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "mgk::resizeElement<float, 4, false>")) << f;
  EXPECT_TRUE(testing::contains(f, "__device__ const int32_t F0_0_first3[] = {0, 2, 4, 6, 8};")) << f;
  EXPECT_TRUE(testing::contains(f, "__device__ const int64_t F0_0_offset3[] = {0, 0, 0, 1, 0, 1, 1, 1};")) << f;
  EXPECT_TRUE(testing::contains(f, "__device__ const double F0_0_weight3[] = {0.25, 0.75, 0.75, 0.25, 0.25, 0.75, 0.75, 0.25};")) << f;
  // The unchanged axes: one tap of weight 1 per coordinate.
  EXPECT_TRUE(testing::contains(f, "__device__ const double F0_0_weight2[] = {1, 1};")) << f;
}

TEST(GpuOpsetLowering, ResizeNeedsConstantOperands) {
  // The taps are computed at compile time: a roi known only at run time cannot be lowered (the
  // output shape does not depend on it, so shape inference accepts it).
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,1,4,4]
  input %roi : f32[8]
  const %s : f32[4] = dense<[1, 1, 0.5, 0.5]>
  %y = Resize(%x, %roi, %s) {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"}
  output %y
})");
  ASSERT_FALSE(vars.ok());
  EXPECT_EQ(vars.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(vars.status().message(), "(Resize)")) << vars.status().message();
  EXPECT_TRUE(testing::contains(vars.status().message(), "computed roi")) << vars.status().message();
}

TEST(GpuOpsetLowering, ClaimsOnlyWhatTheFloatFamiliesRefuse) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[3,4]
  input %b : bool[3,4]
  input %d : f64[5]
  const %ax : i64[1] = dense<[1]>
  %m = ReduceMean(%x, %ax) {keepdims = 1}
  %n = ReduceL1(%x) {noop_with_empty_axes = 1}
  %any = ReduceMax(%b, %ax) {keepdims = 0}
  %mish = Mish(%d)
  %mf = Mish(%x)
  %h = Cast(%x) {to = 10}
  output %m, %n, %any, %mish, %mf, %h
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  const std::string& f = vars->at("FUNCTORS");
  const std::string& init = vars->at("INIT_PARAMS");
  // float32 reductions stay with reduceBlock, noop_with_empty_axes included (one element each).
  EXPECT_TRUE(testing::contains(k, "mgk::reduceBlock<")) << k;
  EXPECT_TRUE(testing::contains(init, "p.outN = 12; p.redN = 1;")) << init;
  EXPECT_TRUE(testing::contains(f, "mgk::reduceTyped<uint8_t, mgk::kRedMax>")) << f;  // bool: any
  // Both Mish forms call the activation table's formula (runtime/common/mg_acts.h).
  EXPECT_TRUE(testing::contains(f, "mgrt::acts::fn::Mish<double>(x, 0, 0)")) << f;      // f64: lower_opset
  EXPECT_TRUE(testing::contains(f, "mgrt::acts::fn::Mish<float>(a0, ")) << f;          // f32: lower_map
  EXPECT_TRUE(testing::contains(f, "mgk::convertTo<mgk::Half>(a0)")) << f;
}

TEST(GpuOpsetLowering, NormalizationAndWindowPrograms) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[2,6,3,3]
  input %s : f32[6]
  input %c : f32[1,12,8]
  const %img : i64[2] = dense<[5, 5]>
  const %blk : i64[2] = dense<[2, 6]>
  %g = GroupNormalization(%x, %s, %s) {num_groups = 3, epsilon = 0.01}
  %l = LpPool(%x) {kernel_shape = [2, 2], p = 3, ceil_mode = 1, strides = [2, 2]}
  %i = Col2Im(%c, %img, %blk) {pads = [0, 1, 0, 1]}
  output %g, %l, %i
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::groupNormBlock<float, 256>"));
  EXPECT_TRUE(testing::contains(k, "mgk::lpPoolBlock<float, 256>"));
  EXPECT_TRUE(testing::contains(k, "mgk::col2imBlock<float, 256>"));
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.rows = 6; p.groups = 3; p.per = 2; p.spatial = 9; p.perChannel = 1; p.epsilon = 0.0099999997764825821;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.NC = 12; p.p = 3;")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.g.out, {2, 2});")) << init;  // ceil_mode: 3x3 -> 2x2
  EXPECT_TRUE(testing::contains(init, "mgSet(p.g.out, {4, 2});")) << init;  // Col2Im's block positions
}

TEST(GpuOpsetLowering, QuantizeLinearPerAxisReadsParametersAlongTheAxis) {
  // x [2,3,4] quantized per slice of axis 1: x reads contiguously, scale and zero point move
  // only along axis 1; DequantizeLinear with one scale reads index 0 everywhere. Both call the
  // CPU's formulas (runtime/common/mg_quant.h), int8 saturating at -128 / 127.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[2,3,4]
  const %s : f32[3] = dense<[0.5, 1, 2]>
  const %z : i8[3] = dense<[-1, 0, 1]>
  const %t : f32[] = dense<[0.25]>
  %q = QuantizeLinear(%x, %s, %z)
  %y = DequantizeLinear(%q, %t)
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "static_cast<int8_t>(mgrt::quant::quantize(float(a0), a1, int32_t(a2), -128, 127))")) << f;
  EXPECT_TRUE(testing::contains(f, "mgrt::quant::dequantize(int32_t(a0), 0, a1)")) << f;
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[0], {12, 4, 1})")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[1], {0, 1, 0})")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[2], {0, 1, 0})")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[1], {0, 0, 0})")) << init;
}

TEST(GpuOpsetLowering, RefusesWhatTheKernelsDoNotCover) {
  auto f16 = testing::emitGpu(R"(graph @t {
  input %x : f16[1,1,2,2]
  const %s : f32[4] = dense<[1, 1, 2, 2]>
  %y = Resize(%x, _, %s) {mode = "linear"}
  output %y
})");
  ASSERT_FALSE(f16.ok());
  EXPECT_EQ(f16.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(f16.status().message(), "f16")) << f16.status().message();

  auto boolAdd = testing::emitGpu(R"(graph @t {
  input %x : bool[4]
  input %i : i64[2,1]
  input %u : bool[2]
  %y = ScatterND(%x, %i, %u) {reduction = "add"}
  output %y
})");
  ASSERT_FALSE(boolAdd.ok());
  EXPECT_EQ(boolAdd.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(boolAdd.status().message(), "(ScatterND)")) << boolAdd.status().message();

  // The integer quantization ops have no GPU lowering yet: refused, naming the node.
  auto qmm = testing::emitGpu(R"(graph @t {
  input %a : u8[2,3]
  const %b : u8[3,2] = dense<[1, 2, 3, 4, 5, 6]>
  const %s : f32[] = dense<[0.5]>
  const %z : u8[] = dense<[1]>
  %y = QLinearMatMul(%a, %s, %z, %b, %s, %z, %s, %z)
  output %y
})");
  ASSERT_FALSE(qmm.ok());
  EXPECT_EQ(qmm.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(qmm.status().message(), "(QLinearMatMul)")) << qmm.status().message();
}


// --precision fp16's half storage (passes/half_storage.cpp with the cuda lowering's predicate):
// MatMul and Softmax store float16 and their programs take S = mgk::Half; Det has no float16
// program, so it stays a float island with a Cast before it; the interface stays float32.
TEST(GpuHalfStorage, IslandsCastsAndHalfPrograms) {
  auto g = testing::parseVerified(R"(graph @t {
  input %x : f32[2,8]
  const %w : f32[8,2] = dense<[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]>
  %m = MatMul(%x, %w)
  %a = Det(%m)
  %s = Softmax(%m) {axis = 1}
  output %s, %a
})");
  ASSERT_TRUE(g);
  auto r = storeActivationsInHalf(*g, gpuReadsHalfStorage);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->halfValues, 2);     // %m, %s
  EXPECT_EQ(r->halfConstants, 1);  // %w
  EXPECT_EQ(r->casts, 3);          // %x to f16, %m to f32 for Det, %s to f32 at the output
  ASSERT_EQ(r->floatNodes.size(), 1u);
  EXPECT_TRUE(testing::contains(r->floatNodes[0], "Det")) << r->floatNodes[0];
  ASSERT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->outputs()[0]->name(), "s");
  EXPECT_EQ(g->outputs()[0]->dtype(), DType::kF32);
  for (Node* n : g->nodes()) {
    if (n->kind() == "MatMul") {
      EXPECT_EQ(n->input(0)->dtype(), DType::kF16);
      ASSERT_TRUE(n->input(1)->isConstant());
      EXPECT_EQ(n->input(1)->constant().data<uint16_t>()[0], 0x2e66);  // 0.1 rounded to nearest even
      EXPECT_EQ(n->output(0)->dtype(), DType::kF16);
    }
    if (n->kind() == "Det") {
      EXPECT_EQ(n->input(0)->dtype(), DType::kF32);
    }
  }
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto device = loadDeviceProfile("h200");
  ASSERT_TRUE(device.ok());
  TemplateVars vars;
  auto sum = emitGpuProgram(*g, *plan, *device, vars, {}, {}, nullptr, true);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  const std::string& k = vars.at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::rowBlock<1, 256, mgk::Half>")) << k;
  EXPECT_TRUE(testing::contains(vars.at("FUNCTORS"), "mgk::convertTo<mgk::Half>(a0)")) << vars.at("FUNCTORS");
}

}  // namespace
}  // namespace magneto
