// Reference kernels: the loss ops NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (float32
// and float64 scores, int32 or int64 targets). Scores [N, C, d1..dk] are seen as [N, C, D] with
// D = d1 * ... * dk, targets [N, d1..dk] as [N, D]. Per sample (n, d) with class k = target[n, d]:
//   loss = -logp[n, k, d] * w[k], w = weight or all ones; loss = w = 0 when k == ignore_index,
// where logp is the input itself (NLL) or its log-softmax over C in double (SCE, also its second
// result log_prob). reduction none keeps the [N, d1..dk] losses, sum adds them, mean divides the
// sum by the sum of w over the samples (0 / 0 = NaN when every target is ignored). A target outside [0, C) that is not ignore_index fails the step.
#include <cmath>
#include <string>
#include <vector>

#include "mg_kernels.h"

namespace mgrt {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossGeometry {
  int64_t N = 0, C = 0, D = 1;
};

// Operands and results as the op needs them; fails (with the op's name) otherwise.
int checkLossOperands(const char* op, const Tensor* in, int nin, Tensor* out, int nout,
                      LossGeometry* g, Ctx& ctx) {
  if (nin < 2 || !in[0].present() || !in[1].present())
    return ctx.fail("%s: expected the scores and the target operands", op);
  if (nout < 1 || !out[0].present()) return ctx.fail("%s: expected a loss result", op);
  const Tensor &x = in[0], &t = in[1];
  if (x.rank < 2) return ctx.fail("%s: scores must be [N, C, d1..dk] (rank >= 2)", op);
  if (t.dtype != kI32 && t.dtype != kI64)
    return ctx.fail("%s: target must be int32 or int64 (got element type %d)", op,
                    static_cast<int>(t.dtype));
  bool match = t.rank == x.rank - 1 && t.dims[0] == x.dims[0];
  for (int i = 1; match && i < t.rank; ++i) match = t.dims[i] == x.dims[i + 1];
  if (!match) return ctx.fail("%s: target must have the scores' shape without dim 1", op);
  g->N = x.dims[0];
  g->C = x.dims[1];
  for (int i = 2; i < x.rank; ++i) g->D *= x.dims[i];
  if (nin > 2 && in[2].present() &&
      (in[2].rank != 1 || in[2].dims[0] != g->C || in[2].dtype != x.dtype))
    return ctx.fail("%s: weight must be a vector of %lld elements of the scores' type", op,
                    static_cast<long long>(g->C));
  if (out[0].dtype != x.dtype) return ctx.fail("%s: the loss must have the scores' type", op);
  return 0;
}

int parseReduction(const char* op, const Attrs& a, Reduction* r, Ctx& ctx) {
  std::string s = a.s("reduction", "mean");
  if (s == "none") *r = Reduction::kNone;
  else if (s == "sum") *r = Reduction::kSum;
  else if (s == "mean") *r = Reduction::kMean;
  else return ctx.fail("%s: reduction must be none, sum or mean, got '%s'", op, s.c_str());
  return 0;
}

int64_t targetAt(const Tensor& t, int64_t i) {
  return t.dtype == kI32 ? static_cast<int64_t>(t.as<int32_t>()[i]) : t.as<int64_t>()[i];
}

// Log-softmax of x over the class dim, in double.
template <typename T>
std::vector<double> logSoftmaxOverC(const T* x, const LossGeometry& g) {
  std::vector<double> lp(static_cast<size_t>(g.N * g.C * g.D));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t d = 0; d < g.D; ++d) {
      const int64_t base = n * g.C * g.D + d;
      double m = -INFINITY;
      for (int64_t c = 0; c < g.C; ++c) m = std::fmax(m, static_cast<double>(x[base + c * g.D]));
      double sum = 0;
      for (int64_t c = 0; c < g.C; ++c) sum += std::exp(static_cast<double>(x[base + c * g.D]) - m);
      double ls = std::log(sum);
      for (int64_t c = 0; c < g.C; ++c)
        lp[base + c * g.D] = static_cast<double>(x[base + c * g.D]) - m - ls;
    }
  return lp;
}

// The loss over log-probabilities logp(i) (i the flat index into [N, C, D]).
template <typename T, typename LogP>
int lossFromLogProb(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out,
                    const LossGeometry& g, LogP logp, Ctx& ctx) {
  Reduction red;
  if (parseReduction(op, a, &red, ctx)) return 1;
  const int64_t samples = g.N * g.D;
  if (out[0].numel() != (red == Reduction::kNone ? samples : 1))
    return ctx.fail("%s: the loss result has the wrong number of elements", op);
  const bool hasIgnore = a.has("ignore_index");
  const int64_t ignore = a.i("ignore_index", 0);
  const T* weight = nin > 2 && in[2].present() ? in[2].as<T>() : nullptr;
  T* y = out[0].as<T>();
  double sum = 0, weightSum = 0;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t d = 0; d < g.D; ++d) {
      const int64_t s = n * g.D + d, k = targetAt(in[1], s);
      double loss = 0, w = 0;
      if (!(hasIgnore && k == ignore)) {
        if (k < 0 || k >= g.C)
          return ctx.fail("%s: target %lld at flat position %lld is outside [0, %lld) and is not "
                          "ignore_index",
                          op, static_cast<long long>(k), static_cast<long long>(s),
                          static_cast<long long>(g.C));
        w = weight ? static_cast<double>(weight[k]) : 1.0;
        loss = -logp((n * g.C + k) * g.D + d) * w;
      }
      if (red == Reduction::kNone) y[s] = static_cast<T>(loss);
      sum += loss;
      weightSum += w;
    }
  if (red == Reduction::kSum) y[0] = static_cast<T>(sum);
  if (red == Reduction::kMean) y[0] = static_cast<T>(sum / weightSum);
  return 0;
}

template <typename T>
int nllT(const Attrs& a, const Tensor* in, int nin, Tensor* out, const LossGeometry& g, Ctx& ctx) {
  const T* x = in[0].as<T>();
  return lossFromLogProb<T>("NegativeLogLikelihoodLoss", a, in, nin, out, g,
                            [x](int64_t i) { return static_cast<double>(x[i]); }, ctx);
}

template <typename T>
int sceT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, const LossGeometry& g,
         Ctx& ctx) {
  const char* op = "SoftmaxCrossEntropyLoss";
  std::vector<double> lp = logSoftmaxOverC(in[0].as<T>(), g);
  if (int rc = lossFromLogProb<T>(op, a, in, nin, out, g,
                                  [&lp](int64_t i) { return lp[static_cast<size_t>(i)]; }, ctx))
    return rc;
  if (nout > 1 && out[1].present()) {
    if (out[1].dtype != in[0].dtype || out[1].numel() != static_cast<int64_t>(lp.size()))
      return ctx.fail("%s: log_prob must have the scores' type and shape", op);
    T* p = out[1].as<T>();
    for (size_t i = 0; i < lp.size(); ++i) p[i] = static_cast<T>(lp[i]);
  }
  return 0;
}

int kNegativeLogLikelihoodLoss(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                               Ctx& ctx) {
  const char* op = "NegativeLogLikelihoodLoss";
  LossGeometry g;
  if (checkLossOperands(op, in, nin, out, nout, &g, ctx)) return 1;
  if (in[0].dtype == kF32) return nllT<float>(a, in, nin, out, g, ctx);
  if (in[0].dtype == kF64) return nllT<double>(a, in, nin, out, g, ctx);
  return ctx.fail("%s: scores must be float32 or float64 (got element type %d)", op,
                  static_cast<int>(in[0].dtype));
}

int kSoftmaxCrossEntropyLoss(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                             Ctx& ctx) {
  const char* op = "SoftmaxCrossEntropyLoss";
  LossGeometry g;
  if (checkLossOperands(op, in, nin, out, nout, &g, ctx)) return 1;
  if (in[0].dtype == kF32) return sceT<float>(a, in, nin, out, nout, g, ctx);
  if (in[0].dtype == kF64) return sceT<double>(a, in, nin, out, nout, g, ctx);
  return ctx.fail("%s: scores must be float32 or float64 (got element type %d)", op,
                  static_cast<int>(in[0].dtype));
}

}  // namespace

const KernelEntry* lossKernels() {
  static const KernelEntry kTable[] = {
      {"NegativeLogLikelihoodLoss", kNegativeLogLikelihoodLoss},
      {"SoftmaxCrossEntropyLoss", kSoftmaxCrossEntropyLoss},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
