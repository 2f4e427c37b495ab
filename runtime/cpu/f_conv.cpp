// Fast 2-D convolution (float32, NCHW): Y = act(conv(X, W) + B + residual).
//
// Per image and group the convolution is the GEMM W_g[Mg, Cg*kh*kw] x cols[Cg*kh*kw, OH*OW]:
//  - 1x1, stride 1, no padding: cols is X itself (a strided view), no copy beyond GEMM packing;
//  - otherwise the GEMM's B packer builds the im2col panels straight from X (packConvB), so the
//    only scratch is the GEMM's own KC x NC panel buffer (bounded, thread-local).
//  - 1x1 with a stride and no padding: the sampled pixels gathered once, then as 1x1 stride 1;
//  - grouped layers, and large kernels with few output channels: the direct kernel
//    (f_conv_direct.cpp) instead;
//  - at most 4 input channels (a network's stem) with 8 or more output channels: the stem kernel
//    (f_conv_stem.cpp), output channels broadcast against 16-pixel vectors of a padded,
//    column-phase-split copy of the image;
//  - ungrouped layers with K >= 128 and at least 32 output channels (3/4 of their 32-channel
//    blocks busy): spatial kernels and strided 1x1 layers at any size, unit-stride 1x1 layers on
//    planes of 16 to 256 pixels or with 256+ input channels: the channel-lane kernel
//    (f_conv_lanes.cpp), 32 output channels in the lanes against broadcast input pixels, no
//    im2col (ResNet-50's 3x3 layers 133-170 -> 175-200 GFLOP/s on one core);
// Bias, residual and activation are the GEMM epilogue. Depthwise convolutions (one input channel
// per group) with at least 12 channels run with 16 channels per vector (f_conv_dw.cpp, AVX-512);
// the others (channel multipliers, few channels, other ISAs) run the row kernel below, threaded
// over planes: each plane is copied into a zero-padded,
// stride-phase-split scratch and the outputs accumulate in registers, several vectors (or rows)
// at a time. (Strided ones ran as one pass per tap over the output row until the blocked kernel
// beat them: 5x5/2 240@28 0.52 -> 0.22 ms, 3x3/2 144@56 0.35 -> 0.31 ms, kernel_bench.)
// A residual placed in the output buffer (in-place) is read where it is (each output's residual is
// read right before that output is written; the GEMM adds its K slices onto it); one that only
// partly overlaps the output is read from a copy.
// 1-D convolutions run as 2-D ones on a single row (they went to the reference kernel before: an
// STFT as a 1 -> 257 channel convolution took 110 ms there); one input channel under a long 1-D
// kernel that none of the AVX-512 kernels takes is a GEMM on a strided view of the row (see
// rowView). 3-D convolutions and other dtypes fall back to the reference kernel.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "f_conv.h"
#include "f_gemm.h"
#include "f_vmath.h"
#include "k_nn_shapes.h"
#include "mg_threadpool.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mgrt {
namespace {

using conv::ConvGeom;

// im2col source for one (image, group): rows k = (c * kh + ky) * kw + kx, columns = output pixels.
struct ConvPack {
  const float* x;  // first channel of the group in this image
  const ConvGeom* g;
};

// Valid t range [lo, hi) of 0 <= ix0 + t * s < w for t in [0, len).
inline void validRange(int64_t ix0, int64_t s, int64_t w, int64_t len, int64_t* lo, int64_t* hi) {
  int64_t l = ix0 >= 0 ? 0 : (-ix0 + s - 1) / s;
  int64_t h = ix0 > w - 1 ? 0 : (w - 1 - ix0) / s + 1;
  *lo = std::min(l, len);
  *hi = std::max(*lo, std::min(h, len));
}

// Copies one run of an im2col row: ds[t] = src[t * s] for t in [lo, hi), zero for the rest of
// [0, len). src may point outside the input plane (a padded column): only [lo, hi) is read.
inline void copyRun(float* ds, const float* src, int64_t s, int64_t len, int64_t lo, int64_t hi) {
#if defined(__AVX512F__)
  const __m512i step = vm::strideLanes(s);
  for (int64_t t0 = 0; t0 < len; t0 += 16) {
    const __mmask16 store = vm::tailMask(len - t0);
    const __mmask16 load = static_cast<__mmask16>(vm::rangeMask(lo - t0, hi - t0) & store);
    const float* from = src + t0 * s;
    __m512 v = s == 1 ? _mm512_maskz_loadu_ps(load, from)
                      : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), load, step, from, 4);
    _mm512_mask_storeu_ps(ds + t0, store, v);
  }
#else
  for (int64_t t = 0; t < lo; ++t) ds[t] = 0.f;
  if (s == 1) {
    if (hi > lo) std::memcpy(ds + lo, src + lo, sizeof(float) * (hi - lo));
  } else {
    for (int64_t t = lo; t < hi; ++t) ds[t] = src[t * s];
  }
  for (int64_t t = hi; t < len; ++t) ds[t] = 0.f;
#endif
}

#if defined(__AVX512F__)
// One 16-column move of an im2col panel row: d[dst + l] = x_c[src + l * stride] for the lanes in
// load, zero for the other lanes in store.
struct ChunkOp {
  int64_t src;
  int32_t dst;
  __mmask16 load, store;
};

// Packs im2col panels (AVX-512). Where a panel row's values come from depends on the kernel tap
// (ky, kx) and the panel's pixels, never on the channel: so per panel, each tap's row is compiled
// once into a few ChunkOps (source offsets within a channel plane, padding as cleared mask bits),
// and each of the kc rows then runs its tap's ops on its channel's plane: one masked load (or
// gather, for strides above 1) and one masked store per 16 columns, no bounds test, no division.
// Pays off when each tap is reused by several channels in the slice (see packConvB).
void packConvBTaps(const void* self, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc) {
  const ConvPack& p = *static_cast<const ConvPack*>(self);
  const ConvGeom& g = *p.g;
  const int nrMax = fast::gemmNR();
  const int64_t kk = g.kh * g.kw, hw = g.h * g.w;
  static thread_local std::vector<ChunkOp> ops;
  static thread_local std::vector<int32_t> tapBegin;
  static thread_local std::vector<__mmask16> masks;  // [run][kx]: the run's valid columns
  tapBegin.resize(kk + 1);
  const __m512i step = vm::strideLanes(g.sw);
  for (int64_t jp = 0; jp < nc; jp += nrMax, dst += kc * nrMax) {
    const int64_t nr = std::min<int64_t>(nrMax, nc - jp);
    // The panel's runs of at most 16 pixels along one output row, and each run's valid columns
    // per kx (per ky only the row test differs).
    struct Run {
      int64_t jj, len, iy0, ix0;
    };
    Run runs[80];
    int nrun = 0;
    for (int64_t jj = 0; jj < nr;) {
      int64_t pix = j0 + jp + jj, oy = pix / g.ow, ox = pix % g.ow;
      int64_t len = std::min({nr - jj, g.ow - ox, int64_t{16}});
      runs[nrun++] = Run{jj, len, oy * g.sh - g.pt, ox * g.sw - g.pl};
      jj += len;
    }
    masks.resize(static_cast<size_t>(nrun * g.kw));
    for (int r = 0; r < nrun; ++r)
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        int64_t lo, hi;
        validRange(runs[r].ix0 + kx * g.dw, g.sw, g.w, runs[r].len, &lo, &hi);
        masks[r * g.kw + kx] = vm::rangeMask(lo, hi);
      }
    ops.clear();
    for (int64_t t = 0; t < kk; ++t) {
      tapBegin[t] = static_cast<int32_t>(ops.size());
      const int64_t ky = t / g.kw, kx = t % g.kw;
      for (int r = 0; r < nrun; ++r) {
        const Run& rn = runs[r];
        int64_t iy = rn.iy0 + ky * g.dh;
        bool rowOk = iy >= 0 && iy < g.h;
        ops.push_back(ChunkOp{rowOk ? iy * g.w + rn.ix0 + kx * g.dw : 0, static_cast<int32_t>(rn.jj),
                              rowOk ? masks[r * g.kw + kx] : static_cast<__mmask16>(0), vm::tailMask(rn.len)});
      }
      for (int64_t jj = nr; jj < nrMax; jj += 16)  // columns past the matrix: zeros
        ops.push_back(ChunkOp{0, static_cast<int32_t>(jj), 0, vm::tailMask(nrMax - jj)});
    }
    tapBegin[kk] = static_cast<int32_t>(ops.size());
    int64_t c = k0 / kk, t = k0 % kk;
    for (int64_t k = 0; k < kc; ++k) {
      float* d = dst + k * nrMax;
      const float* xc = p.x + c * hw;
      for (int32_t o = tapBegin[t], oe = tapBegin[t + 1]; o < oe; ++o) {
        const ChunkOp& op = ops[o];
        __m512 v = g.sw == 1 ? _mm512_maskz_loadu_ps(op.load, xc + op.src)
                             : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), op.load, step, xc + op.src, 4);
        _mm512_mask_storeu_ps(d + op.dst, op.store, v);
      }
      if (++t == kk) {
        t = 0;
        ++c;
      }
    }
  }
}
#endif

// Packs im2col panels: per NR-wide panel, the panel's output pixels are cut into runs along
// output rows (segments); each k row (c, ky, kx) of the panel is then one copyRun per segment.
// The valid column range of a segment depends only on kx, so it is computed once per panel
// (no division in the k loop).
void packConvBRows(const void* self, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc) {
  const ConvPack& p = *static_cast<const ConvPack*>(self);
  const ConvGeom& g = *p.g;
  const int nrMax = fast::gemmNR();
  const int64_t kk = g.kh * g.kw, hw = g.h * g.w;
  struct Seg {
    int64_t jj, len, iy0, ix0;
  };
  Seg segs[80];
  static thread_local std::vector<int64_t> range;  // [seg][kx] -> lo, hi
  if (static_cast<int64_t>(range.size()) < 2 * 80 * g.kw) range.resize(2 * 80 * g.kw);
  for (int64_t jp = 0; jp < nc; jp += nrMax, dst += kc * nrMax) {
    int64_t nr = std::min<int64_t>(nrMax, nc - jp);
    int ns = 0;
    for (int64_t jj = 0; jj < nr;) {
      int64_t pix = j0 + jp + jj, oy = pix / g.ow, ox = pix % g.ow;
      int64_t len = std::min(nr - jj, g.ow - ox);
      segs[ns++] = Seg{jj, len, oy * g.sh - g.pt, ox * g.sw - g.pl};
      jj += len;
    }
    for (int si = 0; si < ns; ++si)
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        int64_t* r = &range[2 * (si * g.kw + kx)];
        validRange(segs[si].ix0 + kx * g.dw, g.sw, g.w, segs[si].len, &r[0], &r[1]);
      }
    int64_t c = k0 / kk, rem = k0 % kk, ky = rem / g.kw, kx = rem % g.kw;
    for (int64_t k = 0; k < kc; ++k) {
      float* d = dst + k * nrMax;
      const float* xc = p.x + c * hw;
      for (int si = 0; si < ns; ++si) {
        const Seg& sg = segs[si];
        int64_t iy = sg.iy0 + ky * g.dh;
        const int64_t* r = &range[2 * (si * g.kw + kx)];
        if (iy < 0 || iy >= g.h)
          copyRun(d + sg.jj, xc, g.sw, sg.len, 0, 0);
        else
          copyRun(d + sg.jj, xc + iy * g.w + sg.ix0 + kx * g.dw, g.sw, sg.len, r[0], r[1]);
      }
      for (int64_t jj = nr; jj < nrMax; ++jj) d[jj] = 0.f;
      if (++kx == g.kw) {
        kx = 0;
        if (++ky == g.kh) {
          ky = 0;
          ++c;
        }
      }
    }
  }
}

// The B packer convolution hands sgemm: the tap program where a slice has several channels per
// tap (its setup is per panel and tap), the per-row runs otherwise (e.g. a 7x7 stem on 3 channels).
void packConvB(const void* self, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc) {
#if defined(__AVX512F__)
  const ConvGeom& g = *static_cast<const ConvPack*>(self)->g;
  if (kc >= 4 * g.kh * g.kw) return packConvBTaps(self, dst, k0, kc, j0, nc);
#endif
  packConvBRows(self, dst, k0, kc, j0, nc);
}

// Depthwise (Cg == 1): output channel m reads input channel m / Mg. Each input plane is first
// copied into a zero-padded, stride-phase-split scratch (phase q holds padded columns s*c + q), so
// every kernel tap of a run of kDW outputs is one contiguous vector load: the accumulators stay in
// registers and no bounds checks remain in the inner loop.
#if defined(__AVX512F__)
constexpr int kDW = 16;
#elif defined(__AVX__)
constexpr int kDW = 8;
#else
constexpr int kDW = 4;
#endif
typedef float DV __attribute__((vector_size(kDW * 4)));
typedef float DVU __attribute__((vector_size(kDW * 4), aligned(4), may_alias));
inline DV dload(const float* p) { return *reinterpret_cast<const DVU*>(p); }
inline void dstore(float* p, DV v) { *reinterpret_cast<DVU*>(p) = v; }

// N independent FMA chains over a plane's taps: v[j] = bias + sum over t of w[t] * the vector at
// base[j] + toff[t] (one chain would wait on the FMA latency at every tap). Returned by value, so
// the accumulators stay in registers.
template <int N>
struct TapSums {
  DV v[N];
};
template <int N>
inline TapSums<N> tapSums(const float* const (&base)[N], const float* w, const int64_t* toff, int64_t taps,
                          DV bias) {
  TapSums<N> s;
#pragma GCC unroll 4
  for (int j = 0; j < N; ++j) s.v[j] = bias;
  for (int64_t t = 0; t < taps; ++t) {
    const DV wt = DV{} + w[t];
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) s.v[j] += wt * dload(base[j] + toff[t]);
  }
  return s;
}

void depthwise(const ConvGeom& g, const float* X, const float* W, const float* B, const float* R,
               float* Y, const Epilogue& ep, ThreadPool* pool) {
  int64_t mg = g.m / g.group;
  const int64_t hp = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;  // padded rows read
  const int64_t wq = g.ow + ((g.kw - 1) * g.dw) / g.sw + 1 + kDW;  // phase row width (+ slack)
  const int64_t planeSize = hp * g.sw * wq;
  // Scratch offset of each kernel tap (ky, kx): row ky * dh, phase (kx * dw) % sw, column / sw.
  const int64_t taps = g.kh * g.kw;
  std::vector<int64_t> toffv(taps);
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t off = kx * g.dw;
      toffv[ky * g.kw + kx] = (ky * g.dh * g.sw + off % g.sw) * wq + off / g.sw;
    }
  const int64_t* toff = toffv.data();
  parallelFor(pool, g.n * g.m, 1, [&](int64_t b, int64_t e) {
    static thread_local std::vector<float> scratch;
    if (static_cast<int64_t>(scratch.size()) < planeSize) scratch.resize(planeSize);
    float* pp = scratch.data();
    int64_t lastIn = -1;
    for (int64_t plane = b; plane < e; ++plane) {
      int64_t n = plane / g.m, m = plane % g.m, cin = n * g.c + m / mg;
      if (cin != lastIn) {  // channel multiplier: consecutive planes share the input
        lastIn = cin;
        const float* x = X + cin * g.h * g.w;
        for (int64_t r = 0; r < hp; ++r) {
          int64_t iy = r - g.pt;
          for (int64_t q = 0; q < g.sw; ++q) {
            float* dst = pp + (r * g.sw + q) * wq;
            if (iy < 0 || iy >= g.h) {
              copyRun(dst, x, g.sw, wq, 0, 0);  // all zeros
              continue;
            }
            const float* row = x + iy * g.w;
            int64_t lo, hi, ix0 = q - g.pl;  // dst[c] = row[ix0 + sw * c] where in range
            validRange(ix0, g.sw, g.w, wq, &lo, &hi);
            copyRun(dst, row + ix0, g.sw, wq, lo, hi);
          }
        }
      }
      const float* w = W + m * g.kh * g.kw;
      float* y = Y + plane * g.oh * g.ow;
      const float* res = R ? R + plane * g.oh * g.ow : nullptr;
      const DV bias = DV{} + (B ? B[m] : 0.f);
      // Stores cnt (at most kDW) outputs of acc at row oy, column ox, with residual and activation.
      auto storeAt = [&](int64_t oy, int64_t ox, DV acc, int64_t cnt) {
        float* yr = y + oy * g.ow;
        const float* rr = res ? res + oy * g.ow : nullptr;
        if (cnt == kDW) {
          if (rr) acc += dload(rr + ox);
          if (ep.act == Act::kRelu) acc = acc > DV{} ? acc : DV{};
          dstore(yr + ox, acc);
          return;
        }
#if defined(__AVX512F__)
        const __mmask16 mk = vm::tailMask(cnt);
        if (rr) acc += (DV)_mm512_maskz_loadu_ps(mk, rr + ox);
        if (ep.act == Act::kRelu) acc = acc > DV{} ? acc : DV{};
        _mm512_mask_storeu_ps(yr + ox, mk, (__m512)acc);
#else
        alignas(64) float tmp[kDW];
        dstore(tmp, acc);
        for (int64_t t = 0; t < cnt; ++t) {
          float v = tmp[t] + (rr ? rr[ox + t] : 0.f);
          yr[ox + t] = ep.act == Act::kRelu ? (v > 0.f ? v : 0.f) : v;
        }
#endif
      };
      if (g.ow <= kDW) {
        // Narrow planes (one vector per row, e.g. 14x14 or 7x7): NR rows at a time.
        int64_t oy = 0;
        auto rows = [&](auto nrTag) {
          constexpr int NR = decltype(nrTag)::value;
          const float* base[NR];
          for (int r = 0; r < NR; ++r) base[r] = pp + (oy + r) * g.sh * g.sw * wq;
          const TapSums<NR> acc = tapSums<NR>(base, w, toff, taps, bias);
          for (int r = 0; r < NR; ++r) {
            storeAt(oy + r, 0, acc.v[r], g.ow);
            if (ep.act != Act::kNone && ep.act != Act::kRelu) vm::actRow(ep, y + (oy + r) * g.ow, y + (oy + r) * g.ow, g.ow);
          }
          oy += NR;
        };
        while (oy + 4 <= g.oh) rows(std::integral_constant<int, 4>{});
        while (oy + 2 <= g.oh) rows(std::integral_constant<int, 2>{});
        while (oy < g.oh) rows(std::integral_constant<int, 1>{});
        continue;
      }
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        float* yr = y + oy * g.ow;
        const float* rowBase = pp + oy * g.sh * g.sw * wq;
        int64_t ox = 0;
        // NV vectors of outputs at a time: 4, then 2, then 1 (the last one maybe partial).
        auto block = [&](auto nvTag) {
          constexpr int NV = decltype(nvTag)::value;
          const float* base[NV];
          for (int v = 0; v < NV; ++v) base[v] = rowBase + ox + v * kDW;
          const TapSums<NV> acc = tapSums<NV>(base, w, toff, taps, bias);
#pragma GCC unroll 4
          for (int v = 0; v < NV; ++v) storeAt(oy, ox + v * kDW, acc.v[v], std::min<int64_t>(kDW, g.ow - ox - v * kDW));
          ox += NV * kDW;
        };
        while (ox + 4 * kDW <= g.ow) block(std::integral_constant<int, 4>{});
        while (ox + 2 * kDW <= g.ow) block(std::integral_constant<int, 2>{});
        while (ox < g.ow) block(std::integral_constant<int, 1>{});
        if (ep.act != Act::kNone && ep.act != Act::kRelu)
          vm::actRow(ep, yr, yr, g.ow);
      }
    }
  });
}

}  // namespace

namespace conv {

bool resolveGeom(const Attrs& a, const Tensor& X, const Tensor& W, const Tensor& Y, ConvGeom* out) {
  const int r = X.rank;
  if ((r != 3 && r != 4) || W.rank != r || Y.rank != r) return false;
  SpatialAttrs sa;
  sa.kernelShape = a.ints("kernel_shape");
  sa.strides = a.ints("strides");
  sa.dilations = a.ints("dilations");
  sa.pads = a.ints("pads");
  if (!parseAutoPad(a.s("auto_pad", "NOTSET"), &sa.autoPad)) return false;
  SpatialGeometry sg;
  std::string err = resolveConvGeometry("Conv", std::vector<int64_t>(X.dims + 2, X.dims + r),
                                        std::vector<int64_t>(W.dims + 2, W.dims + r), sa, &sg);
  // A 1-D convolution [n, c, w] is the 2-D one on [n, c, 1, w] with a 1 x kw kernel.
  const bool oneD = r == 3;
  const int last = sg.nsp - 1;
  ConvGeom g;
  g.n = X.dims[0];
  g.c = X.dims[1];
  g.h = oneD ? 1 : X.dims[2];
  g.w = X.dims[r - 1];
  g.m = W.dims[0];
  g.group = a.i("group", 1);
  if (!err.empty() || g.group <= 0 || g.c % g.group || g.m % g.group || W.dims[1] != g.c / g.group ||
      Y.dims[0] != g.n || Y.dims[1] != g.m || (!oneD && Y.dims[2] != sg.out[0]) || Y.dims[r - 1] != sg.out[last])
    return false;
  g.oh = oneD ? 1 : sg.out[0];
  g.ow = sg.out[last];
  g.kh = oneD ? 1 : W.dims[2];
  g.kw = W.dims[r - 1];
  g.sh = oneD ? 1 : sg.stride[0];
  g.sw = sg.stride[last];
  g.dh = oneD ? 1 : sg.dilation[0];
  g.dw = sg.dilation[last];
  g.pt = oneD ? 0 : sg.padBegin[0];
  g.pl = sg.padBegin[last];
  *out = g;
  return true;
}

}  // namespace conv

int fConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("Conv", a, in, nin, out, nout, ctx); };
  if (nin < 2 || nout < 1) return fallback();
  const Tensor& X = in[0];
  const Tensor& Wt = in[1];
  const Tensor* B = nin > 2 && in[2].present() ? &in[2] : nullptr;
  const Tensor* R = nin > 3 && in[3].present() ? &in[3] : nullptr;
  Tensor& Y = out[0];
  const int r = X.rank;
  if (X.dtype != kF32 || Wt.dtype != kF32 || Y.dtype != kF32 || (r != 3 && r != 4) || Wt.rank != r ||
      Y.rank != r || (B && (B->dtype != kF32 || B->numel() != Wt.dims[0])) ||
      (R && (R->dtype != kF32 || R->numel() != Y.numel())))
    return fallback();
  ConvGeom g;
  if (!conv::resolveGeom(a, X, Wt, Y, &g)) return fallback();
  if (Y.numel() == 0) return 0;

  const float* x = X.as<float>();
  const float* w = Wt.as<float>();
  const float* bias = B ? B->as<float>() : nullptr;
  // A residual that is Y itself (placed in place by the memory planner) is read where it is:
  // every kernel below reads an output's residual right before writing that output, and the
  // GEMM accumulates onto it (sgemm). One that partly overlaps Y is read from a copy.
  std::vector<float> rCopy;
  if (R && fast::overlaps(*R, Y) && R->data != Y.data) rCopy.assign(R->as<float>(), R->as<float>() + R->numel());
  const float* res = R ? (rCopy.empty() ? R->as<float>() : rCopy.data()) : nullptr;
  float* y = Y.as<float>();
  Epilogue ep = Epilogue::fromAttrs(a);
  int64_t cg = g.c / g.group, mg = g.m / g.group;
  // One input channel per output channel: the depthwise kernels, except a single-channel input
  // under a large kernel (a spectrogram's 41x11 stem with 32 output channels: 451 taps per output
  // plane as row passes, 7.5 ms; the im2col GEMM shares each packed row among the 32 channels).
  if (cg == 1 && (g.group > 1 || g.kh * g.kw <= 25)) {
    if (conv::depthwiseRowsApplies(g))
      conv::depthwiseRows(g, x, w, bias, res, y, ep, ctx.pool);
    else if (conv::depthwiseC16Applies(g))
      conv::depthwiseC16(g, x, w, bias, res, y, ep, ctx.pool);
    else
      depthwise(g, x, w, bias, res, y, ep, ctx.pool);
    return 0;
  }
#if defined(__AVX512F__)
  // The stem and direct kernels read the weights in their own layouts: packed once per handle
  // when constant (into the step's state), else per call into wLocal.
  std::vector<float> wLocal;
  auto packed = [&](int64_t floats, void (*pack)(const ConvGeom&, const float*, float*)) -> const float* {
    if (ctx.constant(1)) {
      const fast::Prepacked* pk = ctx.state->getOr<fast::Prepacked>(
          [&] { return fast::Prepacked::make(floats, [&](float* d) { pack(g, w, d); }); });
      if (pk) return pk->data();
    }
    wLocal.resize(static_cast<size_t>(floats));
    pack(g, w, wLocal.data());
    return wLocal.data();
  };
  if (conv::stemApplies(g)) {
    conv::stemConv(g, x, packed(conv::stemPackedSize(g), conv::stemPackWeights), bias, res, y, ep, ctx.pool);
    return 0;
  }
  if (conv::lanesApplies(g)) {
    conv::lanesConv(g, x, packed(conv::lanesPackedSize(g), conv::lanesPackWeights), bias, res, y, ep, ctx.pool);
    return 0;
  }
  if (conv::groupedC16Applies(g)) {
    conv::groupedC16Conv(g, x, packed(conv::groupedC16PackedSize(g), conv::groupedC16PackWeights), bias, res, y,
                         ep, ctx.pool);
    return 0;
  }
  if (conv::directApplies(g)) {
    conv::directConv(g, x, packed(conv::directPackedSize(g), conv::directPackWeights), bias, res, y, ep, ctx.pool);
    return 0;
  }
#endif
  int64_t K = cg * g.kh * g.kw, P = g.oh * g.ow;
  // One input channel, one row, a long kernel (an STFT written as a 1-D convolution: 1 -> 257
  // channels, kernel 512, stride 160; kernels up to 25 taps went to the depthwise kernels above):
  // the im2col matrix B(kx, ox) = x[ox * sw + kx * dw - pl] is a strided view of the (padded) row,
  // handed to the GEMM as it is. With AVX-512 the stem (K <= 1024, 8+ output channels) and
  // channel-lane (32+) kernels above take such layers first, measured a little faster
  // (kernel_bench --cpu-time, 1 core: 512/160 1->257 on 48512 samples 0.40-0.42 ms against
  // 0.44-0.46 ms for this view, 2048/512 1->1025 1.96-2.04 against 2.10-2.15 ms). (The reference
  // kernel took 110 ms on a 48000-sample signal.)
  const bool rowView = g.c == 1 && g.group == 1 && g.h == 1 && g.kh == 1 && g.oh == 1;
  bool direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 &&
                g.oh == g.h && g.ow == g.w;
  // 1x1, strided, no padding: every output pixel reads input (oy*sh, ox*sw), inside the image.
  bool subsample = !direct && g.kh == 1 && g.kw == 1 && g.pt == 0 && g.pl == 0 &&
                   (g.oh - 1) * g.sh < g.h && (g.ow - 1) * g.sw < g.w;
  // Constant weights are packed once per model handle, every group's MR-high panels.
  const float* wPacked = nullptr;
  int64_t wPackedStride = fast::prepackedASize(mg, K);
  if (ctx.constant(1) && ((!direct && !subsample) || (mg > 4 && P > 4))) {
    const fast::Prepacked* pk = ctx.state->getOr<fast::Prepacked>([&] {
      return fast::Prepacked::make(wPackedStride * g.group, [&](float* d) {
        for (int64_t gi = 0; gi < g.group; ++gi)
          fast::prepackA(fast::MatRef{w + gi * mg * K, K, 1}, mg, K, d + gi * wPackedStride);
      });
    });
    if (pk) wPacked = pk->data();
  }
  auto one = [&](int64_t job, ThreadPool* pool) {
    int64_t n = job / g.group, gi = job % g.group;
    const float* xg = x + (n * g.c + gi * cg) * g.h * g.w;
    int64_t yoff = (n * g.m + gi * mg) * P;
    fast::GemmSpec s;
    s.m = mg;
    s.n = P;
    s.k = K;
    s.a = fast::MatRef{w + gi * mg * K, K, 1};
    if (wPacked) s.aPacked = wPacked + gi * wPackedStride;
    ConvPack cp{xg, &g};
    static thread_local std::vector<float> sub;  // grows once, reused by every call
    static thread_local std::vector<float> padded;  // rowView with pads: the padded row
    if (direct) {
      s.b = fast::MatRef{xg, g.h * g.w, 1};
    } else if (rowView) {
      const int64_t span = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;  // padded columns read
      const float* row = xg;
      if (g.pl > 0 || span - g.pl > g.w) {
        if (padded.size() < static_cast<size_t>(span)) padded.resize(static_cast<size_t>(span));
        std::fill(padded.begin(), padded.begin() + span, 0.f);
        const int64_t lo = std::min(span, g.pl), hi = std::min(span, g.pl + g.w);
        if (hi > lo) std::memcpy(padded.data() + lo, xg + (lo - g.pl), sizeof(float) * (hi - lo));
        row = padded.data();
      }
      s.b = fast::MatRef{row, g.dw, g.sw};
    } else if (subsample) {
      // A strided 1x1 convolution reads every sh-th row and sw-th column once: gather them into
      // a contiguous [cg, oh, ow] copy, then it is a plain GEMM (the im2col packer would gather
      // them again for every block of output channels).
      if (sub.size() < static_cast<size_t>(cg * P)) sub.resize(static_cast<size_t>(cg * P));
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const float* row = xg + c * g.h * g.w + oy * g.sh * g.w;
          float* d = sub.data() + (c * g.oh + oy) * g.ow;
          for (int64_t ox = 0; ox < g.ow; ++ox) d[ox] = row[ox * g.sw];
        }
      s.b = fast::MatRef{sub.data(), P, 1};
    } else {
      s.packB = packConvB;
      s.packBSelf = &cp;
    }
    s.c = y + yoff;
    s.ldc = P;
    if (bias) s.bias = fast::MatRef{bias + gi * mg, 1, 0};
    if (res) {
      s.res = res + yoff;
      s.ldres = P;
    }
    s.ep = ep;
    fast::sgemm(s, pool);
  };
  int64_t jobs = g.n * g.group;
  int threads = ctx.pool ? ctx.pool->threads() : 1;
  if (threads > 1 && jobs >= threads && (jobs % threads == 0 || jobs >= 4 * threads)) {
    parallelFor(ctx.pool, jobs, 1, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) one(j, nullptr);
    });
  } else {
    for (int64_t j = 0; j < jobs; ++j) one(j, ctx.pool);
  }
  return 0;
}

}  // namespace mgrt
