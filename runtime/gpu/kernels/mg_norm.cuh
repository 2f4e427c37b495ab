// norm: GroupNormalization (opset 18: scale and bias per group; opset 21: per channel) as a block
// program, one (batch, group) per block.
//
//   groupNormBlock<T, THREADS>(p, block, smem)
//     The channels of group g of batch n are contiguous: a row of len = per * spatial elements
//     starting at (n * groups + g) * len. Thread t takes elements t, t + THREADS, ... of the row.
//     mean = sum x / len, var = sum (x - mean)^2 / len (two passes, no cancellation), both in
//     double as the CPU runtime's meanVar (runtime/cpu/k_nn_norm.cpp); then
//     y = (x - mean) * (scale[i] / sqrt(var + epsilon)) + bias[i], i = the channel (per-channel
//     scale) or the group, in double as the CPU computes it. Only the summation order differs
//     (a tree instead of a loop), far below float precision.
//     Shared memory: THREADS doubles for the block-wide trees; every thread of the block, idle
//     ones (threadIdx.x >= THREADS) included, reaches every barrier.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

struct GroupNormParams {
  int64_t rows;     // batch * groups
  int64_t groups;
  int64_t per;      // channels per group
  int64_t spatial;  // product of the dims after the channel
  int32_t perChannel;  // scale and bias have one value per channel (else one per group)
  double epsilon;
  const void* x;
  const void* scale;
  const void* bias;
  void* y;
};

// Sum over the first THREADS threads' values, in double; all threads of the block call it and get
// the sum. `red` holds THREADS doubles of shared memory. As blockReduce (mg_kcommon.cuh).
template <int THREADS>
MG_DEVICE double blockSumDouble(double v, double* red) {
  static_assert(isPow2(THREADS), "block reductions need a power-of-two thread count");
  const int t = int(threadIdx.x);
  if (t < THREADS) red[t] = v;
  __syncthreads();
  MGK_NO_UNROLL
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const double r = red[0];
  __syncthreads();
  return r;
}

template <typename T, int THREADS>
__host__ __device__ int64_t groupNormBlocks(const GroupNormParams& p) {
  return p.rows;
}

template <typename T, int THREADS>
__host__ __device__ constexpr int groupNormSmemBytes() {
  return THREADS * int(sizeof(double));
}

template <typename T, int THREADS>
MGK_PROGRAM void groupNormBlock(const GroupNormParams& p, int64_t block, char* smem) {
  double* red = reinterpret_cast<double*>(smem);
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;
  const int64_t len = p.per * p.spatial;
  const T* x = static_cast<const T*>(p.x) + block * len;
  T* y = static_cast<T*>(p.y) + block * len;
  double s = 0;
  if (active)
    for (int64_t j = t; j < len; j += THREADS) s += double(x[j]);
  const double mean = len > 0 ? blockSumDouble<THREADS>(s, red) / double(len) : 0.0;
  double q = 0;
  if (active)
    for (int64_t j = t; j < len; j += THREADS) {
      const double d = double(x[j]) - mean;
      q += d * d;
    }
  const double var = len > 0 ? blockSumDouble<THREADS>(q, red) / double(len) : 0.0;
  if (!active) return;  // no barrier below
  const double inv = 1.0 / sqrt(var + p.epsilon);
  const int64_t g = block % p.groups;
  const T* scale = static_cast<const T*>(p.scale);
  const T* bias = static_cast<const T*>(p.bias);
  for (int64_t j = t; j < len; j += THREADS) {
    const int64_t i = p.perChannel ? g * p.per + j / p.spatial : g;
    const double k = inv * double(scale[i]);
    y[j] = T((double(x[j]) - mean) * k + double(bias[i]));
  }
}

}  // namespace mgk
