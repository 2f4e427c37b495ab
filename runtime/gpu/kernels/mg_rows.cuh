// rows: softmax, log-softmax and layer normalization over the rows of x (mg_kparams.h,
// RowParams), float32, one row per block. A row is contiguous, or (softmax over an inner axis)
// its elements lie p.inner apart: then the block's loads are strided, not coalesced.
//
//   rowBlock<ITEMS, THREADS>(p, block, smem)
//     Thread t handles elements t, t + THREADS, ... of row `block`. When the row fits in the
//     block's registers (len <= ITEMS*THREADS) it is read from global memory once; longer rows
//     are read again by each pass (2 or 3 passes). Shared memory: THREADS floats for the
//     block-wide tree reductions (mg_kcommon.cuh, blockReduce), 4*THREADS bytes as in the
//     cost model's memory tiles with a block reduction.
//   softmax:     m = max x;  y = e^(x - m) / sum e^(x - m)            (stable)
//   log-softmax: m = max x;  y = x - m - log sum e^(x - m)
//   layer norm:  mu = mean x (around the pivot x_0); var = mean (x - mu)^2 (two passes, no
//                cancellation);
//                y = (x - mu) / sqrt(var + epsilon) * scale + bias (scale, bias of length len
//                or null)
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

template <int ITEMS, int THREADS, typename S = float>
__host__ __device__ int64_t rowBlocks(const RowParams& p) {
  return p.rows;
}

template <int ITEMS, int THREADS, typename S = float>
__host__ __device__ constexpr int rowSmemBytes() {
  return THREADS * int(sizeof(float));
}

template <int ITEMS, int THREADS, typename S = float>
MGK_PROGRAM void rowBlock(const RowParams& p, int64_t block, char* smem) {
  static_assert(ITEMS == 1 || ITEMS == 4 || ITEMS == 16, "memory tiles have 1, 4 or 16 items");
  static_assert(isPow2(THREADS), "the block tree needs a power-of-two thread count");
  float* red = reinterpret_cast<float*>(smem);
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;
  const int64_t len = p.len;
  const int64_t inner = p.inner > 1 ? p.inner : 1;
  const int64_t base = (block / inner) * len * inner + block % inner;
  const S* xr = asS<S>(p.x) + base;
  S* yr = asS<S>(p.y) + base;
  // Element j of the row (stride `inner`).
  auto x = [&](int64_t j) -> const S& { return xr[j * inner]; };
  auto y = [&](int64_t j) -> S& { return yr[j * inner]; };
  // Registers hold the row when it fits; idle threads and positions past len hold nothing.
  const bool cached = len <= int64_t(ITEMS) * THREADS;
  float v[ITEMS];
  MGK_UNROLL
  for (int i = 0; i < ITEMS; ++i) {
    const int64_t j = t + int64_t(i) * THREADS;
    v[i] = (cached && active && j < len) ? ldF(x(j)) : 0.f;
  }
  // Calls f(j, x_j) for this thread's elements (none for idle threads).
  auto each = [&](auto f) {
    if (!active) return;
    if (cached) {
      MGK_UNROLL
      for (int i = 0; i < ITEMS; ++i) {
        const int64_t j = t + int64_t(i) * THREADS;
        if (j < len) f(j, v[i]);
      }
    } else {
      for (int64_t j = t; j < len; j += THREADS) f(j, ldF(x(j)));
    }
  };

  if (p.op == kRowLayerNorm) {
    // The mean as pivot + mean(x - pivot), pivot = x[0]: rows far from zero (x ~ 1000 +- 3)
    // would otherwise lose the digits that matter to the float sum's rounding.
    const float pivot = len > 0 ? ldF(x(0)) : 0.f;
    float s = 0.f;
    each([&](int64_t, float xv) { s += xv - pivot; });
    const float mean = pivot + blockReduce<THREADS>(s, red, OpSumF()) / float(len);
    float q = 0.f;
    each([&](int64_t, float xv) {
      const float d = xv - mean;
      q += d * d;
    });
    const float var = blockReduce<THREADS>(q, red, OpSumF()) / float(len);
    const float inv = 1.f / sqrtf(var + p.epsilon);
    const S* scale = asS<S>(p.scale);
    const S* bias = asS<S>(p.bias);
    each([&](int64_t j, float xv) {
      float r = (xv - mean) * inv;
      if (scale) r *= ldF(scale[j]);
      if (bias) r += ldF(bias[j]);
      y(j) = stF<S>(r);
    });
    return;
  }

  float m = -INFINITY;
  each([&](int64_t, float xv) { m = (xv > m || xv != xv) ? xv : m; });
  m = blockReduce<THREADS>(m, red, OpMaxF());
  float s = 0.f;
  each([&](int64_t, float xv) { s += expf(xv - m); });
  s = blockReduce<THREADS>(s, red, OpSumF());
  if (p.op == kRowLogSoftmax) {
    const float ls = logf(s);
    each([&](int64_t j, float xv) { y(j) = stF<S>((xv - m) - ls); });
  } else {
    const float inv = 1.f / s;
    each([&](int64_t j, float xv) { y(j) = stF<S>(expf(xv - m) * inv); });
  }
}

}  // namespace mgk
