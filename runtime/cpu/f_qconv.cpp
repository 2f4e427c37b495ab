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
// the lane's int32 sum. The tile is 8 output channels x 48 output pixels (24 accumulators): per 4
// values of k, three vectors of the packed im2col panel (16 pixels x 4 bytes each) against each
// channel's 4 weight bytes broadcast. The panel is built once per 48 pixels (all output channels
// read it): the im2col rows of 4 consecutive k, loaded 16 pixels at a time (masked byte loads, the
// zero point where a tap falls in the padding; stride 2 takes the even bytes of a 32-byte load),
// interleaved byte by byte into [k / 4][pixel][4]. The zero point is taken out afterwards:
// sum (x' - x_zp) w = sum x' w - x_zp * sum_k w[m, k], the weight sums computed with the packed
// weights (once per model handle when the weights are constant).
//
// Operands the instruction does not take directly are shifted by 128: int8 activations become
// uint8 (x + 128, zero point + 128), uint8 weights int8 (w - 128, zero point - 128); both leave every
// difference (x - x_zp), (w - w_zp) as it was. Covered: 2-D (and 1-D) ungrouped convolutions, any
// kernel size, stride, dilation and padding, per-tensor or per-channel weight scales, weight zero
// points 0 (after the shift: symmetric int8 weights, or uint8 weights at 128, as the quantizers
// write them). Others (grouped and depthwise layers, other weight zero points, non-finite
// multipliers, builds without VNNI) run the reference kernel.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "f_gemm.h"
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

struct QGeom {
  int64_t n, c, h, w, m, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
  int64_t K() const { return c * kh * kw; }
  int64_t K4() const { return (K() + 3) / 4; }
};

// The weights as the kernel reads them: [m rounded up to kMR][K4] dwords of 4 signed bytes (zero
// past K and past m), and per output channel the sum of its (shifted) weights.
struct QWeights {
  std::vector<int32_t> w;
  std::vector<int32_t> wsum;
};

#if defined(MG_QCONV_VNNI)

constexpr int kMR = 8;          // output channels per tile
constexpr int kNV = 3;          // 16-pixel vectors per tile
constexpr int kNP = kNV * 16;   // pixels per panel

QWeights* packWeights(const QGeom& g, const Tensor& W, int wShift) {
  auto* q = new QWeights;
  const int64_t K = g.K(), K4 = g.K4(), mPad = (g.m + kMR - 1) / kMR * kMR;
  q->w.assign(static_cast<size_t>(mPad * K4), 0);
  q->wsum.assign(static_cast<size_t>(g.m), 0);
  const bool u8 = W.dtype == kU8;
  for (int64_t m = 0; m < g.m; ++m) {
    int64_t sum = 0;
    auto* dst = reinterpret_cast<int8_t*>(q->w.data() + m * K4);
    for (int64_t k = 0; k < K; ++k) {
      const int v = (u8 ? int(W.as<uint8_t>()[m * K + k]) : int(W.as<int8_t>()[m * K + k])) - wShift;
      dst[k] = static_cast<int8_t>(v);
      sum += v;
    }
    q->wsum[m] = static_cast<int32_t>(sum);
  }
  return q;
}

inline __mmask16 tail16(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << n) - 1);
}
inline __mmask16 range16(int64_t lo, int64_t hi) { return static_cast<__mmask16>(tail16(hi) & ~tail16(lo)); }

// Valid t range [lo, hi) of 0 <= ix0 + t * s < w for t in [0, len).
inline void validRange(int64_t ix0, int64_t s, int64_t w, int64_t len, int64_t* lo, int64_t* hi) {
  int64_t l = ix0 >= 0 ? 0 : (-ix0 + s - 1) / s;
  int64_t h = ix0 > w - 1 ? 0 : (w - 1 - ix0) / s + 1;
  *lo = std::min(l, len);
  *hi = std::max(*lo, std::min(h, len));
}

struct Run {
  int64_t jj, len, iy0, ix0;  // panel pixels [jj, jj + len) on one output row; input origin
};

struct PackArgs {
  const QGeom* g;
  const uint8_t* x;       // the image's first channel plane
  uint8_t fill;           // the (shifted) input zero point
  uint8_t flip;           // 0x80 for int8 input (to uint8), else 0
  const int64_t* cOff;    // per k: channel plane offset
  const int32_t* kyOff;   // per k: ky * dh
  const int32_t* kxOff;   // per k: kx * dw
};

// One im2col row (tap k) of the panel's pixels into dst[0, np), 16 pixels per masked load.
inline void im2colRow(const PackArgs& p, const Run* runs, int nrun, int64_t k, uint8_t* dst) {
  const QGeom& g = *p.g;
  const __m128i fill = _mm_set1_epi8(static_cast<char>(p.fill));
  const __m128i flip = _mm_set1_epi8(static_cast<char>(p.flip));
  const uint8_t* plane = p.x + p.cOff[k];
  for (int r = 0; r < nrun; ++r) {
    const Run& run = runs[r];
    const __mmask16 store = tail16(run.len);
    const int64_t iy = run.iy0 + p.kyOff[k];
    if (iy < 0 || iy >= g.h) {
      _mm_mask_storeu_epi8(dst + run.jj, store, fill);
      continue;
    }
    const int64_t ix0 = run.ix0 + p.kxOff[k];
    int64_t lo, hi;
    validRange(ix0, g.sw, g.w, run.len, &lo, &hi);
    const uint8_t* src = plane + iy * g.w + ix0;
    __m128i v;
    if (g.sw == 1) {
      v = _mm_xor_si128(_mm_maskz_loadu_epi8(range16(lo, hi), src), flip);
      v = _mm_mask_blend_epi8(range16(lo, hi), fill, v);
    } else if (g.sw == 2) {
      // Lane t reads byte 2t: the even bytes of a 32-byte load (the low byte of each 16-bit word).
      uint32_t m32 = 0;
      for (int64_t t = lo; t < hi; ++t) m32 |= 1u << (2 * t);
      const __m256i wide = _mm256_maskz_loadu_epi8(static_cast<__mmask32>(m32), src);
      v = _mm_xor_si128(_mm256_cvtepi16_epi8(wide), flip);
      v = _mm_mask_blend_epi8(range16(lo, hi), fill, v);
    } else {
      alignas(16) uint8_t tmp[16];
      for (int64_t t = 0; t < 16; ++t)
        tmp[t] = t >= lo && t < hi ? static_cast<uint8_t>(src[t * g.sw] ^ p.flip) : p.fill;
      v = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
    }
    _mm_mask_storeu_epi8(dst + run.jj, store, v);
  }
}

// The panel of output pixels [j0, j0 + np) as [K4][kNP][4] bytes: pixel j's 4 bytes at k4 are the
// im2col values of taps 4 k4 .. 4 k4 + 3 (the fill value past K: those weights are zero).
void packPanel(const PackArgs& p, int64_t j0, int64_t np, uint8_t* panel) {
  const QGeom& g = *p.g;
  Run runs[kNP];
  int nrun = 0;
  for (int64_t jj = 0; jj < np;) {
    const int64_t pix = j0 + jj, oy = pix / g.ow, ox = pix % g.ow;
    const int64_t len = std::min({np - jj, g.ow - ox, int64_t{16}});
    runs[nrun++] = Run{jj, len, oy * g.sh - g.pt, ox * g.sw - g.pl};
    jj += len;
  }
  const int64_t K = g.K(), K4 = g.K4();
  alignas(64) uint8_t rows[4][kNP];
  for (int q = 0; q < 4; ++q) std::memset(rows[q], p.fill, kNP);
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    for (int q = 0; q < 4; ++q) {
      const int64_t k = 4 * k4 + q;
      if (k < K) im2colRow(p, runs, nrun, k, rows[q]);
      else std::memset(rows[q], p.fill, kNP);
    }
    uint8_t* dst = panel + k4 * kNP * 4;
    for (int v = 0; v < kNV; ++v) {
      const __m128i a = _mm_load_si128(reinterpret_cast<const __m128i*>(rows[0] + 16 * v));
      const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(rows[1] + 16 * v));
      const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(rows[2] + 16 * v));
      const __m128i d = _mm_load_si128(reinterpret_cast<const __m128i*>(rows[3] + 16 * v));
      const __m128i abLo = _mm_unpacklo_epi8(a, b), abHi = _mm_unpackhi_epi8(a, b);
      const __m128i cdLo = _mm_unpacklo_epi8(c, d), cdHi = _mm_unpackhi_epi8(c, d);
      __m128i* o = reinterpret_cast<__m128i*>(dst + 64 * v);
      _mm_store_si128(o + 0, _mm_unpacklo_epi16(abLo, cdLo));  // pixels 0-3
      _mm_store_si128(o + 1, _mm_unpackhi_epi16(abLo, cdLo));  // 4-7
      _mm_store_si128(o + 2, _mm_unpacklo_epi16(abHi, cdHi));  // 8-11
      _mm_store_si128(o + 3, _mm_unpackhi_epi16(abHi, cdHi));  // 12-15
    }
  }
}

struct Requant {
  const int32_t* corr;  // per channel: bias - x_zp * weight sum (modulo 2^32)
  const float* mult;    // per channel: x_scale * w_scale / y_scale
  float zp, lo, hi;     // output zero point and range, as floats
};

// One tile: channels [m0, m0 + kMR) x the panel's np pixels, written to y (the image's output).
void tile(const QGeom& g, const int32_t* wq, int64_t m0, const uint8_t* panel, int64_t j0, int64_t np,
          const Requant& rq, uint8_t* y) {
  const int64_t K4 = g.K4(), P = g.oh * g.ow;
  __m512i acc[kMR][kNV];
  for (int r = 0; r < kMR; ++r)
    for (int v = 0; v < kNV; ++v) acc[r][v] = _mm512_setzero_si512();
  const int32_t* w = wq + m0 * K4;
  for (int64_t k4 = 0; k4 < K4; ++k4) {
    const __m512i* b = reinterpret_cast<const __m512i*>(panel + k4 * kNP * 4);
    const __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 1), b2 = _mm512_load_si512(b + 2);
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      const __m512i a = _mm512_set1_epi32(w[r * K4 + k4]);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, a);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, a);
      acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], b2, a);
    }
  }
  const __m512 zp = _mm512_set1_ps(rq.zp), lo = _mm512_set1_ps(rq.lo), hi = _mm512_set1_ps(rq.hi);
  for (int r = 0; r < kMR && m0 + r < g.m; ++r) {
    const int64_t m = m0 + r;
    const __m512i corr = _mm512_set1_epi32(rq.corr[m]);
    const __m512 mult = _mm512_set1_ps(rq.mult[m]);
    for (int v = 0; v < kNV && 16 * v < np; ++v) {
      const __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(acc[r][v], corr));
      __m512 t = _mm512_roundscale_ps(_mm512_mul_ps(f, mult), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, zp), lo), hi);
      const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t));
      _mm_mask_storeu_epi8(y + m * P + j0 + 16 * v, tail16(np - 16 * v), bytes);
    }
  }
}

// The scalar at t (uint8, int8 or int32 zero points; float scales).
int32_t intAt(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case kU8: return t.as<uint8_t>()[i];
    case kI8: return t.as<int8_t>()[i];
    case kI32: return t.as<int32_t>()[i];
    default: return 0;
  }
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
  if (!q8x || !q8w || !q8y || (r != 3 && r != 4) || W.rank != r || Y.rank != r || a.i("group", 1) != 1 ||
      Xs.dtype != kF32 || Ws.dtype != kF32 || Ys.dtype != kF32 || Xs.numel() != 1 || Ys.numel() != 1 ||
      Xz.numel() != 1 || Yz.numel() != 1 || Xz.dtype != X.dtype || Yz.dtype != Y.dtype || Wz.dtype != W.dtype)
    return fallback();
  SpatialAttrs sa;
  sa.kernelShape = a.ints("kernel_shape");
  sa.strides = a.ints("strides");
  sa.dilations = a.ints("dilations");
  sa.pads = a.ints("pads");
  if (!parseAutoPad(a.s("auto_pad", "NOTSET"), &sa.autoPad)) return fallback();
  SpatialGeometry sg;
  const std::string err = resolveConvGeometry("QLinearConv", std::vector<int64_t>(X.dims + 2, X.dims + r),
                                              std::vector<int64_t>(W.dims + 2, W.dims + r), sa, &sg);
  const bool oneD = r == 3;
  const int last = sg.nsp - 1;
  QGeom g;
  g.n = X.dims[0];
  g.c = X.dims[1];
  g.h = oneD ? 1 : X.dims[2];
  g.w = X.dims[r - 1];
  g.m = W.dims[0];
  if (!err.empty() || W.dims[1] != g.c || Y.dims[0] != g.n || Y.dims[1] != g.m ||
      (!oneD && Y.dims[2] != sg.out[0]) || Y.dims[r - 1] != sg.out[last])
    return fallback();
  g.oh = oneD ? 1 : sg.out[0];
  g.ow = sg.out[last];
  g.kh = oneD ? 1 : W.dims[2];
  g.kw = W.dims[r - 1];
  g.sh = oneD ? 1 : sg.stride[0];
  g.sw = sg.stride[last];
  g.dh = oneD ? 1 : sg.dilation[0];
  g.dw = sg.dilation[last];
  g.pt = oneD ? 0 : sg.padBegin[0];
  g.pl = sg.padBegin[last];
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

  std::unique_ptr<QWeights> local;
  const QWeights* qw;
  if (ctx.constant(3)) {
    qw = ctx.state->getOr<QWeights>([&] { return packWeights(g, W, wShift); });
  } else {
    local.reset(packWeights(g, W, wShift));
    qw = local.get();
  }
  const int xShift = X.dtype == kI8 ? 128 : 0;
  const int32_t xzp = intAt(Xz, 0) + xShift;
  std::vector<int32_t> corr(static_cast<size_t>(g.m));
  for (int64_t m = 0; m < g.m; ++m)
    corr[m] = static_cast<int32_t>(static_cast<uint32_t>(B ? B->as<int32_t>()[m] : 0) -
                                   static_cast<uint32_t>(xzp) * static_cast<uint32_t>(qw->wsum[m]));
  const bool s8y = Y.dtype == kI8;
  const Requant rq{corr.data(), mult.data(), static_cast<float>(intAt(Yz, 0)), s8y ? -128.f : 0.f,
                   s8y ? 127.f : 255.f};

  const int64_t K = g.K(), kk = g.kh * g.kw, plane = g.h * g.w, P = g.oh * g.ow;
  std::vector<int64_t> cOff(K);
  std::vector<int32_t> kyOff(K), kxOff(K);
  for (int64_t k = 0; k < K; ++k) {
    cOff[k] = (k / kk) * plane;
    kyOff[k] = static_cast<int32_t>((k % kk) / g.kw * g.dh);
    kxOff[k] = static_cast<int32_t>((k % kk) % g.kw * g.dw);
  }
  const int64_t panels = (P + kNP - 1) / kNP, mTiles = (g.m + kMR - 1) / kMR;
  const int64_t panelBytes = g.K4() * kNP * 4;
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  parallelFor(ctx.pool, g.n * panels, 1, [&](int64_t b, int64_t e) {
    static thread_local fast::Scratch scratch;
    auto* panel = reinterpret_cast<uint8_t*>(scratch.get((panelBytes + 3) / 4));
    for (int64_t item = b; item < e; ++item) {
      const int64_t n = item / panels, j0 = item % panels * kNP, np = std::min<int64_t>(kNP, P - j0);
      const PackArgs pa{&g, x + n * g.c * plane, static_cast<uint8_t>(xzp), static_cast<uint8_t>(xShift ? 0x80 : 0),
                        cOff.data(), kyOff.data(), kxOff.data()};
      packPanel(pa, j0, np, panel);
      for (int64_t mt = 0; mt < mTiles; ++mt) tile(g, qw->w.data(), mt * kMR, panel, j0, np, rq, y + n * g.m * P);
    }
  });
  return 0;
#else
  return fallback();
#endif
}

}  // namespace mgrt
