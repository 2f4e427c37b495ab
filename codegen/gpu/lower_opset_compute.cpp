// GPU lowering of the opset 18-21 operators that have block programs of their own
// (runtime/gpu/kernels/mg_opset.cuh; lowering_table.cpp points here):
//   Resize            a map functor over the output that sums tap tables. The tables are computed
//                     here, at compile time, by the CPU runtime's planner mgrt::resizePlan (the
//                     same code the CPU kernel runs), and emitted as constant device arrays: both
//                     targets use identical taps and weights (mg_resize.cuh).
//   ScatterND, ScatterElements (and the old Scatter)
//                     phase 0 copies data into the output (a map copy), phase 1 applies the
//                     updates with one owner thread per output element, in index order: the CPU's
//                     order, duplicates included, deterministic (mg_scatter.cuh). Phases are
//                     separate launches (gpu_emitter.cpp), so phase 1 sees the whole copy.
//   GroupNormalization  one block per (batch, group), mean and variance in double (mg_norm.cuh).
//   Col2Im, LpPool, DeformConv
//                     one output per thread, the CPU's loops and double accumulation
//                     (mg_window.cuh); geometry from runtime/common/k_nn_shapes.h, the code the
//                     compiler's shape inference and the CPU kernels use.
// Shapes, attributes and the operands that fix the geometry (Resize's scales/sizes/roi, Col2Im's
// image and block shapes) must be constants; anything else is refused with kUnsupported.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "k_nn_shapes.h"
#include "k_tensor_shared.h"
#include "lower_opset.h"

namespace magneto {
namespace gpu {
namespace opset {
namespace {

constexpr int kThreads = 256;

// An optional operand that is present and not empty.
bool given(const Node& n, size_t i) {
  return n.numInputs() > i && n.input(i) && n.input(i)->type().numel() > 0;
}

// The element type a float-only program computes on: "float" or "double", else nullptr.
const char* floatType(DType t) {
  return t == DType::kF32 ? "float" : t == DType::kF64 ? "double" : nullptr;
}

// A copy of every element of `from` into `to` (same size), as a map item.
GpuItem copyAll(const Value* from, const Value* to, LowerContext& cx, const TileConfig& tile) {
  const char* t = dtypeSize(from->dtype()) == 1   ? "uint8_t"
                  : dtypeSize(from->dtype()) == 2 ? "uint16_t"
                  : dtypeSize(from->dtype()) == 4 ? "uint32_t"
                                                  : "uint64_t";
  std::string name = functorName(cx);
  std::string f = functorHead(name) +
                  fmt::format("    static_cast<{0}*>(out)[o] = static_cast<const {0}*>(in[0])[idx[0]];\n", t) +
                  kFunctorTail;
  return mapItem(name, f, Dims{from->type().numel()}, {{cx.ptr(from), 0, {1}}}, cx.ptr(to), 0, {1},
                 itemsPerThread(tile));
}

}  // namespace

// ---- Resize ------------------------------------------------------------------------------------
Expected<std::vector<GpuItem>> lowerResize(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  for (size_t i = 1; i < n.numInputs(); ++i)
    if (given(n, i) && !n.input(i)->isConstant())
      return unsupported("{}: Resize with a computed {} on the cuda/hip targets", n.describe(),
                         i == 1 ? "roi" : i == 2 ? "scales" : "sizes");
  mgrt::ResizeMode m;
  m.mode = n.attrs().getString("mode", "nearest");
  m.coord = n.attrs().getString("coordinate_transformation_mode", "half_pixel");
  m.nearest = n.attrs().getString("nearest_mode", "round_prefer_floor");
  // Float attributes as the CPU kernel reads them (a float widened to double).
  m.cubicA = static_cast<float>(n.attrs().getFloat("cubic_coeff_a", -0.75));
  m.excludeOutside = n.attrs().getInt("exclude_outside", 0) != 0;
  m.antialias = n.attrs().getInt("antialias", 0) != 0;
  double extrapolation = static_cast<float>(n.attrs().getFloat("extrapolation_value", 0.0));
  bool hasSizes = given(n, 3), hasScales = given(n, 2);
  if (!hasSizes && !hasScales) return unsupported("{}: Resize needs scales or sizes", n.describe());
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (hasSizes) {
    sizes = n.input(3)->constant().toInts();
  } else {
    const Tensor& s = n.input(2)->constant();
    for (int64_t k = 0; k < s.numel(); ++k) scales.push_back(static_cast<float>(s.floatAt(k)));
  }
  std::string policy = n.attrs().getString("keep_aspect_ratio_policy", "stretch");
  std::vector<int64_t> in(x->dims().begin(), x->dims().end()), outDims(y->dims().begin(), y->dims().end());
  mgrt::ResizeGeometry geo;
  std::string err = mgrt::resizeGeometry(in, n.attrs().getInts("axes"), scales, sizes, policy, &geo);
  if (!err.empty()) return unsupported("{}: Resize: {}", n.describe(), err);
  if (geo.out != outDims) return unsupported("{}: Resize: result shape differs from the geometry", n.describe());
  std::vector<double> roi;
  if (given(n, 1))
    for (int64_t k = 0; k < n.input(1)->constant().numel(); ++k) roi.push_back(n.input(1)->constant().floatAt(k));
  std::vector<mgrt::ResizeAxisPlan> plans;
  err = mgrt::resizePlan(m, in, outDims, geo, hasSizes && policy == "stretch", roi, &plans);
  if (!err.empty()) return unsupported("{}: Resize: {}", n.describe(), err);

  bool nearest = m.mode == "nearest";
  const char* t = nearest ? storageType(x->dtype()) : nullptr;  // nearest copies any type
  if (!nearest && x->dtype() != DType::kBool && x->dtype() != DType::kF16 && x->dtype() != DType::kBF16)
    t = ctypeOf(x->dtype());
  if (!t) return unsupported("{}: Resize ({}) of {} on the cuda/hip targets", n.describe(), m.mode, dtypeName(x->dtype()));
  if (y->type().numel() == 0) return std::vector<GpuItem>{};

  // Tables per axis: first[c] .. first[c + 1] index the taps of output coordinate c.
  std::string name = functorName(cx), tables, axes;
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  int r = x->rank();
  for (int d = 0; d < r; ++d) {
    std::vector<int64_t> first{0}, offset;
    std::vector<double> weight;
    for (int64_t c = 0; c < outDims[d]; ++c) {
      if (!plans[d].outside[c])
        for (const mgrt::ResizeTap& tap : plans[d].taps[c]) {
          offset.push_back(tap.index * xs[d]);
          weight.push_back(tap.weight);
        }
      first.push_back(static_cast<int64_t>(offset.size()));
    }
    if (offset.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return unsupported("{}: Resize with more than 2^31 taps on axis {}", n.describe(), d);
    if (offset.empty()) offset.push_back(0), weight.push_back(0);  // no empty arrays
    tables += fmt::format("__device__ const int32_t {0}_first{1}[] = {2};\n__device__ const int64_t {0}_offset{1}[] = {3};\n",
                          name, d, intList(first), intList(offset));
    if (!nearest) tables += fmt::format("__device__ const double {}_weight{}[] = {};\n", name, d, doubleList(weight));
    axes += fmt::format("{}{{{}_first{}, {}_offset{}, {}, {}}}", d ? ", " : "", name, d, name, d,
                        nearest ? "nullptr" : fmt::format("{}_weight{}", name, d), outDims[d]);
  }
  std::string f = tables + functorHead(name) +
                  fmt::format("    const mgk::ResizeAxisTable ax[{}] = {{{}}};\n", r, axes) +
                  fmt::format("    mgk::resizeElement<{0}, {1}, {2}>(static_cast<const {0}*>(in[0]), static_cast<{0}*>(out), o, ax, {3:.17g});\n",
                              t, r, nearest ? "true" : "false", extrapolation) +
                  kFunctorTail;
  return std::vector<GpuItem>{mapItem(name, f, y->dims(), {{cx.ptr(x), 0, std::vector<int64_t>(r, 0)}}, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

// ---- ScatterND, ScatterElements, Scatter ------------------------------------------------------
Expected<std::vector<GpuItem>> lowerScatter(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *data = n.input(0), *ind = n.input(1), *upd = n.input(2), *y = n.output(0);
  std::string red = n.attrs().getString("reduction", "none");
  int code = red == "none" ? 0 : red == "add" ? 1 : red == "mul" ? 2 : red == "max" ? 3 : red == "min" ? 4 : -1;
  if (code < 0) return unsupported("{}: reduction '{}'", n.describe(), red);
  const char* t = ctypeOf(data->dtype());
  if (!t || (data->dtype() == DType::kBool && code != 0))
    return unsupported("{}: {} of {} (reduction {}) on the cuda/hip targets", n.describe(), n.kind(),
                       dtypeName(data->dtype()), red);
  if (ind->dtype() != DType::kI64 && ind->dtype() != DType::kI32)
    return unsupported("{}: indices of type {}", n.describe(), dtypeName(ind->dtype()));
  int rank = data->rank();
  if (rank < 1) return unsupported("{}: {} of a scalar", n.describe(), n.kind());
  std::vector<GpuItem> items;
  if (y->type().numel() == 0) return items;
  items.push_back(copyAll(data, y, cx, tile));  // phase 0
  std::vector<int64_t> dims(data->dims().begin(), data->dims().end()), strides = contiguousStrides(data->dims());
  std::string common = fmt::format("p.reduction = {}; p.indexBytes = {}; mgSet(p.dims, {}); mgSet(p.strides, {});\n"
                                   "p.indices = {}; p.updates = {}; p.out = {};\n",
                                   code, dtypeSize(ind->dtype()), intList(dims), intList(strides), cx.ptr(ind),
                                   cx.ptr(upd), cx.ptr(y));
  GpuItem it;
  if (n.kind() == "ScatterND") {
    if (ind->rank() < 1) return unsupported("{}: ScatterND indices of rank 0", n.describe());
    int64_t last = ind->dims().back(), tuples = 1, slice = 1;
    if (last > rank) return unsupported("{}: index tuples longer than the data rank", n.describe());
    for (int d = 0; d + 1 < ind->rank(); ++d) tuples *= ind->dims()[d];
    for (int d = static_cast<int>(last); d < rank; ++d) slice *= dims[d];
    if (slice == 0 || tuples == 0) return items;
    it = programItem("scatterND", fmt::format("{}, {}", t, kThreads), "mgk::ScatterNDParams", kThreads, false,
                     "thread per slice element");
    it.init = fmt::format("p.tuples = {}; p.slice = {}; p.last = {}; p.rank = {};\n", tuples, slice, last, rank) + common;
  } else {
    int64_t axis = n.attrs().getInt("axis", 0);
    if (axis < 0) axis += rank;
    if (ind->rank() != rank) return unsupported("{}: indices of another rank than the data", n.describe());
    std::vector<int64_t> idims(ind->dims().begin(), ind->dims().end());
    int64_t lines = 1;
    for (int d = 0; d < rank; ++d)
      if (d != axis) lines *= idims[d];
    if (lines == 0 || idims[axis] == 0) return items;
    it = programItem("scatterElements", fmt::format("{}, {}", t, kThreads), "mgk::ScatterElementsParams", kThreads,
                     false, "thread per index line");
    it.init = fmt::format("p.lines = {}; p.rank = {}; p.axis = {}; mgSet(p.idxDims, {});\n", lines, rank, axis,
                          intList(idims)) + common;
  }
  it.phase = 1;  // after the copy
  items.push_back(it);
  return items;
}

// ---- GroupNormalization -----------------------------------------------------------------------
Expected<std::vector<GpuItem>> lowerGroupNorm(const Node& n, const TileConfig& tile, LowerContext& cx) {
  (void)tile;
  const Value *x = n.input(0), *scale = n.input(1), *bias = n.input(2), *y = n.output(0);
  const char* t = floatType(x->dtype());
  if (!t) return unsupported("{}: GroupNormalization on {}", n.describe(), dtypeName(x->dtype()));
  if (x->rank() < 3 || !scale || !bias) return unsupported("{}: GroupNormalization needs rank >= 3, scale and bias", n.describe());
  int64_t N = x->dims()[0], C = x->dims()[1], S = 1, G = n.attrs().getInt("num_groups", 0);
  for (int d = 2; d < x->rank(); ++d) S *= x->dims()[d];
  if (G <= 0 || C % G != 0) return unsupported("{}: num_groups {} does not divide {} channels", n.describe(), G, C);
  bool perChannel = scale->type().numel() == C;
  if ((!perChannel && scale->type().numel() != G) || bias->type().numel() != scale->type().numel())
    return unsupported("{}: scale and bias must be [C] or [num_groups]", n.describe());
  if (y->type().numel() == 0) return std::vector<GpuItem>{};
  double eps = static_cast<float>(n.attrs().getFloat("epsilon", 1e-5));
  GpuItem it = programItem("groupNorm", fmt::format("{}, {}", t, kThreads), "mgk::GroupNormParams", kThreads, true,
                           "block per (batch, group)");
  it.init = fmt::format("p.rows = {}; p.groups = {}; p.per = {}; p.spatial = {}; p.perChannel = {}; p.epsilon = {:.17g};\n"
                        "p.x = {}; p.scale = {}; p.bias = {}; p.y = {};\n",
                        N * G, G, C / G, S, perChannel ? 1 : 0, eps, cx.ptr(x), cx.ptr(scale), cx.ptr(bias), cx.ptr(y));
  return std::vector<GpuItem>{it};
}

// ---- Col2Im, LpPool, DeformConv ---------------------------------------------------------------
namespace {

mgrt::SpatialAttrs spatialAttrs(const Node& n, bool* ok) {
  mgrt::SpatialAttrs s;
  s.kernelShape = n.attrs().getInts("kernel_shape");
  s.strides = n.attrs().getInts("strides");
  s.dilations = n.attrs().getInts("dilations");
  s.pads = n.attrs().getInts("pads");
  s.ceilMode = n.attrs().getInt("ceil_mode", 0) != 0;
  *ok = mgrt::parseAutoPad(n.attrs().getString("auto_pad", "NOTSET"), &s.autoPad);
  return s;
}

std::string geometryInit(const mgrt::SpatialGeometry& g, const std::vector<int64_t>& in) {
  return fmt::format("p.g.nsp = {}; mgSet(p.g.in, {}); mgSet(p.g.out, {}); mgSet(p.g.kernel, {});\n"
                     "mgSet(p.g.stride, {}); mgSet(p.g.padBegin, {}); mgSet(p.g.dilation, {});\n",
                     g.nsp, intList(in), intList(g.out), intList(g.kernel), intList(g.stride),
                     intList(g.padBegin), intList(g.dilation));
}

}  // namespace

Expected<std::vector<GpuItem>> lowerWindow(const Node& n, const TileConfig& tile, LowerContext& cx) {
  (void)tile;
  const std::string& k = n.kind();
  const Value *x = n.input(0), *y = n.output(0);
  const char* t = floatType(x->dtype());
  if (!t) return unsupported("{}: {} on {}", n.describe(), k, dtypeName(x->dtype()));
  bool ok = true;
  mgrt::SpatialAttrs sa = spatialAttrs(n, &ok);
  if (!ok) return unsupported("{}: auto_pad '{}'", n.describe(), n.attrs().getString("auto_pad", ""));
  mgrt::SpatialGeometry g;
  std::vector<int64_t> in;
  std::string err;
  if (k == "Col2Im") {
    for (int i = 1; i <= 2; ++i)
      if (!n.input(i)->isConstant()) return unsupported("{}: Col2Im with a computed {}", n.describe(), i == 1 ? "image_shape" : "block_shape");
    in = n.input(1)->constant().toInts();
    err = mgrt::resolveConvGeometry("Col2Im", in, n.input(2)->constant().toInts(), sa, &g);
  } else if (k == "LpPool") {
    in.assign(x->dims().begin() + 2, x->dims().end());
    err = mgrt::resolveConvGeometry("LpPool", in, sa.kernelShape, sa, &g);
  } else {  // DeformConv: the kernel comes from the weight
    if (x->rank() != 4) return unsupported("{}: DeformConv on rank {}", n.describe(), x->rank());
    in.assign(x->dims().begin() + 2, x->dims().end());
    const Dims& w = n.input(1)->dims();
    err = mgrt::resolveConvGeometry("DeformConv", in, {w[2], w[3]}, sa, &g);
  }
  if (!err.empty()) return unsupported("{}: {}", n.describe(), err);
  if (g.nsp > 8) return unsupported("{}: {} spatial dims", n.describe(), g.nsp);
  if (y->type().numel() == 0) return std::vector<GpuItem>{};
  std::string args = fmt::format("{}, {}", t, kThreads);
  GpuItem it;
  if (k == "Col2Im") {
    it = programItem("col2im", args, "mgk::Col2ImParams", kThreads, false, "thread per pixel");
    it.init = fmt::format("p.NC = {};\n", y->dims()[0] * y->dims()[1]) + geometryInit(g, in) +
              fmt::format("p.x = {}; p.y = {};\n", cx.ptr(x), cx.ptr(y));
  } else if (k == "LpPool") {
    it = programItem("lpPool", args, "mgk::LpPoolParams", kThreads, false, "thread per output");
    it.init = fmt::format("p.NC = {}; p.p = {};\n", x->dims()[0] * x->dims()[1], n.attrs().getInt("p", 2)) +
              geometryInit(g, in) + fmt::format("p.x = {}; p.y = {};\n", cx.ptr(x), cx.ptr(y));
  } else {
    const Value *w = n.input(1), *off = n.input(2);
    const Value* b = given(n, 3) ? n.input(3) : nullptr;
    const Value* mask = given(n, 4) ? n.input(4) : nullptr;
    int64_t group = n.attrs().getInt("group", 1), og = n.attrs().getInt("offset_group", 1);
    it = programItem("deformConv", args, "mgk::DeformConvParams", kThreads, false, "thread per output");
    it.init = fmt::format(
        "p.N = {}; p.C = {}; p.H = {}; p.W = {}; p.M = {}; p.kH = {}; p.kW = {}; p.group = {}; p.offsetGroups = {};\n"
        "p.oH = {}; p.oW = {}; p.strideH = {}; p.strideW = {}; p.padTop = {}; p.padLeft = {}; p.dilationH = {}; p.dilationW = {};\n"
        "p.x = {}; p.w = {}; p.offset = {}; p.bias = {}; p.mask = {}; p.y = {};\n",
        x->dims()[0], x->dims()[1], x->dims()[2], x->dims()[3], w->dims()[0], w->dims()[2], w->dims()[3], group, og,
        g.out[0], g.out[1], g.stride[0], g.stride[1], g.padBegin[0], g.padBegin[1], g.dilation[0], g.dilation[1],
        cx.ptr(x), cx.ptr(w), cx.ptr(off), b ? cx.ptr(b) : "nullptr", mask ? cx.ptr(mask) : "nullptr", cx.ptr(y));
  }
  return std::vector<GpuItem>{it};
}

}  // namespace opset
}  // namespace gpu
}  // namespace magneto
