// NN op family, part 2: pools (MaxPool with its optional Indices, AveragePool, LpPool, the Global*
// pools, MaxRoiPool). Output sizes come from runtime/common/k_nn_shapes.h, shared with the kernels.
#include "nn_ops_common.h"

namespace magneto {
namespace {

using namespace nnops;

Status checkPoolInput(const InferContext& c, const char* op, bool allowInts) {
  DType t = c.inputDType(0);
  bool ok = isNNFloat(t) || (allowInts && (t == DType::kU8 || t == DType::kI8));
  if (!ok)
    return unsupported("{}: input must be f32 or f64{}, got {}", op,
                       allowInts ? " (or u8, i8)" : "", dtypeName(t));
  if (c.inputType(0).rank() < 3)
    return badInput("{}: input must be N x C x spatial (rank >= 3), got {}", op,
                    c.inputType(0).str());
  return Status::success();
}

// Infers a windowed pool's output [N, C, out...].
Expected<Dims> poolOutput(const InferContext& c, const char* op) {
  MG_ASSIGN_OR_RETURN(mgrt::SpatialAttrs sa, readSpatialAttrs(c, op));
  const Dims& x = c.inputDims(0);
  if (sa.kernelShape.empty()) return badInput("{}: kernel_shape is required", op);
  mgrt::SpatialGeometry g;
  std::string err =
      mgrt::resolveConvGeometry(op, Dims(x.begin() + 2, x.end()), sa.kernelShape, sa, &g);
  if (!err.empty()) return badInput("{}", err);
  Dims out = {x[0], x[1]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return out;
}

Status inferMaxPool(InferContext& c) {
  MG_RETURN_IF_ERROR(checkPoolInput(c, "MaxPool", true));
  int64_t so = c.attrs().getInt("storage_order", 0);
  if (so != 0 && so != 1) return badInput("MaxPool: storage_order must be 0 or 1, got {}", so);
  MG_ASSIGN_OR_RETURN(Dims out, poolOutput(c, "MaxPool"));
  c.setOutput(0, {c.inputDType(0), out});
  if (c.numOutputs() > 1) c.setOutput(1, {DType::kI64, out});
  return Status::success();
}

Status inferAveragePool(InferContext& c) {
  MG_RETURN_IF_ERROR(checkPoolInput(c, "AveragePool", false));
  MG_ASSIGN_OR_RETURN(Dims out, poolOutput(c, "AveragePool"));
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

Status inferLpPool(InferContext& c) {
  MG_RETURN_IF_ERROR(checkPoolInput(c, "LpPool", false));
  int64_t p = c.attrs().getInt("p", 2);
  if (p <= 0) return badInput("LpPool: p must be positive, got {}", p);
  MG_ASSIGN_OR_RETURN(Dims out, poolOutput(c, "LpPool"));
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

InferFn globalPool(const char* op) {
  return [op](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkPoolInput(c, op, false));
    if (std::string(op) == "GlobalLpPool" && c.attrs().getInt("p", 2) <= 0)
      return badInput("GlobalLpPool: p must be positive, got {}", c.attrs().getInt("p", 2));
    Dims out = c.inputDims(0);
    for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
    c.setOutput(0, {c.inputDType(0), out});
    return Status::success();
  };
}

Status inferMaxRoiPool(InferContext& c) {
  const char* op = "MaxRoiPool";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "rois"));
  MG_RETURN_IF_ERROR(requireRank(c, 0, 4, op, "input"));
  MG_RETURN_IF_ERROR(requireRank(c, 1, 2, op, "rois"));
  if (c.inputDims(1)[1] != 5)
    return badInput("{}: rois must be [num_rois, 5] (batch, x1, y1, x2, y2), got {}", op,
                    c.inputType(1).str());
  std::vector<int64_t> ps = c.attrs().getInts("pooled_shape");
  if (ps.size() != 2 || ps[0] <= 0 || ps[1] <= 0)
    return badInput("{}: pooled_shape must be two positive sizes, got {}", op,
                    mgrt::joinInts(ps));
  const Dims& x = c.inputDims(0);
  c.setOutput(0, {c.inputDType(0), {c.inputDims(1)[0], x[1], ps[0], ps[1]}});
  return Status::success();
}

OpSchema pool(const char* name, std::vector<AttrSpec> attrs, InferFn fn, const char* doc,
              int since, int maxOutputs = 1) {
  OpSchema s;
  s.name = name;
  s.attrs = std::move(attrs);
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = since;
  s.maxOutputs = maxOutputs;
  return s;
}

}  // namespace

void registerNNPoolOps(OpRegistry& r) {
  std::vector<AttrSpec> window = {{"auto_pad", K::kString}, {"ceil_mode", K::kInt},
                                  {"dilations", K::kInts}, {"kernel_shape", K::kInts, true},
                                  {"pads", K::kInts}, {"strides", K::kInts}};
  r.add(pool("MaxPool", concatAttrs(window, {{"storage_order", K::kInt}}), inferMaxPool,
             "max over windows; optional Indices (int64, flattened over the whole input)", 12, 2));
  r.add(pool("AveragePool", concatAttrs(window, {{"count_include_pad", K::kInt}}),
             inferAveragePool, "mean over windows (count_include_pad, ceil_mode)", 11));
  r.add(pool("LpPool", concatAttrs(window, {{"p", K::kInt}}), inferLpPool,
             "(sum |x|^p)^(1/p) over windows", 18));
  r.add(pool("GlobalAveragePool", {}, globalPool("GlobalAveragePool"),
             "mean over all spatial dims", 1));
  r.add(pool("GlobalMaxPool", {}, globalPool("GlobalMaxPool"), "max over all spatial dims", 1));
  r.add(pool("GlobalLpPool", {{"p", K::kInt}}, globalPool("GlobalLpPool"),
             "(sum |x|^p)^(1/p) over all spatial dims", 2));
  OpSchema roi = pool("MaxRoiPool", {{"pooled_shape", K::kInts, true}, {"spatial_scale", K::kFloat}},
                      inferMaxRoiPool, "max over each region of interest, pooled to a fixed grid", 1);
  roi.minInputs = roi.maxInputs = 2;
  r.add(std::move(roi));
}

}  // namespace magneto
