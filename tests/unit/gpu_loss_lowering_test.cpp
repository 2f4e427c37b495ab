// GPU lowering of the loss ops (codegen/gpu/lower_loss.cpp): which map items a node becomes
// (a loss item, and a log_prob item for SoftmaxCrossEntropyLoss's second result, in one launch),
// that sum and mean walk the samples in one thread in the CPU's order, that reduction none maps
// over the targets with the scores' offset of each sample, and that an out-of-range target gives
// NaN (the GPU cannot stop the run). The numbers are checked end to end against ONNX's backend
// data by `magnetoc check --target cuda|hip --emulate` (tests/e2e/run_gpu_targets.sh's sample).
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"

namespace magneto {
namespace {

TEST(GpuLossLowering, SceMeanWithLogProbIsTwoMapItemsInOneLaunch) {
  // N = 2, C = 3, D = 4: 8 samples; sample i's column starts at (i / 4) * 12 + i % 4.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[2,3,4]
  input %t : i64[2,4]
  input %w : f32[3]
  %l, %p = SoftmaxCrossEntropyLoss(%x, %t, %w) {ignore_index = -1}
  output %l, %p
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "1");
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::mapBlock<F0_0, 1,")) << k;  // the mean: one element
  EXPECT_TRUE(testing::contains(k, "mgk::mapBlock<F0_1,")) << k;     // log_prob
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "for (int64_t i = 0; i < 8; ++i)")) << f;
  EXPECT_TRUE(testing::contains(f, "x + (i / 4) * 12 + i % 4")) << f;
  EXPECT_TRUE(testing::contains(f, "if (k != -1LL)")) << f;
  EXPECT_TRUE(testing::contains(f, "loss / wsum")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<const float*>(in[2])[k]")) << f;  // the weight
  EXPECT_TRUE(testing::contains(f, "p[((o / 4) % 3) * 4]")) << f;                  // log_prob's class
  EXPECT_TRUE(testing::contains(f, "loss += NAN")) << f;                           // target out of range
}

TEST(GpuLossLowering, NllNoneMapsOverTheTargetsInDouble) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f64[2,3,5]
  input %t : i32[2,5]
  %l = NegativeLogLikelihoodLoss(%x, %t) {reduction = "none"}
  output %l
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "const int32_t* const t")) << f;
  EXPECT_TRUE(testing::contains(f, "const double* const p = x + idx[0]")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<double>(p[(k) * 5])")) << f;  // no log-softmax
  EXPECT_FALSE(testing::contains(f, "log(se)")) << f;
  EXPECT_FALSE(testing::contains(f, "for (int64_t i = 0;")) << f;
  // x's strides over the targets' dims [2, 5]: C * D = 15 for n, 1 for d.
  EXPECT_TRUE(testing::contains(vars->at("INIT_PARAMS"), "mgSet(p.inStrides[0], {15, 1})"))
      << vars->at("INIT_PARAMS");
}

}  // namespace
}  // namespace magneto
