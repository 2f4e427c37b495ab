// Float32 math written so that GCC and Clang vectorize loops over it (-O3 with AVX2 / AVX-512):
// branch-free, no library calls, selects instead of ifs. Used by the fast elementwise kernels,
// where std::exp / std::tanh / std::erf calls keep a loop scalar (about 12x slower for exp).
//
// Accuracy against double-precision results (tests/unit/vmath_test.cpp checks these bounds on a
// dense sweep of each function's range):
//   vexp      relative error <= 2 ulp on [-87.3, 88.7]; 0 below (underflow), +inf above, NaN kept
//   vtanh     <= 3 ulp relative (odd polynomial below |x| 0.625, exp form above)
//   vsigmoid  <= 3 ulp relative for x >= -80, absolute error < 1e-37 below
//   verf      absolute error <= 2e-7 (series below |x| 0.5, Numerical Recipes' erfc above)
//   vgelu     0.5 x (1 + verf(x / sqrt 2))
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cmath>
#include <cstdint>
#include <cstring>

#include "mg_kernels.h"

namespace mgrt {
namespace vm {

// Forced inline: a call left in a loop (GCC kept vexp out of line inside verf) makes the whole
// loop scalar, 2-3x slower.
#define MG_VM_INLINE inline __attribute__((always_inline))

MG_VM_INLINE float bitsToFloat(int32_t i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

// e^x by range reduction x = n ln2 + r (|r| <= ln2 / 2, ln2 split in two for exactness), a
// degree-6 polynomial for e^r, and 2^n built in the exponent bits. Cephes expf's coefficients.
MG_VM_INLINE float vexp(float x) {
  const bool over = x > 88.7228391f, under = x < -87.3365447f;
  x = under ? -87.3365447f : (over ? 88.7228391f : x);
  const float n = std::nearbyint(x * 1.44269504088896341f);
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  // 2^n as 2^h 2^(n-h): n reaches 128 near the top of the range, past the largest exponent.
  // A NaN x gives a NaN n, whose conversion to int is undefined: any n will do, p is NaN.
  const int32_t ni = static_cast<int32_t>(n == n ? n : 0.f), h = ni >> 1;
  const float y = p * bitsToFloat((h + 127) << 23) * bitsToFloat((ni - h + 127) << 23);
  return over ? HUGE_VALF : (under ? 0.f : y);
}

// tanh: Cephes tanhf's odd polynomial for |x| < 0.625 (no cancellation near 0), else
// sign(x) (1 - 2 / (e^{2|x|} + 1)); exactly +-1 beyond |x| 10.
MG_VM_INLINE float vtanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float e = vexp(2.f * (a > 20.f ? 20.f : a));  // NaN stays NaN
  float big = 1.f - 2.f / (e + 1.f);
  big = x < 0.f ? -big : big;
  return a < 0.625f ? small : big;
}

MG_VM_INLINE float vsigmoid(float x) { return 1.f / (1.f + vexp(-x)); }

// erf: its Maclaurin series to x^13 for |x| < 0.5 (relative error < 1e-7 there), else
// 1 - erfc(|x|) with Numerical Recipes' erfc (fractional error < 1.2e-7), sign restored.
MG_VM_INLINE float verf(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float s = -1.f / 75600.f;
  s = s * z + 1.f / 9360.f;
  s = s * z - 1.f / 1320.f;
  s = s * z + 1.f / 216.f;
  s = s * z - 1.f / 42.f;
  s = s * z + 1.f / 10.f;
  s = s * z - 1.f / 3.f;
  s = s * z + 1.f;
  const float small = 1.12837916709551257f * x * s;
  const float t = 1.f / (1.f + 0.5f * a);
  float q = 0.17087277f;
  q = q * t - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  q = q * t - 1.26551223f;
  const float aa = a > 10.f ? 10.f : a;
  const float erfc = t * vexp(q - aa * aa);
  float big = 1.f - erfc;
  big = x < 0.f ? -big : big;
  return a < 0.5f ? small : big;
}

MG_VM_INLINE float vgelu(float x) { return 0.5f * x * (1.f + verf(x * 0.70710678118654752f)); }

#if defined(__AVX512F__)
// The AVX-512 mask of the first min(n, 16) lanes (0 when n <= 0): the valid part of the vector
// that starts n elements before the end of a row.
inline __mmask16 tailMask(int64_t n) {
  return n <= 0 ? __mmask16(0) : static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
}
// The mask of lanes [lo, hi) (clipped to [0, 16); 0 when empty).
inline __mmask16 rangeMask(int64_t lo, int64_t hi) {
  return static_cast<__mmask16>(tailMask(hi) & ~tailMask(lo));
}
// Lane l's offset l * s: a gather's indices for elements s apart.
inline __m512i strideLanes(int64_t s) {
  return _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int>(s)),
                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
// r[i] (row i of a 16x16 block) becomes column i. (The all-lanes maskz forms are the plain
// instructions; GCC 12 warns about the unmasked intrinsics' undefined pass-through operand.)
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(0xFFFF, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, b, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, b, d));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[i + 8], 0xdd);
  }
}
#endif

// The activations a vector write-back applies itself (None, Relu, LeakyRelu, Clip; true), on a
// GCC vector V; the others leave x as it is (false) for actRow on the stored values.
template <typename V>
MG_VM_INLINE bool vecAct(const Epilogue& ep, V& x) {
  const V zero = V{};
  switch (ep.act) {
    case Act::kNone: return true;
    case Act::kRelu: x = x > zero ? x : zero; return true;
    case Act::kLeakyRelu: x = x >= zero ? x : x * ep.alpha; return true;
    case Act::kClip: {
      const V lo = zero + ep.alpha, hi = zero + ep.beta;
      x = x < lo ? lo : x;
      x = x > hi ? hi : x;
      return true;
    }
    default: return false;
  }
}

// o[0..n) = act(x[0..n)) for an epilogue activation (mg_kernels.h's applyAct, same formulas),
// one vectorizable loop per activation; o may be x. Selu and Softplus keep applyAct's library
// calls (no vector form here).
inline void actRow(const Epilogue& ep, const float* x, float* o, int64_t n) {
  const float al = ep.alpha, be = ep.beta;
  switch (ep.act) {
    case Act::kNone:
      if (o != x) std::memmove(o, x, sizeof(float) * static_cast<size_t>(n));
      return;
    case Act::kRelu: for (int64_t e = 0; e < n; ++e) o[e] = x[e] > 0.f ? x[e] : 0.f; return;
    case Act::kLeakyRelu: for (int64_t e = 0; e < n; ++e) o[e] = x[e] >= 0.f ? x[e] : x[e] * al; return;
    case Act::kSigmoid: for (int64_t e = 0; e < n; ++e) o[e] = vsigmoid(x[e]); return;
    case Act::kTanh: for (int64_t e = 0; e < n; ++e) o[e] = vtanh(x[e]); return;
    case Act::kClip: for (int64_t e = 0; e < n; ++e) o[e] = x[e] < al ? al : (x[e] > be ? be : x[e]); return;
    case Act::kHardSigmoid:
      for (int64_t e = 0; e < n; ++e) {
        float v = al * x[e] + be;
        o[e] = v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
      }
      return;
    case Act::kHardSwish:
      for (int64_t e = 0; e < n; ++e) {
        float v = x[e] / 6.f + 0.5f;
        v = v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
        o[e] = x[e] * v;
      }
      return;
    case Act::kElu: for (int64_t e = 0; e < n; ++e) o[e] = x[e] >= 0.f ? x[e] : al * (vexp(x[e]) - 1.f); return;
    case Act::kGelu: for (int64_t e = 0; e < n; ++e) o[e] = vgelu(x[e]); return;
    case Act::kSwish: for (int64_t e = 0; e < n; ++e) o[e] = x[e] * vsigmoid(x[e]); return;
    default: for (int64_t e = 0; e < n; ++e) o[e] = applyAct(ep, x[e]); return;
  }
}

}  // namespace vm
}  // namespace mgrt
