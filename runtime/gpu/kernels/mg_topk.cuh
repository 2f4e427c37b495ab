// topk: TopK as a block program, and the sorting pieces that Unique and NonMaxSuppression
// (mg_select.cuh) share with it.
//
// Order. The CPU kernel (runtime/cpu/k_reduction.cpp, topKKernel) sorts each row by a strict
// total order: NaN above every number and equal to every NaN, -0.0 equal to 0.0, `largest`
// reversing the value order but never the tie-break, equal values by lower index first (as
// ONNX and onnxruntime). Here every value becomes an order-preserving 64-bit key (`ordKey`:
// a < b in that order iff key(a) < key(b), equal iff equal keys; NaN the largest key, -0.0
// mapped to 0.0), inverted for `largest`, and entries compare as (key, index) pairs. The values
// written are the input's elements themselves (their bits), read back by index.
//
// topkBlock<T, C, THREADS>: one block per row (rows = outer * inner; a row is the axis' n
// elements, `inner` apart). Two paths, chosen per launch (the same for every block):
//   K <= C (C a power of two, the lowering's choice: >= K for a constant K; for a K known at run
//     time the most the row can need, up to 1024): a running top-C in shared memory. The row is
//     read in chunks of C elements into the second half of a 2C-entry buffer whose first half
//     holds the best C so far, sorted. A chunk in which no element beats the current K-th best
//     (__syncthreads_or) is skipped; otherwise it is bitonic-sorted (log2(C)(log2(C)+1)/2
//     barrier steps), merged against the best half by the min of entries i and 2C-1-i (which
//     leaves the C best as a bitonic sequence) and that half sorted by a bitonic merge (log2(C)
//     steps). Cost per row: n/THREADS loads plus C log^2 C / THREADS per chunk that is not
//     skipped; for random data and small K almost every chunk after the first is skipped.
//   K > C (large K, rare): each element's rank in the row by counting, the row read in tiles of
//     THREADS keys through shared memory; an element of rank r < K is written at r. O(n^2 /
//     THREADS) per row, no atomics, deterministic.
// K: the constant `k`, or, when kPtr is set, the int64 there (ONNX's run-time K: a data-dependent
// extent, docs/DYNAMIC_SHAPES.md): block 0 writes it to `count` for the package to bind, and the
// results are written compactly at it ([outer, K, inner]); a K outside [0, n] is refused by the
// package after the launch (the data symbol's range), the program clamps it to stay in bounds.
// Rows must be fewer than 2^31 elements (indices are int32 inside). Shared memory:
// max(2C, THREADS) entries of 8 + 4 bytes.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

// Order-preserving keys (see above).
MG_DEVICE uint64_t ordKey(float v) {
  if (v != v) return ~uint64_t(0);
  if (v == 0.f) v = 0.f;  // -0.0 is 0.0
  const uint32_t b = __float_as_uint(v);
  return uint64_t((b & 0x80000000u) ? ~b : (b | 0x80000000u));
}
MG_DEVICE uint64_t ordKey(double v) {
  if (v != v) return ~uint64_t(0);
  if (v == 0.0) v = 0.0;
  const uint64_t b = uint64_t(__double_as_longlong(v));
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
MG_DEVICE uint64_t ordKey(Half v) { return ordKey(halfToFloat(v.bits)); }
MG_DEVICE uint64_t ordKey(BFloat16 v) { return ordKey(bf16ToFloat(v.bits)); }
MG_DEVICE uint64_t ordKey(int8_t v) { return uint64_t(int64_t(v)) ^ 0x8000000000000000ull; }
MG_DEVICE uint64_t ordKey(int16_t v) { return uint64_t(int64_t(v)) ^ 0x8000000000000000ull; }
MG_DEVICE uint64_t ordKey(int32_t v) { return uint64_t(int64_t(v)) ^ 0x8000000000000000ull; }
MG_DEVICE uint64_t ordKey(int64_t v) { return uint64_t(v) ^ 0x8000000000000000ull; }
MG_DEVICE uint64_t ordKey(uint8_t v) { return uint64_t(v); }
MG_DEVICE uint64_t ordKey(uint16_t v) { return uint64_t(v); }
MG_DEVICE uint64_t ordKey(uint32_t v) { return uint64_t(v); }
MG_DEVICE uint64_t ordKey(uint64_t v) { return v; }

// The entry after every real one: the largest key with an index no row reaches.
constexpr uint64_t kSortSentinelKey = ~uint64_t(0);
constexpr int32_t kSortSentinelIdx = 0x7fffffff;

// (ka, ia) before (kb, ib).
MG_DEVICE bool pairLess(uint64_t ka, int32_t ia, uint64_t kb, int32_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

namespace detail {

MG_DEVICE void sortSwapIf(uint64_t* key, int32_t* idx, int i, int l, bool ascending) {
  // i < l: in an ascending run entry i must not come after entry l.
  const bool after = pairLess(key[l], idx[l], key[i], idx[i]);
  if (after == ascending) {
    const uint64_t k = key[i];
    key[i] = key[l];
    key[l] = k;
    const int32_t x = idx[i];
    idx[i] = idx[l];
    idx[l] = x;
  }
}

}  // namespace detail

// Sorts size (a power of two) entries ascending by (key, idx): a bitonic network, every thread
// of the block at every barrier (threads >= THREADS idle). key/idx may be shared or global
// memory of this block (a barrier orders both within a block). Ends with a barrier.
template <int THREADS>
MG_DEVICE void bitonicSort(uint64_t* key, int32_t* idx, int size) {
  const int t = int(threadIdx.x);
  MGK_NO_UNROLL
  for (int k = 2; k <= size; k <<= 1) {
    MGK_NO_UNROLL
    for (int j = k >> 1; j > 0; j >>= 1) {
      if (t < THREADS)
        for (int i = t; i < size; i += THREADS) {
          const int l = i ^ j;
          if (l > i) detail::sortSwapIf(key, idx, i, l, (i & k) == 0);
        }
      __syncthreads();
    }
  }
}

// Sorts a bitonic sequence of size (a power of two) entries ascending: the last log2(size)
// stages of the network above. Ends with a barrier.
template <int THREADS>
MG_DEVICE void bitonicMerge(uint64_t* key, int32_t* idx, int size) {
  const int t = int(threadIdx.x);
  MGK_NO_UNROLL
  for (int j = size >> 1; j > 0; j >>= 1) {
    if (t < THREADS)
      for (int i = t; i < size; i += THREADS) {
        const int l = i ^ j;
        if (l > i) detail::sortSwapIf(key, idx, i, l, true);
      }
    __syncthreads();
  }
}

struct TopKParams {
  int64_t rows;          // outer * inner (the grid: max(rows, 1) blocks)
  int64_t inner;         // distance between a row's elements
  int64_t n;             // the axis' extent
  int64_t k;             // K when kPtr is null
  const int64_t* kPtr;   // a run-time K (one int64), or null
  int32_t largest;       // 1: the K largest, 0: the K smallest
  const void* x;         // [outer, n, inner]
  void* values;          // [outer, K, inner], T
  int64_t* indices;      // [outer, K, inner]
  int64_t* count;        // run-time K: where K is reported (MG_COUNT), else null
};

template <typename T, int C, int THREADS>
__host__ __device__ int64_t topkBlocks(const TopKParams& p) {
  return p.rows > 0 ? p.rows : 1;
}
template <typename T, int C, int THREADS>
__host__ __device__ constexpr int topkSmemBytes() {
  return (2 * C > THREADS ? 2 * C : THREADS) * int(sizeof(uint64_t) + sizeof(int32_t));
}

template <typename T, int C, int THREADS>
MGK_PROGRAM void topkBlock(const TopKParams& p, int64_t row, char* smem) {
  static_assert(isPow2(C) && isPow2(THREADS), "TopK needs power-of-two C and THREADS");
  constexpr int E = 2 * C > THREADS ? 2 * C : THREADS;
  uint64_t* key = reinterpret_cast<uint64_t*>(smem);
  int32_t* idx = reinterpret_cast<int32_t*>(smem + E * sizeof(uint64_t));
  const int t = int(threadIdx.x);
  int64_t kk = p.k;
  if (p.kPtr) {
    kk = *p.kPtr;
    if (row == 0 && t == 0 && p.count) *p.count = kk;  // the package checks it against [0, n]
  }
  if (kk > p.n) kk = p.n;
  if (kk <= 0 || row >= p.rows) return;  // the same for every thread of the block
  const T* x = static_cast<const T*>(p.x);
  T* vals = static_cast<T*>(p.values);
  const int64_t o = row / p.inner, i = row - o * p.inner;
  const int64_t base = o * p.n * p.inner + i, obase = o * kk * p.inner + i;
  const uint64_t flip = p.largest ? ~uint64_t(0) : 0;
  if (kk <= C) {
    for (int e = t; e < C && t < THREADS; e += THREADS) key[e] = kSortSentinelKey, idx[e] = kSortSentinelIdx;
    MGK_NO_UNROLL
    for (int64_t c0 = 0; c0 < p.n; c0 += C) {
      __syncthreads();  // the best half (and its K-th entry) is final; the chunk half is free
      const uint64_t thrKey = key[kk - 1];
      const int32_t thrIdx = idx[kk - 1];
      int better = 0;
      if (t < THREADS)
        for (int e = t; e < C; e += THREADS) {
          const int64_t j = c0 + e;
          uint64_t kj = kSortSentinelKey;
          int32_t ij = kSortSentinelIdx;
          if (j < p.n) kj = ordKey(x[base + j * p.inner]) ^ flip, ij = int32_t(j);
          key[C + e] = kj;
          idx[C + e] = ij;
          better |= pairLess(kj, ij, thrKey, thrIdx) ? 1 : 0;
        }
      if (!__syncthreads_or(better)) continue;  // nothing in this chunk enters the top K
      bitonicSort<THREADS>(key + C, idx + C, C);
      if (t < THREADS)
        for (int e = t; e < C; e += THREADS) {
          const int m = 2 * C - 1 - e;
          if (pairLess(key[m], idx[m], key[e], idx[e])) key[e] = key[m], idx[e] = idx[m];
        }
      __syncthreads();
      bitonicMerge<THREADS>(key, idx, C);
    }
    if (t < THREADS)
      for (int64_t j = t; j < kk; j += THREADS) {
        const int32_t at = idx[j];
        vals[obase + j * p.inner] = x[base + int64_t(at) * p.inner];
        p.indices[obase + j * p.inner] = at;
      }
    return;
  }
  // Large K: every element's rank by counting, the row's keys in tiles of THREADS.
  MGK_NO_UNROLL
  for (int64_t i0 = 0; i0 < p.n; i0 += THREADS) {
    const int64_t me = i0 + t;
    const bool mine = t < THREADS && me < p.n;
    const uint64_t myKey = mine ? ordKey(x[base + me * p.inner]) ^ flip : kSortSentinelKey;
    int64_t rank = 0;
    MGK_NO_UNROLL
    for (int64_t j0 = 0; j0 < p.n; j0 += THREADS) {
      if (t < THREADS) {
        const int64_t j = j0 + t;
        key[t] = j < p.n ? ordKey(x[base + j * p.inner]) ^ flip : kSortSentinelKey;
        idx[t] = j < p.n ? int32_t(j) : kSortSentinelIdx;
      }
      __syncthreads();
      if (mine) {
        const int64_t m = p.n - j0 < THREADS ? p.n - j0 : THREADS;
        for (int64_t q = 0; q < m; ++q) rank += pairLess(key[q], idx[q], myKey, int32_t(me)) ? 1 : 0;
      }
      __syncthreads();
    }
    if (mine && rank < kk) {
      vals[obase + rank * p.inner] = x[base + me * p.inner];
      p.indices[obase + rank * p.inner] = me;
    }
  }
}

}  // namespace mgk
