// Direct convolution for few input channels (a network's stem: RGB in, 16 to 96 channels out,
// 3x3 to 11x11 kernels, strides 1 to 4), AVX-512.
//
// The im2col GEMM (f_conv.cpp) packs K = C * kh * kw (27 to 363) gathered input values per pixel
// and multiplies them by only 16 to 96 output channels: the strided gather costs about as much as
// the multiply (ResNet's 7x7/2 stem: 2.2 ms where onnxruntime takes 1.8; MnasNet's 3x3/2: 0.35
// against 0.24). Here:
//  - the input rows a band reads are copied into a zero-padded buffer, split by column phase
//    (column cx of a padded row goes to phase cx % sw, index cx / sw): for any stride, the inputs
//    of tap kx for 16 consecutive output pixels are then 16 consecutive floats, and no tap reads
//    outside the buffer (no bounds checks, no masks in the loop; f_conv_band.h);
//  - a tile is 8 output channels times NV vectors of 16 pixels of one output row (NV = 3: 24
//    accumulators); per k = (c, ky, kx) it loads NV input vectors and broadcasts 8 weights
//    (packed [block of 8 channels][K][8]) into 8 * NV FMAs;
//  - the tile is written straight to the output planes with bias (the accumulators' start),
//    residual and activation, the row's last vectors masked.
// Jobs are bands of 8 output rows of one image; each copies its own padded rows (about 60 KB for
// a 7x7/2 stem), which stay in cache while every block of channels reads them.
// Measured (kernel_bench, 1 thread, against the im2col GEMM): ResNet 7x7/2 3->64 2.19 -> 1.25 ms,
// MnasNet 3x3/2 3->32 0.35 -> 0.20, VGG 3x3 3->64 2.80 -> 1.43, AlexNet 11x11/4 1.42 -> 0.95.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "f_conv.h"
#include "f_conv_band.h"
#include "f_gemm.h"
#include "f_vmath.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace conv {

#if defined(__AVX512F__)

namespace {

constexpr int kMR = 8;    // output channels per tile (broadcast weights)
constexpr int kW = 16;    // pixels per vector
constexpr int kMaxNV = 3;

int64_t blocks(const ConvGeom& g) { return (g.m + kMR - 1) / kMR; }
int64_t kTotal(const ConvGeom& g) { return g.c * g.kh * g.kw; }

// Output row oy, pixels [ox, ox + npix) (npix <= NV * 16), channels m0 .. m0 + mcount - 1:
// y = act(bias + sum over k of w[k][i] * x[koff[k] + pixel] + res).
template <int NV>
inline void tile(const float* xb, const float* wp, const int64_t* koff, int64_t K, const float* bias,
                 int64_t m0, int mcount, int npix, const float* res, float* y, int64_t oplane,
                 const Epilogue& ep, bool vecAct) {
  __m512 acc[kMR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i) {
    const __m512 b = _mm512_set1_ps(bias[i]);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[i][v] = b;
  }
  for (int64_t k = 0; k < K; ++k) {
    const float* xk = xb + koff[k];
    const float* wk = wp + k * kMR;
    __m512 xv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) xv[v] = _mm512_loadu_ps(xk + v * kW);
#pragma GCC unroll 8
    for (int i = 0; i < kMR; ++i) {
      const __m512 w = _mm512_set1_ps(wk[i]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(w, xv[v], acc[i][v]);
    }
  }
  for (int i = 0; i < mcount; ++i) {
    float* yr = y + (m0 + i) * oplane;
    const float* rr = res ? res + (m0 + i) * oplane : nullptr;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mk = vm::tailMask(npix - v * kW);
      __m512 t = acc[i][v];
      if (rr) t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(mk, rr + v * kW));
      vm::vecAct(ep, t);
      _mm512_mask_storeu_ps(yr + v * kW, mk, t);
    }
    if (!vecAct) vm::actRow(ep, yr, yr, npix);
  }
}

}  // namespace

bool stemApplies(const ConvGeom& g) {
  // Few input channels and a real kernel (1x1 convolutions are GEMMs at any width); K up to 1024
  // keeps a block's packed weights within 32 KB of L1.
  return g.group == 1 && g.c <= 4 && g.kh * g.kw > 1 && g.m >= 8 && kTotal(g) <= 1024;
}

int64_t stemPackedSize(const ConvGeom& g) { return blocks(g) * kTotal(g) * kMR; }

void stemPackWeights(const ConvGeom& g, const float* w, float* dst) {
  packChannelBlocks(w, g.m, kTotal(g), kMR, dst);
}

void stemConv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias, const float* res,
              float* y, const Epilogue& ep, ThreadPool* pool) {
  const int64_t K = kTotal(g), nmb = blocks(g);
  // A job is a band of kBand output rows of one image; its padded input rows (the band's rows
  // times the stride plus the kernel's extent) are copied by the job itself into a thread-local
  // buffer (~60 KB for a 7x7/2 stem), so the copy is in cache when the tiles read it.
  constexpr int64_t kBand = 8;
  const int64_t band = std::min(kBand, g.oh), bands = (g.oh + band - 1) / band;
  const PaddedBand pb(g, band, kMaxNV * kW);  // a row's last tile may run up to 47 pixels past ow
  const int64_t oplane = g.oh * g.ow;
  static thread_local fast::Scratch biasS, koffS;
  float* bp = biasS.get(nmb * kMR);
  for (int64_t m = 0; m < nmb * kMR; ++m) bp[m] = bias && m < g.m ? bias[m] : 0.f;
  // Offset of k = (c, ky, kx) from an output pixel's first input, in floats of the buffer.
  int64_t* koff = reinterpret_cast<int64_t*>(koffS.get(2 * K));
  for (int64_t k = 0; k < K; ++k) koff[k] = pb.tapOffset(g, k / (g.kh * g.kw), k / g.kw % g.kh, k % g.kw);
  __m512 probe = _mm512_setzero_ps();
  const bool vecAct = vm::vecAct(ep, probe);  // false: actRow on the stored values

  parallelFor(pool, g.n * bands, 1, [&](int64_t jb, int64_t je) {
    static thread_local fast::Scratch padS, rowS;
    float* xp = padS.get(g.c * pb.pplane);
    float* tmp = rowS.get(pb.rowLen + 32);
    for (int64_t job = jb; job < je; ++job) {
      const int64_t n = job / bands, oy0 = (job % bands) * band, oy1 = std::min(g.oh, oy0 + band);
      const int64_t iy0 = oy0 * g.sh - g.pt, nin = (oy1 - 1 - oy0) * g.sh + pb.extra;
      pb.copy(g, x + n * g.c * g.h * g.w, iy0, nin, xp, tmp);
      float* yn = y + n * g.m * oplane;
      const float* rn = res ? res + n * g.m * oplane : nullptr;
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        const float* xr = xp + (oy - oy0) * g.sh * pb.rowLen;
        float* yr = yn + oy * g.ow;
        const float* rr = rn ? rn + oy * g.ow : nullptr;
        for (int64_t mb = 0; mb < nmb; ++mb) {
          const float* wp = wPacked + mb * K * kMR;
          const int64_t m0 = mb * kMR;
          const int mcount = static_cast<int>(std::min<int64_t>(kMR, g.m - m0));
          for (int64_t ox = 0; ox < g.ow;) {
            const int npix = static_cast<int>(std::min<int64_t>(kMaxNV * kW, g.ow - ox));
            const float* rt = rr ? rr + ox : nullptr;
            if (npix > 2 * kW)
              tile<3>(xr + ox, wp, koff, K, bp + m0, m0, mcount, npix, rt, yr + ox, oplane, ep, vecAct);
            else if (npix > kW)
              tile<2>(xr + ox, wp, koff, K, bp + m0, m0, mcount, npix, rt, yr + ox, oplane, ep, vecAct);
            else
              tile<1>(xr + ox, wp, koff, K, bp + m0, m0, mcount, npix, rt, yr + ox, oplane, ep, vecAct);
            ox += npix;
          }
        }
      }
    }
  });
}

#else

bool stemApplies(const ConvGeom&) { return false; }
int64_t stemPackedSize(const ConvGeom&) { return 0; }
void stemPackWeights(const ConvGeom&, const float*, float*) {}
void stemConv(const ConvGeom&, const float*, const float*, const float*, const float*, float*, const Epilogue&,
              ThreadPool*) {}

#endif

}  // namespace conv
}  // namespace mgrt
