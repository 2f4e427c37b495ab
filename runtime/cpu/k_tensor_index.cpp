// Reference kernels of the tensor family, part 2: indexed reads and writes (Gather, GatherElements,
// GatherND, ScatterND, ScatterElements/Scatter, OneHot, ReverseSequence, NonZero). Indices come from
// data, so every index is range-checked and a bad one fails the kernel with a message (never a
// crash). Element copies are by byte size; only scatter reductions compute, typed through
// int64 for integer tensors and double for floating ones.
#include <algorithm>
#include <string>
#include <vector>

#include "k_tensor_util.h"
#include "mg_kernels.h"

namespace mgrt {

using namespace tensor_util;

namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin, kBad };

Reduction parseReduction(const Attrs& a) {
  std::string r = a.s("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return Reduction::kBad;
}

template <typename T>
T combine(Reduction r, T old, T v) {
  switch (r) {
    case Reduction::kAdd: return old + v;
    case Reduction::kMul: return old * v;
    case Reduction::kMax: return std::max(old, v);
    case Reduction::kMin: return std::min(old, v);
    default: return v;
  }
}

// out[oi] = reduce(out[oi], upd[ui]).
void scatterOne(const Tensor& out, int64_t oi, const Tensor& upd, int64_t ui, Reduction r,
                size_t esz) {
  if (r == Reduction::kNone) {
    copyElem(out, oi, upd, ui, esz);
  } else if (isFloatType(out.dtype)) {
    writeF(out, oi, combine(r, readF(out, oi), readF(upd, ui)));
  } else {
    writeI(out, oi, combine(r, readI(out, oi), readI(upd, ui)));
  }
}

// Reads index i of `idx` and normalizes it against extent n; false when out of range.
bool indexAt(const Tensor& idx, int64_t i, int64_t n, int64_t* k) {
  int64_t v = readI(idx, i);
  if (v < 0) v += n;
  *k = v;
  return v >= 0 && v < n;
}

}  // namespace

MG_TENSOR_KERNEL(kGather) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  int axis = normAxis(a.i("axis", 0), x.rank);
  int64_t outer = 1, inner = 1, n = x.dims[axis], m = idx.numel();
  for (int d = 0; d < axis; ++d) outer *= x.dims[d];
  for (int d = axis + 1; d < x.rank; ++d) inner *= x.dims[d];
  size_t bytes = static_cast<size_t>(inner) * elemSize(x);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out[0].data);
  for (int64_t j = 0; j < m; ++j) {
    int64_t k;
    if (!indexAt(idx, j, n, &k))
      return ctx.fail("Gather: index %lld is out of range for axis %d of extent %lld",
                      (long long)readI(idx, j), axis, (long long)n);
    for (int64_t o = 0; o < outer; ++o)
      if (bytes) std::memcpy(dst + ((o * m + j) * inner) * elemSize(x), src + ((o * n + k) * inner) * elemSize(x), bytes);
  }
  return 0;
}

MG_TENSOR_KERNEL(kGatherElements) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  int r = x.rank;
  int axis = normAxis(a.i("axis", 0), r);
  int64_t xs[kMaxRank], c[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = idx.numel();
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, idx.dims, r, c);
    int64_t k;
    if (!indexAt(idx, i, x.dims[axis], &k))
      return ctx.fail("GatherElements: index %lld is out of range for axis %d of extent %lld",
                      (long long)readI(idx, i), axis, (long long)x.dims[axis]);
    int64_t off = 0;
    for (int d = 0; d < r; ++d) {
      int64_t v = d == axis ? k : c[d];
      if (v >= x.dims[d]) return ctx.fail("GatherElements: indices exceed the data on axis %d", d);
      off += v * xs[d];
    }
    copyElem(out[0], i, x, off, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kGatherND) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  int b = static_cast<int>(a.i("batch_dims", 0));
  int q = idx.rank;
  int64_t last = idx.dims[q - 1];
  if (b < 0 || b + last > x.rank) return ctx.fail("GatherND: index tuples longer than the data rank");
  int64_t batches = 1, tuples = 1, slice = 1, batchStride = 1;
  for (int d = 0; d < b; ++d) batches *= idx.dims[d];
  for (int d = b; d < q - 1; ++d) tuples *= idx.dims[d];
  for (int d = b + static_cast<int>(last); d < x.rank; ++d) slice *= x.dims[d];
  for (int d = b; d < x.rank; ++d) batchStride *= x.dims[d];
  int64_t xs[kMaxRank];
  stridesOf(x, xs);
  size_t bytes = static_cast<size_t>(slice) * elemSize(x);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out[0].data);
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = bi * batchStride, base = (bi * tuples + t) * last;
      for (int64_t j = 0; j < last; ++j) {
        int64_t k;
        if (!indexAt(idx, base + j, x.dims[b + j], &k))
          return ctx.fail("GatherND: index %lld is out of range for dimension %lld of extent %lld",
                          (long long)readI(idx, base + j), (long long)(b + j), (long long)x.dims[b + j]);
        off += k * xs[b + j];
      }
      if (bytes)
        std::memcpy(dst + (bi * tuples + t) * static_cast<int64_t>(bytes), src + off * elemSize(x), bytes);
    }
  return 0;
}

MG_TENSOR_KERNEL(kScatterND) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  const Tensor& upd = in[2];
  Reduction red = parseReduction(a);
  if (red == Reduction::kBad) return ctx.fail("ScatterND: unknown reduction");
  std::memcpy(out[0].data, x.data, static_cast<size_t>(x.numel()) * elemSize(x));
  int q = idx.rank;
  int64_t last = idx.dims[q - 1];
  if (last > x.rank) return ctx.fail("ScatterND: index tuples longer than the data rank");
  int64_t tuples = 1, slice = 1;
  for (int d = 0; d < q - 1; ++d) tuples *= idx.dims[d];
  for (int d = static_cast<int>(last); d < x.rank; ++d) slice *= x.dims[d];
  if (upd.numel() != tuples * slice) return ctx.fail("ScatterND: updates have the wrong size");
  int64_t xs[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < last; ++j) {
      int64_t k;
      if (!indexAt(idx, t * last + j, x.dims[j], &k))
        return ctx.fail("ScatterND: index %lld is out of range for dimension %lld of extent %lld",
                        (long long)readI(idx, t * last + j), (long long)j, (long long)x.dims[j]);
      off += k * xs[j];
    }
    for (int64_t s = 0; s < slice; ++s) scatterOne(out[0], off + s, upd, t * slice + s, red, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kScatterElements) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  const Tensor& upd = in[2];
  Reduction red = parseReduction(a);
  if (red == Reduction::kBad) return ctx.fail("ScatterElements: unknown reduction");
  int r = x.rank;
  int axis = normAxis(a.i("axis", 0), r);
  std::memcpy(out[0].data, x.data, static_cast<size_t>(x.numel()) * elemSize(x));
  int64_t xs[kMaxRank], c[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = idx.numel();
  if (upd.numel() != total) return ctx.fail("ScatterElements: updates and indices differ in size");
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, idx.dims, r, c);
    int64_t k;
    if (!indexAt(idx, i, x.dims[axis], &k))
      return ctx.fail("ScatterElements: index %lld is out of range for axis %d of extent %lld",
                      (long long)readI(idx, i), axis, (long long)x.dims[axis]);
    int64_t off = 0;
    for (int d = 0; d < r; ++d) {
      int64_t v = d == axis ? k : c[d];
      if (v >= x.dims[d]) return ctx.fail("ScatterElements: indices exceed the data on axis %d", d);
      off += v * xs[d];
    }
    scatterOne(out[0], off, upd, i, red, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kOneHot) {
  const Tensor& idx = in[0];
  const Tensor& vals = in[2];
  const Tensor& o = out[0];
  int axis = normAxis(a.i("axis", -1), o.rank);
  int64_t depth = static_cast<int64_t>(readF(in[1], 0));
  if (depth != o.dims[axis]) return ctx.fail("OneHot: depth differs from the result's extent");
  if (vals.numel() < 2) return ctx.fail("OneHot: values must hold [off, on]");
  size_t esz = elemSize(o);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= o.dims[d];
  for (int d = axis + 1; d < o.rank; ++d) inner *= o.dims[d];
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t q = 0; q < inner; ++q) {
        int64_t k = static_cast<int64_t>(readF(idx, p * inner + q));
        if (k < 0) k += depth;
        copyElem(o, (p * depth + d) * inner + q, vals, k == d ? 1 : 0, esz);
      }
  return 0;
}

MG_TENSOR_KERNEL(kReverseSequence) {
  const Tensor& x = in[0];
  int r = x.rank;
  int batchAxis = normAxis(a.i("batch_axis", 1), r), timeAxis = normAxis(a.i("time_axis", 0), r);
  int64_t xs[kMaxRank], c[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = x.numel();
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, x.dims, r, c);
    if (c[batchAxis] >= in[1].numel()) return ctx.fail("ReverseSequence: sequence_lens too short");
    int64_t len = readI(in[1], c[batchAxis]);
    if (len < 0 || len > x.dims[timeAxis])
      return ctx.fail("ReverseSequence: sequence length %lld is out of range [0, %lld]",
                      (long long)len, (long long)x.dims[timeAxis]);
    if (c[timeAxis] < len) c[timeAxis] = len - 1 - c[timeAxis];
    int64_t off = 0;
    for (int d = 0; d < r; ++d) off += c[d] * xs[d];
    copyElem(out[0], i, x, off, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kNonZero) {
  const Tensor& x = in[0];
  int r = x.rank;
  int64_t total = x.numel(), n = 0;
  if (out[0].rank != 2) return ctx.fail("NonZero: the result must have rank 2");
  for (int64_t i = 0; i < total; ++i) n += readF(x, i) != 0.0;
  // A data-dependent extent: out[0] holds up to dims[1] columns; it gets exactly n.
  if (!ctx.setDataExtent(out[0], 1, n))
    return ctx.fail("NonZero: %lld non-zero elements, the result holds %s%lld", (long long)n,
                    ctx.dataExtents ? "at most " : "", (long long)out[0].dims[1]);
  const int64_t cols = n;
  int64_t c[kMaxRank];
  int64_t k = 0;
  for (int64_t i = 0; i < total; ++i) {
    if (readF(x, i) == 0.0) continue;
    unravel(i, x.dims, r, c);
    for (int d = 0; d < r; ++d) out[0].as<int64_t>()[d * cols + k] = c[d];
    if (r == 0) out[0].as<int64_t>()[k] = 0;
    ++k;
  }
  return 0;
}

}  // namespace mgrt
