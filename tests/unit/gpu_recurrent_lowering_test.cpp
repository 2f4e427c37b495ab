// GPU lowering of LSTM/GRU/RNN (codegen/gpu/lower_recurrent.cpp) and the emitter's phases and
// scratch (codegen/gpu/gpu_emitter.cpp): a recurrent step is two launches in order (projection
// GEMM + R transpose, then the time loop), the scratch holds what they pass on, its size is the
// largest launch group's, and what the kernels do not cover stops the compile with kUnsupported
// naming the node. The numerics are checked by kernels.RecurrentKernel.* (the block program) and
// end to end by run_gpu_targets.sh (ONNX node tests, zoo models) and e2e.gpu_recurrent_joint.
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"

namespace magneto {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(GpuRecurrentLowering, LstmIsTwoLaunchesSharingScratch) {
  // seq 5, batch 3, input 7, hidden 20: gx 5*3*80 floats = 4800 bytes (-> 4864, 256-aligned),
  // R^T 20*80 floats = 6400 bytes (-> 6400).
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[5,3,7]
  input %w : f32[1,80,7]
  input %r : f32[1,80,20]
  input %b : f32[1,160]
  %y, %yh, %yc = LSTM(%x, %w, %r, %b) {hidden_size = 20}
  output %y, %yc
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const TemplateVars& v = vars.value();
  EXPECT_EQ(v.at("NUM_LAUNCHES"), "2");
  EXPECT_EQ(v.at("SCRATCH_BYTES"), std::to_string(4864 + 6400));
  const std::string& k = v.at("KERNELS");
  EXPECT_EQ(count(k, "mgk::gemmBlock<"), 1u);
  EXPECT_EQ(count(k, "mgk::mapBlock<mgk::Copy<float>, 4, 256>"), 1u);
  EXPECT_EQ(count(k, "mgk::recurrentBlock<64, 64>"), 1u);
  // The projection and the transpose share the first launch, the loop comes after them.
  EXPECT_LT(k.find("mgk::gemmBlock<"), k.find("mgk::recurrentBlock<"));
  EXPECT_NE(k.find("phase 2 of 2"), std::string::npos);
  const std::string& init = v.at("INIT_PARAMS");
  EXPECT_NE(init.find("p.Y = reinterpret_cast<float*>(SCRATCH(0))"), std::string::npos) << init;
  EXPECT_NE(init.find("p.out = SCRATCH(4864)"), std::string::npos) << init;
  EXPECT_NE(init.find("p.gx = reinterpret_cast<const float*>(SCRATCH(0))"), std::string::npos);
  EXPECT_NE(init.find("p.rt = reinterpret_cast<const float*>(SCRATCH(4864))"), std::string::npos);
  // Y_h is neither used nor an output: not written. Y_c is.
  EXPECT_NE(init.find("p.yh = nullptr;"), std::string::npos) << init;
  EXPECT_EQ(init.find("p.yc = nullptr;"), std::string::npos) << init;
}

TEST(GpuRecurrentLowering, GruBidirectionalLayoutOneWithInt64Lengths) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[3,4,6]
  input %w : f32[2,300,6]
  input %r : f32[2,300,100]
  input %b : f32[2,600]
  input %lens : i64[3]
  input %h0 : f32[3,2,100]
  %y, %yh = GRU(%x, %w, %r, %b, %lens, %h0) {direction = "bidirectional", hidden_size = 100, layout = 1, linear_before_reset = 1}
  output %y, %yh
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  const std::string& init = vars->at("INIT_PARAMS");
  EXPECT_NE(vars->at("KERNELS").find("mgk::recurrentBlock<128, 128>"), std::string::npos);
  EXPECT_NE(init.find("p.cell = mgk::kRnnGru; p.dirs = 2; p.reverse = 0; p.linearBeforeReset = 1;"), std::string::npos) << init;
  // Layout 1: X row (t, b) is b*seq + t; Y [batch, seq, dirs, hidden]; states [batch, dirs, hidden].
  EXPECT_NE(init.find("p.gxRowT = 1; p.gxRowB = 4;"), std::string::npos) << init;
  EXPECT_NE(init.find("p.yT = 200; p.yD = 100; p.yB = 800; p.stateD = 100; p.stateB = 200;"), std::string::npos) << init;
  EXPECT_NE(init.find("p.lens32 = nullptr; p.lens64 = reinterpret_cast<const int64_t*>"), std::string::npos) << init;
}

TEST(GpuRecurrentLowering, ScratchIsTheLargestStepsNotTheSum) {
  // Two LSTMs on one input: parallel-co-optimize is not run here, so they are two steps, each
  // with its own two launches; the scratch is the larger step's, not the sum.
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[4,2,8]
  input %w1 : f32[1,64,8]
  input %r1 : f32[1,64,16]
  input %w2 : f32[1,128,8]
  input %r2 : f32[1,128,32]
  %y1, %h1, %c1 = LSTM(%x, %w1, %r1) {hidden_size = 16}
  %y2, %h2, %c2 = LSTM(%x, %w2, %r2) {hidden_size = 32}
  output %y1, %y2
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("NUM_LAUNCHES"), "4");
  // The second LSTM: gx 4*2*128 floats = 4096 bytes, R^T 32*128 floats = 16384 bytes.
  EXPECT_EQ(vars->at("SCRATCH_BYTES"), std::to_string(4096 + 16384));
}

TEST(GpuRecurrentLowering, NoRecurrenceNoScratch) {
  auto vars = testing::emitGpu(R"(graph @t {
  input %x : f32[4,8]
  %y = Relu(%x)
  output %y
})");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("SCRATCH_BYTES"), "0");
  EXPECT_EQ(vars->at("KERNELS").find("phase"), std::string::npos);
}

TEST(GpuRecurrentLowering, RefusesWhatTheKernelsDoNotCover) {
  auto f64 = testing::emitGpu(R"(graph @t {
  input %x : f64[5,3,7]
  input %w : f64[1,60,7]
  input %r : f64[1,60,20]
  %y, %yh = GRU(%x, %w, %r) {hidden_size = 20}
  output %y
})");
  ASSERT_FALSE(f64.ok());
  EXPECT_EQ(f64.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(f64.status().message().find("(GRU)"), std::string::npos) << f64.status().message();
  EXPECT_NE(f64.status().message().find("f64"), std::string::npos) << f64.status().message();

  auto wide = testing::emitGpu(R"(graph @t {
  input %x : f32[2,1,4]
  input %w : f32[1,5000,4]
  input %r : f32[1,5000,5000]
  %y, %yh = RNN(%x, %w, %r) {hidden_size = 5000}
  output %y
})");
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(wide.status().message().find("hidden_size 5000"), std::string::npos) << wide.status().message();
}

}  // namespace
}  // namespace magneto
