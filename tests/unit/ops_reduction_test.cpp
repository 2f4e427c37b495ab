// Reduction op family: shape inference (axes as attribute or operand, keepdims, empty axes, error
// messages) and the reference kernels against hand-computed values, through textual IR,
// inferShapes and the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;


TEST(ReductionOps, ReduceMeanAxesAttributeAndOperand) {
  RUN_OK(out, R"(graph @t {
  const %x : f32[2,3] = dense<[1, 2, 3, 4, 5, 6]>
  const %ax : i64[1] = dense<[0]>
  %byAttr = ReduceMean(%x) {axes = [1], keepdims = 0}
  %byOperand = ReduceMean(%x, %ax)
  %negative = ReduceMean(%x) {axes = [-1]}
  output %byAttr, %byOperand, %negative
})");
  ASSERT_EQ(out.at("byAttr").dims(), (Dims{2}));
  EXPECT_EQ(values<float>(out.at("byAttr")), (std::vector<float>{2, 5}));
  ASSERT_EQ(out.at("byOperand").dims(), (Dims{1, 3}));
  EXPECT_EQ(values<float>(out.at("byOperand")), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  ASSERT_EQ(out.at("negative").dims(), (Dims{2, 1}));
  EXPECT_EQ(values<float>(out.at("negative")), (std::vector<float>{2, 5}));
}

TEST(ReductionOps, ReduceSumEmptyAxes) {
  RUN_OK(out, R"(graph @t {
  const %x : i64[2,2] = dense<[1, 2, 3, 4]>
  %noop = ReduceSum(%x) {noop_with_empty_axes = 1}
  %all = ReduceSum(%x)
  %flat = ReduceSum(%x) {keepdims = 0}
  output %noop, %all, %flat
})");
  ASSERT_EQ(out.at("noop").dims(), (Dims{2, 2}));
  EXPECT_EQ(values<int64_t>(out.at("noop")), (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(out.at("all").dims(), (Dims{1, 1}));
  EXPECT_EQ(values<int64_t>(out.at("all")), (std::vector<int64_t>{10}));
  ASSERT_EQ(out.at("flat").dims(), (Dims{}));
  EXPECT_EQ(values<int64_t>(out.at("flat")), (std::vector<int64_t>{10}));
}

TEST(ReductionOps, OtherReducers) {
  RUN_OK(out, R"(graph @t {
  const %x : f32[2,3] = dense<[1, -2, 3, 4, 0, -6]>
  %max = ReduceMax(%x) {axes = [1], keepdims = 0}
  %min = ReduceMin(%x) {axes = [0], keepdims = 0}
  %prod = ReduceProd(%x) {axes = [1], keepdims = 0}
  %l1 = ReduceL1(%x) {axes = [1], keepdims = 0}
  %l2 = ReduceL2(%x) {axes = [0], keepdims = 0}
  %ss = ReduceSumSquare(%x) {axes = [1], keepdims = 0}
  %lse = ReduceLogSumExp(%x) {axes = [1], keepdims = 0}
  %ls = ReduceLogSum(%x) {axes = [0], keepdims = 0}
  output %max, %min, %prod, %l1, %l2, %ss, %lse, %ls
})");
  EXPECT_EQ(values<float>(out.at("max")), (std::vector<float>{3, 4}));
  EXPECT_EQ(values<float>(out.at("min")), (std::vector<float>{1, -2, -6}));
  EXPECT_EQ(values<float>(out.at("prod")), (std::vector<float>{-6, -0.f}));
  EXPECT_EQ(values<float>(out.at("l1")), (std::vector<float>{6, 10}));
  std::vector<float> l2 = values<float>(out.at("l2"));
  EXPECT_NEAR(l2[0], std::sqrt(17.), 1e-6);
  EXPECT_EQ(l2[1], 2.f);
  EXPECT_NEAR(l2[2], std::sqrt(45.), 1e-6);
  EXPECT_EQ(values<float>(out.at("ss")), (std::vector<float>{14, 52}));
  std::vector<float> lse = values<float>(out.at("lse"));
  EXPECT_NEAR(lse[0], std::log(std::exp(1.) + std::exp(-2.) + std::exp(3.)), 1e-6);
  EXPECT_NEAR(lse[1], std::log(std::exp(4.) + 1 + std::exp(-6.)), 1e-6);
  std::vector<float> ls = values<float>(out.at("ls"));
  EXPECT_NEAR(ls[0], std::log(5.f), 1e-6);
  EXPECT_TRUE(std::isnan(ls[2]));  // ln(-3)
}

TEST(ReductionOps, ReduceMaxMinOnBool) {
  // Opset 20: bool inputs; max is "any", min is "all". Sums stay numeric only.
  RUN_OK(out, R"(graph @t {
  const %x : bool[2,3] = dense<[1, 0, 0, 0, 0, 0]>
  %any = ReduceMax(%x) {axes = [1], keepdims = 0}
  %all = ReduceMin(%x) {axes = [0], keepdims = 0}
  output %any, %all
})");
  EXPECT_EQ(out.at("any").dtype(), DType::kBool);
  EXPECT_EQ(values<uint8_t>(out.at("any")), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(values<uint8_t>(out.at("all")), (std::vector<uint8_t>{0, 0, 0}));
  std::string e = inferError(R"(graph @t {
  input %x : bool[2,3]
  %y = ReduceSum(%x)
  output %y
})");
  EXPECT_NE(e.find("operand 0 has type bool"), std::string::npos) << e;
}

TEST(ReductionOps, ArgMaxSelectLastIndex) {
  RUN_OK(out, R"(graph @t {
  const %x : f32[2,3] = dense<[2, 5, 5, 7, 7, 1]>
  %first = ArgMax(%x) {axis = 1}
  %last = ArgMax(%x) {axis = 1, select_last_index = 1, keepdims = 0}
  %min = ArgMin(%x) {axis = 0, keepdims = 0}
  output %first, %last, %min
})");
  EXPECT_EQ(out.at("first").dtype(), DType::kI64);
  ASSERT_EQ(out.at("first").dims(), (Dims{2, 1}));
  EXPECT_EQ(values<int64_t>(out.at("first")), (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(out.at("last").dims(), (Dims{2}));
  EXPECT_EQ(values<int64_t>(out.at("last")), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<int64_t>(out.at("min")), (std::vector<int64_t>{0, 0, 1}));
}

TEST(ReductionOps, SoftmaxAxisAndCoerce2d) {
  std::vector<float> xs = {1, 2, 3, 4, -1, 0, 1, 5};
  RUN_OK(out, R"(graph @t {
  input %x : f32[2,2,2]
  %s13 = Softmax(%x) {axis = 1}
  %s11 = Softmax(%x) {axis = 1, mg_coerce_2d = 1}
  %ls = LogSoftmax(%x)
  %hm = Hardmax(%x) {axis = 1, mg_coerce_2d = 1}
  output %s13, %s11, %ls, %hm
})",
         {{"x", Tensor::fromVector<float>(DType::kF32, {2, 2, 2}, xs)}});
  // opset-13 semantics: along axis 1 only (pairs x[b,0,k], x[b,1,k]).
  std::vector<float> s13 = values<float>(out.at("s13"));
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 2; ++k) {
      float a = xs[b * 4 + k], c = xs[b * 4 + 2 + k];
      EXPECT_NEAR(s13[b * 4 + k], std::exp(a) / (std::exp(a) + std::exp(c)), 1e-6);
    }
  // Coerced to 2-D [2, 4]: over the four trailing elements of each batch.
  std::vector<float> s11 = values<float>(out.at("s11"));
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int j = 0; j < 4; ++j) sum += std::exp(xs[b * 4 + j]);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(s11[b * 4 + j], std::exp(xs[b * 4 + j]) / sum, 1e-6);
  }
  std::vector<float> ls = values<float>(out.at("ls"));
  EXPECT_NEAR(ls[0], 1 - std::log(std::exp(1.) + std::exp(2.)), 1e-6);
  EXPECT_EQ(values<float>(out.at("hm")), (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(ReductionOps, TopKLargestAndSmallest) {
  RUN_OK(out, R"(graph @t {
  const %x : f32[2,4] = dense<[3, 1, 3, 2, 0, 9, 8, 9]>
  const %k : i64[1] = dense<[2]>
  %v, %i = TopK(%x, %k)
  %sv, %si = TopK(%x, %k) {largest = 0}
  %cv, %ci = TopK(%x, %k) {axis = 0}
  output %v, %i, %sv, %si, %cv, %ci
})");
  ASSERT_EQ(out.at("v").dims(), (Dims{2, 2}));
  EXPECT_EQ(out.at("i").dtype(), DType::kI64);
  EXPECT_EQ(values<float>(out.at("v")), (std::vector<float>{3, 3, 9, 9}));
  EXPECT_EQ(values<int64_t>(out.at("i")), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(values<float>(out.at("sv")), (std::vector<float>{1, 2, 0, 8}));
  EXPECT_EQ(values<int64_t>(out.at("si")), (std::vector<int64_t>{1, 3, 0, 2}));
  ASSERT_EQ(out.at("cv").dims(), (Dims{2, 4}));
  EXPECT_EQ(values<float>(out.at("cv")), (std::vector<float>{3, 9, 8, 9, 0, 1, 3, 2}));
  EXPECT_EQ(values<int64_t>(out.at("ci")), (std::vector<int64_t>{0, 1, 1, 1, 1, 0, 0, 0}));
}

TEST(ReductionOps, CumSumExclusiveReverse) {
  RUN_OK(out, R"(graph @t {
  const %x : i32[2,4] = dense<[1, 2, 3, 4, 10, 20, 30, 40]>
  const %ax : i64[] = dense<[1]>
  const %ax0 : i32[1] = dense<[-2]>
  %plain = CumSum(%x, %ax)
  %ex = CumSum(%x, %ax) {exclusive = 1}
  %rev = CumSum(%x, %ax) {reverse = 1}
  %both = CumSum(%x, %ax) {exclusive = 1, reverse = 1}
  %rows = CumSum(%x, %ax0)
  output %plain, %ex, %rev, %both, %rows
})");
  EXPECT_EQ(values<int32_t>(out.at("plain")), (std::vector<int32_t>{1, 3, 6, 10, 10, 30, 60, 100}));
  EXPECT_EQ(values<int32_t>(out.at("ex")), (std::vector<int32_t>{0, 1, 3, 6, 0, 10, 30, 60}));
  EXPECT_EQ(values<int32_t>(out.at("rev")), (std::vector<int32_t>{10, 9, 7, 4, 100, 90, 70, 40}));
  EXPECT_EQ(values<int32_t>(out.at("both")), (std::vector<int32_t>{9, 7, 4, 0, 90, 70, 40, 0}));
  EXPECT_EQ(values<int32_t>(out.at("rows")), (std::vector<int32_t>{1, 2, 3, 4, 11, 22, 33, 44}));
}

TEST(ReductionOps, ShapeInferenceErrors) {
  std::string e = inferError(R"(graph @t {
  input %x : f32[2,3]
  %y = ReduceSum(%x) {axes = [3]}
  output %y
})");
  EXPECT_NE(e.find("axis 3 is out of range for rank 2"), std::string::npos) << e;
  EXPECT_NE(e.find("ReduceSum"), std::string::npos) << e;

  e = inferError(R"(graph @t {
  input %x : f32[2,3]
  %y = ReduceMax(%x) {axes = [1, -1]}
  output %y
})");
  EXPECT_NE(e.find("appears twice"), std::string::npos) << e;

  e = inferError(R"(graph @t {
  input %x : f32[2,3]
  input %ax : i64[1]
  %y = ReduceMean(%x, %ax)
  output %y
})");
  EXPECT_NE(e.find("must be known at compile time"), std::string::npos) << e;

  e = inferError(R"(graph @t {
  input %x : f32[2,3]
  const %k : i64[1] = dense<[5]>
  %v, %i = TopK(%x, %k)
  output %v
})");
  EXPECT_NE(e.find("K is 5, expected 0 to 3"), std::string::npos) << e;

  e = inferError(R"(graph @t {
  input %x : i32[2,3]
  %y = Softmax(%x)
  output %y
})");
  EXPECT_NE(e.find("operand 0 has type i32, expected"), std::string::npos) << e;
}

TEST(ReductionOps, EveryOpHasAReferenceKernel) {
  const char* ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                       "ReduceSumSquare", "ArgMax", "ArgMin", "Softmax", "LogSoftmax", "Hardmax",
                       "CumSum", "TopK"};
  for (const char* op : ops) {
    EXPECT_NE(OpRegistry::instance().find(op), nullptr) << op;
    EXPECT_TRUE(hasReferenceKernel(op)) << op;
  }
}
