// QLinearConv with the output channels in the vector lanes (AVX-512 VNNI), for planes of 16 or
// fewer output columns (ResNet's 14x14 and 7x7 stages: half of its multiply-adds).
//
// The pixel-lane kernel (f_qconv.cpp) computes 16 pixels per vector: a 7x7 plane is 49 pixels,
// four vectors, a quarter of them idle, and its 512 channels share every panel. Here a vector is
// 16 output channels and the pixels are broadcast:
//  - the image is copied once per call channels-last and zero-point padded: pixel (r, col) of
//    the padded plane holds its c channels (rounded up to 4) contiguously, so 4 consecutive
//    channels of one tap are one 32-bit broadcast. The reduction index is k = (ky, kx, c), and the
//    weights are packed in that order ([block of 64 channels][tap][c / 4][64][4] bytes);
//  - a tile is 6 output pixels x 64 output channels (24 accumulators): per 4 channels of a tap,
//    four weight vectors against six broadcasts, 24 vpdpbusd; the six pixels are any six (they
//    may span rows: one pointer each), so 49 pixels are 9 tiles with 5 pixel slots idle;
//  - the sums get the zero-point correction, the requantization of f_qconv.cpp (same float32
//    operations: the same bytes) and are stored channel by channel into the NCHW output.
// Legal because the sum over k is the same set of exact int8 products in any order (int32 sums
// modulo 2^32), and the padded channels have zero weights.
#include "f_qconv.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "mg_threadpool.h"

// GCC 12's conversion intrinsics start from an "undefined" vector initialized from itself.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace mgrt {
namespace qconv {
namespace {

constexpr int kCB = 64;  // output channels per tile (four vectors)
constexpr int kPX = 6;   // output pixels per tile

int64_t c4Of(const QGeom& g) { return (g.c + 3) / 4 * 4; }

// The padded plane the taps read: rows pt + h + bottom, columns pl + w + right, enough for every
// tap of every output pixel (stride and dilation applied in the tap offsets).
struct Padded {
  int64_t Hp, Wp, C4;
};

Padded paddedOf(const QGeom& g) {
  Padded p;
  p.Hp = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  p.Wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  p.C4 = c4Of(g);
  return p;
}

}  // namespace

// Narrow planes with enough channels for a block; not 1x1 layers with a stride (ResNet's
// downsampling projections), which read a quarter of the image: the pixel-lane kernel's copy
// takes only the phase they read, where this one transposes the whole image.
bool lanesApplies(const QGeom& g) {
  return g.ow <= 16 && g.m >= 32 && !(g.kh == 1 && g.kw == 1 && (g.sh > 1 || g.sw > 1));
}

int64_t lanesChannels(const QGeom& g) { return (g.m + kCB - 1) / kCB * kCB; }

void lanesPackWeights(const QGeom& g, const Tensor& W, int wShift, std::vector<int8_t>* dst) {
  const int64_t C4 = c4Of(g), taps = g.kh * g.kw, mPad = lanesChannels(g), K = g.K();
  dst->assign(static_cast<size_t>(mPad * taps * C4), 0);
  const bool u8 = W.dtype == kU8;
  for (int64_t m = 0; m < g.m; ++m) {
    const int64_t blk = m / kCB, lane = m % kCB;
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t src = m * K + c * taps + t;
        const int v = (u8 ? int(W.as<uint8_t>()[src]) : int(W.as<int8_t>()[src])) - wShift;
        // [blk][t][c / 4][lane][c % 4]
        (*dst)[(((blk * taps + t) * (C4 / 4) + c / 4) * kCB + lane) * 4 + c % 4] = static_cast<int8_t>(v);
      }
  }
}

namespace {

// One tile: output pixels at px[0..5] (their offsets in the padded plane, in bytes) x channels
// [m0, m0 + 64). tapOff[t]: tap t's offset from a pixel's origin.
void tile(const QGeom& g, const Padded& p, const int8_t* w, const int64_t* tapOff, const uint8_t* img,
          const int64_t* px, const int64_t* outIdx, int npx, int64_t m0, const Requant& rq, uint8_t* y) {
  const int64_t taps = g.kh * g.kw, c4n = p.C4 / 4;
  __m512i acc[kPX][4];
#pragma GCC unroll 6
  for (int j = 0; j < kPX; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[j][v] = _mm512_setzero_si512();
  const __m512i* wv = reinterpret_cast<const __m512i*>(w);
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* base[kPX];
#pragma GCC unroll 6
    for (int j = 0; j < kPX; ++j) base[j] = img + px[j] + tapOff[t];
    for (int64_t c4 = 0; c4 < c4n; ++c4, wv += 4) {
      const __m512i w0 = _mm512_loadu_si512(wv), w1 = _mm512_loadu_si512(wv + 1);
      const __m512i w2 = _mm512_loadu_si512(wv + 2), w3 = _mm512_loadu_si512(wv + 3);
#pragma GCC unroll 6
      for (int j = 0; j < kPX; ++j) {
        int32_t d;
        std::memcpy(&d, base[j] + 4 * c4, 4);
        const __m512i a = _mm512_set1_epi32(d);
        acc[j][0] = _mm512_dpbusd_epi32(acc[j][0], a, w0);
        acc[j][1] = _mm512_dpbusd_epi32(acc[j][1], a, w1);
        acc[j][2] = _mm512_dpbusd_epi32(acc[j][2], a, w2);
        acc[j][3] = _mm512_dpbusd_epi32(acc[j][3], a, w3);
      }
    }
  }
  alignas(64) uint8_t bytes[kPX][kCB];
  const __m512 zp = _mm512_set1_ps(rq.zp), lo = _mm512_set1_ps(rq.lo), hi = _mm512_set1_ps(rq.hi);
#pragma GCC unroll 6
  for (int j = 0; j < kPX; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      const __m512i corr = _mm512_loadu_si512(rq.corr + m0 + 16 * v);
      const __m512 mult = _mm512_loadu_ps(rq.mult + m0 + 16 * v);
      const __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(acc[j][v], corr));
      __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(f, mult), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      r = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(r, zp), lo), hi);
      _mm_store_si128(reinterpret_cast<__m128i*>(bytes[j] + 16 * v), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(r)));
    }
  const int64_t P = g.oh * g.ow, mEnd = std::min<int64_t>(kCB, g.m - m0);
  for (int64_t i = 0; i < mEnd; ++i) {
    uint8_t* row = y + (m0 + i) * P;
    for (int j = 0; j < npx; ++j) row[outIdx[j]] = bytes[j][i];
  }
}

}  // namespace

void lanesConv(const QGeom& g, const int8_t* w, const uint8_t* x, uint8_t fill, uint8_t flip, const Requant& rq,
               uint8_t* y, ThreadPool* pool) {
  const Padded p = paddedOf(g);
  const int64_t taps = g.kh * g.kw, plane = g.h * g.w, P = g.oh * g.ow;
  // The channels-last padded copy.
  static thread_local std::vector<uint8_t> imgS;
  imgS.assign(static_cast<size_t>(p.Hp * p.Wp * p.C4), fill);
  uint8_t* img = imgS.data();
  const int64_t rows = std::min(g.h, p.Hp - g.pt), cols = std::min(g.w, p.Wp - g.pl);
  // Each pixel's channels 16 at a time: a gather of the dwords at the pixel in 16 channel planes,
  // their low bytes stored as one 16-byte run (was a byte loop, serial: the whole time of a 1x1
  // 576->96 layer on a 14x14 plane). A dword read at one of the image's last 3 bytes would run
  // past the tensor, so the last channel block's final pixels take the byte loop.
  const __m512i chanOff = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                             _mm512_set1_epi32(static_cast<int>(plane)));
  const __m128i flip16 = _mm_set1_epi8(static_cast<char>(flip));
  const bool gatherable = g.c * plane < (int64_t(1) << 31);
  parallelFor(pool, rows, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t iy = r0; iy < r1; ++iy)
      for (int64_t c0 = 0; c0 < g.c; c0 += 16) {
        const int cnt = static_cast<int>(std::min<int64_t>(16, g.c - c0));
        const __mmask16 m = static_cast<__mmask16>((1u << cnt) - 1);
        const uint8_t* src = x + c0 * plane + iy * g.w;
        uint8_t* dst = img + ((iy + g.pt) * p.Wp + g.pl) * p.C4 + c0;
        // Pixels whose dword stays inside the tensor for every channel of the block.
        int64_t safe = gatherable ? cols : 0;
        if (c0 + 16 >= g.c && iy == g.h - 1) safe = std::max<int64_t>(0, std::min(cols, g.w - 3));
        int64_t ix = 0;
        for (; ix < safe; ++ix) {
          const __m512i d = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, chanOff, src + ix, 1);
          _mm_mask_storeu_epi8(dst + ix * p.C4, m, _mm_xor_si128(_mm512_cvtepi32_epi8(d), flip16));
        }
        for (; ix < cols; ++ix)
          for (int c = 0; c < cnt; ++c) dst[ix * p.C4 + c] = static_cast<uint8_t>(src[c * plane + ix] ^ flip);
      }
  });
  std::vector<int64_t> tapOff(taps);
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx) tapOff[ky * g.kw + kx] = (ky * g.dh * p.Wp + kx * g.dw) * p.C4;
  const int64_t tiles = (P + kPX - 1) / kPX, blocks = lanesChannels(g) / kCB;
  const int64_t blockBytes = taps * p.C4 * kCB;
  // Items run block by block: a thread's consecutive tiles share the block's weights (in L2).
  parallelFor(pool, blocks * tiles, 1, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t blk = item / tiles, t0 = item % tiles * kPX;
      int64_t px[kPX], outIdx[kPX];
      const int npx = static_cast<int>(std::min<int64_t>(kPX, P - t0));
      for (int j = 0; j < kPX; ++j) {
        const int64_t q = t0 + std::min(j, npx - 1), oy = q / g.ow, ox = q % g.ow;
        px[j] = (oy * g.sh * p.Wp + ox * g.sw) * p.C4;
        outIdx[j] = q;
      }
      tile(g, p, w + blk * blockBytes, tapOff.data(), img, px, outIdx, npx, blk * kCB, rq, y);
    }
  });
}

}  // namespace qconv
}  // namespace mgrt

#else

namespace mgrt {
namespace qconv {
bool lanesApplies(const QGeom&) { return false; }
int64_t lanesChannels(const QGeom& g) { return g.m; }
void lanesPackWeights(const QGeom&, const Tensor&, int, std::vector<int8_t>*) {}
void lanesConv(const QGeom&, const int8_t*, const uint8_t*, uint8_t, uint8_t, const Requant&, uint8_t*, ThreadPool*) {}
}  // namespace qconv
}  // namespace mgrt

#endif
