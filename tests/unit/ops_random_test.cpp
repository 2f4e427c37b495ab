// Random op family (src/ops/random_ops.cpp, runtime/cpu/k_random.cpp). The values are random, so
// these are statistical checks with fixed seeds: means, variances and frequencies of 100000
// draws within 5 standard errors of what the distribution says (a correct generator fails one
// of them with probability below 1e-6, and a fixed seed makes a pass a pass every time); plus
// the range [low, high), float32 and float64 results, seed determinism (same seed, same values,
// at every thread count; different seeds, different values), fresh values without a seed, shape
// inference and its errors, and that no pass folds or merges the generators (kNoFold).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <filesystem>

#include "magneto/frontend/onnx_import.h"
#include "magneto/interp/fold_node.h"
#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "mg_kernels.h"
#include "mg_threadpool.h"
#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

constexpr int64_t kN = 100000;

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size() - 1);
  return m;
}

// The one output %y of a graph made of `body`.
Tensor runY(const std::string& body, const std::map<std::string, Tensor>& inputs = {},
            const std::string& decls = "") {
  auto r = evalText("graph @t {\n" + decls + "  " + body + "\n  output %y\n}\n", inputs);
  return r.count("y") ? r["y"] : Tensor();
}

std::string shapeN() { return "shape = [" + std::to_string(kN) + "]"; }

// Mean and variance of U[low, high): var = w^2 / 12, var of the sample variance ~ (mu4 -
// sigma^4) / n with mu4 = w^4 / 80.
void expectUniform(const std::vector<double>& v, double low, double high) {
  for (double x : v) {
    ASSERT_GE(x, low);
    ASSERT_LT(x, high);
  }
  const double w = high - low, n = static_cast<double>(v.size());
  const double var = w * w / 12, mu4 = w * w * w * w / 80;
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, (low + high) / 2, 5 * std::sqrt(var / n));
  EXPECT_NEAR(m.var, var, 5 * std::sqrt((mu4 - var * var) / n));
  // Each tenth of the interval gets 10% of the draws.
  std::vector<int> bins(10);
  for (double x : v) bins[std::min(9, static_cast<int>((x - low) / w * 10))]++;
  for (int b : bins) EXPECT_NEAR(b / n, 0.1, 5 * std::sqrt(0.09 / n));
}

// N(mean, scale^2): the sample mean, the sample variance (sd 2^0.5 sigma^2 / n^0.5) and the share
// within one sigma (0.682689).
void expectNormal(const std::vector<double>& v, double mean, double scale) {
  const double n = static_cast<double>(v.size()), var = scale * scale;
  Moments m = moments(v);
  EXPECT_NEAR(m.mean, mean, 5 * scale / std::sqrt(n));
  EXPECT_NEAR(m.var, var, 5 * var * std::sqrt(2 / n));
  double inside = 0;
  for (double x : v) inside += std::fabs(x - mean) < scale;
  const double p = 0.6826894921;
  EXPECT_NEAR(inside / n, p, 5 * std::sqrt(p * (1 - p) / n));
}

TEST(RandomUniform, StatisticsFloat32AndFloat64) {
  Tensor y = runY("%y = RandomUniform() {high = 3.0, low = -2.0, seed = 1.0, " + shapeN() + "}");
  ASSERT_EQ(y.dtype(), DType::kF32);
  ASSERT_EQ(y.dims(), (Dims{kN}));
  expectUniform(values(y), -2, 3);
  y = runY("%y = RandomUniform() {dtype = 11, seed = 2.0, shape = [100, 1000]}");
  ASSERT_EQ(y.dtype(), DType::kF64);
  ASSERT_EQ(y.dims(), (Dims{100, 1000}));
  expectUniform(values(y), 0, 1);
}

TEST(RandomUniform, NarrowFloat32RangeStaysBelowHigh) {
  // [1, 1 + 2^-20): float32 has 8 values there, so rounding to nearest would give 1 + 2^-20 for
  // about one draw in 16 were it not moved below high.
  Tensor y = runY("%y = RandomUniform() {high = 1.00000095367431640625, low = 1.0, seed = 3.0, "
                  "shape = [10000]}");
  for (double x : values(y)) {
    ASSERT_GE(x, 1.0);
    ASSERT_LT(x, 1.00000095367431640625);
  }
}

TEST(RandomNormal, StatisticsFloat32AndFloat64) {
  Tensor y = runY("%y = RandomNormal() {mean = 1.5, scale = 2.0, seed = 4.0, " + shapeN() + "}");
  ASSERT_EQ(y.dtype(), DType::kF32);
  expectNormal(values(y), 1.5, 2);
  y = runY("%y = RandomNormal() {dtype = 11, seed = 5.0, " + shapeN() + "}");
  ASSERT_EQ(y.dtype(), DType::kF64);
  expectNormal(values(y), 0, 1);
}

TEST(RandomLike, ShapeAndTypeFromTheInput) {
  const std::string decls = "  input %x : f64[200,500]\n";
  std::map<std::string, Tensor> in = {{"x", Tensor::zeros({DType::kF64, {200, 500}})}};
  Tensor y = runY("%y = RandomUniformLike(%x) {high = 10.0, low = 5.0, seed = 6.0}", in, decls);
  EXPECT_EQ(y.dtype(), DType::kF64);
  EXPECT_EQ(y.dims(), (Dims{200, 500}));
  expectUniform(values(y), 5, 10);
  y = runY("%y = RandomNormalLike(%x) {dtype = 1, mean = -3.0, scale = 0.5, seed = 7.0}", in,
           decls);
  EXPECT_EQ(y.dtype(), DType::kF32);
  EXPECT_EQ(y.dims(), (Dims{200, 500}));
  expectNormal(values(y), -3, 0.5);
  // An integer input gives the shape only: with dtype the result is float.
  in = {{"x", Tensor::zeros({DType::kI64, {3, 4}})}};
  y = runY("%y = RandomNormalLike(%x) {dtype = 11}", in, "  input %x : i64[3,4]\n");
  EXPECT_EQ(y.dtype(), DType::kF64);
  EXPECT_EQ(y.dims(), (Dims{3, 4}));
}

TEST(RandomBernoulli, FrequencyPerProbability) {
  const std::vector<double> ps = {0, 0.05, 0.3, 0.5, 0.9, 1};
  const int64_t per = 50000;
  std::vector<float> p;
  for (double q : ps) p.insert(p.end(), per, static_cast<float>(q));
  const int64_t n = static_cast<int64_t>(p.size());
  std::map<std::string, Tensor> in = {{"p", Tensor::fromVector(DType::kF32, {n}, p)}};
  const std::string decls = "  input %p : f32[" + std::to_string(n) + "]\n";
  for (const char* dtype : {"", " dtype = 11,", " dtype = 9,", " dtype = 6,"}) {
    Tensor y = runY(std::string("%y = Bernoulli(%p) {") + dtype + " seed = 8.0}", in, decls);
    ASSERT_EQ(y.numel(), n) << dtype;
    std::vector<double> v = values(y);
    for (size_t k = 0; k < ps.size(); ++k) {
      double ones = 0;
      for (int64_t i = 0; i < per; ++i) {
        double x = v[k * per + i];
        ASSERT_TRUE(x == 0 || x == 1) << x;
        ones += x;
      }
      const double q = ps[k], sd = std::sqrt(q * (1 - q) / per);
      if (q == 0 || q == 1) EXPECT_EQ(ones / per, q) << dtype;  // exactly, never by chance
      else EXPECT_NEAR(ones / per, q, 5 * sd) << dtype << " p = " << q;
    }
  }
  EXPECT_EQ(runY("%y = Bernoulli(%p)", in, decls).dtype(), DType::kF32);
  EXPECT_EQ(runY("%y = Bernoulli(%p) {dtype = 9}", in, decls).dtype(), DType::kBool);
}

TEST(RandomBernoulli, ProbabilityOutsideZeroOneFailsTheRun) {
  auto g = parseGraph("graph @t {\n  const %p : f32[3] = dense<[0.5, 1.5, 0]>\n"
                      "  %y = Bernoulli(%p)\n  output %y\n}\n");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto r = interpret(*g.value(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("probability 1.5 at element 1 is not in [0, 1]"),
            std::string::npos)
      << r.status().message();
}

TEST(RandomMultinomial, FrequencyPerClass) {
  // Row 0: log-probabilities of (0.2, 0.5, 0.3, 0) (ln 0 as a very negative number); row 1:
  // unnormalized (all equal) -> uniform over 4 classes.
  const std::vector<double> p0 = {0.2, 0.5, 0.3, 0};
  std::vector<float> x = {std::log(0.2f), std::log(0.5f), std::log(0.3f), -1e30f, 7, 7, 7, 7};
  std::map<std::string, Tensor> in = {{"x", Tensor::fromVector(DType::kF32, {2, 4}, x)}};
  for (const char* dtype : {"", "dtype = 7, "}) {
    Tensor y = runY(std::string("%y = Multinomial(%x) {") + dtype + "sample_size = 50000, seed = 9.0}",
                    in, "  input %x : f32[2,4]\n");
    ASSERT_EQ(y.dims(), (Dims{2, 50000}));
    EXPECT_EQ(y.dtype(), *dtype ? DType::kI64 : DType::kI32);
    std::vector<double> v = values(y);
    for (int row = 0; row < 2; ++row) {
      std::vector<double> count(4);
      for (int s = 0; s < 50000; ++s) {
        double k = v[row * 50000 + s];
        ASSERT_TRUE(k >= 0 && k < 4) << k;
        count[static_cast<size_t>(k)]++;
      }
      for (int c = 0; c < 4; ++c) {
        const double q = row == 0 ? p0[c] : 0.25;
        if (q == 0) EXPECT_EQ(count[c], 0);
        else EXPECT_NEAR(count[c] / 50000, q, 5 * std::sqrt(q * (1 - q) / 50000)) << row << c;
      }
    }
  }
}

TEST(RandomSeed, SameSeedSameValuesDifferentSeedsDiffer) {
  const std::string a = "%y = RandomNormal() {seed = 11.0, shape = [1000]}";
  std::vector<double> first = values(runY(a));
  EXPECT_EQ(values(runY(a)), first);
  std::vector<double> other = values(runY("%y = RandomNormal() {seed = 12.0, shape = [1000]}"));
  int same = 0;
  for (size_t i = 0; i < first.size(); ++i) same += first[i] == other[i];
  EXPECT_EQ(same, 0);
  // Seed 0 is a seed like any other (not "absent").
  const std::string z = "%y = RandomUniform() {seed = 0.0, shape = [64]}";
  EXPECT_EQ(values(runY(z)), values(runY(z)));
}

TEST(RandomSeed, UnseededRunsDrawNewValues) {
  const std::string a = "%y = RandomUniform() {shape = [1000]}";
  std::vector<double> first = values(runY(a)), second = values(runY(a));
  int same = 0;
  for (size_t i = 0; i < first.size(); ++i) same += first[i] == second[i];
  EXPECT_LT(same, 5);  // float32 draws: a coincidence is 2^-24 per element
  expectUniform(first, 0, 1);
}

// The kernel directly, without a pool and on 1, 3 and 8 threads: the same values (each element
// depends only on the seed and its index).
TEST(RandomSeed, SameValuesAtEveryThreadCount) {
  for (const char* op : {"RandomUniform", "RandomNormal", "Bernoulli"}) {
    mgrt::KernelFn fn = mgrt::findKernel(op);
    ASSERT_NE(fn, nullptr) << op;
    mgrt::Attrs attrs("high=f:2;low=f:-1;seed=f:13");
    const int64_t n = 100003;
    std::vector<float> p(n, 0.5f);
    mgrt::Tensor in;
    in.data = p.data();
    in.rank = 1;
    in.dims[0] = n;
    std::vector<std::vector<float>> results;
    for (int threads : {0, 1, 3, 8}) {
      std::vector<float> y(n);
      mgrt::Tensor out;
      out.data = y.data();
      out.rank = 1;
      out.dims[0] = n;
      std::unique_ptr<mgrt::ThreadPool> pool;
      if (threads > 0) pool = std::make_unique<mgrt::ThreadPool>(threads);
      mgrt::Ctx ctx;
      ctx.pool = pool.get();
      ASSERT_EQ(fn(attrs, &in, 1, &out, 1, ctx), 0) << ctx.error;
      results.push_back(y);
    }
    for (size_t k = 1; k < results.size(); ++k) EXPECT_EQ(results[k], results[0]) << op;
  }
}

constexpr const char* kTwoUnseeded = R"(graph @t {
  const %c : f32[4,4] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]>
  %a = RandomUniform() {shape = [4, 4]}
  %b = RandomUniform() {shape = [4, 4]}
  %s = RandomUniformLike(%c) {seed = 1.0}
  %y = Add(%a, %b)
  %z = Add(%y, %s)
  output %a
  output %b
  output %z
})";

int countKind(const Graph& g, const std::string& kind) {
  int n = 0;
  for (Node* node : g.nodes()) n += node->kind() == kind;
  return n;
}

// The generators are kNoFold: foldNode refuses them even with all operands constant, and the
// whole default pipeline (fold, canonicalize, fusion, dce, parallel passes) keeps two unseeded
// RandomUniform nodes with equal attributes as two nodes that still draw different values.
TEST(RandomPasses, NeverFoldedNorMerged) {
  auto g = parseVerified(kTwoUnseeded);
  ASSERT_TRUE(g);
  for (Node* n : g->nodes()) {
    if (n->kind() == "Add") continue;
    EXPECT_TRUE(n->schema()->has(kNoFold)) << n->kind();
    auto folded = foldNode(*g, n, nullptr);
    ASSERT_TRUE(folded.ok());
    EXPECT_FALSE(folded.value()) << n->kind();
  }
  for (const char* target : {"cpu", "cuda"}) {
    auto h = parseVerified(kTwoUnseeded);
    ASSERT_TRUE(h);
    PassContext ctx;
    ctx.verifyEach = true;
    auto pipeline = parsePipeline(defaultPipeline(target, /*parallelOpt=*/true));
    ASSERT_TRUE(pipeline.ok());
    Status s = runPipeline(*h, pipeline.value(), ctx);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(countKind(*h, "RandomUniform"), 2) << target;
    EXPECT_EQ(countKind(*h, "RandomUniformLike"), 1) << target;
    for (Value* o : h->outputs()) EXPECT_FALSE(o->isConstant()) << o->name();
    auto r = interpret(*h, {});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NE(values(r.value()["a"]), values(r.value()["b"]));
  }
}

// The importer folds node by node what has constant operands; a generator it keeps even when its
// operand is bound to a constant (ONNX's Bernoulli function body: RandomUniformLike, Greater,
// Cast), and with it what reads the draws.
TEST(RandomPasses, ImporterKeepsTheGenerator) {
  const std::string path =
      "/usr/share/libonnx-testdata/data/node/test_bernoulli_seed_expanded/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not installed";
  ImportOptions opts;
  opts.bindings["x"] = Tensor::fromVector<float>(DType::kF32, {10}, std::vector<float>(10, 0.5f));
  auto g = importOnnx(path, opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(countKind(**g, "RandomUniformLike"), 1);
  EXPECT_EQ(countKind(**g, "Greater"), 1);
  EXPECT_FALSE((*g)->outputs()[0]->isConstant());
}

TEST(RandomInference, ShapesTypesAndErrors) {
  auto err = [](const std::string& node, const std::string& decls = "") {
    return inferError("graph @t {\n" + decls + "  " + node + "\n  output %y\n}\n");
  };
  EXPECT_EQ(err("%y = RandomUniform() {shape = [2, 0, 3]}"), "");
  EXPECT_NE(err("%y = RandomUniform() {dtype = 10, shape = [2]}").find("dtype 10 is not supported"),
            std::string::npos);
  EXPECT_NE(err("%y = RandomUniform() {high = 0.0, low = 1.0, shape = [2]}")
                .find("low (1) must not exceed high (0)"),
            std::string::npos);
  EXPECT_NE(err("%y = RandomNormal() {shape = [-1]}").find("negative"), std::string::npos);
  EXPECT_NE(err("%y = RandomUniformLike(%x)", "  input %x : i32[2]\n")
                .find("which is not float32 or float64; set dtype"),
            std::string::npos);
  EXPECT_NE(err("%y = Bernoulli(%x)", "  input %x : i32[2]\n").find("float32 or float64"),
            std::string::npos);
  EXPECT_NE(err("%y = Bernoulli(%x) {dtype = 8}", "  input %x : f32[2]\n").find("dtype 8"),
            std::string::npos);
  EXPECT_NE(err("%y = Multinomial(%x)", "  input %x : f32[2]\n").find("[batch_size, class_size]"),
            std::string::npos);
  EXPECT_NE(err("%y = Multinomial(%x) {dtype = 1}", "  input %x : f32[2,3]\n").find("dtype must"),
            std::string::npos);
}

}  // namespace
