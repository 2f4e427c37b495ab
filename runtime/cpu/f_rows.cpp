// Fast kernels for data movement and row-wise normalizations: Transpose, Softmax, LogSoftmax.
//
// Transpose: dims of size 1 are dropped and runs of input dims that stay adjacent in the output
// are merged, so most transposes become either "copy rows" (the innermost dim is unmoved: one
// memcpy per row) or a 2-D transpose between the input's and the output's contiguous dims,
// done in 16x16 tiles so that both sides are read and written in cache lines; the reference
// kernel unravels every element's index. Any element size of 1, 2, 4 or 8 bytes.
//
// Softmax / LogSoftmax over a contiguous last axis (opset 13's axis = -1, or any opset's
// coerced-2-D rows), float32: max, sum of exp and scale in three vectorized passes over a row
// with f_vmath.h's exp (sums in float); other axes and dtypes go to the reference kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "f_gemm.h"
#include "f_vmath.h"
#include "mg_kernels.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

// Below this many bytes of work a kernel stays on the calling thread.
constexpr int64_t kParallelBytes = 1 << 17;

struct TransposePlan {
  int r = 0;
  int64_t od[kMaxRank];  // output dims (coalesced)
  int64_t is[kMaxRank];  // input stride (elements) of each output dim
};

bool planTranspose(const Tensor& x, const std::vector<int64_t>& perm, TransposePlan& p) {
  const int r = x.rank;
  int64_t xs[kMaxRank];
  pitchedStrides(x, xs);  // a pitched operand (a bound KV-cache buffer) is read through its pitch
  int64_t od[kMaxRank], is[kMaxRank];
  int n = 0;
  for (int d = 0; d < r; ++d) {
    int64_t src = perm[d];
    if (src < 0 || src >= r) return false;
    if (x.dims[src] == 1) continue;
    // Merge with the previous output dim when it is the input dim right before this one.
    if (n > 0 && is[n - 1] == xs[src] * x.dims[src]) {
      od[n - 1] *= x.dims[src];
      is[n - 1] = xs[src];
      continue;
    }
    od[n] = x.dims[src];
    is[n] = xs[src];
    ++n;
  }
  if (n == 0) od[0] = 1, is[0] = 1, n = 1;
  p.r = n;
  std::copy(od, od + n, p.od);
  std::copy(is, is + n, p.is);
  return true;
}

template <typename T>
void transposeT(const TransposePlan& p, const T* x, T* y, ThreadPool* pool) {
  const int r = p.r;
  int64_t os[kMaxRank];  // output strides
  {
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) os[d] = s, s *= p.od[d];
  }
  const int64_t total = os[0] * p.od[0];
  if (p.is[r - 1] == 1) {  // rows of the innermost dim stay contiguous: memcpy each
    const int64_t row = p.od[r - 1], rows = total / row;
    auto work = [&](int64_t b, int64_t e) {
      int64_t idx[kMaxRank] = {0};
      int64_t rest = b;
      for (int d = r - 2; d >= 0; --d) idx[d] = rest % p.od[d], rest /= p.od[d];
      for (int64_t k = b; k < e; ++k) {
        int64_t off = 0;
        for (int d = 0; d + 1 < r; ++d) off += idx[d] * p.is[d];
        std::memcpy(y + k * row, x + off, sizeof(T) * row);
        for (int d = r - 2; d >= 0 && ++idx[d] == p.od[d]; --d) idx[d] = 0;
      }
    };
    if (pool && total * static_cast<int64_t>(sizeof(T)) >= kParallelBytes) parallelFor(pool, rows, 1, work);
    else work(0, rows);
    return;
  }
  // The output dim q that is the input's contiguous one; tile (q, r-1) in 16x16 blocks.
  int q = 0;
  for (int d = 0; d < r; ++d)
    if (p.is[d] == 1) q = d;
  const int64_t nq = p.od[q], nj = p.od[r - 1], sj = p.is[r - 1], oq = os[q];
  // The outer iteration space: every dim but q and r-1.
  int64_t outerDims[kMaxRank], outerIs[kMaxRank], outerOs[kMaxRank];
  int no = 0;
  int64_t outer = 1;
  for (int d = 0; d + 1 < r; ++d) {
    if (d == q) continue;
    outerDims[no] = p.od[d], outerIs[no] = p.is[d], outerOs[no] = os[d];
    outer *= p.od[d];
    ++no;
  }
  constexpr int64_t kTile = 16;
  const int64_t tq = (nq + kTile - 1) / kTile;
  auto work = [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      int64_t o = w / tq, t = w % tq;
      int64_t xoff = 0, yoff = 0, rest = o;
      for (int d = no - 1; d >= 0; --d) {
        int64_t i = rest % outerDims[d];
        rest /= outerDims[d];
        xoff += i * outerIs[d];
        yoff += i * outerOs[d];
      }
      const int64_t q0 = t * kTile, q1 = std::min(nq, q0 + kTile);
      for (int64_t j0 = 0; j0 < nj; j0 += kTile) {
        const int64_t j1 = std::min(nj, j0 + kTile);
        for (int64_t i = q0; i < q1; ++i) {
          const T* src = x + xoff + i;
          T* dst = y + yoff + i * oq;
          for (int64_t j = j0; j < j1; ++j) dst[j] = src[j * sj];
        }
      }
    }
  };
  const int64_t items = outer * tq;
  if (pool && total * static_cast<int64_t>(sizeof(T)) >= kParallelBytes) parallelFor(pool, items, 1, work);
  else work(0, items);
}

#if !defined(__AVX512F__)
// Max and sum of a row in 16 independent lanes (a float reduction in one accumulator stays
// scalar without -ffast-math; 16 lanes vectorize). NaN propagates through the max.
constexpr int kLanes = 16;
float rowMax(const float* x, int64_t n) {
  float lane[kLanes];
  for (int k = 0; k < kLanes; ++k) lane[k] = x[0];
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] = x[j + k] > lane[k] || x[j + k] != x[j + k] ? x[j + k] : lane[k];
  float m = lane[0];
  for (int k = 1; k < kLanes; ++k) m = lane[k] > m || lane[k] != lane[k] ? lane[k] : m;
  for (; j < n; ++j) m = x[j] > m || x[j] != x[j] ? x[j] : m;
  return m;
}

float rowSum(const float* x, int64_t n) {
  float lane[kLanes] = {0.f};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += x[j + k];
  float s = 0.f;
  for (int k = 0; k < kLanes; ++k) s += lane[k];
  for (; j < n; ++j) s += x[j];
  return s;
}
#endif

#if defined(__AVX512F__)
// The row passes above on 16 AVX-512 lanes (GCC left their lane loops scalar: rowMax alone
// cost 0.9 ns a float on attention's 128-wide rows). NaN propagates through the max: any NaN
// lane makes the row's max NaN, as rowMax's does.
float rowMax16(const float* x, int64_t n) {
  __m512 m = _mm512_set1_ps(-HUGE_VALF);
  __mmask16 nan = 0;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 v = _mm512_loadu_ps(x + j);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    m = _mm512_maskz_max_ps(0xFFFF, m, v);
  }
  if (j < n) {
    const __mmask16 t = vm::tailMask(n - j);
    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-HUGE_VALF), t, x + j);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    m = _mm512_maskz_max_ps(0xFFFF, m, v);
  }
  if (nan) return NAN;
  alignas(64) float l[16];  // (GCC 12's _mm512_reduce_* warn about an undefined operand)
  _mm512_store_ps(l, m);
  float r = l[0];
  for (int k = 1; k < 16; ++k) r = l[k] > r ? l[k] : r;
  return r;
}

// y = e^(x - m) along the row; returns the sum of y.
float expRowSum16(const float* x, float m, float* y, int64_t n) {
  const __m512 mv = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 e = vm::v16::exp(_mm512_sub_ps(_mm512_loadu_ps(x + j), mv));
    _mm512_storeu_ps(y + j, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (j < n) {
    const __mmask16 t = vm::tailMask(n - j);
    const __m512 e = _mm512_maskz_mov_ps(t, vm::v16::exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + j), mv)));
    _mm512_mask_storeu_ps(y + j, t, e);
    acc = _mm512_add_ps(acc, e);
  }
  alignas(64) float l[16];
  _mm512_store_ps(l, acc);
  float r = 0.f;
  for (int k = 0; k < 16; ++k) r += l[k];
  return r;
}
#endif

template <bool kLog>
int softmaxRows(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const Tensor& x = in[0];
  if (nin != 1 || x.dtype != kF32 || out[0].dtype != kF32 || x.rank == 0 || out[0].numel() != x.numel())
    return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  int64_t axis = a.i("axis", -1);
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= x.rank) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  int64_t rows = 1, n = 1, inner = 1;
  for (int d = 0; d < x.rank; ++d) (d < axis ? rows : d == axis ? n : inner) *= x.dims[d];
  if (a.i("mg_coerce_2d", 0) != 0) n *= inner, inner = 1;
  if (inner != 1) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  if (rows == 0 || n == 0) return 0;
  const float* xs = x.as<float>();
  float* ys = out[0].as<float>();
  auto work = [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const float* xr = xs + row * n;
      float* yr = ys + row * n;
      // y = e^(x - max) and its sum, then y / sum (or x - max - ln(sum) for LogSoftmax).
#if defined(__AVX512F__)
      const float m = rowMax16(xr, n);
      const float sum = expRowSum16(xr, m, yr, n);
#else
      const float m = rowMax(xr, n);
      for (int64_t j = 0; j < n; ++j) yr[j] = vm::vexp(xr[j] - m);
      const float sum = rowSum(yr, n);
#endif
      if (kLog) {
        const float shift = m + std::log(sum);
        for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - shift;
      } else {
        const float inv = 1.f / sum;
        for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
      }
    }
  };
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / n);
  if (ctx.pool && rows * n * 4 >= kParallelBytes) parallelFor(ctx.pool, rows, grain, work);
  else work(0, rows);
  return 0;
}

}  // namespace

int fTranspose(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin != 1 || nout != 1) return fast::fallbackKernel("Transpose", a, in, nin, out, nout, ctx);
  const Tensor& x = in[0];
  std::vector<int64_t> perm = a.ints("perm");
  if (perm.empty())
    for (int d = x.rank - 1; d >= 0; --d) perm.push_back(d);
  TransposePlan p;
  const size_t esz = dtypeSize(x.dtype);
  if (static_cast<int>(perm.size()) != x.rank || x.dtype == kStr || out[0].numel() != x.numel() ||
      !planTranspose(x, perm, p)) {
    std::vector<unsigned char> dense;
    const Tensor d = densify(x, dense);  // the reference kernel reads packed operands only
    return fast::fallbackKernel("Transpose", a, &d, nin, out, nout, ctx);
  }
  if (x.numel() == 0) return 0;
  switch (esz) {
    case 1: transposeT(p, x.as<uint8_t>(), out[0].as<uint8_t>(), ctx.pool); return 0;
    case 2: transposeT(p, x.as<uint16_t>(), out[0].as<uint16_t>(), ctx.pool); return 0;
    case 4: transposeT(p, x.as<uint32_t>(), out[0].as<uint32_t>(), ctx.pool); return 0;
    case 8: transposeT(p, x.as<uint64_t>(), out[0].as<uint64_t>(), ctx.pool); return 0;
    default: return fast::fallbackKernel("Transpose", a, in, nin, out, nout, ctx);
  }
}

int fSoftmax(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return softmaxRows<false>("Softmax", a, in, nin, out, nout, ctx);
}

int fLogSoftmax(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return softmaxRows<true>("LogSoftmax", a, in, nin, out, nout, ctx);
}

}  // namespace mgrt
