// gemm: Y[b] = act(alpha * A[b] x B[b] + beta * C + residual), float32, as one BM x BN output
// tile per block (mg_kparams.h, GemmParams). The main loop is shared with the implicit-GEMM
// convolution (mg_conv.cuh), which only brings its own loader for the B operand.
//
//   gemmBlock<BM, BN, THREADS, S = float>(p, block, smem)
//     block -> (batch b, tile row, tile column), tile columns fastest; BK = 32. S is the storage
//     type of A, B, C, the residual and Y (float, or Half under --precision fp16: read into float
//     registers by the loaders, Y rounded on store; mg_kcommon.cuh ldF / stF).
//     Tiles of the cost model (src/target/cost_model.cpp, kGemmTiles): 32x32, 64x32, 32x64,
//     64x64 with 128 threads; 128x64, 64x128, 128x128 with 256; 128x16, 16x128 with 128.
//     Any BM, BN, THREADS powers of two with BM, BN, 32 dividing THREADS and BM*BN a multiple of
//     THREADS work.
//
// The loop, per block:
//
//   registers <- global k-tile 0 ; shared[0] <- registers ; barrier
//   for each k-tile kt:  registers <- global k-tile kt+1      (loads in flight ...)
//                        acc += shared[kt%2] (TM x TN per thread)   (... while this computes)
//                        shared[(kt+1)%2] <- registers ; barrier
//
// One barrier per k-tile: the buffer written in step kt was last read in step kt-1, which every
// thread finished before that step's barrier. Shared memory holds two A tiles (BK x BM) and two
// B tiles (BK x BN), k-major, 2*(BM+BN)*BK*4 bytes (the cost model's smemBytes): 64 KiB for
// 128x128, so the joint kernel must raise its dynamic shared memory limit above 48 KiB on CUDA
// (and 64 KiB is gfx90a's whole LDS per workgroup: no padding is added).
//
// Shared-memory banks. Threads read A[k][m] for a few m at one k (broadcast or consecutive) and
// B[k][n] at consecutive n: conflict-free. Stores are conflict-free when the operand's fast
// global dimension is m (or n), but a k-contiguous operand (row-major A, transposed B,
// convolution weights) is stored by 32 consecutive k at one m: the same bank 32 times. A XOR
// swizzle of the column by the row (col ^ (k & 31)) spreads those over all banks without padding.
//
// Register micro-tile. Thread (ty, tx) owns rows ty + i*TY and columns tx + j*TX (strided, not
// contiguous, so that a warp's B reads are consecutive words and its Y writes coalesce); TM x TN
// is the most square split of BM*BN/THREADS that divides the tile.
//
// gemmF16Block<BM, BN, THREADS> (--precision fp16, CUDA and the emulation only: MG_HAS_WMMA) is
// the same program with a tensor-core main loop (wmma, half operands, float accumulation); see
// the fp16 section at the end of this file.
//
// Operands of any strides: a loader reads along k when the operand is k-contiguous and along
// m (n) otherwise, so global loads coalesce for both a matrix and its transpose. Rows, columns
// and k beyond M, N, K read as zero and are not written.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

constexpr int kGemmBK = 32;

// The most square TM x TN (powers of two, TM >= TN on ties) with TM*TN = BM*BN/THREADS,
// TM | BM and TN | BN.
__host__ __device__ constexpr int gemmPickTM(int bm, int bn, int per) {
  int best = 0, bestCost = 1 << 30;
  for (int tm = 1; tm <= per; tm *= 2) {
    int tn = per / tm;
    if (tm * tn != per || bm % tm != 0 || bn % tn != 0) continue;
    int cost = tm > tn ? tm - tn : 2 * (tn - tm);  // prefer TM >= TN on ties
    if (cost < bestCost) {
      bestCost = cost;
      best = tm;
    }
  }
  return best;
}

template <int BM, int BN, int THREADS>
struct GemmTile {
  static constexpr int kThreads = THREADS;
  static constexpr int kBK = kGemmBK;
  static constexpr int kPerThread = BM * BN / THREADS;
  static constexpr int kTM = gemmPickTM(BM, BN, kPerThread);
  static constexpr int kTN = kTM > 0 ? kPerThread / kTM : 0;
  static constexpr int kTY = kTM > 0 ? BM / kTM : 1;  // threads along m
  static constexpr int kTX = kTN > 0 ? BN / kTN : 1;  // threads along n
  static constexpr int kSmemFloats = 2 * (BM + BN) * kBK;
  static_assert(isPow2(BM) && isPow2(BN) && isPow2(THREADS), "tile sizes are powers of two");
  static_assert(BM * BN % THREADS == 0, "every thread owns the same number of outputs");
  static_assert(THREADS % BM == 0 && THREADS % BN == 0 && THREADS % kBK == 0,
                "loaders give each thread a fixed row or k: BM, BN and BK must divide THREADS");
  static_assert(BM * kBK % THREADS == 0 && BN * kBK % THREADS == 0, "whole tiles per thread");
  static_assert(kTM > 0 && kTY * kTX == THREADS, "no micro-tile split fits this tile");
};

// Shared tiles are k-major: row k holds COLS floats, and column c of row k lives at
// k*COLS + (c ^ (k & kSwizzleMask)), kSwizzleMask = min(COLS, 32) - 1 (see the top comment).
template <int COLS>
struct Swizzle {
  static constexpr int kMask = (COLS < 32 ? COLS : 32) - 1;
  MG_DEVICE static int at(int k, int col) { return k * COLS + (col ^ (k & kMask)); }
  // The column of micro-tile element `lane + i*STEP` (lane < STEP, both powers of two) split into
  // a part that depends on the thread, lane ^ (k & mask & (STEP-1)), and one that is a
  // compile-time constant once k and i are (k-loop unrolled): (i*STEP) ^ (k & mask & ~(STEP-1)).
  // So a thread's TM reads of row k cost one XOR, not TM.
  template <int STEP>
  MG_DEVICE static int lanePart(int k, int lane) {
    return lane ^ (k & kMask & (STEP - 1));
  }
  template <int STEP>
  MG_DEVICE static constexpr int constPart(int k, int i) {
    return k * COLS + ((i * STEP) ^ (k & kMask & ~(STEP - 1)));
  }
};

// Loads consecutive BK x ROWS tiles of a strided operand X(r, k) = x[r*rs + k*ks] (r0 <= r < R,
// k < K; zero outside) into registers (fetch, one tile per call, k advancing by BK), then into a
// k-major shared tile (stash). GEMM's A (rows m), B (rows n) and the convolution's weights.
// Thread t's load i is at tile position (rT + i*dR, kT + i*dK): along k when x is
// k-contiguous (dR = THREADS/BK, dK = 0), along r otherwise (dR = 0, dK = THREADS/ROWS).
template <int ROWS, int THREADS, typename S = float>
struct StridedLoader {
  static constexpr int kLoads = ROWS * kGemmBK / THREADS;
  const S* ptr;  // element (r0 + rT, k0 + kT) of the current tile
  int64_t step;      // between loads i and i+1: dR*rs + dK*ks
  int64_t tileStep;  // between tiles: BK*ks
  int64_t rLeft;     // rows left from r0 + rT
  int64_t kLeft;     // k left from k0 + kT
  int rT, kT, dR, dK;
  float v[kLoads] = {};  // (zeroed: GCC cannot see that stash always follows a fetch)

  MG_DEVICE StridedLoader(const S* x, int64_t rs, int64_t ks, int64_t r0, int64_t R,
                          int64_t K, int t) {
    const bool kFast = ks == 1 || rs != 1;
    rT = kFast ? t / kGemmBK : t % ROWS;
    kT = kFast ? t % kGemmBK : t / ROWS;
    dR = kFast ? THREADS / kGemmBK : 0;
    dK = kFast ? 0 : THREADS / ROWS;
    step = dR * rs + dK * ks;
    tileStep = kGemmBK * ks;
    rLeft = R - r0 - rT;
    kLeft = K - kT;
    ptr = x + (r0 + rT) * rs + kT * ks;
  }
  MG_DEVICE void fetch() {
    MGK_UNROLL
    for (int i = 0; i < kLoads; ++i)
      v[i] = (i * dR < rLeft && i * dK < kLeft) ? ldF(ptr[i * step]) : 0.f;
    ptr += tileStep;
    kLeft -= kGemmBK;
  }
  MG_DEVICE void stash(float* tile) const {
    MGK_UNROLL
    for (int i = 0; i < kLoads; ++i) tile[Swizzle<ROWS>::at(kT + i * dK, rT + i * dR)] = v[i];
  }
#if defined(MG_HAS_WMMA)
  // The fp16 programs: the same tile rounded to half, k-major with row stride LD, no swizzle
  // (wmma loads need plain strided tiles).
  template <int LD>
  MG_DEVICE void stashHalf(mg_half* tile) const {
    MGK_UNROLL
    for (int i = 0; i < kLoads; ++i) tile[(kT + i * dK) * LD + rT + i * dR] = mgFloatToHalf(v[i]);
  }
#endif
};

// The shared main loop: acc[i][j] = sum_k A(m0 + ty + i*TY, k) * B(k, n0 + tx + j*TX) over
// k < K, with the A and B loaders given (fetch() loads the next k-tile, stash(tile) stores it).
// Every thread of the block must call it (it has barriers); `active` is false for threads
// beyond THREADS, which only keep the barrier count.
template <int BM, int BN, int THREADS, typename LA, typename LB>
MG_DEVICE void gemmMainLoop(LA& la, LB& lb, int64_t K, float* smem, bool active,
                            float (&acc)[GemmTile<BM, BN, THREADS>::kTM]
                                        [GemmTile<BM, BN, THREADS>::kTN]) {
  using Tile = GemmTile<BM, BN, THREADS>;
  constexpr int TM = Tile::kTM, TN = Tile::kTN, TY = Tile::kTY, TX = Tile::kTX;
  // Stage s: A tile at smem + s*kStage, B tile right after it.
  constexpr int kStage = (BM + BN) * kGemmBK;
  const int t = int(threadIdx.x);
  const int ty = t / TX, tx = t % TX;
  MGK_UNROLL
  for (int i = 0; i < TM; ++i)
    MGK_UNROLL
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  const int64_t tiles = ceilDiv(K, kGemmBK);
  if (active && tiles > 0) {
    la.fetch();
    lb.fetch();
    la.stash(smem);
    lb.stash(smem + BM * kGemmBK);
  }
  __syncthreads();
  MGK_NO_UNROLL
  for (int64_t kt = 0; kt < tiles; ++kt) {
    const int cur = int(kt & 1);
    const bool more = kt + 1 < tiles;
    if (active) {
      if (more) {
        la.fetch();
        lb.fetch();
      }
      const float* a = smem + cur * kStage;
      const float* b = a + BM * kGemmBK;
      MGK_UNROLL
      for (int k = 0; k < kGemmBK; ++k) {
        const float* ak = a + Swizzle<BM>::template lanePart<TY>(k, ty);
        const float* bk = b + Swizzle<BN>::template lanePart<TX>(k, tx);
        float ra[TM], rb[TN];
        MGK_UNROLL
        for (int i = 0; i < TM; ++i) ra[i] = ak[Swizzle<BM>::template constPart<TY>(k, i)];
        MGK_UNROLL
        for (int j = 0; j < TN; ++j) rb[j] = bk[Swizzle<BN>::template constPart<TX>(k, j)];
        MGK_UNROLL
        for (int i = 0; i < TM; ++i)
          MGK_UNROLL
          for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
      }
      if (more) {
        la.stash(smem + (cur ^ 1) * kStage);
        lb.stash(smem + (cur ^ 1) * kStage + BM * kGemmBK);
      }
    }
    __syncthreads();
  }
}

template <int BM, int BN, int THREADS, typename S = float>
__host__ __device__ int64_t gemmBlocks(const GemmParams& p) {
  return p.batch * ceilDiv(p.M, BM) * ceilDiv(p.N, BN);
}

template <int BM, int BN, int THREADS, typename S = float>
__host__ __device__ constexpr int gemmSmemBytes() {
  return GemmTile<BM, BN, THREADS>::kSmemFloats * int(sizeof(float));
}

// The fused epilogue every GEMM-family program applies to an output (m, n) of batch b: alpha times
// the accumulated sum, beta * C, the residual (same layout as Y), the activation, stored as S.
// gemmBlock, gemmBlockF16 and gemvBlock (mg_gemv.cuh) share it, so they cannot drift apart.
template <typename S>
struct GemmEpilogue {
  const GemmParams& p;
  S* y;
  const S* c;
  const S* res;
  MG_DEVICE GemmEpilogue(const GemmParams& q, int64_t b)
      : p(q),
        y(asS<S>(q.Y) + b * q.yBatch),
        c(q.C ? asS<S>(q.C) + b * q.cBatch : nullptr),
        res(q.residual ? asS<S>(q.residual) + b * q.yBatch : nullptr) {}
  MG_DEVICE void store(int64_t m, int64_t n, float sum) const {
    float v = p.alpha * sum;
    if (c) v += p.beta * ldF(c[m * p.cM + n * p.cN]);
    const int64_t yo = m * p.yM + n * p.yN;
    if (res) v += ldF(res[yo]);
    y[yo] = stF<S>(applyAct(p.act, v, p.actAlpha, p.actBeta));
  }
};

template <int BM, int BN, int THREADS, typename S = float>
MGK_PROGRAM void gemmBlock(const GemmParams& p, int64_t block, char* smem) {
  using Tile = GemmTile<BM, BN, THREADS>;
  constexpr int TM = Tile::kTM, TN = Tile::kTN, TY = Tile::kTY, TX = Tile::kTX;
  const int64_t tilesN = ceilDiv(p.N, BN), tilesM = ceilDiv(p.M, BM);
  const int64_t b = block / (tilesM * tilesN), rem = block - b * tilesM * tilesN;
  const int64_t m0 = rem / tilesN * BM, n0 = rem % tilesN * BN;
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;

  // A(m, k) and B^T(n, k): both loaders produce k-major tiles indexed by their row.
  StridedLoader<BM, THREADS, S> la(asS<S>(p.A) + b * p.aBatch, p.aM, p.aK, m0, p.M, p.K, t);
  StridedLoader<BN, THREADS, S> lb(asS<S>(p.B) + b * p.bBatch, p.bN, p.bK, n0, p.N, p.K, t);
  float acc[TM][TN];
  gemmMainLoop<BM, BN, THREADS>(la, lb, p.K, reinterpret_cast<float*>(smem), active, acc);
  if (!active) return;

  const int ty = t / TX, tx = t % TX;
  const GemmEpilogue<S> out(p, b);
  MGK_UNROLL
  for (int i = 0; i < TM; ++i) {
    const int64_t m = m0 + ty + i * TY;
    if (m >= p.M) break;
    MGK_UNROLL
    for (int j = 0; j < TN; ++j) {
      const int64_t n = n0 + tx + j * TX;
      if (n >= p.N) break;
      out.store(m, n, acc[i][j]);
    }
  }
}

#if defined(MG_HAS_WMMA)
// ---- fp16: tensor cores (wmma 16x16x16, half inputs, float accumulation) --------------------
// gemmF16Block<BM, BN, THREADS> (and convF16Block, mg_conv.cuh): the same tiles, loaders,
// block order and epilogue as the float programs; only the main loop differs. The loaders'
// float registers are rounded to half as they are stored into shared memory (k-major, row stride
// ROWS + 8 halfs: no swizzle, the padding spreads a k-contiguous operand's stores over banks),
// warp w computes 16x16 fragments w*kPerWarp ... of the BM x BN tile with mma_sync over two
// k-steps of 16 per BK = 32 k-tile, and after the loop the float accumulators are stored into a
// BM x (BN + 4) float tile in shared memory (overlaying the operand tiles), which the epilogue
// reads with THREADS consecutive outputs per row sweep (coalesced stores of Y). S is the storage
// type of every operand (float: only the products are of half-rounded operands; Half: operands,
// C, residual and Y are half in memory, the accumulation and epilogue float; |x| > 65504
// overflows either way).
// Needs: BM, BN multiples of 16 (every kGemmTiles entry is), THREADS a multiple of 32 with the
// (BM/16)*(BN/16) fragments a multiple of THREADS/32, and the float program's loader rules.
// wmma pointers must be 256-bit aligned: every fragment offset below is a multiple of 32 bytes
// from smem, which CUDA's dynamic shared memory base is (no static __shared__ in these kernels).
template <int BM, int BN, int THREADS>
struct GemmTileF16 {
  static constexpr int kWarps = THREADS / 32;
  static constexpr int kFM = BM / 16, kFN = BN / 16;
  static constexpr int kPerWarp = kFM * kFN / (kWarps > 0 ? kWarps : 1);
  static constexpr int kLdA = BM + 8, kLdB = BN + 8;  // halfs
  static constexpr int kLdC = BN + 4;                 // floats
  static constexpr int kStage = (kLdA + kLdB) * kGemmBK;  // halfs per stage
  static constexpr int kOperandBytes = 2 * kStage * 2;
  static constexpr int kStagingBytes = BM * kLdC * 4;
  static constexpr int kSmemBytes = kOperandBytes > kStagingBytes ? kOperandBytes : kStagingBytes;
  static_assert(BM % 16 == 0 && BN % 16 == 0, "fp16 tiles are multiples of the 16x16 fragment");
  static_assert(THREADS % 32 == 0 && kWarps > 0, "whole warps");
  static_assert(kFM * kFN % kWarps == 0 && kPerWarp > 0, "every warp owns the same fragments");
  static_assert(isPow2(BM) && isPow2(BN) && isPow2(THREADS), "tile sizes are powers of two");
  static_assert(THREADS % BM == 0 && THREADS % BN == 0 && THREADS % kGemmBK == 0,
                "loaders give each thread a fixed row or k: BM, BN and BK must divide THREADS");
  static_assert(BM * kGemmBK % THREADS == 0 && BN * kGemmBK % THREADS == 0, "whole tiles");
  static_assert(BM * BN % THREADS == 0, "the epilogue gives every thread the same outputs");
};

// The fp16 main loop: leaves C(m, n) = sum_k A(m0 + m, k) * B(k, n0 + n) as float at
// smem[m * kLdC + n] for the whole BM x BN tile, after a barrier. Every thread of the block must
// call it; `active` (threadIdx.x < THREADS, so whole warps) selects those that work.
template <int BM, int BN, int THREADS, typename LA, typename LB>
MG_DEVICE void gemmMainLoopF16(LA& la, LB& lb, int64_t K, char* smem, bool active) {
  using T = GemmTileF16<BM, BN, THREADS>;
  using mg_wmma::fragment;
  mg_half* const base = reinterpret_cast<mg_half*>(smem);
  const int warp = int(threadIdx.x) / 32;
  fragment<mg_wmma::accumulator, 16, 16, 16, float> acc[T::kPerWarp];
  MGK_UNROLL
  for (int f = 0; f < T::kPerWarp; ++f) mg_wmma::fill_fragment(acc[f], 0.f);

  const int64_t tiles = ceilDiv(K, kGemmBK);
  if (active && tiles > 0) {
    la.fetch();
    lb.fetch();
    la.template stashHalf<T::kLdA>(base);
    lb.template stashHalf<T::kLdB>(base + T::kLdA * kGemmBK);
  }
  __syncthreads();
  MGK_NO_UNROLL
  for (int64_t kt = 0; kt < tiles; ++kt) {
    const int cur = int(kt & 1);
    const bool more = kt + 1 < tiles;
    if (active) {
      if (more) {
        la.fetch();
        lb.fetch();
      }
      const mg_half* a = base + cur * T::kStage;
      const mg_half* b = a + T::kLdA * kGemmBK;
      MGK_UNROLL
      for (int kk = 0; kk < kGemmBK; kk += 16) {
        MGK_UNROLL
        for (int f = 0; f < T::kPerWarp; ++f) {
          const int frag = warp * T::kPerWarp + f, fm = frag / T::kFN, fn = frag % T::kFN;
          // The A tile is k-major (element (m, k) at k*kLdA + m): a col_major m x k matrix.
          fragment<mg_wmma::matrix_a, 16, 16, 16, mg_half, mg_wmma::col_major> fa;
          fragment<mg_wmma::matrix_b, 16, 16, 16, mg_half, mg_wmma::row_major> fb;
          mg_wmma::load_matrix_sync(fa, a + kk * T::kLdA + fm * 16, T::kLdA);
          mg_wmma::load_matrix_sync(fb, b + kk * T::kLdB + fn * 16, T::kLdB);
          mg_wmma::mma_sync(acc[f], fa, fb, acc[f]);
        }
      }
      if (more) {
        la.template stashHalf<T::kLdA>(base + (cur ^ 1) * T::kStage);
        lb.template stashHalf<T::kLdB>(base + (cur ^ 1) * T::kStage + T::kLdA * kGemmBK);
      }
    }
    __syncthreads();
  }
  // Every operand read is done (the barrier above): the float tile overlays the stages.
  float* c = reinterpret_cast<float*>(smem);
  if (active) {
    MGK_UNROLL
    for (int f = 0; f < T::kPerWarp; ++f) {
      const int frag = warp * T::kPerWarp + f, fm = frag / T::kFN, fn = frag % T::kFN;
      mg_wmma::store_matrix_sync(c + fm * 16 * T::kLdC + fn * 16, acc[f], T::kLdC,
                                 mg_wmma::mem_row_major);
    }
  }
  __syncthreads();
}

template <int BM, int BN, int THREADS, typename S = float>
__host__ __device__ int64_t gemmF16Blocks(const GemmParams& p) {
  return gemmBlocks<BM, BN, THREADS, S>(p);
}

template <int BM, int BN, int THREADS, typename S = float>
__host__ __device__ constexpr int gemmF16SmemBytes() {
  return GemmTileF16<BM, BN, THREADS>::kSmemBytes;
}

template <int BM, int BN, int THREADS, typename S = float>
MGK_PROGRAM void gemmF16Block(const GemmParams& p, int64_t block, char* smem) {
  using T = GemmTileF16<BM, BN, THREADS>;
  const int64_t tilesN = ceilDiv(p.N, BN), tilesM = ceilDiv(p.M, BM);
  const int64_t b = block / (tilesM * tilesN), rem = block - b * tilesM * tilesN;
  const int64_t m0 = rem / tilesN * BM, n0 = rem % tilesN * BN;
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;

  StridedLoader<BM, THREADS, S> la(asS<S>(p.A) + b * p.aBatch, p.aM, p.aK, m0, p.M, p.K, t);
  StridedLoader<BN, THREADS, S> lb(asS<S>(p.B) + b * p.bBatch, p.bN, p.bK, n0, p.N, p.K, t);
  gemmMainLoopF16<BM, BN, THREADS>(la, lb, p.K, smem, active);
  if (!active) return;

  // The float program's epilogue, per output of the staged tile.
  const float* acc = reinterpret_cast<const float*>(smem);
  const GemmEpilogue<S> out(p, b);
  MGK_UNROLL
  for (int i = 0; i < BM * BN / THREADS; ++i) {
    const int e = t + i * THREADS, r = e / BN, col = e % BN;
    const int64_t m = m0 + r, n = n0 + col;
    if (m >= p.M || n >= p.N) continue;
    out.store(m, n, acc[r * T::kLdC + col]);
  }
}
#endif  // MG_HAS_WMMA

}  // namespace mgk
