// Loss op family (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss): shape inference, its
// errors for mismatched operands, and the reference kernels against hand-computed values for
// every reduction, weights, ignore_index (also with mean: divided by the weights of the samples
// kept), N-d inputs, float64 with int32 targets, and the target-out-of-range data error.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

// Log-probabilities x[2, 3] = [[-1, -2, -3], [-4, -5, -6]], targets [2, 0], weight [1, 2, 3].
std::string nllGraph(const std::string& operands, const std::string& attrs,
                     const char* target = "[2, 0]") {
  return std::string("graph @t {\n"
                     "  const %x : f32[2,3] = dense<[-1, -2, -3, -4, -5, -6]>\n"
                     "  const %t : i64[2] = dense<") +
         target +
         ">\n"
         "  const %w : f32[3] = dense<[1, 2, 3]>\n"
         "  %l = NegativeLogLikelihoodLoss(" +
         operands + ") {" + attrs + "}\n  output %l\n}\n";
}

double nll(const std::string& operands, const std::string& attrs,
           const char* target = "[2, 0]") {
  auto r = evalText(nllGraph(operands, attrs, target));
  if (!r.count("l") || r["l"].numel() != 1) {
    ADD_FAILURE() << "no scalar loss for " << operands << " {" << attrs << "}";
    return NAN;
  }
  EXPECT_EQ(r["l"].dims(), Dims{});
  return values(r["l"])[0];
}

TEST(LossNLL, ReductionsAndWeight) {
  auto r = evalText(nllGraph("%x, %t", "reduction = \"none\""));
  EXPECT_EQ(r["l"].dims(), (Dims{2}));
  expectNear(values(r["l"]), {3, 4});  // -x[0, 2], -x[1, 0]
  EXPECT_NEAR(nll("%x, %t", "reduction = \"sum\""), 7, 1e-6);
  EXPECT_NEAR(nll("%x, %t", ""), 3.5, 1e-6);  // mean is the default
  r = evalText(nllGraph("%x, %t, %w", "reduction = \"none\""));
  expectNear(values(r["l"]), {9, 4});  // 3 * w[2], 4 * w[0]
  EXPECT_NEAR(nll("%x, %t, %w", "reduction = \"sum\""), 13, 1e-6);
  // Weighted mean: the sum over the sum of the targets' weights, 13 / (3 + 1).
  EXPECT_NEAR(nll("%x, %t, %w", "reduction = \"mean\""), 3.25, 1e-6);
}

TEST(LossNLL, IgnoreIndex) {
  // Sample 0 (target 2) ignored: its loss and its weight drop out.
  auto r = evalText(nllGraph("%x, %t, %w", "reduction = \"none\", ignore_index = 2"));
  expectNear(values(r["l"]), {0, 4});
  // Mean divides by the kept samples' weight (1), not by the sample count (2).
  EXPECT_NEAR(nll("%x, %t, %w", "ignore_index = 2"), 4, 1e-6);
  EXPECT_NEAR(nll("%x, %t", "ignore_index = 2"), 4, 1e-6);
  EXPECT_NEAR(nll("%x, %t", "reduction = \"sum\", ignore_index = 2"), 4, 1e-6);
  // A negative ignore_index outside [0, C) is no error where it is the target.
  EXPECT_NEAR(nll("%x, %t, %w", "ignore_index = -1", "[-1, 1]"), 5, 1e-6);  // 5 * w[1] / w[1]
  // Every target ignored: 0 / 0.
  EXPECT_TRUE(std::isnan(nll("%x, %t", "ignore_index = 7", "[7, 7]")));
}

TEST(LossNLL, SpatialDimsFloat64AndInt32Target) {
  // x[0, c, d]: c = 0 -> [-1, -2], c = 1 -> [-3, -4]; targets [1, 0] pick x[0,1,0] and x[0,0,1].
  auto r = evalText(R"(graph @t {
  const %x : f64[1,2,2] = dense<[-1, -2, -3, -4]>
  const %t : i32[1,2] = dense<[1, 0]>
  %n = NegativeLogLikelihoodLoss(%x, %t) {reduction = "none"}
  %s = NegativeLogLikelihoodLoss(%x, %t) {reduction = "sum"}
  output %n, %s
})");
  EXPECT_EQ(r["n"].dtype(), DType::kF64);
  EXPECT_EQ(r["n"].dims(), (Dims{1, 2}));
  expectNear(values(r["n"]), {3, 2});
  expectNear(values(r["s"]), {5});
}

TEST(LossNLL, TargetOutOfRangeIsADataError) {
  for (const char* target : {"[3, 0]", "[-1, 0]"}) {
    auto g = parseGraph(nllGraph("%x, %t", "ignore_index = 5", target));
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto r = interpret(*g.value(), {});
    ASSERT_FALSE(r.ok()) << target;
    EXPECT_NE(r.status().message().find("outside [0, 3) and is not ignore_index"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(LossSCE, LogSoftmaxThenNLLWithLogProb) {
  // Row 0: equal scores, log_prob = -ln 2 each. Row 1: scores [0, ln 3], softmax [1/4, 3/4].
  const char* text = R"(graph @t {
  const %x : f32[2,2] = dense<[5, 5, 0, 1.0986122886681098]>
  const %t : i64[2] = dense<[0, 1]>
  const %w : f32[2] = dense<[2, 1]>
  %l, %p = SoftmaxCrossEntropyLoss(%x, %t) {reduction = "none"}
  %m = SoftmaxCrossEntropyLoss(%x, %t)
  %s = SoftmaxCrossEntropyLoss(%x, %t, %w) {reduction = "sum"}
  %wm = SoftmaxCrossEntropyLoss(%x, %t, %w)
  %i = SoftmaxCrossEntropyLoss(%x, %t, %w) {ignore_index = 0}
  output %l, %p, %m, %s, %wm, %i
})";
  auto r = evalText(text);
  const double ln2 = std::log(2.0), ln4over3 = std::log(4.0 / 3.0);
  EXPECT_EQ(r["p"].dims(), (Dims{2, 2}));
  expectNear(values(r["p"]), {-ln2, -ln2, -std::log(4.0), -ln4over3});
  expectNear(values(r["l"]), {ln2, ln4over3});
  expectNear(values(r["m"]), {(ln2 + ln4over3) / 2});
  expectNear(values(r["s"]), {2 * ln2 + ln4over3});
  expectNear(values(r["wm"]), {(2 * ln2 + ln4over3) / 3});
  expectNear(values(r["i"]), {ln4over3});  // row 0 ignored; weight 1 kept
}

TEST(LossSCE, SpatialDims) {
  // x[0, c, d] with C = 2, D = 2: column d = 0 has scores [0, 0], d = 1 has [0, ln 3].
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2,2] = dense<[0, 0, 0, 1.0986122886681098]>
  const %t : i64[1,2] = dense<[1, 0]>
  %l, %p = SoftmaxCrossEntropyLoss(%x, %t) {reduction = "none"}
  output %l, %p
})");
  EXPECT_EQ(r["l"].dims(), (Dims{1, 2}));
  expectNear(values(r["l"]), {std::log(2.0), std::log(4.0)});
  expectNear(values(r["p"]), {-std::log(2.0), -std::log(4.0), -std::log(2.0),
                              -std::log(4.0 / 3.0)});
}

TEST(LossShapes, InferenceAndErrors) {
  const char* head = "graph @t {\n  input %x : f32[2,3,4]\n  input %t : i64[2,4]\n"
                     "  input %w : f32[3]\n  input %t2 : i64[2,3]\n  input %w4 : f32[4]\n"
                     "  input %ti : f32[2,4]\n  input %xi : i32[2,3,4]\n";
  auto err = [&](const std::string& node) {
    return inferError(std::string(head) + "  " + node + "\n  output %l\n}\n");
  };
  EXPECT_EQ(err("%l = NegativeLogLikelihoodLoss(%x, %t, %w)"), "");
  EXPECT_EQ(err("%l, %p = SoftmaxCrossEntropyLoss(%x, %t, %w) {reduction = \"none\"}"), "");
  std::string e = err("%l = NegativeLogLikelihoodLoss(%x, %t2)");
  EXPECT_NE(e.find("target must be 2x4 (input without its class dim C = 3), got i64[2,3]"),
            std::string::npos) << e;
  e = err("%l = SoftmaxCrossEntropyLoss(%x, %w)");
  EXPECT_NE(e.find("target must be i32 or i64"), std::string::npos) << e;
  e = err("%l = SoftmaxCrossEntropyLoss(%x, %ti)");
  EXPECT_NE(e.find("target must be i32 or i64 class indices, got f32"), std::string::npos) << e;
  e = err("%l = NegativeLogLikelihoodLoss(%x, %t, %w4)");
  EXPECT_NE(e.find("weight must be [3] (one per class C)"), std::string::npos) << e;
  e = err("%l = NegativeLogLikelihoodLoss(%x, %t) {reduction = \"avg\"}");
  EXPECT_NE(e.find("reduction must be 'none', 'sum' or 'mean', got 'avg'"), std::string::npos)
      << e;
  e = err("%l = NegativeLogLikelihoodLoss(%xi, %t)");
  EXPECT_NE(e.find("input must be f32 or f64, got i32"), std::string::npos) << e;
  e = err("%l = NegativeLogLikelihoodLoss(%w, %t)");
  EXPECT_NE(e.find("rank >= 2"), std::string::npos) << e;
}

}  // namespace
