// typed: element conversions and reductions on every ONNX numeric type, for the generated map
// functors of the ops the float32 families do not cover (codegen/gpu/lower_opset.cpp): casts to and
// from float16 / bfloat16, saturating float -> integer casts, the rounding store of Resize on
// integer tensors, and Reduce* on bool, integer and float64 tensors. Not a block program: these are
// device functions that a generated functor (mapBlock's F) calls.
//
// Every function has the CPU runtime's semantics, so that the CPU and the GPU packages of a model
// compute the same values:
//   halfToFloat / floatToHalf / bf16ToFloat / floatToBf16   runtime/cpu/k_elementwise_impl.h, bit
//                                                           for bit (round to nearest even)
//   convertTo<D>(s)        ew::convert: float -> integer truncates toward zero and saturates, NaN
//                          gives 0; anything -> bool is s != 0 (bool is stored as uint8_t here,
//                          so the bool case is convertTo<Bool>)
//   storeRounded<D>(v)     tensor_util::writeF: a double into D, integers rounded to nearest
//                          (nearbyint; non-finite gives 0), float16 / bfloat16 through float
//   reduceTyped<T, OP>     k_reduction.cpp's reducers: integer sums and products wrap, float sums
//                          accumulate in double, max/min of bool are any/all, L2, LogSum and
//                          LogSumExp compute in double, empty max/min give the type's lowest/highest
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include <string.h>

#include <type_traits>

#include "mg_kcommon.cuh"

// QuantizeLinear / DequantizeLinear's formulas, the CPU runtime's: in a generated package
// runtime/common's files sit beside runtime/kernels/; in the source tree they are runtime/common.
#if __has_include("../mg_quant.h")
#include "../mg_quant.h"
#else
#include "../../common/mg_quant.h"
#endif

namespace mgk {

// ONNX bool (one byte, 0 or 1) as a distinct type for convertTo (the two 16-bit floats, Half and
// BFloat16, and their conversions live in mg_kcommon.cuh: activations may be stored as half).
struct Bool {
  uint8_t v;
};

// ---- type traits (std::numeric_limits is host-only under nvcc) ---------------------------------
template <typename T>
struct TypeInfo;  // kInt: an integer type; lo, hi: its range
#define MGK_INT_INFO(T, LO, HI)                    \
  template <>                                      \
  struct TypeInfo<T> {                             \
    static constexpr bool kInt = true;             \
    static constexpr bool kSigned = (LO) < 0;      \
    static constexpr T lo = LO, hi = HI;           \
  };
MGK_INT_INFO(int8_t, -128, 127)
MGK_INT_INFO(uint8_t, 0, 255)
MGK_INT_INFO(int16_t, -32768, 32767)
MGK_INT_INFO(uint16_t, 0, 65535)
MGK_INT_INFO(int32_t, int32_t(-2147483647 - 1), 2147483647)
MGK_INT_INFO(uint32_t, 0u, 4294967295u)
MGK_INT_INFO(int64_t, int64_t(-9223372036854775807LL - 1), 9223372036854775807LL)
MGK_INT_INFO(uint64_t, 0ull, 18446744073709551615ull)
#undef MGK_INT_INFO
template <>
struct TypeInfo<float> {
  static constexpr bool kInt = false;
  static constexpr bool kSigned = true;
};
template <>
struct TypeInfo<double> {
  static constexpr bool kInt = false;
  static constexpr bool kSigned = true;
};

// What a stored value computes as: 16-bit floats as float, bool as 0/1.
MG_DEVICE float loadValue(Half h) { return halfToFloat(h.bits); }
MG_DEVICE float loadValue(BFloat16 b) { return bf16ToFloat(b.bits); }
MG_DEVICE uint8_t loadValue(Bool b) { return b.v != 0; }
template <typename T>
MG_DEVICE T loadValue(T v) {
  return v;
}

namespace detail {
template <typename D, typename S>
MG_DEVICE D convertArith(S s) {
  if constexpr (TypeInfo<D>::kInt && !TypeInfo<S>::kInt) {
    if (s != s) return D(0);
    // Every bound is exact in double except 2^63 - 1 and 2^64 - 1, which round up to 2^63 and
    // 2^64: the first value that does not fit, so the comparisons stay right (float and double
    // sources only).
    const double v = double(s);
    if (v <= double(TypeInfo<D>::lo)) return TypeInfo<D>::lo;
    if (v >= double(TypeInfo<D>::hi)) return TypeInfo<D>::hi;
    return static_cast<D>(s);
  } else {
    return static_cast<D>(s);
  }
}
}  // namespace detail

// D(s) with ew::convert's semantics; S and D are arithmetic types or Half, BFloat16, Bool.
template <typename D, typename S>
MG_DEVICE D convertTo(S s) {
  const auto c = loadValue(s);
  if constexpr (std::is_same<D, Half>::value) {
    return Half{floatToHalf(float(c))};
  } else if constexpr (std::is_same<D, BFloat16>::value) {
    return BFloat16{floatToBf16(float(c))};
  } else if constexpr (std::is_same<D, Bool>::value) {
    return Bool{uint8_t(c != decltype(c)(0) ? 1 : 0)};
  } else {
    return detail::convertArith<D>(c);
  }
}

// tensor_util::writeF: a double into D (integers round to nearest, non-finite gives 0).
template <typename D>
MG_DEVICE D storeRounded(double v) {
  if constexpr (std::is_same<D, Half>::value) {
    return Half{floatToHalf(float(v))};
  } else if constexpr (std::is_same<D, BFloat16>::value) {
    return BFloat16{floatToBf16(float(v))};
  } else if constexpr (std::is_same<D, Bool>::value) {
    return Bool{uint8_t(v != 0.0 ? 1 : 0)};
  } else if constexpr (TypeInfo<D>::kInt) {
    const double r = (v - v == 0.0) ? rint(v) : 0.0;  // v - v is NaN for inf and NaN
    return static_cast<D>(r);
  } else {
    return static_cast<D>(v);
  }
}

// ---- Reduce* on any type -------------------------------------------------------------------
// OP is a ReduceOp (mg_kparams.h). The group is x[sum_d r_d * strides[d]] over the row-major
// space dims[0..rank) (rank >= 1; redN its size), visited in row-major order as the CPU does.
// bool is reduced as uint8_t and the caller stores r != 0: max is then "any" and min "all" (an
// empty min gives 255, which is true, as the CPU's empty min of bools).
template <typename T, int OP>
MG_DEVICE T reduceTyped(const T* x, int rank, const int64_t* dims, const int64_t* strides,
                        int64_t redN) {
  constexpr bool kInt = TypeInfo<T>::kInt;
  // Integer sums wrap (through uint64), float sums accumulate in double.
  using Acc = typename std::conditional<kInt, T, double>::type;
  auto wrapAdd = [](Acc a, Acc b) -> Acc {
    if constexpr (kInt) return static_cast<Acc>(uint64_t(a) + uint64_t(b));
    else return a + b;
  };
  auto wrapMul = [](Acc a, Acc b) -> Acc {
    if constexpr (kInt) return static_cast<Acc>(uint64_t(a) * uint64_t(b));
    else return a * b;
  };
  auto at = [&](int64_t r) { return x[unravelOffset(r, rank, dims, strides)]; };
  if constexpr (OP == kRedMax || OP == kRedMin) {
    T m;
    if constexpr (kInt) m = OP == kRedMax ? TypeInfo<T>::lo : TypeInfo<T>::hi;
    else m = OP == kRedMax ? T(-INFINITY) : T(INFINITY);
    for (int64_t r = 0; r < redN; ++r) {
      const T v = at(r);
      if constexpr (!kInt)
        if (v != v) return v;
      if (OP == kRedMax ? v > m : v < m) m = v;
    }
    return m;
  } else if constexpr (OP == kRedL2 || OP == kRedLogSum || OP == kRedLogSumExp) {
    if constexpr (OP == kRedLogSumExp) {
      double m = -INFINITY;
      for (int64_t r = 0; r < redN; ++r) {
        const double v = double(at(r));
        m = m < v ? v : m;  // std::max(m, v): a NaN v never replaces m
      }
      if (m - m != 0.0 && m == m) return convertTo<T>(m);  // isinf(m) (empty group: -inf)
      double s = 0;
      for (int64_t r = 0; r < redN; ++r) s += exp(double(at(r)) - m);
      return convertTo<T>(log(s) + m);
    } else {
      double s = 0;
      for (int64_t r = 0; r < redN; ++r) {
        const double v = double(at(r));
        s += OP == kRedL2 ? v * v : v;
      }
      return convertTo<T>(OP == kRedL2 ? sqrt(s) : log(s));
    }
  } else {
    Acc s = OP == kRedProd ? Acc(1) : Acc(0);
    for (int64_t r = 0; r < redN; ++r) {
      Acc v = Acc(at(r));
      if constexpr (OP == kRedL1) {
        if constexpr (kInt && TypeInfo<T>::kSigned)
          v = v < Acc(0) ? static_cast<Acc>(uint64_t(0) - uint64_t(v)) : v;
        else if constexpr (!kInt)
          v = fabs(v);
      }
      if constexpr (OP == kRedSumSquare) v = wrapMul(v, v);
      s = OP == kRedProd ? wrapMul(s, v) : wrapAdd(s, v);
    }
    if constexpr (OP == kRedMean) {
      if constexpr (kInt && TypeInfo<T>::kSigned)
        return redN ? static_cast<T>(int64_t(s) / redN) : T(0);
      else if constexpr (kInt)
        return redN ? static_cast<T>(uint64_t(s) / uint64_t(redN)) : T(0);
      else
        return static_cast<T>(s / double(redN));
    }
    return static_cast<T>(s);
  }
}

}  // namespace mgk
