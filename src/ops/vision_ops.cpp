// The vision op family: the spatial ops of detection and segmentation networks, schemas and shape
// inference. GridSample (opset 16: 4-D input, grid [N, H_out, W_out, 2] of (x, y) in [-1, 1]),
// RoiAlign (opset 16: regions [num_rois, 4] of (x1, y1, x2, y2) pooled to
// output_height x output_width per channel) and MaxUnpool (opset 11: scatters MaxPool's values back
// to their Indices; the optional operand output_shape is a shape operand, its value is the
// output's shape). Reference kernels: runtime/cpu/k_vision.cpp.
#include <string>

#include "families.h"

namespace magneto {
namespace {

using K = Attribute::Kind;

bool isVisionFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }

Status requireVisionFloat(const InferContext& c, size_t i, const char* op, const char* what) {
  if (!isVisionFloat(c.inputDType(i)))
    return unsupported("{}: {} must be f32 or f64, got {}", op, what, dtypeName(c.inputDType(i)));
  return Status::success();
}

Status requireOneOf(const InferContext& c, const char* op, const char* attr, const char* def,
                    std::initializer_list<const char*> allowed) {
  std::string v = c.attrs().getString(attr, def);
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return Status::success();
    list += list.empty() ? std::string("'") + a + "'" : std::string(", '") + a + "'";
  }
  return badInput("{}: {} must be one of {}, got '{}'", op, attr, list, v);
}

Status inferGridSample(InferContext& c) {
  const char* op = "GridSample";
  MG_RETURN_IF_ERROR(requireVisionFloat(c, 0, op, "X"));
  if (c.inputDType(1) != c.inputDType(0))
    return badInput("{}: grid has element type {}, X has {}", op, dtypeName(c.inputDType(1)),
                    dtypeName(c.inputDType(0)));
  const Dims &x = c.inputDims(0), &g = c.inputDims(1);
  if (x.size() != 4)
    return unsupported("{}: X must be [N, C, H, W] (rank 4; the N-d form of opset 20 is not "
                       "supported), got {}", op, c.inputType(0).str());
  if (g.size() != 4 || g[0] != x[0] || g[3] != 2)
    return badInput("{}: grid must be [{}, H_out, W_out, 2], got {}", op, x[0],
                    c.inputType(1).str());
  // opset 20 renamed bilinear/bicubic to linear/cubic: both spellings mean the same.
  MG_RETURN_IF_ERROR(requireOneOf(c, op, "mode", "bilinear",
                                  {"bilinear", "nearest", "bicubic", "linear", "cubic"}));
  MG_RETURN_IF_ERROR(
      requireOneOf(c, op, "padding_mode", "zeros", {"zeros", "border", "reflection"}));
  c.setOutput(0, {c.inputDType(0), {x[0], x[1], g[1], g[2]}});
  return Status::success();
}

Status inferRoiAlign(InferContext& c) {
  const char* op = "RoiAlign";
  MG_RETURN_IF_ERROR(requireVisionFloat(c, 0, op, "X"));
  if (c.inputDType(1) != c.inputDType(0))
    return badInput("{}: rois has element type {}, X has {}", op, dtypeName(c.inputDType(1)),
                    dtypeName(c.inputDType(0)));
  if (c.inputDType(2) != DType::kI64 && c.inputDType(2) != DType::kI32)
    return badInput("{}: batch_indices must be i64 (or i32), got {}", op,
                    dtypeName(c.inputDType(2)));
  const Dims &x = c.inputDims(0), &r = c.inputDims(1), &b = c.inputDims(2);
  if (x.size() != 4)
    return badInput("{}: X must be [N, C, H, W], got {}", op, c.inputType(0).str());
  if (r.size() != 2 || r[1] != 4)
    return badInput("{}: rois must be [num_rois, 4] (x1, y1, x2, y2), got {}", op,
                    c.inputType(1).str());
  if (b.size() != 1 || b[0] != r[0])
    return badInput("{}: batch_indices must be [{}] (one per roi), got {}", op, r[0],
                    c.inputType(2).str());
  MG_RETURN_IF_ERROR(requireOneOf(c, op, "mode", "avg", {"avg", "max"}));
  MG_RETURN_IF_ERROR(requireOneOf(c, op, "coordinate_transformation_mode", "half_pixel",
                                  {"half_pixel", "output_half_pixel"}));
  int64_t oh = c.attrs().getInt("output_height", 1), ow = c.attrs().getInt("output_width", 1);
  if (oh <= 0 || ow <= 0)
    return badInput("{}: output_height and output_width must be positive, got {} and {}", op, oh,
                    ow);
  if (c.attrs().getInt("sampling_ratio", 0) < 0)
    return badInput("{}: sampling_ratio must be >= 0 (0: adaptive), got {}", op,
                    c.attrs().getInt("sampling_ratio", 0));
  c.setOutput(0, {c.inputDType(0), {r[0], x[1], oh, ow}});
  return Status::success();
}

Status inferMaxUnpool(InferContext& c) {
  const char* op = "MaxUnpool";
  MG_RETURN_IF_ERROR(requireVisionFloat(c, 0, op, "X"));
  const Dims& x = c.inputDims(0);
  const int64_t rank = static_cast<int64_t>(x.size()), sp = rank - 2;
  if (rank < 3)
    return badInput("{}: X must be N x C x spatial (rank >= 3), got {}", op, c.inputType(0).str());
  if (c.inputDType(1) != DType::kI64 || c.inputDims(1) != x)
    return badInput("{}: I must be i64 of X's shape {}, got {}", op, dimsStr(x),
                    c.inputType(1).str());
  std::vector<int64_t> k = c.attrs().getInts("kernel_shape");
  std::vector<int64_t> s = c.attrs().getInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> p = c.attrs().getInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (static_cast<int64_t>(k.size()) != sp || static_cast<int64_t>(s.size()) != sp ||
      static_cast<int64_t>(p.size()) != 2 * sp)
    return badInput("{}: kernel_shape and strides need {} entries and pads {} (X is {}), got "
                    "{}, {} and {}", op, sp, 2 * sp, dimsStr(x), dimsStr(k), dimsStr(s),
                    dimsStr(p));
  for (int64_t d = 0; d < sp; ++d)
    if (k[d] <= 0 || s[d] <= 0 || p[d] < 0 || p[d + sp] < 0)
      return badInput("{}: kernel_shape and strides must be positive and pads >= 0, got {}, {} "
                      "and {}", op, dimsStr(k), dimsStr(s), dimsStr(p));
  // The MaxPool input that gave X: (x - 1) * stride + kernel - pads. With output_shape the pads
  // are ignored (output_shape says where the output ends), as in ONNX's reference.
  const bool given = c.hasInput(2);
  Dims out = {x[0], x[1]};
  for (int64_t d = 0; d < sp; ++d) {
    int64_t e = (x[d + 2] - 1) * s[d] + k[d] - (given ? 0 : p[d] + p[d + sp]);
    if (e < 0) return badInput("{}: the pads leave spatial dim {} negative ({})", op, d, e);
    out.push_back(e);
  }
  if (given) {
    MG_ASSIGN_OR_RETURN(std::vector<int64_t> os, c.constInts(2, "output_shape"));
    // The kernel scatters into the inferred shape and places that at the start of output_shape
    // (zeros after it), so output_shape may only be larger.
    bool ok = static_cast<int64_t>(os.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d) ok = os[d] >= out[d] && (d >= 2 || os[d] == out[d]);
    if (!ok)
      return badInput("{}: output_shape must be [{}, {}, ...] with spatial dims at least the "
                      "inferred {}, got {}", op, x[0], x[1], dimsStr(out), dimsStr(os));
    out.assign(os.begin(), os.end());
  }
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

OpSchema schema(const char* name, int minIn, int maxIn, std::vector<AttrSpec> attrs, InferFn fn,
                const char* doc, int since) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.attrs = std::move(attrs);
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = since;
  return s;
}

}  // namespace

void registerVisionOps(OpRegistry& r) {
  r.add(schema("GridSample", 2, 2,
               {{"mode", K::kString}, {"padding_mode", K::kString}, {"align_corners", K::kInt}},
               inferGridSample,
               "samples X at grid's normalized (x, y): bilinear, nearest or bicubic; zeros, "
               "border or reflection padding",
               16));
  r.add(schema("RoiAlign", 3, 3,
               {{"mode", K::kString},
                {"output_height", K::kInt},
                {"output_width", K::kInt},
                {"sampling_ratio", K::kInt},
                {"spatial_scale", K::kFloat},
                {"coordinate_transformation_mode", K::kString}},
               inferRoiAlign,
               "avg or max of bilinear samples over each region's output bins", 16));
  OpSchema unpool = schema("MaxUnpool", 2, 3,
                           {{"kernel_shape", K::kInts, true}, {"pads", K::kInts},
                            {"strides", K::kInts}},
                           inferMaxUnpool,
                           "zeros with X's values scattered to the flat indices I (MaxPool's)", 11);
  unpool.shapeOperands = {2};
  r.add(std::move(unpool));
}

}  // namespace magneto
