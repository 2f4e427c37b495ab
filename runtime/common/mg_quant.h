// Quantization arithmetic shared by the CPU reference kernels (runtime/cpu/k_quantize.cpp) and
// anything else that must compute exactly the same numbers: ONNX's rounding (half to even, not
// dependent on the floating-point environment's rounding mode) and saturation to the quantized
// type's range. Header-only, no dependency beyond <cmath>.
#pragma once

#include <cmath>
#include <cstdint>

namespace mgrt {
namespace quant {

// Rounds to the nearest integer, ties to the even one (2.5 -> 2, 3.5 -> 4, -2.5 -> -2). NaN and
// infinities come back unchanged. v - floor(v) is exact in float, so the tie test is exact.
inline float roundHalfEven(float v) {
  if (!std::isfinite(v)) return v;
  float f = std::floor(v);
  float d = v - f;
  if (d > 0.5f) return f + 1.f;
  if (d < 0.5f) return f;
  return std::fmod(f, 2.f) == 0.f ? f : f + 1.f;
}

// `r` (already rounded) plus the zero point, saturated to [lo, hi]. NaN becomes the zero point
// (the value that dequantizes to 0): ONNX leaves NaN to integer types unspecified.
inline int32_t saturateAdd(float r, int32_t zeroPoint, int32_t lo, int32_t hi) {
  if (std::isnan(r)) return zeroPoint;
  float v = r + static_cast<float>(zeroPoint);
  if (v <= static_cast<float>(lo)) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int32_t>(v);
}

// QuantizeLinear's formula: saturate(round_half_even(x / scale) + zero_point).
inline int32_t quantize(float x, float scale, int32_t zeroPoint, int32_t lo, int32_t hi) {
  return saturateAdd(roundHalfEven(x / scale), zeroPoint, lo, hi);
}

}  // namespace quant
}  // namespace mgrt
