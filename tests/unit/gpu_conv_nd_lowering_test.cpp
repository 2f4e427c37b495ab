// GPU lowering of the N-D convolutions and pools (codegen/gpu/lower_conv_nd.cpp): 3-D Conv, every
// ConvTranspose and 3-D pools become the direct programs of runtime/gpu/kernels/mg_conv_nd.cuh
// with the geometry of runtime/common/k_nn_shapes.h, 1-D/2-D float32 Conv and pools stay on the tiled
// programs (except AveragePool's count_include_pad with ceil_mode), and what the programs do not
// cover is refused with kUnsupported. Numerics: kernels.ConvNdKernel.* (the programs) and the node
// tests of tests/e2e/run_gpu_targets.sh under --target cuda|hip --emulate.
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"

namespace magneto {
namespace {

TEST(GpuConvNdLowering, Conv3dAndConvTransposeAreDirectPrograms) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,4,5,6,4]
  input %w : f32[6,2,3,2,3]
  input %b : f32[6]
  input %t : f32[1,4,3,4]
  input %tw : f32[4,3,3,3]
  %y = Conv(%x, %w, %b) {group = 2, strides = [2, 1, 1], pads = [1, 0, 1, 1, 1, 0], dilations = [1, 2, 1]}
  %z = ConvTranspose(%t, %tw) {group = 2, strides = [2, 2], pads = [1, 0, 0, 1], output_padding = [1, 0]}
  output %y, %z
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(k, "mgk::convNdBlock<float, 256>")) << k;
  EXPECT_FALSE(testing::contains(k, "mgk::convBlock<")) << k;
  EXPECT_TRUE(testing::contains(init, "p.N = 1; p.C = 4; p.M = 6; p.group = 2; p.transposed = 0;")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.g.out, {3, 5, 3});")) << init;
  // ConvTranspose: M = 3 * group; out = s*(in-1) + output_padding + k - pads.
  EXPECT_TRUE(testing::contains(init, "p.N = 1; p.C = 4; p.M = 6; p.group = 2; p.transposed = 1;")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.g.out, {7, 8});")) << init;
}

TEST(GpuConvNdLowering, PoolsOnlyWhereThe2dProgramDiffers) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,2,5,5,5]
  input %v : f32[1,2,5,5]
  %m = MaxPool(%x) {kernel_shape = [2, 2, 2], strides = [2, 2, 2]}
  %a = AveragePool(%v) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 0], count_include_pad = 1, ceil_mode = 1}
  %c = AveragePool(%v) {kernel_shape = [2, 2], strides = [2, 2]}
  output %m, %a, %c
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& k = vars->at("KERNELS");
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_TRUE(testing::contains(k, "mgk::poolNdBlock<float, 256>")) << k;
  EXPECT_TRUE(testing::contains(k, "mgk::poolBlock<")) << k;  // the plain 2-D AveragePool
  EXPECT_TRUE(testing::contains(init, "p.NC = 2; p.isMax = 1; p.countIncludePad = 0;")) << init;
  EXPECT_TRUE(testing::contains(init, "p.NC = 2; p.isMax = 0; p.countIncludePad = 1;")) << init;
  EXPECT_TRUE(testing::contains(init, "mgSet(p.padEnd, {1, 0});")) << init;
}

TEST(GpuConvNdLowering, RefusesWhatTheProgramsDoNotCover) {
  auto indices = testing::emitGpu(R"(graph @t {
  input %x : f32[1,2,4,4,4]
  %y, %i = MaxPool(%x) {kernel_shape = [2, 2, 2]}
  output %y, %i
})");
  ASSERT_FALSE(indices.ok());
  EXPECT_EQ(indices.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(testing::contains(indices.status().message(), "Indices")) << indices.status().message();
}

}  // namespace
}  // namespace magneto
