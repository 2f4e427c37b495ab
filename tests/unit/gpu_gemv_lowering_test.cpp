// Skinny Gemm/MatMul on the cuda/hip targets (codegen/gpu/lower_compute.cpp, src/target/
// cost_model.cpp): a batch-1 product (M = 1) gets the split-K program mgk::gemvBlock, priced by
// the cost model at least 2x below the best big-tile GEMM; M = 64 keeps the tiled gemmBlock; a
// product with N <= 16 < M runs the GEMV transposed (operand and Y strides swapped); Q/K/V
// projections of one token co-tune into one joint launch of GEMV members. The numerics of the
// program are kernels.GemvKernel.*, the whole path e2e (run_gpu_targets.sh --models, the
// batch-1 classifier check in docs/GPU_TARGET.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gpu_lowering_test_util.h"
#include "magneto/target/cost_model.h"

namespace magneto {
namespace {

TEST(GpuGemvLowering, BatchOneClassifierHeadRunsTheGemvProgram) {
  // GoogLeNet's head: [1, 1024] x [1000, 1024]^T + bias, with a fused ReLU epilogue.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,1024]
  input %w : f32[1000,1024]
  input %b : f32[1000]
  %y = Gemm(%x, %w, %b) {transB = 1, mg_act = "Relu"}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::gemvBlock<1, 8, 256>")) << k;
  EXPECT_FALSE(testing::contains(k, "mgk::gemmBlock<")) << k;
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.M = 1; p.N = 1000; p.K = 1024;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.bK = 1; p.bN = 1024;")) << init;  // the weight, k-contiguous
  EXPECT_TRUE(testing::contains(init, "p.cM = 0; p.cN = 1;")) << init;     // the bias row
  EXPECT_TRUE(testing::contains(init, "p.yM = 1000; p.yN = 1;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.act = 1;")) << init;
}

TEST(GpuGemvLowering, Batch64KeepsTheTiledGemm) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[64,1024]
  input %w : f32[1000,1024]
  input %b : f32[1000]
  %y = Gemm(%x, %w, %b) {transB = 1}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::gemmBlock<")) << k;
  EXPECT_FALSE(testing::contains(k, "mgk::gemvBlock<")) << k;
}

TEST(GpuGemvLowering, NarrowOutputRunsTransposed) {
  // N = 3 < 16 < M = 300: Y^T = B^T A^T, the 3 columns become the GEMV's rows (4-row tile).
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[300,64]
  input %w : f32[64,3]
  %y = MatMul(%x, %w)
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::gemvBlock<4, ")) << k;
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.M = 3; p.N = 300; p.K = 64;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.aBatch = 0; p.aM = 1; p.aK = 3;")) << init;   // w^T
  EXPECT_TRUE(testing::contains(init, "p.bBatch = 0; p.bK = 1; p.bN = 64;")) << init;  // x^T
  EXPECT_TRUE(testing::contains(init, "p.yM = 1; p.yN = 3;")) << init;
}

// The cost model: GEMV candidates only for skinny Gemm/MatMul, at least 2x cheaper than the big
// tile for M = 1, and still fused when three projections of one token share a joint launch.
TEST(GpuGemvCostModel, PricedBelowTheBigTileAndJointWithQkv) {
  auto h200 = loadDeviceProfile("h200");
  ASSERT_TRUE(h200.ok());
  auto g = testing::parseVerified(R"(graph @t {
  input %x : f32[1,1024]
  input %w : f32[1000,1024]
  input %b : f32[1000]
  input %h : f32[64,1024]
  input %q : f32[1024,1024]
  input %kw : f32[1024,1024]
  input %v : f32[1024,1024]
  %y = Gemm(%x, %w, %b) {transB = 1}
  %z = Gemm(%h, %w, %b) {transB = 1}
  %yq = MatMul(%x, %q)
  %yk = MatMul(%x, %kw)
  %yv = MatMul(%x, %v)
  output %y, %z, %yq, %yk, %yv
})");
  ASSERT_TRUE(g);
  const Node *head = nullptr, *batch64 = nullptr;
  std::vector<const Node*> qkv;
  for (const Node* n : g->nodes()) {
    if (n->output(0)->name() == "y") head = n;
    if (n->output(0)->name() == "z") batch64 = n;
    if (n->kind() == "MatMul") qkv.push_back(n);
  }
  ASSERT_TRUE(head && batch64 && qkv.size() == 3);
  KernelEstimate best = bestKernel(*head, *h200);
  ASSERT_TRUE(best.valid) << best.reason;
  EXPECT_TRUE(best.tile.isGemv()) << best.str();
  double bigTile = 1e30;
  for (const TileConfig& t : tileCandidates(*head, *h200))
    if (!t.isGemv()) bigTile = std::min(bigTile, estimateKernel(*head, *h200, t).latencyUs);
  EXPECT_LE(2 * best.latencyUs, bigTile) << best.str();
  for (const TileConfig& t : tileCandidates(*batch64, *h200)) EXPECT_FALSE(t.isGemv()) << t.str();
  JointEstimate j = coTune(qkv, *h200);
  ASSERT_TRUE(j.valid) << j.reason;
  for (const TileConfig& t : j.tiles) EXPECT_TRUE(t.isGemv()) << j.str();
  EXPECT_LT(j.latencyUs, sequentialLatency(qkv, *h200)) << j.str();
}

}  // namespace
}  // namespace magneto
