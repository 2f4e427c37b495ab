// The reduction op family, as data: Reduce* (axes as the `axes` attribute or as constant operand
// 1: ONNX moved it in opset 13 for ReduceSum and 18 for the rest, and both forms are in use;
// ReduceMax/ReduceMin take bool since opset 20),
// ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax (opset-13 semantics; the frontend marks older models
// with mg_coerce_2d = 1), CumSum and TopK. Reference kernels: runtime/cpu/k_reduction.cpp.
#include <algorithm>

#include "elementwise_helpers.h"
#include "families.h"

namespace magneto {
namespace {

using namespace ophelp;
using K = Attribute::Kind;

// Normalizes `axes` against rank: errors on out-of-range or repeated axes.
Status normalizeAxes(std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    MG_ASSIGN_OR_RETURN(a, normalizeAxis(a, rank));
    if (seen[a]) return badInput("axis {} appears twice in axes", a);
    seen[a] = true;
  }
  return Status::success();
}

Status inferReduce(InferContext& c, DTypeSet types) {
  MG_RETURN_IF_ERROR(checkDType(c, 0, types));
  std::vector<int64_t> axes;
  if (c.hasInput(1)) {
    if (c.attrs().has("axes"))
      return badInput("axes given both as attribute and as operand 1, expected one of them");
    MG_ASSIGN_OR_RETURN(axes, c.constInts(1, "axes"));
  } else {
    axes = c.attrs().getInts("axes");
  }
  const Dims& in = c.inputDims(0);
  int64_t rank = static_cast<int64_t>(in.size());
  MG_RETURN_IF_ERROR(normalizeAxes(axes, rank));
  std::vector<bool> reduced(in.size(), false);
  if (axes.empty()) {
    if (c.attrs().getInt("noop_with_empty_axes", 0) != 0) {
      c.setOutput(0, c.inputType(0));
      return Status::success();
    }
    std::fill(reduced.begin(), reduced.end(), true);
  }
  for (int64_t a : axes) reduced[a] = true;
  bool keep = c.attrs().getInt("keepdims", 1) != 0;
  Dims out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) out.push_back(in[d]);
    else if (keep) out.push_back(1);
  }
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

void addReduce(OpRegistry& r, const char* name, const char* doc,
               DTypeSet types = kNumericSet) {
  OpSchema s;
  s.name = name;
  s.minInputs = 1;
  s.maxInputs = 2;
  s.attrs = {{"axes", K::kInts}, {"keepdims", K::kInt}, {"noop_with_empty_axes", K::kInt}};
  s.shapeOperands = {1};
  s.infer = [types](InferContext& c) { return inferReduce(c, types); };
  s.doc = doc;
  r.add(std::move(s));
}

Status inferArg(InferContext& c) {
  MG_RETURN_IF_ERROR(checkDType(c, 0, kNumericSet));
  const Dims& in = c.inputDims(0);
  int64_t rank = static_cast<int64_t>(in.size());
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", 0), std::max<int64_t>(rank, 1)));
  if (rank > 0 && in[axis] == 0) return badInput("axis {} has size 0, expected at least 1 element", axis);
  bool keep = c.attrs().getInt("keepdims", 1) != 0;
  Dims out;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) out.push_back(in[d]);
    else if (keep) out.push_back(1);
  }
  c.setOutput(0, {DType::kI64, out});
  return Status::success();
}

Status inferSoftmax(InferContext& c) {
  MG_RETURN_IF_ERROR(checkDType(c, 0, kFloatSet));
  int64_t rank = c.inputType(0).rank();
  if (rank == 0) return badInput("operand 0 is a scalar, expected rank 1 or more");
  MG_RETURN_IF_ERROR(normalizeAxis(c.attrs().getInt("axis", -1), rank).status());
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

void addSoftmax(OpRegistry& r, const char* name, const char* doc) {
  OpSchema s;
  s.name = name;
  s.attrs = {{"axis", K::kInt}, {"mg_coerce_2d", K::kInt}};
  s.infer = inferSoftmax;
  s.doc = doc;
  s.sinceVersion = 13;
  r.add(std::move(s));
}

Status inferCumSum(InferContext& c) {
  MG_RETURN_IF_ERROR(checkDType(c, 0, kNumericSet));
  MG_RETURN_IF_ERROR(checkDType(c, 1, dtypeBit(DType::kI32) | dtypeBit(DType::kI64)));
  if (c.inputType(1).numel() != 1)
    return badInput("operand 1 (axis) has shape [{}], expected a scalar", dimsStr(c.inputDims(1)));
  int64_t rank = c.inputType(0).rank();
  if (rank == 0) return badInput("operand 0 is a scalar, expected rank 1 or more");
  // The axis does not change the result's shape: check it when it is known.
  if (const Tensor* axis = c.constantInput(1))
    MG_RETURN_IF_ERROR(normalizeAxis(axis->intAt(0), rank).status());
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

Status inferTopK(InferContext& c) {
  MG_RETURN_IF_ERROR(checkDType(c, 0, kNumericSet));
  MG_RETURN_IF_ERROR(checkDType(c, 1, dtypeBit(DType::kI64) | dtypeBit(DType::kI32)));
  Dims dims = c.inputDims(0);
  int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) return badInput("operand 0 is a scalar, expected rank 1 or more");
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", -1), rank));
  if (c.inputType(1).numel() != 1)
    return badInput("K has {} values, expected 1", c.inputType(1).numel());
  if (!c.constantInput(1)) {
    // A run-time K: the extent along axis is at most the axis' size (docs/DYNAMIC_SHAPES.md,
    // "Data-dependent extents"); the kernel checks 0 <= K <= that size.
    c.setOutput(0, {c.inputDType(0), dims});
    c.setOutput(1, {DType::kI64, dims});
    c.setDataDependent(0, static_cast<int>(axis));
    c.setDataDependent(1, static_cast<int>(axis));
    return Status::success();
  }
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> k, c.constInts(1, "K"));
  if (k.size() != 1) return badInput("K has {} values, expected 1", k.size());
  if (k[0] < 0 || k[0] > dims[axis])
    return badInput("K is {}, expected 0 to {} (the size of axis {})", k[0], dims[axis], axis);
  dims[axis] = k[0];
  c.setOutput(0, {c.inputDType(0), dims});
  c.setOutput(1, {DType::kI64, dims});
  return Status::success();
}

}  // namespace

void registerReductionOps(OpRegistry& r) {
  addReduce(r, "ReduceSum", "sum over axes");
  addReduce(r, "ReduceMean", "mean over axes (integers divide truncating)");
  // Bool since opset 20 (max: any, min: all).
  addReduce(r, "ReduceMax", "max over axes (lowest value for an empty set)", kAllSet);
  addReduce(r, "ReduceMin", "min over axes (highest value for an empty set)", kAllSet);
  addReduce(r, "ReduceProd", "product over axes");
  addReduce(r, "ReduceL1", "sum of |x| over axes");
  addReduce(r, "ReduceL2", "sqrt of the sum of x^2 over axes");
  addReduce(r, "ReduceLogSum", "ln of the sum over axes");
  addReduce(r, "ReduceLogSumExp", "ln of the sum of e^x over axes (computed stably)");
  addReduce(r, "ReduceSumSquare", "sum of x^2 over axes");

  for (const char* name : {"ArgMax", "ArgMin"}) {
    OpSchema s;
    s.name = name;
    s.attrs = {{"axis", K::kInt}, {"keepdims", K::kInt}, {"select_last_index", K::kInt}};
    s.infer = inferArg;
    s.doc = "index (i64) of the extreme value along axis; ties give the first, or the last "
            "with select_last_index";
    r.add(std::move(s));
  }

  addSoftmax(r, "Softmax", "e^x / sum(e^x) along axis (default -1)");
  addSoftmax(r, "LogSoftmax", "x - ln(sum(e^x)) along axis (default -1)");
  addSoftmax(r, "Hardmax", "1 at the first maximum along axis, 0 elsewhere");

  OpSchema cumsum;
  cumsum.name = "CumSum";
  cumsum.minInputs = cumsum.maxInputs = 2;
  cumsum.attrs = {{"exclusive", K::kInt}, {"reverse", K::kInt}};
  cumsum.shapeOperands = {1};
  cumsum.infer = inferCumSum;
  cumsum.doc = "running sum along the axis given by operand 1";
  r.add(std::move(cumsum));

  OpSchema topk;
  topk.name = "TopK";
  topk.minInputs = topk.maxInputs = 2;
  topk.minOutputs = topk.maxOutputs = 2;
  topk.attrs = {{"axis", K::kInt}, {"largest", K::kInt}, {"sorted", K::kInt}};
  topk.infer = inferTopK;
  topk.dataOperands = {1};
  topk.doc = "the K largest (or smallest) values along axis and their i64 indices, sorted; "
             "equal values keep the smaller index first; a K that is no constant gives a "
             "data-dependent extent (known at run time)";
  r.add(std::move(topk));
}

}  // namespace magneto
