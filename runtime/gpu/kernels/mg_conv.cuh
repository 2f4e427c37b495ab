// conv: 2-D convolution, NCHW, float32 (mg_kparams.h, ConvParams). Two block programs:
//
//   convBlock<BM, BN, THREADS>(p, block, smem)      implicit GEMM, the GEMM tiles of mg_gemm.cuh
//     Per group g:  Y_g (M x N) = W_g (M x K) * X_g (K x N) with
//       M = K/group output channels, N = batch*OH*OW output pixels, K = C/group * R * S,
//       X_g(k = (c, r, s), n = (nb, oh, ow)) = x[nb, g*Cg + c, oh*strideH - padTop + r*dilationH,
//                                             ow*strideW - padLeft + s*dilationW]  (0 outside)
//     The im2col matrix is never stored: the B loader gathers its BK x BN tile straight from x.
//     block -> (group, tile row, tile column), columns fastest; groups act as a batch dimension.
//     Epilogue: + bias[channel], + residual (N x K x OH x OW), activation, then the store into
//     channel yChannelOffset + g*Kg + m of a tensor with yChannels channels.
//
//   convF16Block<BM, BN, THREADS>(p, block, smem)   the same on tensor cores (--precision fp16,
//     MG_HAS_WMMA: CUDA and the emulation): mg_gemm.cuh's gemmMainLoopF16
//
//   depthwiseBlock<ITEMS, THREADS>(p, block, smem)  direct, one output per (thread, item)
//     For depthwise convolutions (group == C == K; any channel multiplier K = m*C works), where
//     an implicit GEMM would have M = 1 per group and waste all but one row of every tile. It is
//     correct for any group (it loops over the group's C/group input channels) but only the
//     depthwise case is fast. No barrier, no shared memory: mgLaunchNoSync is allowed.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_gemm.cuh"

namespace mgk {

// Gathers consecutive BK x BN tiles of one group's im2col matrix (fetch: next tile). Thread t
// always serves column t % BN (THREADS is a multiple of BN), so its pixel is unravelled once per
// block; its loads are rows kT + i*KSTEP of the tile (KSTEP = THREADS/BN). A row k is (c, r, s)
// of the filter: instead of two divisions per load, the (c, r, s) of the thread's first row is
// carried from tile to tile and each load steps it by KSTEP, with one carry per digit (the
// steps are decomposed once per block). Indices are 32-bit except the final element offset.
template <int BN, int THREADS, typename ST = float>
struct Im2colLoader {
  static constexpr int kLoads = BN * kGemmBK / THREADS;
  static constexpr int kKStep = THREADS / BN;
  // A step of k in digits: k = c*RS + r*S + s.
  struct Digits {
    int c, r, s;
  };
  const ST* xb = nullptr;  // x at (nb, g*Cg, 0, 0) for this thread's pixel
  int ih0 = 0, iw0 = 0;
  bool valid = false;
  int H, W, R, S, dH, dW, Kdim;
  int64_t HW;
  int k;        // row of load 0 of the next tile
  Digits d;     // its digits
  Digits load;  // kKStep in digits
  Digits tile;  // BK in digits
  float v[kLoads] = {};  // (zeroed: GCC cannot see that stash always follows a fetch)

  MG_DEVICE static Digits digits(int k, int RS, int S) {
    const int c = k / RS, rs = k - c * RS;
    return {c, rs / S, rs - rs / S * S};
  }
  // a += b with one carry per digit (a.s < S, b.s < S; a.r < R, b.r < R).
  MG_DEVICE void advance(Digits& a, const Digits& b) const {
    a.s += b.s;
    a.r += b.r;
    if (a.s >= S) {
      a.s -= S;
      ++a.r;
    }
    a.c += b.c;
    if (a.r >= R) {
      a.r -= R;
      ++a.c;
    }
  }

  MG_DEVICE Im2colLoader(const ConvParams& p, int64_t g, int64_t n0, int t)
      : H(int(p.H)), W(int(p.W)), R(int(p.R)), S(int(p.S)), dH(int(p.dilationH)),
        dW(int(p.dilationW)), Kdim(int(p.C / p.group * p.R * p.S)), HW(p.H * p.W) {
    const int64_t n = n0 + t % BN, ohw = p.OH * p.OW;
    valid = n < p.N * ohw;
    if (valid) {
      const int64_t nb = n / ohw, sp = n - nb * ohw, oh = sp / p.OW, ow = sp - oh * p.OW;
      ih0 = int(oh * p.strideH - p.padTop);
      iw0 = int(ow * p.strideW - p.padLeft);
      xb = asS<ST>(p.x) + (nb * p.C + g * (p.C / p.group)) * HW;
    }
    const int RS = R * S > 0 ? R * S : 1;  // a filter always has taps; no division by zero
    k = t / BN;
    d = digits(k, RS, S);
    load = digits(kKStep, RS, S);
    tile = digits(kGemmBK, RS, S);
  }
  MG_DEVICE void fetch() {
    Digits e = d;
    int kk = k;
    MGK_UNROLL
    for (int i = 0; i < kLoads; ++i) {
      float val = 0.f;
      if (valid && kk < Kdim) {
        const int ih = ih0 + e.r * dH, iw = iw0 + e.s * dW;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W) val = ldF(xb[e.c * HW + ih * W + iw]);
      }
      v[i] = val;
      kk += kKStep;
      advance(e, load);
    }
    k += kGemmBK;
    advance(d, tile);
  }
  MG_DEVICE void stash(float* out) const {
    const int t = int(threadIdx.x);
    MGK_UNROLL
    for (int i = 0; i < kLoads; ++i) out[Swizzle<BN>::at(t / BN + i * kKStep, t % BN)] = v[i];
  }
#if defined(MG_HAS_WMMA)
  template <int LD>  // the fp16 program: rounded to half, row stride LD, no swizzle
  MG_DEVICE void stashHalf(mg_half* out) const {
    const int t = int(threadIdx.x);
    MGK_UNROLL
    for (int i = 0; i < kLoads; ++i) out[(t / BN + i * kKStep) * LD + t % BN] = mgFloatToHalf(v[i]);
  }
#endif
};

template <int BM, int BN, int THREADS, typename ST = float>
__host__ __device__ int64_t convBlocks(const ConvParams& p) {
  return p.group * ceilDiv(p.K / p.group, BM) * ceilDiv(p.N * p.OH * p.OW, BN);
}

template <int BM, int BN, int THREADS, typename ST = float>
__host__ __device__ constexpr int convSmemBytes() {
  return GemmTile<BM, BN, THREADS>::kSmemFloats * int(sizeof(float));
}

template <int BM, int BN, int THREADS, typename ST = float>
MGK_PROGRAM void convBlock(const ConvParams& p, int64_t block, char* smem) {
  using Tile = GemmTile<BM, BN, THREADS>;
  constexpr int TM = Tile::kTM, TN = Tile::kTN, TY = Tile::kTY, TX = Tile::kTX;
  const int64_t Kg = p.K / p.group, Cg = p.C / p.group, ohw = p.OH * p.OW;
  const int64_t M = Kg, N = p.N * ohw, Kdim = Cg * p.R * p.S;
  const int64_t tilesN = ceilDiv(N, BN), tilesM = ceilDiv(M, BM);
  const int64_t g = block / (tilesM * tilesN), rem = block - g * tilesM * tilesN;
  const int64_t m0 = rem / tilesN * BM, n0 = rem % tilesN * BN;
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;

  // Weights of group g: row m at w + (g*Kg + m) * Kdim, contiguous along k.
  StridedLoader<BM, THREADS, ST> la(asS<ST>(p.w) + g * Kg * Kdim, Kdim, 1, m0, M, Kdim, t);
  Im2colLoader<BN, THREADS, ST> lb(p, g, n0, active ? t : 0);
  float acc[TM][TN];
  gemmMainLoop<BM, BN, THREADS>(la, lb, Kdim, reinterpret_cast<float*>(smem), active, acc);
  if (!active) return;

  const int ty = t / TX, tx = t % TX;
  int64_t yCol[TN], rCol[TN];  // per column: offset of (nb, channel 0, pixel) in y / residual
  MGK_UNROLL
  for (int j = 0; j < TN; ++j) {
    const int64_t n = n0 + tx + j * TX, nb = n / ohw, sp = n - nb * ohw;
    yCol[j] = (nb * p.yChannels + p.yChannelOffset) * ohw + sp;
    rCol[j] = nb * p.K * ohw + sp;
  }
  MGK_UNROLL
  for (int i = 0; i < TM; ++i) {
    const int64_t m = m0 + ty + i * TY;
    if (m >= M) break;
    const int64_t ch = g * Kg + m;
    const float bias = p.bias ? ldF(asS<ST>(p.bias)[ch]) : 0.f;
    MGK_UNROLL
    for (int j = 0; j < TN; ++j) {
      if (n0 + tx + j * TX >= N) break;
      float v = acc[i][j] + bias;
      if (p.residual) v += ldF(asS<ST>(p.residual)[rCol[j] + ch * ohw]);
      asS<ST>(p.y)[yCol[j] + ch * ohw] = stF<ST>(applyAct(p.act, v, p.actAlpha, p.actBeta));
    }
  }
}

#if defined(MG_HAS_WMMA)
// convF16Block<BM, BN, THREADS>: convBlock with the tensor-core main loop (mg_gemm.cuh,
// gemmMainLoopF16): weights and gathered pixels rounded to half in shared memory, float
// accumulation, the same epilogue from the staged float tile.
template <int BM, int BN, int THREADS, typename ST = float>
__host__ __device__ int64_t convF16Blocks(const ConvParams& p) {
  return convBlocks<BM, BN, THREADS, ST>(p);
}

template <int BM, int BN, int THREADS, typename ST = float>
__host__ __device__ constexpr int convF16SmemBytes() {
  return GemmTileF16<BM, BN, THREADS>::kSmemBytes;
}

template <int BM, int BN, int THREADS, typename ST = float>
MGK_PROGRAM void convF16Block(const ConvParams& p, int64_t block, char* smem) {
  using T = GemmTileF16<BM, BN, THREADS>;
  const int64_t Kg = p.K / p.group, Cg = p.C / p.group, ohw = p.OH * p.OW;
  const int64_t M = Kg, N = p.N * ohw, Kdim = Cg * p.R * p.S;
  const int64_t tilesN = ceilDiv(N, BN), tilesM = ceilDiv(M, BM);
  const int64_t g = block / (tilesM * tilesN), rem = block - g * tilesM * tilesN;
  const int64_t m0 = rem / tilesN * BM, n0 = rem % tilesN * BN;
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;

  StridedLoader<BM, THREADS, ST> la(asS<ST>(p.w) + g * Kg * Kdim, Kdim, 1, m0, M, Kdim, t);
  Im2colLoader<BN, THREADS, ST> lb(p, g, n0, active ? t : 0);
  gemmMainLoopF16<BM, BN, THREADS>(la, lb, Kdim, smem, active);
  if (!active) return;

  const float* acc = reinterpret_cast<const float*>(smem);
  MGK_UNROLL
  for (int i = 0; i < BM * BN / THREADS; ++i) {
    const int e = t + i * THREADS, r = e / BN, col = e % BN;
    const int64_t m = m0 + r, n = n0 + col;
    if (m >= M || n >= N) continue;
    const int64_t ch = g * Kg + m, nb = n / ohw, sp = n - nb * ohw;
    float v = acc[r * T::kLdC + col] + (p.bias ? ldF(asS<ST>(p.bias)[ch]) : 0.f);
    if (p.residual) v += ldF(asS<ST>(p.residual)[(nb * p.K + ch) * ohw + sp]);
    asS<ST>(p.y)[(nb * p.yChannels + p.yChannelOffset + ch) * ohw + sp] =
        stF<ST>(applyAct(p.act, v, p.actAlpha, p.actBeta));
  }
}
#endif  // MG_HAS_WMMA

// ---- Direct (depthwise) convolution ---------------------------------------------------------
template <int ITEMS, int THREADS, typename ST = float>
__host__ __device__ int64_t depthwiseBlocks(const ConvParams& p) {
  return ceilDiv(p.N * p.K * p.OH * p.OW, int64_t(ITEMS) * THREADS);
}

template <int ITEMS, int THREADS, typename ST = float>
__host__ __device__ constexpr int depthwiseSmemBytes() {
  return 0;
}

template <int ITEMS, int THREADS, typename ST = float>
MGK_PROGRAM void depthwiseBlock(const ConvParams& p, int64_t block, char* smem) {
  static_assert(ITEMS == 1 || ITEMS == 4 || ITEMS == 16, "memory tiles have 1, 4 or 16 items");
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier below
  const int64_t total = p.N * p.K * p.OH * p.OW, ohw = p.OH * p.OW;
  const int64_t Kg = p.K / p.group, Cg = p.C / p.group, HW = p.H * p.W;
  const int64_t first = block * (int64_t(ITEMS) * THREADS) + t;
  MGK_UNROLL
  for (int it = 0; it < ITEMS; ++it) {
    const int64_t e = first + int64_t(it) * THREADS;
    if (e >= total) return;
    const int64_t ow = e % p.OW, q = e / p.OW, oh = q % p.OH, nk = q / p.OH;
    const int64_t k = nk % p.K, nb = nk / p.K, g = k / Kg;
    const int64_t ih0 = oh * p.strideH - p.padTop, iw0 = ow * p.strideW - p.padLeft;
    const ST* xg = asS<ST>(p.x) + (nb * p.C + g * Cg) * HW;
    const ST* wk = asS<ST>(p.w) + k * Cg * p.R * p.S;
    float acc = 0.f;
    for (int64_t c = 0; c < Cg; ++c) {
      for (int64_t r = 0; r < p.R; ++r) {
        const int64_t ih = ih0 + r * p.dilationH;
        if (ih < 0 || ih >= p.H) continue;
        const ST* xrow = xg + c * HW + ih * p.W;
        const ST* wrow = wk + (c * p.R + r) * p.S;
        for (int64_t s = 0; s < p.S; ++s) {
          const int64_t iw = iw0 + s * p.dilationW;
          if (iw >= 0 && iw < p.W) acc += ldF(xrow[iw]) * ldF(wrow[s]);
        }
      }
    }
    if (p.bias) acc += ldF(asS<ST>(p.bias)[k]);
    const int64_t sp = oh * p.OW + ow;
    if (p.residual) acc += ldF(asS<ST>(p.residual)[(nb * p.K + k) * ohw + sp]);
    asS<ST>(p.y)[(nb * p.yChannels + p.yChannelOffset + k) * ohw + sp] =
        stF<ST>(applyAct(p.act, acc, p.actAlpha, p.actBeta));
  }
}

}  // namespace mgk
