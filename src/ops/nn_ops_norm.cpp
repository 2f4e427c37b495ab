// NN op family, part 3: normalizations (BatchNormalization in inference form,
// InstanceNormalization, LayerNormalization, GroupNormalization, LpNormalization,
// MeanVarianceNormalization, LRN): schemas and shape inference.
#include "nn_ops_common.h"

namespace magneto {
namespace {

using namespace nnops;

Status requireVector(const InferContext& c, size_t i, int64_t n, const char* op,
                     const char* what) {
  const Dims& d = c.inputDims(i);
  if (d.size() != 1 || d[0] != n)
    return badInput("{}: {} must be [{}] (one per channel), got {}", op, what, n,
                    c.inputType(i).str());
  return Status::success();
}

Status inferBatchNorm(InferContext& c) {
  const char* op = "BatchNormalization";
  if (c.attrs().getInt("training_mode", 0) != 0)
    return unsupported("{}: training mode is not supported (training_mode=1)", op);
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  const Dims& x = c.inputDims(0);
  if (x.size() < 2)
    return badInput("{}: input must be N x C x ... (rank >= 2), got {}", op,
                    c.inputType(0).str());
  static const char* kWhat[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    MG_RETURN_IF_ERROR(requireSameDType(c, i, op, kWhat[i]));
    MG_RETURN_IF_ERROR(requireVector(c, i, x[1], op, kWhat[i]));
  }
  c.setOutput(0, c.inputType(0));
  // Outside training mode running_mean/var are the inputs unchanged (kernels copy them).
  for (size_t i = 1; i < c.numOutputs(); ++i) c.setOutput(i, c.inputType(2 + i));
  return Status::success();
}

Status inferInstanceNorm(InferContext& c) {
  const char* op = "InstanceNormalization";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  const Dims& x = c.inputDims(0);
  if (x.size() < 3)
    return badInput("{}: input must be N x C x spatial (rank >= 3), got {}", op,
                    c.inputType(0).str());
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "scale"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "B"));
  MG_RETURN_IF_ERROR(requireVector(c, 1, x[1], op, "scale"));
  MG_RETURN_IF_ERROR(requireVector(c, 2, x[1], op, "B"));
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

// Whether `d` broadcasts unidirectionally to `to` (numpy rules, d's dims aligned right).
bool broadcastsTo(const Dims& d, const Dims& to) {
  if (d.size() > to.size()) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    int64_t t = to[to.size() - d.size() + i];
    if (d[i] != 1 && d[i] != t) return false;
  }
  return true;
}

Status inferLayerNorm(InferContext& c) {
  const char* op = "LayerNormalization";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "Scale"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "B"));
  const Dims& x = c.inputDims(0);
  int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) return badInput("{}: input must have rank >= 1, got a scalar", op);
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", -1), rank));
  Dims normShape(x.begin() + axis, x.end());
  for (size_t i = 1; i < 3; ++i) {
    if (!c.hasInput(i)) continue;
    if (!broadcastsTo(c.inputDims(i), normShape))
      return badInput("{}: {} {} does not broadcast to the normalized dims {} (axis {})", op,
                      i == 1 ? "Scale" : "B", c.inputType(i).str(), dimsStr(normShape), axis);
  }
  int64_t stash = c.attrs().getInt("stash_type", 1);
  if (stash != 1 && stash != 11)
    return unsupported("{}: stash_type {} is not supported (1 = f32 or 11 = f64)", op, stash);
  c.setOutput(0, c.inputType(0));
  Dims stats = x;
  for (int64_t i = axis; i < rank; ++i) stats[i] = 1;
  DType st = stash == 11 ? DType::kF64 : DType::kF32;
  for (size_t i = 1; i < c.numOutputs(); ++i) c.setOutput(i, {st, stats});
  return Status::success();
}

Status inferGroupNorm(InferContext& c) {
  const char* op = "GroupNormalization";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "scale"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "bias"));
  const Dims& x = c.inputDims(0);
  if (x.size() < 3)
    return badInput("{}: input must be N x C x spatial (rank >= 3), got {}", op,
                    c.inputType(0).str());
  int64_t g = c.attrs().getInt("num_groups", 0);
  if (g <= 0 || x[1] % g != 0)
    return badInput("{}: num_groups {} must be positive and divide the {} channels", op, g, x[1]);
  for (size_t i = 1; i < 3; ++i) {
    const Dims& d = c.inputDims(i);
    // Opset 21 gives one value per channel; opset 18 gave one per group: accept both.
    if (d.size() != 1 || (d[0] != x[1] && d[0] != g))
      return badInput("{}: {} must be [{}] (per channel) or [{}] (per group), got {}", op,
                      i == 1 ? "scale" : "bias", x[1], g, c.inputType(i).str());
  }
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

Status inferLpNorm(InferContext& c) {
  const char* op = "LpNormalization";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  int64_t rank = c.inputType(0).rank();
  if (rank < 1) return badInput("{}: input must have rank >= 1, got a scalar", op);
  MG_RETURN_IF_ERROR(normalizeAxis(c.attrs().getInt("axis", -1), rank).status());
  int64_t p = c.attrs().getInt("p", 2);
  if (p != 1 && p != 2) return badInput("{}: p must be 1 or 2, got {}", op, p);
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

Status inferMVN(InferContext& c) {
  const char* op = "MeanVarianceNormalization";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  int64_t rank = c.inputType(0).rank();
  std::vector<int64_t> axes = c.attrs().getInts("axes", {0, 2, 3});
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    MG_ASSIGN_OR_RETURN(int64_t n, normalizeAxis(a, rank));
    if (seen[n]) return badInput("{}: axis {} is listed twice in axes", op, a);
    seen[n] = true;
  }
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

Status inferLRN(InferContext& c) {
  const char* op = "LRN";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  if (c.inputType(0).rank() < 2)
    return badInput("{}: input must be N x C x ... (rank >= 2), got {}", op,
                    c.inputType(0).str());
  int64_t size = c.attrs().getInt("size", 0);
  if (size <= 0) return badInput("{}: size must be positive, got {}", op, size);
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

OpSchema norm(const char* name, int minIn, int maxIn, std::vector<AttrSpec> attrs, InferFn fn,
              const char* doc, int since, int maxOut = 1) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.maxOutputs = maxOut;
  s.attrs = std::move(attrs);
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = since;
  return s;
}

}  // namespace

void registerNNNormOps(OpRegistry& r) {
  r.add(norm("BatchNormalization", 5, 5,
             {{"epsilon", K::kFloat}, {"momentum", K::kFloat}, {"training_mode", K::kInt}},
             inferBatchNorm, "inference-form batch normalization with running statistics", 15,
             3));
  r.add(norm("InstanceNormalization", 3, 3, {{"epsilon", K::kFloat}}, inferInstanceNorm,
             "normalizes each (n, c) over the spatial dims", 6));
  r.add(norm("LayerNormalization", 2, 3,
             {{"axis", K::kInt}, {"epsilon", K::kFloat}, {"stash_type", K::kInt}},
             inferLayerNorm, "normalizes over dims [axis, rank); optional Mean and InvStdDev", 17,
             3));
  r.add(norm("GroupNormalization", 3, 3, {{"epsilon", K::kFloat}, {"num_groups", K::kInt, true}},
             inferGroupNorm, "normalizes each group of channels; scale/bias per channel", 18));
  r.add(norm("LpNormalization", 1, 1, {{"axis", K::kInt}, {"p", K::kInt}}, inferLpNorm,
             "divides by the L1/L2 norm along axis", 1));
  r.add(norm("MeanVarianceNormalization", 1, 1, {{"axes", K::kInts}}, inferMVN,
             "(x - mean) / (std + 1e-9) over axes (default [0,2,3])", 13));
  r.add(norm("LRN", 1, 1,
             {{"alpha", K::kFloat}, {"beta", K::kFloat}, {"bias", K::kFloat},
              {"size", K::kInt, true}},
             inferLRN, "local response normalization across channels", 13));
}

}  // namespace magneto
