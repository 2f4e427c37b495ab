// Pieces shared by the block programs of runtime/gpu/kernels/: the epilogue activations, the
// block-wide tree reduction, index helpers. Not a kernel family of its own.
//
// Every block program follows mg_kparams.h's contract: threads with threadIdx.x >= the
// program's THREADS take no tile work but reach every __syncthreads, so helpers that contain a
// barrier (blockReduce) must be called by ALL threads of the block, idle ones included, the
// same number of times.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../mg_gpu.h"
#include "mg_kparams.h"

// In a generated package runtime/common's files sit beside runtime/kernels/; in the source tree
// they are runtime/common (the runtime_common layer).
#if __has_include("../mg_f16.h")
#include "../mg_f16.h"
#else
#include "../../common/mg_f16.h"
#endif

// Loop unrolling hints that every compiler of these sources understands: nvcc and hipcc (and
// clang as the emulation's host compiler) take `#pragma unroll`; GCC has its own spelling.
// Block programs (the xxxBlock entry points). On a GPU they inline into the launch's kernel. In
// the CPU emulation they stay out of line: a model has hundreds of launches that reuse a few
// instantiations, and inlining each into every kernel made one NASNet package take minutes to
// compile (2m48 -> see docs/GPU_EMULATION.md) for no gain.
#if defined(MG_GPU_EMULATE) || !(defined(__CUDACC__) || defined(__HIPCC__))
#define MGK_PROGRAM __attribute__((noinline))
#else
#define MGK_PROGRAM MG_DEVICE
#endif

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__clang__)
#define MGK_UNROLL _Pragma("unroll")
#define MGK_NO_UNROLL _Pragma("unroll 1")
#else
#define MGK_UNROLL _Pragma("GCC unroll 32")
#define MGK_NO_UNROLL _Pragma("GCC unroll 1")
#endif

// Multiply-adds are written a*b + c, not fmaf: nvcc and hipcc contract them into FMA anyway
// (-fmad / -ffp-contract=fast are their defaults), while on the emulation's host compiler fmaf is
// a libm call unless the build targets FMA hardware (half the time of an emulated GEMM).

namespace mgk {

// Blocks needed to cover `n` items with `per` items per block.
__host__ __device__ constexpr int64_t ceilDiv(int64_t n, int64_t per) {
  return n <= 0 ? 0 : (n + per - 1) / per;
}

__host__ __device__ constexpr bool isPow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// The two 16-bit floats as storage types (their bits), so that overloads and templates can tell
// them from uint16_t. The conversions are the CPU runtime's, bit for bit (one implementation:
// runtime/common/mg_f16.h): round to nearest even, overflow to infinity, NaN stays NaN.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

using mgrt::f16::bf16ToFloat;
using mgrt::f16::floatToBf16;
using mgrt::f16::floatToHalf;
using mgrt::f16::halfToFloat;

// ---- storage types -----------------------------------------------------------------------------
// Block programs that take a storage type S (float, or Half under --precision fp16) read every
// tensor they are given as S and compute in float: ldF converts one stored element to float,
// stF<S> rounds a float to S (round to nearest even). The parameter structs keep `float*` fields;
// a program instantiated with S = Half reinterprets them (asS) before any pointer arithmetic, so
// element offsets count S elements.
MG_DEVICE float ldF(float v) { return v; }
MG_DEVICE float ldF(Half h) { return halfToFloat(h.bits); }
template <typename S>
MG_DEVICE S stF(float v);
template <>
MG_DEVICE float stF<float>(float v) { return v; }
template <>
MG_DEVICE Half stF<Half>(float v) { return Half{floatToHalf(v)}; }
template <typename S>
MG_DEVICE const S* asS(const float* p) { return reinterpret_cast<const S*>(p); }
template <typename S>
MG_DEVICE S* asS(float* p) { return reinterpret_cast<S*>(p); }


// The epilogue activation of GEMM and convolution results (and of the Act functor of mg_map):
// the table's formulas (runtime/common/mg_acts.h), the same the CPU runtime's applyAct computes.
__device__ __forceinline__ float applyAct(int act, float x, float alpha, float beta) {
  return mgrt::acts::applyCode<float>(act, x, alpha, beta);
}

// Tree reduction of one float per thread over the first THREADS threads of the block; every
// thread of the block (idle ones too) must call it and gets the result. `red` holds THREADS
// floats of shared memory. Three kinds of barrier steps, all unconditional: publish, log2(THREADS)
// halvings, and a final one so that nobody overwrites red[0] (the next reduction) before every
// thread has read it. Warp shuffles would save barriers on a GPU, but the warp is 32 lanes on
// NVIDIA and 64 on gfx90a and the tree's cost is small next to the row or tile it closes.
template <int THREADS, typename Op>
MG_DEVICE float blockReduce(float v, float* red, Op op) {
  static_assert(isPow2(THREADS), "block reductions need a power-of-two thread count");
  const int t = int(threadIdx.x);
  if (t < THREADS) red[t] = v;
  __syncthreads();
  MGK_NO_UNROLL
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = op(red[t], red[t + s]);
    __syncthreads();
  }
  float r = red[0];
  __syncthreads();
  return r;
}

struct OpSumF {
  MG_DEVICE float operator()(float a, float b) const { return a + b; }
};
// NaN-propagating max (fmaxf would drop a NaN operand; ONNX reductions keep it, like numpy).
struct OpMaxF {
  MG_DEVICE float operator()(float a, float b) const { return (b > a || b != b) ? b : a; }
};

// Unravels the linear index `i` of a row-major space `dims[0..rank)` and returns
// sum_d coord_d * strides[d]. The outermost coordinate needs no modulo (i < product of dims).
__device__ __forceinline__ int64_t unravelOffset(int64_t i, int rank, const int64_t* dims,
                                       const int64_t* strides) {
  int64_t off = 0;
  MGK_UNROLL
  for (int d = kMaxRank - 1; d > 0; --d) {
    if (d < rank) {
      int64_t q = i / dims[d];
      off += (i - q * dims[d]) * strides[d];
      i = q;
    }
  }
  if (rank > 0) off += i * strides[0];
  return off;
}

}  // namespace mgk
