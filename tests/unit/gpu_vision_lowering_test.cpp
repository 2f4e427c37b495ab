// GPU lowering of the vision family, LRN and Det (codegen/gpu/lower_vision.cpp): the map items each
// node becomes, the operand strides that give each output element its plane, grid point or
// region, the node's constants written into the functors, and what replaces the CPU's data errors
// (NaN for a RoiAlign batch index out of range, no write for a MaxUnpool index out of range).
// The numbers are checked end to end against ONNX's backend data by
// `magnetoc check --target cuda|hip --emulate` (tests/e2e/run_gpu_targets.sh's sample).
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"

namespace magneto {
namespace {

TEST(GpuVisionLowering, GridSampleReadsItsPlaneAndGridPoint) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[2,3,4,5]
  input %g : f32[2,6,7,2]
  %y = GridSample(%x, %g) {mode = "bicubic", padding_mode = "reflection", align_corners = 1}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "1");
  // Over Y [2, 3, 6, 7]: X's plane is C * H * W = 60 per n and H * W = 20 per c; the grid point
  // is Ho * Wo * 2 = 84 per n, Wo * 2 = 14 per row and 2 per column.
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[0], {60, 20, 0, 0})")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[1], {84, 0, 14, 2})")) << init;
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "(g[0] + 1) / 2 * (float)(5 - 1)")) << f;  // align_corners
  EXPECT_TRUE(testing::contains(f, "w2(tx + 1), w1(tx), w1(1 - tx), w2(2 - tx)")) << f;
  // Reflection with align_corners on W = 5 mirrors within [0, 4]: twiceLow 0, span 8 / 2.
  EXPECT_TRUE(testing::contains(f, "lo = (float)0 / 2, span = (float)8 / 2")) << f;
}

TEST(GpuVisionLowering, GridSampleNearestRoundsHalfToEven) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f64[1,1,3,2]
  input %g : f64[1,2,4,2]
  %y = GridSample(%x, %g) {mode = "nearest", padding_mode = "border"}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "pixel(tap(rint(ix)), tap(rint(iy)))")) << f;
  EXPECT_TRUE(testing::contains(f, "((ix) < (double)0 ? (double)0 : ((ix) < (double)1")) << f;
}

TEST(GpuVisionLowering, RoiAlignBadBatchIndexGivesNaN) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[2,3,8,8]
  input %r : f32[5,4]
  input %b : i64[5]
  %y = RoiAlign(%x, %r, %b) {output_height = 2, output_width = 3, mode = "max"}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[1], {4, 0, 0, 0})")) << init;  // its roi
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[2], {1, 0, 0, 0})")) << init;  // its index
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "double acc = NAN;")) << f;
  EXPECT_TRUE(testing::contains(f, "if (b >= 0 && b < 2)")) << f;
  EXPECT_TRUE(testing::contains(f, "c = (o / 6) % 3, ph = (o / 3) % 2, pw = o % 3")) << f;
  EXPECT_TRUE(testing::contains(f, "acc = acc < v ? v : acc;")) << f;  // max
  EXPECT_TRUE(testing::contains(f, "offset = 0.5")) << f;               // half_pixel
}

TEST(GpuVisionLowering, MaxUnpoolZeroesThenScattersInTwoLaunches) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,2,2,2]
  input %i : i64[1,2,2,2]
  %y = MaxUnpool(%x, %i) {kernel_shape = [2, 2], strides = [2, 2]}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "2");  // phase 1 starts after every zero is written
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "if (i >= 0 && i < 32)")) << f;  // 1 x 2 x 4 x 4
  EXPECT_TRUE(testing::contains(vars->at("INIT_PARAMS"), "mgSet(p.outStrides, {0, 0, 0, 0})"))
      << vars->at("INIT_PARAMS");
}

TEST(GpuVisionLowering, DetEliminatesPerThreadUpTo16x16) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f64[3,2,2]
  %y = Det(%x)
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "double a[4];")) << f;
  EXPECT_TRUE(testing::contains(f, "if (pivot == 0.0) { det = 0.0; break; }")) << f;
  EXPECT_TRUE(testing::contains(vars->at("INIT_PARAMS"), "mgSet(p.inStrides[0], {4})"))
      << vars->at("INIT_PARAMS");
  auto big = testing::emitGpu(R"(graph @t {
  input %x : f32[17,17]
  %y = Det(%x)
  output %y
})");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(big.status().message(), "17x17 matrices")) << big.status().message();
}

TEST(GpuVisionLowering, LrnSumsItsClippedChannelWindow) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[2,6,3,5]
  %y = LRN(%x) {size = 4, alpha = 0.0002, beta = 0.5, bias = 2.0}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "1");
  // Over Y [2, 6, 3, 5]: every channel reads from channel 0's position of its image (stride 0
  // on C), then walks the window 15 floats apart; size 4 is [c - 1, c + 2] clipped to [0, 5].
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(init, "mgSet(p.inStrides[0], {90, 0, 5, 1})")) << init;
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "const int64_t c = (o / 15) % 6;")) << f;
  EXPECT_TRUE(testing::contains(f, "k0 = c - 1 < 0 ? 0 : c - 1, k1 = c + 2 > 5 ? 5 : c + 2")) << f;
  EXPECT_TRUE(testing::contains(f, "x0[k * 15]")) << f;
  EXPECT_TRUE(testing::contains(f, "/ 4.0 * sq")) << f;
  EXPECT_TRUE(testing::contains(f, "x0[c * 15]) / d")) << f;
  // [N, C]: no spatial dims, channels one apart.
  auto flat = testing::emitGpu(R"(graph @t {
  input %x : f32[3,7]
  %y = LRN(%x) {size = 3}
  output %y
})");
  ASSERT_TRUE(flat.ok()) << flat.status().message();
  EXPECT_TRUE(testing::contains(flat->at("INIT_PARAMS"), "mgSet(p.inStrides[0], {7, 0})"))
      << flat->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(flat->at("FUNCTORS"), "x0[k * 1]")) << flat->at("FUNCTORS");
}

}  // namespace
}  // namespace magneto
