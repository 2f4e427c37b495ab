// window: the sliding-window ops beside Conv and the pools of mg_conv.cuh / mg_pool.cuh, over any
// number of spatial dims: Col2Im (opset 18), LpPool (opset 18: dilations, ceil_mode), and
// DeformConv (opset 19, 2-D). Each computes one output element per thread directly, as the CPU
// runtime's loops do (runtime/cpu/k_nn_conv.cpp, k_nn_pool.cpp), with the same accumulation in
// double and the same order of terms: the results agree with the CPU target's up to FMA
// contraction. No barrier, no shared memory; idle threads (threadIdx.x >= THREADS) return.
//
//   col2imBlock<T, THREADS>      image pixel of N*C*prod(image) per thread. The CPU scatters block
//     columns into the image; here each pixel gathers the (kernel offset, block position) pairs
//     that land on it, kernel offsets in increasing order, which is the order in which the CPU's
//     loop adds them to that pixel.
//   lpPoolBlock<T, THREADS>      output of N*C*prod(out) per thread: (sum over the window's
//     positions inside the input of |x|^p)^(1/p) (pow in double, as the CPU).
//   deformConvBlock<T, THREADS>  output of N*M*oH*oW per thread: bias + sum over the group's input
//     channels and kernel taps of w * mask * bilinear(x at the tap moved by its offset).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

// A window over nsp spatial dims (runtime/common/k_nn_shapes.h SpatialGeometry): window position o
// covers input positions o*stride - padBegin + k*dilation for k < kernel.
struct WindowGeometry {
  int32_t nsp;
  int64_t in[kMaxRank], out[kMaxRank], kernel[kMaxRank];
  int64_t stride[kMaxRank], padBegin[kMaxRank], dilation[kMaxRank];
};

// Col2Im: x [N, C * prod(kernel), prod(out)] (the block columns), y [N, C, in...].
struct Col2ImParams {
  int64_t NC;
  WindowGeometry g;  // in = image_shape, kernel = block_shape, out = the block positions
  const void* x;
  void* y;
};

// LpPool: x [N, C, in...], y [N, C, out...].
struct LpPoolParams {
  int64_t NC;
  int64_t p;
  WindowGeometry g;
  const void* x;
  void* y;
};

// DeformConv (2-D): x [N, C, H, W], w [M, C / group, kH, kW], offset [N, og * kH * kW * 2, oH, oW]
// ((dh, dw) pairs per offset group and tap), bias [M] or null, mask [N, og * kH * kW, oH, oW] or
// null, y [N, M, oH, oW].
struct DeformConvParams {
  int64_t N, C, H, W, M, kH, kW, group, offsetGroups, oH, oW;
  int64_t strideH, strideW, padTop, padLeft, dilationH, dilationW;
  const void* x;
  const void* w;
  const void* offset;
  const void* bias;
  const void* mask;
  void* y;
};

namespace detail {

MG_DEVICE int64_t product(const int64_t* v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= v[i];
  return p;
}

// Bilinear sample of an H x W plane at (h, w), zero outside; a point within one pixel of the
// border still blends with the zeros (torchvision's deform_conv2d, onnxruntime, the CPU runtime).
template <typename T>
MG_DEVICE double sampleBilinear(const T* plane, int64_t H, int64_t W, double h, double w) {
  if (h <= -1 || h >= double(H) || w <= -1 || w >= double(W)) return 0;
  const int64_t h0 = int64_t(floor(h)), w0 = int64_t(floor(w));
  const double lh = h - double(h0), lw = w - double(w0);
  auto at = [&](int64_t i, int64_t j) {
    return i >= 0 && i < H && j >= 0 && j < W ? double(plane[i * W + j]) : 0.0;
  };
  return (1 - lh) * (1 - lw) * at(h0, w0) + (1 - lh) * lw * at(h0, w0 + 1) +
         lh * (1 - lw) * at(h0 + 1, w0) + lh * lw * at(h0 + 1, w0 + 1);
}

}  // namespace detail

// ---- Col2Im ----------------------------------------------------------------------------------
template <typename T, int THREADS>
__host__ __device__ int64_t col2imBlocks(const Col2ImParams& p) {
  int64_t image = 1;
  for (int d = 0; d < p.g.nsp; ++d) image *= p.g.in[d];
  return ceilDiv(p.NC * image, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int col2imSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void col2imBlock(const Col2ImParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;
  const WindowGeometry& g = p.g;
  const int nsp = g.nsp;
  const int64_t imSize = detail::product(g.in, nsp), kSize = detail::product(g.kernel, nsp);
  const int64_t blocks = detail::product(g.out, nsp);
  const int64_t e = block * THREADS + t;
  if (e >= p.NC * imSize) return;
  const int64_t nc = e / imSize;
  int64_t pix[kMaxRank];
  int64_t rem = e - nc * imSize;
  for (int d = nsp - 1; d >= 0; --d) {
    pix[d] = rem % g.in[d];
    rem /= g.in[d];
  }
  const T* xc = static_cast<const T*>(p.x) + nc * kSize * blocks;
  double acc = 0;
  for (int64_t kk = 0; kk < kSize; ++kk) {
    int64_t kr = kk, l = 0, lStride = 1;
    bool hit = true;
    for (int d = nsp - 1; d >= 0; --d) {
      const int64_t k = kr % g.kernel[d];
      kr /= g.kernel[d];
      const int64_t q = pix[d] + g.padBegin[d] - k * g.dilation[d];
      const int64_t b = q >= 0 ? q / g.stride[d] : -1;
      hit = hit && q >= 0 && b * g.stride[d] == q && b < g.out[d];
      l += b * lStride;
      lStride *= g.out[d];
    }
    if (hit) acc += double(xc[kk * blocks + l]);
  }
  static_cast<T*>(p.y)[e] = T(acc);
}

// ---- LpPool ----------------------------------------------------------------------------------
template <typename T, int THREADS>
__host__ __device__ int64_t lpPoolBlocks(const LpPoolParams& p) {
  int64_t out = 1;
  for (int d = 0; d < p.g.nsp; ++d) out *= p.g.out[d];
  return ceilDiv(p.NC * out, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int lpPoolSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void lpPoolBlock(const LpPoolParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;
  const WindowGeometry& g = p.g;
  const int nsp = g.nsp;
  const int64_t inSize = detail::product(g.in, nsp), outSize = detail::product(g.out, nsp);
  const int64_t kSize = detail::product(g.kernel, nsp);
  const int64_t e = block * THREADS + t;
  if (e >= p.NC * outSize) return;
  const int64_t nc = e / outSize;
  int64_t oc[kMaxRank];
  int64_t rem = e - nc * outSize;
  for (int d = nsp - 1; d >= 0; --d) {
    oc[d] = rem % g.out[d];
    rem /= g.out[d];
  }
  const T* xc = static_cast<const T*>(p.x) + nc * inSize;
  const double pw = double(p.p);
  double sum = 0;
  for (int64_t kk = 0; kk < kSize; ++kk) {
    int64_t kr = kk, off = 0, stride = 1;
    bool inside = true;
    for (int d = nsp - 1; d >= 0; --d) {
      const int64_t k = kr % g.kernel[d];
      kr /= g.kernel[d];
      const int64_t pos = oc[d] * g.stride[d] - g.padBegin[d] + k * g.dilation[d];
      inside = inside && pos >= 0 && pos < g.in[d];
      off += pos * stride;
      stride *= g.in[d];
    }
    if (inside) sum += pow(fabs(double(xc[off])), pw);
  }
  static_cast<T*>(p.y)[e] = T(pow(sum, 1.0 / pw));
}

// ---- DeformConv ------------------------------------------------------------------------------
template <typename T, int THREADS>
__host__ __device__ int64_t deformConvBlocks(const DeformConvParams& p) {
  return ceilDiv(p.N * p.M * p.oH * p.oW, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int deformConvSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void deformConvBlock(const DeformConvParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;
  const int64_t oSize = p.oH * p.oW, e = block * THREADS + t;
  if (e >= p.N * p.M * oSize) return;
  const int64_t pos = e % oSize, nm = e / oSize, m = nm % p.M, n = nm / p.M;
  const int64_t oh = pos / p.oW, ow = pos % p.oW;
  const int64_t kSize = p.kH * p.kW, cg = p.C / p.group, gi = m / (p.M / p.group);
  const int64_t cPerOg = p.C / p.offsetGroups;
  const T* x = static_cast<const T*>(p.x);
  const T* w = static_cast<const T*>(p.w);
  const T* off = static_cast<const T*>(p.offset);
  const T* mask = static_cast<const T*>(p.mask);
  double acc = p.bias ? double(static_cast<const T*>(p.bias)[m]) : 0.0;
  for (int64_t ci = 0; ci < cg; ++ci) {
    const int64_t c = gi * cg + ci, o = c / cPerOg;
    const T* plane = x + (n * p.C + c) * p.H * p.W;
    for (int64_t kh = 0; kh < p.kH; ++kh)
      for (int64_t kw = 0; kw < p.kW; ++kw) {
        const int64_t k = kh * p.kW + kw;
        const double dh = double(off[((n * p.offsetGroups + o) * kSize * 2 + 2 * k) * oSize + pos]);
        const double dw = double(off[((n * p.offsetGroups + o) * kSize * 2 + 2 * k + 1) * oSize + pos]);
        const double h = dh + double(oh * p.strideH - p.padTop + kh * p.dilationH);
        const double wv = dw + double(ow * p.strideW - p.padLeft + kw * p.dilationW);
        double v = detail::sampleBilinear(plane, p.H, p.W, h, wv);
        if (mask) v *= double(mask[((n * p.offsetGroups + o) * kSize + k) * oSize + pos]);
        acc += v * double(w[(m * cg + ci) * kSize + k]);
      }
  }
  static_cast<T*>(p.y)[e] = T(acc);
}

}  // namespace mgk
