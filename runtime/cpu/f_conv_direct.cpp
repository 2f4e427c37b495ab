// Direct 2-D convolution (float32, NCHW, AVX-512) for grouped convolutions with unit horizontal
// stride and rows at least 12 wide: ResNeXt's 3x3 layers with 32 groups of 4 to 32 channels; and,
// at the end of the file, a channel-block kernel for groups of 16k output channels at stride 2
// or on rows under 12 (RegNet).
//
// The im2col GEMM (f_conv.cpp) runs one small GEMM per group there (M = 4..32 output channels): the
// panels it packs are used by only that few channels, and tiles of 8 x 32 are mostly partial. Here
// the micro-kernel reads the input image itself: for output channels [m0, m0+8) of a group and 32
// pixels of output row oy, every k = (c, ky, kx) adds weight(m, k) (broadcast from a packed 8-wide
// panel) times two vectors loaded straight from input row iy = oy*sh - pt + ky*dh at column
// ox - pl + kx*dw: with unit stride the 32 pixels' inputs are 32 consecutive floats. All of K
// accumulates in 16 registers, and the tile is written once with its epilogue (bias, residual,
// activation). Rows outside the input skip their taps; columns outside it (padding) and pixels
// past the row's end are masked-off lanes of the loads (a masked-off lane reads nothing).
//
// Tiles: jobs are (image, group, output row, 8-channel block), in that order, so that neighbouring
// jobs share the input rows; each job sweeps its row in tiles of 32 pixels (16 for the last when
// it fits), unmasked where all loads fall inside the row.
//
// Measured (tools/bench/kernel_bench, one thread): ResNeXt g32 3x3 at 56x56 / 28x28 / 14x14
// 18 / 38 / 55 -> 50 / 100 / 89 GFLOP/s. Ungrouped convolutions mostly stay with the im2col
// GEMM, faster there (VGG 3x3 256@56: 150 against 100 GFLOP/s; the input vectors stream from L2 at
// 128 bytes per k step, the GEMM's packed panel stays in L1; on AMD Zen 5 the crossover is at more
// channels, see directApplies), nor below 12 columns (7x7: 7 of 16 lanes busy).
#include "f_conv.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "f_vmath.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace conv {
namespace {

constexpr int kMR = 8;   // output channels per tile (the broadcast operand)
constexpr int kW = 16;   // pixels per vector
constexpr int kMaxNV = 2;
typedef float V __attribute__((vector_size(64)));  // the epilogue's arithmetic, as GCC vectors

int64_t blocksPerGroup(const ConvGeom& g) { return (g.m / g.group + kMR - 1) / kMR; }
int64_t kPerGroup(const ConvGeom& g) { return g.c / g.group * g.kh * g.kw; }

// Accumulates one tile into acc (a local array of the caller, kept in registers):
// acc[i][v] = sum over k of a[k][i] * x(k, pixel ox + v*16 + lane). The geometry is read into
// locals first (stores to memory inside the loop would otherwise force reloads).
// EDGE: the loads use masks[kx * NV + v] (valid lanes of that tap's vector).
#define MG_DIRECT_ACCUMULATE(NV, EDGE)                                                          \
  do {                                                                                          \
    _Pragma("GCC unroll 8") for (int i = 0; i < kMR; ++i)                                      \
        _Pragma("GCC unroll 2") for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();  \
    const int64_t cg = g.c / g.group, hw = g.h * g.w, kh = g.kh, kw = g.kw, dw = g.dw;         \
    const int64_t h = g.h, w = g.w, iy0 = oy * g.sh - g.pt, dh = g.dh;                         \
    const float* ap = a;                                                                        \
    for (int64_t c = 0; c < cg; ++c) {                                                          \
      const float* xc = xg + c * hw + ox - g.pl;                                                \
      for (int64_t ky = 0; ky < kh; ++ky) {                                                     \
        const int64_t iy = iy0 + ky * dh;                                                       \
        if (iy < 0 || iy >= h) {                                                                \
          ap += kw * kMR;                                                                       \
          continue;                                                                             \
        }                                                                                       \
        const float* xp = xc + iy * w;                                                          \
        for (int64_t kx = 0; kx < kw; ++kx, xp += dw, ap += kMR) {                              \
          __m512 b[NV];                                                                         \
          _Pragma("GCC unroll 2") for (int v = 0; v < NV; ++v) b[v] =                           \
              EDGE ? _mm512_maskz_loadu_ps(masks[kx * NV + v], xp + v * kW)                     \
                   : _mm512_loadu_ps(xp + v * kW);                                              \
          _Pragma("GCC unroll 8") for (int i = 0; i < kMR; ++i) {                              \
            const __m512 ai = _mm512_set1_ps(ap[i]);                                            \
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; ++v) acc[i][v] =                    \
                _mm512_fmadd_ps(ai, b[v], acc[i][v]);                                           \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  } while (0)

// Writes the tile's first mcount channels x npix pixels with the epilogue. y / res: the image's
// output / residual; m0: the tile's first output channel.
template <int NV>
inline void writeTile(const ConvGeom& g, __m512 (&acc)[kMR][NV], int64_t m0, int mcount, int npix,
                      int64_t oy, int64_t ox, const float* bias, const float* res, float* y,
                      const Epilogue& ep) {
  const int64_t plane = g.oh * g.ow;
  for (int i = 0; i < mcount; ++i) {
    const int64_t off = (m0 + i) * plane + oy * g.ow + ox;
    float* yr = y + off;
    const float* rr = res ? res + off : nullptr;
    const V bv = V{} + (bias ? bias[m0 + i] : 0.f);
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mk = vm::tailMask(npix - v * kW);
      if (!mk) break;
      V t = (V)acc[i][v] + bv;
      if (rr) t += (V)_mm512_maskz_loadu_ps(mk, rr + v * kW);
      vm::vecAct(ep, t);  // the others: actRow below, on the stored row segment
      _mm512_mask_storeu_ps(yr + v * kW, mk, (__m512)t);
    }
    V probe = V{};
    if (!vm::vecAct(ep, probe)) vm::actRow(ep, yr, yr, npix);
  }
}

template <int NV, bool EDGE>
inline void runTile(const ConvGeom& g, const float* xg, const float* a, int64_t oy, int64_t ox, int npix,
                    const __mmask16* masks, int64_t m0, int mcount, const float* bias, const float* res,
                    float* y, const Epilogue& ep) {
  __m512 acc[kMR][NV];
  MG_DIRECT_ACCUMULATE(NV, EDGE);
  // A copy for the write-back: acc's own address is never taken, so it lives in registers.
  __m512 out[kMR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) out[i][v] = acc[i][v];
  writeTile<NV>(g, out, m0, mcount, npix, oy, ox, bias, res, y, ep);
}

}  // namespace

// Where the im2col GEMM and this kernel cross over for ungrouped layers depends on the core. On
// AMD Zen 5 (EPYC, kernel_bench at one thread, alternating builds) this kernel is faster for 3x3
// layers of up to 64 output channels: DenseNet's 128->32 @56 / @14 115 / 101 -> 147 / 126 GFLOP/s,
// Inception v3's 32->32 @147 70-90 -> 150-185, SqueezeNet's 16->64 @55 134 -> 161, ResNet's 64->64
// @56 146 -> 155; slower from 96 (Inception's 64->96 @35 153 -> 118). On Intel (Sapphire Rapids)
// the GEMM won for 3x3 at 32 channels, so there only 5x5 and larger kernels come here.
bool smallMDirectOnCore() {
  static const bool amd = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") != 0;
  }();
  return amd;
}

bool directApplies(const ConvGeom& g) {
  const int64_t mg = g.m / g.group, cg = g.c / g.group, taps = g.kh * g.kw;
  if (g.sw != 1 || taps <= 1 || mg < 4 || cg < 2 || g.ow < 12) return false;
  if (g.group > 1) return true;
  return (mg <= 32 && taps >= 25) || (mg <= 64 && taps >= 9 && smallMDirectOnCore());
}

int64_t directPackedSize(const ConvGeom& g) { return g.group * blocksPerGroup(g) * kPerGroup(g) * kMR; }

// dst[((gi * blocks + mb) * K + k) * 8 + i] = W[gi * mg + mb * 8 + i][k], zero past the group's
// last channel (k = (c, ky, kx), ONNX's weight order).
void directPackWeights(const ConvGeom& g, const float* w, float* dst) {
  const int64_t mg = g.m / g.group, nmb = blocksPerGroup(g), K = kPerGroup(g);
  for (int64_t gi = 0; gi < g.group; ++gi) packChannelBlocks(w + gi * mg * K, mg, K, kMR, dst + gi * nmb * K * kMR);
}

void directConv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias,
                const float* res, float* y, const Epilogue& ep, ThreadPool* pool) {
  const int64_t mg = g.m / g.group, cg = g.c / g.group, nmb = blocksPerGroup(g), K = kPerGroup(g);
  const int64_t plane = g.oh * g.ow;
  const int64_t jobs = g.n * g.group * g.oh * nmb;
  parallelFor(pool, jobs, 1, [&](int64_t jb, int64_t je) {
    std::vector<__mmask16> masks(static_cast<size_t>(g.kw * kMaxNV));
    for (int64_t job = jb; job < je; ++job) {
      const int64_t mb = job % nmb;
      int64_t r = job / nmb;
      const int64_t oy = r % g.oh;
      r /= g.oh;
      const int64_t gi = r % g.group, n = r / g.group;
      const float* xg = x + (n * g.c + gi * cg) * g.h * g.w;
      const float* a = wPacked + (gi * nmb + mb) * K * kMR;
      const int64_t m0 = gi * mg + mb * kMR;
      const int mcount = static_cast<int>(std::min<int64_t>(kMR, mg - mb * kMR));
      float* yi = y + n * g.m * plane;
      const float* ri = res ? res + n * g.m * plane : nullptr;
      for (int64_t ox = 0; ox < g.ow;) {
        const int npix = static_cast<int>(std::min<int64_t>(kMaxNV * kW, g.ow - ox));
        const int nv = npix > kW ? 2 : 1;
        const int64_t first = ox - g.pl, last = ox - g.pl + (g.kw - 1) * g.dw + nv * kW;  // [first, last)
        if (npix == nv * kW && first >= 0 && last <= g.w) {
          if (nv == 2)
            runTile<2, false>(g, xg, a, oy, ox, npix, nullptr, m0, mcount, bias, ri, yi, ep);
          else
            runTile<1, false>(g, xg, a, oy, ox, npix, nullptr, m0, mcount, bias, ri, yi, ep);
        } else {
          // Valid lanes per tap and vector: input column inside [0, w), pixel inside the tile.
          for (int64_t kx = 0; kx < g.kw; ++kx)
            for (int v = 0; v < nv; ++v) {
              const int64_t base = ox - g.pl + kx * g.dw + v * kW;
              masks[kx * nv + v] = vm::rangeMask(-base, std::min(g.w - base, int64_t{npix} - v * kW));
            }
          if (nv == 2)
            runTile<2, true>(g, xg, a, oy, ox, npix, masks.data(), m0, mcount, bias, ri, yi, ep);
          else
            runTile<1, true>(g, xg, a, oy, ox, npix, masks.data(), m0, mcount, bias, ri, yi, ep);
        }
        ox += npix;
      }
    }
  });
}


// ---- Grouped convolutions with 16k output channels per group, strided or on narrow rows --------
// RegNetX's 3x3 layers (16 channels per group): the first block of each stage has stride 2, and
// the last stage's planes are 7 wide, so neither takes the tiles above (unit stride, rows of 12+).
// Here one vector holds 16 output channels of one pixel: per job (image, group, 16-channel block)
// the group's input planes are copied once into a zero-padded buffer, so that every tap of every
// pixel is in range; then for blocks of ROWS x NP output pixels (a row's NP consecutive pixels,
// ROWS rows at a time where rows are short) each k = (c, ky, kx) adds the packed 16 weights
// times the pixel's input broadcast from the buffer (one pointer per row, the pixel's offset a
// constant j * SW). The block's ROWS * NP accumulators are transposed to the 16 channels' planes
// and written with bias, residual and activation.
// Measured (kernel_bench --cpu-time, 1 thread, AMD EPYC, AVX-512; against the im2col GEMM per
// group these layers took before): RegNetX-400MF 3x3/2 g2 32@112 0.766 -> 0.325 ms, 3x3/2 g25
// 400@14 0.302 -> 0.092 ms, 3x3 g25 400@7 0.135 -> 0.069 ms; ResNeXt g32 1024@7 0.448 -> 0.391 ms.
namespace {

template <int ROWS, int NP, int SW>
void channelBlock(const float* const* rowPtr, const float* wpk, const int64_t* toff, int64_t K,
                  __m512 bias, __m512 (&acc)[ROWS][NP]) {
#pragma GCC unroll 4
  for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < NP; ++j) acc[r][j] = bias;
  const float* p[ROWS];
#pragma GCC unroll 4
  for (int r = 0; r < ROWS; ++r) p[r] = rowPtr[r];
  for (int64_t k = 0; k < K; ++k) {
    const __m512 w = _mm512_loadu_ps(wpk + k * 16);  // (a per-call packing is not 64-byte aligned)
    const int64_t o = toff[k];
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; ++r)
#pragma GCC unroll 16
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_fmadd_ps(w, _mm512_set1_ps(p[r][o + j * SW]), acc[r][j]);
  }
}

}  // namespace

bool groupedC16Applies(const ConvGeom& g) {
  const int64_t mg = g.m / g.group, cg = g.c / g.group;
  return g.group > 1 && mg % 16 == 0 && cg >= 4 && g.kh * g.kw > 1 && g.sh == g.sw &&
         (g.sw == 1 || g.sw == 2) && (g.sw == 2 || g.ow < 12) && cg * g.kh * g.kw <= 4096;
}

int64_t groupedC16PackedSize(const ConvGeom& g) { return g.m * (g.c / g.group) * g.kh * g.kw; }

// dst[((gi * nmb + mb) * K + k) * 16 + i] = W[gi * mg + mb * 16 + i][k] (k = (c, ky, kx)).
void groupedC16PackWeights(const ConvGeom& g, const float* w, float* dst) {
  const int64_t mg = g.m / g.group, nmb = mg / 16, K = (g.c / g.group) * g.kh * g.kw;
  for (int64_t gi = 0; gi < g.group; ++gi)
    for (int64_t mb = 0; mb < nmb; ++mb)
      for (int64_t k = 0; k < K; ++k)
        for (int i = 0; i < 16; ++i)
          dst[((gi * nmb + mb) * K + k) * 16 + i] = w[(gi * mg + mb * 16 + i) * K + k];
}

namespace {

template <int SW>
void groupedC16Job(const ConvGeom& g, const float* pad, int64_t wp, const float* wpk,
                   const int64_t* toff, int64_t K, const float* bias, const float* res, float* y,
                   const Epilogue& ep, bool vecAct) {
  const int64_t P = g.oh * g.ow;
  const __m512 bv = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  // Stores pixels [ox0, ox0 + np) of output row oy from acc (16 channels each).
  auto store = [&](int64_t oy, int64_t ox0, int np, const __m512* acc) {
    __m512 v[16];
    for (int j = 0; j < 16; ++j) v[j] = j < np ? acc[j] : _mm512_setzero_ps();
    vm::transpose16(v);
    const __mmask16 m = vm::tailMask(np);
    for (int i = 0; i < 16; ++i) {
      const int64_t off = i * P + oy * g.ow + ox0;
      __m512 t = v[i];
      if (res) t = _mm512_add_ps(t, _mm512_maskz_loadu_ps(m, res + off));
      vm::vecAct(ep, t);
      _mm512_mask_storeu_ps(y + off, m, t);
      if (!vecAct) vm::actRow(ep, y + off, y + off, np);
    }
  };
  auto rowBase = [&](int64_t oy, int64_t ox0) { return pad + oy * g.sh * wp + ox0 * SW; };
  auto run = [&](auto rowsC, auto npC, int64_t oy, int64_t ox0) {
    constexpr int R = decltype(rowsC)::value, NP = decltype(npC)::value;
    const float* rp[R];
    for (int r = 0; r < R; ++r) rp[r] = rowBase(oy + r, ox0);
    __m512 acc[R][NP];
    channelBlock<R, NP, SW>(rp, wpk, toff, K, bv, acc);
    for (int r = 0; r < R; ++r) store(oy + r, ox0, NP, acc[r]);
  };
  // Rows per block for NP pixels: 16 / NP accumulators' worth (at most 4), the rows' tail in
  // one smaller block.
  int64_t ox0 = 0;
  auto rowsOf = [&](auto npC) {
    constexpr int NP = decltype(npC)::value;
    constexpr int RM = NP >= 16 ? 1 : NP == 8 ? 2 : 4;
    int64_t oy = 0;
    for (; oy + RM <= g.oh; oy += RM) run(std::integral_constant<int, RM>{}, npC, oy, ox0);
    const int64_t rest = g.oh - oy;
    if constexpr (RM == 4) {
      if (rest == 3) run(std::integral_constant<int, 3>{}, npC, oy, ox0);
      if (rest == 2) run(std::integral_constant<int, 2>{}, npC, oy, ox0);
    }
    if (rest == 1) run(std::integral_constant<int, 1>{}, npC, oy, ox0);
  };
  // Along the row: blocks of 16 pixels, then at most one each of 8, 4, 2 and 1.
  for (; ox0 + 16 <= g.ow; ox0 += 16) rowsOf(std::integral_constant<int, 16>{});
  if (ox0 + 8 <= g.ow) rowsOf(std::integral_constant<int, 8>{}), ox0 += 8;
  if (ox0 + 4 <= g.ow) rowsOf(std::integral_constant<int, 4>{}), ox0 += 4;
  if (ox0 + 2 <= g.ow) rowsOf(std::integral_constant<int, 2>{}), ox0 += 2;
  if (ox0 + 1 <= g.ow) rowsOf(std::integral_constant<int, 1>{}), ox0 += 1;
}

}  // namespace

void groupedC16Conv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias,
                    const float* res, float* y, const Epilogue& ep, ThreadPool* pool) {
  const int64_t mg = g.m / g.group, cg = g.c / g.group, nmb = mg / 16;
  const int64_t taps = g.kh * g.kw, K = cg * taps;
  const int64_t hp = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1, wp = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  std::vector<int64_t> toff(K);
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t ky = 0; ky < g.kh; ++ky)
      for (int64_t kx = 0; kx < g.kw; ++kx) toff[(c * g.kh + ky) * g.kw + kx] = c * hp * wp + ky * g.dh * wp + kx * g.dw;
  __m512 probe = _mm512_setzero_ps();
  const bool vecAct = vm::vecAct(ep, probe);
  const int64_t P = g.oh * g.ow;
  parallelFor(pool, g.n * g.group * nmb, 1, [&](int64_t b, int64_t e) {
    static thread_local std::vector<float> padS;
    if (static_cast<int64_t>(padS.size()) < cg * hp * wp) padS.resize(static_cast<size_t>(cg * hp * wp));
    float* pad = padS.data();
    int64_t lastGroup = -1;
    for (int64_t job = b; job < e; ++job) {
      const int64_t mb = job % nmb, ng = job / nmb, n = ng / g.group, gi = ng % g.group;
      if (ng != lastGroup) {  // the group's planes, zero-padded (shared by its channel blocks)
        lastGroup = ng;
        const float* xg = x + (n * g.c + gi * cg) * g.h * g.w;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t r = 0; r < hp; ++r) {
            float* d = pad + (c * hp + r) * wp;
            const int64_t iy = r - g.pt;
            if (iy < 0 || iy >= g.h) {
              std::fill(d, d + wp, 0.f);
              continue;
            }
            const float* src = xg + (c * g.h + iy) * g.w;
            for (int64_t cx = 0; cx < wp; ++cx) {
              const int64_t ix = cx - g.pl;
              d[cx] = ix >= 0 && ix < g.w ? src[ix] : 0.f;
            }
          }
      }
      const int64_t m0 = gi * mg + mb * 16;
      const float* wpk = wPacked + (gi * nmb + mb) * K * 16;
      const float* r = res ? res + (n * g.m + m0) * P : nullptr;
      float* yo = y + (n * g.m + m0) * P;
      const float* bb = bias ? bias + m0 : nullptr;
      if (g.sw == 1)
        groupedC16Job<1>(g, pad, wp, wpk, toff.data(), K, bb, r, yo, ep, vecAct);
      else
        groupedC16Job<2>(g, pad, wp, wpk, toff.data(), K, bb, r, yo, ep, vecAct);
    }
  });
}

}  // namespace conv
}  // namespace mgrt

#endif  // __AVX512F__
