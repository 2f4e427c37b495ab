// Tests of the optimized CPU kernels (runtime/cpu/f_*.cpp) against plain loops written here
// (double accumulation), so they do not depend on the reference kernels: random GEMM shapes with
// transposes, alpha/beta and broadcast C; batched/broadcast MatMul; convolutions with groups,
// depthwise, strides, dilation, asymmetric and automatic pads, residual and every activation;
// pools; each on 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "f_gemm.h"
#include "k_nn_shapes.h"
#include "mg_kernels.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

namespace {

using mgrt::Tensor;

struct Buf {
  std::vector<float> v;
  Tensor t;
  Buf() = default;
  Buf(std::vector<int64_t> dims, std::mt19937& rng, bool random = true) { init(dims, rng, random); }
  void init(std::vector<int64_t> dims, std::mt19937& rng, bool random) {
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    v.assign(n, 0.f);
    if (random)
      for (auto& x : v) x = d(rng);
    else
      for (auto& x : v) x = 12345.f;  // garbage the kernel must overwrite
    t.data = v.data();
    t.dtype = mgrt::kF32;
  }
};

struct ActCase {
  const char* name;
  float alpha, beta;
};
// None and every epilogue activation of the table (runtime/common/mg_acts.h, flag E), in table
// order (so kActs[1] is Relu, kActs[2] LeakyRelu), with the table's defaults; Clip gets bounds.
// A new epilogue entry is swept here without a change.
const std::vector<ActCase> kActs = [] {
  std::vector<ActCase> v;
  for (const mgrt::acts::ActInfo& e : mgrt::acts::kTable) {
    if (e.code != mgrt::acts::kNone && !e.has(mgrt::acts::kE)) continue;
    if (e.code == mgrt::acts::kClip) v.push_back({e.name, -0.5f, 0.5f});
    else v.push_back({e.name, static_cast<float>(e.alphaDefault), static_cast<float>(e.betaDefault)});
  }
  return v;
}();

std::string actAttrs(const ActCase& a) {
  if (!*a.name) return "";
  char buf[128];
  std::snprintf(buf, sizeof(buf), ";mg_act=s:%s;mg_alpha=f:%g;mg_beta=f:%g", a.name, a.alpha, a.beta);
  return buf;
}

mgrt::Epilogue epOf(const ActCase& a) {
  mgrt::Epilogue e;
  e.act = mgrt::parseAct(a.name);
  e.alpha = a.alpha;
  e.beta = a.beta;
  return e;
}

::testing::AssertionResult close(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size mismatch";
  for (size_t i = 0; i < got.size(); ++i) {
    double tol = 1e-4 * (1.0 + std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tol))
      return ::testing::AssertionFailure() << "index " << i << ": got " << got[i] << " want " << want[i];
  }
  return ::testing::AssertionSuccess();
}

int run(const char* op, const std::string& attrs, std::vector<Tensor> in, Tensor* out, int nout,
        mgrt::ThreadPool* pool) {
  mgrt::KernelFn f = mgrt::findFastKernel(op);
  EXPECT_NE(f, nullptr) << op;
  if (!f) return -1;
  mgrt::Attrs a(attrs.c_str());
  mgrt::Ctx ctx;
  ctx.pool = pool;
  int rc = f(a, in.data(), static_cast<int>(in.size()), out, nout, ctx);
  // GEMM-based kernels keep operand 1 (the weights) packed in a step state when told it is
  // constant: run them again that way, twice (the first run packs, the second reuses the packing),
  // and expect the very same bits (same micro-kernel, same summation order). Except for at most
  // 4 output rows: there unpacked weights go to the dot-product path and packed ones to the
  // few-rows panel kernel, which sum in another order: equal within float rounding there.
  std::string o(op);
  bool gemmBased = o == "Conv" || o == "Gemm" || o == "MatMul";
  bool inPlace = false;
  for (const Tensor& t : in)
    inPlace = inPlace || (t.data && out[0].data && t.data == out[0].data);
  if (rc != 0 || nout != 1 || !gemmBased || inPlace || out[0].dtype != mgrt::kF32) return rc;
  const float* y = static_cast<const float*>(out[0].data);
  std::vector<float> first(y, y + out[0].numel());
  mgrt::StepState state;
  mgrt::Ctx packed;
  packed.pool = pool;
  packed.state = &state;
  packed.constInputs = 1u << 1;
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(static_cast<float*>(out[0].data), static_cast<float*>(out[0].data) + out[0].numel(), -7.f);
    EXPECT_EQ(f(a, in.data(), static_cast<int>(in.size()), out, nout, packed), 0) << op;
    const int64_t rows = out[0].rank >= 2 ? out[0].dims[out[0].rank - 2] : 1;
    if (rows > 4) {
      EXPECT_EQ(std::memcmp(first.data(), y, first.size() * sizeof(float)), 0)
          << op << " " << attrs << ": pre-packed weights (pass " << pass << ") changed the result";
      continue;
    }
    for (size_t i = 0; i < first.size(); ++i) {
      const bool near = std::fabs(y[i] - first[i]) <= 1e-5f * (1.f + std::fabs(first[i]));
      EXPECT_TRUE(near) << op << " " << attrs << ": pre-packed weights (pass " << pass
                        << ", few rows) changed element " << i << ": " << first[i] << " -> " << y[i];
      if (!near) break;
    }
  }
  return rc;
}

class FastKernels : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() > 1) pool_ = std::make_unique<mgrt::ThreadPool>(GetParam());
  }
  mgrt::ThreadPool* pool() { return pool_.get(); }
  std::unique_ptr<mgrt::ThreadPool> pool_;
};

// ---- Gemm ---------------------------------------------------------------------------------------

void checkGemm(mgrt::ThreadPool* pool, std::mt19937& rng, int64_t M, int64_t N, int64_t K, bool ta,
               bool tb, float alpha, float beta, int cKind, const ActCase& act, bool residual,
               bool inplace = false) {
  Buf A(ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, rng);
  Buf B(tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, rng);
  // cKind: 0 none, 1 scalar [1], 2 [N], 3 [M,1], 4 [M,N], 5 [1,N], 6 rank-0
  std::vector<int64_t> cd;
  switch (cKind) {
    case 1: cd = {1}; break;
    case 2: cd = {N}; break;
    case 3: cd = {M, 1}; break;
    case 4: cd = {M, N}; break;
    case 5: cd = {1, N}; break;
    default: break;
  }
  Buf C;
  if (cKind) C.init(cd, rng, true);
  if (cKind == 6) C.init({}, rng, true);
  Buf R;
  if (residual) R.init({M, N}, rng, true);
  Buf Y({M, N}, rng, false);
  std::vector<double> want(M * N);
  mgrt::Epilogue ep = epOf(act);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += double(ta ? A.v[k * M + i] : A.v[i * K + k]) * (tb ? B.v[j * K + k] : B.v[k * N + j]);
      s *= alpha;
      if (cKind) {
        int64_t ci = 0;
        if (cKind == 2) ci = j;
        if (cKind == 3) ci = i;
        if (cKind == 4) ci = i * N + j;
        if (cKind == 5) ci = j;
        s += double(beta) * C.v[ci];
      }
      if (residual) s += R.v[i * N + j];
      want[i * N + j] = mgrt::applyAct(ep, static_cast<float>(s));
    }
  char attrs[200];
  std::snprintf(attrs, sizeof(attrs), "transA=i:%d;transB=i:%d;alpha=f:%g;beta=f:%g", ta, tb, alpha, beta);
  std::vector<Tensor> in = {A.t, B.t};
  if (cKind || residual) in.push_back(cKind ? C.t : Tensor{});
  if (residual) in.push_back(R.t);
  if (inplace) {  // the addend [M,N] lives in the output buffer
    Y.v = residual ? R.v : C.v;
    in.back() = Y.t;
  }
  ASSERT_EQ(run("Gemm", attrs + actAttrs(act), in, &Y.t, 1, pool), 0);
  EXPECT_TRUE(close(Y.v, want)) << "Gemm M=" << M << " N=" << N << " K=" << K << " ta=" << ta
                                << " tb=" << tb << " c=" << cKind << " act=" << act.name;
}

TEST_P(FastKernels, FastGemmRandomShapes) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> dim(1, 70);
  for (int iter = 0; iter < 60; ++iter) {
    int64_t M = dim(rng), N = dim(rng), K = dim(rng);
    if (iter % 7 == 0) M = 1 + iter % 4;  // matrix-vector shapes
    if (iter % 11 == 0) N = 1 + iter % 3;
    bool ta = iter & 1, tb = (iter >> 1) & 1;
    float alpha = iter % 3 == 0 ? 1.f : 0.75f, beta = iter % 5 == 0 ? 1.f : -0.5f;
    checkGemm(pool(), rng, M, N, K, ta, tb, alpha, beta, iter % 7, kActs[iter % kActs.size()], iter % 4 == 3);
  }
}

TEST_P(FastKernels, FastGemmBlocking) {
  std::mt19937 rng(2);
  // Crosses the MC / NC / KC block sizes, with partial tiles on every side.
  checkGemm(pool(), rng, 517, 1061, 601, false, false, 1.f, 1.f, 2, kActs[1], true);
  checkGemm(pool(), rng, 131, 97, 300, true, true, 0.5f, 2.f, 4, kActs[2], false);
  checkGemm(pool(), rng, 64, 64, 0, false, false, 1.f, 1.f, 2, kActs[0], false);  // K = 0
  // In-place addends (output buffer shared with C or the residual), K spanning several slices.
  checkGemm(pool(), rng, 45, 70, 700, false, true, 1.f, 0.5f, 4, kActs[1], false, true);
  checkGemm(pool(), rng, 45, 70, 700, false, false, 1.f, 1.f, 2, kActs[0], true, true);
  // 1-4 rows (with pre-packed weights: the few-rows panel kernel), K over several slices, N with
  // a tail panel, every addend kind, in-place addends.
  for (int m = 1; m <= 4; ++m) {
    checkGemm(pool(), rng, m, 1000 + 7 * m, 601, false, m % 2 == 0, 0.75f, 0.5f, 1 + m, kActs[m % 3], m == 3);
    checkGemm(pool(), rng, m, 33, 300, m == 2, true, 1.f, 1.f, 4, kActs[0], m == 4, true);
  }
}

// ---- MatMul -------------------------------------------------------------------------------------

void checkMatMul(mgrt::ThreadPool* pool, std::mt19937& rng, std::vector<int64_t> ad,
                 std::vector<int64_t> bd, const ActCase& act) {
  Buf A(ad, rng), B(bd, rng);
  // numpy semantics via 2-D promotion.
  bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), 1);
  if (b1) bd.push_back(1);
  int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
  size_t ra = ad.size() - 2, rb = bd.size() - 2, r = std::max(ra, rb);
  std::vector<int64_t> ob(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t x = d >= r - ra ? ad[d - (r - ra)] : 1, y = d >= r - rb ? bd[d - (r - rb)] : 1;
    ob[d] = std::max(x, y);
  }
  std::vector<int64_t> od = ob;
  if (!a1) od.push_back(M);
  if (!b1) od.push_back(N);
  Buf Y(od, rng, false);
  int64_t nb = 1;
  for (auto x : ob) nb *= x;
  std::vector<double> want(nb * M * N);
  mgrt::Epilogue ep = epOf(act);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t offA = 0, offB = 0, rem = bi, sa = M * K, sb = K * N;
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      int64_t idx = rem % ob[d];
      rem /= ob[d];
      int da = d - static_cast<int>(r - ra), db = d - static_cast<int>(r - rb);
      if (da >= 0) {
        if (ad[da] != 1) offA += idx * sa;
        sa *= ad[da];
      }
      if (db >= 0) {
        if (bd[db] != 1) offB += idx * sb;
        sb *= bd[db];
      }
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(A.v[offA + i * K + k]) * B.v[offB + k * N + j];
        want[(bi * M + i) * N + j] = mgrt::applyAct(ep, static_cast<float>(s));
      }
  }
  ASSERT_EQ(run("MatMul", "x=i:0" + actAttrs(act), {A.t, B.t}, &Y.t, 1, pool), 0);
  EXPECT_TRUE(close(Y.v, want)) << "MatMul rank " << A.t.rank << " x " << B.t.rank;
}

TEST_P(FastKernels, FastMatMulBroadcast) {
  std::mt19937 rng(3);
  checkMatMul(pool(), rng, {37, 53}, {53, 41}, kActs[0]);
  checkMatMul(pool(), rng, {3, 17, 33}, {33, 29}, kActs[1]);          // folded batch
  checkMatMul(pool(), rng, {2, 3, 17, 33}, {3, 33, 29}, kActs[3]);    // broadcast batch
  checkMatMul(pool(), rng, {2, 1, 9, 20}, {1, 5, 20, 40}, kActs[5]);  // both broadcast
  checkMatMul(pool(), rng, {19, 33}, {4, 33, 29}, kActs[0]);          // A broadcast
  checkMatMul(pool(), rng, {33}, {33, 29}, kActs[0]);                 // 1-D A
  checkMatMul(pool(), rng, {5, 19, 33}, {33}, kActs[2]);              // 1-D B
  checkMatMul(pool(), rng, {33}, {33}, kActs[0]);                     // dot
  checkMatMul(pool(), rng, {8, 2, 64, 48}, {8, 2, 48, 64}, kActs[11]);
}

// ---- Conv ---------------------------------------------------------------------------------------

struct ConvCase {
  int64_t n, c, h, w, m, kh, kw, group, sh, sw, dh, dw, pt, pl, pb, pr;
  const char* autoPad;
  bool bias, residual;
  int act;
  bool inplace = false;  // residual shares the output buffer
};

void checkConv(mgrt::ThreadPool* pool, std::mt19937& rng, const ConvCase& cc) {
  mgrt::SpatialAttrs sa;
  sa.strides = {cc.sh, cc.sw};
  sa.dilations = {cc.dh, cc.dw};
  sa.pads = {cc.pt, cc.pl, cc.pb, cc.pr};
  ASSERT_TRUE(mgrt::parseAutoPad(cc.autoPad, &sa.autoPad));
  mgrt::SpatialGeometry g;
  ASSERT_EQ(mgrt::resolveConvGeometry("Conv", {cc.h, cc.w}, {cc.kh, cc.kw}, sa, &g), "");
  int64_t oh = g.out[0], ow = g.out[1], pt = g.padBegin[0], pl = g.padBegin[1];
  int64_t cg = cc.c / cc.group, mg = cc.m / cc.group;
  Buf X({cc.n, cc.c, cc.h, cc.w}, rng), W({cc.m, cg, cc.kh, cc.kw}, rng), B, R;
  if (cc.bias) B.init({cc.m}, rng, true);
  if (cc.residual) R.init({cc.n, cc.m, oh, ow}, rng, true);
  Buf Y({cc.n, cc.m, oh, ow}, rng, false);
  mgrt::Epilogue ep = epOf(kActs[cc.act]);
  std::vector<double> want(Y.v.size());
  for (int64_t n = 0; n < cc.n; ++n)
    for (int64_t m = 0; m < cc.m; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double s = cc.bias ? B.v[m] : 0.0;
          int64_t gi = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < cc.kh; ++ky)
              for (int64_t kx = 0; kx < cc.kw; ++kx) {
                int64_t iy = oy * cc.sh - pt + ky * cc.dh, ix = ox * cc.sw - pl + kx * cc.dw;
                if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
                s += double(X.v[((n * cc.c + gi * cg + c) * cc.h + iy) * cc.w + ix]) *
                     W.v[((m * cg + c) * cc.kh + ky) * cc.kw + kx];
              }
          int64_t o = ((n * cc.m + m) * oh + oy) * ow + ox;
          if (cc.residual) s += R.v[o];
          want[o] = mgrt::applyAct(ep, static_cast<float>(s));
        }
  char attrs[300];
  std::snprintf(attrs, sizeof(attrs),
                "group=i:%lld;strides=i:%lld,%lld;dilations=i:%lld,%lld;kernel_shape=i:%lld,%lld;"
                "pads=i:%lld,%lld,%lld,%lld;auto_pad=s:%s",
                (long long)cc.group, (long long)cc.sh, (long long)cc.sw, (long long)cc.dh,
                (long long)cc.dw, (long long)cc.kh, (long long)cc.kw, (long long)cc.pt,
                (long long)cc.pl, (long long)cc.pb, (long long)cc.pr, cc.autoPad);
  std::string at = attrs;
  if (std::string(cc.autoPad) != "NOTSET") at = at.substr(0, at.find(";pads=")) + ";auto_pad=s:" + cc.autoPad;
  std::vector<Tensor> in = {X.t, W.t};
  if (cc.bias || cc.residual) in.push_back(cc.bias ? B.t : Tensor{});
  if (cc.residual) in.push_back(R.t);
  if (cc.inplace) {
    Y.v = R.v;
    in.back() = Y.t;
  }
  ASSERT_EQ(run("Conv", at + actAttrs(kActs[cc.act]), in, &Y.t, 1, pool), 0);
  EXPECT_TRUE(close(Y.v, want)) << "Conv " << at << " n=" << cc.n << " c=" << cc.c << " h=" << cc.h
                                << " w=" << cc.w << " m=" << cc.m << " act=" << kActs[cc.act].name;
}

// Every entry of kActs as a 3x3 convolution's epilogue, with and without a residual.
TEST_P(FastKernels, FastConvEveryEpilogueActivation) {
  std::mt19937 rng(5);
  for (size_t a = 0; a < kActs.size(); ++a) {
    checkConv(pool(), rng, {1, 8, 9, 11, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, a % 2 == 1, int(a)});
    checkConv(pool(), rng, {1, 6, 7, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, a % 2 == 0, int(a)});
  }
}

TEST_P(FastKernels, FastConvCases) {
  std::mt19937 rng(4);
  const ConvCase cases[] = {
      // n  c   h   w   m  kh kw g  sh sw dh dw pt pl pb pr auto        bias   res    act
      {1, 16, 9, 11, 24, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, false, 1},   // 1x1
      {2, 7, 10, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 2},     // 3x3 pad 1
      {1, 3, 23, 21, 16, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, "NOTSET", true, false, 1},   // 7x7 s2 stem
      {1, 8, 12, 12, 12, 3, 3, 4, 1, 1, 1, 1, 1, 0, 2, 1, "NOTSET", false, false, 0},  // groups, asym
      {2, 12, 11, 9, 12, 3, 3, 12, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},   // depthwise
      {1, 10, 14, 15, 10, 3, 3, 10, 2, 2, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 5}, // dw s2
      {1, 4, 9, 9, 8, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 3},      // dw x2
      {1, 6, 15, 14, 9, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2, "NOTSET", true, false, 4},    // dilation 2
      {1, 5, 13, 17, 7, 3, 5, 1, 2, 1, 1, 1, 0, 0, 0, 0, "SAME_UPPER", true, true, 6},
      {1, 5, 13, 16, 7, 4, 4, 1, 2, 2, 1, 1, 0, 0, 0, 0, "SAME_LOWER", false, false, 7},
      {1, 9, 10, 10, 11, 3, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, "VALID", true, false, 8},
      {1, 32, 8, 8, 40, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, "NOTSET", true, false, 9},    // 1x1 s2
      {2, 16, 9, 7, 24, 1, 1, 2, 3, 2, 1, 1, 0, 0, 0, 0, "NOTSET", true, true, 1},     // 1x1 s3x2, groups
      {1, 64, 7, 7, 67, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 10},
      {1, 3, 5, 40, 3, 1, 3, 1, 1, 3, 1, 1, 0, 2, 0, 1, "NOTSET", true, false, 11},    // 1x3 s3
      {3, 4, 6, 6, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},       // batch x groups
      {1, 2, 5, 5, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, false, 0},      // tiny M (gemv)
      {1, 20, 30, 30, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 1},  // multi-block
      {1, 40, 9, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1, true},  // in-place res
      {1, 6, 9, 9, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 2, true},    // dw in-place
      // in-place residuals read where they are: a 1x1 GEMM with two K slices (K = 300 > 256)
      // accumulating onto the residual, and a matrix-vector one (M = 3)
      {1, 300, 5, 6, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, true, 1, true},
      {1, 20, 6, 7, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, true, 3, true},
      // im2col tap programs (AVX-512: at least 4 channels per tap in a K slice): strides and
      // dilations with asymmetric pads, K slices that start inside a channel's taps (K = 750),
      // rows wider than a panel (70 > 32 columns, runs cut at 16 columns).
      {1, 24, 17, 19, 20, 3, 3, 1, 2, 2, 2, 1, 2, 1, 1, 2, "NOTSET", true, true, 1},
      {1, 30, 11, 13, 9, 5, 5, 1, 1, 1, 1, 1, 2, 2, 2, 2, "NOTSET", true, false, 2},
      {1, 12, 6, 70, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", false, true, 1},
      {1, 16, 9, 40, 8, 1, 7, 1, 1, 3, 1, 1, 0, 3, 0, 3, "NOTSET", true, false, 0},
      // depthwise rows wider than 4 and 2 vectors (blocks of 4, 2 and 1 vectors, partial tail)
      {1, 5, 7, 100, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},
      {1, 3, 5, 70, 6, 5, 5, 3, 1, 1, 1, 1, 2, 2, 2, 2, "NOTSET", false, false, 2},
      // narrow depthwise planes (rows blocked 4, 2, 1 at a time), with residual and activations
      {1, 7, 11, 14, 7, 5, 5, 7, 1, 1, 1, 1, 2, 2, 2, 2, "NOTSET", true, true, 1},
      {1, 4, 7, 7, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 5},
      // grouped convolutions on the direct kernel (AVX-512: unit horizontal stride, rows >= 12,
      // >= 4 output channels per group): 12 channels per group (a partial 8-block), vertical stride
      // with dilation, a residual in place, 4 channels per group (half a block), edge and interior
      // tiles (width 40 with pad 1, 21, 16).
      {1, 64, 13, 21, 96, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},
      {2, 32, 9, 40, 64, 3, 3, 4, 2, 1, 2, 2, 2, 2, 2, 2, "NOTSET", false, false, 2},
      {1, 24, 8, 16, 24, 1, 5, 3, 1, 1, 1, 1, 0, 2, 0, 2, "NOTSET", true, true, 1, true},
      {1, 16, 6, 40, 16, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 6},
      // depthwise rows read in place (AVX-512: stride 1, rows of 32+ outputs, 3x3, 5x5, 7x7):
      // row tails of 33 and 47 columns, heights not a multiple of the 4-row block (10, 6, 13, 3),
      // asymmetric pads, batch 2, a residual in place, vector and row activations, 3 to 17 channels.
      {2, 5, 9, 33, 5, 3, 3, 5, 1, 1, 1, 1, 1, 0, 2, 2, "NOTSET", true, true, 1},
      {1, 17, 6, 47, 17, 5, 5, 17, 1, 1, 1, 1, 2, 2, 2, 2, "NOTSET", false, true, 7, true},
      {1, 3, 13, 64, 3, 7, 7, 3, 1, 1, 1, 1, 3, 3, 3, 3, "NOTSET", true, false, 11},
      {1, 12, 5, 40, 12, 3, 3, 12, 1, 1, 1, 1, 0, 1, 0, 1, "NOTSET", true, true, 12},
      // grouped convolutions with 16k output channels per group at stride 2 or on rows under 12
      // (AVX-512, the channel-block kernel of f_conv_direct.cpp): RegNet's shapes (2 and 4 groups
      // of 16), 32 outputs per group (two blocks) with asymmetric pads and an in-place residual,
      // 10 inputs per group, batch 2 with rows of 7 (blocks of 4, 2 and 1 pixels, 4 rows at a time
      // and the rows' tail), widths of 25 (16 + 8 + 1), vector and row activations.
      {1, 32, 14, 14, 32, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 1},
      {2, 64, 7, 7, 64, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},
      {1, 48, 9, 11, 96, 3, 3, 3, 2, 2, 1, 1, 1, 0, 2, 1, "NOTSET", false, true, 7, true},
      {1, 20, 6, 10, 32, 3, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, false, 11},
      {1, 32, 11, 50, 32, 5, 5, 2, 2, 2, 1, 1, 2, 2, 2, 2, "NOTSET", true, true, 12},
      // depthwise with 16 channels per vector (AVX-512, >= 12 channels): channel tails (37 = 2
      // blocks + 5, 13, 20), batch 2, stride 2 and 3, dilation, asymmetric and automatic pads,
      // columns the kernel never reads (VALID, stride 3), 1xk and kx1 kernels, bands of rows
      // (planes of 130 and 150 columns), in-place residual, vector and row activations.
      {2, 37, 14, 14, 37, 5, 5, 37, 2, 2, 1, 1, 2, 2, 2, 2, "NOTSET", true, true, 7},
      {1, 16, 7, 7, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1, true},
      {1, 20, 40, 150, 20, 3, 3, 20, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 3},
      {1, 24, 61, 130, 24, 3, 3, 24, 2, 2, 2, 2, 2, 1, 1, 2, "NOTSET", false, true, 2},
      {1, 13, 17, 19, 13, 5, 5, 13, 3, 3, 2, 2, 0, 0, 0, 0, "VALID", true, false, 5},
      {1, 32, 9, 23, 32, 1, 7, 32, 1, 1, 1, 1, 0, 3, 0, 2, "NOTSET", true, true, 0},
      {1, 16, 12, 5, 16, 7, 1, 16, 1, 1, 1, 1, 0, 0, 0, 0, "SAME_UPPER", true, false, 10},
      // strided layers with fewer than 4 channels and fewer than 8 output channels, or more than
      // 1024 taps (the per-row im2col packer's gathers): rows of 45 and 37 columns, dilation 2
      // with asymmetric pads, stride 3, a 4-channel 17x17 kernel (K = 1156)
      {1, 3, 20, 45, 6, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},
      {1, 2, 17, 37, 5, 3, 3, 1, 2, 2, 2, 2, 2, 1, 0, 2, "NOTSET", true, false, 2},
      {2, 3, 12, 34, 7, 5, 5, 1, 3, 3, 1, 1, 2, 2, 2, 2, "NOTSET", false, false, 0},
      {1, 4, 30, 33, 9, 17, 17, 1, 2, 2, 1, 1, 8, 8, 8, 8, "NOTSET", true, false, 1},
      // the stem kernel (AVX-512: <= 4 input channels, >= 8 output channels, K <= 1024): the
      // same three layers with 16 and 8 output channels; 20 channels (a partial 8-block) under a
      // 7x7/2 with an in-place residual on 27-pixel rows (tiles of 2 vectors); a single-channel
      // 11x5 with vertical stride and horizontal dilation on 70-pixel rows (3 + 2 vector tiles);
      // stride 3 and 4 (the generic phase split), batch 2, bands of rows (40 and 61 rows), SAME
      // padding, row activations (Sigmoid, Gelu) and vector ones.
      {1, 3, 20, 45, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1},
      {1, 2, 17, 37, 8, 3, 3, 1, 2, 2, 2, 2, 2, 1, 0, 2, "NOTSET", true, false, 2},
      {2, 3, 12, 34, 8, 5, 5, 1, 3, 3, 1, 1, 2, 2, 2, 2, "NOTSET", false, false, 0},
      {1, 3, 23, 53, 20, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, "NOTSET", true, true, 1, true},
      {1, 1, 40, 70, 32, 11, 5, 1, 2, 1, 1, 2, 5, 4, 5, 4, "NOTSET", true, false, 3},
      {2, 3, 61, 100, 8, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1, "NOTSET", false, true, 11},
      {1, 2, 40, 57, 24, 11, 11, 1, 4, 4, 1, 1, 2, 2, 2, 2, "NOTSET", true, false, 5},
      {1, 4, 19, 31, 40, 3, 3, 1, 2, 2, 1, 1, 0, 0, 0, 0, "SAME_UPPER", true, true, 7},
      {1, 3, 26, 26, 64, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2, "NOTSET", true, false, 1},
      // Swish (x * Sigmoid(x), fused by fuse-epilogue) on each kernel: stem, depthwise with 16
      // channels per vector, 1x1 GEMM with residual, direct grouped, row depthwise.
      {1, 3, 20, 45, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 12},
      {1, 32, 14, 14, 32, 3, 3, 32, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 12},
      {1, 24, 7, 9, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, true, 12},
      {1, 32, 9, 20, 32, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 12},
      {1, 4, 7, 30, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 12},
      // a single-channel input under a large kernel (GEMM, not the depthwise kernels), and a large
      // kernel with few output channels (the direct kernel, ungrouped)
      {1, 1, 30, 40, 8, 7, 5, 1, 2, 2, 1, 1, 3, 2, 3, 2, "NOTSET", true, false, 1},
      {1, 6, 20, 33, 16, 5, 5, 1, 2, 1, 1, 1, 2, 2, 2, 2, "NOTSET", true, true, 2},
      // the channel-lane kernel (AVX-512: ungrouped, K >= 128, >= 32 output channels in blocks of
      // 32 at least 3/4 full): 7x7 planes two rows per tile (7 rows: 3 pairs and a single
      // row) with 3 blocks and an in-place residual; stride 2 with dilation and asymmetric pads on
      // rows of 15 (runs of 8 and 7) with a row activation (Selu); K = 450 with a
      // partial last block (56 channels); a 1x1 in place with K = 300, 48 channels
      // (a half-full second block) and batch 2; a strided 1x1 (the sampled copy) in batch 2; a 1x1 with
      // 256 channels on 20x20 (bands of rows, runs of 10); a 5x5 with dilation 2 and stride 1x2
      // under SAME_UPPER; rows of 45 (runs of 12, 11, 11, 11); 3-pixel rows in pairs over 5 rows
      // (Softplus, a row activation, on both runs of the pair).
      {1, 64, 7, 7, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 1, true},
      {1, 40, 15, 29, 32, 3, 3, 1, 2, 2, 2, 1, 2, 1, 1, 2, "NOTSET", true, true, 9},
      {1, 50, 14, 14, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, false, 2},
      {2, 300, 5, 6, 48, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, true, 5, true},
      {2, 260, 13, 11, 48, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, "NOTSET", false, true, 1},
      {1, 256, 20, 20, 32, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, "NOTSET", true, true, 7},
      {1, 12, 19, 33, 64, 5, 5, 1, 1, 2, 2, 2, 0, 0, 0, 0, "SAME_UPPER", true, false, 6},
      {1, 16, 6, 45, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", false, true, 12},
      {1, 32, 5, 3, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, "NOTSET", true, true, 10},
      // and a 7x7/2 kernel with 16 input channels (K = 784) and 40 output channels
      // (blocks of 32 and 8: below 3/4 busy, so the GEMM) against 72 (32 + 32 + 8, the lanes)
      {1, 16, 23, 21, 40, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, "NOTSET", true, true, 1},
      {1, 16, 23, 21, 72, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, "NOTSET", true, true, 1},
  };
  for (const auto& cc : cases) checkConv(pool(), rng, cc);
}

// ---- Pools --------------------------------------------------------------------------------------

void checkPool(mgrt::ThreadPool* pool, std::mt19937& rng, bool isMax, int64_t n, int64_t c, int64_t h,
               int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw, std::vector<int64_t> pads,
               const char* autoPad, bool ceil, bool countPad) {
  mgrt::SpatialAttrs sa;
  sa.kernelShape = {kh, kw};
  sa.strides = {sh, sw};
  sa.pads = pads;
  sa.ceilMode = ceil;
  ASSERT_TRUE(mgrt::parseAutoPad(autoPad, &sa.autoPad));
  mgrt::SpatialGeometry g;
  ASSERT_EQ(mgrt::resolveConvGeometry("Pool", {h, w}, {kh, kw}, sa, &g), "");
  int64_t oh = g.out[0], ow = g.out[1];
  Buf X({n, c, h, w}, rng), Y({n, c, oh, ow}, rng, false);
  std::vector<double> want(Y.v.size());
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t hs = oy * sh - g.padBegin[0], ws = ox * sw - g.padBegin[1];
        double mx = -INFINITY, sum = 0;
        int64_t cnt = 0;
        for (int64_t iy = hs; iy < hs + kh; ++iy)
          for (int64_t ix = ws; ix < ws + kw; ++ix) {
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            float v = X.v[(p * h + iy) * w + ix];
            mx = std::max<double>(mx, v);
            sum += v;
            ++cnt;
          }
        if (countPad) {
          int64_t he = std::min(hs + kh, h + g.padEnd[0]), we = std::min(ws + kw, w + g.padEnd[1]);
          cnt = (he - hs) * (we - ws);
        }
        want[(p * oh + oy) * ow + ox] = isMax ? mx : sum / cnt;
      }
  std::string at = "kernel_shape=i:" + std::to_string(kh) + "," + std::to_string(kw) +
                   ";strides=i:" + std::to_string(sh) + "," + std::to_string(sw) +
                   ";auto_pad=s:" + autoPad + ";ceil_mode=i:" + std::to_string(ceil) +
                   ";count_include_pad=i:" + std::to_string(countPad);
  if (!pads.empty())
    at += ";pads=i:" + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," +
          std::to_string(pads[2]) + "," + std::to_string(pads[3]);
  ASSERT_EQ(run(isMax ? "MaxPool" : "AveragePool", at, {X.t}, &Y.t, 1, pool), 0);
  EXPECT_TRUE(close(Y.v, want)) << (isMax ? "MaxPool " : "AveragePool ") << at;
}

TEST_P(FastKernels, FastPools) {
  std::mt19937 rng(5);
  for (int isMax = 0; isMax < 2; ++isMax) {
    checkPool(pool(), rng, isMax, 2, 3, 12, 12, 2, 2, 2, 2, {}, "NOTSET", false, false);
    checkPool(pool(), rng, isMax, 1, 4, 15, 15, 3, 3, 2, 2, {1, 1, 1, 1}, "NOTSET", false, false);
    checkPool(pool(), rng, isMax, 1, 4, 15, 15, 3, 3, 2, 2, {1, 1, 1, 1}, "NOTSET", false, true);
    checkPool(pool(), rng, isMax, 1, 3, 14, 13, 3, 3, 2, 2, {0, 1, 2, 0}, "NOTSET", true, false);
    checkPool(pool(), rng, isMax, 1, 3, 14, 13, 3, 3, 2, 2, {0, 1, 2, 0}, "NOTSET", true, true);
    checkPool(pool(), rng, isMax, 1, 5, 9, 11, 3, 2, 1, 1, {}, "SAME_UPPER", false, false);
    checkPool(pool(), rng, isMax, 1, 5, 9, 11, 4, 4, 3, 3, {}, "SAME_LOWER", false, true);
    checkPool(pool(), rng, isMax, 2, 2, 7, 7, 7, 7, 1, 1, {}, "VALID", false, false);
    // strided rows wide enough for the vector phase split (stride 2: 32 floats per step, then
    // the scalar tail): Inception's 3x3/2 on 147 columns, SqueezeNet's ceil_mode on 111, a 2x2/2
    // on 64, stride 3 with pads
    checkPool(pool(), rng, isMax, 1, 3, 9, 147, 3, 3, 2, 2, {}, "NOTSET", false, false);
    checkPool(pool(), rng, isMax, 1, 2, 11, 111, 3, 3, 2, 2, {}, "NOTSET", true, false);
    checkPool(pool(), rng, isMax, 1, 2, 6, 64, 2, 2, 2, 2, {}, "NOTSET", false, false);
    checkPool(pool(), rng, isMax, 1, 2, 10, 50, 3, 4, 3, 3, {1, 2, 1, 1}, "NOTSET", false, true);
    // SqueezeNet's later 3x3/2 ceil_mode pools: 27 and 13 outputs, a masked vector tail only
    checkPool(pool(), rng, isMax, 1, 3, 55, 55, 3, 3, 2, 2, {}, "NOTSET", true, false);
    checkPool(pool(), rng, isMax, 1, 3, 27, 27, 3, 3, 2, 2, {}, "NOTSET", true, true);
    // stride 1, output as wide as the input (the whole-plane path): Inception's 3x3 pad 1 with and
    // without the pads counted, asymmetric 5x5 pads (1 left, 3 right), 1x3 and 3x1
    checkPool(pool(), rng, isMax, 1, 3, 35, 35, 3, 3, 1, 1, {1, 1, 1, 1}, "NOTSET", false, true);
    checkPool(pool(), rng, isMax, 2, 2, 17, 17, 3, 3, 1, 1, {1, 1, 1, 1}, "NOTSET", false, false);
    checkPool(pool(), rng, isMax, 1, 2, 11, 9, 5, 5, 1, 1, {2, 1, 2, 3}, "NOTSET", false, true);
    checkPool(pool(), rng, isMax, 1, 2, 6, 8, 1, 3, 1, 1, {0, 1, 0, 1}, "NOTSET", false, false);
    checkPool(pool(), rng, isMax, 1, 2, 8, 5, 3, 1, 1, 1, {1, 0, 1, 0}, "NOTSET", false, true);
  }
}

TEST_P(FastKernels, FastGlobalAveragePool) {
  std::mt19937 rng(6);
  for (auto dims : std::vector<std::vector<int64_t>>{{2, 5, 7, 7}, {1, 3, 33}, {1, 2, 3, 4, 5}, {3, 4, 1, 1}}) {
    Buf X(dims, rng);
    Buf Y(std::vector<int64_t>(dims.size(), 1), rng, false);
    Y.t.dims[0] = dims[0];
    Y.t.dims[1] = dims[1];
    Y.v.resize(dims[0] * dims[1]);
    Y.t.data = Y.v.data();
    int64_t sz = 1;
    for (size_t i = 2; i < dims.size(); ++i) sz *= dims[i];
    std::vector<double> want(dims[0] * dims[1]);
    for (size_t p = 0; p < want.size(); ++p) {
      double s = 0;
      for (int64_t i = 0; i < sz; ++i) s += X.v[p * sz + i];
      want[p] = s / sz;
    }
    ASSERT_EQ(run("GlobalAveragePool", "", {X.t}, &Y.t, 1, pool()), 0);
    EXPECT_TRUE(close(Y.v, want));
  }
}

// ---- LSTM / GRU / RNN ---------------------------------------------------------------------------

struct RnnCase {
  const char* op;
  int gates;
  const char* dir;
  int64_t seq, batch, isz, h;
  bool bias, lens, init, peep, layout1;
  std::string extra;  // more attributes
};

// The fast kernel (GEMMs, float gates) against the reference kernel (double loops), every result.
void checkRecurrent(mgrt::ThreadPool* pool, std::mt19937& rng, const RnnCase& rc) {
  const int64_t nd = std::string(rc.dir) == "bidirectional" ? 2 : 1, gh = rc.gates * rc.h;
  std::vector<int64_t> xd = rc.layout1 ? std::vector<int64_t>{rc.batch, rc.seq, rc.isz}
                                       : std::vector<int64_t>{rc.seq, rc.batch, rc.isz};
  std::vector<int64_t> sd = rc.layout1 ? std::vector<int64_t>{rc.batch, nd, rc.h}
                                       : std::vector<int64_t>{nd, rc.batch, rc.h};
  Buf X(xd, rng), W({nd, gh, rc.isz}, rng), R({nd, gh, rc.h}, rng), B({nd, 2 * gh}, rng);
  // Recurrent weights scaled by 1 / sqrt(h), as initializers do: with U(-1, 1) weights a 300-unit
  // GRU is chaotic, and a different (equally exact) summation order of its dot products moved
  // its outputs by 1e-3 after six steps; the comparison is then of the rounding, not the kernel.
  for (auto& v : R.v) v /= std::sqrt(static_cast<float>(rc.h));
  Buf H0(sd, rng), C0(sd, rng), P({nd, 3 * rc.h}, rng);
  std::vector<int64_t> lensV(static_cast<size_t>(rc.batch));
  for (int64_t b = 0; b < rc.batch; ++b) lensV[b] = rc.lens ? ((rc.seq - b) % (rc.seq + 1) + rc.seq + 1) % (rc.seq + 1) : rc.seq;
  Tensor L;
  L.dtype = mgrt::kI64;
  L.rank = 1;
  L.dims[0] = rc.batch;
  L.data = lensV.data();
  std::vector<Tensor> in = {X.t, W.t, R.t, rc.bias ? B.t : Tensor{}, rc.lens ? L : Tensor{},
                            rc.init ? H0.t : Tensor{}};
  if (std::string(rc.op) == "LSTM") {
    in.push_back(rc.init ? C0.t : Tensor{});
    in.push_back(rc.peep ? P.t : Tensor{});
  }
  std::vector<int64_t> yd = rc.layout1 ? std::vector<int64_t>{rc.batch, rc.seq, nd, rc.h}
                                       : std::vector<int64_t>{rc.seq, nd, rc.batch, rc.h};
  const int nout = std::string(rc.op) == "LSTM" ? 3 : 2;
  Buf got[3], want[3];
  for (int i = 0; i < nout; ++i) {
    got[i].init(i == 0 ? yd : sd, rng, false);
    want[i].init(i == 0 ? yd : sd, rng, false);
  }
  std::string attrs = "direction=s:" + std::string(rc.dir) + ";hidden_size=i:" + std::to_string(rc.h) +
                      ";layout=i:" + (rc.layout1 ? "1" : "0") + rc.extra;
  mgrt::Attrs a(attrs.c_str());
  mgrt::Ctx c1, c2;
  c1.pool = pool;
  Tensor o1[3] = {got[0].t, got[1].t, got[2].t}, o2[3] = {want[0].t, want[1].t, want[2].t};
  ASSERT_EQ(mgrt::findFastKernel(rc.op)(a, in.data(), static_cast<int>(in.size()), o1, nout, c1), 0) << c1.error;
  ASSERT_EQ(mgrt::findKernel(rc.op)(a, in.data(), static_cast<int>(in.size()), o2, nout, c2), 0) << c2.error;
  // With W and R marked constant the kernel packs them once into a step state: twice more (the
  // first packs, the second reuses), the very same bits. Up to 4 batch rows the unpacked run
  // takes sgemm's dot-product path and the packed one its few-rows panel kernel (another
  // summation order): there equal within the reference tolerance.
  {
    mgrt::StepState state;
    mgrt::Ctx c3;
    c3.pool = pool;
    c3.state = &state;
    c3.constInputs = (1u << 1) | (1u << 2);
    for (int pass = 0; pass < 2; ++pass) {
      Buf again[3];
      for (int i = 0; i < nout; ++i) again[i].init(i == 0 ? yd : sd, rng, false);
      Tensor o3[3] = {again[0].t, again[1].t, again[2].t};
      ASSERT_EQ(mgrt::findFastKernel(rc.op)(a, in.data(), static_cast<int>(in.size()), o3, nout, c3), 0) << c3.error;
      for (int i = 0; i < nout; ++i) {
        if (rc.batch <= 4) {
          EXPECT_TRUE(close(again[i].v, std::vector<double>(got[i].v.begin(), got[i].v.end())))
              << rc.op << " " << attrs << " result " << i << ": packed weights (pass " << pass << ") changed it";
          continue;
        }
        EXPECT_EQ(std::memcmp(again[i].v.data(), got[i].v.data(), got[i].v.size() * sizeof(float)), 0)
            << rc.op << " " << attrs << " result " << i << ": packed weights (pass " << pass << ") changed it";
      }
    }
  }
  for (int i = 0; i < nout; ++i) {
    std::vector<double> w(want[i].v.begin(), want[i].v.end());
    EXPECT_TRUE(close(got[i].v, w)) << rc.op << " " << attrs << " result " << i;
  }
}

TEST_P(FastKernels, FastRecurrentMatchesReference) {
  std::mt19937 rng(11);
  const RnnCase cases[] = {
      // op     gates dir              seq batch isz h   bias  lens   init   peep   layout1
      {"LSTM", 4, "forward",       7, 1, 13, 40, true, false, false, false, false, ""},
      {"LSTM", 4, "bidirectional", 5, 3, 8, 17, true, true, true, true, false, ""},
      {"LSTM", 4, "reverse",       6, 2, 9, 33, false, true, true, false, true, ";clip=f:0.7;input_forget=i:1"},
      {"GRU", 3, "forward",        6, 2, 10, 300, true, false, true, false, false, ""},
      {"GRU", 3, "bidirectional",  5, 3, 7, 19, true, true, true, false, true, ";linear_before_reset=i:1"},
      {"RNN", 1, "reverse",        8, 2, 5, 24, true, true, false, false, false,
       ";activations=S:Relu"},
      {"RNN", 1, "forward",        4, 1, 6, 9, false, false, true, false, false, ""},
      {"LSTM", 4, "bidirectional", 4, 6, 5, 12, true, true, true, true, false, ""},  // R transposed
      {"GRU", 3, "reverse",        5, 7, 6, 10, true, true, false, false, true, ""},
  };
  for (const RnnCase& rc : cases) checkRecurrent(pool(), rng, rc);
}

// ---- thread pool ----------------------------------------------------------------------------

// Every item runs exactly once, whatever the item count, grain and thread count, including regions
// where threads finish their own share and steal from the others'.
TEST(ThreadPool, EveryItemOnceWithStealing) {
  for (int threads : {2, 3, 5}) {
    mgrt::ThreadPool pool(threads);
    for (int64_t n : {1, 2, 3, 7, 14, 64, 1000, 4099}) {
      for (int64_t grain : {1, 4, 100}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        for (auto& h : hits) h.store(0);
        std::atomic<int64_t> calls{0};
        mgrt::parallelFor(&pool, n, grain, [&](int64_t b, int64_t e) {
          EXPECT_LE(0, b);
          EXPECT_LT(b, e);
          EXPECT_LE(e, n);
          ++calls;
          // Uneven work, so that some threads run out of their own share first.
          if (b % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
              << "item " << i << " of " << n << ", grain " << grain << ", " << threads << " threads";
        EXPECT_GT(calls.load(), 0);
      }
    }
  }
}

// runInOrder (a joint group's members, biggest first): every item once, one at a time, whichever
// thread takes it.
TEST(ThreadPool, InOrderEveryItemOnce) {
  for (int threads : {2, 3}) {
    mgrt::ThreadPool pool(threads);
    for (int64_t n : {1, 2, 5, 17}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (auto& h : hits) h.store(0);
      pool.runInOrder(n, [&](int64_t b, int64_t e) {
        ASSERT_EQ(e, b + 1) << "runInOrder hands out one item at a time";
        if (b % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
        hits[static_cast<size_t>(b)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "item " << i << " of " << n;
      }
    }
  }
}

// Each thread starts on its own contiguous share: the calling thread owns the first half, and a
// thread that finishes early steals from the back of the other's. So once both threads have
// started, within each share the owner ran a prefix and the other thread at most a suffix. (The layers of a model
// rely on this to find what they wrote in their own core's cache.) Items wait until both threads
// have started, so that neither can finish its share and steal before the other begins.
TEST(ThreadPool, EachThreadStartsOnItsOwnShare) {
  mgrt::ThreadPool pool(2);
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 20; ++round) {
    std::vector<int> byCaller(64, 0), byWorker(64, 0);
    std::atomic<bool> callerIn{false}, workerIn{false}, timedOut{false};
    mgrt::parallelFor(&pool, 64, 1, [&](int64_t b, int64_t e) {
      const bool isCaller = std::this_thread::get_id() == caller;
      (isCaller ? callerIn : workerIn).store(true);
      const auto t0 = std::chrono::steady_clock::now();
      while (!(callerIn.load() && workerIn.load())) {
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
          timedOut.store(true);
          break;
        }
        std::this_thread::yield();
      }
      for (int64_t i = b; i < e; ++i) (isCaller ? byCaller : byWorker)[static_cast<size_t>(i)] = 1;
    });
    ASSERT_FALSE(timedOut.load()) << "the worker never joined the region";
    // Per owner's range ([0, 32) the caller's, [32, 64) the worker's): the owner ran a prefix
    // that starts at the range's first item, the other thread at most a suffix.
    for (int owner = 0; owner < 2; ++owner) {
      const std::vector<int>& mine = owner == 0 ? byCaller : byWorker;
      const int64_t b = owner * 32, e = b + 32;
      ASSERT_EQ(mine[static_cast<size_t>(b)], 1) << "round " << round << ": thread " << owner
                                                  << " did not start on its own share";
      int64_t k = b;
      while (k < e && mine[static_cast<size_t>(k)]) ++k;
      for (int64_t i = k; i < e; ++i)
        ASSERT_FALSE(mine[static_cast<size_t>(i)])
            << "round " << round << ": thread " << owner << " ran item " << i
            << " after the other thread took its share from " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, FastKernels, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "T" + std::to_string(i.param);
                         });

}  // namespace
