// The 16-bit float conversions shared by the CPU reference kernels (runtime/cpu/
// k_elementwise_impl.h: Cast, float16/bfloat16 elementwise and reductions) and the GPU block
// programs (runtime/gpu/kernels/mg_kcommon.cuh: --precision fp16's half storage), so that both
// store exactly the same bits: round to nearest even, overflow to infinity, NaN stays NaN.
// Host and device code, like mg_acts.h and mg_quant.h.
#pragma once

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MG_F16_FN __host__ __device__ inline
#else
#define MG_F16_FN inline
#endif

namespace mgrt {
namespace f16 {

MG_F16_FN uint32_t floatBits(float v) {
  uint32_t f;
  memcpy(&f, &v, 4);
  return f;
}

MG_F16_FN float bitsFloat(uint32_t f) {
  float v;
  memcpy(&v, &f, 4);
  return v;
}

MG_F16_FN float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  uint32_t f;
  if (exp == 0) {
    if (man == 0) {
      f = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400u) == 0);
      f = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    f = sign | 0x7f800000u | man << 13;
  } else {
    f = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  return bitsFloat(f);
}

// Round to nearest even, overflow to infinity, NaN stays NaN.
MG_F16_FN uint16_t floatToHalf(float v) {
  const uint32_t f = floatBits(v);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t absf = f & 0x7fffffffu;
  if (absf >= 0x7f800000u) return static_cast<uint16_t>(sign | (absf > 0x7f800000u ? 0x7e00 : 0x7c00));
  if (absf >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to >= 65520: infinity
  if (absf < 0x38800000u) {  // below the smallest normal half: subnormal
    if (absf < 0x33000000u) return sign;  // < 2^-25 rounds to zero
    const uint32_t man = (absf & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(absf >> 23);  // 14 + (113 - exp)
    uint32_t half = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = (absf >> 13) - (112u << 10);
  const uint32_t rem = absf & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

MG_F16_FN float bf16ToFloat(uint16_t b) { return bitsFloat(static_cast<uint32_t>(b) << 16); }

MG_F16_FN uint16_t floatToBf16(float v) {
  const uint32_t f = floatBits(v);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40);  // NaN
  const uint32_t rounding = 0x7fffu + ((f >> 16) & 1);
  return static_cast<uint16_t>((f + rounding) >> 16);
}

}  // namespace f16
}  // namespace mgrt
