// The cuda/hip targets' dynamic dimensions (codegen/gpu/gpu_dynamic.cpp): the launch parameters
// that change with the symbols become MG_DIM(k), each the postfix code of its fitted expression;
// what the packages cannot follow is refused by node. The numerics run in e2e.dynamic_cnn (cuda
// and hip emulation at three shapes of one build).
#include <gtest/gtest.h>

#include "gpu_lowering_test_util.h"
#include "magneto/ir/symbolic.h"

namespace magneto {
namespace {

Expected<TemplateVars> emitSymbolic(const std::string& text) {
  auto g = parseGraph(text, "test");
  if (!g.ok()) return g.status();
  MG_RETURN_IF_ERROR(inferSymbolicShapes(**g));
  MG_ASSIGN_OR_RETURN(MemoryPlan plan, planMemory(**g));
  MG_ASSIGN_OR_RETURN(DeviceProfile device, loadDeviceProfile("h200"));
  TemplateVars vars;
  MG_ASSIGN_OR_RETURN(GpuEmitSummary sum, emitGpuProgram(**g, plan, device, vars));
  (void)sum;
  return vars;
}

TEST(GpuDynamic, LaunchParametersBecomeExpressionsOfTheSymbols) {
  // A strided 1-D conv (floor((T+1)/2) columns), a T x T product (attention's scores: degree 2
  // in T), a reduction over the length and a broadcast Add of a per-channel bias.
  auto vars = emitSymbolic(R"(graph @g {
  symbol N [1, 8]
  symbol T [1, 64]
  input %x : f32[8,4,64] as [N,4,T]
  input %q : f32[8,64,16] as [N,T,16]
  input %k : f32[8,16,64] as [N,16,T]
  const %w : f32[8,4,3] = random<1>
  const %bias : f32[1,8,1] = random<2>
  %y = Conv(%x, %w, _) {kernel_shape = [3], pads = [1, 1], strides = [2]}
  %yb = Add(%y, %bias)
  %m = ReduceMean(%yb) {axes = [2], keepdims = 0}
  %s = MatMul(%q, %k)
  output %m, %s
}
)");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& init = (*vars)["INIT_PARAMS"];
  const std::string& code = (*vars)["PARAM_CODE"];
  EXPECT_TRUE(testing::contains(init, "p.N = MG_DIM(")) << init;
  EXPECT_TRUE(testing::contains(init, "p.C = 4;")) << init;  // static dims stay literals
  EXPECT_TRUE(testing::contains(code, "= N\n")) << code;
  EXPECT_TRUE(testing::contains(code, "floor((T+1)/2)")) << code;
  EXPECT_TRUE(testing::contains(code, "T*T")) << code;  // the scores' batch stride
  EXPECT_GT(std::stoi((*vars)["NUM_PARAM_DIMS"]), 3);
  // The bias broadcasts along N and the length at every binding (stride 0), never by the value
  // of a dim at one binding.
  EXPECT_EQ((*vars)["DYNAMIC"], "1");
}

TEST(GpuDynamic, AConcatWhoseOffsetsChangeWithTheDimsIsACopy) {
  // Along axis 0 an operand written in place would start N*4 floats into the result: right at the
  // reference dims only (the CPU package computed batch 1 and 3 wrong that way). The memory plan
  // places Concat operands and channel-slice views in place only between values of static
  // extent, so the dynamic graph copies, its launch offsets fitted like any other parameter; the
  // same graph with a static N still writes in place.
  const char* kGraph = R"(graph @g {
  symbol N [1, 8]
  input %x : f32[8,4] as [N,4]
  %a = Relu(%x)
  %b = Sigmoid(%x)
  %c = Concat(%a, %b) {axis = 0}
  %d = Tanh(%c)
  output %d
}
)";
  auto g = parseGraph(kGraph, "test");
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_TRUE(inferSymbolicShapes(**g).ok());
  auto plan = planMemory(**g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->concats.inPlace.empty());
  EXPECT_TRUE(plan->concats.elided.empty());
  auto vars = emitSymbolic(kGraph);
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ((*vars)["DYNAMIC"], "1");

  std::string fixed = kGraph;
  fixed.replace(fixed.find("  symbol N [1, 8]\n"), 17, "");
  fixed.replace(fixed.find(" as [N,4]"), 9, "");
  auto gs = parseGraph(fixed, "test");
  ASSERT_TRUE(gs.ok()) << gs.status().message();
  auto planStatic = planMemory(**gs);
  ASSERT_TRUE(planStatic.ok()) << planStatic.status().message();
  EXPECT_EQ(planStatic->concats.inPlace.size(), 2u);
}

TEST(GpuDynamic, StaticGraphsKeepTheirLiterals) {
  auto vars = testing::emitGpu(R"(graph @g {
  input %x : f32[2,4,64]
  const %w : f32[8,4,3] = random<1>
  %y = Conv(%x, %w, _) {kernel_shape = [3], pads = [1, 1], strides = [2]}
  output %y
}
)");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_FALSE(testing::contains((*vars)["INIT_PARAMS"], "MG_DIM")) << (*vars)["INIT_PARAMS"];
  EXPECT_TRUE(testing::contains((*vars)["INIT_PARAMS"], "p.N = 2;")) << (*vars)["INIT_PARAMS"];
}

}  // namespace
}  // namespace magneto

namespace magneto {
namespace {

TEST(GpuDynamic, ConstantOfShapeIsOneValueOverItsResult) {
  // Static here; with dynamic dims its shape operand is MgSymbolic data (never folded), which the
  // zoo's seq2seq export has: its encoder state starts as ConstantOfShape([1, batch, hidden]).
  auto vars = testing::emitGpu(R"(graph @g {
  const %shape : i64[2] = dense<[3, 5]>
  %y : f32[3,5] = ConstantOfShape(%shape) {dtype = 1, mg_value = -inf}
  %z : i64[3,5] = ConstantOfShape(%shape) {dtype = 7, mg_value_i = 7}
  output %y, %z
}
)");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = (*vars)["FUNCTORS"];
  EXPECT_TRUE(testing::contains(f, "mgk::convertTo<float>((-static_cast<double>(INFINITY)))")) << f;
  EXPECT_TRUE(testing::contains(f, "mgk::convertTo<int64_t>(static_cast<int64_t>(7LL))")) << f;
  EXPECT_TRUE(testing::contains((*vars)["INIT_PARAMS"], "p.n = 15;")) << (*vars)["INIT_PARAMS"];
}

}  // namespace
}  // namespace magneto
