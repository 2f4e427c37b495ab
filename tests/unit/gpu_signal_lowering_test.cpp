// GPU lowering of DFT and STFT (codegen/gpu/lower_signal.cpp): one map item whose thread sums
// the line or frame of its output bin, the operand's strides pointing at the line's start
// (0 over the signal axis and the complex dim), the angle reduced mod n, the inverse's sign and
// 1 / n; and MelWeightMatrix's one item over (bin, filter). The numbers are checked end
// to end against ONNX's backend data by `magnetoc check --target cuda|hip --emulate`
// (tests/e2e/run_gpu_targets.sh's sample).
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"

namespace magneto {
namespace {

TEST(GpuSignalLowering, InverseDftOfAComplexMiddleAxisPaddedToSix) {
  // x [1, 4, 3, 2]: strides 24, 6, 2, 1; the line of (b, i) starts at 24 b + 2 i, point j at 6 j.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[1,4,3,2]
  const %n : i64[] = dense<[6]>
  %y = DFT(%x, %n) {axis = 1, inverse = 1}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "const int64_t k = (o / 6) % 6, part = o % 2;")) << f;
  EXPECT_TRUE(testing::contains(f, "for (int64_t j = 0; j < 4; ++j)")) << f;  // 2 zeros padded
  EXPECT_TRUE(testing::contains(f, "static_cast<double>((j * k) % 6) / 6.0")) << f;
  EXPECT_TRUE(testing::contains(f, "sn = sin(t)")) << f;  // inverse: e^(+i t)
  EXPECT_TRUE(testing::contains(f, "p[j * 6 + 1]")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<float>(s / 6.0)")) << f;
  EXPECT_TRUE(testing::contains(vars->at("INIT_PARAMS"), "mgSet(p.inStrides[0], {24, 0, 2, 0})"))
      << vars->at("INIT_PARAMS");
}

TEST(GpuSignalLowering, WindowedStftReadsFramesEveryStep) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %s : f64[2,10,1]
  input %w : f64[4]
  const %step : i64[] = dense<[2]>
  %y = STFT(%s, %step, %w)
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "const int64_t k = (o / 2) % 3, part = o % 2;")) << f;
  EXPECT_TRUE(testing::contains(f, "sn = -sin(t)")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<double>(w0[j])")) << f;
  EXPECT_TRUE(testing::contains(f, "const double im = 0;")) << f;  // a real signal
  // Over [batch, frames, bins, 2]: the signal's start moves 10 per batch, 2 (frame_step) per frame.
  EXPECT_TRUE(testing::contains(vars->at("INIT_PARAMS"), "mgSet(p.inStrides[0], {10, 2, 0, 0})"))
      << vars->at("INIT_PARAMS");
}

TEST(GpuSignalLowering, MelWeightMatrixOfRunTimeOperandsIsOneMapItem) {
  // Bound at run time, sample_rate and the edges are operands of stride 0; output (j, i) of
  // [9, 8] is filter i at bin j, a NaN filter where the CPU would fail the run.
  auto vars = testing::emitGpu(R"(graph @t {
  const %bins : i32[] = dense<[8]>
  const %len : i32[] = dense<[16]>
  input %rate : i32[]
  input %lo : f32[]
  input %hi : f64[]
  %y = MelWeightMatrix(%bins, %len, %rate, %lo, %hi) {output_datatype = 11}
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& f = vars->at("FUNCTORS");
  EXPECT_TRUE(testing::contains(f, "const int64_t j = o / 8, i = o % 8;")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<const int32_t*>(in[0])[idx[0]]")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<const double*>(in[2])[idx[2]]")) << f;
  EXPECT_TRUE(testing::contains(f, "(highMel - lowMel) / 10.0")) << f;
  EXPECT_TRUE(testing::contains(f, "floor(17.0 * hz / rate)")) << f;
  EXPECT_TRUE(testing::contains(f, "bad = bad || last >= 9;")) << f;
  EXPECT_TRUE(testing::contains(f, "static_cast<double*>(out)[o] = static_cast<double>(bad ? NAN : v)"))
      << f;
}

}  // namespace
}  // namespace magneto
