// Op schemas of the tensor / data-movement family, part 1: views (Identity, Reshape, Flatten,
// Squeeze, Unsqueeze), Dropout, Concat, Split, Slice, Transpose, Expand, Tile, Pad, CenterCropPad,
// Shape, Size.
// Indexed ops live in tensor_ops_index.cpp, ops that compute (Resize, Einsum, Range, ...) in
// tensor_ops_compute.cpp. Kernels: runtime/cpu/k_tensor*.cpp. Canonical forms follow the frontend
// contract: the newest ONNX signature up to opset 17, and lists that moved from attribute to operand
// in a version still in use (Split split, Squeeze/Unsqueeze axes) are accepted either way.
#include <algorithm>
#include <numeric>

#include <fmt/ranges.h>

#include "families.h"
#include "k_tensor_shared.h"
#include "tensor_ops_parts.h"

namespace magneto {
namespace tensor_ops {

Expected<std::optional<std::vector<int64_t>>> listAttrOrOperand(const InferContext& c,
                                                                const char* attr, size_t operand,
                                                                const char* what) {
  if (c.hasInput(operand)) {
    MG_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.constInts(operand, what));
    return std::optional<std::vector<int64_t>>(std::move(v));
  }
  if (const Attribute* a = c.attrs().find(attr)) {
    if (a->kind() == Attribute::Kind::kInts) return std::optional<std::vector<int64_t>>(a->ints());
    if (a->kind() == Attribute::Kind::kInt)
      return std::optional<std::vector<int64_t>>(std::vector<int64_t>{a->i()});
  }
  return std::optional<std::vector<int64_t>>();
}

OpSchema makeSchema(const char* name, int minIn, int maxIn, int minOut, int maxOut, InferFn infer,
                    const char* doc) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.minOutputs = minOut;
  s.maxOutputs = maxOut;
  s.infer = std::move(infer);
  s.doc = doc;
  return s;
}

namespace {

// a * b for extents, or an error naming `what` when the product overflows int64.
Expected<int64_t> mulExtent(int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return badInput("{}: {} x {} overflows int64", what, a, b);
  return r;
}

Status sameType(InferContext& c) {
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

Status inferDropout(InferContext& c) {
  // Training mode draws random masks: nothing a compiled inference graph can reproduce.
  if (const Tensor* tm = c.constantInput(2); tm && tm->numel() == 1 && tm->intAt(0) != 0) {
    const Tensor* ratio = c.constantInput(1);
    if (!ratio || ratio->numel() != 1 || ratio->floatAt(0) != 0.0)
      return unsupported("Dropout with training_mode = true is random; Magneto compiles inference only");
  }
  c.setOutput(0, c.inputType(0));
  if (c.numOutputs() > 1) c.setOutput(1, {DType::kBool, c.inputDims(0)});
  return Status::success();
}

Status inferConcat(InferContext& c) {
  const TensorType& t0 = c.inputType(0);
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", 0), t0.rank()));
  Dims out = t0.dims;
  out[axis] = 0;
  for (size_t i = 0; i < c.numInputs(); ++i) {
    if (!c.hasInput(i)) return c.error(fmt::format("Concat operand {} is absent", i));
    const TensorType& t = c.inputType(i);
    if (t.dtype != t0.dtype)
      return c.error(fmt::format("Concat operand {} has element type {}, expected {}", i,
                                 dtypeName(t.dtype), dtypeName(t0.dtype)));
    if (t.rank() != t0.rank())
      return c.error(fmt::format("Concat operand {} has rank {}, expected {}", i, t.rank(), t0.rank()));
    for (int d = 0; d < t.rank(); ++d)
      if (d != axis && t.dims[d] != t0.dims[d])
        return c.error(fmt::format("Concat operand {} has shape {}, expected {} except on axis {}",
                                   i, t.str(), t0.str(), axis));
    out[axis] += t.dims[axis];
  }
  c.setOutput(0, {t0.dtype, out});
  return Status::success();
}

Status inferSplit(InferContext& c) {
  const TensorType& t = c.inputType(0);
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", 0), t.rank()));
  int64_t n = static_cast<int64_t>(c.numOutputs()), dim = t.dims[axis];
  MG_ASSIGN_OR_RETURN(auto split, listAttrOrOperand(c, "split", 1, "split sizes"));
  std::vector<int64_t> sizes;
  if (split && !split->empty()) {
    sizes = *split;
    if (static_cast<int64_t>(sizes.size()) != n)
      return c.error(fmt::format("Split has {} sizes, expected one per result ({})", sizes.size(), n));
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return c.error(fmt::format("Split size {} is negative", s));
      sum += s;
    }
    if (sum != dim)
      return c.error(fmt::format("Split sizes sum to {}, expected the extent of axis {} ({})", sum,
                                 axis, dim));
  } else {
    if (c.attrs().has("num_outputs") && c.attrs().getInt("num_outputs", n) != n)
      return c.error(fmt::format("Split has num_outputs = {}, but {} results",
                                 c.attrs().getInt("num_outputs", n), n));
    // Equal parts; with num_outputs (opset 18) the last part may be smaller.
    int64_t part = (dim + n - 1) / n;
    if (dim % n != 0 && !c.attrs().has("num_outputs"))
      return c.error(fmt::format("Split of extent {} into {} equal parts: {} is not divisible by {}",
                                 dim, n, dim, n));
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
  }
  for (int64_t i = 0; i < n; ++i) {
    Dims d = t.dims;
    d[axis] = sizes[i];
    c.setOutput(i, {t.dtype, d});
  }
  return Status::success();
}

Status inferSlice(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int r = t.rank();
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> starts, c.constInts(1, "slice starts"));
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> ends, c.constInts(2, "slice ends"));
  if (starts.size() != ends.size())
    return c.error(fmt::format("Slice has {} starts and {} ends, expected as many", starts.size(), ends.size()));
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (c.hasInput(3)) {
    MG_ASSIGN_OR_RETURN(axes, c.constInts(3, "slice axes"));
    if (axes.size() != starts.size())
      return c.error(fmt::format("Slice has {} axes, expected {} (one per start)", axes.size(), starts.size()));
  }
  if (c.hasInput(4)) {
    MG_ASSIGN_OR_RETURN(steps, c.constInts(4, "slice steps"));
    if (steps.size() != starts.size())
      return c.error(fmt::format("Slice has {} steps, expected {} (one per start)", steps.size(), starts.size()));
  }
  if (static_cast<int>(starts.size()) > r && !c.hasInput(3))
    return c.error(fmt::format("Slice has {} starts for rank {}", starts.size(), r));
  Dims out = t.dims;
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    MG_ASSIGN_OR_RETURN(int64_t ax, normalizeAxis(axes[i], r));
    if (seen[ax]) return c.error(fmt::format("Slice axis {} is repeated", ax));
    seen[ax] = true;
    if (steps[i] == 0) return c.error(fmt::format("Slice step on axis {} is 0", ax));
    out[ax] = mgrt::sliceRange(t.dims[ax], starts[i], ends[i], steps[i]).size;
  }
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferReshape(InferContext& c) {
  const TensorType& t = c.inputType(0);
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.constInts(1, "target shape"));
  bool allowZero = c.attrs().getInt("allowzero", 0) != 0;
  Dims out(shape.size());
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[i];
    if (s == -1) {
      if (inferred >= 0) return c.error("Reshape target shape has more than one -1");
      inferred = static_cast<int>(i);
      continue;
    }
    if (s == 0 && !allowZero) {
      if (static_cast<int>(i) >= t.rank())
        return c.error(fmt::format("Reshape target dim {} is 0 (copy) but the input has rank {}", i, t.rank()));
      s = t.dims[i];
    }
    if (s < 0) return c.error(fmt::format("Reshape target dim {} is {}, expected >= -1", i, s));
    out[i] = s;
    MG_ASSIGN_OR_RETURN(known, mulExtent(known, s, "Reshape target shape"));
  }
  int64_t numel = t.numel();
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0)
      return c.error(fmt::format("Reshape cannot infer the -1 in {} from {} elements ({})",
                                 dimsStr(shape), numel, t.str()));
    out[inferred] = numel / known;
  } else if (known != numel) {
    return c.error(fmt::format("Reshape to {} has {} elements, expected {} (input {})", dimsStr(out),
                               known, numel, t.str()));
  }
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferFlatten(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int64_t axis = c.attrs().getInt("axis", 1);
  if (axis < -t.rank() || axis > t.rank())
    return c.error(fmt::format("Flatten axis {} is out of range [-{}, {}]", axis, t.rank(), t.rank()));
  if (axis < 0) axis += t.rank();
  int64_t a = 1, b = 1;
  for (int d = 0; d < t.rank(); ++d) (d < axis ? a : b) *= t.dims[d];
  c.setOutput(0, {t.dtype, {a, b}});
  return Status::success();
}

Status inferTranspose(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int r = t.rank();
  std::vector<int64_t> perm = c.attrs().getInts("perm");
  if (perm.empty())
    for (int d = r - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int>(perm.size()) != r)
    return c.error(fmt::format("Transpose perm has {} entries, expected {} (the rank)", perm.size(), r));
  std::vector<bool> seen(r, false);
  Dims out(r);
  for (int d = 0; d < r; ++d) {
    if (perm[d] < 0 || perm[d] >= r || seen[perm[d]])
      return c.error(fmt::format("Transpose perm [{}] is not a permutation of 0..{}",
                                 fmt::join(perm, ","), r - 1));
    seen[perm[d]] = true;
    out[d] = t.dims[perm[d]];
  }
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferSqueeze(InferContext& c) {
  const TensorType& t = c.inputType(0);
  MG_ASSIGN_OR_RETURN(auto axes, listAttrOrOperand(c, "axes", 1, "squeeze axes"));
  std::vector<bool> drop(t.rank(), false);
  if (axes && !axes->empty()) {
    for (int64_t a : *axes) {
      MG_ASSIGN_OR_RETURN(int64_t ax, normalizeAxis(a, t.rank()));
      if (t.dims[ax] != 1)
        return c.error(fmt::format("Squeeze axis {} has extent {}, expected 1 (input {})", a, t.dims[ax], t.str()));
      drop[ax] = true;
    }
  } else {
    for (int d = 0; d < t.rank(); ++d) drop[d] = t.dims[d] == 1;
  }
  Dims out;
  for (int d = 0; d < t.rank(); ++d)
    if (!drop[d]) out.push_back(t.dims[d]);
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferUnsqueeze(InferContext& c) {
  const TensorType& t = c.inputType(0);
  MG_ASSIGN_OR_RETURN(auto axes, listAttrOrOperand(c, "axes", 1, "unsqueeze axes"));
  if (!axes || axes->empty()) return c.error("Unsqueeze needs axes (attribute or operand 1)");
  int64_t r = t.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> ins(r, false);
  for (int64_t a : *axes) {
    MG_ASSIGN_OR_RETURN(int64_t ax, normalizeAxis(a, r));
    if (ins[ax]) return c.error(fmt::format("Unsqueeze axis {} is repeated", a));
    ins[ax] = true;
  }
  Dims out;
  size_t k = 0;
  for (int64_t d = 0; d < r; ++d) out.push_back(ins[d] ? 1 : t.dims[k++]);
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferExpand(InferContext& c) {
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.constInts(1, "target shape"));
  for (int64_t s : shape)
    if (s < 0) return c.error(fmt::format("Expand shape {} has a negative dim", dimsStr(shape)));
  auto out = broadcastDims(c.inputDims(0), shape);
  if (!out.ok()) return c.error("Expand: " + out.status().message());
  c.setOutput(0, {c.inputDType(0), out.value()});
  return Status::success();
}

Status inferTile(InferContext& c) {
  const TensorType& t = c.inputType(0);
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> reps, c.constInts(1, "tile repeats"));
  if (static_cast<int>(reps.size()) != t.rank())
    return c.error(fmt::format("Tile has {} repeats, expected {} (the rank)", reps.size(), t.rank()));
  Dims out = t.dims;
  for (int d = 0; d < t.rank(); ++d) {
    if (reps[d] < 0) return c.error(fmt::format("Tile repeat {} on axis {} is negative", reps[d], d));
    MG_ASSIGN_OR_RETURN(out[d], mulExtent(out[d], reps[d], "Tile"));
  }
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferPad(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int r = t.rank();
  std::string mode = c.attrs().getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return c.error(fmt::format("Pad mode '{}' is not one of constant, reflect, edge, wrap", mode));
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> pads, c.constInts(1, "pads"));
  std::vector<int64_t> axes(r);
  std::iota(axes.begin(), axes.end(), 0);
  if (c.hasInput(3)) {
    MG_ASSIGN_OR_RETURN(axes, c.constInts(3, "pad axes"));
  }
  if (pads.size() != 2 * axes.size())
    return c.error(fmt::format("Pad has {} pads, expected {} (2 per padded axis)", pads.size(), 2 * axes.size()));
  if (c.hasInput(2) && c.inputType(2).numel() > 1)
    return c.error(fmt::format("Pad constant_value has {} elements, expected a scalar", c.inputType(2).numel()));
  if (c.hasInput(2) && c.inputDType(2) != t.dtype)
    return c.error(fmt::format("Pad constant_value is {}, expected {} like the data",
                               dtypeName(c.inputDType(2)), dtypeName(t.dtype)));
  Dims out = t.dims;
  size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    MG_ASSIGN_OR_RETURN(int64_t ax, normalizeAxis(axes[i], r));
    int64_t b = pads[i], e = pads[i + n];
    if (__builtin_add_overflow(t.dims[ax], b, &out[ax]) || __builtin_add_overflow(out[ax], e, &out[ax]))
      return c.error(fmt::format("Pad pads {} overflow int64", dimsStr(pads)));
    if (out[ax] < 0)
      return c.error(fmt::format("Pad gives axis {} extent {} ({} {:+} {:+})", ax, out[ax], t.dims[ax], b, e));
    if (mode != "constant" && t.dims[ax] == 0 && out[ax] > 0)
      return c.error(fmt::format("Pad mode '{}' cannot pad axis {} of extent 0", mode, ax));
  }
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

// CenterCropPad (opset 18): the listed axes (all by default) take the extents of operand 1.
Status inferCenterCropPad(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int r = t.rank();
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.constInts(1, "shape"));
  std::vector<int64_t> axes = c.attrs().getInts("axes");
  if (axes.empty())
    for (int d = 0; d < r; ++d) axes.push_back(d);
  if (shape.size() != axes.size())
    return c.error(fmt::format("CenterCropPad shape has {} values, expected {} (one per axis)",
                               shape.size(), axes.size()));
  Dims out = t.dims;
  std::vector<bool> seen(r, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    MG_ASSIGN_OR_RETURN(int64_t ax, normalizeAxis(axes[k], r));
    if (seen[ax]) return c.error(fmt::format("CenterCropPad axis {} appears twice", ax));
    seen[ax] = true;
    if (shape[k] < 0) return c.error(fmt::format("CenterCropPad extent {} is negative", shape[k]));
    out[ax] = shape[k];
  }
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status inferShape(InferContext& c) {
  int64_t r = c.inputType(0).rank();
  int64_t start = c.attrs().getInt("start", 0), end = c.attrs().getInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  c.setOutput(0, {DType::kI64, {std::max<int64_t>(0, end - start)}});
  return Status::success();
}

Status inferSize(InferContext& c) {
  c.setOutput(0, {DType::kI64, {}});
  return Status::success();
}

}  // namespace
}  // namespace tensor_ops

void registerTensorOps(OpRegistry& r) {
  using namespace tensor_ops;
  using K = Attribute::Kind;

  OpSchema s = makeSchema("Identity", 1, 1, 1, 1, sameType, "y = x");
  s.traits = kView | kUnary;
  r.add(s);

  s = makeSchema("Dropout", 1, 3, 1, 2, inferDropout,
                 "inference: y = x; the optional mask is all true");
  s.attrs = {{"seed", K::kInt}};
  r.add(s);

  s = makeSchema("Concat", 1, -1, 1, 1, inferConcat, "joins operands along axis");
  s.attrs = {{"axis", K::kInt, true}};
  s.traits = kConcatLike;
  r.add(s);

  s = makeSchema("Split", 1, 2, 1, -1, inferSplit,
                 "splits along axis by split (attribute or operand 1), num_outputs or equally");
  s.attrs = {{"axis", K::kInt}, {"split", K::kInts}, {"num_outputs", K::kInt}};
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("Slice", 3, 5, 1, 1, inferSlice, "data[starts:ends:steps] on axes");
  s.shapeOperands = {1, 2, 3, 4};
  r.add(s);

  s = makeSchema("Reshape", 2, 2, 1, 1, inferReshape,
                 "new shape; 0 copies the input dim unless allowzero, -1 is inferred");
  s.attrs = {{"allowzero", K::kInt}};
  s.traits = kView;
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("Flatten", 1, 1, 1, 1, inferFlatten, "2-D view split at axis");
  s.attrs = {{"axis", K::kInt}};
  s.traits = kView | kUnary;
  r.add(s);

  s = makeSchema("Transpose", 1, 1, 1, 1, inferTranspose, "permutes dims (default: reverses)");
  s.attrs = {{"perm", K::kInts}};
  s.traits = kUnary;
  r.add(s);

  s = makeSchema("Squeeze", 1, 2, 1, 1, inferSqueeze, "drops size-1 dims (axes attribute or operand)");
  s.attrs = {{"axes", K::kInts}};
  s.traits = kView;
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("Unsqueeze", 1, 2, 1, 1, inferUnsqueeze,
                 "inserts size-1 dims (axes attribute or operand)");
  s.attrs = {{"axes", K::kInts}};
  s.traits = kView;
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("Expand", 2, 2, 1, 1, inferExpand, "bidirectional broadcast to shape");
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("Tile", 2, 2, 1, 1, inferTile, "repeats the input along each axis");
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("Pad", 2, 4, 1, 1, inferPad, "pads (constant, reflect, edge, wrap)");
  s.attrs = {{"mode", K::kString}};
  s.shapeOperands = {1, 3};
  r.add(s);

  s = makeSchema("CenterCropPad", 2, 2, 1, 1, inferCenterCropPad,
                 "crops or zero-pads the listed axes, centred, to the given extents");
  s.attrs = {{"axes", K::kInts}};
  s.shapeOperands = {1};
  s.sinceVersion = 18;
  r.add(s);

  s = makeSchema("Shape", 1, 1, 1, 1, inferShape, "the input's dims [start, end) as int64");
  s.attrs = {{"start", K::kInt}, {"end", K::kInt}};
  s.traits = kShapeOnly;
  r.add(s);

  s = makeSchema("Size", 1, 1, 1, 1, inferSize, "the input's element count as an int64 scalar");
  s.traits = kShapeOnly;
  r.add(s);

  registerIndexOps(r);
  registerComputeOps(r);
}

}  // namespace magneto
