// gemv: the GEMM of mg_gemm.cuh (same GemmParams, same fused epilogue) for skinny products,
// M <= 16: a batch-1 classifier head (GoogLeNet's 1024 -> 1000), Q/K/V projections of one token.
// The big-tile program spends a BM x BN register micro-tile (up to 255 registers) and BM rows of
// shared memory on one useful row; this program is memory-bound by design: it streams the
// weight once, with K split across the block's threads, and reduces the partial sums at the end.
//
//   gemvBlock<ROWS, COLS, THREADS>(p, block, smem)
//     block -> (batch b, row group, column group), column groups fastest, as gemmBlock's tiles:
//     rows m0 .. m0+ROWS-1 (ROWS >= M normally: one row group), columns n0 .. n0+COLS-1.
//     Each of the COLS columns gets KT = THREADS/COLS threads ("lanes"); lane l sums k = l,
//     l + KT, l + 2*KT, ... for every row into ROWS float accumulators (registers), so the
//     weight column is read once per block and A's rows (small, L1/L2-resident) once per column.
//     Instantiated by the lowering (codegen/gpu/lower_compute.cpp) as ROWS in {1, 4, 16}, COLS in
//     {8, 32}, THREADS 256: the cost model's gemv tiles (src/target/cost_model.cpp kGemvTiles).
//
// Coalescing. The weight B(k, n) has strides (bK, bN); like StridedLoader, a k-contiguous one
// (Gemm transB = 1, the usual Linear layout [N, K]) maps consecutive threads to consecutive k of
// one column (lane = t % KT), an n-contiguous one (MatMul's [K, N]) to consecutive columns at one
// k (column = t % COLS). Either way a warp's loads fill whole 32-byte sectors (KT and COLS are at
// least 8). Four k-steps per iteration keep four independent weight loads in flight per thread.
//
// Reduction. Through shared memory, not warp shuffles (the lanes of a column span warps when KT >
// the warp size, warps are 32 or 64 wide, and the CPU emulation runs blocks as fibers): every
// thread stores its ROWS partial sums at red[r][lane][column] (row stride COLS + 1: conflict-free
// for both thread mappings), one barrier, then thread e of the block sums the KT lanes of output
// (r, c) = (e / COLS, e % COLS) in lane order (deterministic) and applies the epilogue: alpha,
// beta * C, the residual, the activation: gemmBlock's GemmEpilogue.
//
// The transposed role (N <= 16 < M): the lowering swaps A and B (Y^T = B^T A^T) by swapping
// strides, so the same program streams A; nothing here depends on which operand is the weight.
//
// Shared memory: ROWS * KT * (COLS + 1) floats (16 x 32 x 9 x 4 = 18 KiB for 16 rows, 8 columns).
// Joint kernels: only one barrier, reached by every thread (idle ones included).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_gemm.cuh"  // GemmEpilogue

namespace mgk {

template <int ROWS, int COLS, int THREADS>
struct GemvTile {
  static constexpr int kLanes = THREADS / COLS;  // threads along k per column
  static constexpr int kRedStride = COLS + 1;    // floats between lanes in the reduction buffer
  static constexpr int kSmemFloats = ROWS * kLanes * kRedStride;
  static constexpr int kUnroll = 4;  // k-steps (weight loads in flight) per iteration
  static_assert(ROWS >= 1 && ROWS <= 16, "gemv programs hold at most 16 rows in registers");
  static_assert(isPow2(COLS) && isPow2(THREADS) && THREADS % COLS == 0 && kLanes >= 1,
                "COLS and THREADS are powers of two, COLS dividing THREADS");
};

template <int ROWS, int COLS, int THREADS, typename S = float>
__host__ __device__ int64_t gemvBlocks(const GemmParams& p) {
  return p.batch * ceilDiv(p.M, ROWS) * ceilDiv(p.N, COLS);
}

template <int ROWS, int COLS, int THREADS, typename S = float>
__host__ __device__ constexpr int gemvSmemBytes() {
  return GemvTile<ROWS, COLS, THREADS>::kSmemFloats * int(sizeof(float));
}

template <int ROWS, int COLS, int THREADS, typename S = float>
MGK_PROGRAM void gemvBlock(const GemmParams& p, int64_t block, char* smem) {
  using Tile = GemvTile<ROWS, COLS, THREADS>;
  constexpr int KT = Tile::kLanes, U = Tile::kUnroll;
  const int64_t tilesN = ceilDiv(p.N, COLS), tilesM = ceilDiv(p.M, ROWS);
  const int64_t b = block / (tilesM * tilesN), rem = block - b * tilesM * tilesN;
  const int64_t m0 = rem / tilesN * ROWS, n0 = rem % tilesN * COLS;
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;
  // k-contiguous (or neither-contiguous) weight: lanes along k; n-contiguous: columns along t.
  const bool kFast = p.bK == 1 || p.bN != 1;
  const int lane = kFast ? t % KT : t / COLS;
  const int col = kFast ? t / KT : t % COLS;
  const int64_t rows = p.M - m0 < ROWS ? p.M - m0 : ROWS;
  const int64_t n = n0 + col;

  float acc[ROWS];
  MGK_UNROLL
  for (int r = 0; r < ROWS; ++r) acc[r] = 0.f;
  if (active && n < p.N) {
    const S* w = asS<S>(p.B) + b * p.bBatch + n * p.bN + lane * p.bK;
    const S* a = asS<S>(p.A) + b * p.aBatch + m0 * p.aM + lane * p.aK;
    const int64_t wStep = KT * p.bK, aStep = KT * p.aK;
    int64_t k = lane;
    MGK_NO_UNROLL
    for (; k + (U - 1) * KT < p.K; k += U * KT) {
      float wv[U];
      MGK_UNROLL
      for (int u = 0; u < U; ++u) wv[u] = ldF(w[u * wStep]);
      MGK_UNROLL
      for (int r = 0; r < ROWS; ++r) {
        if (r >= rows) break;
        const S* ar = a + r * p.aM;
        MGK_UNROLL
        for (int u = 0; u < U; ++u) acc[r] += ldF(ar[u * aStep]) * wv[u];
      }
      w += U * wStep;
      a += U * aStep;
    }
    MGK_NO_UNROLL
    for (; k < p.K; k += KT) {
      const float wv = ldF(*w);
      MGK_UNROLL
      for (int r = 0; r < ROWS; ++r) {
        if (r >= rows) break;
        acc[r] += ldF(a[r * p.aM]) * wv;
      }
      w += wStep;
      a += aStep;
    }
  }
  float* red = reinterpret_cast<float*>(smem);
  if (active) {
    MGK_UNROLL
    for (int r = 0; r < ROWS; ++r) red[(r * KT + lane) * Tile::kRedStride + col] = acc[r];
  }
  __syncthreads();
  if (!active) return;

  const GemmEpilogue<S> out(p, b);
  MGK_NO_UNROLL
  for (int e = t; e < ROWS * COLS; e += THREADS) {
    const int r = e / COLS, cc = e % COLS;
    const int64_t m = m0 + r, nn = n0 + cc;
    if (m >= p.M || nn >= p.N) continue;
    const float* part = red + r * KT * Tile::kRedStride + cc;
    float s = 0.f;
    MGK_UNROLL
    for (int l = 0; l < KT; ++l) s += part[l * Tile::kRedStride];
    out.store(m, nn, s);
  }
}

}  // namespace mgk
