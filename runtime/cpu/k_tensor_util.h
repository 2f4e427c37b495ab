// Element access shared by the tensor-family reference kernels (k_tensor*.cpp): byte-size copies for
// the dtype-agnostic data-movement kernels, and numeric reads/writes through double for the few
// kernels that compute (Resize, Einsum, Range, ...). Internal to the runtime.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "mg_runtime.h"

namespace mgrt {
namespace tensor_util {

// Splits a tensor around one axis: [outer, n, inner] (the reductions, Unique and Compress).
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
inline AxisSplit splitAt(const Tensor& t, int axis) {
  AxisSplit s;
  for (int d = 0; d < t.rank; ++d) {
    if (d < axis) s.outer *= t.dims[d];
    else if (d == axis) s.n = t.dims[d];
    else s.inner *= t.dims[d];
  }
  return s;
}

inline size_t elemSize(const Tensor& t) { return dtypeSize(t.dtype); }

// Copies element `si` of src to element `di` of dst (same dtype).
inline void copyElem(const Tensor& dst, int64_t di, const Tensor& src, int64_t si, size_t esz) {
  const char* s = static_cast<const char*>(src.data) + si * static_cast<int64_t>(esz);
  char* d = static_cast<char*>(dst.data) + di * static_cast<int64_t>(esz);
  switch (esz) {
    case 1: *d = *s; break;
    case 2: std::memcpy(d, s, 2); break;
    case 4: std::memcpy(d, s, 4); break;
    case 8: std::memcpy(d, s, 8); break;
    default: std::memcpy(d, s, esz); break;
  }
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) { man <<= 1; --exp; }
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  if (exp >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: right
  return static_cast<uint16_t>(half);
}

inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return 0x7fc0;
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

// Element i of any numeric tensor as double.
inline double readF(const Tensor& t, int64_t i) {
  const void* p = t.data;
  switch (t.dtype) {
    case kF32: return static_cast<const float*>(p)[i];
    case kF64: return static_cast<const double*>(p)[i];
    case kF16: return halfToFloat(static_cast<const uint16_t*>(p)[i]);
    case kBF16: return bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case kI8: return static_cast<const int8_t*>(p)[i];
    case kU8: return static_cast<const uint8_t*>(p)[i];
    case kBool: return static_cast<const uint8_t*>(p)[i] != 0;
    case kI16: return static_cast<const int16_t*>(p)[i];
    case kU16: return static_cast<const uint16_t*>(p)[i];
    case kI32: return static_cast<const int32_t*>(p)[i];
    case kU32: return static_cast<const uint32_t*>(p)[i];
    case kI64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case kU64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    default: return 0.0;
  }
}

// Element i of any integer (or bool) tensor as int64; floats are truncated.
inline int64_t readI(const Tensor& t, int64_t i) {
  const void* p = t.data;
  switch (t.dtype) {
    case kI64: return static_cast<const int64_t*>(p)[i];
    case kI32: return static_cast<const int32_t*>(p)[i];
    case kU64: return static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
    case kU32: return static_cast<const uint32_t*>(p)[i];
    case kI16: return static_cast<const int16_t*>(p)[i];
    case kU16: return static_cast<const uint16_t*>(p)[i];
    case kI8: return static_cast<const int8_t*>(p)[i];
    case kU8: case kBool: return static_cast<const uint8_t*>(p)[i];
    default: return static_cast<int64_t>(readF(t, i));
  }
}

// Stores v into element i, converting to the tensor's dtype (integers round to nearest).
inline void writeF(const Tensor& t, int64_t i, double v) {
  void* p = t.data;
  auto toInt = [](double x) { return std::isfinite(x) ? std::nearbyint(x) : 0.0; };
  switch (t.dtype) {
    case kF32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case kF64: static_cast<double*>(p)[i] = v; break;
    case kF16: static_cast<uint16_t*>(p)[i] = floatToHalf(static_cast<float>(v)); break;
    case kBF16: static_cast<uint16_t*>(p)[i] = floatToBf16(static_cast<float>(v)); break;
    case kBool: static_cast<uint8_t*>(p)[i] = v != 0.0; break;
    case kI8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(toInt(v)); break;
    case kU8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(toInt(v)); break;
    case kI16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(toInt(v)); break;
    case kU16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(toInt(v)); break;
    case kI32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(toInt(v)); break;
    case kU32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(toInt(v)); break;
    case kI64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(toInt(v)); break;
    case kU64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(toInt(v)); break;
    default: break;
  }
}

// Exact integer store (Range, OneHot on int64 would lose precision through double).
inline void writeI(const Tensor& t, int64_t i, int64_t v) {
  void* p = t.data;
  switch (t.dtype) {
    case kI64: static_cast<int64_t*>(p)[i] = v; break;
    case kU64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
    case kI32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case kU32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
    case kI16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
    case kU16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); break;
    case kI8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case kU8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case kBool: static_cast<uint8_t*>(p)[i] = v != 0; break;
    default: writeF(t, i, static_cast<double>(v)); break;
  }
}

inline bool isFloatType(int32_t d) { return d == kF32 || d == kF64 || d == kF16 || d == kBF16; }

// Coordinates of linear index `i` in dims (row major).
inline void unravel(int64_t i, const int64_t* dims, int rank, int64_t* idx) {
  for (int d = rank - 1; d >= 0; --d) {
    int64_t n = dims[d] > 0 ? dims[d] : 1;
    idx[d] = i % n;
    i /= n;
  }
}

// Normalizes a possibly negative axis (callers' shapes were checked by the compiler).
inline int normAxis(int64_t axis, int rank) {
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace tensor_util
}  // namespace mgrt

namespace mgrt {
// Kernels of the tensor family defined outside k_tensor.cpp; the one table lives in k_tensor.cpp.
#define MG_TENSOR_KERNEL(name) \
  int name(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx)
MG_TENSOR_KERNEL(kGather);           // k_tensor_index.cpp
MG_TENSOR_KERNEL(kGatherElements);
MG_TENSOR_KERNEL(kGatherND);
MG_TENSOR_KERNEL(kScatterND);
MG_TENSOR_KERNEL(kScatterElements);
MG_TENSOR_KERNEL(kOneHot);
MG_TENSOR_KERNEL(kReverseSequence);
MG_TENSOR_KERNEL(kNonZero);
MG_TENSOR_KERNEL(kResize);           // k_tensor_resize.cpp
MG_TENSOR_KERNEL(kEinsum);           // k_tensor_einsum.cpp
MG_TENSOR_KERNEL(kDet);              // k_tensor_det.cpp
}  // namespace mgrt
