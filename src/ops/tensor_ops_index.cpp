// Op schemas of the tensor family, part 2: indexed reads and writes (Gather, GatherElements,
// GatherND, ScatterND, ScatterElements and its old alias Scatter), OneHot, ReverseSequence and
// NonZero. Index values are data: shape inference checks only what shapes decide; the kernels
// (runtime/cpu/k_tensor_index.cpp) range-check every index and fail with a message.
#include "families.h"
#include "tensor_ops_parts.h"

namespace magneto {
namespace tensor_ops {
namespace {

Status requireIntegerIndices(InferContext& c, size_t i, const char* op) {
  if (!isInteger(c.inputDType(i)))
    return c.error(fmt::format("{} indices are {}, expected int32 or int64", op, dtypeName(c.inputDType(i))));
  return Status::success();
}

Status inferGather(InferContext& c) {
  const TensorType& t = c.inputType(0);
  MG_RETURN_IF_ERROR(requireIntegerIndices(c, 1, "Gather"));
  if (t.rank() == 0) return c.error("Gather data is a scalar, expected rank >= 1");
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", 0), t.rank()));
  Dims out(t.dims.begin(), t.dims.begin() + axis);
  for (int64_t d : c.inputDims(1)) out.push_back(d);
  for (int d = static_cast<int>(axis) + 1; d < t.rank(); ++d) out.push_back(t.dims[d]);
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

// GatherElements / ScatterElements: indices of the data's rank, within the data on other axes.
Status checkElementIndices(InferContext& c, const char* op, int64_t* axisOut) {
  const TensorType& t = c.inputType(0);
  const Dims& idx = c.inputDims(1);
  MG_RETURN_IF_ERROR(requireIntegerIndices(c, 1, op));
  if (static_cast<int>(idx.size()) != t.rank())
    return c.error(fmt::format("{} indices have rank {}, expected {} (the data's rank)", op, idx.size(), t.rank()));
  if (t.rank() == 0) return c.error(fmt::format("{} data is a scalar, expected rank >= 1", op));
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", 0), t.rank()));
  for (int d = 0; d < t.rank(); ++d)
    if (d != axis && idx[d] > t.dims[d])
      return c.error(fmt::format("{} indices have extent {} on axis {}, expected at most {} (data {})",
                                 op, idx[d], d, t.dims[d], t.str()));
  *axisOut = axis;
  return Status::success();
}

Status inferGatherElements(InferContext& c) {
  int64_t axis;
  MG_RETURN_IF_ERROR(checkElementIndices(c, "GatherElements", &axis));
  c.setOutput(0, {c.inputDType(0), c.inputDims(1)});
  return Status::success();
}

Status inferGatherND(InferContext& c) {
  const TensorType& t = c.inputType(0);
  const Dims& idx = c.inputDims(1);
  MG_RETURN_IF_ERROR(requireIntegerIndices(c, 1, "GatherND"));
  int64_t b = c.attrs().getInt("batch_dims", 0);
  int64_t q = static_cast<int64_t>(idx.size()), r = t.rank();
  if (q < 1 || r < 1) return c.error("GatherND needs data and indices of rank >= 1");
  if (b < 0 || b >= std::min(q, r))
    return c.error(fmt::format("GatherND batch_dims {} must be in [0, {})", b, std::min(q, r)));
  int64_t last = idx[q - 1];
  if (last < 1 || last > r - b)
    return c.error(fmt::format("GatherND index tuples have length {}, expected 1 to {}", last, r - b));
  for (int64_t d = 0; d < b; ++d)
    if (idx[d] != t.dims[d])
      return c.error(fmt::format("GatherND batch dim {} is {} in the indices and {} in the data", d, idx[d], t.dims[d]));
  Dims out(idx.begin(), idx.end() - 1);
  for (int64_t d = b + last; d < r; ++d) out.push_back(t.dims[d]);
  c.setOutput(0, {t.dtype, out});
  return Status::success();
}

Status checkReduction(InferContext& c) {
  std::string red = c.attrs().getString("reduction", "none");
  if (red != "none" && red != "add" && red != "mul" && red != "max" && red != "min")
    return c.error(fmt::format("reduction '{}' is not one of none, add, mul, max, min", red));
  return Status::success();
}

Status inferScatterND(InferContext& c) {
  const TensorType& t = c.inputType(0);
  const Dims& idx = c.inputDims(1);
  MG_RETURN_IF_ERROR(requireIntegerIndices(c, 1, "ScatterND"));
  MG_RETURN_IF_ERROR(checkReduction(c));
  if (idx.empty()) return c.error("ScatterND indices are a scalar, expected rank >= 1");
  int64_t last = idx.back();
  if (last < 1 || last > t.rank())
    return c.error(fmt::format("ScatterND index tuples have length {}, expected 1 to {}", last, t.rank()));
  Dims want(idx.begin(), idx.end() - 1);
  for (int64_t d = last; d < t.rank(); ++d) want.push_back(t.dims[d]);
  if (c.inputDims(2) != want || c.inputDType(2) != t.dtype)
    return c.error(fmt::format("ScatterND updates are {}, expected {}", c.inputType(2).str(),
                               TensorType{t.dtype, want}.str()));
  c.setOutput(0, t);
  return Status::success();
}

Status inferScatterElements(InferContext& c) {
  int64_t axis;
  MG_RETURN_IF_ERROR(checkElementIndices(c, c.node().kind().c_str(), &axis));
  MG_RETURN_IF_ERROR(checkReduction(c));
  if (c.inputDims(2) != c.inputDims(1) || c.inputDType(2) != c.inputDType(0))
    return c.error(fmt::format("{} updates are {}, expected {}", c.node().kind(), c.inputType(2).str(),
                               TensorType{c.inputDType(0), c.inputDims(1)}.str()));
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

Status inferOneHot(InferContext& c) {
  const Dims& idx = c.inputDims(0);
  const Tensor* dt = c.constantInput(1);  // any numeric type, so not constInts
  if (!dt) return c.constInts(1, "depth").status();
  if (dt->numel() != 1) return c.error(fmt::format("OneHot depth has {} elements, expected 1", dt->numel()));
  double dv = dt->floatAt(0);
  if (!(dv >= 1 && dv < 1e15)) return c.error(fmt::format("OneHot depth is {}, expected >= 1", dv));
  std::vector<int64_t> depth = {static_cast<int64_t>(dv)};
  if (depth[0] < 1) return c.error(fmt::format("OneHot depth is {}, expected >= 1", depth[0]));
  if (c.inputType(2).numel() != 2)
    return c.error(fmt::format("OneHot values are {}, expected 2 elements [off, on]", c.inputType(2).str()));
  int64_t r = static_cast<int64_t>(idx.size()) + 1;
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", -1), r));
  Dims out(idx.begin(), idx.end());
  out.insert(out.begin() + axis, depth[0]);
  c.setOutput(0, {c.inputDType(2), out});
  return Status::success();
}

Status inferReverseSequence(InferContext& c) {
  const TensorType& t = c.inputType(0);
  if (t.rank() < 2) return c.error(fmt::format("ReverseSequence input has rank {}, expected >= 2", t.rank()));
  MG_ASSIGN_OR_RETURN(int64_t b, normalizeAxis(c.attrs().getInt("batch_axis", 1), t.rank()));
  MG_ASSIGN_OR_RETURN(int64_t ta, normalizeAxis(c.attrs().getInt("time_axis", 0), t.rank()));
  if (b == ta) return c.error("ReverseSequence batch_axis and time_axis are the same");
  const Dims& lens = c.inputDims(1);
  if (lens.size() != 1 || lens[0] != t.dims[b])
    return c.error(fmt::format("ReverseSequence sequence_lens are {}, expected [{}] (the batch)",
                               dimsStr(lens), t.dims[b]));
  MG_RETURN_IF_ERROR(requireIntegerIndices(c, 1, "ReverseSequence"));
  c.setOutput(0, t);
  return Status::success();
}

Status inferNonZero(InferContext& c) {
  const Tensor* x = c.constantInput(0);
  const int64_t rows = std::max(1, c.inputType(0).rank());
  if (!x) {
    // Data-dependent extent: at most every element is non-zero; the count is computed at run time
    // (docs/DYNAMIC_SHAPES.md, "Data-dependent extents").
    c.setOutput(0, {DType::kI64, {rows, c.inputType(0).numel()}});
    c.setDataDependent(0, 1);
    return Status::success();
  }
  int64_t n = 0;
  for (int64_t i = 0; i < x->numel(); ++i) n += x->floatAt(i) != 0.0;
  c.setOutput(0, {DType::kI64, {rows, n}});
  return Status::success();
}

}  // namespace

void registerIndexOps(OpRegistry& r) {
  using K = Attribute::Kind;
  OpSchema s = makeSchema("Gather", 2, 2, 1, 1, inferGather, "takes slices of data at indices along axis");
  s.attrs = {{"axis", K::kInt}};
  r.add(s);

  s = makeSchema("GatherElements", 2, 2, 1, 1, inferGatherElements,
                 "out[i][j] = data[index[i][j]][j] (for axis 0)");
  s.attrs = {{"axis", K::kInt}};
  r.add(s);

  s = makeSchema("GatherND", 2, 2, 1, 1, inferGatherND, "gathers slices at index tuples");
  s.attrs = {{"batch_dims", K::kInt}};
  r.add(s);

  s = makeSchema("ScatterND", 3, 3, 1, 1, inferScatterND, "writes updates at index tuples");
  s.attrs = {{"reduction", K::kString}};
  r.add(s);

  for (const char* name : {"ScatterElements", "Scatter"}) {
    s = makeSchema(name, 3, 3, 1, 1, inferScatterElements, "writes updates at indices along axis");
    s.attrs = {{"axis", K::kInt}, {"reduction", K::kString}};
    r.add(s);
  }

  s = makeSchema("OneHot", 3, 3, 1, 1, inferOneHot, "one-hot encoding with [off, on] values");
  s.attrs = {{"axis", K::kInt}};
  s.shapeOperands = {1};
  r.add(s);

  s = makeSchema("ReverseSequence", 2, 2, 1, 1, inferReverseSequence,
                 "reverses each batch entry's first sequence_lens[b] time steps");
  s.attrs = {{"batch_axis", K::kInt}, {"time_axis", K::kInt}};
  r.add(s);

  s = makeSchema("NonZero", 1, 1, 1, 1, inferNonZero,
                 "indices of non-zero elements; the count is exact for a constant operand, else "
                 "known at run time (a data symbol bounded by the operand's element count)");
  s.dataOperands = {0};
  r.add(s);
}

}  // namespace tensor_ops
}  // namespace magneto
