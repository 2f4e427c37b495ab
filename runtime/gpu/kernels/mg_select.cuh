// select: the producers of data-dependent extents (docs/DYNAMIC_SHAPES.md, "Data-dependent
// extents") as block programs: NonZero and Compress. Their result extent is a count known only
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
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

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

}  // namespace mgk
