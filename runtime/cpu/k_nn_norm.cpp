// Reference kernels: normalizations (BatchNormalization inference form, InstanceNormalization,
// LayerNormalization with optional Mean/InvStdDev, GroupNormalization, LpNormalization,
// MeanVarianceNormalization, LRN). Two-pass mean and variance in double: the numeric oracle.
#include <algorithm>
#include <cmath>
#include <vector>

#include "k_nn_internal.h"

namespace mgrt {
namespace nn {
namespace {

// Fails unless operand i is a present [n] vector of dtype dt.
int checkVec(const char* op, const Tensor* in, int nin, int i, int64_t n, int32_t dt, Ctx& ctx) {
  if (!present(in, nin, i)) return ctx.fail("%s: operand %d is missing", op, i);
  if (in[i].rank != 1 || in[i].dims[0] != n || in[i].dtype != dt)
    return ctx.fail("%s: operand %d must be a vector of %lld elements of the input's type", op, i,
                    static_cast<long long>(n));
  return 0;
}

// Mean and population variance of n values at x[i * stride] (i < n), in double.
template <typename T>
void meanVar(const T* x, int64_t n, double* mean, double* var) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  double m = n > 0 ? s / static_cast<double>(n) : 0.0;
  double v = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(x[i]) - m;
    v += d * d;
  }
  *mean = m;
  *var = n > 0 ? v / static_cast<double>(n) : 0.0;
}

template <typename T>
int batchNormT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "BatchNormalization";
  if (a.i("training_mode", 0) != 0) return ctx.fail("%s: training mode is not supported", op);
  const Tensor& X = in[0];
  if (X.rank < 2) return ctx.fail("%s: input must be rank >= 2", op);
  int64_t N = X.dims[0], C = X.dims[1], S = product(dimsOf(X), 2);
  for (int i = 1; i < 5; ++i)
    if (checkVec(op, in, nin, i, C, X.dtype, ctx)) return 1;
  if (checkDims(op, out[0], dimsOf(X), ctx)) return 1;
  double eps = a.f("epsilon", 1e-5f);
  const T *x = X.as<T>(), *sc = in[1].as<T>(), *bi = in[2].as<T>(), *mu = in[3].as<T>(),
          *va = in[4].as<T>();
  T* y = out[0].as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double k = static_cast<double>(sc[c]) / std::sqrt(static_cast<double>(va[c]) + eps);
      double m = static_cast<double>(mu[c]), b = static_cast<double>(bi[c]);
      const T* xc = x + (n * C + c) * S;
      T* yc = y + (n * C + c) * S;
      for (int64_t i = 0; i < S; ++i) yc[i] = static_cast<T>((static_cast<double>(xc[i]) - m) * k + b);
    }
  // Outside training mode the running statistics are the inputs unchanged.
  for (int i = 1; i < nout && i < 3; ++i) {
    if (!out[i].present()) continue;
    if (checkDims(op, out[i], {C}, ctx)) return 1;
    for (int64_t c = 0; c < C; ++c) out[i].as<T>()[c] = in[2 + i].as<T>()[c];
  }
  return 0;
}

template <typename T>
int instanceNormT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "InstanceNormalization";
  const Tensor& X = in[0];
  if (X.rank < 3) return ctx.fail("%s: input must be rank >= 3", op);
  int64_t N = X.dims[0], C = X.dims[1], S = product(dimsOf(X), 2);
  for (int i = 1; i < 3; ++i)
    if (checkVec(op, in, nin, i, C, X.dtype, ctx)) return 1;
  if (checkDims(op, out[0], dimsOf(X), ctx)) return 1;
  double eps = a.f("epsilon", 1e-5f);
  const T *x = X.as<T>(), *sc = in[1].as<T>(), *bi = in[2].as<T>();
  T* y = out[0].as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const T* xc = x + (n * C + c) * S;
      T* yc = y + (n * C + c) * S;
      double m, v;
      meanVar(xc, S, &m, &v);
      double k = static_cast<double>(sc[c]) / std::sqrt(v + eps), b = static_cast<double>(bi[c]);
      for (int64_t i = 0; i < S; ++i) yc[i] = static_cast<T>((static_cast<double>(xc[i]) - m) * k + b);
    }
  return 0;
}

// For each flat index j over `to`, the flat index into `from` broadcast (right-aligned) to `to`.
std::vector<int64_t> broadcastIndex(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  int64_t n = product(to);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::vector<int64_t> coord(to.size());
  size_t lead = to.size() - from.size();
  for (int64_t j = 0; j < n; ++j) {
    unravel(j, to, coord.data());
    int64_t off = 0;
    for (size_t d = 0; d < from.size(); ++d) off = off * from[d] + (from[d] == 1 ? 0 : coord[lead + d]);
    idx[j] = off;
  }
  return idx;
}

template <typename S>
void storeStat(const Tensor* t, int64_t i, double v) {
  if (t) t->as<S>()[i] = static_cast<S>(v);
}

template <typename T>
int layerNormT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "LayerNormalization";
  const Tensor& X = in[0];
  std::vector<int64_t> xd = dimsOf(X);
  int64_t rank = X.rank, axis = a.i("axis", -1);
  if (rank < 1 || axis < -rank || axis >= rank) return ctx.fail("%s: axis out of range", op);
  if (axis < 0) axis += rank;
  std::vector<int64_t> normShape(xd.begin() + axis, xd.end());
  int64_t outer = product(std::vector<int64_t>(xd.begin(), xd.begin() + axis));
  int64_t inner = product(normShape);
  if (checkDims(op, out[0], xd, ctx)) return 1;
  std::vector<int64_t> sIdx, bIdx;
  for (int i = 1; i < 3; ++i) {
    if (!present(in, nin, i)) continue;
    std::vector<int64_t> d = dimsOf(in[i]);
    bool ok = in[i].dtype == X.dtype && d.size() <= normShape.size();
    for (size_t k = 0; ok && k < d.size(); ++k)
      ok = d[k] == 1 || d[k] == normShape[normShape.size() - d.size() + k];
    if (!ok) return ctx.fail("%s: operand %d does not broadcast to the normalized dims", op, i);
    (i == 1 ? sIdx : bIdx) = broadcastIndex(d, normShape);
  }
  if (sIdx.empty()) return ctx.fail("%s: Scale is missing", op);
  const Tensor* stat[2] = {nullptr, nullptr};
  std::vector<int64_t> statDims = xd;
  for (int64_t i = axis; i < rank; ++i) statDims[i] = 1;
  for (int i = 1; i < 3 && i < nout; ++i) {
    if (!out[i].present()) continue;
    if (checkDims(op, out[i], statDims, ctx)) return 1;
    if (out[i].dtype != kF32 && out[i].dtype != kF64) return ctx.fail("%s: Mean/InvStdDev must be f32 or f64", op);
    stat[i - 1] = &out[i];
  }
  double eps = a.f("epsilon", 1e-5f);
  const T* x = X.as<T>();
  const T* sc = in[1].as<T>();
  const T* bi = bIdx.empty() ? nullptr : in[2].as<T>();
  T* y = out[0].as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    const T* xr = x + o * inner;
    T* yr = y + o * inner;
    double m, v;
    meanVar(xr, inner, &m, &v);
    double inv = 1.0 / std::sqrt(v + eps);
    for (int64_t j = 0; j < inner; ++j) {
      double r = (static_cast<double>(xr[j]) - m) * inv * static_cast<double>(sc[sIdx[j]]);
      if (bi) r += static_cast<double>(bi[bIdx[j]]);
      yr[j] = static_cast<T>(r);
    }
    for (int s = 0; s < 2; ++s) {
      if (!stat[s]) continue;
      double val = s == 0 ? m : inv;
      if (stat[s]->dtype == kF32) storeStat<float>(stat[s], o, val);
      else storeStat<double>(stat[s], o, val);
    }
  }
  return 0;
}

template <typename T>
int groupNormT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "GroupNormalization";
  const Tensor& X = in[0];
  if (X.rank < 3) return ctx.fail("%s: input must be rank >= 3", op);
  int64_t N = X.dims[0], C = X.dims[1], S = product(dimsOf(X), 2), G = a.i("num_groups", 0);
  if (G <= 0 || C % G != 0) return ctx.fail("%s: num_groups must divide the channels", op);
  int64_t per = C / G;
  bool perChannel = true;
  for (int i = 1; i < 3; ++i) {
    if (!present(in, nin, i) || in[i].rank != 1 || in[i].dtype != X.dtype ||
        (in[i].dims[0] != C && in[i].dims[0] != G))
      return ctx.fail("%s: scale and bias must be [C] or [num_groups]", op);
    perChannel = in[i].dims[0] == C;
  }
  if (in[1].dims[0] != in[2].dims[0]) return ctx.fail("%s: scale and bias sizes differ", op);
  if (checkDims(op, out[0], dimsOf(X), ctx)) return 1;
  double eps = a.f("epsilon", 1e-5f);
  const T *x = X.as<T>(), *sc = in[1].as<T>(), *bi = in[2].as<T>();
  T* y = out[0].as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const T* xg = x + (n * C + g * per) * S;
      T* yg = y + (n * C + g * per) * S;
      double m, v;
      meanVar(xg, per * S, &m, &v);
      double inv = 1.0 / std::sqrt(v + eps);
      for (int64_t c = 0; c < per; ++c) {
        int64_t pi = perChannel ? g * per + c : g;
        double k = inv * static_cast<double>(sc[pi]), b = static_cast<double>(bi[pi]);
        for (int64_t i = 0; i < S; ++i)
          yg[c * S + i] = static_cast<T>((static_cast<double>(xg[c * S + i]) - m) * k + b);
      }
    }
  return 0;
}

template <typename T>
int lpNormT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "LpNormalization";
  const Tensor& X = in[0];
  int64_t rank = X.rank, axis = a.i("axis", -1), p = a.i("p", 2);
  if (rank < 1 || axis < -rank || axis >= rank) return ctx.fail("%s: axis out of range", op);
  if (p != 1 && p != 2) return ctx.fail("%s: p must be 1 or 2", op);
  if (axis < 0) axis += rank;
  std::vector<int64_t> xd = dimsOf(X);
  if (checkDims(op, out[0], xd, ctx)) return 1;
  int64_t len = xd[axis], inner = product(xd, axis + 1);
  int64_t outer = product(std::vector<int64_t>(xd.begin(), xd.begin() + axis));
  const T* x = X.as<T>();
  T* y = out[0].as<T>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* xs = x + o * len * inner + i;
      T* ys = y + o * len * inner + i;
      double norm = 0;
      for (int64_t k = 0; k < len; ++k) {
        double v = static_cast<double>(xs[k * inner]);
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < len; ++k)
        ys[k * inner] = norm == 0 ? T(0) : static_cast<T>(static_cast<double>(xs[k * inner]) / norm);
    }
  return 0;
}

template <typename T>
int mvnT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "MeanVarianceNormalization";
  const Tensor& X = in[0];
  std::vector<int64_t> xd = dimsOf(X);
  int64_t rank = X.rank;
  std::vector<int64_t> axes = a.has("axes") ? a.ints("axes") : std::vector<int64_t>{0, 2, 3};
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t ax : axes) {
    if (ax < -rank || ax >= rank) return ctx.fail("%s: axis %lld out of range", op, static_cast<long long>(ax));
    reduced[ax < 0 ? ax + rank : ax] = true;
  }
  if (checkDims(op, out[0], xd, ctx)) return 1;
  // Key of each element: its flat index over the kept dims.
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d) kept.push_back(reduced[d] ? 1 : xd[d]);
  int64_t n = product(xd), groups = product(kept);
  std::vector<double> sum(groups, 0.0), sq(groups, 0.0), cnt(groups, 0.0);
  std::vector<int64_t> key(static_cast<size_t>(n)), coord(rank);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, xd, coord.data());
    int64_t k = 0;
    for (int64_t d = 0; d < rank; ++d) k = k * kept[d] + (reduced[d] ? 0 : coord[d]);
    key[i] = k;
  }
  const T* x = X.as<T>();
  T* y = out[0].as<T>();
  for (int64_t i = 0; i < n; ++i) {
    sum[key[i]] += static_cast<double>(x[i]);
    cnt[key[i]] += 1;
  }
  for (int64_t gI = 0; gI < groups; ++gI) sum[gI] = cnt[gI] > 0 ? sum[gI] / cnt[gI] : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(x[i]) - sum[key[i]];
    sq[key[i]] += d * d;
  }
  for (int64_t i = 0; i < n; ++i) {
    double sd = std::sqrt(cnt[key[i]] > 0 ? sq[key[i]] / cnt[key[i]] : 0.0);
    y[i] = static_cast<T>((static_cast<double>(x[i]) - sum[key[i]]) / (sd + 1e-9));
  }
  return 0;
}

template <typename T>
int lrnT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "LRN";
  const Tensor& X = in[0];
  if (X.rank < 2) return ctx.fail("%s: input must be rank >= 2", op);
  int64_t size = a.i("size", 0);
  if (size <= 0) return ctx.fail("%s: size must be positive", op);
  if (checkDims(op, out[0], dimsOf(X), ctx)) return 1;
  double alpha = a.f("alpha", 1e-4f), beta = a.f("beta", 0.75f), bias = a.f("bias", 1.f);
  int64_t N = X.dims[0], C = X.dims[1], S = product(dimsOf(X), 2);
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor and ceil of (size - 1) / 2
  const T* x = X.as<T>();
  T* y = out[0].as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min<int64_t>(C - 1, c + hi); ++k) {
          double v = static_cast<double>(x[(n * C + k) * S + i]);
          sq += v * v;
        }
        double d = std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
        y[(n * C + c) * S + i] = static_cast<T>(static_cast<double>(x[(n * C + c) * S + i]) / d);
      }
  return 0;
}

}  // namespace

MG_NN_FLOAT_KERNEL(BatchNormalization, batchNormT, 5)
MG_NN_FLOAT_KERNEL(InstanceNormalization, instanceNormT, 3)
MG_NN_FLOAT_KERNEL(LayerNormalization, layerNormT, 2)
MG_NN_FLOAT_KERNEL(GroupNormalization, groupNormT, 3)
MG_NN_FLOAT_KERNEL(LpNormalization, lpNormT, 1)
MG_NN_FLOAT_KERNEL(MeanVarianceNormalization, mvnT, 1)
MG_NN_FLOAT_KERNEL(LRN, lrnT, 1)

}  // namespace nn
}  // namespace mgrt
