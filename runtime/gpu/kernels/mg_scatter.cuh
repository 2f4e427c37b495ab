// scatter: ScatterND and ScatterElements (opset 18: reduction none, add, mul, max, min) as block
// programs. The generator copies data into the output first (a map copy in an earlier launch:
// the node's phase 0) and runs these in phase 1, which update the output in place.
//
// Duplicates. Several updates may hit one output element; with a reduction they combine, and the
// result of add/mul in floating point depends on the order. Atomics would make it depend on the
// schedule. Here every output element is owned by exactly ONE thread, which applies the updates
// aimed at it in index order, the CPU runtime's order (runtime/cpu/k_tensor_index.cpp): the
// result is deterministic and the same as the CPU target's, duplicates included (reduction none:
// the last update wins, as on the CPU). No atomics, no barrier, no shared memory.
//   scatterNDBlock<T, THREADS>        one thread per position s of the update slice (the trailing
//     data dims after the indexed ones): it walks the index tuples t in order and applies
//     updates[t, s] to out[offset(t) + s]. Distinct s never touch the same element (offsets are
//     multiples of the slice length). Parallel over the slice, sequential over tuples: element
//     scatters (slice 1) run on one thread.
//   scatterElementsBlock<T, THREADS>  one thread per index "line" (every index position but the
//     axis): it walks the line along the axis in order. Distinct lines differ in a coordinate
//     other than the axis, so they never touch the same element.
// Arithmetic as the CPU's scatterOne: floating types combine in double (then rounded to T, which
// for float is the plain float operation), integer types in int64 (wrapping), max/min as
// std::max/std::min. Indices are int32 or int64; negative ones count from the end. An index out
// of range skips its update (the CPU target stops with an error; a kernel cannot).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include <type_traits>

#include "mg_kcommon.cuh"

namespace mgk {

enum ScatterReduction : int32_t {
  kScatterNone = 0, kScatterAdd = 1, kScatterMul = 2, kScatterMax = 3, kScatterMin = 4,
};

// ScatterND: data (and out) of rank `rank` with extents dims and contiguous strides; indices
// [tuples, last]; updates [tuples, slice] with slice = product of dims[last..rank).
struct ScatterNDParams {
  int64_t tuples, slice;
  int32_t last, rank;
  int32_t reduction;   // ScatterReduction
  int32_t indexBytes;  // 4 or 8
  int64_t dims[kMaxRank], strides[kMaxRank];
  const void* indices;
  const void* updates;
  void* out;
};

// ScatterElements: indices and updates share the shape idxDims (rank `rank`, contiguous); the
// update at index position i goes to out at position i with coordinate `axis` replaced by the
// index value. Data (and out) extents dims, contiguous strides.
struct ScatterElementsParams {
  int64_t lines;  // product of idxDims without the axis
  int32_t rank, axis;
  int32_t reduction;
  int32_t indexBytes;
  int64_t idxDims[kMaxRank];
  int64_t dims[kMaxRank], strides[kMaxRank];
  const void* indices;
  const void* updates;
  void* out;
};

namespace detail {

template <typename T>
struct ScatterCompute {  // what the CPU's readF / readI compute in
  using type = int64_t;
};
template <>
struct ScatterCompute<float> {
  using type = double;
};
template <>
struct ScatterCompute<double> {
  using type = double;
};

template <typename T>
MG_DEVICE void scatterCombine(T* out, int64_t o, const T* upd, int64_t u, int reduction) {
  using C = typename ScatterCompute<T>::type;
  if (reduction == kScatterNone) {
    out[o] = upd[u];
    return;
  }
  const C a = C(out[o]), b = C(upd[u]);
  C r;
  switch (reduction) {
    case kScatterAdd:
      if constexpr (std::is_integral<C>::value) r = C(uint64_t(a) + uint64_t(b));  // wraps
      else r = a + b;
      break;
    case kScatterMul:
      if constexpr (std::is_integral<C>::value) r = C(uint64_t(a) * uint64_t(b));
      else r = a * b;
      break;
    case kScatterMax: r = a < b ? b : a; break;  // std::max(a, b)
    default: r = b < a ? b : a; break;           // std::min(a, b)
  }
  out[o] = T(r);
}

MG_DEVICE int64_t indexAt(const void* idx, int bytes, int64_t i) {
  return bytes == 4 ? int64_t(static_cast<const int32_t*>(idx)[i]) : static_cast<const int64_t*>(idx)[i];
}

}  // namespace detail

template <typename T, int THREADS>
__host__ __device__ int64_t scatterNDBlocks(const ScatterNDParams& p) {
  return ceilDiv(p.slice, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int scatterNDSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void scatterNDBlock(const ScatterNDParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier: idle threads may leave
  const int64_t s = block * THREADS + t;
  if (s >= p.slice) return;
  T* out = static_cast<T*>(p.out);
  const T* upd = static_cast<const T*>(p.updates);
  for (int64_t tu = 0; tu < p.tuples; ++tu) {
    int64_t off = 0;
    bool inside = true;
    for (int j = 0; j < p.last; ++j) {
      int64_t k = detail::indexAt(p.indices, p.indexBytes, tu * p.last + j);
      if (k < 0) k += p.dims[j];
      inside = inside && k >= 0 && k < p.dims[j];
      off += k * p.strides[j];
    }
    if (inside) detail::scatterCombine<T>(out, off + s, upd, tu * p.slice + s, p.reduction);
  }
}

template <typename T, int THREADS>
__host__ __device__ int64_t scatterElementsBlocks(const ScatterElementsParams& p) {
  return ceilDiv(p.lines, THREADS);
}
template <typename T, int THREADS>
__host__ __device__ constexpr int scatterElementsSmemBytes() {
  return 0;
}

template <typename T, int THREADS>
MGK_PROGRAM void scatterElementsBlock(const ScatterElementsParams& p, int64_t block, char* smem) {
  (void)smem;
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;
  const int64_t line = block * THREADS + t;
  if (line >= p.lines) return;
  // Unravel the line over idxDims without the axis; idxAt: its first index position (axis
  // coordinate 0), outAt: the data offset of its other coordinates.
  int64_t rem = line, idxAt = 0, outAt = 0, idxStride = 1, axisStride = 1;
  bool inside = true;
  for (int d = p.rank - 1; d >= 0; --d) {
    if (d == p.axis) {
      axisStride = idxStride;
    } else {
      const int64_t c = rem % p.idxDims[d];
      rem /= p.idxDims[d];
      idxAt += c * idxStride;
      outAt += c * p.strides[d];
      inside = inside && c < p.dims[d];  // indices larger than the data on another axis
    }
    idxStride *= p.idxDims[d];
  }
  if (!inside) return;
  T* out = static_cast<T*>(p.out);
  const T* upd = static_cast<const T*>(p.updates);
  const int64_t n = p.dims[p.axis];
  for (int64_t j = 0; j < p.idxDims[p.axis]; ++j) {
    const int64_t i = idxAt + j * axisStride;
    int64_t k = detail::indexAt(p.indices, p.indexBytes, i);
    if (k < 0) k += n;
    if (k < 0 || k >= n) continue;
    detail::scatterCombine<T>(out, outAt + k * p.strides[p.axis], upd, i, p.reduction);
  }
}

}  // namespace mgk
