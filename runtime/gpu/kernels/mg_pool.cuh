// pool: 2-D max / average pooling, NCHW, float32 (mg_kparams.h, PoolParams).
//
//   poolBlock<ITEMS, THREADS>(p, block, smem)
//     One output per (thread, item): block b covers outputs [b*ITEMS*THREADS, ...) of N x C x
//     OH x OW in row-major order (thread t takes b*ITEMS*THREADS + i*THREADS + t). The window of
//     (oh, ow) starts at (oh*strideH - padTop, ow*strideW - padLeft) with taps every dilation.
//     Max ignores positions outside the input (ONNX pads MaxPool with -inf); a window with no
//     position inside the input gives -inf. Average divides by the positions inside the input, or
//     with countIncludePad by kernelH*kernelW (the contract's "full window, pads included").
//     ceil_mode is the generator's business: it only changes OH/OW.
//     The result goes to channel yChannelOffset + c of a tensor with yChannels channels.
//   No barrier, no shared memory: mgLaunchNoSync is allowed; idle threads return at once.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

template <int ITEMS, int THREADS, typename S = float>
__host__ __device__ int64_t poolBlocks(const PoolParams& p) {
  return ceilDiv(p.N * p.C * p.OH * p.OW, int64_t(ITEMS) * THREADS);
}

template <int ITEMS, int THREADS, typename S = float>
__host__ __device__ constexpr int poolSmemBytes() {
  return 0;
}

template <int ITEMS, int THREADS, typename S = float>
MGK_PROGRAM void poolBlock(const PoolParams& p, int64_t block, char* smem) {
  static_assert(ITEMS == 1 || ITEMS == 4 || ITEMS == 16, "memory tiles have 1, 4 or 16 items");
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier below
  const int64_t ohw = p.OH * p.OW, total = p.N * p.C * ohw, HW = p.H * p.W;
  const int64_t first = block * (int64_t(ITEMS) * THREADS) + t;
  MGK_UNROLL
  for (int it = 0; it < ITEMS; ++it) {
    const int64_t e = first + int64_t(it) * THREADS;
    if (e >= total) return;
    const int64_t ow = e % p.OW, q = e / p.OW, oh = q % p.OH, nc = q / p.OH;
    const int64_t c = nc % p.C, nb = nc / p.C;
    const int64_t ih0 = oh * p.strideH - p.padTop, iw0 = ow * p.strideW - p.padLeft;
    const S* xc = asS<S>(p.x) + nc * HW;
    float acc = p.isMax ? -INFINITY : 0.f;
    int64_t count = 0;
    for (int64_t r = 0; r < p.kernelH; ++r) {
      const int64_t ih = ih0 + r * p.dilationH;
      if (ih < 0 || ih >= p.H) continue;
      for (int64_t s = 0; s < p.kernelW; ++s) {
        const int64_t iw = iw0 + s * p.dilationW;
        if (iw < 0 || iw >= p.W) continue;
        const float v = ldF(xc[ih * p.W + iw]);
        if (p.isMax)
          acc = (v > acc || v != v) ? v : acc;
        else
          acc += v;
        ++count;
      }
    }
    if (!p.isMax) {
      const int64_t div = p.countIncludePad ? p.kernelH * p.kernelW : count;
      acc = div > 0 ? acc / float(div) : 0.f;
    }
    asS<S>(p.y)[(nb * p.yChannels + p.yChannelOffset + c) * ohw + oh * p.OW + ow] = stF<S>(acc);
  }
}

}  // namespace mgk
