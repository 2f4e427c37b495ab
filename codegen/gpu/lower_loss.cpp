// GPU lowering of the loss ops NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (float32 and
// float64 scores, int32/int64 targets) as generated map functors, computing the CPU runtime's
// formulas (runtime/cpu/k_loss.cpp) in double in the same order. Scores [N, C, d1..dk] are seen as
// [N, C, D], targets as [N, D]:
//   reduction none   one map item over the targets: out[n, d] = -logp(n, target, d) * w[target]
//                    (0 where the target is ignore_index);
//   sum / mean       one map item of one element whose thread walks every sample in the CPU's
//                    order (n, then d) and sums the losses and the kept weights in double: the
//                    result equals the CPU's bit for bit up to exp/log rounding, at the price of
//                    a serial loop (a loss is a training-graph op, computed once per run);
//   log_prob (SCE)   one map item over the scores: each element recomputes its column's max and
//                    sum of exponentials, as the CPU's log-softmax does.
// logp is the score itself (NLL) or the log-softmax of its column over C (SCE). A GPU program has
// no way to stop a run with a message, so a target outside [0, C) that is not ignore_index, which
// the CPU target reports as an error, makes that sample's loss NaN (and so the sum or mean): never
// a plausible-looking number.
#include <fmt/format.h>

#include <cstdint>

#include "gpu_lowering.h"

namespace magneto {
namespace gpu {
namespace {

struct LossShape {
  int64_t C = 0, D = 1;
};

// Statements that set `lp` (double) to the log-probability of class `k` (an int64_t expression)
// of the column at p (stride D between classes): the score itself, or its log-softmax over C.
std::string logProbOf(bool softmax, const LossShape& s, const std::string& k) {
  if (!softmax) return fmt::format("      const double lp = static_cast<double>(p[({}) * {}]);\n", k, s.D);
  return fmt::format(
      "      double m = -INFINITY;\n"
      "      for (int64_t c = 0; c < {0}; ++c) m = fmax(m, static_cast<double>(p[c * {1}]));\n"
      "      double se = 0;\n"
      "      for (int64_t c = 0; c < {0}; ++c) se += exp(static_cast<double>(p[c * {1}]) - m);\n"
      "      const double lp = static_cast<double>(p[({2}) * {1}]) - m - log(se);\n",
      s.C, s.D, k);
}

// Statements that add sample `k`'s loss to `loss` and its weight to `wsum` (both double).
std::string sampleLoss(const Node& n, bool softmax, const LossShape& s, const char* wt) {
  bool hasIgnore = n.attrs().has("ignore_index");
  std::string f;
  if (hasIgnore) {
    int64_t ii = n.attrs().getInt("ignore_index", 0);
    // INT64_MIN has no literal: -9223372036854775808LL is the negation of an out-of-range one.
    std::string lit = ii == INT64_MIN ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", ii);
    f += "    if (k != " + lit + ") {\n";
  } else {
    f += "    {\n";
  }
  f += fmt::format("    if (k < 0 || k >= {}) {{ loss += NAN; wsum += NAN; }} else {{\n", s.C);
  f += logProbOf(softmax, s, "k");
  if (n.hasInput(2))
    f += fmt::format("      const double w = static_cast<double>(static_cast<const {}*>(in[2])[k]);\n", wt);
  else f += "      const double w = 1.0;\n";
  f += "      loss += -lp * w;\n      wsum += w;\n    }\n    }\n";
  return f;
}

}  // namespace

Expected<std::vector<GpuItem>> lowerLoss(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *t = n.input(1), *y = n.output(0);
  if (x->dtype() != DType::kF32 && x->dtype() != DType::kF64)
    return unsupported("{}: scores of type {} on the cuda/hip targets (f32 and f64 are lowered)",
                       n.describe(), dtypeName(x->dtype()));
  if (t->dtype() != DType::kI32 && t->dtype() != DType::kI64)
    return unsupported("{}: target of type {}", n.describe(), dtypeName(t->dtype()));
  const bool softmax = n.kind() == "SoftmaxCrossEntropyLoss";
  const char *T = ctypeOf(x->dtype()), *TI = ctypeOf(t->dtype());
  const std::string red = n.attrs().getString("reduction", "mean");
  LossShape s;
  s.C = x->dims()[1];
  for (int d = 2; d < x->rank(); ++d) s.D *= x->dims()[d];
  const int64_t N = x->dims()[0];

  std::vector<MapOperand> ops;
  std::vector<GpuItem> items;
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const {}* const x = static_cast<const {}*>(in[0]);\n", T, T);
  f += fmt::format("    const {}* const t = static_cast<const {}*>(in[1]);\n", TI, TI);
  f += "    double loss = 0, wsum = 0;\n";
  if (red == "none") {
    // Over the targets' dims: idx[1] = o; x's offset for (n, d) is n * C * D + d.
    std::vector<int64_t> xs = contiguousStrides(x->dims()), xOver{s.C * s.D};
    for (int d = 2; d < x->rank(); ++d) xOver.push_back(xs[d]);
    ops = {{cx.ptr(x), 0, xOver}, {cx.ptr(t), 0, contiguousStrides(t->dims())}};
    f += fmt::format("    const {}* const p = x + idx[0];\n", T);
    f += "    const int64_t k = static_cast<int64_t>(t[idx[1]]);\n";
    f += sampleLoss(n, softmax, s, T);
    f += fmt::format("    static_cast<{}*>(out)[o] = static_cast<{}>(loss);\n", T, T);
  } else if (red == "sum" || red == "mean") {
    ops = {{cx.ptr(x), 0, {0}}, {cx.ptr(t), 0, {0}}};
    f += fmt::format("    for (int64_t i = 0; i < {}; ++i) {{\n", N * s.D);
    f += fmt::format("      const {}* const p = x + (i / {}) * {} + i % {};\n", T, s.D, s.C * s.D, s.D);
    f += "      const int64_t k = static_cast<int64_t>(t[i]);\n";
    f += sampleLoss(n, softmax, s, T);
    f += "    }\n";
    f += fmt::format("    static_cast<{}*>(out)[o] = static_cast<{}>({});\n", T, T,
                     red == "sum" ? "loss" : "loss / wsum");
  } else {
    return unsupported("{}: reduction '{}'", n.describe(), red);
  }
  f += "    (void)wsum;  // read by mean only\n";
  if (n.hasInput(2)) ops.push_back({cx.ptr(n.input(2)), 0, std::vector<int64_t>(ops[0].strides.size(), 0)});
  f += kFunctorTail;
  Dims outDims = red == "none" ? t->dims() : Dims{1};
  items.push_back(mapItem(name, f, outDims, ops, cx.ptr(y), 0, contiguousStrides(outDims),
                          red == "none" ? itemsPerThread(tile) : 1));

  if (softmax && n.numOutputs() > 1 && n.output(1)) {
    // log_prob over the scores' dims: x's stride over C is 0, so idx[0] is the column's start.
    std::vector<int64_t> xs = contiguousStrides(x->dims()), col = xs;
    col[1] = 0;
    std::string pname = functorName(cx), g = functorHead(pname);
    g += fmt::format("    const {0}* const p = static_cast<const {0}*>(in[0]) + idx[0];\n", T);
    g += "    {\n" + logProbOf(true, s, fmt::format("(o / {}) % {}", s.D, s.C));
    g += fmt::format("      static_cast<{0}*>(out)[o] = static_cast<{0}>(lp);\n    }}\n", T);
    g += kFunctorTail;
    items.push_back(mapItem(pname, g, x->dims(), {{cx.ptr(x), 0, col}}, cx.ptr(n.output(1)), 0,
                            xs, itemsPerThread(tile)));
  }
  return items;
}

}  // namespace gpu
}  // namespace magneto
