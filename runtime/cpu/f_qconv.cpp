// Integer convolution on VNNI (QLinearConv: 8-bit input and weights, int32 sums, requantized to
// 8 bits), AVX-512 VNNI.
//
// Y[n, m, p] = saturate(round_half_even(float(acc) * (x_scale * w_scale[m] / y_scale)) + y_zp),
// acc = bias[m] + sum over k of (x'[k, p] - x_zp) * w[m, k]   (k = (c, ky, kx), ONNX's order,
// x' the im2col column of output pixel p, x_zp at padded taps), exactly the reference kernel's
// formula (runtime/cpu/k_quantize.cpp): every sum is an int32 sum modulo 2^32, the conversion,
// multiplier and product are the same float32 operations, so the two give the same bytes.
//
// vpdpbusd multiplies 4 unsigned bytes by 4 signed bytes per 32-bit lane and adds the 4 products to
// the lane's int32 sum. Two kernels, chosen per layer:
//  - here, pixels in the lanes (planes wider than 16 columns): a tile is 8 output channels x 48
//    pixels (24 accumulators); per 4 values of k, three vectors of a packed im2col panel (16
//    pixels x 4 bytes) against each channel's 4 weight bytes broadcast. Each channel is first
//    copied once per call into stride-phase planes padded with the zero point (see Grid), so a
//    tap's row of a panel is one 48-byte load, interleaved 4 taps at a time into [k/4][pixel][4];
//    planes of 16 or fewer columns gather their rows output row by output row instead ("dense").
//    Panels are outside the channel tiles (packed once, every tile over them), unless the
//    weights outweigh all panels, which then fit L2: each thread packs them all and runs its
//    channel tiles over them (the weights read once);
//  - f_qconv_lanes.cpp, output channels in the lanes (narrow planes with 32+ channels).
// The zero point is taken out afterwards: sum (x' - x_zp) w = sum x' w - x_zp * sum_k w[m, k],
// the weight sums computed with the packed weights (once per model handle when constant).
//
// Operands the instruction does not take directly are shifted by 128: int8 activations become
// uint8 (x + 128, zero point + 128), uint8 weights int8 (w - 128, zero point - 128); both leave every
// difference (x - x_zp), (w - w_zp) as it was. Covered: 2-D (and 1-D) ungrouped convolutions, any
// kernel size, stride, dilation and padding, per-tensor or per-channel weight scales, weight zero
// points 0 (after the shift: symmetric int8 weights, or uint8 weights at 128, as the quantizers
// write them). Depthwise layers (group == c == m) go to f_qconv_dw.cpp with the same arithmetic.
// Others (other grouped layers, other weight zero points, non-finite multipliers, builds without
// VNNI) run the reference kernel. Measured: `kernel_bench --qconv`
// (ResNet-18's layers against the core's vpdpbusd peak; docs/PERFORMANCE.md).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "f_gemm.h"
#include "f_qconv.h"
#include "k_nn_shapes.h"
#include "mg_threadpool.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define MG_QCONV_VNNI 1
// GCC 12's conversion intrinsics (vpmovdb, vpmovwb, vcvttps2dq) start from an "undefined" vector
// initialized from itself, which -Wmaybe-uninitialized reports at every call.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mgrt {
namespace {

using qconv::QGeom;
using qconv::Requant;

// The weights as the kernels read them, packed once per model handle when constant: per output
// channel the sum of its (shifted) weights, and the layout of the kernel the geometry takes
// (filled on first use: a dynamic shape may move a layer from one kernel to the other).
//  - w: pixel-lane kernel, per tile of kMR output channels [K4][kMR] dwords of 4 signed bytes
//    (one cache line holds two k4 steps of the tile's 8 channels; zero past K and past m);
//  - lanes: channel-lane kernel (f_qconv_lanes.cpp's layout).
struct QWeights {
  std::vector<int32_t> w;
  std::vector<int8_t> lanes;
  std::vector<int32_t> wsum;
  std::vector<float> dw;  // depthwise layers: each channel's taps as floats (f_qconv_dw.cpp)
};

#if defined(MG_QCONV_VNNI)

constexpr int kMR = 8;          // output channels per tile
constexpr int kNV = 3;          // 16-pixel vectors per tile
constexpr int kNP = kNV * 16;   // pixels per panel

// Fills what `lanes` (the kernel the geometry takes) needs and is not there yet.
void packWeights(const QGeom& g, const Tensor& W, int wShift, bool lanes, QWeights* q) {
  const int64_t K = g.K(), K4 = g.K4(), mPad = (g.m + kMR - 1) / kMR * kMR;
  const bool u8 = W.dtype == kU8;
  auto at = [&](int64_t i) { return (u8 ? int(W.as<uint8_t>()[i]) : int(W.as<int8_t>()[i])) - wShift; };
  if (q->wsum.empty()) {
    q->wsum.assign(static_cast<size_t>(g.m), 0);
    for (int64_t m = 0; m < g.m; ++m) {
      int64_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += at(m * K + k);
      q->wsum[m] = static_cast<int32_t>(sum);
    }
  }
  if (lanes) {
    if (q->lanes.empty()) qconv::lanesPackWeights(g, W, wShift, &q->lanes);
    return;
  }
  if (!q->w.empty()) return;
  q->w.assign(static_cast<size_t>(mPad * K4), 0);
  auto* dst = reinterpret_cast<int8_t*>(q->w.data());
  for (int64_t m = 0; m < g.m; ++m) {
    const int64_t mt = m / kMR, r = m % kMR;
    for (int64_t k = 0; k < K; ++k) dst[((mt * K4 + k / 4) * kMR + r) * 4 + k % 4] = static_cast<int8_t>(at(m * K + k));
  }
}

inline __mmask16 tail16(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << n) - 1);
}

}  // namespace

namespace qconv {

// The computed grid and the phase-split copy of the input it reads. Output pixel (oy, ox) reads
// padded input (oy * sh + ky * dh, ox * sw + kx * dw): in the copy, column phase px = (kx * dw) % sw
// and row phase py = (ky * dh) % sh of each channel are planes of Rq x Wq bytes holding padded
// input (r * sh + py, c * sw + px) at (r, c), the zero point outside the image. Tap k then reads
// grid pixel q = oy * Wq + ox at q + tapOff[k] of its plane: every 48 consecutive grid pixels of
// a tap are 48 consecutive bytes, whatever the padding, stride or dilation. The grid is Wq >= ow
// columns wide; its pixels past ow are computed and not stored.
//
// On narrow planes (ow <= 16: ResNet's 14x14 and 7x7 layers) the grid's extra columns would be an
// eighth to nearly a third of the work, so there the panels hold the output pixels only ("dense"):
// each tap's row of a panel is gathered from the copy one output row (at most 16 bytes) at a time.

Grid gridOf(const QGeom& g) {
  Grid q;
  q.Wq = g.ow + (g.kw - 1) * g.dw / g.sw;
  q.Rq = g.oh + (g.kh - 1) * g.dh / g.sh;
  q.S = g.sh * g.sw;
  q.planeQ = q.Rq * q.Wq;
  q.dense = g.ow <= 16 && q.Wq > g.ow;
  q.P = g.oh * (q.dense ? g.ow : q.Wq);
  return q;
}

// Copies image channel c (flip applied) into its S phase planes, the zero point elsewhere; only
// the phases some tap reads (used[ph]: a 1x1 stride-2 layer reads one of four).
void phaseSplit(const QGeom& g, const Grid& q, const uint8_t* used, const uint8_t* x, uint8_t fill, uint8_t flip,
                uint8_t* dst) {
  for (int64_t ph = 0; ph < q.S; ++ph)
    if (used[ph]) std::memset(dst + ph * q.planeQ, fill, static_cast<size_t>(q.planeQ));
  const __m256i flip32 = _mm256_set1_epi8(static_cast<char>(flip));
  // The row phase and row of input row iy, kept by increments (a division per row was most of a
  // 7x7 plane's copy).
  int64_t py = g.pt % g.sh, r = g.pt / g.sh;
  for (int64_t iy = 0; iy < g.h; ++iy, py = py + 1 == g.sh ? (++r, 0) : py + 1) {
    if (r >= q.Rq) break;
    const uint8_t* src = x + iy * g.w;
    // Input columns ix with column c = (ix + pl) / sw inside [0, Wq).
    const int64_t ixEnd = std::min(g.w, q.Wq * g.sw - g.pl);
    uint8_t* row = dst + py * g.sw * q.planeQ + r * q.Wq;  // phase (py, 0), row r
    int64_t ix = 0;
    if (g.sw == 1) {
      for (; ix < ixEnd; ix += 32) {
        const __mmask32 m = ixEnd - ix >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((1u << (ixEnd - ix)) - 1);
        _mm256_mask_storeu_epi8(row + g.pl + ix, m, _mm256_xor_si256(_mm256_maskz_loadu_epi8(m, src + ix), flip32));
      }
    } else if (g.sw == 2) {  // (writes both phases, read or not)
      // 32 input columns from an even padded column: the even bytes to phase 0, the odd to phase 1.
      if (ix < ixEnd && g.pl % 2) {
        row[q.planeQ + (ix + g.pl) / 2] = static_cast<uint8_t>(src[ix] ^ flip);
        ++ix;
      }
      for (; ix < ixEnd; ix += 32) {
        const int64_t n = std::min<int64_t>(32, ixEnd - ix);
        const __mmask32 m = n == 32 ? ~__mmask32(0) : static_cast<__mmask32>((1u << n) - 1);
        const __m256i v = _mm256_xor_si256(_mm256_maskz_loadu_epi8(m, src + ix), flip32);
        const int64_t c = (ix + g.pl) / 2;
        _mm_mask_storeu_epi8(row + c, tail16((n + 1) / 2), _mm256_cvtepi16_epi8(v));
        _mm_mask_storeu_epi8(row + q.planeQ + c, tail16(n / 2), _mm256_cvtepi16_epi8(_mm256_srli_epi16(v, 8)));
      }
    }
    for (; ix < ixEnd; ++ix) {
      const int64_t px = (ix + g.pl) % g.sw;
      if (used[py * g.sw + px]) row[px * q.planeQ + (ix + g.pl) / g.sw] = static_cast<uint8_t>(src[ix] ^ flip);
    }
  }
}

}  // namespace qconv

namespace {

using qconv::Grid;
using qconv::gridOf;
using qconv::phaseSplit;

// Four taps' rows of kNP bytes -> [kNP][4]: pixel j's 4 bytes are the 4 rows' byte j.
inline void interleave4(const uint8_t* const* src, uint8_t* dst) {
#pragma GCC unroll 3
  for (int v = 0; v < kNV; ++v) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[0] + 16 * v));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[1] + 16 * v));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[2] + 16 * v));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[3] + 16 * v));
    const __m128i abLo = _mm_unpacklo_epi8(a, b), abHi = _mm_unpackhi_epi8(a, b);
    const __m128i cdLo = _mm_unpacklo_epi8(c, d), cdHi = _mm_unpackhi_epi8(c, d);
    __m128i* o = reinterpret_cast<__m128i*>(dst + 64 * v);
    _mm_store_si128(o + 0, _mm_unpacklo_epi16(abLo, cdLo));  // pixels 0-3
    _mm_store_si128(o + 1, _mm_unpackhi_epi16(abLo, cdLo));  // 4-7
    _mm_store_si128(o + 2, _mm_unpacklo_epi16(abHi, cdHi));  // 8-11
    _mm_store_si128(o + 3, _mm_unpackhi_epi16(abHi, cdHi));  // 12-15
  }
}

// The panel of grid pixels [j0, j0 + kNP) as [K4][kNP][4] bytes: pixel j's 4 bytes at k4 are the
// values of taps 4 k4 .. 4 k4 + 3 (fill past K: those weights are zero), interleaved byte by byte
// from the 4 taps' rows.
void packPanel(const int64_t* tapOff, int64_t K, int64_t K4, const uint8_t* split, const uint8_t* fillRow,
               int64_t j0, uint8_t* panel) {
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    const uint8_t* src[4];
    for (int q = 0; q < 4; ++q) {
      const int64_t k = 4 * k4 + q;
      src[q] = k < K ? split + tapOff[k] + j0 : fillRow;
    }
    interleave4(src, panel + k4 * kNP * 4);
  }
}

// The dense panel of output pixels [j0, j0 + kNP): as packPanel, each tap's row gathered from the
// copy one output row at a time (runs of at most ow <= 16 bytes).
void packPanelDense(const QGeom& g, const Grid& q, const int64_t* tapOff, int64_t K, int64_t K4,
                    const uint8_t* split, uint8_t fill, int64_t j0, uint8_t* panel) {
  struct Run {
    int64_t jj, src;  // panel position, offset of its first pixel in a tap's plane
    __mmask16 mask;
  };
  Run runs[kNP];
  int nrun = 0;
  for (int64_t jj = 0; jj < kNP && j0 + jj < q.P;) {
    const int64_t p = j0 + jj, oy = p / g.ow, ox = p % g.ow;
    const int64_t len = std::min({kNP - jj, q.P - p, g.ow - ox});
    runs[nrun++] = Run{jj, oy * q.Wq + ox, tail16(len)};
    jj += len;
  }
  alignas(64) uint8_t rows[4][kNP];
  for (int r = 0; r < 4; ++r) std::memset(rows[r], fill, kNP);
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    for (int r = 0; r < 4; ++r) {
      const int64_t k = 4 * k4 + r;
      if (k >= K) {
        std::memset(rows[r], fill, kNP);
        continue;
      }
      const uint8_t* plane = split + tapOff[k];
      for (int i = 0; i < nrun; ++i)
        _mm_mask_storeu_epi8(rows[r] + runs[i].jj, runs[i].mask, _mm_maskz_loadu_epi8(runs[i].mask, plane + runs[i].src));
    }
    const uint8_t* src[4] = {rows[0], rows[1], rows[2], rows[3]};
    interleave4(src, panel + k4 * kNP * 4);
  }
}

// Where a panel's pixel vectors go: the grid pixels of vector v that are output pixels (mask), and
// the output index of the first of them. Those of one vector are consecutive in the output (a
// row's last pixels are followed by the next row's first), so one compressing store writes them.
struct PanelStore {
  __mmask16 mask[kNV];
  int64_t start[kNV];
};

PanelStore panelStore(const QGeom& g, const Grid& q, int64_t j0) {
  PanelStore ps;
  for (int v = 0; v < kNV; ++v) {
    const int64_t p0 = j0 + 16 * v;
    if (q.dense) {
      ps.start[v] = p0;
      ps.mask[v] = tail16(q.P - p0);
      continue;
    }
    ps.start[v] = (p0 / q.Wq) * g.ow + std::min(p0 % q.Wq, g.ow);
    uint32_t m = 0;
    for (int l = 0; l < 16; ++l) {
      const int64_t p = p0 + l;
      if (p < q.P && p % q.Wq < g.ow) m |= 1u << l;
    }
    ps.mask[v] = static_cast<__mmask16>(m);
  }
  return ps;
}

inline void storeBytes(uint8_t* y, __mmask16 mask, __m128i bytes) {
#if defined(__AVX512VBMI2__)
  _mm_mask_compressstoreu_epi8(y, mask, bytes);
#else
  alignas(16) uint8_t b[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(b), bytes);
  for (int l = 0; l < 16; ++l)
    if (mask >> l & 1) *y++ = b[l];
#endif
}

// One tile: channels [m0, m0 + kMR) x the panel's first NV pixel vectors (the last panel of a
// small plane holds fewer than kNV), written to y (the image's output).
template <int NV>
void tile(const QGeom& g, int64_t K4, const int32_t* wq, int64_t m0, const uint8_t* panel, const PanelStore& ps,
          const Requant& rq, uint8_t* y) {
  const int64_t P = g.oh * g.ow;
  // Every index into acc a constant after unrolling, so the accumulators stay in registers (a
  // loop bound that depends on m, as in the store below, made GCC keep them on the stack).
  __m512i acc[kMR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_si512();
  const int32_t* w = wq + m0 * K4;  // [k4][kMR] dwords for this tile
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    const __m512i* b = reinterpret_cast<const __m512i*>(panel + k4 * kNP * 4);
    __m512i bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_si512(b + v);
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      const __m512i a = _mm512_set1_epi32(w[k4 * kMR + r]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], bv[v], a);
    }
  }
  alignas(64) int32_t sums[kMR][kNP];
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm512_store_si512(sums[r] + 16 * v, acc[r][v]);
  const __m512 zp = _mm512_set1_ps(rq.zp), lo = _mm512_set1_ps(rq.lo), hi = _mm512_set1_ps(rq.hi);
  for (int r = 0; r < kMR && m0 + r < g.m; ++r) {
    const int64_t m = m0 + r;
    const __m512i corr = _mm512_set1_epi32(rq.corr[m]);
    const __m512 mult = _mm512_set1_ps(rq.mult[m]);
    for (int v = 0; v < NV; ++v) {
      if (!ps.mask[v]) continue;
      const __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_load_si512(sums[r] + 16 * v), corr));
      __m512 t = _mm512_roundscale_ps(_mm512_mul_ps(f, mult), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, zp), lo), hi);
      storeBytes(y + m * P + ps.start[v], ps.mask[v], _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)));
    }
  }
}

using TileFn = void (*)(const QGeom&, int64_t, const int32_t*, int64_t, const uint8_t*, const PanelStore&,
                        const Requant&, uint8_t*);
constexpr TileFn kTiles[kNV + 1] = {nullptr, tile<1>, tile<2>, tile<3>};

// The scalar at t (uint8, int8 or int32 zero points).
int32_t intAt(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case kU8: return t.as<uint8_t>()[i];
    case kI8: return t.as<int8_t>()[i];
    case kI32: return t.as<int32_t>()[i];
    default: return 0;
  }
}

// The requantization both kernels read: per channel m < M the correction bias - x_zp * sum w
// (modulo 2^32) into corr (sized by the caller, its padding left zero), the multipliers, and the
// output zero point and range.
Requant requantOf(const Tensor* B, int32_t xzp, const std::vector<int32_t>& wsum, int64_t M, const Tensor& Yz,
                  const Tensor& Y, const std::vector<float>& mult, std::vector<int32_t>& corr) {
  for (int64_t m = 0; m < M; ++m)
    corr[m] = static_cast<int32_t>(static_cast<uint32_t>(B ? B->as<int32_t>()[m] : 0) -
                                   static_cast<uint32_t>(xzp) * static_cast<uint32_t>(wsum[m]));
  const bool s8y = Y.dtype == kI8;
  return Requant{corr.data(), mult.data(), static_cast<float>(intAt(Yz, 0)), s8y ? -128.f : 0.f, s8y ? 127.f : 255.f};
}

// A depthwise layer (qconv::depthwiseApplies): per channel its taps' weights as floats and the
// correction bias - x_zp * sum w, then f_qconv_dw.cpp's kernel.
int depthwiseLayer(const QGeom& g, const Tensor& X, const Tensor& Xz, const Tensor& W, int wShift, const Tensor* B,
                   const Tensor& Yz, Tensor& Y, std::vector<float>& mult, Ctx& ctx) {
  const int64_t taps = g.kh * g.kw;
  QWeights localW;
  QWeights* qw = &localW;
  if (ctx.constant(3)) qw = ctx.state->getOr<QWeights>([] { return new QWeights; });
  if (qw->dw.empty()) {  // once per handle for constant weights
    const bool u8 = W.dtype == kU8;
    qw->dw.resize(static_cast<size_t>(g.m * taps));
    qw->wsum.assign(static_cast<size_t>(g.m), 0);
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t t = 0; t < taps; ++t) {
        const int v = (u8 ? int(W.as<uint8_t>()[m * taps + t]) : int(W.as<int8_t>()[m * taps + t])) - wShift;
        qw->dw[m * taps + t] = static_cast<float>(v);
        qw->wsum[m] += v;
      }
  }
  std::vector<int32_t> corr(static_cast<size_t>(g.m));
  const int xShift = X.dtype == kI8 ? 128 : 0;
  const int32_t xzp = intAt(Xz, 0) + xShift;
  const Requant rq = requantOf(B, xzp, qw->wsum, g.m, Yz, Y, mult, corr);
  qconv::depthwiseConv(g, qw->dw.data(), static_cast<const uint8_t*>(X.data), static_cast<uint8_t>(xzp),
                       static_cast<uint8_t>(xShift ? 0x80 : 0), rq, static_cast<uint8_t*>(Y.data), ctx.pool);
  return 0;
}

#endif  // MG_QCONV_VNNI

}  // namespace

int fQLinearConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("QLinearConv", a, in, nin, out, nout, ctx); };
#if defined(MG_QCONV_VNNI)
  if (nin < 8 || nout < 1) return fallback();
  const Tensor &X = in[0], &Xs = in[1], &Xz = in[2], &W = in[3], &Ws = in[4], &Wz = in[5], &Ys = in[6],
               &Yz = in[7];
  const Tensor* B = nin > 8 && in[8].present() ? &in[8] : nullptr;
  Tensor& Y = out[0];
  const int r = X.rank;
  const bool q8x = X.dtype == kU8 || X.dtype == kI8, q8w = W.dtype == kU8 || W.dtype == kI8;
  const bool q8y = Y.dtype == kU8 || Y.dtype == kI8;
  if (!q8x || !q8w || !q8y || (r != 3 && r != 4) ||
      Xs.dtype != kF32 || Ws.dtype != kF32 || Ys.dtype != kF32 || Xs.numel() != 1 || Ys.numel() != 1 ||
      Xz.numel() != 1 || Yz.numel() != 1 || Xz.dtype != X.dtype || Yz.dtype != Y.dtype || Wz.dtype != W.dtype)
    return fallback();
  QGeom g;
  if (!conv::resolveGeom(a, X, W, Y, &g)) return fallback();
  const bool depthwise = g.group != 1;
  if (depthwise && !qconv::depthwiseApplies(g)) return fallback();  // other grouped layers
  if ((Ws.numel() != 1 && Ws.numel() != g.m) || Wz.numel() != Ws.numel() || (B && (B->dtype != kI32 || B->numel() != g.m)))
    return fallback();
  // Weight zero points 0 after the shift (uint8 weights: 128).
  const int wShift = W.dtype == kU8 ? 128 : 0;
  for (int64_t i = 0; i < Wz.numel(); ++i)
    if (intAt(Wz, i) != wShift) return fallback();
  const float xs = Xs.as<float>()[0], ys = Ys.as<float>()[0];
  std::vector<float> mult(static_cast<size_t>(g.m));
  for (int64_t m = 0; m < g.m; ++m) {
    mult[m] = xs * Ws.as<float>()[Ws.numel() == 1 ? 0 : m] / ys;
    if (!std::isfinite(mult[m])) return fallback();
  }
  if (Y.numel() == 0) return 0;
  if (depthwise) return depthwiseLayer(g, X, Xz, W, wShift, B, Yz, Y, mult, ctx);

  const bool lanes = qconv::lanesApplies(g);
  QWeights localW;
  QWeights* qw = &localW;
  if (ctx.constant(3)) qw = ctx.state->getOr<QWeights>([] { return new QWeights; });
  packWeights(g, W, wShift, lanes, qw);
  const int xShift = X.dtype == kI8 ? 128 : 0;
  const int32_t xzp = intAt(Xz, 0) + xShift;
  // Per channel, zero padded to the kernels' channel blocks.
  const int64_t mPad = std::max<int64_t>(qconv::lanesChannels(g), (g.m + kMR - 1) / kMR * kMR);
  std::vector<int32_t> corr(static_cast<size_t>(mPad), 0);
  mult.resize(static_cast<size_t>(mPad), 0.f);
  const Requant rq = requantOf(B, xzp, qw->wsum, g.m, Yz, Y, mult, corr);
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  const int64_t plane = g.h * g.w;
  if (lanes) {
    for (int64_t n = 0; n < g.n; ++n)
      qconv::lanesConv(g, qw->lanes.data(), x + n * g.c * plane, static_cast<uint8_t>(xzp),
                       static_cast<uint8_t>(xShift ? 0x80 : 0), rq, y + n * g.m * g.oh * g.ow, ctx.pool);
    return 0;
  }

  const int64_t K = g.K(), K4 = g.K4(), kk = g.kh * g.kw;
  const Grid q = gridOf(g);
  // Per tap k = (c, ky, kx): its offset in the phase-split copy of the image.
  std::vector<int64_t> tapOff(K);
  std::vector<uint8_t> usedPhase(static_cast<size_t>(q.S), 0);
  for (int64_t ky = 0, k = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx, ++k) {  // channel 0's taps; channel c adds c * S * planeQ
      const int64_t ph = (ky * g.dh % g.sh) * g.sw + kx * g.dw % g.sw;
      usedPhase[ph] = 1;
      tapOff[k] = ph * q.planeQ + (ky * g.dh / g.sh) * q.Wq + kx * g.dw / g.sw;
    }
  for (int64_t k = kk; k < K; ++k) tapOff[k] = tapOff[k - kk] + q.S * q.planeQ;
  // The copy, with a panel's width of slack (the last panel's reads past the grid feed pixels
  // that are not stored), and a row of the fill value for taps past K.
  const int64_t imageBytes = g.c * q.S * q.planeQ, slack = kNP + q.Wq + 64;
  static thread_local fast::Scratch splitS;
  auto* split = reinterpret_cast<uint8_t*>(splitS.get((imageBytes + slack + 3) / 4));
  alignas(64) uint8_t fillRow[kNP];
  std::memset(fillRow, static_cast<uint8_t>(xzp), kNP);
  const int64_t panels = (q.P + kNP - 1) / kNP, mTiles = (g.m + kMR - 1) / kMR;
  const int64_t panelBytes = K4 * kNP * 4;
  // Loop order: channel tiles outside when the weights outweigh all the panels and the panels fit
  // the core's L2 (see below), else panels outside (each panel packed once, all tiles over it).
  const int64_t weightBytes = mTiles * kMR * K4 * 4;
  const bool channelMajor = panels * panelBytes <= 512 * 1024 && weightBytes > 2 * panels * panelBytes;
  const uint8_t fill = static_cast<uint8_t>(xzp), flip = static_cast<uint8_t>(xShift ? 0x80 : 0);
  // Where the copy would be the image itself (stride 1, no padding, uint8 input: MobileNet's 1x1
  // layers on wide planes), the panels read the input directly; only a panel whose reads could
  // run past the image's end (the last) packs from a copy of its rows.
  const bool direct = !q.dense && q.S == 1 && g.pt == 0 && g.pl == 0 && q.Wq == g.w && q.Rq == g.h && !flip;
  for (int64_t n = 0; n < g.n; ++n) {
    const uint8_t* xn = x + n * g.c * plane;
    const uint8_t* src = direct ? xn : split;
    if (!direct) {
      parallelFor(ctx.pool, g.c, 8, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          phaseSplit(g, q, usedPhase.data(), xn + c * plane, fill, flip, split + c * q.S * q.planeQ);
      });
      std::memset(split + imageBytes, fill, static_cast<size_t>(slack));
    }
    uint8_t* yn = y + n * g.m * g.oh * g.ow;
    auto pack = [&](int64_t j0, uint8_t* dst) {
      if (q.dense) {
        packPanelDense(g, q, tapOff.data(), K, K4, src, fill, j0, dst);
      } else if (direct && tapOff[K - 1] + j0 + kNP > imageBytes) {
        static thread_local std::vector<uint8_t> rowsS;
        static thread_local std::vector<int64_t> offS;
        rowsS.assign(static_cast<size_t>(K * kNP), fill);
        offS.resize(static_cast<size_t>(K));
        for (int64_t k = 0; k < K; ++k) {
          const int64_t from = tapOff[k] + j0, len = std::min<int64_t>(kNP, imageBytes - from);
          if (len > 0) std::memcpy(rowsS.data() + k * kNP, xn + from, static_cast<size_t>(len));
          offS[k] = k * kNP;
        }
        packPanel(offS.data(), K, K4, rowsS.data(), fillRow, 0, dst);
      } else {
        packPanel(tapOff.data(), K, K4, src, fillRow, j0, dst);
      }
    };
    const int64_t threads = ctx.pool ? ctx.pool->threads() : 1;
    if (channelMajor) {
      // Few pixels, many weights (ResNet's 7x7 and 14x14 layers: 2.4 MB of weights against 0.4 MB
      // of panels): every thread packs all the panels once, then its share of channel tiles runs
      // over them, so each tile's weights are read from memory once, not once per panel.
      parallelFor(ctx.pool, mTiles, 1, [&](int64_t b, int64_t e) {
        static thread_local fast::Scratch scratch;
        auto* all = reinterpret_cast<uint8_t*>(scratch.get((panels * panelBytes + 3) / 4));
        for (int64_t pi = 0; pi < panels; ++pi)
          pack(pi * kNP, all + pi * panelBytes);
        for (int64_t mt = b; mt < e; ++mt)
          for (int64_t pi = 0; pi < panels; ++pi) {
            const PanelStore ps = panelStore(g, q, pi * kNP);
            kTiles[std::min<int64_t>(kNV, (q.P - pi * kNP + 15) / 16)](g, K4, qw->w.data(), mt * kMR,
                                                                      all + pi * panelBytes, ps, rq, yn);
          }
      });
      continue;
    }
    // Items are (panel, group of output-channel tiles): a small plane has fewer panels than the
    // pool has threads to keep busy, so its channel tiles are split too (each item packs its panel).
    const int64_t groups = std::min<int64_t>(mTiles, std::max<int64_t>(1, (4 * threads + panels - 1) / panels));
    const int64_t perGroup = (mTiles + groups - 1) / groups;
    parallelFor(ctx.pool, panels * groups, 1, [&](int64_t b, int64_t e) {
      static thread_local fast::Scratch scratch;
      auto* panel = reinterpret_cast<uint8_t*>(scratch.get((panelBytes + 3) / 4));
      int64_t packed = -1;
      for (int64_t item = b; item < e; ++item) {
        const int64_t pi = item / groups, grp = item % groups, j0 = pi * kNP;
        if (pi != packed) {
          pack(j0, panel);
          packed = pi;
        }
        const PanelStore ps = panelStore(g, q, j0);
        const TileFn fn = kTiles[std::min<int64_t>(kNV, (q.P - j0 + 15) / 16)];
        for (int64_t mt = grp * perGroup; mt < std::min(mTiles, (grp + 1) * perGroup); ++mt)
          fn(g, K4, qw->w.data(), mt * kMR, panel, ps, rq, yn);
      }
    });
  }
  return 0;
#else
  return fallback();
#endif
}

}  // namespace mgrt
