// Fast kernels for the row normalizations of transformers: LayerNormalization (with its optional
// Mean and InvStdDev results) and RMSNormalization, over the trailing axes [axis, rank), which in
// a dense tensor are one contiguous row per index of the leading dims.
//
// Float32, the scale (and bias) holding every element of the normalized dims (what fuse-layernorm
// and the exporters give: gamma [D]). LayerNorm works on the row shifted by its first element,
// u = x - x[0] (exact where the row's values are within a factor 2 of each other, and small when
// the row has a large mean, so that neither the float sum nor the float mean rounds the spread
// away). Per row, while it stays in cache: the sum of u in 16 independent float lanes (one
// accumulator would stay scalar without -ffast-math; 16 lanes vectorize), its mean m, then the
// sum of (u - m)^2 in the same way (two passes over the cached row, not the one-pass sum of
// squares, whose cancellation loses the variance), then y = (u - m) * (inv_std * scale) + bias in
// one vectorizable loop; Mean = x[0] + m.
// RMSNormalization: the sum of squares, then y = x * inv_rms * scale. Rows go to the pool in
// chunks of about 16 K floats when the tensor is big enough to pay for it. Other dtypes
// (float64), broadcast scales or biases, and non-float32 Mean/InvStdDev go to the reference
// kernels (k_nn_norm.cpp, k_nn_attention.cpp), which accumulate in double: the tests compare the
// two (tests/unit/fast_norm_test.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "f_gemm.h"
#include "mg_kernels.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

// Below this many bytes of work a kernel stays on the calling thread. (Names carry "norm": the
// unity build compiles this file together with f_rows.cpp.)
constexpr int64_t kNormParallelBytes = 1 << 17;
constexpr int kNormLanes = 16;

// Sum of x - m.
float normLaneSum(const float* x, float m, int64_t n) {
  float lane[kNormLanes] = {0.f};
  int64_t j = 0;
  for (; j + kNormLanes <= n; j += kNormLanes)
    for (int k = 0; k < kNormLanes; ++k) lane[k] += x[j + k] - m;
  float s = 0.f;
  for (; j < n; ++j) s += x[j] - m;
  for (int k = 0; k < kNormLanes; ++k) s += lane[k];
  return s;
}

// Sum of ((x - a) - b)^2 (a = b = 0: the sum of squares).
float normLaneSquares(const float* x, float a, float b, int64_t n) {
  float lane[kNormLanes] = {0.f};
  int64_t j = 0;
  for (; j + kNormLanes <= n; j += kNormLanes)
    for (int k = 0; k < kNormLanes; ++k) {
      const float d = (x[j + k] - a) - b;
      lane[k] += d * d;
    }
  float s = 0.f;
  for (; j < n; ++j) s += ((x[j] - a) - b) * ((x[j] - a) - b);
  for (int k = 0; k < kNormLanes; ++k) s += lane[k];
  return s;
}

// The row layout of a normalization over [axis, rank) of x: rows x n, or false (axis out of range).
bool normRowsOf(const Tensor& x, int64_t axis, int64_t* rows, int64_t* n) {
  if (x.rank < 1) return false;
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= x.rank) return false;
  *rows = 1, *n = 1;
  for (int d = 0; d < x.rank; ++d) (d < axis ? *rows : *n) *= x.dims[d];
  return true;
}

// Operand i is a float32 tensor holding the whole normalized block of x (n elements): its dims
// are x's last ones, of the normalized dims only (the reference kernels refuse more).
bool normFullRow(const Tensor* in, int nin, int i, const Tensor& x, int64_t axis, int64_t n) {
  if (axis < 0) axis += x.rank;
  if (i >= nin || !in[i].present() || in[i].dtype != kF32 || in[i].numel() != n || in[i].rank > x.rank - axis)
    return false;
  for (int d = 0; d < in[i].rank; ++d) {
    const int p = x.rank - in[i].rank + d;
    if (in[i].dims[d] != (p < axis ? 1 : x.dims[p])) return false;
  }
  return true;
}

template <typename Fn>
void normForRows(Ctx& ctx, int64_t rows, int64_t n, Fn&& work) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(n, 1));
  if (ctx.pool && rows * n * 4 >= kNormParallelBytes) parallelFor(ctx.pool, rows, grain, work);
  else work(0, rows);
}

}  // namespace

int fLayerNormalization(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "LayerNormalization";
  int64_t rows = 0, n = 0;
  if (nin < 2 || nout < 1 || in[0].dtype != kF32 || out[0].dtype != kF32 || out[0].numel() != in[0].numel() ||
      !normRowsOf(in[0], a.i("axis", -1), &rows, &n) || !normFullRow(in, nin, 1, in[0], a.i("axis", -1), n) ||
      (nin > 2 && in[2].present() && !normFullRow(in, nin, 2, in[0], a.i("axis", -1), n)))
    return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  float* stat[2] = {nullptr, nullptr};  // Mean, InvStdDev: [rows] in row order
  for (int i = 1; i < 3 && i < nout; ++i) {
    if (!out[i].present()) continue;
    if (out[i].dtype != kF32 || out[i].numel() != rows) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
    stat[i - 1] = out[i].as<float>();
  }
  if (rows == 0 || n == 0) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  const float eps = a.f("epsilon", 1e-5f);
  const float* xs = in[0].as<float>();
  const float* sc = in[1].as<float>();
  const float* bi = nin > 2 && in[2].present() ? in[2].as<float>() : nullptr;
  float* ys = out[0].as<float>();
  const float invN = 1.f / static_cast<float>(n);
  normForRows(ctx, rows, n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* x = xs + r * n;
      float* y = ys + r * n;
      // On u = x - x[0]: d = u - m = x - mean without rounding mean to a float near x.
      const float shift = x[0];
      const float m = normLaneSum(x, shift, n) * invN;
      const float inv = 1.f / std::sqrt(normLaneSquares(x, shift, m, n) * invN + eps);
      if (bi)
        for (int64_t j = 0; j < n; ++j) y[j] = ((x[j] - shift) - m) * (inv * sc[j]) + bi[j];
      else
        for (int64_t j = 0; j < n; ++j) y[j] = ((x[j] - shift) - m) * (inv * sc[j]);
      if (stat[0]) stat[0][r] = shift + m;
      if (stat[1]) stat[1][r] = inv;
    }
  });
  return 0;
}

int fRMSNormalization(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "RMSNormalization";
  int64_t rows = 0, n = 0;
  if (nin != 2 || nout < 1 || in[0].dtype != kF32 || out[0].dtype != kF32 || out[0].numel() != in[0].numel() ||
      a.i("stash_type", 1) != 1 || !normRowsOf(in[0], a.i("axis", -1), &rows, &n) ||
      !normFullRow(in, nin, 1, in[0], a.i("axis", -1), n) ||
      rows == 0 || n == 0)
    return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  const float eps = a.f("epsilon", 1e-5f);
  const float* xs = in[0].as<float>();
  const float* sc = in[1].as<float>();
  float* ys = out[0].as<float>();
  const float invN = 1.f / static_cast<float>(n);
  normForRows(ctx, rows, n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* x = xs + r * n;
      float* y = ys + r * n;
      const float inv = 1.f / std::sqrt(normLaneSquares(x, 0.f, 0.f, n) * invN + eps);
      for (int64_t j = 0; j < n; ++j) y[j] = x[j] * (inv * sc[j]);
    }
  });
  return 0;
}

}  // namespace mgrt
