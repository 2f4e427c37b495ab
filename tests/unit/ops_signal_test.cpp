// Signal op family (src/ops/signal_ops.cpp, runtime/cpu/k_signal.cpp): the windows of 4 points
// (periodic and symmetric), DFT of [1, 2, 3, 4] (full, onesided, inverse, zero-padded and cut by
// dft_length, along either axis of a 2-D signal), STFT frames with and without a window,
// MelWeightMatrix against the ONNX spec's example, and shape inference with its errors.
#include <gtest/gtest.h>

#include <string>

#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

// The graph `body` (nodes writing %y) with the constants every test here uses.
std::map<std::string, Tensor> run(const std::string& body) {
  return evalText("graph @t {\n"
                  "  const %n4 : i64[] = dense<[4]>\n"
                  "  const %n1 : i32[] = dense<[1]>\n"
                  "  const %x : f32[1,4,1] = dense<[1, 2, 3, 4]>\n" +
                  body + "\n  output %y\n}\n");
}

TEST(SignalWindows, FourPoints) {
  // Periodic: N = 4, angles 0, pi/2, pi, 3pi/2. Symmetric: N = 3, angles 0, 2pi/3, 4pi/3, 2pi.
  expectNear(values(run("%y = HannWindow(%n4)")["y"]), {0, 0.5, 1, 0.5});
  expectNear(values(run("%y = HannWindow(%n4) {periodic = 0}")["y"]), {0, 0.75, 0.75, 0});
  const double lo = 4.0 / 46, mid = 25.0 / 46;  // 25/46 - 21/46 and 25/46 - 0
  expectNear(values(run("%y = HammingWindow(%n4)")["y"]), {lo, mid, 1, mid});
  // 0.42 - 0.5 cos + 0.08 cos(2 angle): 0, 0.42 - 0.08, 0.42 + 0.5 + 0.08, 0.34.
  expectNear(values(run("%y = BlackmanWindow(%n4)")["y"]), {0, 0.34, 1, 0.34});
  // Symmetric Blackman, N = 3: cos(2pi/3) = cos(4pi/3) = -0.5, so 0.42 + 0.25 - 0.04 inside.
  expectNear(values(run("%y = BlackmanWindow(%n4) {periodic = 0}")["y"]), {0, 0.63, 0.63, 0});
}

TEST(SignalWindows, Float64OnePointAndEmpty) {
  auto r = run("%y = HannWindow(%n4) {output_datatype = 11}");
  EXPECT_EQ(r["y"].dtype(), DType::kF64);
  expectNear(values(r["y"]), {0, 0.5, 1, 0.5});
  // A symmetric window of one point is its peak; a periodic one is the formula at n = 0.
  expectNear(values(run("%y = HammingWindow(%n1) {periodic = 0}")["y"]), {1});
  expectNear(values(run("%y = HannWindow(%n1)")["y"]), {0});
  auto e = evalText("graph @t {\n  const %z : i64[] = dense<[0]>\n  %y = HannWindow(%z)\n"
                    "  output %y\n}\n");
  EXPECT_EQ(e["y"].dims(), (Dims{0}));
}

// DFT of [1, 2, 3, 4]: X = [10, -2 + 2i, -2, -2 - 2i].
TEST(SignalDFT, KnownSequence) {
  auto r = run("%y = DFT(%x)");
  EXPECT_EQ(r["y"].dims(), (Dims{1, 4, 2}));
  expectNear(values(r["y"]), {10, 0, -2, 2, -2, 0, -2, -2});
  r = run("%y = DFT(%x) {onesided = 1}");
  EXPECT_EQ(r["y"].dims(), (Dims{1, 3, 2}));
  expectNear(values(r["y"]), {10, 0, -2, 2, -2, 0});
  // The inverse of X is [1, 2, 3, 4] again (divided by n).
  r = evalText(R"(graph @t {
  const %X : f64[1,4,2] = dense<[10, 0, -2, 2, -2, 0, -2, -2]>
  %y = DFT(%X) {inverse = 1}
  output %y
})");
  EXPECT_EQ(r["y"].dtype(), DType::kF64);
  expectNear(values(r["y"]), {1, 0, 2, 0, 3, 0, 4, 0});
}

TEST(SignalDFT, DftLengthPadsOrCuts) {
  // n = 2 keeps [1, 2]: [3, -1]. n = 6 pads [1, 2, 3, 4, 0, 0]: X0 = 10, X3 = 1 - 2 + 3 - 4.
  auto r = run("const %l : i64[] = dense<[2]>\n  %y = DFT(%x, %l)");
  expectNear(values(r["y"]), {3, 0, -1, 0});
  r = run("const %l : i32[] = dense<[6]>\n  %y = DFT(%x, %l)");
  ASSERT_EQ(r["y"].dims(), (Dims{1, 6, 2}));
  std::vector<double> y = values(r["y"]);
  EXPECT_NEAR(y[0], 10, 1e-5);
  EXPECT_NEAR(y[6], -2, 1e-5);
  EXPECT_NEAR(y[7], 0, 1e-5);
}

TEST(SignalDFT, EitherAxisOfATwoDimensionalSignal) {
  // [[1, 2], [3, 4]]: down the columns [1, 3] -> [4, -2], [2, 4] -> [6, -2]; along the rows
  // [1, 2] -> [3, -1], [3, 4] -> [7, -1].
  const char* head = "graph @t {\n  const %m : f32[1,2,2,1] = dense<[1, 2, 3, 4]>\n";
  auto r = evalText(std::string(head) + "  %y = DFT(%m)\n  output %y\n}\n");
  expectNear(values(r["y"]), {4, 0, 6, 0, -2, 0, -2, 0});
  r = evalText(std::string(head) + "  %y = DFT(%m) {axis = -2}\n  output %y\n}\n");
  expectNear(values(r["y"]), {3, 0, -1, 0, 7, 0, -1, 0});
}

TEST(SignalSTFT, FramesWithAndWithoutWindow) {
  // Signal [1..6], frames of 4 every 2: [1, 2, 3, 4] and [3, 4, 5, 6]; onesided: 3 bins.
  const char* head = "graph @t {\n  const %s : f32[1,6,1] = dense<[1, 2, 3, 4, 5, 6]>\n"
                     "  const %step : i64[] = dense<[2]>\n  const %len : i64[] = dense<[4]>\n"
                     "  const %w : f32[4] = dense<[0, 1, 1, 0]>\n";
  auto r = evalText(std::string(head) + "  %y = STFT(%s, %step, _, %len)\n  output %y\n}\n");
  EXPECT_EQ(r["y"].dims(), (Dims{1, 2, 3, 2}));
  expectNear(values(r["y"]), {10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0});
  // Windowed frames [0, 2, 3, 0] and [0, 4, 5, 0].
  r = evalText(std::string(head) + "  %y = STFT(%s, %step, %w)\n  output %y\n}\n");
  expectNear(values(r["y"]), {5, 0, -3, -2, 1, 0, 9, 0, -5, -4, 1, 0});
  r = evalText(std::string(head) + "  %y = STFT(%s, %step, %w, %len) {onesided = 0}\n"
               "  output %y\n}\n");
  EXPECT_EQ(r["y"].dims(), (Dims{1, 2, 4, 2}));
  expectNear(values(r["y"]), {5, 0, -3, -2, 1, 0, -3, 2, 9, 0, -5, -4, 1, 0, -5, 4});
}

const char* kMel = R"(graph @t {
  const %bins : i32[] = dense<[8]>
  const %len : i32[] = dense<[16]>
  const %rate : i32[] = dense<[8192]>
  const %lo : f32[] = dense<[0]>
  const %hi : f32[] = dense<[HI]>
  %y = MelWeightMatrix(%bins, %len, %rate, %lo, %hi)
  output %y
})";

std::string melGraph(const std::string& hi) {
  std::string s = kMel;
  return s.replace(s.find("HI"), 2, hi);
}

TEST(SignalMelWeightMatrix, SpecExample) {
  // The example of ONNX's MelWeightMatrix spec (8 mel bins of a 16-point DFT at 8192 Hz, 0 to
  // 4096 Hz). The 10 mel points 0, 148.5, 328.6, 546.9, 811.5, 1132.3, ... Hz fall on the
  // spectrogram bins floor(17 hz / 8192) = 0, 0, 0, 1, 1, 2, 3, 4, 5, 6: every filter is a
  // single 1 at its center (filters 0 and 1 at bin 0, 2 and 3 at bin 1, then one per bin).
  auto r = evalText(melGraph("4096"));
  ASSERT_EQ(r["y"].dims(), (Dims{9, 8}));
  std::vector<double> want(72, 0.0);
  for (auto [row, col] : {std::pair{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}})
    want[row * 8 + col] = 1;
  expectNear(values(r["y"]), want);
}

TEST(SignalMelWeightMatrix, EdgePastNyquistIsADataError) {
  auto g = parseGraph(melGraph("40000"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto r = interpret(*g.value(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reaches past the last spectrogram bin (8)"),
            std::string::npos)
      << r.status().message();
}

TEST(SignalShapes, InferenceErrors) {
  const char* head = "graph @t {\n  input %n : i64[]\n  input %c : f32[1,8,2]\n"
                     "  input %r : f32[1,8,1]\n  const %two : i64[] = dense<[2]>\n"
                     "  const %four : i64[] = dense<[4]>\n  const %w3 : f32[3] = dense<[1, 1, 1]>\n";
  auto err = [&](const std::string& node) {
    return inferError(std::string(head) + "  " + node + "\n  output %y\n}\n");
  };
  EXPECT_EQ(err("%y = STFT(%c, %two, _, %four) {onesided = 0}"), "");
  std::string e = err("%y = HannWindow(%n)");
  EXPECT_NE(e.find("must be known at compile time"), std::string::npos) << e;
  e = err("%y = HannWindow(%four) {output_datatype = 7}");
  EXPECT_NE(e.find("HannWindow: output_datatype 7 is not supported"), std::string::npos) << e;
  e = err("%y = DFT(%r) {axis = -1}");
  EXPECT_NE(e.find("DFT: axis -1 is out of range for input f32[1,8,1]"), std::string::npos) << e;
  e = err("%y = DFT(%c) {onesided = 1}");
  EXPECT_NE(e.find("onesided = 1 needs a real input"), std::string::npos) << e;
  e = err("%y = DFT(%w3)");
  EXPECT_NE(e.find("DFT: input must be [batch, signal dims..., 1|2]"), std::string::npos) << e;
  e = err("%y = STFT(%c, %two, _, %four)");
  EXPECT_NE(e.find("onesided = 1 (the default) needs a real signal"), std::string::npos) << e;
  e = err("%y = STFT(%r, %two, %w3, %four)");
  EXPECT_NE(e.find("frame_length 4 differs from the window's length 3"), std::string::npos) << e;
  e = err("%y = STFT(%r, %two)");
  EXPECT_NE(e.find("needs a window or a frame_length"), std::string::npos) << e;
}

}  // namespace
