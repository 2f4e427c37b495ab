// Depthwise integer convolution (QLinearConv with group == C == M: one input channel per output
// channel, weights [m, 1, kh, kw]), AVX-512. MobileNet's and EfficientNet's quantized blocks spend
// their depthwise layers here; f_qconv.cpp's kernels are ungrouped.
//
// The arithmetic is f_qconv.cpp's, byte for byte the reference kernel's: acc = bias[m] + sum over
// taps of (x - x_zp) * w[m, tap], then saturate(round_half_even(float(acc) * multiplier) + y_zp).
// The sums run in float32 FMAs, which here is exact integer arithmetic: the image is copied into
// stride-phase planes padded with the zero point (f_qconv.cpp's Grid and phaseSplit, bytes 0..255
// after the int8 shift), the weights are small integers (|w| <= 128 after the shift), so every
// product is an integer of magnitude at most 255 * 128 = 32640 and every partial sum of at most
// kMaxTaps taps stays below 2^24, where float32 holds each integer exactly, in any order of
// addition. The sum over the padded taps is then sum x w - x_zp * sum w; that correction and the
// bias are added in int32 (modulo 2^32, as the reference), after an exact conversion.
//
// Per channel (the channels spread over the pool's threads): the phase copy of the plane, then
// the output grid (Wq >= ow columns per row, the extra ones computed and not stored) as one flat
// run of pixels, 128 at a time in 8 independent FMA chains; each tap of a grid pixel is the byte
// at a fixed offset, so a block of 16 pixels is one 16-byte load widened to floats. The
// requantized bytes of a block row go to the output row by row.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "f_gemm.h"
#include "f_qconv.h"
#include "mg_threadpool.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define MG_QCONV_DW 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mgrt {
namespace qconv {

namespace {
// Taps whose sums float32 still holds exactly: 255 * 128 * kMaxTaps < 2^24.
constexpr int64_t kMaxTaps = 512;
}  // namespace

bool depthwiseApplies(const QGeom& g) {
#if defined(MG_QCONV_DW)
  return g.group == g.c && g.m == g.c && g.kh * g.kw <= kMaxTaps;
#else
  (void)g;
  return false;
#endif
}

#if defined(MG_QCONV_DW)

namespace {

constexpr int kNV = 8;  // 16-pixel vectors per block (independent FMA chains)

inline __m512 bytesToFloats(const uint8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// dst[0 .. n) = src[0 .. n) as floats, n a multiple of 16.
inline void widen(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) _mm512_storeu_ps(dst + i, bytesToFloats(src + i));
}

// Requantized bytes of NV vectors of sums (16 grid pixels each) to grid[0 .. 16 NV).
template <int NV>
inline void requantize(const __m512 (&acc)[NV], __m512i corr, __m512 mult, __m512 zp, __m512 lo, __m512 hi,
                       uint8_t* grid) {
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_cvtps_epi32(acc[v]), corr));
    __m512 t = _mm512_roundscale_ps(_mm512_mul_ps(f, mult), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, zp), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(grid + 16 * v), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)));
  }
}

// Grid pixels [q0, q0 + 16 NV) of one channel: split is its phase copy widened to floats, off[t]
// tap t's offset.
template <int NV>
inline void block(const float* split, const int64_t* off, const float* w, int64_t taps, int64_t q0,
                  const __m512i corr, __m512 mult, __m512 zp, __m512 lo, __m512 hi, uint8_t* grid) {
  __m512 acc[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < taps; ++t) {
    const __m512 wt = _mm512_set1_ps(w[t]);
    const float* p = split + off[t] + q0;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[v] = _mm512_fmadd_ps(_mm512_loadu_ps(p + 16 * v), wt, acc[v]);
  }
  requantize<NV>(acc, corr, mult, zp, lo, hi, grid + q0);
}

}  // namespace

void depthwiseConv(const QGeom& g, const float* wf, const uint8_t* x, uint8_t fill, uint8_t flip, const Requant& rq,
                   uint8_t* y, ThreadPool* pool) {
  QGeom one = g;  // one channel's geometry for the phase copy
  one.c = 1;
  const Grid q = gridOf(one);
  const int64_t taps = g.kh * g.kw, plane = g.h * g.w, P = g.oh * g.ow;
  const int64_t gridPixels = g.oh * q.Wq;
  std::vector<int64_t> off(static_cast<size_t>(taps));
  std::vector<uint8_t> used(static_cast<size_t>(q.S), 0);
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t ph = (ky * g.dh % g.sh) * g.sw + kx * g.dw % g.sw;
      used[ph] = 1;
      off[ky * g.kw + kx] = ph * q.planeQ + (ky * g.dh / g.sh) * q.Wq + kx * g.dw / g.sw;
    }
  // What the taps read: the grid rounded up to whole vectors (the tail block's extra sums are not
  // stored) past the farthest tap's offset, which can run past the copy's end (filled there).
  const int64_t farthest = *std::max_element(off.begin(), off.end());
  const int64_t readEnd = farthest + (gridPixels + 15) / 16 * 16;
  const int64_t splitBytes = (std::max(q.S * q.planeQ, readEnd) + 15) / 16 * 16, gridBytes = gridPixels + 16 * kNV;
  const __m512 zp = _mm512_set1_ps(rq.zp), lo = _mm512_set1_ps(rq.lo), hi = _mm512_set1_ps(rq.hi);
  const int64_t channels = g.n * g.c;
  // Small planes share tasks (up to 64 KB of input each), but every thread gets some.
  const int64_t threads = pool ? pool->threads() : 1;
  const int64_t grain = std::max<int64_t>(
      1, std::min((64 * 1024) / std::max<int64_t>(1, plane), (channels + 4 * threads - 1) / (4 * threads)));
  parallelFor(pool, channels, grain, [&](int64_t b, int64_t e) {
    static thread_local fast::Scratch splitS, wideS, gridS;
    auto* split = reinterpret_cast<uint8_t*>(splitS.get((splitBytes + 3) / 4));
    float* wide = wideS.get(splitBytes);
    auto* grid = reinterpret_cast<uint8_t*>(gridS.get((gridBytes + 3) / 4));
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t c = nc % g.c;
      phaseSplit(one, q, used.data(), x + nc * plane, fill, flip, split);
      std::memset(split + q.S * q.planeQ, fill, static_cast<size_t>(splitBytes - q.S * q.planeQ));
      widen(split, wide, splitBytes);  // each byte once, not once per tap
      const float* w = wf + c * taps;
      const __m512i corr = _mm512_set1_epi32(rq.corr[c]);
      const __m512 mult = _mm512_set1_ps(rq.mult[c]);
      int64_t q0 = 0;
      for (; q0 + 16 * kNV <= gridPixels; q0 += 16 * kNV)
        block<kNV>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid);
      switch ((gridPixels - q0 + 15) / 16) {
        case 0: break;
        case 1: block<1>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        case 2: block<2>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        case 3: block<3>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        case 4: block<4>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        case 5: block<5>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        case 6: block<6>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        case 7: block<7>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
        default: block<kNV>(wide, off.data(), w, taps, q0, corr, mult, zp, lo, hi, grid); break;
      }
      uint8_t* yc = y + nc * P;
      if (q.Wq == g.ow) {
        std::memcpy(yc, grid, static_cast<size_t>(P));
      } else {
        // Rows of a small plane are a few bytes: masked stores, not a library call per row.
        const int64_t full = g.ow / 64 * 64;
        const __mmask64 tail = g.ow % 64 ? (~__mmask64(0) >> (64 - g.ow % 64)) : 0;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const uint8_t* src = grid + oy * q.Wq;
          uint8_t* dst = yc + oy * g.ow;
          for (int64_t i = 0; i < full; i += 64) _mm512_storeu_si512(dst + i, _mm512_loadu_si512(src + i));
          if (tail) _mm512_mask_storeu_epi8(dst + full, tail, _mm512_maskz_loadu_epi8(tail, src + full));
        }
      }
    }
  });
}

#else

void depthwiseConv(const QGeom&, const float*, const uint8_t*, uint8_t, uint8_t, const Requant&, uint8_t*,
                   ThreadPool*) {}

#endif  // MG_QCONV_DW

}  // namespace qconv
}  // namespace mgrt
