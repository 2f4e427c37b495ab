// GPU lowering of the selection ops whose extents may be known only at run time
// (codegen/gpu/lower_select.cpp): TopK with a constant K (no data symbol, no read-back), TopK with
// a run-time K (its count is K), Unique and NonMaxSuppression (two phases: their count is read
// back once, after the second launch), and the programs and tiles each gets. The
// numbers are checked end to end by `magnetoc check --target cuda|hip --emulate` (the ONNX node
// tests of tests/e2e/run_gpu_targets.sh, e2e.data_extent's gpu_select model, the zoo's
// mixtral_moe) and the programs by kernels_test's SortKernel.*.
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"
#include "magneto/ir/symbolic.h"

namespace magneto {
namespace {

size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(GpuSelectLowering, TopKConstantKIsOneBlockPerRowAndNoReadBack) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[16,8]
  const %k : i64[1] = dense<[2]>
  %v, %i = TopK(%x, %k) {axis = -1}
  output %v, %i
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "1");
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::topkBlock<float, 64, 128>")) << k;  // C = 64 >= K
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.rows = 16; p.inner = 1; p.n = 8; p.k = 2;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.kPtr = static_cast<const int64_t*>(nullptr)")) << init;
  EXPECT_TRUE(testing::contains(init, "p.count = static_cast<int64_t*>(nullptr)")) << init;
  EXPECT_FALSE(testing::contains(vars->at("FORWARD"), "MG_DATA_EXTENT")) << vars->at("FORWARD");
}

TEST(GpuSelectLowering, TopKChunkFollowsKAndAxis) {
  // Axis 0 of [3000, 5]: rows are the 5 columns, elements 5 apart; K = 300 gets C = 512, K = 2000
  // the largest chunk (1024) and so the counting path; smallest and int64 are parameters/types.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : i64[3000,5]
  const %k : i64[1] = dense<[300]>
  const %big : i64[1] = dense<[2000]>
  %v, %i = TopK(%x, %k) {axis = 0, largest = 0}
  %w, %j = TopK(%x, %big) {axis = -2}
  output %v, %i, %w, %j
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::topkBlock<int64_t, 512, 128>")) << k;
  EXPECT_TRUE(testing::contains(k, "mgk::topkBlock<int64_t, 1024, 128>")) << k;
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.rows = 5; p.inner = 5; p.n = 3000; p.k = 300;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.largest = 0;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.k = 2000;")) << init;
}

TEST(GpuSelectLowering, TopKRunTimeKReportsItsCount) {
  auto vars = testing::emitGpu(R"(graph @t {
  symbol k [0, 4] data
  input %x : f32[8,4]
  input %kk : i64[1]
  %vals : f32[8,4] as [8,k], %idx : i64[8,4] as [8,k] = TopK(%x, %kk) {axis = 1}
  output %vals, %idx
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  // C from the axis (4): the smallest chunk, which holds every K the row allows.
  EXPECT_TRUE(testing::contains(vars->at("KERNELS"), "mgk::topkBlock<float, 64, 128>")) << vars->at("KERNELS");
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.kPtr = reinterpret_cast<const int64_t*>(S(")) << init;
  EXPECT_TRUE(testing::contains(init, "p.count = MG_COUNT(0)")) << init;
  // One read-back for the symbol both results carry.
  EXPECT_EQ(occurrences(vars->at("FORWARD"), "MG_DATA_EXTENT(0,"), 1u) << vars->at("FORWARD");
}

TEST(GpuSelectLowering, ACountIsReadBackWhereALaterLaunchNeedsItElseAtTheEnd) {
  // The Relu's grid is TopK's K: that count is read back right after the TopK. Unique's count
  // decides only its results' extents (graph outputs): it is read back once, after the last launch.
  auto vars = testing::emitGpu(R"(graph @t {
  symbol k [0, 32] data
  symbol u [0, 32] data
  input %x : f32[32]
  input %kk : i64[1]
  const %two : f32[] = dense<[2]>
  %y : f32[32] as [u], %first : i64[32] as [u], %inv : i64[32], %cnt : i64[32] as [u] = Unique(%x)
  %vals : f32[32] as [k], %idx : i64[32] as [k] = TopK(%x, %kk)
  %d = Relu(%vals)
  output %vals, %idx, %d, %y, %first, %inv, %cnt
})", /*fitted=*/true);
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& fwd = vars->at("FORWARD");
  ASSERT_EQ(occurrences(fwd, "MG_DATA_EXTENT(0,"), 1u) << fwd;
  ASSERT_EQ(occurrences(fwd, "MG_DATA_EXTENT(1,"), 1u) << fwd;
  const size_t topk = fwd.find("MG_DATA_EXTENT(0,"), unique = fwd.find("MG_DATA_EXTENT(1,");
  const size_t lastLaunch = fwd.rfind("MG_LAUNCH_STEP");
  EXPECT_LT(topk, lastLaunch) << fwd;   // before the Relu
  EXPECT_GT(unique, lastLaunch) << fwd;  // after everything
  EXPECT_TRUE(testing::contains(vars->at("INIT_PARAMS"), "MG_DIM(")) << vars->at("INIT_PARAMS");
}

TEST(GpuSelectLowering, UniqueIsTwoPhasesAndReadsItsCountAfterTheSecond) {
  auto vars = testing::emitGpu(R"(graph @t {
  symbol u [0, 12] data
  input %x : i32[4,12]
  %y : i32[4,12] as [4,u], %first : i64[12] as [u], %inv : i64[12], %cnt : i64[12] as [u] = Unique(%x) {axis = 1, sorted = 0}
  output %y, %first, %inv, %cnt
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "2");
  const std::string& k = vars->at("KERNELS");
  EXPECT_TRUE(testing::contains(k, "mgk::uniqueFirstBlock<int32_t, 128>")) << k;
  EXPECT_TRUE(testing::contains(k, "mgk::uniqueWriteBlock<int32_t, 128>")) << k;
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.outer = 4; p.n = 12; p.inner = 1; p.sorted = 0;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.first = reinterpret_cast<int64_t*>(SCRATCH(0))")) << init;
  const std::string& fwd = vars->at("FORWARD");
  ASSERT_EQ(occurrences(fwd, "MG_DATA_EXTENT(0,"), 1u) << fwd;
  EXPECT_LT(fwd.find("launch1"), fwd.find("MG_DATA_EXTENT")) << fwd;  // after phase 2, not between
}

TEST(GpuSelectLowering, NonMaxSuppressionSortsInSharedMemoryOrInScratch) {
  const char* text = R"(graph @t {
  symbol s [0, {CAP}] data
  input %b : f32[2,{N},4]
  input %sc : f32[2,3,{N}]
  const %m : i64[1] = dense<[5]>
  const %iou : f32[1] = dense<[0.5]>
  %sel : i64[{CAP},3] as [s,3] = NonMaxSuppression(%b, %sc, %m, %iou)
  output %sel
})";
  auto at = [&](int n) {
    std::string t = text;
    const std::string cap = std::to_string(2 * 3 * 5), nn = std::to_string(n);
    for (size_t p; (p = t.find("{CAP}")) != std::string::npos;) t.replace(p, 5, cap);
    for (size_t p; (p = t.find("{N}")) != std::string::npos;) t.replace(p, 3, nn);
    return testing::emitGpu(t);
  };
  auto small = at(100);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->at("NUM_LAUNCHES"), "2");
  std::string init = small->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.batches = 2; p.classes = 3; p.boxes = 100; p.sortSize = 128;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.sortKey = static_cast<uint64_t*>(nullptr)")) << init;
  EXPECT_TRUE(testing::contains(init, "p.scoreThreshold = static_cast<const float*>(nullptr)")) << init;
  EXPECT_EQ(occurrences(small->at("FORWARD"), "MG_DATA_EXTENT(0,"), 1u) << small->at("FORWARD");
  auto big = at(3000);  // past kNmsSmemBoxes (2048): 4096-entry sorts in the blocks' scratch
  ASSERT_TRUE(big.ok()) << big.status().message();
  init = big->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "p.sortSize = 4096;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.sortKey = reinterpret_cast<uint64_t*>(SCRATCH(")) << init;
}

}  // namespace
}  // namespace magneto
