// Fast ConvTranspose (float32, 1-D and 2-D, NC[H]W): Y = act(convT(X, W) + B).
//
// ONNX's transposed convolution scatters every input pixel, times the weight taps, into the
// output: Y[n, g*Mg+m, iy*sh - pt + ky*dh, ix*sw - pl + kx*dw] += X[n, g*Cg+c, iy, ix] *
// W[g*Cg+c, m, ky, kx]. Per image and group that is one GEMM followed by a col2im:
//   cols[Mg*kh*kw, rows*W] = W_g^T [Mg*kh*kw x Cg] x X_g [Cg x rows*W]   (f_gemm.h's sgemm; W_g^T
//   is a strided view of the weights, packed once per handle when they are constant),
//   then each cols row (m, ky, kx) lands on output channel m at the strided positions above.
// The reference kernel (k_nn_conv.cpp) runs the scatter element by element in double: a DBNet text
// detector's 2x2/2 upsampling (24 -> 24 channels at 120x160) took 356 of its 533 ms there.
//
// Work is cut into items of (image, group, band of output rows), run on the pool; an item
// computes the input rows whose taps reach its band (with overlapping taps a few rows at the band
// edges are computed by both neighbours) into a thread-local cols buffer of bounded size, and
// writes only its own rows, so items never write the same output. Two scatter forms:
//  - taps that do not overlap (stride >= dilated kernel extent on both axes, e.g. kernel 2
//    stride 2): every output is written at most once, as cols + bias (direct write; kernel 2 /
//    stride 2 columns are one interleaving loop); outputs no tap reaches (stride above the kernel,
//    output_padding, dilation gaps) are set to the bias first;
//  - otherwise the band is set to the bias and every tap is added on.
// The activation of a fused epilogue (mg_act) runs over each band after the scatter. Other
// dtypes, 3-D and higher, and attribute combinations the geometry rejects go to the reference.
#include <algorithm>
#include <vector>

#include "f_gemm.h"
#include "f_vmath.h"
#include "k_nn_shapes.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

inline int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

struct TGeom {
  int64_t n, c, h, w;          // input
  int64_t m, oh, ow;           // output channels (all groups) and spatial size
  int64_t group, cg, mg;       // groups, input / output channels per group
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;
};

// Range [lo, hi) of input columns ix whose tap kx lands inside [0, ow).
inline void tapRange(const TGeom& g, int64_t kx, int64_t* lo, int64_t* hi) {
  const int64_t off = kx * g.dw - g.pl;  // ox = ix * sw + off
  *lo = std::max<int64_t>(0, ceilDiv(-off, g.sw));
  *hi = std::min<int64_t>(g.w, floorDiv(g.ow - 1 - off, g.sw) + 1);
  if (*hi < *lo) *hi = *lo;
}

// One item: image n, group gi, output rows [oy0, oy1).
void runBand(const TGeom& g, const float* x, const float* w, const float* wPacked, const float* bias,
             float* y, const Epilogue& ep, bool noOverlap, bool exactCover, int64_t n, int64_t gi,
             int64_t oy0, int64_t oy1, ThreadPool* gemmPool) {
  const int64_t kk = g.kh * g.kw, rowsA = g.mg * kk, hw = g.h * g.w, plane = g.oh * g.ow;
  // Input rows with a tap in [oy0, oy1): oy = iy * sh - pt + ky * dh for some ky.
  const int64_t iyLo = std::max<int64_t>(0, ceilDiv(oy0 + g.pt - (g.kh - 1) * g.dh, g.sh));
  const int64_t iyHi = std::min<int64_t>(g.h, floorDiv(oy1 - 1 + g.pt, g.sh) + 1);
  float* ybase = y + (n * g.m + gi * g.mg) * plane;
  const int64_t bandLen = (oy1 - oy0) * g.ow;
  auto fillBias = [&] {
    for (int64_t m = 0; m < g.mg; ++m) {
      const float b = bias ? bias[gi * g.mg + m] : 0.f;
      std::fill(ybase + m * plane + oy0 * g.ow, ybase + m * plane + oy1 * g.ow, b);
    }
  };
  if (iyHi <= iyLo) {  // no tap reaches the band (output_padding, or rows between sparse taps)
    fillBias();
  } else {
    const int64_t ncols = (iyHi - iyLo) * g.w;
    static thread_local fast::Scratch colsBuf;
    float* cols = colsBuf.get(rowsA * ncols);
    fast::GemmSpec s;
    s.m = rowsA;
    s.n = ncols;
    s.k = g.cg;
    // A(i, c) = W[gi*cg + c][i], i = (m * kh + ky) * kw + kx: W_g^T, column stride mg * kk.
    s.a = fast::MatRef{w + gi * g.cg * rowsA, 1, rowsA};
    s.aPacked = wPacked;
    s.b = fast::MatRef{x + (n * g.c + gi * g.cg) * hw + iyLo * g.w, hw, 1};
    s.c = cols;
    s.ldc = ncols;
    fast::sgemm(s, gemmPool);
    if (!noOverlap || !exactCover) fillBias();
    std::vector<int64_t> lo(static_cast<size_t>(g.kw)), hi(static_cast<size_t>(g.kw));
    for (int64_t kx = 0; kx < g.kw; ++kx) tapRange(g, kx, &lo[kx], &hi[kx]);
    // Kernel 2 / stride 2 / dilation 1 columns: the two taps interleave into one output row.
    const bool pair = noOverlap && g.kw == 2 && g.sw == 2 && g.dw == 1;
    for (int64_t m = 0; m < g.mg; ++m) {
      const float b = bias ? bias[gi * g.mg + m] : 0.f;
      float* ym = ybase + m * plane;
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t iy = iyLo; iy < iyHi; ++iy) {
          const int64_t oy = iy * g.sh - g.pt + ky * g.dh;
          if (oy < oy0 || oy >= oy1) continue;
          float* yrow = ym + oy * g.ow;
          const float* src0 = cols + ((m * g.kh + ky) * g.kw) * ncols + (iy - iyLo) * g.w;
          if (pair) {
            // ox = 2 * ix - pl + kx: both taps valid on [max lo, min hi), the edges one by one.
            const float* s0 = src0;
            const float* s1 = src0 + ncols;
            const int64_t a = std::max(lo[0], lo[1]), e = std::min(hi[0], hi[1]);
            float* yo = yrow - g.pl;
            for (int64_t kx = 0; kx < 2; ++kx) {
              const float* sk = kx ? s1 : s0;
              for (int64_t ix = lo[kx]; ix < std::min(a, hi[kx]); ++ix) yo[2 * ix + kx] = sk[ix] + b;
              for (int64_t ix = std::max(e, lo[kx]); ix < hi[kx]; ++ix) yo[2 * ix + kx] = sk[ix] + b;
            }
            for (int64_t ix = a; ix < e; ++ix) {
              yo[2 * ix] = s0[ix] + b;
              yo[2 * ix + 1] = s1[ix] + b;
            }
            continue;
          }
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const float* src = src0 + kx * ncols;
            float* yo = yrow + kx * g.dw - g.pl;
            const int64_t a = lo[kx], e = hi[kx];
            if (noOverlap) {
              if (g.sw == 1)
                for (int64_t ix = a; ix < e; ++ix) yo[ix] = src[ix] + b;
              else
                for (int64_t ix = a; ix < e; ++ix) yo[ix * g.sw] = src[ix] + b;
            } else {
              if (g.sw == 1)
                for (int64_t ix = a; ix < e; ++ix) yo[ix] += src[ix];
              else
                for (int64_t ix = a; ix < e; ++ix) yo[ix * g.sw] += src[ix];
            }
          }
        }
    }
  }
  if (ep.act != Act::kNone)
    for (int64_t m = 0; m < g.mg; ++m) {
      float* p = ybase + m * plane + oy0 * g.ow;
      vm::actRow(ep, p, p, bandLen);
    }
}

}  // namespace

int fConvTranspose(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("ConvTranspose", a, in, nin, out, nout, ctx); };
  if (nin < 2 || nout < 1) return fallback();
  const Tensor& X = in[0];
  const Tensor& Wt = in[1];
  const Tensor* B = nin > 2 && in[2].present() ? &in[2] : nullptr;
  Tensor& Y = out[0];
  const int r = X.rank;
  if (X.dtype != kF32 || Wt.dtype != kF32 || Y.dtype != kF32 || (r != 3 && r != 4) || Wt.rank != r ||
      Y.rank != r || (B && (B->dtype != kF32 || B->rank != 1)))
    return fallback();
  SpatialAttrs sa;
  sa.kernelShape = a.ints("kernel_shape");
  sa.strides = a.ints("strides");
  sa.dilations = a.ints("dilations");
  sa.pads = a.ints("pads");
  sa.outputPadding = a.ints("output_padding");
  sa.outputShape = a.ints("output_shape");
  if (!parseAutoPad(a.s("auto_pad", "NOTSET"), &sa.autoPad)) return fallback();
  std::vector<int64_t> inDims(X.dims + 2, X.dims + r), kernel(Wt.dims + 2, Wt.dims + r);
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel) return fallback();
  SpatialGeometry sg;
  if (!resolveConvTransposeGeometry(inDims, kernel, sa, &sg).empty()) return fallback();
  TGeom g;
  g.n = X.dims[0];
  g.c = X.dims[1];
  g.group = a.i("group", 1);
  if (g.group <= 0 || Wt.dims[0] != g.c || g.c % g.group) return fallback();
  g.cg = g.c / g.group;
  g.mg = Wt.dims[1];
  g.m = g.mg * g.group;
  const bool oneD = r == 3;
  g.h = oneD ? 1 : X.dims[2];
  g.w = X.dims[r - 1];
  g.oh = oneD ? 1 : sg.out[0];
  g.ow = sg.out[sg.nsp - 1];
  g.kh = oneD ? 1 : kernel[0];
  g.kw = kernel[sg.nsp - 1];
  g.sh = oneD ? 1 : sg.stride[0];
  g.sw = sg.stride[sg.nsp - 1];
  g.dh = oneD ? 1 : sg.dilation[0];
  g.dw = sg.dilation[sg.nsp - 1];
  g.pt = oneD ? 0 : sg.padBegin[0];
  g.pl = sg.padBegin[sg.nsp - 1];
  if (Y.dims[0] != g.n || Y.dims[1] != g.m || Y.dims[r - 1] != g.ow || (!oneD && Y.dims[2] != g.oh) ||
      (B && B->dims[0] != g.m))
    return fallback();
  if (Y.numel() == 0) return 0;

  const float* x = X.as<float>();
  const float* w = Wt.as<float>();
  const float* bias = B ? B->as<float>() : nullptr;
  float* y = Y.as<float>();
  const Epilogue ep = Epilogue::fromAttrs(a);
  const int64_t kk = g.kh * g.kw, rowsA = g.mg * kk;
  if (X.numel() == 0) {  // no input pixels: the output is the bias everywhere
    for (int64_t i = 0; i < g.n * g.m; ++i)
      std::fill(y + i * g.oh * g.ow, y + (i + 1) * g.oh * g.ow, applyAct(ep, bias ? bias[i % g.m] : 0.f));
    return 0;
  }
  const bool noOverlap = g.sh >= (g.kh - 1) * g.dh + 1 && g.sw >= (g.kw - 1) * g.dw + 1;
  // Every output written by exactly one tap: unit-dilation taps that tile the stride, and the
  // tiled extent (h * sh - pt rows) reaching the end (output_padding beyond the end pads does not).
  auto dense = [](int64_t k, int64_t s, int64_t d) { return s == k && (d == 1 || k == 1); };
  const bool exactCover = noOverlap && dense(g.kh, g.sh, g.dh) && dense(g.kw, g.sw, g.dw) &&
                          g.h * g.sh - g.pt >= g.oh && g.w * g.sw - g.pl >= g.ow;

  // Constant weights: every group's W_g^T packed once per handle into the GEMM's A panels.
  const float* wPacked = nullptr;
  const int64_t wStride = fast::prepackedASize(rowsA, g.cg);
  if (ctx.constant(1)) {
    const fast::Prepacked* pk = ctx.state->getOr<fast::Prepacked>([&] {
      return fast::Prepacked::make(wStride * g.group, [&](float* d) {
        for (int64_t gi = 0; gi < g.group; ++gi)
          fast::prepackA(fast::MatRef{w + gi * g.cg * rowsA, 1, rowsA}, rowsA, g.cg, d + gi * wStride);
      });
    });
    if (pk) wPacked = pk->data();
  }

  // Bands of output rows: about 64K floats of cols per band (an L2-sized buffer), and enough items
  // for every thread.
  const int threads = ctx.pool ? ctx.pool->threads() : 1;
  const int64_t perInRow = std::max<int64_t>(1, rowsA * g.w);
  int64_t inRows = std::max<int64_t>(1, (int64_t{64} << 10) / perInRow);
  int64_t bandRows = std::min(g.oh, inRows * g.sh);
  const int64_t planes = g.n * g.group;
  const int64_t wantBands = ceilDiv(2 * threads, planes);
  if (ceilDiv(g.oh, bandRows) < wantBands) bandRows = std::max<int64_t>(1, ceilDiv(g.oh, wantBands));
  const int64_t bands = ceilDiv(g.oh, bandRows);
  const int64_t items = planes * bands;
  auto item = [&](int64_t it, ThreadPool* gemmPool) {
    const int64_t band = it % bands, ng = it / bands;
    const int64_t n = ng / g.group, gi = ng % g.group;
    const int64_t oy0 = band * bandRows, oy1 = std::min(g.oh, oy0 + bandRows);
    runBand(g, x, w, wPacked ? wPacked + gi * wStride : nullptr, bias, y, ep, noOverlap, exactCover, n, gi,
            oy0, oy1, gemmPool);
  };
  if (threads > 1 && items >= threads) {
    parallelFor(ctx.pool, items, 1, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) item(it, nullptr);
    });
  } else {
    for (int64_t it = 0; it < items; ++it) item(it, ctx.pool);
  }
  return 0;
}

}  // namespace mgrt
