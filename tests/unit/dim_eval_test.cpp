// The evaluator of dynamic packages' dimension code (runtime/common/mg_dim_eval.h): every op,
// rounding of the divisions for every sign combination against a reference in wider arithmetic,
// overflow and division by zero refused (output left alone), malformed programs refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mg_dim_eval.h"

namespace {

using mgrt::abi::evalDimCode;

int64_t dimEvalOk(const std::vector<int64_t>& code, const std::vector<int64_t>& syms, int64_t* words = nullptr) {
  int64_t v = -777;
  int s = evalDimCode(code.data(), syms.data(), static_cast<int>(syms.size()), &v, words);
  EXPECT_EQ(s, mgrt::abi::kDimEvalOk) << mgrt::abi::dimEvalStatusText(s);
  return v;
}

int dimEvalStatus(const std::vector<int64_t>& code, const std::vector<int64_t>& syms) {
  int64_t v = -777;
  int s = evalDimCode(code.data(), syms.data(), static_cast<int>(syms.size()), &v);
  if (s != 0) EXPECT_EQ(v, -777) << "a refused expression must leave the output alone";
  return s;
}

using namespace mgrt::abi;  // NOLINT: DimOp names read like the code they build

TEST(DimEval, PolynomialsOfSymbols) {
  // 2*N*T + 1 with N = 3, T = 5.
  const std::vector<int64_t> code = {kDimConst, 2, kDimSym, 0, kDimMul, kDimSym, 1, kDimMul,
                                     kDimConst, 1, kDimAdd, kDimEnd};
  int64_t words = 0;
  EXPECT_EQ(dimEvalOk(code, {3, 5}, &words), 31);
  EXPECT_EQ(words, static_cast<int64_t>(code.size()));
  EXPECT_EQ(dimEvalOk({kDimSym, 0, kDimSym, 1, kDimSub, kDimEnd}, {3, 5}), -2);
  EXPECT_EQ(dimEvalOk({kDimSym, 0, kDimSym, 1, kDimMin, kDimEnd}, {3, 5}), 3);
  EXPECT_EQ(dimEvalOk({kDimSym, 0, kDimSym, 1, kDimMax, kDimEnd}, {3, 5}), 5);
  EXPECT_EQ(dimEvalOk({kDimConst, 42, kDimEnd}, {}), 42);
  // Two expressions back to back: the second starts after the first's kDimEnd.
  const std::vector<int64_t> two = {kDimSym, 0, kDimEnd, kDimSym, 0, kDimConst, 4, kDimMul, kDimEnd};
  EXPECT_EQ(dimEvalOk(two, {7}, &words), 7);
  EXPECT_EQ(words, 3);
  int64_t v = 0;
  ASSERT_EQ(evalDimCode(two.data() + words, std::vector<int64_t>{7}.data(), 1, &v), kDimEvalOk);
  EXPECT_EQ(v, 28);
}

TEST(DimEval, DivisionRoundsAsDeclaredForEverySign) {
  for (int64_t a = -9; a <= 9; ++a)
    for (int64_t b = -4; b <= 4; ++b) {
      if (b == 0) continue;
      const long double q = static_cast<long double>(a) / b;
      int64_t fl = static_cast<int64_t>(q), ce = fl;
      if (static_cast<long double>(fl) > q) --fl;
      if (static_cast<long double>(ce) < q) ++ce;
      EXPECT_EQ(dimEvalOk({kDimConst, a, kDimConst, b, kDimFloorDiv, kDimEnd}, {}), fl) << a << "/" << b;
      EXPECT_EQ(dimEvalOk({kDimConst, a, kDimConst, b, kDimCeilDiv, kDimEnd}, {}), ce) << a << "/" << b;
      EXPECT_EQ(dimEvalOk({kDimConst, a, kDimConst, b, kDimMod, kDimEnd}, {}), a - b * fl) << a << "%" << b;
    }
  // floor((T + 1) / 2) at T = 1..6, the shape of a stride-2 layer.
  const std::vector<int64_t> half = {kDimSym, 0, kDimConst, 1, kDimAdd, kDimConst, 2, kDimFloorDiv, kDimEnd};
  for (int64_t t = 1; t <= 6; ++t) EXPECT_EQ(dimEvalOk(half, {t}), (t + 1) / 2);
  EXPECT_EQ(dimEvalOk({kDimConst, INT64_MIN, kDimConst, -1, kDimMod, kDimEnd}, {}), 0);
}

TEST(DimEval, OverflowAndDivisionByZeroAreRefused) {
  const int64_t big = INT64_MAX, small = INT64_MIN;
  EXPECT_EQ(dimEvalStatus({kDimConst, big, kDimConst, 1, kDimAdd, kDimEnd}, {}), kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, small, kDimConst, 1, kDimSub, kDimEnd}, {}), kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, big, kDimConst, -1, kDimSub, kDimEnd}, {}), kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimSym, 0, kDimSym, 0, kDimMul, kDimEnd}, {int64_t{1} << 32}), kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, -(int64_t{1} << 32), kDimConst, int64_t{1} << 32, kDimMul, kDimEnd}, {}),
            kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, -(int64_t{1} << 32), kDimConst, -(int64_t{1} << 32), kDimMul, kDimEnd}, {}),
            kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, small, kDimConst, -1, kDimMul, kDimEnd}, {}), kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, small, kDimConst, -1, kDimFloorDiv, kDimEnd}, {}), kDimEvalOverflow);
  EXPECT_EQ(dimEvalStatus({kDimConst, small, kDimConst, -1, kDimCeilDiv, kDimEnd}, {}), kDimEvalOverflow);
  // Just inside the range is fine.
  EXPECT_EQ(dimEvalOk({kDimConst, small, kDimConst, 1, kDimMul, kDimEnd}, {}), small);
  EXPECT_EQ(dimEvalOk({kDimConst, big - 1, kDimConst, 1, kDimAdd, kDimEnd}, {}), big);
  EXPECT_EQ(dimEvalOk({kDimConst, int64_t{3037000499}, kDimConst, int64_t{3037000499}, kDimMul, kDimEnd}, {}),
            int64_t{3037000499} * 3037000499);
  for (int64_t op : {int64_t{kDimFloorDiv}, int64_t{kDimCeilDiv}, int64_t{kDimMod}})
    EXPECT_EQ(dimEvalStatus({kDimSym, 0, kDimSym, 1, op, kDimEnd}, {5, 0}), kDimEvalDivByZero) << op;
}

TEST(DimEval, MalformedCodeIsRefused) {
  EXPECT_EQ(dimEvalStatus({kDimEnd}, {}), kDimEvalBadCode);                              // empty
  EXPECT_EQ(dimEvalStatus({kDimConst, 1, kDimAdd, kDimEnd}, {}), kDimEvalBadCode);       // underflow
  EXPECT_EQ(dimEvalStatus({kDimConst, 1, kDimConst, 2, kDimEnd}, {}), kDimEvalBadCode);  // two left
  EXPECT_EQ(dimEvalStatus({kDimSym, 2, kDimEnd}, {1, 2}), kDimEvalBadCode);              // no symbol 2
  EXPECT_EQ(dimEvalStatus({kDimSym, -1, kDimEnd}, {1}), kDimEvalBadCode);
  EXPECT_EQ(dimEvalStatus({kDimConst, 1, 99, kDimEnd}, {}), kDimEvalBadCode);  // unknown op
  std::vector<int64_t> deep;
  for (int i = 0; i <= kDimEvalStackDepth; ++i) deep.insert(deep.end(), {kDimConst, 1});
  deep.push_back(kDimEnd);
  EXPECT_EQ(dimEvalStatus(deep, {}), kDimEvalBadCode);
  int64_t v = 0;
  EXPECT_EQ(evalDimCode(nullptr, nullptr, 0, &v), kDimEvalBadCode);
}

}  // namespace
