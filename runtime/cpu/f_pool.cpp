// Fast 2-D pools (float32, NCHW): MaxPool and AveragePool combine an output row's kh input rows
// into one padded row, then its kw taps at the stride (pool2d below), threaded over N*C planes;
// GlobalAveragePool as a vector sum per plane (any spatial rank). Dilation, the Indices output,
// other ranks and dtypes fall back to the reference kernels. Output sizes come from the output
// tensor (the compiler inferred them, ceil_mode included); pads from k_nn_shapes.h.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "f_gemm.h"
#include "f_vmath.h"
#include "k_nn_shapes.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

struct PoolGeom {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr;
};

// Resolves the 2-D pool geometry; false when the fast path does not cover it.
bool poolGeom(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, PoolGeom* g) {
  if (nin < 1 || nout < 1) return false;
  const Tensor& X = in[0];
  const Tensor& Y = out[0];
  if (X.dtype != kF32 || Y.dtype != kF32 || X.rank != 4 || Y.rank != 4) return false;
  if (nout > 1 && out[1].present()) return false;  // Indices
  SpatialAttrs sa;
  sa.kernelShape = a.ints("kernel_shape");
  sa.strides = a.ints("strides");
  sa.dilations = a.ints("dilations");
  sa.pads = a.ints("pads");
  sa.ceilMode = a.i("ceil_mode", 0) != 0;
  if (sa.kernelShape.size() != 2) return false;
  for (int64_t d : sa.dilations)
    if (d != 1) return false;
  if (!parseAutoPad(a.s("auto_pad", "NOTSET"), &sa.autoPad)) return false;
  SpatialGeometry sg;
  if (!resolveConvGeometry("Pool", {X.dims[2], X.dims[3]}, sa.kernelShape, sa, &sg).empty()) return false;
  if (Y.dims[0] != X.dims[0] || Y.dims[1] != X.dims[1] || Y.dims[2] != sg.out[0] || Y.dims[3] != sg.out[1])
    return false;
  *g = PoolGeom{X.dims[0] * X.dims[1], X.dims[2], X.dims[3], sg.out[0], sg.out[1],
                sg.kernel[0], sg.kernel[1], sg.stride[0], sg.stride[1],
                sg.padBegin[0], sg.padBegin[1], sg.padEnd[0], sg.padEnd[1]};
  return true;
}

// How many elements an average divides by along one axis, for the window [start, start + k) of an
// axis of `size` (start < 0: leading pad): count_include_pad counts the pads up to the trailing
// one (padEnd), otherwise only the elements inside the axis.
inline int64_t windowCount(int64_t start, int64_t k, int64_t size, int64_t padEnd, bool countPad) {
  int64_t s = start, e = std::min(start + k, size + (countPad ? padEnd : 0));
  if (!countPad) s = std::max<int64_t>(s, 0), e = std::min(e, size);
  return e - s;
}

// Stride 1 and the output as wide as the input (pl + pr == kw - 1), windows inside one row.
bool sameWidthStride1(const PoolGeom& g) {
  return g.sh == 1 && g.sw == 1 && g.ow == g.w && g.pl + g.pr == g.kw - 1 && g.kw <= g.w &&
         g.pl >= 0 && g.pr >= 0;
}

#if defined(__AVX512F__)
// Stride 2: the output columns of a combined row t, 16 at a time: tap kx of 16 outputs is
// t[2 ox + kx], the even (kx even) or odd lanes of the 32 floats from t + kx rounded down to even,
// picked by one two-source permute; no gathers. The last ow % 16 columns take a masked store (rows
// of 13 or 27 outputs, SqueezeNet's later pools, spent most of their time in a scalar tail): their
// loads reach at most 2 (ow - 1) + kw + 30 floats into t, inside the caller's buffer (padded + 32),
// and the lanes past ow only feed masked-off outputs. Returns ow.
// (max(v, acc) is v > acc ? v : acc, the scalar loop's rule, NaN included.)
template <bool kMax>
int64_t columnsStride2(const float* t, int64_t kw, int64_t ow, float* yr) {
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
  auto columns = [&](int64_t ox) {
    const float* base = t + 2 * ox;
    __m512 acc = _mm512_permutex2var_ps(_mm512_loadu_ps(base), ev, _mm512_loadu_ps(base + 16));
    for (int64_t kx = 1; kx < kw; ++kx) {
      const float* p = base + (kx & ~int64_t{1});
      const __m512 v = _mm512_permutex2var_ps(_mm512_loadu_ps(p), (kx & 1) ? od : ev, _mm512_loadu_ps(p + 16));
      acc = kMax ? _mm512_maskz_max_ps(0xFFFF, v, acc) : _mm512_add_ps(acc, v);
    }
    return acc;
  };
  int64_t ox = 0;
  for (; ox + 16 <= ow; ox += 16) _mm512_storeu_ps(yr + ox, columns(ox));
  if (ox < ow) _mm512_mask_storeu_ps(yr + ox, vm::tailMask(ow - ox), columns(ox));
  return ow;
}

// row[i] = combine over r < nrows of x[r * ld + i] in one pass, 16 columns at a time (the row
// loop below makes one copy and nrows - 1 read-modify-write passes over row, GCC giving them 8
// lanes: 70% of a 3x3/2 max pool). nrows <= 8.
template <bool kMax>
void combineRows(const float* x, int64_t ld, int64_t nrows, int64_t w, float* row) {
  int64_t i = 0;
  auto step = [&](__mmask16 m) {
    __m512 acc = _mm512_maskz_loadu_ps(m, x + i);
    for (int64_t r = 1; r < nrows; ++r) {
      const __m512 v = _mm512_maskz_loadu_ps(m, x + r * ld + i);
      acc = kMax ? _mm512_maskz_max_ps(0xFFFF, v, acc) : _mm512_add_ps(acc, v);
    }
    _mm512_mask_storeu_ps(row + i, m, acc);
  };
  for (; i + 16 <= w; i += 16) step(0xFFFF);
  if (i < w) step(vm::tailMask(w - i));
}
#endif

// Per output row: the kh input rows are first combined element by element into one row (max or
// sum; contiguous, so it vectorizes fully), laid into a buffer whose pads hold the identity (-inf
// or 0), then each output column combines kw neighbours of that buffer at its stride. Two passes
// over a row instead of kh * kw short strided passes with bounds per tap.
template <bool kMax>
void pool2d(const PoolGeom& g, const float* X, float* Y, bool countPad, ThreadPool* pool) {
  // Per output column: divisor factor along w (average only).
  std::vector<float> wcount(g.ow);
  for (int64_t ox = 0; ox < g.ow; ++ox)
    wcount[ox] = static_cast<float>(windowCount(ox * g.sw - g.pl, g.kw, g.w, g.pr, countPad));
  const float init = kMax ? -std::numeric_limits<float>::infinity() : 0.f;
  // The padded row: pl identities, the w combined values, identities up to the last tap read.
  const int64_t padded = std::max(g.pl + g.w, (g.ow - 1) * g.sw + g.kw);
  parallelFor(pool, g.planes, 1, [&](int64_t b, int64_t e) {
    std::vector<float> buf(static_cast<size_t>(padded + 32));  // + the vector columns' overread
    float* __restrict t = buf.data();
    std::fill(t, t + padded + 32, init);
    for (int64_t plane = b; plane < e; ++plane) {
      const float* x = X + plane * g.h * g.w;
      float* y = Y + plane * g.oh * g.ow;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        float* __restrict yr = y + oy * g.ow;
        int64_t hs = oy * g.sh - g.pt, he = std::min(hs + g.kh, g.h);
        const int64_t hcount = windowCount(hs, g.kh, g.h, g.pb, countPad);
        hs = std::max<int64_t>(hs, 0);
        float* __restrict row = t + g.pl;
        if (he <= hs) {
          std::fill(row, row + g.w, init);
#if defined(__AVX512F__)
        } else if (he - hs <= 8) {
          combineRows<kMax>(x + hs * g.w, g.w, he - hs, g.w, row);
#endif
        } else {
          std::copy(x + hs * g.w, x + (hs + 1) * g.w, row);
          for (int64_t iy = hs + 1; iy < he; ++iy) {
            const float* __restrict src = x + iy * g.w;
            if (kMax)
              for (int64_t i = 0; i < g.w; ++i) row[i] = src[i] > row[i] ? src[i] : row[i];
            else
              for (int64_t i = 0; i < g.w; ++i) row[i] += src[i];
          }
        }
        const int64_t sw = g.sw;
        if (sw == 1) {
          for (int64_t ox = 0; ox < g.ow; ++ox) yr[ox] = t[ox];
          for (int64_t kx = 1; kx < g.kw; ++kx) {
            const float* __restrict src = t + kx;
            if (kMax)
              for (int64_t ox = 0; ox < g.ow; ++ox) yr[ox] = src[ox] > yr[ox] ? src[ox] : yr[ox];
            else
              for (int64_t ox = 0; ox < g.ow; ++ox) yr[ox] += src[ox];
          }
        } else {
          int64_t ox0 = 0;
#if defined(__AVX512F__)
          if (sw == 2) ox0 = columnsStride2<kMax>(t, g.kw, g.ow, yr);
#endif
          for (int64_t ox = ox0; ox < g.ow; ++ox) yr[ox] = t[ox * sw];
          for (int64_t kx = 1; kx < g.kw; ++kx) {
            const float* __restrict src = t + kx;
            if (kMax)
              for (int64_t ox = ox0; ox < g.ow; ++ox) {
                float v = src[ox * sw];
                yr[ox] = v > yr[ox] ? v : yr[ox];
              }
            else
              for (int64_t ox = ox0; ox < g.ow; ++ox) yr[ox] += src[ox * sw];
          }
        }
        if (!kMax) {
          float hc = static_cast<float>(hcount);
          for (int64_t ox = 0; ox < g.ow; ++ox) yr[ox] /= hc * wcount[ox];
        }
      }
    }
  });
}

// Stride 1 with "same" width (ow == w, as Inception's 3x3 / pad 1 branch pools): a plane at a
// time as whole-plane vector loops instead of per-row ones (rows of 35 or 17 floats spent most of
// their time in loop tails). V = the kh input rows combined per output row (one flat pass per
// ky over the rows it is valid for), then T[i] = combine over kx of V[i - pl + kx] in flat passes
// over the plane (V has pl / pr identity guards at both ends), then the output columns whose
// window crossed a row end (the first pl and last pr of each row) are recomputed within their
// row, and averages are scaled by 1 / count from a map made once per call.
template <bool kMax>
void pool2dSame(const PoolGeom& g, const float* X, float* Y, bool countPad, ThreadPool* pool) {
  const float init = kMax ? -std::numeric_limits<float>::infinity() : 0.f;
  const int64_t oh = g.oh, w = g.w, n = oh * w, pl = g.pl, pr = g.kw - 1 - g.pl;
  std::vector<float> inv;
  if (!kMax) {
    inv.resize(static_cast<size_t>(n));
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t hc = windowCount(oy - g.pt, g.kh, g.h, g.pb, countPad);
      for (int64_t ox = 0; ox < w; ++ox)
        inv[oy * w + ox] = 1.f / static_cast<float>(hc * windowCount(ox - pl, g.kw, w, g.pr, countPad));
    }
  }
  parallelFor(pool, g.planes, 1, [&](int64_t b, int64_t e) {
    std::vector<float> vbuf(static_cast<size_t>(n + pl + pr)), tbuf(static_cast<size_t>(n));
    float* __restrict v = vbuf.data() + pl;
    float* __restrict t = tbuf.data();
    std::fill(vbuf.begin(), vbuf.begin() + pl, init);
    std::fill(vbuf.end() - pr, vbuf.end(), init);
    for (int64_t plane = b; plane < e; ++plane) {
      const float* x = X + plane * g.h * w;
      float* y = Y + plane * n;
      std::fill(v, v + n, init);
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        // Output rows whose input row oy - pt + ky lies inside the plane.
        const int64_t lo = std::max<int64_t>(0, g.pt - ky), hi = std::min(oh, g.h + g.pt - ky);
        if (hi <= lo) continue;
        float* __restrict vd = v + lo * w;
        const float* __restrict xs = x + (lo - g.pt + ky) * w;
        const int64_t len = (hi - lo) * w;
        if (kMax)
          for (int64_t i = 0; i < len; ++i) vd[i] = xs[i] > vd[i] ? xs[i] : vd[i];
        else
          for (int64_t i = 0; i < len; ++i) vd[i] += xs[i];
      }
      {
        const float* __restrict s0 = v - pl;
        for (int64_t i = 0; i < n; ++i) t[i] = s0[i];
        for (int64_t kx = 1; kx < g.kw; ++kx) {
          const float* __restrict sk = v - pl + kx;
          if (kMax)
            for (int64_t i = 0; i < n; ++i) t[i] = sk[i] > t[i] ? sk[i] : t[i];
          else
            for (int64_t i = 0; i < n; ++i) t[i] += sk[i];
        }
      }
      // Edge columns: their flat window crossed into the neighbouring row.
      for (int64_t oy = 0; oy < oh; ++oy) {
        const float* vr = v + oy * w;
        auto fix = [&](int64_t ox) {
          float acc = init;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ox - pl + kx;
            if (ix < 0 || ix >= w) continue;
            acc = kMax ? (vr[ix] > acc ? vr[ix] : acc) : acc + vr[ix];
          }
          t[oy * w + ox] = acc;
        };
        for (int64_t ox = 0; ox < std::min(pl, w); ++ox) fix(ox);
        for (int64_t ox = std::max<int64_t>(w - pr, pl); ox < w; ++ox) fix(ox);
      }
      if (kMax)
        std::copy(t, t + n, y);
      else
        for (int64_t i = 0; i < n; ++i) y[i] = t[i] * inv[i];
    }
  });
}

}  // namespace

#if defined(__AVX512BW__)
// MaxPool of uint8 / int8 planes (a quantized model's pool, fuse-qdq): per output row the kh input
// rows' bytewise max (64 per vector) into a row padded with the type's lowest value (ONNX pads
// MaxPool with -inf: never the max), then the kw taps at the stride, 32 outputs per vector for
// strides 1 and 2 (stride 2: the even bytes of a 64-byte load), one at a time otherwise. int8 is
// compared as uint8 with the sign bit flipped (order preserving), flipped back on the store.
void maxPoolBytes(const PoolGeom& g, const uint8_t* x, uint8_t* y, bool s8, ThreadPool* pool) {
  const uint8_t flip = s8 ? 0x80 : 0;
  const __m512i flip64 = _mm512_set1_epi8(static_cast<char>(flip));
  const int64_t padded = g.pl + g.w + g.pr + 2 * 64 + 2 * g.kw + 64;
  parallelFor(pool, g.planes, 1, [&](int64_t b, int64_t e) {
    std::vector<uint8_t> row(static_cast<size_t>(padded));
    for (int64_t pl = b; pl < e; ++pl) {
      const uint8_t* xp = x + pl * g.h * g.w;
      uint8_t* yp = y + pl * g.oh * g.ow;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const int64_t y0 = std::max<int64_t>(0, oy * g.sh - g.pt), y1 = std::min(g.h, oy * g.sh - g.pt + g.kh);
        std::fill(row.begin(), row.end(), uint8_t{0});
        uint8_t* r = row.data() + g.pl;
        for (int64_t i = 0; i < g.w; i += 64) {
          const __mmask64 m = g.w - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (g.w - i)) - 1;
          __m512i acc = _mm512_setzero_si512();
          for (int64_t iy = y0; iy < y1; ++iy)
            acc = _mm512_max_epu8(acc, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, xp + iy * g.w + i), flip64));
          _mm512_mask_storeu_epi8(r + i, m, acc);
        }
        const uint8_t* t = row.data();  // column c of the padded row is input column c - pl
        int64_t ox = 0;
        if (g.sw <= 2) {  // the last ow % 32 outputs by a masked store (their loads stay in the row's slack)
          for (; ox < g.ow; ox += 32) {
            __m256i acc = _mm256_setzero_si256();
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const uint8_t* p = t + ox * g.sw + kx;
              const __m256i v = g.sw == 1 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                          : _mm512_cvtepi16_epi8(_mm512_loadu_si512(p));
              acc = _mm256_max_epu8(acc, v);
            }
            const __mmask32 m = g.ow - ox >= 32 ? ~__mmask32(0) : (__mmask32(1) << (g.ow - ox)) - 1;
            _mm256_mask_storeu_epi8(yp + oy * g.ow + ox, m, _mm256_xor_si256(acc, _mm512_castsi512_si256(flip64)));
          }
        }
        for (; ox < g.ow; ++ox) {
          uint8_t v = 0;
          for (int64_t kx = 0; kx < g.kw; ++kx) v = std::max(v, t[ox * g.sw + kx]);
          yp[oy * g.ow + ox] = static_cast<uint8_t>(v ^ flip);
        }
      }
    }
  });
}
#endif

int fMaxPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  PoolGeom g;
#if defined(__AVX512BW__)
  if (nin >= 1 && nout >= 1 && (in[0].dtype == kU8 || in[0].dtype == kI8) && out[0].dtype == in[0].dtype &&
      a.i("storage_order", 0) == 0) {
    Tensor xf = in[0], yf = out[0];  // the geometry reads dtypes: resolve it as float32
    xf.dtype = yf.dtype = kF32;
    Tensor outs[2] = {yf, nout > 1 ? out[1] : Tensor{}};
    if (poolGeom(a, &xf, 1, outs, nout > 1 ? 2 : 1, &g)) {
      maxPoolBytes(g, static_cast<const uint8_t*>(in[0].data), static_cast<uint8_t*>(out[0].data),
                   in[0].dtype == kI8, ctx.pool);
      return 0;
    }
  }
#endif
  if (!poolGeom(a, in, nin, out, nout, &g) || a.i("storage_order", 0) != 0)
    return fast::fallbackKernel("MaxPool", a, in, nin, out, nout, ctx);
  if (sameWidthStride1(g))
    pool2dSame<true>(g, in[0].as<float>(), out[0].as<float>(), false, ctx.pool);
  else
    pool2d<true>(g, in[0].as<float>(), out[0].as<float>(), false, ctx.pool);
  return 0;
}

int fAveragePool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  PoolGeom g;
  if (!poolGeom(a, in, nin, out, nout, &g))
    return fast::fallbackKernel("AveragePool", a, in, nin, out, nout, ctx);
  const bool countPad = a.i("count_include_pad", 0) != 0;
  if (sameWidthStride1(g))
    pool2dSame<false>(g, in[0].as<float>(), out[0].as<float>(), countPad, ctx.pool);
  else
    pool2d<false>(g, in[0].as<float>(), out[0].as<float>(), countPad, ctx.pool);
  return 0;
}

int fGlobalAveragePool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 1 || nout < 1 || in[0].dtype != kF32 || out[0].dtype != kF32 || in[0].rank < 3)
    return fast::fallbackKernel("GlobalAveragePool", a, in, nin, out, nout, ctx);
  const Tensor& X = in[0];
  int64_t planes = X.dims[0] * X.dims[1], sz = 1;
  for (int i = 2; i < X.rank; ++i) sz *= X.dims[i];
  if (out[0].numel() != planes) return fast::fallbackKernel("GlobalAveragePool", a, in, nin, out, nout, ctx);
  const float* x = X.as<float>();
  float* y = out[0].as<float>();
  parallelFor(ctx.pool, planes, 16, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const float* xp = x + p * sz;
      float acc[16] = {0.f};  // 16 independent partial sums (vectorizable without reassociation)
      int64_t i = 0;
      for (; i + 16 <= sz; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += xp[i + l];
      float s = 0.f;
      for (int l = 0; l < 16; ++l) s += acc[l];
      for (; i < sz; ++i) s += xp[i];
      y[p] = sz ? s / static_cast<float>(sz) : 0.f;
    }
  });
  return 0;
}

}  // namespace mgrt
