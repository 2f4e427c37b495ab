// select: the producers of data-dependent extents (docs/DYNAMIC_SHAPES.md, "Data-dependent
// extents") as block programs: NonZero, Compress, Unique and NonMaxSuppression (TopK with a
// run-time K: mg_topk.cuh). Their result extent is a count known only
// once the data is read; the result buffer is planned at its bound (the capacity) and the program
// writes the result compactly at the count, exactly as the CPU kernels do (row r of NonZero's
// [rank, count] result at r*count), and stores the count in a one-element int64 device buffer
// (`count`) that the host reads back to bind the data symbol.
//
// One block (xxxBlocks() == 1), three phases, deterministic (no atomics, no order that depends on
// the schedule):
//   1. count: thread t owns the contiguous chunk [t*per, (t+1)*per) of the positions (elements
//      for NonZero, condition positions for Compress) and counts the selected ones;
//   2. scan: an inclusive Hillis-Steele scan of the THREADS counts in shared memory (log2(THREADS)
//      steps, every thread of the block at every barrier) gives each thread its base and the
//      total (the count);
//   3. compact: each thread walks its chunk again in order and writes its selected positions from
//      its base on, so the output order is the row-major order of the input, the CPU's order.
// Thread 0 writes the count. Shared memory: 2*THREADS int64 (the scan's two buffers).
//   nonzeroBlock<T, THREADS>   T: the element type (uint8_t for bool, the integer types, float,
//     double, Half, BFloat16); an element is selected when it is not zero (-0.0 is zero, NaN is
//     not, as numpy's nonzero).
//   compressBlock<W, THREADS>  W: an unsigned word of the element's size (uint8_t, uint16_t,
//     uint32_t, uint64_t): the slices are copied, not computed, so every type of that size shares
//     one instantiation. x is viewed as [outer, axisLen, inner] (without an axis: [1, numel, 1]);
//     condition positions past min(condLen, axisLen) are not selected (ONNX Compress).
// A single block suits the masks these ops see in models (detector post-processing, token
// masks: thousands of positions); Compress copies each kept slice on one thread.
//
// Unique and NonMaxSuppression (their counts are data-dependent extents too) run in two phases,
// i.e. two launches (GpuItem::phase): phase 0 computes per-position facts into the launch's
// scratch, phase 1 reads every block's facts and writes the results compactly at the count.
//   uniqueFirstBlock / uniqueWriteBlock<T, THREADS>: x seen as [outer, n, inner], slice j is
//     x[:, j, :] (without axis: [1, numel, 1]); slices compare lexicographically by ordKey (NaN
//     after every number and equal to NaN, -0.0 equal to 0.0: the CPU's uniqueCompare). Phase 0,
//     one thread per position j: first[j], the position of the first slice equal to slice j
//     (a scan of the positions before it). Phase 1, one thread per position again: every block
//     counts the representatives (first[j] == j, __syncthreads_count over the positions): the
//     count u; position j's group is the number of representatives ordered before its own (by
//     slice value when sorted, by position otherwise: the CPU's order), which is inverse[j]; a
//     representative writes its slice at its group ([outer, u, inner]), indices (j) and counts
//     (the positions whose first is j). Block 0 writes u. O(n^2 * slice) compares over the grid:
//     meant for the thousands of positions that models dedupe, not for sorting millions.
//   nmsSelectBlock / nmsWriteBlock<THREADS>: phase 0, one block per (batch, class): the boxes
//     whose score passes the threshold sorted by descending score (ties: lower box first) with
//     the bitonic network, in shared memory for up to kNmsSmemBoxes boxes and in the block's
//     scratch beyond; then the greedy pass in that order: a candidate is kept unless a box kept
//     before it suppresses it (every thread tests a share of the kept boxes, __syncthreads_or),
//     until max_output_boxes_per_class are kept; the kept boxes and their number go to scratch.
//     The IOU is the CPU's formula (k_select_shared.h, nmsSuppresses) with round-to-nearest
//     operations that no compiler contracts (__fmul_rn ...), so the same boxes are kept. Phase 1,
//     one block per (batch, class): its offset is the sum of the numbers before it; it writes its
//     (batch, class, box) triples there; block 0 writes the total. max_output_boxes_per_class,
//     iou_threshold and score_threshold are read from device memory (constants or run-time
//     operands alike); an iou_threshold outside [0, 1], which the CPU target refuses at run time,
//     is used as given.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"
#include "mg_topk.cuh"

namespace mgk {

struct NonZeroParams {
  int64_t numel;  // elements of x
  int32_t rank;   // of x; the result is [rank, count]
  int64_t dims[kMaxRank];
  const void* x;
  int64_t* y;      // rank * numel int64 of capacity
  int64_t* count;  // one int64
};

struct CompressParams {
  int64_t outer, axisLen, inner;  // x as [outer, axisLen, inner]
  int64_t condLen;                // condition's length
  const uint8_t* condition;       // bool
  const void* x;
  void* y;         // [outer, count, inner]: outer * min(condLen, axisLen) * inner of capacity
  int64_t* count;  // one int64
};

template <typename T>
MG_DEVICE bool selNonZero(T v) {
  return v != T(0);
}
MG_DEVICE bool selNonZero(Half v) { return (v.bits & 0x7fffu) != 0; }
MG_DEVICE bool selNonZero(BFloat16 v) { return (v.bits & 0x7fffu) != 0; }

template <typename T, int THREADS>
__host__ __device__ int64_t nonzeroBlocks(const NonZeroParams&) {
  return 1;
}
template <typename T, int THREADS>
__host__ __device__ constexpr int nonzeroSmemBytes() {
  return 2 * THREADS * int(sizeof(int64_t));
}
template <typename W, int THREADS>
__host__ __device__ int64_t compressBlocks(const CompressParams&) {
  return 1;
}
template <typename W, int THREADS>
__host__ __device__ constexpr int compressSmemBytes() {
  return 2 * THREADS * int(sizeof(int64_t));
}

namespace detail {

// The chunk [lo, hi) of n positions that thread t owns (empty for idle threads and past n).
MG_DEVICE void selChunk(int64_t n, int t, int threads, int64_t& lo, int64_t& hi) {
  const int64_t per = ceilDiv(n, threads);
  lo = t < threads ? int64_t(t) * per : n;
  if (lo > n) lo = n;
  hi = lo + per < n ? lo + per : n;
  if (t >= threads) hi = lo;
}

// Inclusive scan of one count per thread over the first THREADS threads; every thread of the
// block calls it. Returns this thread's exclusive base; `total` gets the sum of all counts.
template <int THREADS>
MG_DEVICE int64_t selScan(int64_t c, int64_t* buf, int64_t& total) {
  static_assert(isPow2(THREADS), "the scan needs a power-of-two thread count");
  const int t = int(threadIdx.x);
  int64_t* a = buf;
  int64_t* b = buf + THREADS;
  if (t < THREADS) a[t] = c;
  __syncthreads();
  MGK_NO_UNROLL
  for (int off = 1; off < THREADS; off <<= 1) {
    if (t < THREADS) b[t] = a[t] + (t >= off ? a[t - off] : 0);
    __syncthreads();
    int64_t* s = a;
    a = b;
    b = s;
  }
  total = a[THREADS - 1];
  const int64_t incl = t < THREADS ? a[t] : 0;
  return incl - c;
}

}  // namespace detail

template <typename T, int THREADS>
MGK_PROGRAM void nonzeroBlock(const NonZeroParams& p, int64_t, char* smem) {
  const int t = int(threadIdx.x);
  const T* x = static_cast<const T*>(p.x);
  int64_t lo, hi;
  detail::selChunk(p.numel, t, THREADS, lo, hi);
  int64_t c = 0;
  for (int64_t i = lo; i < hi; ++i) c += selNonZero(x[i]) ? 1 : 0;
  int64_t total = 0;
  int64_t k = detail::selScan<THREADS>(t < THREADS ? c : 0, reinterpret_cast<int64_t*>(smem),
                                       total);
  for (int64_t i = lo; i < hi; ++i) {
    if (!selNonZero(x[i])) continue;
    int64_t rest = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t q = rest / p.dims[d];
      p.y[int64_t(d) * total + k] = rest - q * p.dims[d];
      rest = q;
    }
    ++k;
  }
  if (t == 0) *p.count = total;
}

template <typename W, int THREADS>
MGK_PROGRAM void compressBlock(const CompressParams& p, int64_t, char* smem) {
  const int t = int(threadIdx.x);
  const int64_t n = p.condLen < p.axisLen ? p.condLen : p.axisLen;
  int64_t lo, hi;
  detail::selChunk(n, t, THREADS, lo, hi);
  int64_t c = 0;
  for (int64_t a = lo; a < hi; ++a) c += p.condition[a] ? 1 : 0;
  int64_t total = 0;
  int64_t k = detail::selScan<THREADS>(t < THREADS ? c : 0, reinterpret_cast<int64_t*>(smem),
                                       total);
  const W* x = static_cast<const W*>(p.x);
  W* y = static_cast<W*>(p.y);
  for (int64_t a = lo; a < hi; ++a) {
    if (!p.condition[a]) continue;
    for (int64_t o = 0; o < p.outer; ++o) {
      const W* src = x + (o * p.axisLen + a) * p.inner;
      W* dst = y + (o * total + k) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) dst[i] = src[i];
    }
    ++k;
  }
  if (t == 0) *p.count = total;
}

// ---- Unique -----------------------------------------------------------------------------------

struct UniqueParams {
  int64_t outer, n, inner;  // x as [outer, n, inner]
  int32_t sorted;
  const void* x;
  void* y;            // [outer, u, inner]: outer * n * inner of capacity
  int64_t* indices;   // [u] or null
  int64_t* inverse;   // [n] or null
  int64_t* counts;    // [u] or null
  int64_t* first;     // scratch: n int64 (phase 0 writes, phase 1 reads)
  int64_t* count;     // one int64: u
};

namespace detail {

// Slice p against slice q of x ([outer, n, inner]): -1, 0 or 1.
template <typename T>
MG_DEVICE int uniqueCmp(const T* x, const UniqueParams& p, int64_t a, int64_t b) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t e = 0; e < p.inner; ++e) {
      const uint64_t ka = ordKey(x[(o * p.n + a) * p.inner + e]);
      const uint64_t kb = ordKey(x[(o * p.n + b) * p.inner + e]);
      if (ka != kb) return ka < kb ? -1 : 1;
    }
  return 0;
}

}  // namespace detail

template <typename T, int THREADS>
__host__ __device__ int64_t uniqueFirstBlocks(const UniqueParams& p) {
  return p.n > 0 ? ceilDiv(p.n, int64_t(THREADS)) : 1;
}
template <typename T, int THREADS>
__host__ __device__ constexpr int uniqueFirstSmemBytes() {
  return 0;
}
template <typename T, int THREADS>
__host__ __device__ int64_t uniqueWriteBlocks(const UniqueParams& p) {
  return p.n > 0 ? ceilDiv(p.n, int64_t(THREADS)) : 1;
}
template <typename T, int THREADS>
__host__ __device__ constexpr int uniqueWriteSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void uniqueFirstBlock(const UniqueParams& p, int64_t b, char*) {
  const int t = int(threadIdx.x);
  const int64_t j = b * THREADS + t;
  if (t >= THREADS || j >= p.n) return;
  const T* x = static_cast<const T*>(p.x);
  int64_t f = 0;
  while (f < j && detail::uniqueCmp(x, p, f, j) != 0) ++f;
  p.first[j] = f;
}

template <typename T, int THREADS>
MGK_PROGRAM void uniqueWriteBlock(const UniqueParams& p, int64_t b, char*) {
  const int t = int(threadIdx.x);
  int64_t u = 0;
  MGK_NO_UNROLL
  for (int64_t j0 = 0; j0 < p.n; j0 += THREADS) {
    const int64_t j = j0 + t;
    u += __syncthreads_count(t < THREADS && j < p.n && p.first[j] == j);
  }
  if (b == 0 && t == 0) *p.count = u;
  const int64_t j = b * THREADS + t;
  if (t >= THREADS || j >= p.n) return;
  const T* x = static_cast<const T*>(p.x);
  const int64_t f = p.first[j];
  int64_t g = 0;  // representatives ordered before f's
  for (int64_t q = 0; q < p.n; ++q) {
    if (p.first[q] != q || q == f) continue;
    g += (p.sorted ? detail::uniqueCmp(x, p, q, f) < 0 : q < f) ? 1 : 0;
  }
  if (p.inverse) p.inverse[j] = g;
  if (f != j) return;
  T* y = static_cast<T*>(p.y);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t e = 0; e < p.inner; ++e) y[(o * u + g) * p.inner + e] = x[(o * p.n + j) * p.inner + e];
  if (p.indices) p.indices[g] = j;
  if (p.counts) {
    int64_t c = 0;
    for (int64_t q = j; q < p.n; ++q) c += p.first[q] == j ? 1 : 0;
    p.counts[g] = c;
  }
}

// ---- NonMaxSuppression ------------------------------------------------------------------------

// Boxes sorted in shared memory up to this many (more: in the block's scratch).
constexpr int kNmsSmemBoxes = 2048;

struct NmsParams {
  int64_t batches, classes, boxes;
  int32_t sortSize;                // a power of two >= boxes
  int32_t center;                  // center_point_box
  const float* box;                // [batches, boxes, 4]
  const float* score;              // [batches, classes, boxes]
  const int64_t* maxOut;           // max_output_boxes_per_class, or null (0)
  const float* iou;                // iou_threshold, or null (0)
  const float* scoreThreshold;     // or null (none)
  uint64_t* sortKey;               // scratch when sortSize > kNmsSmemBoxes: sortSize per block
  int32_t* sortIdx;                //   (idem)
  int32_t* kept;                   // scratch: boxes per (batch, class)
  int64_t* keptCount;              // scratch: one per (batch, class)
  int64_t* y;                      // [count, 3]
  int64_t* count;                  // one int64
};

namespace detail {

// The extent of box b on its two axes (k_select_shared.h, nmsExtent).
MG_DEVICE void nmsExtentDev(const float* b, bool center, float lo[2], float hi[2]) {
  for (int a = 0; a < 2; ++a) {
    if (center) {
      const float half = b[a + 2] / 2;
      lo[a] = __fsub_rn(b[a], half);
      hi[a] = __fadd_rn(b[a], half);
    } else {
      lo[a] = b[a + 2] < b[a] ? b[a + 2] : b[a];  // std::min(b[a], b[a + 2])
      hi[a] = b[a] < b[a + 2] ? b[a + 2] : b[a];  // std::max(b[a], b[a + 2])
    }
  }
}

// Whether box p suppresses box q (k_select_shared.h, nmsSuppresses), operation for operation.
MG_DEVICE bool nmsSuppressesDev(const float* p, const float* q, bool center, float threshold) {
  float plo[2], phi[2], qlo[2], qhi[2], inter = 1;
  nmsExtentDev(p, center, plo, phi);
  nmsExtentDev(q, center, qlo, qhi);
  for (int a = 0; a < 2; ++a) {
    const float lo = plo[a] < qlo[a] ? qlo[a] : plo[a];  // std::max
    const float hi = qhi[a] < phi[a] ? qhi[a] : phi[a];  // std::min
    if (hi <= lo) return false;
    inter = __fmul_rn(inter, __fsub_rn(hi, lo));
  }
  const float areaP = __fmul_rn(__fsub_rn(phi[0], plo[0]), __fsub_rn(phi[1], plo[1]));
  const float areaQ = __fmul_rn(__fsub_rn(qhi[0], qlo[0]), __fsub_rn(qhi[1], qlo[1]));
  const float uni = __fsub_rn(__fadd_rn(areaP, areaQ), inter);
  if (inter <= 0 || areaP <= 0 || areaQ <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

}  // namespace detail

template <int THREADS>
__host__ __device__ int64_t nmsSelectBlocks(const NmsParams& p) {
  return p.batches * p.classes > 0 ? p.batches * p.classes : 1;
}
template <int THREADS>
__host__ __device__ constexpr int nmsSelectSmemBytes() {
  return kNmsSmemBoxes * int(sizeof(uint64_t) + sizeof(int32_t)) + 16;
}
template <int THREADS>
__host__ __device__ int64_t nmsWriteBlocks(const NmsParams& p) {
  return p.batches * p.classes > 0 ? p.batches * p.classes : 1;
}
template <int THREADS>
__host__ __device__ constexpr int nmsWriteSmemBytes() {
  return 0;
}

template <int THREADS>
MGK_PROGRAM void nmsSelectBlock(const NmsParams& p, int64_t bc, char* smem) {
  const int t = int(threadIdx.x);
  if (bc >= p.batches * p.classes) return;  // the lone block of an empty selection
  const int64_t b = bc / p.classes;
  const float* s = p.score + bc * p.boxes;
  const float* bx = p.box + b * p.boxes * 4;
  const bool inShared = p.sortSize <= kNmsSmemBoxes;
  uint64_t* key = inShared ? reinterpret_cast<uint64_t*>(smem) : p.sortKey + bc * p.sortSize;
  int32_t* idx = inShared ? reinterpret_cast<int32_t*>(smem + kNmsSmemBoxes * sizeof(uint64_t))
                          : p.sortIdx + bc * p.sortSize;
  int* keptShared = reinterpret_cast<int*>(smem + kNmsSmemBoxes * (sizeof(uint64_t) + sizeof(int32_t)));
  const bool hasThr = p.scoreThreshold != nullptr;
  const float thr = hasThr ? *p.scoreThreshold : 0.f;
  int64_t valid = 0;
  MGK_NO_UNROLL
  for (int i0 = 0; i0 < p.sortSize; i0 += THREADS) {
    const int i = i0 + t;
    bool ok = false;
    if (t < THREADS && i < p.sortSize) {
      uint64_t k = kSortSentinelKey;
      int32_t at = kSortSentinelIdx;
      if (i < p.boxes && (!hasThr || s[i] > thr)) k = ~ordKey(s[i]), at = i, ok = true;
      key[i] = k;
      idx[i] = at;
    }
    valid += __syncthreads_count(ok);
  }
  bitonicSort<THREADS>(key, idx, p.sortSize);
  const int64_t maxOut = p.maxOut ? *p.maxOut : 0;
  const float iou = p.iou ? *p.iou : 0.f;
  int32_t* kept = p.kept + bc * p.boxes;
  if (t == 0) *keptShared = 0;
  __syncthreads();
  int64_t nk = 0;
  MGK_NO_UNROLL
  for (int64_t r = 0; r < valid && nk < maxOut; ++r) {
    const int32_t cand = idx[r];
    int sup = 0;
    if (t < THREADS)
      for (int64_t q = t; q < nk && !sup; q += THREADS)
        sup = detail::nmsSuppressesDev(bx + int64_t(kept[q]) * 4, bx + int64_t(cand) * 4, p.center != 0, iou);
    if (!__syncthreads_or(sup) && t == 0) {
      kept[nk] = cand;
      *keptShared = int(nk + 1);
    }
    __syncthreads();
    nk = *keptShared;
  }
  if (t == 0) p.keptCount[bc] = nk;
}

template <int THREADS>
MGK_PROGRAM void nmsWriteBlock(const NmsParams& p, int64_t bc, char*) {
  const int t = int(threadIdx.x);
  const int64_t groups = p.batches * p.classes;
  if (bc == 0 && t == 0) {
    int64_t total = 0;
    for (int64_t q = 0; q < groups; ++q) total += p.keptCount[q];
    *p.count = total;
  }
  if (bc >= groups) return;
  int64_t offset = 0;
  for (int64_t q = 0; q < bc; ++q) offset += p.keptCount[q];
  const int64_t nk = p.keptCount[bc], b = bc / p.classes, c = bc - b * p.classes;
  const int32_t* kept = p.kept + bc * p.boxes;
  if (t < THREADS)
    for (int64_t j = t; j < nk; j += THREADS) {
      int64_t* row = p.y + (offset + j) * 3;
      row[0] = b;
      row[1] = c;
      row[2] = kept[j];
    }
}

}  // namespace mgk
