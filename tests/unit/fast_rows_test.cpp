// Tests of the fast elementwise, Transpose and Softmax kernels (runtime/cpu/f_elementwise.cpp,
// f_rows.cpp) against the reference kernels on odd shapes: broadcasts of every kind (scalar,
// per-channel, inner and outer, rank-expanding), tails that are not a multiple of the block,
// transposes with size-1 dims and merged runs, softmax rows of odd lengths; on 1 and 2 threads,
// with and without a step state (the plan kept between runs, and rebuilt when shapes change).
// Also the accuracy bounds that f_vmath.h documents, on dense sweeps.
#include <gtest/gtest.h>

#include <cmath>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "f_vmath.h"
#include "mg_kernels.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

namespace {

using mgrt::Tensor;

struct Arr {
  std::vector<float> v;
  Tensor t;
  explicit Arr(const std::vector<int64_t>& dims, std::mt19937* rng = nullptr, float lo = -3.f, float hi = 3.f) {
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    v.assign(static_cast<size_t>(n), 777.f);
    if (rng) {
      std::uniform_real_distribution<float> d(lo, hi);
      for (auto& x : v) x = d(*rng);
    }
    t.data = v.data();
    t.dtype = mgrt::kF32;
  }
};

// Runs op's fast and reference kernels on the same operands; compares within rtol/atol.
void expectSame(const char* op, const std::string& attrs, std::vector<Arr*> ins, std::vector<int64_t> outDims,
                mgrt::ThreadPool* pool, float rtol = 2e-6f, float atol = 1e-6f) {
  SCOPED_TRACE(std::string(op) + " " + attrs);
  std::vector<Tensor> in;
  for (Arr* a : ins) in.push_back(a->t);
  Arr want(outDims), got(outDims), again(outDims);
  mgrt::Attrs a(attrs.c_str());
  mgrt::Ctx rc;
  ASSERT_EQ(mgrt::findKernel(op)(a, in.data(), static_cast<int>(in.size()), &want.t, 1, rc), 0) << rc.error;
  mgrt::KernelFn f = mgrt::findFastKernel(op);
  ASSERT_NE(f, nullptr);
  mgrt::StepState state;
  for (int pass = 0; pass < 2; ++pass) {  // pass 1 reuses the plan kept in the state
    Arr& out = pass == 0 ? got : again;
    mgrt::Ctx c;
    c.pool = pool;
    c.state = &state;
    ASSERT_EQ(f(a, in.data(), static_cast<int>(in.size()), &out.t, 1, c), 0) << c.error;
  }
  for (size_t i = 0; i < want.v.size(); ++i) {
    float w = want.v[i], g = got.v[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << "index " << i;
      continue;
    }
    ASSERT_LE(std::fabs(g - w), atol + rtol * std::fabs(w)) << "index " << i << ": fast " << g << " reference " << w;
    ASSERT_EQ(std::memcmp(&got.v[i], &again.v[i], sizeof(float)), 0) << "the kept plan changed index " << i;
  }
}

class FastRows : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() > 1) pool_ = std::make_unique<mgrt::ThreadPool>(GetParam());
  }
  std::unique_ptr<mgrt::ThreadPool> pool_;
  std::mt19937 rng_{7};
};

TEST_P(FastRows, BinaryBroadcasts) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{1, 37, 29, 31}, {37, 1, 1}},      // per-channel, odd spatial
      {{2, 5, 7, 3}, {1}},                // scalar
      {{3, 1, 17}, {3, 4, 1}},            // both broadcast, output bigger than either
      {{1, 1000}, {1000}},                // rank-expanding
      {{4, 1, 33, 1}, {1, 5, 1, 9}},      // outer products
      {{2, 3, 4, 5, 6}, {2, 3, 4, 5, 6}}, // same shape, tail of 720 % 1024
      {{1, 130, 2051}, {130, 1}},         // long rows, block crossing row ends
  };
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    for (const auto& s : shapes) {
      const bool pow = std::string(op) == "Pow";
      Arr x(s.first, &rng_, pow ? 0.1f : -3.f, 3.f), y(s.second, &rng_, pow ? -2.f : 0.5f, 2.f);
      std::vector<int64_t> o;
      int r = static_cast<int>(std::max(s.first.size(), s.second.size()));
      for (int d = 0; d < r; ++d) {
        int a = d - (r - static_cast<int>(s.first.size())), b = d - (r - static_cast<int>(s.second.size()));
        int64_t da = a >= 0 ? s.first[a] : 1, db = b >= 0 ? s.second[b] : 1;
        o.push_back(std::max(da, db));
      }
      expectSame(op, "", {&x, &y}, o, pool_.get(), pow ? 2e-6f : 0.f, pow ? 1e-6f : 0.f);
      expectSame(op, "", {&y, &x}, o, pool_.get(), pow ? 1e-5f : 0.f, pow ? 1e-6f : 0.f);
    }
  }
  // Pow by exactly 2 (decomposed LayerNorm) takes the x*x path: still exact.
  Arr x({3, 7, 11}, &rng_), two({1});
  two.v[0] = 2.f;
  expectSame("Pow", "", {&x, &two}, {3, 7, 11}, pool_.get(), 0.f, 0.f);
}

TEST_P(FastRows, UnaryOps) {
  Arr x({3, 41, 67}, &rng_, -12.f, 12.f), pos({3, 41, 67}, &rng_, 0.01f, 50.f);
  for (const char* op : {"Relu", "Abs", "Neg"}) expectSame(op, "", {&x}, {3, 41, 67}, pool_.get(), 0.f, 0.f);
  for (const char* op : {"Sigmoid", "Tanh", "Exp"}) expectSame(op, "", {&x}, {3, 41, 67}, pool_.get(), 4e-7f, 1e-30f);
  expectSame("Erf", "", {&x}, {3, 41, 67}, pool_.get(), 0.f, 3e-7f);
  for (const char* op : {"Sqrt", "Reciprocal"}) expectSame(op, "", {&pos}, {3, 41, 67}, pool_.get(), 0.f, 0.f);
}

TEST_P(FastRows, PReluAndExpand) {
  // PRelu: per-channel slope (ONNX's unidirectional broadcast), a scalar, a full tensor; the
  // reference selects, the fast chain computes r + s * (x - r): equal values.
  Arr x({2, 16, 9, 11}, &rng_, -3.f, 3.f), sc({16, 1, 1}, &rng_, -1.f, 1.f), s1({1}, &rng_), sf({2, 16, 9, 11}, &rng_);
  expectSame("PRelu", "", {&x, &sc}, {2, 16, 9, 11}, pool_.get(), 0.f, 0.f);
  expectSame("PRelu", "", {&x, &s1}, {2, 16, 9, 11}, pool_.get(), 0.f, 0.f);
  expectSame("PRelu", "", {&x, &sf}, {2, 16, 9, 11}, pool_.get(), 0.f, 0.f);
  // Expand: a middle axis (DIN's [B,1,D] -> [B,T,D]), a new leading axis, an outer product.
  struct Case {
    std::vector<int64_t> in, out;
  };
  for (const Case& c : {Case{{33, 1, 64}, {33, 50, 64}}, Case{{7, 1}, {3, 7, 5}}, Case{{1, 9, 1}, {4, 9, 130}}}) {
    Arr e(c.in, &rng_);
    Arr shape({static_cast<int64_t>(c.out.size())});
    shape.t.dtype = mgrt::kI64;
    std::vector<int64_t> dims(c.out);
    shape.t.data = dims.data();
    expectSame("Expand", "", {&e, &shape}, c.out, pool_.get(), 0.f, 0.f);
  }
}

TEST_P(FastRows, LocalResponseNormalization) {
  // AlexNet's / GoogLeNet's LRN (size 5, beta 0.75) on odd channel and spatial counts (blocks of
  // 512 with a tail, windows clipped at both channel ends), beta 0.5 / 1 / 0.6 (std::pow), even
  // size, rank 2 and 3; against the double-precision reference.
  Arr x({2, 13, 23, 29}, &rng_, -4.f, 4.f), x2({5, 40}, &rng_, -2.f, 2.f), x3({1, 8, 700}, &rng_);
  expectSame("LRN", "size=i:5;alpha=f:0.0001;beta=f:0.75;bias=f:1", {&x}, {2, 13, 23, 29}, pool_.get(), 2e-6f, 1e-7f);
  expectSame("LRN", "size=i:3;alpha=f:0.5;beta=f:0.5;bias=f:2", {&x}, {2, 13, 23, 29}, pool_.get(), 2e-6f, 1e-7f);
  expectSame("LRN", "size=i:4;alpha=f:0.3;beta=f:1;bias=f:1.5", {&x2}, {5, 40}, pool_.get(), 2e-6f, 1e-7f);
  expectSame("LRN", "size=i:2;alpha=f:0.2;beta=f:0.6;bias=f:1", {&x3}, {1, 8, 700}, pool_.get(), 2e-6f, 1e-7f);
}

TEST_P(FastRows, SumOfMany) {
  Arr a({2, 9, 13}, &rng_), b({9, 1}, &rng_), c({1}, &rng_), d({2, 9, 13}, &rng_);
  expectSame("Sum", "", {&a, &b, &c, &d}, {2, 9, 13}, pool_.get(), 0.f, 0.f);
}

TEST_P(FastRows, FusedChains) {
  // DenseNet's pre-activation chain, a GELU chain, and every unary and binary op once.
  Arr x({1, 64, 19, 23}, &rng_), s({64, 1, 1}, &rng_), t({64, 1, 1}, &rng_), u({1, 64, 1, 1}, &rng_);
  expectSame("MgElementwise", "program=S:Mul i0 i1|Add t0 i2|Mul t1 i3|Add t2 i1|Relu t3",
             {&x, &s, &t, &u}, {1, 64, 19, 23}, pool_.get(), 0.f, 0.f);
  Arr h({1, 33, 200}, &rng_, -6.f, 6.f), k({1}, &rng_, 1.f, 2.f);
  expectSame("MgElementwise", "program=S:Div i0 i1|Erf t0|Add t1 i1|Mul i0 t2|Gelu t3|Tanh t4|Sigmoid t5",
             {&h, &k}, {1, 33, 200}, pool_.get(), 2e-6f, 5e-7f);
  expectSame("MgElementwise",
             "program=S:Abs i0|Neg t0|Exp t1|Sqrt t2|Reciprocal t3|Floor i0|Ceil i0|Softsign i0|Sub t6 t5|"
             "Max t8 t7|Min t9 t4|LeakyRelu t10 alpha=0.1|Elu i0 alpha=0.7|HardSwish t12|Clip t13 alpha=-1 beta=1|"
             "HardSigmoid t14 alpha=0.2 beta=0.5|Softplus t15|Log t16|Pow t17 i1",
             {&h, &k}, {1, 33, 200}, pool_.get(), 4e-6f, 1e-6f);
}

TEST_P(FastRows, Transposes) {
  struct Case {
    std::vector<int64_t> dims, perm;
  };
  const Case cases[] = {
      {{1, 128, 4, 32}, {0, 2, 1, 3}},  // attention heads: rows stay contiguous
      {{1, 4, 128, 32}, {0, 1, 3, 2}},  // K^T: a 2-D transpose per head
      {{37, 53}, {1, 0}},               // odd 2-D
      {{2, 3, 5, 7, 11}, {4, 2, 0, 3, 1}},
      {{1, 1, 9, 1}, {3, 2, 1, 0}},     // only size-1 dims move
      {{6, 1, 35, 17}, {2, 3, 1, 0}},
  };
  for (const Case& c : cases) {
    Arr x(c.dims, &rng_);
    std::vector<int64_t> o;
    std::string attrs = "perm=i:";
    for (size_t d = 0; d < c.perm.size(); ++d) {
      o.push_back(c.dims[c.perm[d]]);
      attrs += (d ? "," : "") + std::to_string(c.perm[d]);
    }
    expectSame("Transpose", attrs, {&x}, o, pool_.get(), 0.f, 0.f);
  }
  Arr x({5, 7, 3}, &rng_);
  expectSame("Transpose", "", {&x}, {3, 7, 5}, pool_.get(), 0.f, 0.f);  // default: reversed
}

TEST_P(FastRows, SoftmaxRows) {
  for (int64_t n : {1, 7, 16, 128, 1001}) {
    Arr x({3, 5, n}, &rng_, -20.f, 20.f);
    expectSame("Softmax", "axis=i:-1", {&x}, {3, 5, n}, pool_.get(), 2e-6f, 1e-9f);
    expectSame("LogSoftmax", "axis=i:2", {&x}, {3, 5, n}, pool_.get(), 2e-6f, 2e-6f);
    // Older opsets: rows are everything from the axis on.
    expectSame("Softmax", "axis=i:1;mg_coerce_2d=i:1", {&x}, {3, 5, n}, pool_.get(), 2e-6f, 1e-9f);
  }
  {  // masked attention: -inf scores (every third, and a 16-lane block of them) get weight 0
    Arr m({2, 3, 37}, &rng_, -5.f, 5.f);
    for (size_t i = 0; i < m.v.size(); i += 3) m.v[i] = -HUGE_VALF;
    for (size_t i = 40; i < 56; ++i) m.v[i] = -HUGE_VALF;
    expectSame("Softmax", "axis=i:-1", {&m}, {2, 3, 37}, pool_.get(), 2e-6f, 1e-9f);
  }
  Arr x({4, 9, 6}, &rng_);  // a middle axis goes to the reference kernel
  expectSame("Softmax", "axis=i:1", {&x}, {4, 9, 6}, pool_.get(), 0.f, 0.f);
}

INSTANTIATE_TEST_SUITE_P(Threads, FastRows, ::testing::Values(1, 2));

TEST(FastRows, PlanFollowsShapeChanges) {
  // One step state, two shapes: the second run must not reuse the first one's broadcast plan.
  std::mt19937 rng(3);
  Arr a({4, 6}, &rng), b({6}, &rng), c({3, 5}, &rng), d({3, 1}, &rng);
  Arr o1({4, 6}), o2({3, 5}), w2({3, 5});
  mgrt::Attrs attrs("");
  mgrt::StepState state;
  mgrt::Ctx ctx;
  ctx.state = &state;
  Tensor in1[] = {a.t, b.t}, in2[] = {c.t, d.t};
  ASSERT_EQ(mgrt::findFastKernel("Add")(attrs, in1, 2, &o1.t, 1, ctx), 0);
  ASSERT_EQ(mgrt::findFastKernel("Add")(attrs, in2, 2, &o2.t, 1, ctx), 0);
  mgrt::Ctx ref;
  ASSERT_EQ(mgrt::findKernel("Add")(attrs, in2, 2, &w2.t, 1, ref), 0);
  EXPECT_EQ(o2.v, w2.v);
}

// A pitched operand (a bound KV-cache buffer: 2 heads of 5 rows of 4 in storage of 9 rows per head)
// read in place by MatMul (B pitched along its rows, A too) and Transpose, and densified for a
// MatMul it cannot take (pitched along the columns): the results equal those on the packed copy
// bit for bit, at 1 and 2 threads.
TEST(FastRows, PitchedOperandsReadInPlace) {
  std::mt19937 rng(9);
  Arr store({1, 2, 9, 4}, &rng), q({1, 2, 3, 5}, &rng);
  Tensor kv = store.t;
  kv.dims[2] = 5;
  kv.pitchAxis = 2;
  kv.pitch = 9;
  std::vector<unsigned char> buf;
  const Tensor dense = mgrt::densify(kv, buf);
  ASSERT_FALSE(dense.pitched());
  const float* d = static_cast<const float*>(dense.data);
  EXPECT_EQ(d[5 * 4], store.v[9 * 4]);  // head 1's first row comes after 9 rows of head 0
  EXPECT_TRUE(mgrt::readsPitched("MatMul", 1, kv));
  EXPECT_TRUE(mgrt::readsPitched("Transpose", 0, kv));
  EXPECT_FALSE(mgrt::readsPitched("Softmax", 0, kv));
  mgrt::ThreadPool pool(2);
  for (mgrt::ThreadPool* p : {static_cast<mgrt::ThreadPool*>(nullptr), &pool}) {
    mgrt::Ctx ctx;
    ctx.pool = p;
    mgrt::Attrs none(""), perm("perm=i:0,1,3,2");
    Arr got({1, 2, 3, 4}), want({1, 2, 3, 4}), tg({1, 2, 4, 5}), tw({1, 2, 4, 5});
    Tensor in[] = {q.t, kv}, inDense[] = {q.t, dense};
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, in, 2, &got.t, 1, ctx), 0) << ctx.error;
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, inDense, 2, &want.t, 1, ctx), 0) << ctx.error;
    EXPECT_EQ(got.v, want.v);
    ASSERT_EQ(mgrt::findFastKernel("Transpose")(perm, &kv, 1, &tg.t, 1, ctx), 0) << ctx.error;
    ASSERT_EQ(mgrt::findFastKernel("Transpose")(perm, &dense, 1, &tw.t, 1, ctx), 0) << ctx.error;
    EXPECT_EQ(tg.v, tw.v);
    // A pitched along its rows: [1, 2, 5, 4] x [4, 3]-shaped B of each head
    Arr b({1, 2, 4, 3}, &rng), ga({1, 2, 5, 3}), wa({1, 2, 5, 3});
    Tensor inA[] = {kv, b.t}, inADense[] = {dense, b.t};
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, inA, 2, &ga.t, 1, ctx), 0) << ctx.error;
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, inADense, 2, &wa.t, 1, ctx), 0) << ctx.error;
    EXPECT_EQ(ga.v, wa.v);
    // one head: B's single matrix (batch dims all 1) is packed whatever its pitch; A folds into M
    Tensor one = kv;
    one.dims[1] = 1;
    std::vector<unsigned char> obuf;
    const Tensor oneDense = mgrt::densify(one, obuf);
    Arr q1({1, 3, 3, 5}, &rng), g1({1, 3, 3, 4}), w1({1, 3, 3, 4});
    Tensor in1[] = {q1.t, one}, in1Dense[] = {q1.t, oneDense};
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, in1, 2, &g1.t, 1, ctx), 0) << ctx.error;
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, in1Dense, 2, &w1.t, 1, ctx), 0) << ctx.error;
    EXPECT_EQ(g1.v, w1.v);
    // pitched along the columns: the kernel densifies it for the reference kernel
    Tensor cols = store.t;
    cols.dims[2] = 9;
    cols.dims[3] = 3;
    cols.pitchAxis = 3;
    cols.pitch = 4;
    std::vector<unsigned char> cbuf;
    const Tensor colsDense = mgrt::densify(cols, cbuf);
    Arr a2({1, 2, 2, 9}, &rng), gc({1, 2, 2, 3}), wc({1, 2, 2, 3});
    Tensor inC[] = {a2.t, cols}, inCDense[] = {a2.t, colsDense};
    ASSERT_EQ(mgrt::findFastKernel("MatMul")(none, inC, 2, &gc.t, 1, ctx), 0) << ctx.error;
    mgrt::Ctx ref;
    ASSERT_EQ(mgrt::findKernel("MatMul")(none, inCDense, 2, &wc.t, 1, ref), 0) << ref.error;
    EXPECT_EQ(gc.v, wc.v);
  }
}

TEST(FastRows, NonFloatGoesToTheReference) {
  std::vector<int64_t> x = {1, -2, 3}, y = {4, 5, -6}, z(3, 0);
  Tensor in[2];
  for (int i = 0; i < 2; ++i) {
    in[i].dtype = mgrt::kI64;
    in[i].rank = 1;
    in[i].dims[0] = 3;
  }
  in[0].data = x.data();
  in[1].data = y.data();
  Tensor out = in[0];
  out.data = z.data();
  mgrt::Attrs attrs("");
  mgrt::Ctx ctx;
  ASSERT_EQ(mgrt::findFastKernel("Mul")(attrs, in, 2, &out, 1, ctx), 0) << ctx.error;
  EXPECT_EQ(z, (std::vector<int64_t>{4, -10, -18}));
}

// f_vmath.h's documented bounds, on dense sweeps against double precision.
double ulpError(float got, double want) {
  return std::fabs(got - want) / (std::fabs(want) * 5.9604644775390625e-8 + 1e-45);
}

TEST(VMath, DocumentedAccuracy) {
  const int n = 1 << 20;
  double expUlp = 0, tanhUlp = 0, sigUlp = 0, erfAbs = 0;
  for (int i = 0; i <= n; ++i) {
    float x = -87.f + 175.5f * static_cast<float>(i) / n;
    expUlp = std::max(expUlp, ulpError(mgrt::vm::vexp(x), std::exp(static_cast<double>(x))));
    float t = -12.f + 24.f * static_cast<float>(i) / n;
    tanhUlp = std::max(tanhUlp, ulpError(mgrt::vm::vtanh(t), std::tanh(static_cast<double>(t))));
    float s = -80.f + 110.f * static_cast<float>(i) / n;
    sigUlp = std::max(sigUlp, ulpError(mgrt::vm::vsigmoid(s), 1.0 / (1.0 + std::exp(-static_cast<double>(s)))));
    float e = -6.f + 12.f * static_cast<float>(i) / n;
    erfAbs = std::max(erfAbs, std::fabs(mgrt::vm::verf(e) - std::erf(static_cast<double>(e))));
  }
  EXPECT_LE(expUlp, 2.0);
  EXPECT_LE(tanhUlp, 3.0);
  EXPECT_LE(sigUlp, 3.0);
  EXPECT_LE(erfAbs, 2e-7);
  EXPECT_EQ(mgrt::vm::vexp(100.f), HUGE_VALF);
  EXPECT_EQ(mgrt::vm::vexp(-100.f), 0.f);
  EXPECT_TRUE(std::isnan(mgrt::vm::vexp(NAN)));
  EXPECT_TRUE(std::isnan(mgrt::vm::vtanh(NAN)));
  EXPECT_EQ(mgrt::vm::vtanh(INFINITY), 1.f);
  EXPECT_EQ(mgrt::vm::verf(-INFINITY), -1.f);
}

#if defined(__AVX512F__)
// The 16-lane forms (v16, what the AVX-512 epilogues and actRow use) within the same bounds
// (sigmoid 3.5 ulp), and the same special values.
TEST(VMath, SixteenLanesDocumentedAccuracy) {
  namespace v = mgrt::vm::v16;
  const int n = 1 << 20;
  double expUlp = 0, tanhUlp = 0, sigUlp = 0, erfAbs = 0;
  alignas(64) float in[4][16], out[4][16];
  for (int i0 = 0; i0 <= n; i0 += 16) {
    for (int l = 0; l < 16; ++l) {
      const float f = static_cast<float>(std::min(i0 + l, n)) / n;
      in[0][l] = -87.f + 175.5f * f;
      in[1][l] = -12.f + 24.f * f;
      in[2][l] = -80.f + 110.f * f;
      in[3][l] = -6.f + 12.f * f;
    }
    _mm512_store_ps(out[0], v::exp(_mm512_load_ps(in[0])));
    _mm512_store_ps(out[1], v::tanh(_mm512_load_ps(in[1])));
    _mm512_store_ps(out[2], v::sigmoid(_mm512_load_ps(in[2])));
    _mm512_store_ps(out[3], v::erf(_mm512_load_ps(in[3])));
    for (int l = 0; l < 16; ++l) {
      expUlp = std::max(expUlp, ulpError(out[0][l], std::exp(static_cast<double>(in[0][l]))));
      tanhUlp = std::max(tanhUlp, ulpError(out[1][l], std::tanh(static_cast<double>(in[1][l]))));
      sigUlp = std::max(sigUlp, ulpError(out[2][l], 1.0 / (1.0 + std::exp(-static_cast<double>(in[2][l])))));
      erfAbs = std::max(erfAbs, std::fabs(out[3][l] - std::erf(static_cast<double>(in[3][l]))));
    }
  }
  EXPECT_LE(expUlp, 2.0);
  EXPECT_LE(tanhUlp, 3.0);
  EXPECT_LE(sigUlp, 3.5);  // the reciprocal's Newton step adds up to half an ulp
  EXPECT_LE(erfAbs, 2e-7);
  alignas(64) float sp[16] = {100.f, -100.f, NAN, INFINITY, -INFINITY, 0.f, -0.f, 1e-30f,
                              -200.f, 89.f, 20.f, -20.f, 0.3f, -0.3f, 5.f, -5.f};
  alignas(64) float e[16], t[16], s[16], r[16];
  _mm512_store_ps(e, v::exp(_mm512_load_ps(sp)));
  _mm512_store_ps(t, v::tanh(_mm512_load_ps(sp)));
  _mm512_store_ps(s, v::sigmoid(_mm512_load_ps(sp)));
  _mm512_store_ps(r, v::erf(_mm512_load_ps(sp)));
  EXPECT_EQ(e[0], HUGE_VALF);
  EXPECT_EQ(e[1], 0.f);
  EXPECT_TRUE(std::isnan(e[2]) && std::isnan(t[2]) && std::isnan(s[2]) && std::isnan(r[2]));
  EXPECT_EQ(t[3], 1.f);
  EXPECT_EQ(t[4], -1.f);
  EXPECT_EQ(r[4], -1.f);
  EXPECT_EQ(s[3], 1.f);
  EXPECT_EQ(s[4], 0.f);
  EXPECT_EQ(s[8], 0.f);  // e^200 overflows: 1 / inf
  EXPECT_EQ(t[5], 0.f);
  for (int l = 0; l < 16; ++l)  // every lane as the scalar form computes it, within 3 ulp
    if (!std::isnan(sp[l])) {
      EXPECT_LE(ulpError(t[l], mgrt::vm::vtanh(sp[l])), 3.0) << sp[l];
      EXPECT_LE(ulpError(s[l], mgrt::vm::vsigmoid(sp[l])), 3.0) << sp[l];
    }
}
#endif

}  // namespace
