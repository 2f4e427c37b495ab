// Direct convolution with the output channels in the vector lanes (float32, NCHW, AVX-512):
// ungrouped layers whose im2col GEMM (f_conv.cpp) spends its time packing or on padded tiles.
//
// The GEMM orientation puts output pixels in the lanes: a 3x3 layer packs 9 gathered input values
// per channel and pixel (im2col) before multiplying, and with 64 to 256 output channels to share
// it the packing costs a third to a half as much as the multiply (ResNet-50's 3x3 layers: 133-170
// GFLOP/s on one core where onnxruntime's NCHWc kernels reach about 200); its tiles are 32 pixels
// wide, so a 14x14 plane computes 224 pixels for 196 and a 7x7 one 64 for 49. Here:
//  - the input rows a band of output rows reads are copied once, zero padded and split by column
//    phase (f_conv_band.h), so that every tap of any stride reads consecutive floats; 1x1 layers
//    without padding read the image in place (unit strides) or a copy of just the sampled pixels;
//  - a tile is 32 output channels (two vectors, lanes = channels) times R <= 14 output pixels:
//    one run of L consecutive pixels of a row, or two runs on two rows for planes at most 7 wide
//    (7x7: R = 14). Per k = (c, ky, kx) it loads the two weight vectors (packed [block][K][32])
//    and broadcasts R input floats (one address register: immediate offsets from the run's
//    start) into 2R FMAs, accumulating in 2R registers; no packing of the input at all;
//  - all of K accumulates in registers, in chunks of 256 summed as the im2col GEMM sums its K
//    slices (see tile: the same additions, so the same bits as the GEMM path). The block's
//    weights stream from L2 for each tile; an earlier form that sliced K by 128 over a band's
//    tiles, partial sums in memory, to keep a slice's weights in L1 was 3-7% slower at 1 and 2
//    threads. The first tile of a block reads its weights from memory: their lines are
//    prefetched 4 KB ahead, past the page boundary where the hardware prefetchers stop;
//  - the tile is transposed in registers (16x16 blocks) and written straight into the output
//    planes with bias (added after the sums), residual and activation.
// Jobs are (image, band of output rows, block of 32 channels); see lanesConv for their order
// (one group of blocks per thread where the weights outweigh the input).
#include "f_conv.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <utility>

#include "f_conv_band.h"
#include "f_gemm.h"
#include "f_vmath.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace conv {
namespace {

constexpr int kW = 16;           // floats per vector
constexpr int kOB = 2 * kW;      // output channels per tile (two vectors)
constexpr int kMaxR = 14;        // pixels per tile: 28 accumulators + 2 weights + 1 broadcast
constexpr int64_t kBandFloats = 64 * 1024;  // copied band: 256 KB, within L2
constexpr int64_t kChunk = 256;  // k steps summed from zero before joining the total (see tile)

int64_t blocks(const ConvGeom& g) { return (g.m + kOB - 1) / kOB; }
int64_t kTotal(const ConvGeom& g) { return g.c * g.kh * g.kw; }

struct TileArgs {
  const float* x;       // buffer at the tile's first pixel (its band row and column)
  int64_t rowStep;      // buffer floats from one output row's inputs to the next's (sh * rowLen)
  const int32_t* koff;  // per k = (c, ky, kx): the tap's offset in the buffer
  int64_t K;
  const float* w;       // the block's packed weights, K x 32
  const float* bias;    // the block's 32 biases (zero past the last channel)
  const float* res;     // residual at the tile's first pixel of the block's first channel, or null
  float* y;             // output at the same place
  int64_t ow, oplane;
  int mcount;           // valid channels of the block
  const Epilogue* ep;
  bool vecAct;          // the activation runs in registers (else actRow on the stored values)
};

// S runs of L pixels (run s on output row oy + s, same columns): y = act(bias + sum over k of
// w[k] x[koff[k] + pixel] + res) for the block's channels.
// (GCC cannot see that `total` is stored by the first K chunk before later chunks read it.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <int L, int S>
void tile(const TileArgs& t) {
  constexpr int R = L * S;
  // K in chunks of kChunk from zeroed accumulators, each chunk's sums added to the total of the
  // earlier ones, the bias last: the im2col GEMM's order of additions (its K slices of 256, the
  // epilogue after), so both kernels give the same bits for a layer. One chain over all of K
  // rounds differently, enough to move light VGG-19's logits out of the zoo's tolerance
  // (2 of 1000 by 2.5e-5 after 16 layers).
  __m512 acc[R][2];
  alignas(64) float total[R * kOB];
  const float* __restrict x = t.x;
  const float* __restrict w = t.w;
  const int32_t* __restrict koff = t.koff;
  const int64_t K = t.K, step = t.rowStep;
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    const int64_t k1 = std::min(K, k0 + kChunk);
    for (int64_t k = k0; k < k1; ++k, w += kOB) {
      // The first tile of a block reads its weights from memory (a layer's weights are read
      // once per run), and the hardware prefetchers stop at 4 KB pages: ask for the lines 4 KB
      // ahead, as the GEMM's micro-kernel does.
      __builtin_prefetch(w + 1024);
      __builtin_prefetch(w + 1024 + kW);
      const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + kW);
      const float* p = x + koff[k];
#pragma GCC unroll 14
      for (int r = 0; r < L; ++r) {
        const __m512 b = _mm512_set1_ps(p[r]);
        acc[r][0] = _mm512_fmadd_ps(b, w0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(b, w1, acc[r][1]);
      }
      if constexpr (S == 2) {
        const float* q = p + step;
#pragma GCC unroll 7
        for (int r = 0; r < L; ++r) {
          const __m512 b = _mm512_set1_ps(q[r]);
          acc[L + r][0] = _mm512_fmadd_ps(b, w0, acc[L + r][0]);
          acc[L + r][1] = _mm512_fmadd_ps(b, w1, acc[L + r][1]);
        }
      }
    }
    if (k0 == 0 && k1 == K) break;  // one chunk: the sums are in acc
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < 2; ++v) {
        float* tp = total + r * kOB + v * kW;
        if (k0 == 0) {
          _mm512_store_ps(tp, acc[r][v]);
        } else {
          const __m512 sum = _mm512_add_ps(_mm512_load_ps(tp), acc[r][v]);
          if (k1 == K)
            acc[r][v] = sum;
          else
            _mm512_store_ps(tp, sum);
        }
      }
  }
  const __m512 b0 = _mm512_loadu_ps(t.bias), b1 = _mm512_loadu_ps(t.bias + kW);
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm512_add_ps(acc[r][0], b0);
    acc[r][1] = _mm512_add_ps(acc[r][1], b1);
  }
  // Lane r of a transposed vector is pixel r: run 0 in lanes [0, L), run 1 in [L, 2L), stored at
  // the next row's start minus L (masked lanes touch no memory).
  const __mmask16 m0 = vm::tailMask(L), m1 = S == 2 ? vm::rangeMask(L, 2 * L) : __mmask16(0);
  const int64_t back = t.ow - L;
  for (int v = 0; v < 2; ++v) {
    __m512 c[16];
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) c[r] = r < R ? acc[r][v] : _mm512_setzero_ps();
    vm::transpose16(c);
    const int n = std::min(kW, t.mcount - v * kW);
    for (int i = 0; i < n; ++i) {
      const int64_t off = (v * kW + i) * t.oplane;
      float* yc = t.y + off;
      __m512 val = c[i];
      if (t.res) {
        __m512 rv = _mm512_maskz_loadu_ps(m0, t.res + off);
        if constexpr (S == 2) rv = _mm512_mask_loadu_ps(rv, m1, t.res + off + back);
        val = _mm512_add_ps(val, rv);
      }
      if (t.vecAct) vm::vecAct(*t.ep, val);
      _mm512_mask_storeu_ps(yc, m0, val);
      if constexpr (S == 2) _mm512_mask_storeu_ps(yc + back, m1, val);
      if (!t.vecAct) {
        vm::actRow(*t.ep, yc, yc, L);
        if constexpr (S == 2) vm::actRow(*t.ep, yc + t.ow, yc + t.ow, L);
      }
    }
  }
}

#pragma GCC diagnostic pop

// dst[c][oy - oy0][ox] = xn[c][oy * sh][ox * sw] for the band's rows [oy0, oy1) (a 1x1 layer's
// sampled pixels, all inside the image); chanStride floats per channel.
void copySampled(const ConvGeom& g, const float* xn, int64_t oy0, int64_t oy1, int64_t chanStride, float* dst) {
  const __m512i lanes = vm::strideLanes(g.sw);
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const float* row = xn + (c * g.h + oy * g.sh) * g.w;
      float* d = dst + c * chanStride + (oy - oy0) * g.ow;
      for (int64_t ox = 0; ox < g.ow; ox += kW) {
        const __mmask16 mk = vm::tailMask(g.ow - ox);
        _mm512_mask_storeu_ps(d + ox, mk, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mk, lanes, row + ox * g.sw, 4));
      }
    }
}

using TileFn = void (*)(const TileArgs&);

template <int S, int... Ls>
constexpr std::array<TileFn, sizeof...(Ls) + 1> tileTable(std::integer_sequence<int, Ls...>) {
  return {nullptr, &tile<Ls + 1, S>...};
}
// [L] for one run (L = 1..14) and for two runs (L = 1..7).
constexpr auto kOneRun = tileTable<1>(std::make_integer_sequence<int, kMaxR>{});
constexpr auto kTwoRuns = tileTable<2>(std::make_integer_sequence<int, kMaxR / 2>{});

std::atomic<uint64_t> gCalls{0};  // tells a thread's cached band copy from another call's

}  // namespace

bool lanesApplies(const ConvGeom& g) {
  // At least 32 output channels with three quarters of the 32-channel blocks' lanes busy, and
  // K = C * kh * kw of at least 128: a tile's transposed write-back costs about as much as 40 k
  // steps, so with fewer the GEMM stays faster (MnasNet's 1x1 24->72 and 80->480, a 3x3 16->24).
  if (g.group != 1 || g.m < kOB || 4 * g.m < 3 * kOB * blocks(g) || kTotal(g) < 128)
    return false;
  // The taps' offsets are 32-bit: a one-row band, or the image a 1x1 layer reads in place, must
  // stay below 2^31 floats.
  const PaddedBand one(g, 1, 0);
  if (g.c * std::max(one.pplane, g.h * g.w) >= (int64_t{1} << 31)) return false;
  // Spatial kernels and strided 1x1 layers at any size (their GEMM packs gathered inputs); 1x1
  // layers with unit strides on small planes (their GEMM tiles are 32 pixels: 196 -> 224) or with
  // many input channels, but not the matrix-vector shapes of squeeze-excitation blocks (1x1
  // planes, the GEMM's dot products).
  if (g.kh * g.kw > 1 || g.sh > 1 || g.sw > 1) return true;
  const int64_t pixels = g.oh * g.ow;
  return pixels >= 16 && (pixels <= 256 || g.c >= 256);
}

int64_t lanesPackedSize(const ConvGeom& g) { return blocks(g) * kTotal(g) * kOB; }

void lanesPackWeights(const ConvGeom& g, const float* w, float* dst) {
  packChannelBlocks(w, g.m, kTotal(g), kOB, dst);
}

void lanesConv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias, const float* res,
               float* y, const Epilogue& ep, ThreadPool* pool) {
  const int64_t K = kTotal(g), nob = blocks(g), oplane = g.oh * g.ow;
  // Runs: each output row in nrun near-equal runs of at most 14 pixels; rows of at most 7 pixels
  // go two to a tile.
  const int64_t nrun = (g.ow + kMaxR - 1) / kMaxR, runBase = g.ow / nrun, runExtra = g.ow % nrun;
  const bool pairRows = nrun == 1 && 2 * g.ow <= kMaxR;
  // Bands: as many output rows as fit kBandFloats of copied input, fewer when that leaves too
  // few jobs for the threads; even when rows go in pairs.
  const int threads = pool ? pool->threads() : 1;
  const PaddedBand one(g, 1, 0);
  int64_t band = std::clamp<int64_t>((kBandFloats / (g.c * one.rowLen) - one.extra) / g.sh + 1, 1, g.oh);
  while (band > 1 && g.n * ((g.oh + band - 1) / band) * nob < 4 * threads) band = (band + 1) / 2;
  if (pairRows && band > 1) band += band % 2;
  band = std::min(band, g.oh);
  const int64_t bands = (g.oh + band - 1) / band;
  const PaddedBand pb(g, band, 0);
  // Where the tiles read their inputs: the padded band copy (spatial kernels), or for 1x1 layers
  // without padding the image itself (unit strides: a copy would be a pass over the input for
  // nothing, a quarter of a 512->64 @13 layer's time) or a copy of just the sampled pixels
  // (strides: the band copy would hold every row and column, for half or a quarter of them).
  const bool oneByOne = g.kh == 1 && g.kw == 1 && g.pt == 0 && g.pl == 0 && (g.oh - 1) * g.sh < g.h &&
                        (g.ow - 1) * g.sw < g.w;
  const bool inPlace = oneByOne && g.sh == 1 && g.sw == 1 && g.ow == g.w;
  const bool sampled = oneByOne && !inPlace;
  const int64_t chanStride = inPlace ? g.h * g.w : sampled ? band * g.ow : pb.pplane;
  const int64_t rowStep = inPlace ? g.w : sampled ? g.ow : g.sh * pb.rowLen;

  static thread_local fast::Scratch biasS, koffS;
  float* bp = biasS.get(nob * kOB);
  for (int64_t m = 0; m < nob * kOB; ++m) bp[m] = bias && m < g.m ? bias[m] : 0.f;
  int32_t* koff = reinterpret_cast<int32_t*>(koffS.get(K));
  for (int64_t k = 0; k < K; ++k)
    koff[k] = static_cast<int32_t>(oneByOne ? k * chanStride : pb.tapOffset(g, k / (g.kh * g.kw), k / g.kw % g.kh, k % g.kw));
  __m512 probe = _mm512_setzero_ps();
  const bool vecAct = vm::vecAct(ep, probe);
  const uint64_t call = gCalls.fetch_add(1, std::memory_order_relaxed) + 1;

  // Job order: per image, the blocks in groups (contiguous), within a group band by band, the
  // group's blocks innermost (a thread copies a band once for all the blocks it runs on it).
  // Where the weights outweigh the input (small planes: ResNet's 3x3 512 @7 reads 9 MB of weights
  // from memory every run for 100 KB of input), one group per thread: a thread's share of the jobs
  // is then about one group, so it streams only its part of the weights (and copies the whole
  // input). Elsewhere one group: threads split the bands, each copying only its own.
  const int64_t groups = K * g.m >= g.c * g.h * g.w ? std::min<int64_t>(threads, nob) : 1;
  auto groupStart = [&](int64_t gi) { return gi * nob / groups; };
  parallelFor(pool, g.n * bands * nob, 1, [&](int64_t jb, int64_t je) {
    static thread_local fast::Scratch padS, rowS;
    static thread_local uint64_t haveCall = 0;
    static thread_local int64_t haveBand = -1;
    float* xp = inPlace ? nullptr : padS.get(g.c * chanStride);
    float* tmp = inPlace || sampled ? nullptr : rowS.get(pb.rowLen + 32);
    TileArgs t{};
    t.rowStep = rowStep;
    t.koff = koff;
    t.K = K;
    t.ow = g.ow;
    t.oplane = oplane;
    t.ep = &ep;
    t.vecAct = vecAct;
    for (int64_t job = jb; job < je; ++job) {
      const int64_t n = job / (nob * bands), idx = job % (nob * bands);
      int64_t gi = 0;
      while (idx >= bands * groupStart(gi + 1)) ++gi;
      const int64_t first = groupStart(gi), size = groupStart(gi + 1) - first, local = idx - bands * first;
      const int64_t nb = n * bands + local / size, ob = first + local % size;
      const int64_t oy0 = (nb % bands) * band, oy1 = std::min(g.oh, oy0 + band);
      const float* xb = xp;  // the band's first buffer row
      if (inPlace) {
        xb = x + n * g.c * g.h * g.w + oy0 * g.w;
      } else if (haveCall != call || haveBand != nb) {
        const float* xn = x + n * g.c * g.h * g.w;
        if (sampled)
          copySampled(g, xn, oy0, oy1, chanStride, xp);
        else
          pb.copy(g, xn, oy0 * g.sh - g.pt, (oy1 - 1 - oy0) * g.sh + pb.extra, xp, tmp);
        haveCall = call;
        haveBand = nb;
      }
      t.bias = bp + ob * kOB;
      t.mcount = static_cast<int>(std::min<int64_t>(kOB, g.m - ob * kOB));
      const int64_t chan = (n * g.m + ob * kOB) * oplane;
      t.w = wPacked + ob * K * kOB;
      for (int64_t oy = oy0; oy < oy1;) {
        const int rows = pairRows && oy + 1 < oy1 ? 2 : 1;
        const float* xr = xb + (oy - oy0) * t.rowStep;
        for (int64_t r = 0, ox = 0; r < nrun; ++r) {
          const int64_t len = runBase + (r < runExtra ? 1 : 0);
          t.x = xr + ox;
          t.y = y + chan + oy * g.ow + ox;
          t.res = res ? res + chan + oy * g.ow + ox : nullptr;
          (rows == 2 ? kTwoRuns[len] : kOneRun[len])(t);
          ox += len;
        }
        oy += rows;
      }
    }
  });
}

}  // namespace conv
}  // namespace mgrt

#else

namespace mgrt {
namespace conv {
bool lanesApplies(const ConvGeom&) { return false; }
int64_t lanesPackedSize(const ConvGeom&) { return 0; }
void lanesPackWeights(const ConvGeom&, const float*, float*) {}
void lanesConv(const ConvGeom&, const float*, const float*, const float*, const float*, float*, const Epilogue&,
               ThreadPool*) {}
}  // namespace conv
}  // namespace mgrt

#endif
