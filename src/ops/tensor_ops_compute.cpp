// Op schemas of the tensor family, part 3: ops whose kernels compute values rather than only move
// them: Resize (to opset 19; its output extents come from mgrt::resizeGeometry, the kernel's own
// function), Einsum, Det, Range, ConstantOfShape, EyeLike, Trilu, and the block rearrangements
// DepthToSpace / SpaceToDepth. Kernels: runtime/cpu/k_tensor_resize.cpp, k_tensor_einsum.cpp,
// k_tensor_det.cpp, k_tensor.cpp. The Einsum equation is parsed by the same code as the kernel's (k_tensor_shared.h).
#include <cmath>

#include "families.h"
#include "k_tensor_shared.h"
#include "tensor_ops_parts.h"

namespace magneto {
namespace tensor_ops {
namespace {

bool oneOf(const std::string& v, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (v == o) return true;
  return false;
}

Status inferResize(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int r = t.rank();
  const AttrMap& a = c.attrs();
  std::string mode = a.getString("mode", "nearest");
  if (!oneOf(mode, {"nearest", "linear", "cubic"}))
    return c.error(fmt::format("Resize mode '{}' is not one of nearest, linear, cubic", mode));
  std::string ctm = a.getString("coordinate_transformation_mode", "half_pixel");
  if (!oneOf(ctm, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                   "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}))
    return c.error(fmt::format("Resize coordinate_transformation_mode '{}' is not supported", ctm));
  std::string nm = a.getString("nearest_mode", "round_prefer_floor");
  if (!oneOf(nm, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return c.error(fmt::format("Resize nearest_mode '{}' is not supported", nm));
  std::vector<int64_t> axes = a.getInts("axes");
  int64_t nAxes = axes.empty() ? r : static_cast<int64_t>(axes.size());
  if (ctm == "tf_crop_and_resize" && (!c.hasInput(1) || c.inputType(1).numel() != 2 * nAxes))
    return c.error(fmt::format("Resize tf_crop_and_resize needs roi with {} values", 2 * nAxes));
  if (t.dtype == DType::kString || t.dtype == DType::kBool)
    return c.error(fmt::format("Resize input is {}, expected a numeric type", dtypeName(t.dtype)));
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (c.hasInput(3) && c.inputType(3).numel() > 0) {
    MG_ASSIGN_OR_RETURN(sizes, c.constInts(3, "sizes"));
  } else {
    if (!c.hasInput(2) || c.inputType(2).numel() == 0)
      return c.error("Resize needs scales (operand 2) or sizes (operand 3)");
    const Tensor* sc = c.constantInput(2);
    if (!sc) return c.constInts(2, "scales").status();
    if (!isFloat(sc->dtype())) return c.error(fmt::format("Resize scales are {}, expected float", dtypeName(sc->dtype())));
    for (int64_t k = 0; k < sc->numel(); ++k) scales.push_back(static_cast<float>(sc->floatAt(k)));
  }
  mgrt::ResizeGeometry geo;
  std::string err = mgrt::resizeGeometry(t.dims, axes, scales, sizes,
                                         a.getString("keep_aspect_ratio_policy", "stretch"), &geo);
  if (!err.empty()) return c.error("Resize: " + err);
  c.setOutput(0, {t.dtype, geo.out});
  return Status::success();
}

Status inferEinsum(InferContext& c) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < c.numInputs(); ++i) {
    if (!c.hasInput(i)) return c.error(fmt::format("Einsum operand {} is absent", i));
    if (c.inputDType(i) != c.inputDType(0))
      return c.error(fmt::format("Einsum operand {} is {}, expected {}", i, dtypeName(c.inputDType(i)),
                                 dtypeName(c.inputDType(0))));
    if (c.inputType(i).rank() > 8) return unsupported("Einsum operands of rank > 8");
    dims.push_back(c.inputDims(i));
  }
  mgrt::EinsumSpec spec;
  std::string err = mgrt::parseEinsum(c.attrs().getString("equation", ""), dims, &spec);
  if (!err.empty()) return c.error("Einsum '" + c.attrs().getString("equation", "") + "': " + err);
  Dims out;
  for (int l : spec.output) out.push_back(spec.labelSize[l]);
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

Status inferRange(InferContext& c) {
  DType dt = c.inputDType(0);
  for (size_t i = 0; i < 3; ++i) {
    if (c.inputDType(i) != dt)
      return c.error(fmt::format("Range operand {} is {}, expected {} like start", i, dtypeName(c.inputDType(i)), dtypeName(dt)));
    if (c.inputType(i).numel() != 1)
      return c.error(fmt::format("Range operand {} has shape {}, expected a scalar", i, c.inputType(i).str()));
    if (!c.constantInput(i)) return c.constInts(i, "range bound").status();
  }
  int64_t n;
  if (isFloat(dt)) {
    double start = c.constantInput(0)->floatAt(0), limit = c.constantInput(1)->floatAt(0),
           delta = c.constantInput(2)->floatAt(0);
    if (delta == 0 || !std::isfinite(delta) || !std::isfinite(start) || !std::isfinite(limit))
      return c.error("Range needs finite bounds and a non-zero delta");
    double v = std::ceil((limit - start) / delta);
    if (v > 1e15) return c.error(fmt::format("Range has too many elements ({})", v));
    n = v > 0 ? static_cast<int64_t>(v) : 0;
  } else {
    int64_t start = c.constantInput(0)->intAt(0), limit = c.constantInput(1)->intAt(0),
            delta = c.constantInput(2)->intAt(0);
    if (delta == 0) return c.error("Range delta is 0");
    int64_t span;
    if (__builtin_sub_overflow(limit, start, &span)) return c.error("Range limit - start overflows int64");
    n = span != 0 && (span > 0) == (delta > 0) ? span / delta + (span % delta != 0 ? 1 : 0) : 0;
  }
  c.setOutput(0, {dt, {n}});
  return Status::success();
}

Status inferConstantOfShape(InferContext& c) {
  if (c.inputType(0).rank() != 1)
    return c.error(fmt::format("ConstantOfShape shape must be 1-D, got {}", c.inputType(0).str()));
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.constInts(0, "shape"));
  for (int64_t d : shape)
    if (d < 0) return c.error(fmt::format("ConstantOfShape shape {} has a negative dim", dimsStr(shape)));
  DType dt = DType::kF32;
  if (const Attribute* v = c.attrs().find("value"); v && v->kind() == Attribute::Kind::kTensor)
    dt = v->tensor().dtype();
  if (c.attrs().has("dtype")) {
    int64_t code = c.attrs().getInt("dtype", 1);
    dt = static_cast<DType>(code);
    if (dtypeSize(dt) == 0 || dt == DType::kString)
      return c.error(fmt::format("ConstantOfShape dtype {} is not a supported element type", code));
  }
  c.setOutput(0, {dt, shape});
  return Status::success();
}

Status inferEyeLike(InferContext& c) {
  const TensorType& t = c.inputType(0);
  if (t.rank() != 2) return c.error(fmt::format("EyeLike input has rank {}, expected 2", t.rank()));
  DType dt = t.dtype;
  if (c.attrs().has("dtype")) {
    dt = static_cast<DType>(c.attrs().getInt("dtype", 1));
    if (dtypeSize(dt) == 0 || dt == DType::kString)
      return c.error(fmt::format("EyeLike dtype {} is not a supported element type", c.attrs().getInt("dtype", 1)));
  }
  c.setOutput(0, {dt, t.dims});
  return Status::success();
}

Status inferTrilu(InferContext& c) {
  const TensorType& t = c.inputType(0);
  if (t.rank() < 2) return c.error(fmt::format("Trilu input has rank {}, expected >= 2", t.rank()));
  if (c.hasInput(1) && c.inputType(1).numel() != 1)
    return c.error(fmt::format("Trilu k is {}, expected a scalar", c.inputType(1).str()));
  c.setOutput(0, t);
  return Status::success();
}

// Det: [*, M, M] -> [*], float.
Status inferDet(InferContext& c) {
  const TensorType& t = c.inputType(0);
  if (t.dtype != DType::kF32 && t.dtype != DType::kF64)
    return unsupported("Det: input must be f32 or f64, got {}", dtypeName(t.dtype));
  if (t.rank() < 2 || t.dims[t.rank() - 1] != t.dims[t.rank() - 2])
    return c.error(fmt::format("Det input must be [*, M, M] (square matrices), got {}", t.str()));
  c.setOutput(0, {t.dtype, Dims(t.dims.begin(), t.dims.end() - 2)});
  return Status::success();
}

Status inferDepthToSpace(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int64_t b = c.attrs().getInt("blocksize", 0);
  if (t.rank() != 4) return c.error(fmt::format("DepthToSpace input has rank {}, expected 4 (NCHW)", t.rank()));
  if (b < 1 || b > (int64_t{1} << 20))
    return c.error(fmt::format("DepthToSpace blocksize is {}, expected 1 to 2^20", b));
  std::string mode = c.attrs().getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return c.error(fmt::format("DepthToSpace mode '{}' is not DCR or CRD", mode));
  if (t.dims[1] % (b * b) != 0)
    return c.error(fmt::format("DepthToSpace channels {} are not divisible by blocksize^2 = {}", t.dims[1], b * b));
  c.setOutput(0, {t.dtype, {t.dims[0], t.dims[1] / (b * b), t.dims[2] * b, t.dims[3] * b}});
  return Status::success();
}

Status inferSpaceToDepth(InferContext& c) {
  const TensorType& t = c.inputType(0);
  int64_t b = c.attrs().getInt("blocksize", 0);
  if (t.rank() != 4) return c.error(fmt::format("SpaceToDepth input has rank {}, expected 4 (NCHW)", t.rank()));
  if (b < 1 || b > (int64_t{1} << 20))
    return c.error(fmt::format("SpaceToDepth blocksize is {}, expected 1 to 2^20", b));
  if (t.dims[2] % b != 0 || t.dims[3] % b != 0)
    return c.error(fmt::format("SpaceToDepth spatial dims {}x{} are not divisible by blocksize {}",
                               t.dims[2], t.dims[3], b));
  c.setOutput(0, {t.dtype, {t.dims[0], t.dims[1] * b * b, t.dims[2] / b, t.dims[3] / b}});
  return Status::success();
}

}  // namespace

void registerComputeOps(OpRegistry& r) {
  using K = Attribute::Kind;
  OpSchema s = makeSchema("Resize", 1, 4, 1, 1, inferResize,
                          "nearest/linear/cubic resize by scales or sizes (opset 11-19 semantics: "
                          "axes, antialias, keep_aspect_ratio_policy, half_pixel_symmetric)");
  s.attrs = {{"mode", K::kString},
             {"coordinate_transformation_mode", K::kString},
             {"nearest_mode", K::kString},
             {"cubic_coeff_a", K::kFloat},
             {"exclude_outside", K::kInt},
             {"extrapolation_value", K::kFloat},
             {"antialias", K::kInt},
             {"axes", K::kInts},
             {"keep_aspect_ratio_policy", K::kString}};
  s.shapeOperands = {2, 3};
  s.sinceVersion = 19;
  r.add(s);

  s = makeSchema("Einsum", 1, -1, 1, 1, inferEinsum, "Einstein summation over the equation");
  s.attrs = {{"equation", K::kString, true}};
  r.add(s);

  s = makeSchema("Det", 1, 1, 1, 1, inferDet,
                 "determinant of each square matrix of the last two dims (LU in double)");
  s.sinceVersion = 11;
  r.add(s);

  s = makeSchema("Range", 3, 3, 1, 1, inferRange, "start, start + delta, ... up to limit (exclusive)");
  s.shapeOperands = {0, 1, 2};
  r.add(s);

  s = makeSchema("ConstantOfShape", 1, 1, 1, 1, inferConstantOfShape,
                 "a tensor of the given shape filled with value (kernel reads dtype/mg_value/mg_value_i)");
  s.attrs = {{"value", K::kTensor}, {"dtype", K::kInt}, {"mg_value", K::kFloat}, {"mg_value_i", K::kInt}};
  s.shapeOperands = {0};
  r.add(s);

  s = makeSchema("EyeLike", 1, 1, 1, 1, inferEyeLike, "ones on diagonal k of a 2-D tensor");
  s.attrs = {{"dtype", K::kInt}, {"k", K::kInt}};
  r.add(s);

  s = makeSchema("Trilu", 1, 2, 1, 1, inferTrilu, "upper or lower triangle from diagonal k");
  s.attrs = {{"upper", K::kInt}};
  r.add(s);

  s = makeSchema("DepthToSpace", 1, 1, 1, 1, inferDepthToSpace, "moves channel blocks into space (DCR/CRD)");
  s.attrs = {{"blocksize", K::kInt, true}, {"mode", K::kString}};
  r.add(s);

  s = makeSchema("SpaceToDepth", 1, 1, 1, 1, inferSpaceToDepth, "moves spatial blocks into channels");
  s.attrs = {{"blocksize", K::kInt, true}};
  r.add(s);
}

}  // namespace tensor_ops
}  // namespace magneto
