// Quantization arithmetic shared by the CPU reference kernels (runtime/cpu/k_quantize.cpp) and
// the GPU targets' QuantizeLinear/DequantizeLinear functors (codegen/gpu/lower_opset.cpp), so
// that both compute exactly the same numbers: ONNX's rounding (half to even, not dependent on
// the floating-point environment's rounding mode) and saturation to the quantized type's range.
// Host and device code (C math functions only), like mg_acts.h.
#pragma once

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MG_QUANT_FN __host__ __device__ inline
#else
#define MG_QUANT_FN inline
#endif

namespace mgrt {
namespace quant {

// Rounds to the nearest integer, ties to the even one (2.5 -> 2, 3.5 -> 4, -2.5 -> -2). NaN and
// infinities come back unchanged. v - floor(v) is exact in float, so the tie test is exact.
MG_QUANT_FN float roundHalfEven(float v) {
  if (v != v || v - v != 0.f) return v;  // NaN, +-inf
  float f = floorf(v);
  float d = v - f;
  if (d > 0.5f) return f + 1.f;
  if (d < 0.5f) return f;
  return fmodf(f, 2.f) == 0.f ? f : f + 1.f;
}

// `r` (already rounded) plus the zero point, saturated to [lo, hi]. NaN becomes the zero point
// (the value that dequantizes to 0): ONNX leaves NaN to integer types unspecified.
MG_QUANT_FN int32_t saturateAdd(float r, int32_t zeroPoint, int32_t lo, int32_t hi) {
  if (r != r) return zeroPoint;
  float v = r + static_cast<float>(zeroPoint);
  if (v <= static_cast<float>(lo)) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int32_t>(v);
}

// QuantizeLinear's formula: saturate(round_half_even(x / scale) + zero_point).
MG_QUANT_FN int32_t quantize(float x, float scale, int32_t zeroPoint, int32_t lo, int32_t hi) {
  return saturateAdd(roundHalfEven(x / scale), zeroPoint, lo, hi);
}

// DequantizeLinear's formula: (x - zero_point) * scale, the difference exact in int64.
MG_QUANT_FN float dequantize(int32_t x, int32_t zeroPoint, float scale) {
  return static_cast<float>(static_cast<int64_t>(x) - zeroPoint) * scale;
}

}  // namespace quant
}  // namespace mgrt
