// The GPU lowering table (codegen/gpu/lowering_table.cpp): every entry names an op of the registry
// and no op has two; an op without an entry is refused naming the op; the entries that pick a
// lowering by element type, and the expression tables the elementwise entries come from
// (codegen/gpu/elementwise_exprs.h), give each type its formula. The programs themselves are
// tested by the other gpu_*_lowering tests and the kernel tests of tests/gpu.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "magneto/ir/op_schema.h"
#include "gpu_lowering_test_util.h"

namespace magneto {
namespace {

TEST(GpuLoweringTable, EveryEntryIsARegisteredOpAndAppearsOnce) {
  std::set<std::string> seen;
  for (const std::string& op : gpuLoweredOps()) {
    EXPECT_NE(OpRegistry::instance().find(op), nullptr) << "'" << op << "' has no schema";
    EXPECT_TRUE(seen.insert(op).second) << "'" << op << "' has two entries";
  }
  // The entries read from the expression tables and the activation table are there.
  for (const char* op : {"Sqrt", "Sign", "Relu", "Mish", "Gelu", "Pow", "PRelu", "Xor", "Clip"})
    EXPECT_TRUE(seen.count(op)) << op;
}

TEST(GpuLoweringTable, AnOpWithoutAnEntryIsRefusedNamingIt) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[4]
  %y = Shrink(%x) {lambd = 0.5}
  output %y
})");
  ASSERT_FALSE(vars.ok());
  EXPECT_EQ(vars.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(vars.status().message(), "no kernel for op 'Shrink'")) << vars.status().message();
}

// GatherND's indexed dims are functor text: a gather from data whose gathered dim is dynamic is
// refused by node; one whose index tuples' count is dynamic lowers (the count is an extent).
TEST(GpuLoweringTable, GatherNDNeedsFixedGatheredDims) {
  auto refused = testing::emitGpu(R"(graph @t {
  symbol N [1, 8]
  input %x : f32[8,4] as [N,4]
  input %i : i64[2,1]
  %y = GatherND(%x, %i)
  output %y
})", true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(refused.status().message(), "the gathered data's dim 0 depends on a dynamic dimension"))
      << refused.status().message();
  auto lowered = testing::emitGpu(R"(graph @t {
  symbol N [1, 8]
  input %x : f32[5,4]
  input %i : i64[8,1] as [N,1]
  %y = GatherND(%x, %i)
  output %y
})", true);
  EXPECT_TRUE(lowered.ok()) << lowered.status().message();
}

TEST(GpuLoweringTable, ElementTypePicksTheLowering) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[3,4]
  input %d : f64[3,4]
  input %i : i64[3,4]
  const %ax : i64[1] = dense<[1]>
  %sf = Sqrt(%x)
  %sd = Sqrt(%d)
  %rf = ReduceSum(%x, %ax) {keepdims = 0}
  %ri = ReduceSum(%i, %ax) {keepdims = 0}
  %mi = Max(%i, %i)
  output %sf, %sd, %rf, %ri, %mi
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "sqrtf(a0)")) << f;                      // float32: lower_map.cpp
  EXPECT_TRUE(testing::contains(f, "const double x = a0;")) << f;           // float64: lower_opset.cpp
  EXPECT_TRUE(testing::contains(f, "= sqrt(x);")) << f;
  EXPECT_TRUE(testing::contains(vars->at("KERNELS"), "mgk::reduceBlock<")) << vars->at("KERNELS");  // float32
  EXPECT_TRUE(testing::contains(f, "mgk::reduceTyped<int64_t, mgk::kRedSum>")) << f;                // int64
  EXPECT_TRUE(testing::contains(f, "(a0 > a1 ? a0 : a1)")) << f;           // Max's integer form
}

TEST(GpuLoweringTable, AFloatOnlyExpressionRefusesIntegers) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %i : i64[4]
  %y = Pow(%i, %i)
  output %y
})");
  ASSERT_FALSE(vars.ok());
  EXPECT_EQ(vars.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(vars.status().message(), "no elementwise kernel for 'Pow' on i64"))
      << vars.status().message();
}

}  // namespace
}  // namespace magneto
