// Reference kernels: the random generators RandomUniform, RandomNormal, RandomUniformLike,
// RandomNormalLike, Bernoulli and Multinomial (schemas in src/ops/random_ops.cpp). They are the
// only kernels of the CPU runtime whose result is not a function of their operands: their schemas
// carry kNoFold, so neither the fold pass nor the importer's folding evaluates them, and no pass
// merges two of them.
//
// Generator: counter-based. Each call of a kernel has a 64-bit key; draw j of the call is
//     bits(key, j) = mix64(key + (j + 1) * 0x9E3779B97F4A7C15)
// (mix64: SplitMix64's output function; for fixed key, j -> bits is SplitMix64's own sequence),
// so element i's value depends only on the key and on i: the same at every thread count and in
// every order the pool runs chunks in. A uniform is the top 53 bits of a draw times 2^-53, in
// [0, 1).
//   key with `seed`     mix64(the bits of the seed as a double): the same seed gives the same
//                       values on every run, in every package and in the interpreter, on every
//                       thread count (two nodes with the same seed and shape give equal values).
//   key without `seed`  a fresh one per execution of the node: mix64 of a per-process base drawn
//                       once from std::random_device, plus a process-wide atomic call counter;
//                       so every run, every node and every handle draws new values.
//
//   RandomUniform(Like)  low + u (high - low), u in [0, 1); a float32 result that rounds up to
//                        high is moved to the float below it, so results lie in [low, high).
//   RandomNormal(Like)   mean + scale * sqrt(-2 ln(1 - u1)) cos(2 pi u2) (Box-Muller, the cosine
//                        half), u1 = draw 2i, u2 = draw 2i + 1.
//   Bernoulli            y[i] = u_i < p[i] (1 or 0 in the result's type); p outside [0, 1] or NaN
//                        fails the run.
//   Multinomial          per batch row, p = softmax(row) (the input is unnormalized log
//                        probabilities); sample s is the first class whose cumulative p exceeds
//                        u * total, u = draw (b * sample_size + s).
// Computation in double, rounded once to the result type (float32 or float64).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "mg_kernels.h"

namespace mgrt {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The process' base for unseeded keys, drawn once (thread-safe static initialization).
uint64_t processBase() {
  static const uint64_t base = [] {
    std::random_device rd;
    uint64_t hi = rd(), lo = rd();
    return mix64((hi << 32) ^ lo ^ 0x6D61676E65746F00ull);
  }();
  return base;
}

// The key of one execution of a node: from `seed` when given, else fresh.
uint64_t callKey(const Attrs& a) {
  if (a.has("seed")) {
    double s = static_cast<double>(a.f("seed", 0.f));
    uint64_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    return mix64(bits ^ 0x5EEDull);
  }
  static std::atomic<uint64_t> counter{0};
  uint64_t c = counter.fetch_add(1, std::memory_order_relaxed);
  return mix64(processBase() + (c + 1) * kGamma);
}

struct Stream {
  uint64_t key;
  uint64_t bits(uint64_t j) const { return mix64(key + (j + 1) * kGamma); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform(uint64_t j) const { return static_cast<double>(bits(j) >> 11) * 0x1.0p-53; }
};

bool isFloat(int32_t t) { return t == kF32 || t == kF64; }

int requireFloatResult(const char* op, Tensor* out, int nout, Ctx& ctx) {
  if (nout < 1 || (!out[0].present() && out[0].numel() != 0))
    return ctx.fail("%s: missing result", op);
  if (!isFloat(out[0].dtype)) return ctx.fail("%s: the result must be float32 or float64", op);
  return 0;
}

constexpr int64_t kGrain = 4096;

// Fills out[0] with low + u (high - low).
int uniformFill(const char* op, const Attrs& a, Tensor* out, int nout, Ctx& ctx) {
  if (requireFloatResult(op, out, nout, ctx)) return 1;
  const double low = a.f("low", 0.f), high = a.f("high", 1.f);
  if (!(low <= high)) return ctx.fail("%s: low (%g) must not exceed high (%g)", op, low, high);
  const Stream st{callKey(a)};
  Tensor& y = out[0];
  const bool f32 = y.dtype == kF32;
  const float lowF = static_cast<float>(low), highF = static_cast<float>(high);
  const float belowF = lowF < highF ? std::nextafter(highF, lowF) : lowF;
  const double belowD = low < high ? std::nextafter(high, low) : low;
  parallelFor(ctx.pool, y.numel(), kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const double v = low + st.uniform(static_cast<uint64_t>(i)) * (high - low);
      if (f32) {
        float fv = static_cast<float>(v);
        y.as<float>()[i] = fv >= highF ? belowF : fv;
      } else {
        y.as<double>()[i] = v >= high ? belowD : v;
      }
    }
  });
  return 0;
}

// Fills out[0] with mean + scale * N(0, 1).
int normalFill(const char* op, const Attrs& a, Tensor* out, int nout, Ctx& ctx) {
  if (requireFloatResult(op, out, nout, ctx)) return 1;
  const double mean = a.f("mean", 0.f), scale = a.f("scale", 1.f);
  const Stream st{callKey(a)};
  Tensor& y = out[0];
  const bool f32 = y.dtype == kF32;
  parallelFor(ctx.pool, y.numel(), kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const uint64_t j = static_cast<uint64_t>(i) * 2;
      const double r = std::sqrt(-2.0 * std::log1p(-st.uniform(j)));  // 1 - u1 in (0, 1]
      const double v = mean + scale * r * std::cos(kTwoPi * st.uniform(j + 1));
      if (f32) y.as<float>()[i] = static_cast<float>(v);
      else y.as<double>()[i] = v;
    }
  });
  return 0;
}

int kRandomUniform(const Attrs& a, const Tensor*, int, Tensor* out, int nout, Ctx& ctx) {
  return uniformFill("RandomUniform", a, out, nout, ctx);
}
int kRandomUniformLike(const Attrs& a, const Tensor*, int, Tensor* out, int nout, Ctx& ctx) {
  return uniformFill("RandomUniformLike", a, out, nout, ctx);
}
int kRandomNormal(const Attrs& a, const Tensor*, int, Tensor* out, int nout, Ctx& ctx) {
  return normalFill("RandomNormal", a, out, nout, ctx);
}
int kRandomNormalLike(const Attrs& a, const Tensor*, int, Tensor* out, int nout, Ctx& ctx) {
  return normalFill("RandomNormalLike", a, out, nout, ctx);
}

// (Named apart from k_signal.cpp's floatAt: a unity build may compile both files as one.)
double realAt(const Tensor& t, int64_t i) {
  return t.dtype == kF32 ? static_cast<double>(t.as<float>()[i]) : t.as<double>()[i];
}

// Writes 0 or 1 as element i of a result of any numeric type (or bool).
bool storeBit(Tensor& t, int64_t i, bool v) {
  switch (t.dtype) {
    case kF32: t.as<float>()[i] = v ? 1.f : 0.f; return true;
    case kF64: t.as<double>()[i] = v ? 1.0 : 0.0; return true;
    case kBool: case kU8: t.as<uint8_t>()[i] = v; return true;
    case kI8: t.as<int8_t>()[i] = v; return true;
    case kU16: t.as<uint16_t>()[i] = v; return true;
    case kI16: t.as<int16_t>()[i] = v; return true;
    case kI32: t.as<int32_t>()[i] = v; return true;
    case kU32: t.as<uint32_t>()[i] = v; return true;
    case kI64: t.as<int64_t>()[i] = v; return true;
    case kU64: t.as<uint64_t>()[i] = v; return true;
    default: return false;
  }
}

int kBernoulli(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Bernoulli";
  if (nin < 1 || !isFloat(in[0].dtype)) return ctx.fail("%s: input must be float32 or float64", op);
  if (nout < 1 || out[0].numel() != in[0].numel())
    return ctx.fail("%s: the result must have the input's shape", op);
  const Tensor& p = in[0];
  Tensor& y = out[0];
  const int64_t n = p.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double q = realAt(p, i);
    if (!(q >= 0.0 && q <= 1.0))
      return ctx.fail("%s: probability %g at element %lld is not in [0, 1]", op, q,
                      static_cast<long long>(i));
  }
  if (n > 0 && !storeBit(y, 0, false))
    return ctx.fail("%s: result type %d is not supported", op, static_cast<int>(y.dtype));
  const Stream st{callKey(a)};
  parallelFor(ctx.pool, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) storeBit(y, i, st.uniform(static_cast<uint64_t>(i)) < realAt(p, i));
  });
  return 0;
}

int kMultinomial(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Multinomial";
  if (nin < 1 || !isFloat(in[0].dtype) || in[0].rank != 2)
    return ctx.fail("%s: input must be a float32 or float64 [batch_size, class_size]", op);
  const Tensor& x = in[0];
  const int64_t batch = x.dims[0], classes = x.dims[1];
  if (nout < 1 || out[0].rank != 2 || out[0].dims[0] != batch ||
      (out[0].dtype != kI32 && out[0].dtype != kI64))
    return ctx.fail("%s: the result must be int32 or int64 [batch_size, sample_size]", op);
  Tensor& y = out[0];
  const int64_t samples = y.dims[1];
  if (batch * samples == 0) return 0;
  if (classes < 1) return ctx.fail("%s: class_size is 0", op);
  const Stream st{callKey(a)};
  int failed = 0;
  std::vector<double> cum(static_cast<size_t>(std::max<int64_t>(classes, 1)));
  for (int64_t b = 0; b < batch && !failed; ++b) {
    double mx = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, realAt(x, b * classes + c));
    if (!std::isfinite(mx)) {
      failed = ctx.fail("%s: row %lld has no finite log-probability", op,
                        static_cast<long long>(b));
      break;
    }
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      const double l = realAt(x, b * classes + c);
      if (std::isnan(l)) {
        failed = ctx.fail("%s: NaN in row %lld", op, static_cast<long long>(b));
        break;
      }
      total += std::exp(l - mx);
      cum[static_cast<size_t>(c)] = total;
    }
    if (failed) break;
    for (int64_t s = 0; s < samples; ++s) {
      const double t = st.uniform(static_cast<uint64_t>(b * samples + s)) * total;
      int64_t k = std::upper_bound(cum.begin(), cum.begin() + classes, t) - cum.begin();
      k = std::min(k, classes - 1);
      while (k > 0 && cum[static_cast<size_t>(k)] == cum[static_cast<size_t>(k - 1)]) --k;  // p = 0 never drawn
      if (y.dtype == kI32) y.as<int32_t>()[b * samples + s] = static_cast<int32_t>(k);
      else y.as<int64_t>()[b * samples + s] = k;
    }
  }
  return failed;
}

}  // namespace

const KernelEntry* randomKernels() {
  static const KernelEntry kTable[] = {
      {"RandomUniform", kRandomUniform},         {"RandomNormal", kRandomNormal},
      {"RandomUniformLike", kRandomUniformLike}, {"RandomNormalLike", kRandomNormalLike},
      {"Bernoulli", kBernoulli},                 {"Multinomial", kMultinomial},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
