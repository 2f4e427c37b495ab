// Tests of the fast LayerNormalization and RMSNormalization kernels (runtime/cpu/f_norm.cpp)
// against the reference kernels (k_nn_norm.cpp, k_nn_attention.cpp, which accumulate in double):
// row lengths 1, 3, 17, 64, 1000 (tails of every size against the 16 lanes), row counts that no
// thread chunk divides and counts big enough for the pool, with and without bias, with the Mean
// and InvStdDev results, normalization over two trailing axes, rows with a large mean (where a
// one-pass variance would cancel), and the cases that go to the reference kernel (broadcast
// scale, float64), on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mg_kernels.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

// A named namespace: the unity build compiles this file together with the other unit tests.
namespace fast_norm_test {

using mgrt::Tensor;

template <typename T>
struct Buf {
  std::vector<T> v;
  Tensor t;
  explicit Buf(const std::vector<int64_t>& dims, std::mt19937* rng = nullptr, double lo = -3, double hi = 3) {
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    v.assign(static_cast<size_t>(n), T(777));
    if (rng) {
      std::uniform_real_distribution<double> d(lo, hi);
      for (auto& x : v) x = static_cast<T>(d(*rng));
    }
    t.data = v.data();
    t.dtype = sizeof(T) == 4 ? mgrt::kF32 : mgrt::kF64;
  }
};
using Arr = Buf<float>;

// Runs op's fast and reference kernels on the same operands into results of outDims; compares
// every result within rtol/atol (0, 0: bit for bit, for the cases that must go to the reference).
template <typename T>
void expectSame(const char* op, const std::string& attrs, std::vector<Buf<T>*> ins,
                const std::vector<std::vector<int64_t>>& outDims, mgrt::ThreadPool* pool, double rtol, double atol) {
  SCOPED_TRACE(std::string(op) + " " + attrs + " n=" + std::to_string(ins[0]->t.dims[ins[0]->t.rank - 1]));
  std::vector<Tensor> in;
  for (auto* a : ins) in.push_back(a->t);
  std::vector<std::unique_ptr<Buf<T>>> want, got;
  std::vector<Tensor> wt, gt;
  for (const auto& d : outDims) {
    want.push_back(std::make_unique<Buf<T>>(d));
    got.push_back(std::make_unique<Buf<T>>(d));
    wt.push_back(want.back()->t);
    gt.push_back(got.back()->t);
  }
  mgrt::Attrs a(attrs.c_str());
  mgrt::Ctx rc;
  const int nout = static_cast<int>(outDims.size());
  ASSERT_EQ(mgrt::findKernel(op)(a, in.data(), static_cast<int>(in.size()), wt.data(), nout, rc), 0) << rc.error;
  mgrt::KernelFn f = mgrt::findFastKernel(op);
  ASSERT_NE(f, nullptr);
  mgrt::Ctx c;
  c.pool = pool;
  ASSERT_EQ(f(a, in.data(), static_cast<int>(in.size()), gt.data(), nout, c), 0) << c.error;
  for (size_t o = 0; o < want.size(); ++o)
    for (size_t i = 0; i < want[o]->v.size(); ++i) {
      const double w = want[o]->v[i], g = got[o]->v[i];
      ASSERT_LE(std::fabs(g - w), atol + rtol * std::fabs(w))
          << "result " << o << " index " << i << ": fast " << g << " reference " << w;
    }
}

class FastNorm : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() > 1) pool_ = std::make_unique<mgrt::ThreadPool>(GetParam());
  }
  std::unique_ptr<mgrt::ThreadPool> pool_;
  std::mt19937 rng_{41};
};

TEST_P(FastNorm, LayerNormRows) {
  for (int64_t n : {1, 3, 17, 64, 1000}) {
    // 7 rows stay on one thread; 37 (n = 1000) and 2053 rows (n <= 64) go to the pool in chunks
    // that do not divide them.
    for (int64_t rows : {int64_t{7}, n >= 1000 ? int64_t{37} : int64_t{2053}}) {
      Arr x({rows, n}, &rng_), s({n}, &rng_), b({n}, &rng_);
      expectSame<float>("LayerNormalization", "axis=i:-1;epsilon=f:1e-5", {&x, &s, &b}, {{rows, n}}, pool_.get(),
                        2e-5, 2e-5);
      expectSame<float>("LayerNormalization", "axis=i:1;epsilon=f:1e-12", {&x, &s}, {{rows, n}}, pool_.get(), 2e-5,
                        2e-5);
      // Mean and InvStdDev ([rows, 1]), also with only one of them asked for.
      expectSame<float>("LayerNormalization", "axis=i:-1", {&x, &s, &b}, {{rows, n}, {rows, 1}, {rows, 1}},
                        pool_.get(), 2e-5, 2e-5);
    }
  }
  {  // Mean without InvStdDev
    Arr x({5, 17}, &rng_), s({17}, &rng_);
    Arr y({5, 17}), mean({5, 1});
    Tensor in[] = {x.t, s.t};
    Tensor out[] = {y.t, mean.t, Tensor{}};
    mgrt::Ctx c;
    ASSERT_EQ(mgrt::findFastKernel("LayerNormalization")(mgrt::Attrs("axis=i:-1"), in, 2, out, 3, c), 0) << c.error;
    for (int r = 0; r < 5; ++r) {
      double sum = 0;
      for (int j = 0; j < 17; ++j) sum += x.v[r * 17 + j];
      EXPECT_NEAR(mean.v[r], sum / 17, 1e-5);
    }
  }
}

TEST_P(FastNorm, LayerNormTrailingAxes) {
  // Normalized over [5, n] of [3, 5, n]: rows of 5n, scale and bias [5, n].
  for (int64_t n : {3, 64}) {
    Arr x({3, 5, n}, &rng_), s({5, n}, &rng_), b({5, n}, &rng_);
    expectSame<float>("LayerNormalization", "axis=i:1", {&x, &s, &b}, {{3, 5, n}, {3, 1, 1}, {3, 1, 1}},
                      pool_.get(), 2e-5, 2e-5);
  }
}

TEST_P(FastNorm, LayerNormLargeMean) {
  // Rows around 1000 with spread 0.01 (float's spacing there is 6e-5): a one-pass sum of squares
  // in float cancels to nothing, and a float mean alone is off by up to 1% of the spread.
  Arr x({9, 1000}, &rng_, 999.99, 1000.01), s({1000}, &rng_);
  expectSame<float>("LayerNormalization", "axis=i:-1", {&x, &s}, {{9, 1000}, {9, 1}, {9, 1}}, pool_.get(), 2e-5,
                    2e-5);
}

TEST_P(FastNorm, RMSNormRows) {
  for (int64_t n : {1, 3, 17, 64, 1000}) {
    for (int64_t rows : {int64_t{7}, n >= 1000 ? int64_t{37} : int64_t{2053}}) {
      Arr x({rows, n}, &rng_), s({n}, &rng_);
      expectSame<float>("RMSNormalization", "axis=i:-1;epsilon=f:1e-6", {&x, &s}, {{rows, n}}, pool_.get(), 2e-5,
                        2e-5);
    }
  }
  Arr x({2, 3, 8}, &rng_), s({3, 8}, &rng_);
  expectSame<float>("RMSNormalization", "axis=i:1;epsilon=f:1e-3", {&x, &s}, {{2, 3, 8}}, pool_.get(), 2e-5, 2e-5);
}

TEST_P(FastNorm, OtherCasesGoToTheReference) {
  // A scale broadcast within the normalized dims ([n] of [5, n]) and float64: bit for bit.
  Arr x({3, 5, 17}, &rng_), s({17}, &rng_), b({17}, &rng_);
  expectSame<float>("LayerNormalization", "axis=i:1", {&x, &s, &b}, {{3, 5, 17}}, pool_.get(), 0, 0);
  expectSame<float>("RMSNormalization", "axis=i:1", {&x, &s}, {{3, 5, 17}}, pool_.get(), 0, 0);
  Buf<double> xd({4, 9}, &rng_), sd({9}, &rng_), bd({9}, &rng_);
  expectSame<double>("LayerNormalization", "axis=i:-1", {&xd, &sd, &bd}, {{4, 9}}, pool_.get(), 0, 0);
  expectSame<double>("RMSNormalization", "axis=i:-1", {&xd, &sd}, {{4, 9}}, pool_.get(), 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Threads, FastNorm, ::testing::Values(1, 2));

}  // namespace fast_norm_test
