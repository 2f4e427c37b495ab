// Reference kernels of the tensor / data-movement family, part 1: copies, views, concatenation,
// slicing, transposition, broadcasting, padding and the small generators (Shape, Range, ...).
// Data movement is dtype-agnostic (elements copied by byte size), so every kernel here works for
// float16, bool and double alike. The family's single kernel table is at the end of this file;
// gather/scatter kernels are in k_tensor_index.cpp, Resize and Einsum in their own files.
#include <algorithm>
#include <vector>

#include "k_tensor_shared.h"
#include "k_tensor_util.h"
#include "mg_kernels.h"

namespace mgrt {

using namespace tensor_util;

SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceRange r;
  // A step longer than the axis takes at most one element: clamping it keeps the arithmetic below
  // free of overflow (steps such as INT64_MIN are legal input).
  int64_t maxStep = dim + 1;
  if (step > maxStep) step = maxStep;
  if (step < -maxStep) step = -maxStep;
  r.step = step;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.size = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.size = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  r.start = start;
  return r;
}

namespace {

int copyAll(const Tensor* in, Tensor* out) {
  size_t bytes = static_cast<size_t>(out->numel()) * elemSize(*out);
  if (bytes && out->data != in->data) std::memcpy(out->data, in->data, bytes);
  return 0;
}

// Identity, Reshape, Flatten, Squeeze, Unsqueeze: same bytes, new shape.
MG_TENSOR_KERNEL(kCopy) { return copyAll(&in[0], &out[0]); }

MG_TENSOR_KERNEL(kDropout) {
  copyAll(&in[0], &out[0]);
  if (nout > 1 && out[1].present()) std::memset(out[1].data, 1, static_cast<size_t>(out[1].numel()));
  return 0;
}

MG_TENSOR_KERNEL(kConcat) {
  int axis = normAxis(a.i("axis", 0), out[0].rank);
  size_t esz = elemSize(out[0]);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out[0].dims[d];
  for (int d = axis + 1; d < out[0].rank; ++d) inner *= out[0].dims[d];
  int64_t outChunk = out[0].dims[axis] * inner * static_cast<int64_t>(esz);
  char* dst = static_cast<char*>(out[0].data);
  int64_t offset = 0;
  for (int k = 0; k < nin; ++k) {
    if (!in[k].present()) continue;
    int64_t chunk = in[k].dims[axis] * inner * static_cast<int64_t>(esz);
    const char* src = static_cast<const char*>(in[k].data);
    // Concat elision (src/analysis/memory_plan.cpp): the operand's producer already wrote it here.
    bool inPlace = outer == 1 && src == dst + offset;
    for (int64_t o = 0; o < outer && chunk > 0 && !inPlace; ++o)
      std::memcpy(dst + o * outChunk + offset, src + o * chunk, static_cast<size_t>(chunk));
    offset += chunk;
  }
  return 0;
}

MG_TENSOR_KERNEL(kSplit) {
  int axis = normAxis(a.i("axis", 0), in[0].rank);
  size_t esz = elemSize(in[0]);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= in[0].dims[d];
  for (int d = axis + 1; d < in[0].rank; ++d) inner *= in[0].dims[d];
  int64_t inChunk = in[0].dims[axis] * inner * static_cast<int64_t>(esz);
  const char* src = static_cast<const char*>(in[0].data);
  int64_t offset = 0;
  for (int k = 0; k < nout; ++k) {
    int64_t chunk = out[k].dims[axis] * inner * static_cast<int64_t>(esz);
    if (offset + chunk > inChunk) return ctx.fail("Split: results exceed the input along axis %d", axis);
    char* dst = static_cast<char*>(out[k].data);
    for (int64_t o = 0; o < outer && chunk > 0; ++o)
      std::memcpy(dst + o * chunk, src + o * inChunk + offset, static_cast<size_t>(chunk));
    offset += chunk;
  }
  return 0;
}

MG_TENSOR_KERNEL(kSlice) {
  const Tensor& x = in[0];
  int r = x.rank;
  int64_t start[kMaxRank], step[kMaxRank];
  for (int d = 0; d < r; ++d) start[d] = 0, step[d] = 1;
  int64_t n = in[1].numel();
  if (in[2].numel() != n) return ctx.fail("Slice: starts and ends differ in length");
  for (int64_t i = 0; i < n; ++i) {
    int64_t ax = nin > 3 && in[3].present() ? readI(in[3], i) : i;
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r) return ctx.fail("Slice: axis %lld out of range", (long long)ax);
    int64_t st = nin > 4 && in[4].present() ? readI(in[4], i) : 1;
    if (st == 0) return ctx.fail("Slice: step is 0");
    SliceRange sr = sliceRange(x.dims[ax], readI(in[1], i), readI(in[2], i), st);
    if (sr.size != out[0].dims[ax]) return ctx.fail("Slice: result extent mismatch on axis %lld", (long long)ax);
    start[ax] = sr.start;
    step[ax] = sr.step;
  }
  int64_t xs[kMaxRank], idx[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = out[0].numel();
  if (total == 0) return 0;
  // Dims [q, r) are copied as one contiguous run per index of dims [0, q): the trailing dims taken
  // whole, and the innermost sliced one too when its step is 1 (a channel slice of NCHW is one
  // memcpy per image, not one per row).
  int q = r;
  while (q > 0 && start[q - 1] == 0 && step[q - 1] == 1 && out[0].dims[q - 1] == x.dims[q - 1]) --q;
  int64_t run = 1, runStart = 0;
  for (int d = q; d < r; ++d) run *= x.dims[d];
  if (q > 0 && step[q - 1] == 1) {
    --q;
    run *= out[0].dims[q];
    runStart = start[q] * xs[q];
  }
  if (q < r || r == 0) {
    for (int64_t i = 0; i < total; i += run) {
      unravel(i / run, out[0].dims, q, idx);
      int64_t off = runStart;
      for (int d = 0; d < q; ++d) off += (start[d] + idx[d] * step[d]) * xs[d];
      std::memcpy(static_cast<char*>(out[0].data) + i * static_cast<int64_t>(esz),
                  static_cast<const char*>(x.data) + off * static_cast<int64_t>(esz),
                  static_cast<size_t>(run) * esz);
    }
    return 0;
  }
  // The last axis itself is strided: element by element along each row.
  const int64_t row = out[0].dims[r - 1];
  for (int64_t i = 0; i < total; i += row) {
    unravel(i, out[0].dims, r, idx);
    int64_t off = start[r - 1];  // xs[r - 1] == 1
    for (int d = 0; d + 1 < r; ++d) off += (start[d] + idx[d] * step[d]) * xs[d];
    for (int64_t k = 0; k < row; ++k) copyElem(out[0], i + k, x, off + k * step[r - 1], esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kTranspose) {
  const Tensor& x = in[0];
  int r = x.rank;
  std::vector<int64_t> perm = a.ints("perm");
  if (perm.empty())
    for (int d = r - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int>(perm.size()) != r) return ctx.fail("Transpose: perm has the wrong length");
  int64_t xs[kMaxRank], idx[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = out[0].numel();
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, out[0].dims, r, idx);
    int64_t off = 0;
    for (int d = 0; d < r; ++d) off += idx[d] * xs[perm[d]];
    copyElem(out[0], i, x, off, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kExpand) {
  int64_t bs[kMaxRank], idx[kMaxRank];
  if (in[0].rank > out[0].rank) return ctx.fail("Expand: input rank exceeds result rank");
  broadcastStrides(in[0], out[0], bs);
  size_t esz = elemSize(in[0]);
  int64_t total = out[0].numel();
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, out[0].dims, out[0].rank, idx);
    int64_t off = 0;
    for (int d = 0; d < out[0].rank; ++d) off += idx[d] * bs[d];
    copyElem(out[0], i, in[0], off, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kTile) {
  const Tensor& x = in[0];
  int64_t xs[kMaxRank], idx[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = out[0].numel();
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, out[0].dims, x.rank, idx);
    int64_t off = 0;
    for (int d = 0; d < x.rank; ++d) off += (idx[d] % x.dims[d]) * xs[d];
    copyElem(out[0], i, x, off, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kPad) {
  const Tensor& x = in[0];
  int r = x.rank;
  std::string mode = a.s("mode", "constant");
  int64_t begin[kMaxRank] = {0};
  int64_t n = in[1].numel();
  bool hasAxes = nin > 3 && in[3].present();
  int64_t naxes = hasAxes ? in[3].numel() : r;
  if (n != 2 * naxes) return ctx.fail("Pad: pads has %lld values, expected %lld", (long long)n, (long long)(2 * naxes));
  for (int64_t i = 0; i < naxes; ++i) {
    int64_t ax = hasAxes ? readI(in[3], i) : i;
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r) return ctx.fail("Pad: axis out of range");
    begin[ax] = readI(in[1], i);
  }
  size_t esz = elemSize(x);
  std::vector<char> fill(esz, 0);
  if (nin > 2 && in[2].present() && in[2].numel() > 0) std::memcpy(fill.data(), in[2].data, esz);
  if (mode != "constant" && mode != "edge" && mode != "wrap" && mode != "reflect")
    return ctx.fail("Pad: unknown mode '%s'", mode.c_str());
  int64_t xs[kMaxRank], idx[kMaxRank];
  stridesOf(x, xs);
  int64_t total = out[0].numel();
  // Constant mode, row by row along the last axis: a row outside the input on an outer axis is all
  // fill; else fill, one memcpy of the input row, fill. Other modes element by element below.
  if (mode == "constant" && r > 0 && x.dims[r - 1] > 0) {
    const int64_t row = out[0].dims[r - 1], len = x.dims[r - 1], b = begin[r - 1];
    char* y = static_cast<char*>(out[0].data);
    const int64_t e = static_cast<int64_t>(esz);
    for (int64_t i = 0; i < total && row > 0; i += row) {
      unravel(i, out[0].dims, r, idx);
      int64_t off = 0;
      bool outside = false;
      for (int d = 0; d + 1 < r; ++d) {
        int64_t sd = idx[d] - begin[d];
        if (sd < 0 || sd >= x.dims[d]) { outside = true; break; }
        off += sd * xs[d];
      }
      // Output positions [lo, hi) of this row come from the input, the rest is fill.
      int64_t lo = outside ? row : std::clamp<int64_t>(b, 0, row);
      int64_t hi = outside ? row : std::clamp<int64_t>(b + len, lo, row);
      for (int64_t k = 0; k < lo; ++k) std::memcpy(y + (i + k) * e, fill.data(), esz);
      if (hi > lo)
        std::memcpy(y + (i + lo) * e, static_cast<const char*>(x.data) + (off + lo - b) * e,
                    static_cast<size_t>((hi - lo) * e));
      for (int64_t k = std::max(hi, lo); k < row; ++k) std::memcpy(y + (i + k) * e, fill.data(), esz);
    }
    return 0;
  }
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, out[0].dims, r, idx);
    int64_t off = 0;
    bool outside = false;
    for (int d = 0; d < r && !outside; ++d) {
      int64_t s = idx[d] - begin[d], len = x.dims[d];
      if (s < 0 || s >= len) {
        if (mode == "constant" || len == 0) {
          outside = true;
          break;
        }
        if (mode == "edge") {
          s = s < 0 ? 0 : len - 1;
        } else if (mode == "wrap") {
          s = ((s % len) + len) % len;
        } else if (mode == "reflect") {
          if (len == 1) {
            s = 0;
          } else {
            int64_t p = 2 * (len - 1);
            s = ((s % p) + p) % p;
            if (s >= len) s = p - s;
          }
        } else {
          return ctx.fail("Pad: unknown mode '%s'", mode.c_str());
        }
      }
      off += s * xs[d];
    }
    char* dst = static_cast<char*>(out[0].data) + i * static_cast<int64_t>(esz);
    if (outside) std::memcpy(dst, fill.data(), esz);
    else copyElem(out[0], i, x, off, esz);
  }
  return 0;
}

// CenterCropPad (opset 18): each listed axis (all when `axes` is absent) becomes shape[k] long,
// centred: a longer input is cropped from (n - t) / 2, a shorter one padded with zeros from
// (t - n) / 2 (the extra element of an odd difference goes to the end, as in ONNX's function).
MG_TENSOR_KERNEL(kCenterCropPad) {
  const Tensor& x = in[0];
  const Tensor& y = out[0];
  int r = x.rank;
  std::vector<int64_t> axes = a.ints("axes");
  if (axes.empty())
    for (int d = 0; d < r; ++d) axes.push_back(d);
  if (in[1].numel() != static_cast<int64_t>(axes.size()))
    return ctx.fail("CenterCropPad: shape has %lld values, expected %lld",
                    static_cast<long long>(in[1].numel()), static_cast<long long>(axes.size()));
  int64_t shift[kMaxRank] = {0};  // source index = output index + shift
  for (size_t k = 0; k < axes.size(); ++k) {
    int ax = normAxis(axes[k], r);
    if (ax < 0 || ax >= r) return ctx.fail("CenterCropPad: axis out of range");
    int64_t target = readI(in[1], static_cast<int64_t>(k));
    if (target != y.dims[ax]) return ctx.fail("CenterCropPad: result extent differs from shape");
    shift[ax] = (x.dims[ax] - target) / 2;  // truncation: floor of a crop, -floor of a pad
  }
  size_t esz = elemSize(x);
  int64_t xs[kMaxRank], idx[kMaxRank];
  stridesOf(x, xs);
  for (int64_t i = 0; i < y.numel(); ++i) {
    unravel(i, y.dims, r, idx);
    int64_t off = 0;
    bool outside = false;
    for (int d = 0; d < r && !outside; ++d) {
      int64_t s = idx[d] + shift[d];
      outside = s < 0 || s >= x.dims[d];
      off += s * xs[d];
    }
    if (outside) std::memset(static_cast<char*>(y.data) + i * static_cast<int64_t>(esz), 0, esz);
    else copyElem(y, i, x, off, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kShape) {
  int r = in[0].rank;
  int64_t start = a.i("start", 0);
  if (start < 0) start += r;
  start = std::clamp<int64_t>(start, 0, r);
  for (int64_t i = 0; i < out[0].numel(); ++i) {
    if (start + i >= r) return ctx.fail("Shape: result longer than the input rank");
    out[0].as<int64_t>()[i] = in[0].dims[start + i];
  }
  return 0;
}

MG_TENSOR_KERNEL(kSize) {
  out[0].as<int64_t>()[0] = in[0].numel();
  return 0;
}

MG_TENSOR_KERNEL(kConstantOfShape) {
  int64_t total = out[0].numel();
  if (isFloatType(out[0].dtype)) {
    double v = a.f("mg_value", 0.f);
    for (int64_t i = 0; i < total; ++i) writeF(out[0], i, v);
  } else {
    int64_t v = a.has("mg_value_i") ? a.i("mg_value_i", 0) : static_cast<int64_t>(a.f("mg_value", 0.f));
    for (int64_t i = 0; i < total; ++i) writeI(out[0], i, v);
  }
  return 0;
}

MG_TENSOR_KERNEL(kRange) {
  int64_t n = out[0].numel();
  if (isFloatType(out[0].dtype)) {
    double start = readF(in[0], 0), delta = readF(in[2], 0);
    for (int64_t i = 0; i < n; ++i) writeF(out[0], i, start + static_cast<double>(i) * delta);
  } else {
    int64_t start = readI(in[0], 0), delta = readI(in[2], 0);
    for (int64_t i = 0; i < n; ++i) writeI(out[0], i, start + i * delta);
  }
  return 0;
}

// DepthToSpace (DCR or CRD) and SpaceToDepth, on NCHW.
MG_TENSOR_KERNEL(kDepthToSpace) {
  const Tensor& x = in[0];
  int64_t b = a.i("blocksize", 1);
  bool crd = a.s("mode", "DCR") == "CRD";
  int64_t N = out[0].dims[0], C = out[0].dims[1], H = out[0].dims[2], W = out[0].dims[3];
  int64_t xh = x.dims[2], xw = x.dims[3];
  size_t esz = elemSize(x);
  int64_t i = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w, ++i) {
          int64_t bh = y % b, bw = w % b;
          int64_t ic = crd ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
          int64_t off = ((n * x.dims[1] + ic) * xh + y / b) * xw + w / b;
          copyElem(out[0], i, x, off, esz);
        }
  return 0;
}

MG_TENSOR_KERNEL(kSpaceToDepth) {
  const Tensor& x = in[0];
  int64_t b = a.i("blocksize", 1);
  int64_t N = out[0].dims[0], C = out[0].dims[1], H = out[0].dims[2], W = out[0].dims[3];
  int64_t xc = x.dims[1], xh = x.dims[2], xw = x.dims[3];
  size_t esz = elemSize(x);
  int64_t i = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t w = 0; w < W; ++w, ++i) {
          int64_t blk = c / xc, ic = c % xc, bh = blk / b, bw = blk % b;
          int64_t off = ((n * xc + ic) * xh + y * b + bh) * xw + w * b + bw;
          copyElem(out[0], i, x, off, esz);
        }
  return 0;
}

MG_TENSOR_KERNEL(kTrilu) {
  const Tensor& x = in[0];
  int64_t k = nin > 1 && in[1].present() && in[1].numel() > 0 ? readI(in[1], 0) : 0;
  bool upper = a.i("upper", 1) != 0;
  int64_t rows = x.dims[x.rank - 2], cols = x.dims[x.rank - 1];
  size_t esz = elemSize(x);
  int64_t total = x.numel();
  for (int64_t i = 0; i < total; ++i) {
    int64_t j = i % cols, r = (i / cols) % rows;
    bool keep = upper ? j - r >= k : j - r <= k;
    if (keep) copyElem(out[0], i, x, i, esz);
    else std::memset(static_cast<char*>(out[0].data) + i * static_cast<int64_t>(esz), 0, esz);
  }
  return 0;
}

MG_TENSOR_KERNEL(kEyeLike) {
  int64_t k = a.i("k", 0);
  int64_t rows = out[0].dims[0], cols = out[0].dims[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) writeI(out[0], r * cols + c, c - r == k ? 1 : 0);
  return 0;
}

}  // namespace

const KernelEntry* tensorKernels() {
  static const KernelEntry kTable[] = {
      {"Identity", kCopy},
      {"Reshape", kCopy},
      {"Flatten", kCopy},
      {"Squeeze", kCopy},
      {"Unsqueeze", kCopy},
      {"Dropout", kDropout},
      {"Concat", kConcat},
      {"Split", kSplit},
      {"Slice", kSlice},
      {"Transpose", kTranspose},
      {"Expand", kExpand},
      {"Tile", kTile},
      {"Pad", kPad},
      {"CenterCropPad", kCenterCropPad},
      {"Shape", kShape},
      {"Size", kSize},
      {"ConstantOfShape", kConstantOfShape},
      {"Range", kRange},
      {"DepthToSpace", kDepthToSpace},
      {"SpaceToDepth", kSpaceToDepth},
      {"Trilu", kTrilu},
      {"EyeLike", kEyeLike},
      {"Gather", kGather},
      {"GatherElements", kGatherElements},
      {"GatherND", kGatherND},
      {"ScatterND", kScatterND},
      {"ScatterElements", kScatterElements},
      {"Scatter", kScatterElements},
      {"OneHot", kOneHot},
      {"ReverseSequence", kReverseSequence},
      {"NonZero", kNonZero},
      {"Resize", kResize},
      {"Einsum", kEinsum},
      {"Det", kDet},
      {nullptr, nullptr}};
  return kTable;
}

}  // namespace mgrt
