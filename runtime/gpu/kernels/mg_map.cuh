// map: one output element per (thread, item), any rank <= kMaxRank, any strides (mg_kparams.h,
// MapParams), with a functor F that reads its inputs and writes the output element.
//
//   mapBlock<F, ITEMS, THREADS>(p, block, smem[, f])
//     block b covers outputs [b*ITEMS*THREADS, (b+1)*ITEMS*THREADS); thread t handles
//     b*ITEMS*THREADS + i*THREADS + t for i < ITEMS, so that a warp's accesses are consecutive
//     whenever the innermost stride is 1. ITEMS is 1, 4 or 16 and THREADS 256 in the cost model's
//     memory tiles (src/target/cost_model.cpp, kMemoryItems); any THREADS >= 1 works.
//   No barrier and no shared memory: a map can run under mgLaunchNoSync, and its idle threads
//   (threadIdx.x >= THREADS in a joint kernel) simply return.
//
// The optional last argument is the functor object, for functors with parameters
// (Unary<OpAct>{{kActLeakyRelu, 0.1f}}); it defaults to F{} so that a generated functor with default
// member initializers needs no argument.
//
// Ready functors (float32 arithmetic; copies of any 1/2/4/8-byte element):
//   Copy<T> / CopyBytes<N>                      out = in0
//   Unary<Op>    Op in OpExp ... OpAct          out = op(in0)               (float -> float;
//                OpAct{act, alpha, beta}: any activation of runtime/common/mg_acts.h)
//   Binary<Op>   Op in OpAdd ... OpPRelu        out = op(in0, in1)          (broadcast by strides)
//   Compare<Op>  OpEqual, OpLess, ...           out = op(in0, in1)          (float -> bool)
//   Where<T>                                    out = in0 ? in1 : in2       (bool, T, T -> T)
//   Cast<From, To>                              out = To(in0)
//   BatchNormInference{epsilon}                 (x - mean) / sqrt(var + eps) * scale + bias
//   ActF{act, alpha, beta}                      the epilogue activation of mg_kcommon.cuh
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

template <typename F, int ITEMS, int THREADS>
__host__ __device__ int64_t mapBlocks(const MapParams& p) {
  return ceilDiv(p.n, int64_t(ITEMS) * THREADS);
}

template <typename F, int ITEMS, int THREADS>
__host__ __device__ constexpr int mapSmemBytes() {
  return 0;
}

template <typename F, int ITEMS, int THREADS>
MGK_PROGRAM void mapBlock(const MapParams& p, int64_t block, char* smem, const F& f = F()) {
  static_assert(ITEMS == 1 || ITEMS == 4 || ITEMS == 16, "map tiles have 1, 4 or 16 items");
  static_assert(THREADS >= 1, "a map needs threads");
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier below: idle threads may leave
  const int64_t first = block * (int64_t(ITEMS) * THREADS) + t;
  const int rank = p.rank, nin = p.nin;
  MGK_UNROLL
  for (int i = 0; i < ITEMS; ++i) {
    const int64_t o = first + int64_t(i) * THREADS;
    if (o >= p.n) return;
    int64_t idx[kMaxMapInputs];
    MGK_UNROLL
    for (int k = 0; k < kMaxMapInputs; ++k) idx[k] = k < nin ? p.inOffset[k] : 0;
    int64_t outIdx = p.outOffset, rem = o;
    MGK_UNROLL
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d < rank) {
        const int64_t q = rem / p.dims[d], c = rem - q * p.dims[d];
        rem = q;
        outIdx += c * p.outStrides[d];
        MGK_UNROLL
        for (int k = 0; k < kMaxMapInputs; ++k)
          if (k < nin) idx[k] += c * p.inStrides[k][d];
      }
    }
    f(p.in, idx, p.out, outIdx);
  }
}

// ---- Copies --------------------------------------------------------------------------------
template <typename T>
struct Copy {
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    static_cast<T*>(out)[o] = static_cast<const T*>(in[0])[idx[0]];
  }
};
template <int BYTES>
struct CopyElem;
template <>
struct CopyElem<1> {
  using Type = uint8_t;
};
template <>
struct CopyElem<2> {
  using Type = uint16_t;
};
template <>
struct CopyElem<4> {
  using Type = uint32_t;
};
template <>
struct CopyElem<8> {
  using Type = unsigned long long;
};
// Copies elements of BYTES bytes (1, 2, 4 or 8), whatever their type.
template <int BYTES>
using CopyBytes = Copy<typename CopyElem<BYTES>::Type>;

// ---- Float functors ------------------------------------------------------------------------
template <typename Op>
struct Unary {
  Op op;
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    static_cast<float*>(out)[o] = op(static_cast<const float*>(in[0])[idx[0]]);
  }
};
template <typename Op>
struct Binary {
  Op op;
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    static_cast<float*>(out)[o] =
        op(static_cast<const float*>(in[0])[idx[0]], static_cast<const float*>(in[1])[idx[1]]);
  }
};
// Comparisons write ONNX bools (one byte, 0 or 1).
template <typename Op>
struct Compare {
  Op op;
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    static_cast<uint8_t*>(out)[o] = op(static_cast<const float*>(in[0])[idx[0]],
                                       static_cast<const float*>(in[1])[idx[1]])
                                        ? 1
                                        : 0;
  }
};

// Unary operations. Same formulas as the CPU runtime where it has them.
struct OpIdentity {
  MG_DEVICE float operator()(float x) const { return x; }
};
struct OpExp {
  MG_DEVICE float operator()(float x) const { return expf(x); }
};
struct OpLog {
  MG_DEVICE float operator()(float x) const { return logf(x); }
};
struct OpSqrt {
  MG_DEVICE float operator()(float x) const { return sqrtf(x); }
};
struct OpReciprocal {
  MG_DEVICE float operator()(float x) const { return 1.f / x; }
};
struct OpNeg {
  MG_DEVICE float operator()(float x) const { return -x; }
};
struct OpAbs {
  MG_DEVICE float operator()(float x) const { return fabsf(x); }
};
struct OpFloor {
  MG_DEVICE float operator()(float x) const { return floorf(x); }
};
struct OpCeil {
  MG_DEVICE float operator()(float x) const { return ceilf(x); }
};
struct OpRound {  // ONNX Round: halves to even
  MG_DEVICE float operator()(float x) const { return rintf(x); }
};
struct OpSign {
  MG_DEVICE float operator()(float x) const { return x > 0.f ? 1.f : (x < 0.f ? -1.f : x); }
};
struct OpSin {
  MG_DEVICE float operator()(float x) const { return sinf(x); }
};
struct OpCos {
  MG_DEVICE float operator()(float x) const { return cosf(x); }
};
struct OpErf {
  MG_DEVICE float operator()(float x) const { return erff(x); }
};

// The activations of the table (runtime/common/mg_acts.h): act is its code (kAct<Id>), alpha
// and beta its parameters, e.g. Unary<OpAct>{{kActLeakyRelu, 0.1f}}.
struct OpAct {
  int32_t act = kActNone;
  float alpha = 0.f, beta = 0.f;
  MG_DEVICE float operator()(float x) const { return applyAct(act, x, alpha, beta); }
};

// Binary operations; broadcasting is the strides' business (0 on broadcast dims).
struct OpAdd {
  MG_DEVICE float operator()(float a, float b) const { return a + b; }
};
struct OpSub {
  MG_DEVICE float operator()(float a, float b) const { return a - b; }
};
struct OpMul {
  MG_DEVICE float operator()(float a, float b) const { return a * b; }
};
struct OpDiv {
  MG_DEVICE float operator()(float a, float b) const { return a / b; }
};
struct OpPow {
  MG_DEVICE float operator()(float a, float b) const { return powf(a, b); }
};
struct OpMax {  // NaN-propagating, as ONNX Max
  MG_DEVICE float operator()(float a, float b) const { return (b > a || b != b) ? b : a; }
};
struct OpMin {
  MG_DEVICE float operator()(float a, float b) const { return (b < a || b != b) ? b : a; }
};
struct OpFmod {  // Mod with fmod = 1 (sign of the dividend)
  MG_DEVICE float operator()(float a, float b) const { return fmodf(a, b); }
};
struct OpPRelu {  // PRelu(x, slope)
  MG_DEVICE float operator()(float x, float slope) const { return x >= 0.f ? x : x * slope; }
};
struct OpEqual {
  MG_DEVICE bool operator()(float a, float b) const { return a == b; }
};
struct OpLess {
  MG_DEVICE bool operator()(float a, float b) const { return a < b; }
};
struct OpLessOrEqual {
  MG_DEVICE bool operator()(float a, float b) const { return a <= b; }
};
struct OpGreater {
  MG_DEVICE bool operator()(float a, float b) const { return a > b; }
};
struct OpGreaterOrEqual {
  MG_DEVICE bool operator()(float a, float b) const { return a >= b; }
};

// Where(cond, x, y) on elements of type T (the condition is an ONNX bool: one byte).
template <typename T>
struct Where {
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    const bool c = static_cast<const uint8_t*>(in[0])[idx[0]] != 0;
    static_cast<T*>(out)[o] = c ? static_cast<const T*>(in[1])[idx[1]]
                                : static_cast<const T*>(in[2])[idx[2]];
  }
};

template <typename From, typename To>
struct Cast {
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    static_cast<To*>(out)[o] = static_cast<To>(static_cast<const From*>(in[0])[idx[0]]);
  }
};

// BatchNormalization in inference mode: inputs x, scale, bias, mean, var (the last four with
// stride 1 on the channel dimension and 0 elsewhere).
struct BatchNormInference {
  float epsilon = 1e-5f;
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    const float x = static_cast<const float*>(in[0])[idx[0]];
    const float scale = static_cast<const float*>(in[1])[idx[1]];
    const float bias = static_cast<const float*>(in[2])[idx[2]];
    const float mean = static_cast<const float*>(in[3])[idx[3]];
    const float var = static_cast<const float*>(in[4])[idx[4]];
    static_cast<float*>(out)[o] = (x - mean) / sqrtf(var + epsilon) * scale + bias;
  }
};

// The epilogue activation as a unary map (an activation the generator could not fuse).
struct ActF {
  int32_t act = kActNone;
  float alpha = 0.f, beta = 0.f;
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out,
                            int64_t o) const {
    static_cast<float*>(out)[o] =
        applyAct(act, static_cast<const float*>(in[0])[idx[0]], alpha, beta);
  }
};

}  // namespace mgk
