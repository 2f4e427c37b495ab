// Depthwise convolution with the channels in the vector lanes (AVX-512): one input channel per
// output channel (group == C == M), any kernel size, stride, dilation and padding.
//
// The row kernel of f_conv.cpp vectorizes along an output row, which is short in the layers
// that matter (7, 14, 28 pixels: most lanes idle or masked), builds a gathered copy of every
// plane for strides 2, and broadcasts one weight per tap. Here 16 channels form one vector
// instead. Per (image, 16-channel block, band of output rows):
//  - the band's input rows are transposed into a zero-padded [row][column][16] buffer, 16
//    columns of the 16 channels at a time through a 16x16 in-register transpose;
//  - every output pixel is then a sum over taps of one aligned 64-byte load times that tap's 16
//    weights, whatever the width or the stride; 8 pixels at a time (blocks may span rows), so
//    8 FMA chains hide the latency;
//  - the band's outputs go back through the same transpose to the channels' planes (the band
//    is one flat range of each output plane, taken 16 pixels at a time), where the residual and
//    the activation are applied.
// The layout change stays inside the kernel: the graph stays NCHW. Bands keep the buffer near
// 64 KB (a 112-wide plane is cut into bands of a few rows; a 14x14 plane is one band).
// Measured (kernel_bench, 1 thread, this Xeon): 5x5/2 240@28 0.214 -> 0.07 ms, 5x5 576@14
// 0.186 -> 0.115 ms, 3x3/2 144@56 0.312 -> 0.13 ms, 3x3/2 64@112 0.459 -> 0.25 ms.
//
// Unit-stride 3x3/5x5/7x7 layers with rows of 32 or more outputs (MobileNet's and MnasNet's 112-
// and 56-wide planes) take depthwiseRows instead: no transposes, no copy of the plane. Each
// plane is read where it is, 16 columns per vector; a block of 4 output rows x 4 vectors keeps 16
// FMA chains, and each input row's vector (one masked load at the plane's edges, zero outside)
// feeds every output row of the block whose taps reach it: (4 + kh - 1) * kw loads per 4 * kh *
// kw FMAs and vector, where the channel-lane kernel spends two 16x16 transposes per vector on
// top. Measured (kernel_bench --cpu-time, 1 thread, AMD EPYC with AVX-512): dw3x3 32@112 0.204 ->
// 0.154 ms, dw3x3 72@56 0.115 -> 0.087 ms (both now near the machine's memory bandwidth).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "f_conv.h"
#include "f_gemm.h"
#include "f_vmath.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace conv {

#if defined(__AVX512F__)

bool depthwiseC16Applies(const ConvGeom& g) {
  // One channel per group; from 12 channels up a 16-lane block is mostly full (fewer channels are
  // left to the row kernel, which fills its lanes along the row).
  return g.group == g.c && g.m == g.c && g.c >= 12 && g.kh <= 64;
}

namespace {

constexpr int kNB = 8;  // output pixels per register block (independent FMA chains)

// out[j] = bias + sum over taps t of (the vector at base[j] + toff[t]) * w[t], for NB output
// pixels anywhere in the band (a block may span output rows: a 7-pixel row does not leave
// chains idle).
template <int NB>
inline void pixelBlock(const float* const* base, const float* wv, const int64_t* toff, int64_t taps,
                       __m512 bias, float* out) {
  __m512 acc[NB];
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j) acc[j] = bias;
  for (int64_t t = 0; t < taps; ++t) {
    const __m512 w = _mm512_load_ps(wv + t * 16);
    const int64_t o = toff[t];
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[j] = _mm512_fmadd_ps(_mm512_load_ps(base[j] + o), w, acc[j]);
  }
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j) _mm512_store_ps(out + j * 16, acc[j]);
}

}  // namespace

void depthwiseC16(const ConvGeom& g, const float* x, const float* w, const float* bias, const float* res,
                  float* y, const Epilogue& ep, ThreadPool* pool) {
  const int64_t taps = g.kh * g.kw;
  const int64_t blocks = (g.c + 15) / 16;
  // Buffer columns read: (ow - 1) * sw + (kw - 1) * dw + 1, column cx holding input column cx - pl.
  const int64_t wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  const int64_t rowFloats = wp * 16;
  // Output rows per band: the band's input rows (band - 1) * sh + (kh - 1) * dh + 1 in about 64 KB,
  // so that they stay in the core's cache between the taps that reread them.
  const int64_t extra = (g.kh - 1) * g.dh + 1;
  int64_t band = std::max<int64_t>(1, ((64 * 1024 / 4) / rowFloats - extra) / g.sh + 1);
  band = std::min(band, g.oh);
  const int64_t bands = (g.oh + band - 1) / band;
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  std::vector<int64_t> toff(taps);  // buffer offset of tap (ky, kx) from its output pixel's origin
  for (int64_t t = 0; t < taps; ++t) toff[t] = ((t / g.kw) * g.dh * wp + (t % g.kw) * g.dw) * 16;
  __m512 probe = _mm512_setzero_ps();
  const bool vecAct = vm::vecAct(ep, probe);  // false: actRow on the stored values

  // Threaded, items run image by image, band by band, the channel blocks of a band next to each
  // other: a thread's contiguous share of items (the pool gives thread t the t-th share first) is
  // a band of rows across all channels, the rows that a GEMM-based layer before or after this one
  // gives the same thread, so they are in its core's cache. Measured on a MnasNet block (1x1 24->72,
  // dw 3x3 72, 1x1 72->24 at 56x56, 2 threads): 0.355 -> 0.297 ms; channel-block order (the
  // block's bands one after another, sharing the weights and the halo rows) stays for one thread.
  const bool rowMajor = pool && pool->threads() > 1;
  parallelFor(pool, g.n * blocks * bands, 1, [&](int64_t b, int64_t e) {
    static thread_local fast::Scratch bufS, wS, outS;
    const int64_t inRowsMax = (band - 1) * g.sh + extra;
    float* buf = bufS.get(inRowsMax * rowFloats);
    float* wv = wS.get(taps * 16);
    float* obuf = outS.get((band * g.ow + 16) * 16);
    int64_t lastBlock = -1;
    for (int64_t item = b; item < e; ++item) {
      int64_t n, bi, blk;
      if (rowMajor) {
        n = item / (bands * blocks), bi = item / blocks % bands, blk = n * blocks + item % blocks;
      } else {
        bi = item % bands, blk = item / bands, n = blk / blocks;
      }
      const int64_t c0 = (blk % blocks) * 16;
      const int cnt = static_cast<int>(std::min<int64_t>(16, g.c - c0));
      const __mmask16 chMask = vm::tailMask(cnt);
      if (blk != lastBlock) {  // the block's weights as [tap][16]
        lastBlock = blk;
        for (int64_t t = 0; t < taps; ++t)
          for (int c = 0; c < 16; ++c) wv[t * 16 + c] = c < cnt ? w[(c0 + c) * taps + t] : 0.f;
      }
      const __m512 bv = bias ? _mm512_maskz_loadu_ps(chMask, bias + c0) : _mm512_setzero_ps();
      const float* xb = x + (n * g.c + c0) * plane;
      const int64_t oy0 = bi * band, oy1 = std::min(g.oh, oy0 + band);
      // Input rows iy0 .. iy0 + nin - 1 into the buffer, zero outside the image: each row of the 16
      // channels, 16 columns at a time through a 16x16 transpose. (Transposing the band as one flat
      // range of each plane, fewer transposes on 7-wide rows, measured slower: 3x3/2 144@56 0.145
      // against 0.125 ms, the per-pixel placement costing more than the saved shuffles.)
      const int64_t iy0 = oy0 * g.sh - g.pt, nin = (oy1 - 1 - oy0) * g.sh + extra;
      const int64_t copyEnd = std::min(g.w, wp - g.pl);  // input columns [0, copyEnd) are read
      const int64_t inLo = std::max<int64_t>(iy0, 0), inHi = std::min(iy0 + nin, g.h);  // rows in the image
      for (int64_t r = 0; r < nin; ++r) {
        float* dst = buf + r * rowFloats;
        const int64_t iy = iy0 + r;
        if (iy < inLo || iy >= inHi || copyEnd <= 0) {
          std::memset(dst, 0, sizeof(float) * rowFloats);
          continue;
        }
        if (g.pl > 0) std::memset(dst, 0, sizeof(float) * 16 * std::min(g.pl, wp));
        for (int64_t cx = g.pl + copyEnd; cx < wp; ++cx) _mm512_store_ps(dst + cx * 16, _mm512_setzero_ps());
      }
      for (int64_t iy = inLo; iy < inHi && copyEnd > 0; ++iy) {
        float* dst = buf + (iy - iy0) * rowFloats + g.pl * 16;
        for (int64_t x0 = 0; x0 < copyEnd; x0 += 16) {
          const int64_t valid = std::min<int64_t>(16, copyEnd - x0);
          const __mmask16 colMask = vm::tailMask(valid);
          __m512 v[16];
          for (int c = 0; c < 16; ++c)
            v[c] = c < cnt ? _mm512_maskz_loadu_ps(colMask, xb + c * plane + iy * g.w + x0) : _mm512_setzero_ps();
          vm::transpose16(v);
          for (int64_t j = 0; j < valid; ++j) _mm512_store_ps(dst + (x0 + j) * 16, v[j]);
        }
      }
      // The band's outputs, pixel vectors in row-major order, kNB pixels at a time (the last
      // block repeats its last pixel into obuf's slack).
      const int64_t npix = (oy1 - oy0) * g.ow;
      int64_t oy = 0, ox = 0;  // of pixel q, relative to the band
      for (int64_t q = 0; q < npix; q += kNB) {
        const float* base[kNB];
        for (int j = 0; j < kNB; ++j) {
          base[j] = buf + (oy * g.sh * wp + ox * g.sw) * 16;
          if (q + j + 1 < npix && ++ox == g.ow) ox = 0, ++oy;
        }
        pixelBlock<kNB>(base, wv, toff.data(), taps, bv, obuf + q * 16);
      }
      // Back to the 16 channels' planes (the band is one flat range of each), with residual and
      // activation.
      const int64_t q0 = oy0 * g.ow, q1 = oy1 * g.ow;
      for (int64_t p0 = q0; p0 < q1; p0 += 16) {
        const int64_t valid = std::min<int64_t>(16, q1 - p0);
        const __mmask16 m = vm::tailMask(valid);
        __m512 v[16];
        for (int j = 0; j < 16; ++j) v[j] = j < valid ? _mm512_load_ps(obuf + (p0 - q0 + j) * 16) : _mm512_setzero_ps();
        vm::transpose16(v);
        for (int c = 0; c < cnt; ++c) {
          const int64_t off = (n * g.c + c0 + c) * oplane + p0;
          __m512 t = v[c];
          if (res) t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, res + off));
          vm::vecAct(ep, t);
          _mm512_mask_storeu_ps(y + off, m, t);
          if (!vecAct) vm::actRow(ep, y + off, y + off, valid);
        }
      }
    }
  });
}


namespace {

// Output rows oy0 .. oy0 + R - 1, vectors v0 .. v0 + V - 1 (16 columns each) of one plane, for a
// KH x KW kernel (every loop bound a constant, so the R x V accumulators stay in registers).
// masks[v * KW + kx]: the lanes of vector v's tap column kx that lie inside the input row.
template <int R, int V, int KH, int KW>
inline void rowsBlock(const ConvGeom& g, const float* x, const float* w, const __mmask16* masks,
                      int64_t oy0, int64_t v0, __m512 bias, const float* res, float* y, const Epilogue& ep,
                      bool vecAct) {
  __m512 acc[R][V];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = bias;
  // Input row ir of the block (iy = oy0 - pt + ir) feeds output row r through kernel row ir - r.
#pragma GCC unroll 10
  for (int ir = 0; ir < R - 1 + KH; ++ir) {
    const int64_t iy = oy0 - g.pt + ir;
    if (iy < 0 || iy >= g.h) continue;
    const float* row = x + iy * g.w;
#pragma GCC unroll 7
    for (int kx = 0; kx < KW; ++kx) {
      __m512 in[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)  // masked lanes are neither read nor counted
        in[v] = _mm512_maskz_loadu_ps(masks[(v0 + v) * KW + kx], row + (v0 + v) * 16 + kx - g.pl);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const int ky = ir - r;
        if (ky < 0 || ky >= KH) continue;
        const __m512 wt = _mm512_set1_ps(w[ky * KW + kx]);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(in[v], wt, acc[r][v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t ox = (v0 + v) * 16;
      const int64_t cnt = std::min<int64_t>(16, g.ow - ox);
      const __mmask16 m = vm::tailMask(cnt);
      const int64_t off = (oy0 + r) * g.ow + ox;
      __m512 t = acc[r][v];
      if (res) t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, res + off));
      vm::vecAct(ep, t);
      _mm512_mask_storeu_ps(y + off, m, t);
      if (!vecAct) vm::actRow(ep, y + off, y + off, cnt);
    }
}

// One plane: blocks of 4 rows x 4 vectors, then the row and vector tails.
template <int KH, int KW>
void rowsPlane(const ConvGeom& g, const float* x, const float* w, const __mmask16* masks, __m512 bias,
               const float* res, float* y, const Epilogue& ep, bool vecAct) {
  const int64_t nvec = (g.ow + 15) / 16;
  int64_t oy = 0;
  for (; oy + 4 <= g.oh; oy += 4) {
    int64_t v = 0;
    for (; v + 4 <= nvec; v += 4) rowsBlock<4, 4, KH, KW>(g, x, w, masks, oy, v, bias, res, y, ep, vecAct);
    for (; v + 2 <= nvec; v += 2) rowsBlock<4, 2, KH, KW>(g, x, w, masks, oy, v, bias, res, y, ep, vecAct);
    if (v < nvec) rowsBlock<4, 1, KH, KW>(g, x, w, masks, oy, v, bias, res, y, ep, vecAct);
  }
  for (; oy < g.oh; ++oy) {
    int64_t v = 0;
    for (; v + 2 <= nvec; v += 2) rowsBlock<1, 2, KH, KW>(g, x, w, masks, oy, v, bias, res, y, ep, vecAct);
    if (v < nvec) rowsBlock<1, 1, KH, KW>(g, x, w, masks, oy, v, bias, res, y, ep, vecAct);
  }
}

using RowsPlaneFn = void (*)(const ConvGeom&, const float*, const float*, const __mmask16*, __m512,
                             const float*, float*, const Epilogue&, bool);

// The instantiated kernels, or null: 3x3, 5x5 and 7x7 (at stride 1 only: stride 2, the even
// lanes of two loads, measured no faster than the channel-lane kernel on MobileNet's and
// MnasNet's layers, which are bound by reading their input then).
RowsPlaneFn rowsPlaneFor(int64_t kh, int64_t kw) {
  if (kh == 3 && kw == 3) return rowsPlane<3, 3>;
  if (kh == 5 && kw == 5) return rowsPlane<5, 5>;
  if (kh == 7 && kw == 7) return rowsPlane<7, 7>;
  return nullptr;
}

}  // namespace

bool depthwiseRowsApplies(const ConvGeom& g) {
  // Rows of fewer than 32 outputs leave lanes idle: the channel-lane kernel above fills them.
  return g.group == g.c && g.m == g.c && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 &&
         rowsPlaneFor(g.kh, g.kw) && g.ow >= 32 && g.pl < 16;
}

void depthwiseRows(const ConvGeom& g, const float* x, const float* w, const float* bias, const float* res,
                   float* y, const Epilogue& ep, ThreadPool* pool) {
  const int64_t taps = g.kh * g.kw, nvec = (g.ow + 15) / 16;
  // Per output vector and tap column: the lanes whose input column is inside the row (the same
  // for every plane and row).
  std::vector<__mmask16> masks(nvec * g.kw);
  for (int64_t v = 0; v < nvec; ++v)
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      uint32_t m = 0;
      for (int l = 0; l < 16; ++l) {
        const int64_t ix = v * 16 + l + kx - g.pl;
        if (ix >= 0 && ix < g.w) m |= 1u << l;
      }
      masks[v * g.kw + kx] = static_cast<__mmask16>(m);
    }
  __m512 probe = _mm512_setzero_ps();
  const bool vecAct = vm::vecAct(ep, probe);
  const int64_t plane = g.h * g.w, oplane = g.oh * g.ow;
  const RowsPlaneFn fn = rowsPlaneFor(g.kh, g.kw);
  parallelFor(pool, g.n * g.c, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = p % g.c;
      fn(g, x + p * plane, w + c * taps, masks.data(), _mm512_set1_ps(bias ? bias[c] : 0.f),
         res ? res + p * oplane : nullptr, y + p * oplane, ep, vecAct);
    }
  });
}

#else

bool depthwiseC16Applies(const ConvGeom&) { return false; }
bool depthwiseRowsApplies(const ConvGeom&) { return false; }
void depthwiseRows(const ConvGeom&, const float*, const float*, const float*, const float*, float*,
                   const Epilogue&, ThreadPool*) {}
void depthwiseC16(const ConvGeom&, const float*, const float*, const float*, const float*, float*,
                  const Epilogue&, ThreadPool*) {}

#endif

}  // namespace conv
}  // namespace mgrt
