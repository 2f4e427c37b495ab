// Private helpers of the elementwise and reduction reference kernels (k_elementwise*.cpp,
// k_reduction.cpp): dtype dispatch by type lists (templates, not if-ladders), float16/bfloat16
// storage types that compute in float, value conversion that never invokes undefined behaviour,
// and one numpy-style broadcasting iterator that every n-ary kernel uses.
//
// Not part of the runtime's interface: only kernel files include it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "mg_f16.h"
#include "mg_kernels.h"

namespace mgrt {
namespace ew {

// ---- 16-bit float storage types -------------------------------------------------------------

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// The conversions (round to nearest even, overflow to infinity, NaN stays NaN) are the GPU
// programs' too: runtime/common/mg_f16.h.
using f16::bf16ToFloat;
using f16::floatToBf16;
using f16::floatToHalf;
using f16::halfToFloat;

// What arithmetic on a stored type computes in: 16-bit floats compute in float.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<Half> { using type = float; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <typename T> using Compute = typename ComputeOf<T>::type;

template <typename T> inline Compute<T> load(T v) { return v; }
inline float load(Half v) { return halfToFloat(v.bits); }
inline float load(BFloat16 v) { return bf16ToFloat(v.bits); }

template <typename T> constexpr bool kIsFloatLike =
    std::is_floating_point<T>::value || std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;

// Converts any supported value to D without undefined behaviour: floats to integers truncate
// toward zero and saturate (NaN gives 0), anything to bool is "!= 0".
template <typename D, typename S>
inline D convert(S s) {
  if constexpr (std::is_same<D, Half>::value) {
    return Half{floatToHalf(static_cast<float>(load(s)))};
  } else if constexpr (std::is_same<D, BFloat16>::value) {
    return BFloat16{floatToBf16(static_cast<float>(load(s)))};
  } else if constexpr (std::is_same<S, Half>::value || std::is_same<S, BFloat16>::value) {
    return convert<D>(load(s));
  } else if constexpr (std::is_same<D, bool>::value) {
    return s != S(0);
  } else if constexpr (std::is_integral<D>::value && std::is_floating_point<S>::value) {
    if (std::isnan(s)) return D(0);
    // Bounds as long double so that 2^63 and 2^64 are exact.
    long double v = static_cast<long double>(s);
    if (v <= static_cast<long double>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (v >= static_cast<long double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(s);
  } else {
    return static_cast<D>(s);
  }
}

// Stores a computed value into storage type T.
template <typename T, typename C>
inline T store(C c) {
  return convert<T>(c);
}

// ---- dtype dispatch ----------------------------------------------------------------------------

template <typename T> struct Tag { using type = T; };
template <typename... Ts> struct TypeList {};

template <typename T> constexpr int32_t dtypeOf();
template <> constexpr int32_t dtypeOf<float>() { return kF32; }
template <> constexpr int32_t dtypeOf<double>() { return kF64; }
template <> constexpr int32_t dtypeOf<Half>() { return kF16; }
template <> constexpr int32_t dtypeOf<BFloat16>() { return kBF16; }
template <> constexpr int32_t dtypeOf<int8_t>() { return kI8; }
template <> constexpr int32_t dtypeOf<int16_t>() { return kI16; }
template <> constexpr int32_t dtypeOf<int32_t>() { return kI32; }
template <> constexpr int32_t dtypeOf<int64_t>() { return kI64; }
template <> constexpr int32_t dtypeOf<uint8_t>() { return kU8; }
template <> constexpr int32_t dtypeOf<uint16_t>() { return kU16; }
template <> constexpr int32_t dtypeOf<uint32_t>() { return kU32; }
template <> constexpr int32_t dtypeOf<uint64_t>() { return kU64; }
template <> constexpr int32_t dtypeOf<bool>() { return kBool; }

using FloatTypes = TypeList<float, double, Half, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using SignedTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t>;
using AllTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t, bool>;
using BoolTypes = TypeList<bool>;

const char* dtypeLabel(int32_t dt);

// Calls f(Tag<T>{}) for the T in the list whose dtype is dt; fails (ctx) when none matches.
template <typename... Ts, typename F>
int visitType(TypeList<Ts...>, int32_t dt, Ctx& ctx, const char* op, F&& f) {
  int rc = -1;
  bool found = ((dt == dtypeOf<Ts>() ? (rc = f(Tag<Ts>{}), true) : false) || ...);
  if (!found) return ctx.fail("%s: element type %s is not supported", op, dtypeLabel(dt));
  return rc;
}

// ---- operand checks --------------------------------------------------------------------------

// Fails unless exactly `count` leading operands are present (absent ones beyond are fine).
inline int needInputs(const Tensor* in, int nin, int count, const char* op, Ctx& ctx) {
  if (nin < count) return ctx.fail("%s: expected %d operands, got %d", op, count, nin);
  for (int i = 0; i < count; ++i)
    if (!in[i].present()) return ctx.fail("%s: operand %d is missing", op, i);
  return 0;
}
inline int needOutputs(int nout, int count, const char* op, Ctx& ctx) {
  if (nout < count) return ctx.fail("%s: expected %d results, got %d", op, count, nout);
  return 0;
}
inline bool sameShape(const Tensor& a, const Tensor& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i]) return false;
  return true;
}

// Reads an integer operand (any integer dtype) as int64s.
std::vector<int64_t> readInts(const Tensor& t);
bool isIntegerDType(int32_t dt);

// ---- broadcasting ------------------------------------------------------------------------------

constexpr int kMaxOperands = 4;

// Walks the output of a numpy-broadcast op in row-major order, giving each operand's element
// offset (stride 0 along broadcast dims). `ok()` is false, with a message in ctx, when an operand
// does not broadcast to the output shape (the compiler checked this; generated code may not have).
class Broadcaster {
 public:
  Broadcaster(const Tensor& out, const Tensor* const* ins, int n, const char* op, Ctx& ctx);
  bool ok() const { return ok_; }
  int64_t size() const { return size_; }

  // f(i, offsets): i is the output's linear index, offsets[k] the k-th operand's.
  template <typename F>
  void run(F&& f) const {
    int64_t offs[kMaxOperands] = {0, 0, 0, 0};
    if (size_ == 0) return;
    if (same_) {
      for (int64_t i = 0; i < size_; ++i) {
        for (int k = 0; k < n_; ++k) offs[k] = scalar_[k] ? 0 : i;
        f(i, offs);
      }
      return;
    }
    int64_t idx[kMaxRank] = {0};
    for (int64_t i = 0; i < size_; ++i) {
      f(i, offs);
      for (int d = rank_ - 1; d >= 0; --d) {
        for (int k = 0; k < n_; ++k) offs[k] += strides_[k][d];
        if (++idx[d] < dims_[d]) break;
        for (int k = 0; k < n_; ++k) offs[k] -= strides_[k][d] * dims_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  bool ok_ = true;
  bool same_ = true;  // every operand is either the output's shape or a single element
  bool scalar_[kMaxOperands] = {false, false, false, false};
  int n_ = 0;
  int rank_ = 0;
  int64_t size_ = 0;
  int64_t dims_[kMaxRank] = {0};
  int64_t strides_[kMaxOperands][kMaxRank] = {};
};

// The two halves of elementwiseKernels(): k_elementwise.cpp and k_elementwise_binary.cpp.
const KernelEntry* elementwiseMathKernels();
const KernelEntry* elementwiseActKernels();  // the activation table's ops
const KernelEntry* elementwiseBinaryKernels();

}  // namespace ew
}  // namespace mgrt
