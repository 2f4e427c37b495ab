// Tests of the fused Attention kernel (runtime/cpu/f_attention.cpp) against the reference kernel
// (k_nn_attention.cpp, which accumulates in double): 4-D and 3-D layouts, query counts that leave
// partial 4-row blocks (1, 5, 17), key counts around the 16-lane vectors and the 64-key tile (1,
// 7, 16, 33, 130), head sizes 1, 8, 17 and 64, value sizes past one 64-wide tile (80), grouped-
// query heads, additive and boolean masks of every broadcast form, is_causal, an explicit scale,
// and the cases that go to the reference kernel (softcap, past keys) bit for bit; 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mg_kernels.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

// A named namespace: the unity build compiles this file together with the other unit tests.
namespace fast_attention_test {

using mgrt::Tensor;

struct Arr {
  std::vector<float> v;
  std::vector<uint8_t> b;
  Tensor t;
  Arr(const std::vector<int64_t>& dims, std::mt19937* rng, bool boolean = false) {
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    if (boolean) {
      b.resize(static_cast<size_t>(n));
      std::bernoulli_distribution keep(0.7);
      for (auto& x : b) x = rng && keep(*rng) ? 1 : 0;
      t.data = b.data();
      t.dtype = mgrt::kBool;
      return;
    }
    v.assign(static_cast<size_t>(n), 777.f);
    if (rng) {
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      for (auto& x : v) x = d(*rng);
    }
    t.data = v.data();
    t.dtype = mgrt::kF32;
  }
};

class FastAttention : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() > 1) pool_ = std::make_unique<mgrt::ThreadPool>(GetParam());
  }
  // Fast against reference on Q, K, V (and mask); rtol = atol = 0 asks for identical results.
  void expectSame(const std::string& attrs, std::vector<const Arr*> ins, const std::vector<int64_t>& yDims,
                  double tol = 2e-5) {
    SCOPED_TRACE(attrs + " Q " + dimsOf(ins[0]->t) + " K " + dimsOf(ins[1]->t) + " V " + dimsOf(ins[2]->t) +
                 (ins.size() > 3 && ins[3] ? " mask " + dimsOf(ins[3]->t) : ""));
    std::vector<Tensor> in;
    for (const Arr* a : ins) in.push_back(a ? a->t : Tensor{});
    Arr want(yDims, nullptr), got(yDims, nullptr);
    mgrt::Attrs a(attrs.c_str());
    mgrt::Ctx rc;
    ASSERT_EQ(mgrt::findKernel("Attention")(a, in.data(), static_cast<int>(in.size()), &want.t, 1, rc), 0)
        << rc.error;
    mgrt::KernelFn f = mgrt::findFastKernel("Attention");
    ASSERT_NE(f, nullptr);
    mgrt::Ctx c;
    c.pool = pool_.get();
    ASSERT_EQ(f(a, in.data(), static_cast<int>(in.size()), &got.t, 1, c), 0) << c.error;
    for (size_t i = 0; i < want.v.size(); ++i) {
      const double w = want.v[i], g = got.v[i];
      if (std::isnan(w)) {
        ASSERT_TRUE(std::isnan(g)) << "index " << i << ": fast " << g << ", reference NaN";
        continue;
      }
      ASSERT_LE(std::fabs(g - w), tol + tol * std::fabs(w)) << "index " << i << ": fast " << g << " reference " << w;
    }
  }
  static std::string dimsOf(const Tensor& t) {
    std::string s;
    for (int i = 0; i < t.rank; ++i) s += (i ? "x" : "") + std::to_string(t.dims[i]);
    return s;
  }
  std::unique_ptr<mgrt::ThreadPool> pool_;
  std::mt19937 rng_{23};
};

TEST_P(FastAttention, FourDShapes) {
  for (int64_t S : {1, 5, 17})
    for (int64_t L : {1, 7, 16, 33, 130})
      for (int64_t D : {1, 8, 17, 64}) {
        const int64_t Dv = D == 17 ? 80 : D;
        Arr q({2, 3, S, D}, &rng_), k({2, 3, L, D}, &rng_), v({2, 3, L, Dv}, &rng_);
        expectSame("", {&q, &k, &v}, {2, 3, S, Dv});
      }
}

TEST_P(FastAttention, ScaleCausalAndGroupedHeads) {
  Arr q({1, 4, 9, 16}, &rng_), k({1, 2, 9, 16}, &rng_), v({1, 2, 9, 24}, &rng_);
  expectSame("scale=f:0.3", {&q, &k, &v}, {1, 4, 9, 24});
  expectSame("is_causal=i:1", {&q, &k, &v}, {1, 4, 9, 24});
  // Causal with more keys than queries (the mask keeps key j <= query i: the later keys are cut).
  Arr k2({1, 2, 20, 16}, &rng_), v2({1, 2, 20, 24}, &rng_);
  expectSame("is_causal=i:1", {&q, &k2, &v2}, {1, 4, 9, 24});
}

TEST_P(FastAttention, Masks) {
  const int64_t B = 2, H = 2, S = 6, L = 37;
  Arr q({B, H, S, 8}, &rng_), k({B, H, L, 8}, &rng_), v({B, H, L, 8}, &rng_);
  for (const std::vector<int64_t>& md :
       std::vector<std::vector<int64_t>>{{L}, {S, L}, {B, 1, S, L}, {B, H, S, L}, {S, 1}, {1, H, 1, L}}) {
    Arr add(md, &rng_), keep(md, &rng_, true);
    expectSame("", {&q, &k, &v, &add}, {B, H, S, 8});
    expectSame("is_causal=i:1", {&q, &k, &v, &keep}, {B, H, S, 8});
  }
  // A row whose keys are all masked: NaN, as the reference (0 / 0).
  Arr none({S, L}, nullptr, true);
  for (auto& x : none.b) x = 0;
  none.b[3] = 1;  // row 0 keeps one key
  expectSame("", {&q, &k, &v, &none}, {B, H, S, 8});
}

TEST_P(FastAttention, ThreeDLayout) {
  // [B, S, heads * D] with 4 q heads over 2 kv heads.
  Arr q({2, 5, 4 * 8}, &rng_), k({2, 11, 2 * 8}, &rng_), v({2, 11, 2 * 12}, &rng_);
  expectSame("q_num_heads=i:4;kv_num_heads=i:2", {&q, &k, &v}, {2, 5, 4 * 12});
  Arr m({5, 11}, &rng_);
  expectSame("q_num_heads=i:4;kv_num_heads=i:2;scale=f:0.5", {&q, &k, &v, &m}, {2, 5, 4 * 12});
}

TEST_P(FastAttention, UncoveredCasesGoToTheReference) {
  Arr q({1, 2, 3, 8}, &rng_), k({1, 2, 5, 8}, &rng_), v({1, 2, 5, 8}, &rng_);
  expectSame("softcap=f:2.0", {&q, &k, &v}, {1, 2, 3, 8}, 0);
  Arr pk({1, 2, 4, 8}, &rng_), pv({1, 2, 4, 8}, &rng_);
  expectSame("", {&q, &k, &v, nullptr, &pk, &pv}, {1, 2, 3, 8}, 0);
}

INSTANTIATE_TEST_SUITE_P(Threads, FastAttention, ::testing::Values(1, 2));

}  // namespace fast_attention_test
