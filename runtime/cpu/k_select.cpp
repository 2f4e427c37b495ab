// Reference kernels: the selection ops NonMaxSuppression, Unique, Compress and TfIdfVectorizer.
// What they select is computed by runtime/common/k_select_shared.h, the functions the compiler's
// shape inference ran on the constant operands that decide the result extents (every operand of
// NonMaxSuppression, Unique's input, Compress's condition): the kernels check that the run-time
// selection has the allocated extent and fail the step, saying so, when it does not (operands
// that changed after compilation), instead of writing past a result. When those operands are
// run-time values (Ctx::dataExtents), the results arrive at their capacity and the kernels write
// the actual extent into their dims (docs/DYNAMIC_SHAPES.md, "Data-dependent extents").
//   NonMaxSuppression: f32 boxes and scores, [num_selected, 3] int64 (batch, class, box).
//   Unique: any numeric or bool input, flattened or along axis; Y, indices, inverse_indices and
//           counts, the last three optional.
//   Compress: any element type, along axis or over the flattened input.
//   TfIdfVectorizer: int32/int64 tokens [C] or [N, C], float32 [.., max(ngram_indexes) + 1].
#include <cstring>
#include <string>
#include <vector>

#include "k_select_shared.h"
#include "k_tensor_util.h"
#include "mg_kernels.h"

namespace mgrt {
namespace {

namespace sel = selection;

// Whether t has exactly the dims `want`.
bool hasDims(const Tensor& t, const std::vector<int64_t>& want) {
  if (t.rank != static_cast<int>(want.size())) return false;
  for (int i = 0; i < t.rank; ++i)
    if (t.dims[i] != want[i]) return false;
  return true;
}

std::string dimsText(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// An optional one-value operand, or `def` when absent.
template <typename T>
T scalarOr(const Tensor* in, int nin, int i, T def) {
  return i < nin && in[i].present() && in[i].numel() >= 1 ? in[i].as<T>()[0] : def;
}

int kNonMaxSuppression(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                       Ctx& ctx) {
  const char* op = "NonMaxSuppression";
  if (nin < 2 || !in[0].present() || !in[1].present() || nout < 1)
    return ctx.fail("%s: expected boxes and scores operands and one result", op);
  const Tensor &boxes = in[0], &scores = in[1];
  if (boxes.dtype != kF32 || scores.dtype != kF32 || boxes.rank != 3 || boxes.dims[2] != 4 ||
      scores.rank != 3 || scores.dims[0] != boxes.dims[0] || scores.dims[2] != boxes.dims[1])
    return ctx.fail("%s: expected f32 boxes [B, N, 4] and scores [B, C, N]", op);
  if ((nin > 2 && in[2].present() && in[2].dtype != kI64) ||
      (nin > 3 && in[3].present() && in[3].dtype != kF32) ||
      (nin > 4 && in[4].present() && in[4].dtype != kF32))
    return ctx.fail("%s: max_output_boxes_per_class must be int64, the thresholds f32", op);
  sel::NmsParams p;
  p.batches = boxes.dims[0];
  p.classes = scores.dims[1];
  p.boxes = boxes.dims[1];
  p.maxPerClass = scalarOr<int64_t>(in, nin, 2, 0);
  p.iouThreshold = scalarOr<float>(in, nin, 3, 0.0f);
  if (!(p.iouThreshold >= 0 && p.iouThreshold <= 1))
    return ctx.fail("%s: iou_threshold must be in [0, 1], got %g", op, p.iouThreshold);
  p.hasScoreThreshold = nin > 4 && in[4].present();
  p.scoreThreshold = scalarOr<float>(in, nin, 4, 0.0f);
  p.centerPointBox = a.i("center_point_box", 0) == 1;
  std::vector<int64_t> selected;
  sel::nmsSelect(boxes.as<float>(), scores.as<float>(), p, &selected);
  const std::vector<int64_t> want = {static_cast<int64_t>(selected.size() / 3), 3};
  if (ctx.dataExtents && !ctx.setDataExtent(out[0], 0, want[0]))
    return ctx.fail("%s: %lld boxes selected, more than the result's capacity %lld", op,
                    static_cast<long long>(want[0]), static_cast<long long>(out[0].dims[0]));
  if (out[0].dtype != kI64 || !hasDims(out[0], want))
    return ctx.fail("%s: the selection is int64 %s, the result was compiled otherwise (the "
                    "operands differ from the constants it was compiled with)",
                    op, dimsText(want).c_str());
  if (!selected.empty()) std::memcpy(out[0].data, selected.data(), selected.size() * 8);
  return 0;
}

// The optional `axis` attribute of Unique and Compress: without it the input is one flat run
// ([1, numel, 1], axis -1); with it, the input split around that axis (tensor_util::splitAt).
// Returns ctx.fail's status for an axis outside the input's rank.
int splitAtAxis(const Attrs& a, const Tensor& x, const char* op, Ctx& ctx, int64_t& axis,
                tensor_util::AxisSplit& sp) {
  axis = -1;
  sp = tensor_util::AxisSplit{1, x.numel(), 1};
  if (!a.has("axis")) return 0;
  axis = a.i("axis", 0);
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= x.rank)
    return ctx.fail("%s: axis %lld is outside the input's rank %d", op,
                    static_cast<long long>(a.i("axis", 0)), x.rank);
  sp = tensor_util::splitAt(x, static_cast<int>(axis));
  return 0;
}

template <typename T>
sel::UniqueResult uniqueT(const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool sorted) {
  return sel::uniqueSlices(x.as<T>(), outer, n, inner, sorted);
}

int kUnique(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Unique";
  if (nin < 1 || !in[0].present() || nout < 1)
    return ctx.fail("%s: expected one operand and at least one result", op);
  const Tensor& x = in[0];
  int64_t axis;
  tensor_util::AxisSplit sp;
  if (int rc = splitAtAxis(a, x, op, ctx, axis, sp)) return rc;
  const int64_t outer = sp.outer, n = sp.n, inner = sp.inner;
  const bool sorted = a.i("sorted", 1) != 0;
  sel::UniqueResult r;
  switch (x.dtype) {
    case kF32: r = uniqueT<float>(x, outer, n, inner, sorted); break;
    case kF64: r = uniqueT<double>(x, outer, n, inner, sorted); break;
    case kI8: r = uniqueT<int8_t>(x, outer, n, inner, sorted); break;
    case kI16: r = uniqueT<int16_t>(x, outer, n, inner, sorted); break;
    case kI32: r = uniqueT<int32_t>(x, outer, n, inner, sorted); break;
    case kI64: r = uniqueT<int64_t>(x, outer, n, inner, sorted); break;
    case kU8: case kBool: r = uniqueT<uint8_t>(x, outer, n, inner, sorted); break;
    case kU16: r = uniqueT<uint16_t>(x, outer, n, inner, sorted); break;
    case kU32: r = uniqueT<uint32_t>(x, outer, n, inner, sorted); break;
    case kU64: r = uniqueT<uint64_t>(x, outer, n, inner, sorted); break;
    default:
      return ctx.fail("%s: element type %d is not supported (numbers and bool are)", op,
                      static_cast<int>(x.dtype));
  }
  const int64_t u = static_cast<int64_t>(r.first.size());
  if (ctx.dataExtents) {  // Y, indices and counts arrive at their capacity: they get u
    bool fits = ctx.setDataExtent(out[0], axis < 0 ? 0 : static_cast<int>(axis), u);
    if (nout > 1 && out[1].present()) fits = fits && ctx.setDataExtent(out[1], 0, u);
    if (nout > 3 && out[3].present()) fits = fits && ctx.setDataExtent(out[3], 0, u);
    if (!fits) return ctx.fail("%s: %lld unique values pass the results' capacity", op, static_cast<long long>(u));
  }
  const Tensor& y = out[0];
  const int64_t yAxisExtent = axis < 0 ? (y.rank == 1 ? y.dims[0] : -1) : y.dims[axis];
  if (y.dtype != x.dtype || y.numel() != outer * u * inner || yAxisExtent != u)
    return ctx.fail("%s: %lld unique %s, the result was compiled for %lld (the input differs from "
                    "the constant it was compiled with)",
                    op, static_cast<long long>(u), axis < 0 ? "elements" : "slices",
                    static_cast<long long>(yAxisExtent));
  const size_t es = dtypeSize(x.dtype), row = static_cast<size_t>(inner) * es;
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < u; ++k)
      std::memcpy(dst + static_cast<size_t>(o * u + k) * row,
                  src + static_cast<size_t>(o * n + r.first[k]) * row, row);
  const std::vector<int64_t>* lists[] = {&r.first, &r.inverse, &r.counts};
  const char* names[] = {"indices", "inverse_indices", "counts"};
  for (int i = 1; i < nout && i < 4; ++i) {
    if (!out[i].present()) continue;
    const std::vector<int64_t>& v = *lists[i - 1];
    if (out[i].dtype != kI64 || out[i].numel() != static_cast<int64_t>(v.size()))
      return ctx.fail("%s: %s must be int64 of %zu elements", op, names[i - 1], v.size());
    if (!v.empty()) std::memcpy(out[i].data, v.data(), v.size() * 8);
  }
  return 0;
}

int kCompress(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Compress";
  if (nin < 2 || !in[0].present() || !in[1].present() || nout < 1)
    return ctx.fail("%s: expected input and condition operands and one result", op);
  const Tensor &x = in[0], &cond = in[1];
  if (cond.dtype != kBool || cond.rank != 1)
    return ctx.fail("%s: condition must be a 1-D bool tensor", op);
  int64_t axis;
  tensor_util::AxisSplit sp;
  if (int rc = splitAtAxis(a, x, op, ctx, axis, sp)) return rc;
  const int64_t outer = sp.outer, extent = sp.n, inner = sp.inner;
  std::vector<int64_t> idx;
  std::string err = sel::compressSelected(cond.as<uint8_t>(), cond.numel(), extent, &idx);
  if (!err.empty()) return ctx.fail("%s: %s", op, err.c_str());
  const int64_t kept = static_cast<int64_t>(idx.size());
  if (ctx.dataExtents && !ctx.setDataExtent(out[0], axis < 0 ? 0 : static_cast<int>(axis), kept))
    return ctx.fail("%s: the condition keeps %lld, more than the result's capacity %lld", op,
                    static_cast<long long>(kept), static_cast<long long>(out[0].dims[axis < 0 ? 0 : axis]));
  const Tensor& y = out[0];
  const int64_t yAxisExtent = axis < 0 ? (y.rank == 1 ? y.dims[0] : -1) : y.dims[axis];
  if (y.dtype != x.dtype || y.numel() != outer * kept * inner || yAxisExtent != kept)
    return ctx.fail("%s: the condition keeps %lld, the result was compiled for %lld (the "
                    "condition differs from the constant it was compiled with)",
                    op, static_cast<long long>(kept), static_cast<long long>(yAxisExtent));
  const size_t row = static_cast<size_t>(inner) * dtypeSize(x.dtype);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < kept; ++k)
      std::memcpy(dst + static_cast<size_t>(o * kept + k) * row,
                  src + static_cast<size_t>(o * extent + idx[k]) * row, row);
  return 0;
}

template <typename T>
void tfidfRows(const sel::TfIdfSpec& s, const Tensor& x, float* y) {
  const int64_t rows = x.rank == 2 ? x.dims[0] : 1, c = x.dims[x.rank - 1];
  std::vector<int64_t> freq;
  for (int64_t r = 0; r < rows; ++r) {
    freq.assign(static_cast<size_t>(s.outSize), 0);
    sel::tfidfCountRow(s, x.as<T>() + r * c, c, &freq);
    for (int64_t j = 0; j < s.outSize; ++j) y[r * s.outSize + j] = sel::tfidfValue(s, j, freq[j]);
  }
}

int kTfIdfVectorizer(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "TfIdfVectorizer";
  if (nin < 1 || !in[0].present() || nout < 1)
    return ctx.fail("%s: expected one operand and one result", op);
  const Tensor& x = in[0];
  if (x.dtype != kI32 && x.dtype != kI64)
    return ctx.fail("%s: tokens must be int32 or int64 (got element type %d)", op,
                    static_cast<int>(x.dtype));
  if (x.rank != 1 && x.rank != 2) return ctx.fail("%s: tokens must be [C] or [N, C]", op);
  sel::TfIdfSpec s;
  std::string err = sel::tfidfSpec(a.s("mode", ""), a.i("min_gram_length", 0),
                                   a.i("max_gram_length", 0), a.i("max_skip_count", 0),
                                   a.ints("ngram_counts"), a.ints("ngram_indexes"),
                                   a.ints("pool_int64s"), a.floats("weights"), &s);
  if (!err.empty()) return ctx.fail("%s: %s", op, err.c_str());
  const std::vector<int64_t> want =
      x.rank == 1 ? std::vector<int64_t>{s.outSize} : std::vector<int64_t>{x.dims[0], s.outSize};
  if (out[0].dtype != kF32 || !hasDims(out[0], want))
    return ctx.fail("%s: the result must be float32 %s", op, dimsText(want).c_str());
  if (x.dtype == kI32) tfidfRows<int32_t>(s, x, out[0].as<float>());
  else tfidfRows<int64_t>(s, x, out[0].as<float>());
  return 0;
}

}  // namespace

const KernelEntry* selectKernels() {
  static const KernelEntry kTable[] = {
      {"NonMaxSuppression", kNonMaxSuppression},
      {"Unique", kUnique},
      {"Compress", kCompress},
      {"TfIdfVectorizer", kTfIdfVectorizer},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
