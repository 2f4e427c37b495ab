// conv_nd: the direct programs of the convolutions and pools that the implicit GEMM (mg_conv.cuh)
// and the 2-D pool (mg_pool.cuh) do not cover: Conv over any number of spatial dims (3-D and up,
// and float64), ConvTranspose (any number of spatial dims), MaxPool / AveragePool over any number
// of spatial dims (and AveragePool's count_include_pad with the CPU's divisor). One output
// element per thread, the CPU runtime's loops (runtime/cpu/k_nn_conv.cpp, k_nn_pool.cpp) with the
// same accumulation in double and the same order of terms, over the WindowGeometry of
// mg_window.cuh. No barrier, no shared memory: mgLaunchNoSync is allowed; idle threads
// (threadIdx.x >= THREADS) return at once.
//
//   convNdBlock<T, THREADS>   output of N*M*prod(out) per thread.
//     Conv (transposed = 0): bias + sum over kernel taps inside the input, then over the group's
//       input channels, of x * w; + residual; then the epilogue activation (mg_act).
//     ConvTranspose (transposed = 1): the gather form of the CPU's scatter. Output position o
//       receives x[i] * w[c, m, k] for every input position i and tap k with
//       i*stride - padBegin + k*dilation == o; per input channel c (ascending) the taps are visited
//       in decreasing order, which is increasing order of i: the order of the CPU's loop.
//   poolNdBlock<T, THREADS>   output of N*C*prod(out) per thread: max (the first maximum, NaN
//     kept when first; a window with no position inside the input gives the lowest finite value,
//     as the CPU) or average (divided by the positions inside the input, or with countIncludePad by
//     those inside the padded input: ceil_mode windows are cut at the end padding).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include <float.h>

#include "mg_kcommon.cuh"
#include "mg_window.cuh"

namespace mgk {

// Conv: x [N, C, in...], w [M, C / group, kernel...], y [N, M, out...], bias [M] or null,
// residual shaped like y or null. ConvTranspose: x [N, C, in...], w [C, M / group, kernel...],
// y [N, M, out...] (g.in is x's spatial shape, g.out y's), bias [M] or null, no residual.
struct ConvNdParams {
  int64_t N, C, M, group;
  int32_t transposed;
  WindowGeometry g;
  const void* x;
  const void* w;
  const void* bias;
  const void* residual;
  void* y;
  int32_t act;
  float actAlpha, actBeta;
};

// MaxPool / AveragePool: x [N, C, in...], y [N, C, out...]; padEnd for count_include_pad.
struct PoolNdParams {
  int64_t NC;
  int32_t isMax;
  int32_t countIncludePad;
  WindowGeometry g;
  int64_t padEnd[kMaxRank];
  const void* x;
  void* y;
};

namespace detail {

// Row-major coordinates of flat index e over dims[0..nsp).
MG_DEVICE void unravelSpatial(int64_t e, const int64_t* dims, int nsp, int64_t* c) {
  for (int d = nsp - 1; d >= 0; --d) {
    c[d] = e % dims[d];
    e /= dims[d];
  }
}

// Tap kk (row-major over g.kernel) of window position oc: the input offset (row-major over g.in)
// of oc*stride - padBegin + k*dilation, and whether it lies inside the input (*inPadded: inside
// the input padded by padBegin and padEnd, when padEnd is given).
MG_DEVICE bool windowTap(const WindowGeometry& g, const int64_t* oc, int64_t kk, int64_t* off,
                         const int64_t* padEnd = nullptr, bool* inPadded = nullptr) {
  int64_t o = 0, stride = 1;
  bool inside = true, padded = true;
  for (int d = g.nsp - 1; d >= 0; --d) {
    const int64_t k = kk % g.kernel[d];
    kk /= g.kernel[d];
    const int64_t pos = oc[d] * g.stride[d] - g.padBegin[d] + k * g.dilation[d];
    inside = inside && pos >= 0 && pos < g.in[d];
    if (padEnd) padded = padded && pos >= -g.padBegin[d] && pos < g.in[d] + padEnd[d];
    o += pos * stride;
    stride *= g.in[d];
  }
  *off = o;
  if (inPadded) *inPadded = padded;
  return inside;
}

// The transposed tap: the input position i (offset row-major over g.in) with
// i*stride - padBegin + k*dilation == oc for tap kk, if there is one.
MG_DEVICE bool transposedTap(const WindowGeometry& g, const int64_t* oc, int64_t kk, int64_t* off) {
  int64_t o = 0, stride = 1;
  bool hit = true;
  for (int d = g.nsp - 1; d >= 0; --d) {
    const int64_t k = kk % g.kernel[d];
    kk /= g.kernel[d];
    const int64_t q = oc[d] + g.padBegin[d] - k * g.dilation[d];
    const int64_t i = q >= 0 ? q / g.stride[d] : -1;
    hit = hit && q >= 0 && i * g.stride[d] == q && i < g.in[d];
    o += i * stride;
    stride *= g.in[d];
  }
  *off = o;
  return hit;
}

template <typename T>
MG_DEVICE T lowestOf() {
  return sizeof(T) == sizeof(float) ? T(-FLT_MAX) : T(-DBL_MAX);
}

}  // namespace detail

// ---- Conv / ConvTranspose --------------------------------------------------------------------
template <typename T, int THREADS>
__host__ __device__ int64_t convNdBlocks(const ConvNdParams& p) {
  int64_t out = 1;
  for (int d = 0; d < p.g.nsp; ++d) out *= p.g.out[d];
  return ceilDiv(p.N * p.M * out, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int convNdSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void convNdBlock(const ConvNdParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier below
  const WindowGeometry& g = p.g;
  const int nsp = g.nsp;
  const int64_t inSize = detail::product(g.in, nsp), outSize = detail::product(g.out, nsp);
  const int64_t kSize = detail::product(g.kernel, nsp);
  const int64_t e = block * THREADS + t;
  if (e >= p.N * p.M * outSize) return;
  const int64_t nm = e / outSize, m = nm % p.M, n = nm / p.M;
  int64_t oc[kMaxRank];
  detail::unravelSpatial(e - nm * outSize, g.out, nsp, oc);
  const T* x = static_cast<const T*>(p.x);
  const T* w = static_cast<const T*>(p.w);
  const int64_t cg = p.C / p.group, mg = p.M / p.group, gi = m / mg;
  double acc = p.bias ? double(static_cast<const T*>(p.bias)[m]) : 0.0;
  if (!p.transposed) {
    const T* xg = x + (n * p.C + gi * cg) * inSize;
    const T* wm = w + m * cg * kSize;
    for (int64_t kk = 0; kk < kSize; ++kk) {
      int64_t off;
      if (!detail::windowTap(g, oc, kk, &off)) continue;
      for (int64_t c = 0; c < cg; ++c) acc += double(xg[c * inSize + off]) * double(wm[c * kSize + kk]);
    }
    if (p.residual) acc += double(static_cast<const T*>(p.residual)[e]);
  } else {
    const int64_t ml = m - gi * mg;
    for (int64_t c = gi * cg; c < (gi + 1) * cg; ++c) {
      const T* xc = x + (n * p.C + c) * inSize;
      const T* wc = w + (c * mg + ml) * kSize;
      for (int64_t kk = kSize - 1; kk >= 0; --kk) {
        int64_t off;
        if (detail::transposedTap(g, oc, kk, &off)) acc += double(xc[off]) * double(wc[kk]);
      }
    }
  }
  T* y = static_cast<T*>(p.y);
  y[e] = p.act == kActNone ? T(acc) : T(applyAct(p.act, float(acc), p.actAlpha, p.actBeta));
}

// ---- MaxPool / AveragePool -------------------------------------------------------------------
template <typename T, int THREADS>
__host__ __device__ int64_t poolNdBlocks(const PoolNdParams& p) {
  int64_t out = 1;
  for (int d = 0; d < p.g.nsp; ++d) out *= p.g.out[d];
  return ceilDiv(p.NC * out, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int poolNdSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void poolNdBlock(const PoolNdParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier below
  const WindowGeometry& g = p.g;
  const int nsp = g.nsp;
  const int64_t inSize = detail::product(g.in, nsp), outSize = detail::product(g.out, nsp);
  const int64_t kSize = detail::product(g.kernel, nsp);
  const int64_t e = block * THREADS + t;
  if (e >= p.NC * outSize) return;
  const int64_t nc = e / outSize;
  int64_t oc[kMaxRank];
  detail::unravelSpatial(e - nc * outSize, g.out, nsp, oc);
  const T* xc = static_cast<const T*>(p.x) + nc * inSize;
  T* y = static_cast<T*>(p.y);
  if (p.isMax) {
    T best = detail::lowestOf<T>();
    bool have = false;
    for (int64_t kk = 0; kk < kSize; ++kk) {
      int64_t off;
      if (!detail::windowTap(g, oc, kk, &off)) continue;
      const T v = xc[off];
      if (!have || v > best) best = v, have = true;
    }
    y[e] = best;
    return;
  }
  double sum = 0;
  int64_t cnt = 0, cntPad = 0;
  for (int64_t kk = 0; kk < kSize; ++kk) {
    int64_t off;
    bool padded;
    const bool inside = detail::windowTap(g, oc, kk, &off, p.padEnd, &padded);
    if (padded) ++cntPad;
    if (!inside) continue;
    ++cnt;
    sum += double(xc[off]);
  }
  const int64_t div = p.countIncludePad ? cntPad : cnt;
  y[e] = T(div > 0 ? sum / double(div) : 0.0);
}

}  // namespace mgk
