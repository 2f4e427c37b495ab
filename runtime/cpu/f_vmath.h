// Float32 math written so that GCC and Clang vectorize loops over it (-O3 with AVX2 / AVX-512):
// branch-free, no library calls, selects instead of ifs. Used by the fast elementwise kernels,
// where std::exp / std::tanh / std::erf calls keep a loop scalar (about 12x slower for exp).
//
// Accuracy against double-precision results (tests/unit/fast_rows_test.cpp checks these bounds on a
// dense sweep of each function's range):
//   vexp      relative error <= 2 ulp on [-87.3, 88.7]; 0 below (underflow), +inf above, NaN kept
//   vtanh     <= 3 ulp relative (odd polynomial below |x| 0.625, exp form above)
//   vsigmoid  <= 3 ulp relative for x >= -80, absolute error < 1e-37 below
//   verf      absolute error <= 2e-7 (series below |x| 0.5, Numerical Recipes' erfc above)
//   vgelu     0.5 x (1 + verf(x / sqrt 2))
// v16:: holds the same functions on 16 AVX-512 lanes, within the same bounds but sigmoid's
// (3.5 ulp: its reciprocal is rcp14 plus a Newton step); tests/unit/fast_rows_test.cpp checks both.
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

#if defined(__AVX512F__)
// The same functions on 16 lanes with AVX-512 intrinsics, same formulas and bounds as the scalar
// forms above. The scalar forms vectorize, but GCC gives them 8 lanes and a true division
// (vdivps: one result per cycle, the whole cost of a sigmoid); here 1 / d is rcp14 plus one
// Newton step (within 1 ulp) and 2^n is vscalefps. Measured on 1M floats (this Xeon, one core):
// sigmoid 0.60 -> 0.10 ns per float, tanh 1.10 -> 0.12, gelu 1.45 -> 0.18.
namespace v16 {

MG_VM_INLINE __m512 splat(float f) { return _mm512_set1_ps(f); }
// (The all-lanes maskz forms are the plain instructions; GCC 12 warns about the unmasked
// intrinsics' undefined pass-through operand, as in transpose16.) The second operand is returned
// when either is NaN.
MG_VM_INLINE __m512 vmax(__m512 a, __m512 b) { return _mm512_maskz_max_ps(0xFFFF, a, b); }
MG_VM_INLINE __m512 vmin(__m512 a, __m512 b) { return _mm512_maskz_min_ps(0xFFFF, a, b); }

// 1 / d: rcp14's 14 bits, one Newton step (e = 1 - d r, r + r e). Where the step is undefined
// (d = 0, +-inf, NaN: e is NaN) rcp14's own result stands (+-inf, 0, NaN), as 1 / d gives.
MG_VM_INLINE __m512 recip(__m512 d) {
  const __m512 r = _mm512_maskz_rcp14_ps(0xFFFF, d);
  const __m512 e = _mm512_fnmadd_ps(d, r, splat(1.f));
  return _mm512_mask_fmadd_ps(r, _mm512_cmp_ps_mask(e, e, _CMP_ORD_Q), e, r);
}

MG_VM_INLINE __m512 exp(__m512 x) {
  const __mmask16 over = _mm512_cmp_ps_mask(x, splat(88.7228391f), _CMP_GT_OQ);
  const __mmask16 under = _mm512_cmp_ps_mask(x, splat(-87.3365447f), _CMP_LT_OQ);
  // max / min return their second operand when either is NaN: NaN goes through.
  x = vmin(splat(88.7228391f), vmax(splat(-87.3365447f), x));
  const __m512 n = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(x, splat(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, splat(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, splat(-2.12194440e-4f), r);
  __m512 p = splat(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, splat(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, splat(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, splat(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, splat(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, splat(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, splat(1.f)));
  __m512 y = _mm512_maskz_scalef_ps(0xFFFF, p, n);  // p * 2^n, exact (n is an integer)
  y = _mm512_mask_blend_ps(over, y, splat(HUGE_VALF));
  return _mm512_mask_blend_ps(under, y, _mm512_setzero_ps());
}

MG_VM_INLINE __m512 abs(__m512 x) { return _mm512_abs_ps(x); }
// |m| with x's sign.
MG_VM_INLINE __m512 withSign(__m512 m, __m512 x) {
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_maskz_andnot_epi32(0xFFFF, sign, _mm512_castps_si512(m)),
                                             _mm512_and_si512(sign, _mm512_castps_si512(x))));
}

MG_VM_INLINE __m512 sigmoid(__m512 x) {
  const __m512 nx = _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  return recip(_mm512_add_ps(splat(1.f), exp(nx)));
}

MG_VM_INLINE __m512 tanh(__m512 x) {
  const __m512 a = abs(x), z = _mm512_mul_ps(x, x);
  __m512 p = splat(-5.70498872745e-3f);
  p = _mm512_fmadd_ps(p, z, splat(2.06390887954e-2f));
  p = _mm512_fmadd_ps(p, z, splat(-5.37397155531e-2f));
  p = _mm512_fmadd_ps(p, z, splat(1.33314422036e-1f));
  p = _mm512_fmadd_ps(p, z, splat(-3.33332819422e-1f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
  const __m512 e = exp(_mm512_mul_ps(splat(2.f), vmin(splat(20.f), a)));  // NaN stays NaN
  const __m512 big = withSign(_mm512_fnmadd_ps(splat(2.f), recip(_mm512_add_ps(e, splat(1.f))), splat(1.f)), x);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, splat(0.625f), _CMP_LT_OQ), big, small);
}

MG_VM_INLINE __m512 erf(__m512 x) {
  const __m512 a = abs(x), z = _mm512_mul_ps(x, x);
  __m512 s = splat(-1.f / 75600.f);
  s = _mm512_fmadd_ps(s, z, splat(1.f / 9360.f));
  s = _mm512_fmadd_ps(s, z, splat(-1.f / 1320.f));
  s = _mm512_fmadd_ps(s, z, splat(1.f / 216.f));
  s = _mm512_fmadd_ps(s, z, splat(-1.f / 42.f));
  s = _mm512_fmadd_ps(s, z, splat(1.f / 10.f));
  s = _mm512_fmadd_ps(s, z, splat(-1.f / 3.f));
  s = _mm512_fmadd_ps(s, z, splat(1.f));
  const __m512 small = _mm512_mul_ps(_mm512_mul_ps(splat(1.12837916709551257f), x), s);
  const __m512 t = recip(_mm512_fmadd_ps(splat(0.5f), a, splat(1.f)));
  __m512 q = splat(0.17087277f);
  q = _mm512_fmadd_ps(q, t, splat(-0.82215223f));
  q = _mm512_fmadd_ps(q, t, splat(1.48851587f));
  q = _mm512_fmadd_ps(q, t, splat(-1.13520398f));
  q = _mm512_fmadd_ps(q, t, splat(0.27886807f));
  q = _mm512_fmadd_ps(q, t, splat(-0.18628806f));
  q = _mm512_fmadd_ps(q, t, splat(0.09678418f));
  q = _mm512_fmadd_ps(q, t, splat(0.37409196f));
  q = _mm512_fmadd_ps(q, t, splat(1.00002368f));
  q = _mm512_fmadd_ps(q, t, splat(-1.26551223f));
  const __m512 aa = vmin(splat(10.f), a);
  const __m512 erfc = _mm512_mul_ps(t, exp(_mm512_fnmadd_ps(aa, aa, q)));
  const __m512 big = withSign(_mm512_sub_ps(splat(1.f), erfc), x);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, splat(0.5f), _CMP_LT_OQ), big, small);
}

MG_VM_INLINE __m512 gelu(__m512 x) {
  const __m512 h = _mm512_mul_ps(splat(0.5f), x);
  return _mm512_fmadd_ps(h, erf(_mm512_mul_ps(x, splat(0.70710678118654752f))), h);
}

// x = act(x) on 16 lanes; false (x unchanged) for Selu and Softplus, left to applyAct.
MG_VM_INLINE bool act(const Epilogue& ep, __m512& x) {
  const __m512 zero = _mm512_setzero_ps();
  switch (ep.act) {
    case Act::kNone: return true;
    case Act::kRelu: x = vmax(x, zero); return true;
    case Act::kLeakyRelu:
      x = _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, splat(ep.alpha));
      return true;
    case Act::kClip: x = vmin(vmax(x, splat(ep.alpha)), splat(ep.beta)); return true;
    case Act::kSigmoid: x = sigmoid(x); return true;
    case Act::kTanh: x = tanh(x); return true;
    case Act::kHardSigmoid:
      x = vmin(vmax(_mm512_fmadd_ps(splat(ep.alpha), x, splat(ep.beta)), zero), splat(1.f));
      return true;
    case Act::kHardSwish:
      x = _mm512_mul_ps(x, vmin(vmax(_mm512_fmadd_ps(x, splat(1.f / 6.f), splat(0.5f)), zero),
                                         splat(1.f)));
      return true;
    case Act::kElu: {
      const __m512 e = _mm512_mul_ps(splat(ep.alpha), _mm512_sub_ps(exp(x), splat(1.f)));
      x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, e);
      return true;
    }
    case Act::kGelu: x = gelu(x); return true;
    case Act::kSwish: x = _mm512_mul_ps(x, sigmoid(x)); return true;
    default: return false;
  }
}

// o[0..n) = f(x[0..n)) 16 lanes at a time, the tail under a mask; o may be x.
template <typename F>
MG_VM_INLINE void map(const float* x, float* o, int64_t n, F f) {
  int64_t e = 0;
  for (; e + 16 <= n; e += 16) _mm512_storeu_ps(o + e, f(_mm512_loadu_ps(x + e)));
  if (e < n) {
    const __mmask16 m = tailMask(n - e);
    _mm512_mask_storeu_ps(o + e, m, f(_mm512_maskz_loadu_ps(m, x + e)));
  }
}

// o[0..n) = act K (x[0..n)) with ep's alpha and beta; K is a constant, so act's switch folds.
template <Act K>
MG_VM_INLINE void mapAct(const Epilogue& ep, const float* x, float* o, int64_t n) {
  Epilogue k = ep;
  k.act = K;
  map(x, o, n, [k](__m512 v) __attribute__((always_inline)) {
    act(k, v);
    return v;
  });
}

}  // namespace v16
#endif

// The activations a vector write-back applies itself, on a GCC vector V: with AVX-512 and 16
// lanes all but Selu and Softplus (v16::act), otherwise None, Relu, LeakyRelu and Clip. The
// others leave x as it is (false) for actRow on the stored values.
template <typename V>
MG_VM_INLINE bool vecAct(const Epilogue& ep, V& x) {
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    __m512 t = reinterpret_cast<__m512&>(x);
    if (!v16::act(ep, t)) return false;
    x = reinterpret_cast<V&>(t);
    return true;
  }
#endif
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
#if defined(__AVX512F__)
  // A local copy: the stores to o could alias ep, which would reload it and switch per vector.
  // The activation is chosen once per row, not per vector: v16::act on a constant kind folds to
  // its formula and the loop keeps it in registers (a switch per vector left the lambda out of
  // line, 13% of EfficientNet-B0's time in its SiLU epilogues).
  const Epilogue le = ep;
  switch (le.act) {
    case Act::kNone: break;
    case Act::kRelu: return v16::mapAct<Act::kRelu>(le, x, o, n);
    case Act::kLeakyRelu: return v16::mapAct<Act::kLeakyRelu>(le, x, o, n);
    case Act::kClip: return v16::mapAct<Act::kClip>(le, x, o, n);
    case Act::kSigmoid: return v16::mapAct<Act::kSigmoid>(le, x, o, n);
    case Act::kTanh: return v16::mapAct<Act::kTanh>(le, x, o, n);
    case Act::kHardSigmoid: return v16::mapAct<Act::kHardSigmoid>(le, x, o, n);
    case Act::kHardSwish: return v16::mapAct<Act::kHardSwish>(le, x, o, n);
    case Act::kElu: return v16::mapAct<Act::kElu>(le, x, o, n);
    case Act::kGelu: return v16::mapAct<Act::kGelu>(le, x, o, n);
    case Act::kSwish: return v16::mapAct<Act::kSwish>(le, x, o, n);
    default: break;
  }
#endif
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
