// The selection op family: NonMaxSuppression, Unique, Compress and TfIdfVectorizer, schemas and
// shape inference. Reference kernels: runtime/cpu/k_select.cpp; both sides compute through
// runtime/common/k_select_shared.h.
//
// Data-dependent extents. When the operands whose values decide a result's extent are constants
// (every operand of NonMaxSuppression, Unique's input, Compress's condition), shape inference runs
// the shared computation on them and gives the exact extents. Otherwise it gives the extent's upper
// bound and marks the dim data-dependent (InferContext::setDataDependent): the importer makes it a
// data symbol and the kernel reports the actual extent at run time (docs/DYNAMIC_SHAPES.md,
// "Data-dependent extents"). TfIdfVectorizer's extent is static (max(ngram_indexes) + 1 columns);
// its pool of strings is refused (STRING tensors are not supported).
#include <string>
#include <vector>

#include "families.h"
#include "k_select_shared.h"

namespace magneto {
namespace {

using K = Attribute::Kind;
namespace sel = mgrt::selection;


// An optional scalar operand ([] or [1]) of type `want`; `present` false when absent.
Status checkScalar(const InferContext& c, size_t i, const char* op, const char* name, DType want) {
  if (!c.hasInput(i)) return Status::success();
  if (c.inputDType(i) != want)
    return badInput("{}: {} must be {}, got {}", op, name, dtypeName(want), c.inputType(i).str());
  if (c.inputType(i).numel() != 1)
    return badInput("{}: {} must hold one value, got {}", op, name, c.inputType(i).str());
  return Status::success();
}

// ---- NonMaxSuppression ----

Status inferNMS(InferContext& c) {
  const char* op = "NonMaxSuppression";
  const Dims& b = c.inputDims(0);
  const Dims& s = c.inputDims(1);
  if (c.inputDType(0) != DType::kF32 || c.inputDType(1) != DType::kF32)
    return unsupported("{}: boxes and scores must be f32, got {} and {}", op,
                       c.inputType(0).str(), c.inputType(1).str());
  if (b.size() != 3 || b[2] != 4)
    return badInput("{}: boxes must be [num_batches, spatial_dimension, 4], got {}", op,
                    c.inputType(0).str());
  if (s.size() != 3 || s[0] != b[0] || s[2] != b[1])
    return badInput("{}: scores must be [{}, num_classes, {}] (the boxes' batches and boxes), "
                    "got {}",
                    op, b[0], b[1], c.inputType(1).str());
  MG_RETURN_IF_ERROR(checkScalar(c, 2, op, "max_output_boxes_per_class", DType::kI64));
  MG_RETURN_IF_ERROR(checkScalar(c, 3, op, "iou_threshold", DType::kF32));
  MG_RETURN_IF_ERROR(checkScalar(c, 4, op, "score_threshold", DType::kF32));
  const int64_t center = c.attrs().getInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return badInput("{}: center_point_box must be 0 or 1, got {}", op, center);

  const Tensor* v[5] = {};
  bool allConstant = true;
  for (size_t i = 0; i < 5; ++i)
    if (c.hasInput(i)) {
      v[i] = c.constantInput(i);
      allConstant &= v[i] != nullptr;
    }
  if (v[3] && !(v[3]->floatAt(0) >= 0 && v[3]->floatAt(0) <= 1))
    return badInput("{}: iou_threshold must be in [0, 1], got {}", op, v[3]->floatAt(0));
  if (!allConstant) {
    // Known at run time: at most min(max_output_boxes_per_class, boxes) per batch and class (no
    // operand 2 selects none; a run-time one is bounded by the boxes).
    int64_t perClass = b[1];
    if (!c.hasInput(2)) perClass = 0;
    else if (v[2]) perClass = std::min(perClass, std::max<int64_t>(0, v[2]->intAt(0)));
    c.setOutput(0, {DType::kI64, {b[0] * s[1] * perClass, 3}});
    c.setDataDependent(0, 0);
    return Status::success();
  }
  sel::NmsParams p;
  p.batches = b[0];
  p.classes = s[1];
  p.boxes = b[1];
  p.maxPerClass = v[2] ? v[2]->intAt(0) : 0;
  p.iouThreshold = v[3] ? static_cast<float>(v[3]->floatAt(0)) : 0.0f;
  p.hasScoreThreshold = v[4] != nullptr;
  p.scoreThreshold = v[4] ? static_cast<float>(v[4]->floatAt(0)) : 0.0f;
  p.centerPointBox = center == 1;
  std::vector<int64_t> selected;
  sel::nmsSelect(v[0]->data<float>(), v[1]->data<float>(), p, &selected);
  c.setOutput(0, {DType::kI64, {static_cast<int64_t>(selected.size() / 3), 3}});
  return Status::success();
}

// ---- Unique ----

template <typename T>
sel::UniqueResult uniqueOf(const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool sorted) {
  return sel::uniqueSlices(x.data<T>(), outer, n, inner, sorted);
}

Status inferUnique(InferContext& c) {
  const char* op = "Unique";
  const TensorType& t = c.inputType(0);
  int64_t outer = 1, n = t.numel(), inner = 1, axis = -1;
  if (const Attribute* a = c.attrs().find("axis")) {
    MG_ASSIGN_OR_RETURN(axis, normalizeAxis(a->i(), t.rank()));
    n = t.dims[axis];
    for (int64_t d = 0; d < axis; ++d) outer *= t.dims[d];
    for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= t.dims[d];
  }
  const bool sorted = c.attrs().getInt("sorted", 1) != 0;
  const Tensor* x = c.constantInput(0);
  switch (t.dtype) {
    case DType::kF32: case DType::kF64: case DType::kI8: case DType::kI16: case DType::kI32:
    case DType::kI64: case DType::kU8: case DType::kBool: case DType::kU16: case DType::kU32:
    case DType::kU64:
      break;
    default:
      return unsupported("{}: input of element type {} is not supported (numbers and bool are)", op,
                         dtypeName(t.dtype));
  }
  if (!x) {
    // Known at run time: at most n unique elements or slices; inverse_indices is static.
    Dims y = axis < 0 ? Dims{n} : t.dims;
    c.setOutput(0, {t.dtype, y});
    c.setDataDependent(0, axis < 0 ? 0 : static_cast<int>(axis));
    if (c.numOutputs() > 1) c.setOutput(1, {DType::kI64, {n}}), c.setDataDependent(1, 0);
    if (c.numOutputs() > 2) c.setOutput(2, {DType::kI64, {n}});
    if (c.numOutputs() > 3) c.setOutput(3, {DType::kI64, {n}}), c.setDataDependent(3, 0);
    return Status::success();
  }
  sel::UniqueResult r;
  switch (t.dtype) {
    case DType::kF32: r = uniqueOf<float>(*x, outer, n, inner, sorted); break;
    case DType::kF64: r = uniqueOf<double>(*x, outer, n, inner, sorted); break;
    case DType::kI8: r = uniqueOf<int8_t>(*x, outer, n, inner, sorted); break;
    case DType::kI16: r = uniqueOf<int16_t>(*x, outer, n, inner, sorted); break;
    case DType::kI32: r = uniqueOf<int32_t>(*x, outer, n, inner, sorted); break;
    case DType::kI64: r = uniqueOf<int64_t>(*x, outer, n, inner, sorted); break;
    case DType::kU8: case DType::kBool: r = uniqueOf<uint8_t>(*x, outer, n, inner, sorted); break;
    case DType::kU16: r = uniqueOf<uint16_t>(*x, outer, n, inner, sorted); break;
    case DType::kU32: r = uniqueOf<uint32_t>(*x, outer, n, inner, sorted); break;
    case DType::kU64: r = uniqueOf<uint64_t>(*x, outer, n, inner, sorted); break;
    default:
      return unsupported("{}: input of element type {} is not supported (numbers and bool are)", op,
                         dtypeName(t.dtype));
  }
  const int64_t u = static_cast<int64_t>(r.first.size());
  Dims y = axis < 0 ? Dims{u} : t.dims;
  if (axis >= 0) y[axis] = u;
  c.setOutput(0, {t.dtype, y});
  if (c.numOutputs() > 1) c.setOutput(1, {DType::kI64, {u}});  // indices
  if (c.numOutputs() > 2) c.setOutput(2, {DType::kI64, {n}});  // inverse_indices
  if (c.numOutputs() > 3) c.setOutput(3, {DType::kI64, {u}});  // counts
  return Status::success();
}

// ---- Compress ----

Status inferCompress(InferContext& c) {
  const char* op = "Compress";
  const TensorType& t = c.inputType(0);
  if (c.inputDType(1) != DType::kBool || c.inputType(1).rank() != 1)
    return badInput("{}: condition must be a 1-D bool tensor, got {}", op, c.inputType(1).str());
  int64_t axis = -1, extent = t.numel();
  if (const Attribute* a = c.attrs().find("axis")) {
    MG_ASSIGN_OR_RETURN(axis, normalizeAxis(a->i(), t.rank()));
    extent = t.dims[axis];
  }
  const Tensor* cond = c.constantInput(1);
  if (!cond) {
    // Known at run time: at most min(len(condition), extent) slices are kept.
    Dims y = axis < 0 ? Dims{extent} : t.dims;
    y[axis < 0 ? 0 : axis] = std::min(extent, c.inputType(1).numel());
    c.setOutput(0, {t.dtype, y});
    c.setDataDependent(0, axis < 0 ? 0 : static_cast<int>(axis));
    return Status::success();
  }
  std::vector<int64_t> idx;
  std::string err = sel::compressSelected(cond->data<uint8_t>(), cond->numel(), extent, &idx);
  if (!err.empty()) return badInput("{}: {}", op, err);
  const int64_t kept = static_cast<int64_t>(idx.size());
  Dims y = axis < 0 ? Dims{kept} : t.dims;
  if (axis >= 0) y[axis] = kept;
  c.setOutput(0, {t.dtype, y});
  return Status::success();
}

// ---- TfIdfVectorizer ----

Status inferTfIdf(InferContext& c) {
  const char* op = "TfIdfVectorizer";
  const TensorType& t = c.inputType(0);
  if (c.attrs().find("pool_strings"))
    return unsupported("{}: pool_strings is not supported (STRING tensors are not supported); "
                       "use pool_int64s with int32/int64 tokens",
                       op);
  if (t.dtype != DType::kI32 && t.dtype != DType::kI64)
    return unsupported("{}: input must be i32 or i64 tokens (STRING tensors are not supported), "
                       "got {}",
                       op, t.str());
  if (t.rank() != 1 && t.rank() != 2)
    return badInput("{}: input must be [C] or [N, C], got {}", op, t.str());
  if (c.attrs().getInts("pool_int64s").empty())
    return badInput("{}: pool_int64s (the n-grams to count) is missing or empty", op);
  std::vector<float> weights;
  for (double w : c.attrs().getFloats("weights")) weights.push_back(static_cast<float>(w));
  sel::TfIdfSpec spec;
  std::string err = sel::tfidfSpec(
      c.attrs().getString("mode", ""), c.attrs().getInt("min_gram_length", 0),
      c.attrs().getInt("max_gram_length", 0), c.attrs().getInt("max_skip_count", 0),
      c.attrs().getInts("ngram_counts"), c.attrs().getInts("ngram_indexes"),
      c.attrs().getInts("pool_int64s"), weights, &spec);
  if (!err.empty()) return badInput("{}: {}", op, err);
  c.setOutput(0, {DType::kF32, t.rank() == 1 ? Dims{spec.outSize} : Dims{t.dims[0], spec.outSize}});
  return Status::success();
}

OpSchema schema(const char* name, int minIn, int maxIn, int maxOut, InferFn fn, const char* doc,
                int since) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.maxOutputs = maxOut;
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = since;
  return s;
}

}  // namespace

void registerSelectionOps(OpRegistry& r) {
  OpSchema s = schema("NonMaxSuppression", 2, 5, 1, inferNMS,
                      "[num_selected, 3] (batch, class, box) of the boxes kept per batch and "
                      "class by score and IOU; exact when every operand is a constant, else "
                      "known at run time (a data symbol)",
                      11);
  s.attrs = {{"center_point_box", K::kInt}};
  s.dataOperands = {0, 1, 2, 3, 4};
  r.add(s);

  s = schema("Unique", 1, 1, 4, inferUnique,
             "unique elements or slices along axis (sorted or in order of first occurrence), "
             "with indices, inverse_indices and counts; exact for a constant input, else "
             "known at run time (a data symbol)",
             11);
  s.attrs = {{"axis", K::kInt}, {"sorted", K::kInt}};
  s.dataOperands = {0};
  r.add(s);

  s = schema("Compress", 2, 2, 1, inferCompress,
             "slices along axis (or elements of the flattened input) where condition is true; "
             "exact for a constant condition, else known at run time (a data symbol)",
             11);
  s.attrs = {{"axis", K::kInt}};
  s.dataOperands = {1};
  r.add(s);

  s = schema("TfIdfVectorizer", 1, 1, 1, inferTfIdf,
             "n-gram counts (TF), weights (IDF) or both (TFIDF) of int32/int64 token rows over "
             "pool_int64s; [max(ngram_indexes) + 1] columns per row",
             9);
  s.attrs = {{"mode", K::kString, true},         {"min_gram_length", K::kInt, true},
             {"max_gram_length", K::kInt, true}, {"max_skip_count", K::kInt, true},
             {"ngram_counts", K::kInts, true},   {"ngram_indexes", K::kInts, true},
             {"pool_int64s", K::kInts},          {"pool_strings", K::kStrings},
             {"weights", K::kFloats}};
  r.add(s);
}

}  // namespace magneto
