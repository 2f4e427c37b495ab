// GPU lowering of the convolutions and pools that the 2-D programs do not cover
// (runtime/gpu/kernels/mg_conv_nd.cuh): Conv with 3 or more spatial dims or on float64,
// ConvTranspose (any number of spatial dims), and MaxPool / AveragePool with 3 or more spatial
// dims, on float64, or AveragePool with count_include_pad and ceil_mode (where the 2-D program's
// divisor differs from the CPU's). lower_compute.cpp hands these nodes over.
// Geometry from runtime/common/k_nn_shapes.h, the code the compiler's shape inference and the CPU
// kernels use, so the output extents, auto_pad and output_shape resolve identically.
#include <fmt/format.h>

#include "gpu_lowering.h"
#include "k_nn_shapes.h"
#include "mg_acts.h"

namespace magneto {
namespace gpu {
namespace {

constexpr int kThreads = 256;

const char* floatTypeOf(DType t) {
  return t == DType::kF32 ? "float" : t == DType::kF64 ? "double" : nullptr;
}

bool spatialAttrsOf(const Node& n, mgrt::SpatialAttrs* s) {
  s->kernelShape = n.attrs().getInts("kernel_shape");
  s->strides = n.attrs().getInts("strides");
  s->dilations = n.attrs().getInts("dilations");
  s->pads = n.attrs().getInts("pads");
  s->outputPadding = n.attrs().getInts("output_padding");
  s->outputShape = n.attrs().getInts("output_shape");
  s->ceilMode = n.attrs().getInt("ceil_mode", 0) != 0;
  return mgrt::parseAutoPad(n.attrs().getString("auto_pad", "NOTSET"), &s->autoPad);
}

std::string geometryInit(const mgrt::SpatialGeometry& g) {
  return fmt::format("p.g.nsp = {}; mgSet(p.g.in, {}); mgSet(p.g.out, {}); mgSet(p.g.kernel, {});\n"
                     "mgSet(p.g.stride, {}); mgSet(p.g.padBegin, {}); mgSet(p.g.dilation, {});\n",
                     g.nsp, intList(g.in), intList(g.out), intList(g.kernel), intList(g.stride),
                     intList(g.padBegin), intList(g.dilation));
}

// The output's spatial dims must be the geometry's (shape inference ran the same code).
bool sameOut(const Value* y, const mgrt::SpatialGeometry& g) {
  if (y->rank() != g.nsp + 2) return false;
  for (int d = 0; d < g.nsp; ++d)
    if (y->dims()[d + 2] != g.out[d]) return false;
  return true;
}

}  // namespace

Expected<std::vector<GpuItem>> lowerConvNd(const Node& n, const TileConfig& tile, LowerContext& cx) {
  (void)tile;
  const std::string& k = n.kind();
  bool transposed = k == "ConvTranspose";
  const Value *x = n.input(0), *w = n.input(1), *y = n.output(0);
  const Value* b = n.numInputs() > 2 && n.input(2) && n.input(2)->type().numel() > 0 ? n.input(2) : nullptr;
  const Value* res = !transposed && n.numInputs() > 3 ? n.input(3) : nullptr;
  const char* t = floatTypeOf(x->dtype());
  if (!t || w->dtype() != x->dtype())
    return unsupported("{}: {} on {} (the cuda/hip targets do f32 and f64)", n.describe(), k, dtypeName(x->dtype()));
  if (x->rank() < 3 || w->rank() != x->rank())
    return unsupported("{}: {} of rank {} with a weight of rank {}", n.describe(), k, x->rank(), w->rank());
  if (x->rank() - 2 > 8) return unsupported("{}: {} spatial dims", n.describe(), x->rank() - 2);
  mgrt::SpatialAttrs sa;
  if (!spatialAttrsOf(n, &sa)) return unsupported("{}: auto_pad '{}'", n.describe(), n.attrs().getString("auto_pad", ""));
  std::vector<int64_t> in(x->dims().begin() + 2, x->dims().end()), kernel(w->dims().begin() + 2, w->dims().end());
  int64_t group = n.attrs().getInt("group", 1), N = x->dims()[0], C = x->dims()[1];
  int64_t M = transposed ? w->dims()[1] * group : w->dims()[0];
  if (group <= 0 || C % group != 0 || M % group != 0 || (transposed ? w->dims()[0] != C : w->dims()[1] * group != C))
    return unsupported("{}: {} weight {} does not fit {} input channels in {} groups", n.describe(), k,
                       w->type().str(), C, group);
  mgrt::SpatialGeometry g;
  std::string err = transposed ? mgrt::resolveConvTransposeGeometry(in, kernel, sa, &g)
                               : mgrt::resolveConvGeometry("Conv", in, kernel, sa, &g);
  if (!err.empty()) return unsupported("{}: {}", n.describe(), err);
  if (!sameOut(y, g) || y->dims()[1] != M)
    return unsupported("{}: {} result shape {} differs from the geometry", n.describe(), k, y->type().str());
  if (res && res->type() != y->type()) return unsupported("{}: residual of another shape than the result", n.describe());
  std::string act = n.attrs().getString("mg_act", "");
  const int code = mgrt::acts::codeOf(act.c_str());  // the device's mgk::Act (mg_acts.h)
  if (code < 0) return unsupported("{}: epilogue activation '{}' on the cuda/hip targets", n.describe(), act);
  if (y->type().numel() == 0) return std::vector<GpuItem>{};
  GpuItem it = programItem("convNd", fmt::format("{}, {}", t, kThreads), "mgk::ConvNdParams", kThreads, false,
                           "thread per output");
  it.init = fmt::format("p.N = {}; p.C = {}; p.M = {}; p.group = {}; p.transposed = {};\n", N, C, M, group,
                        transposed ? 1 : 0) +
            geometryInit(g) +
            fmt::format("p.x = {}; p.w = {}; p.bias = {}; p.residual = {}; p.y = {};\n"
                        "p.act = {}; p.actAlpha = {}; p.actBeta = {};\n",
                        cx.ptr(x), cx.ptr(w), b ? cx.ptr(b) : "nullptr", res ? cx.ptr(res) : "nullptr", cx.ptr(y),
                        code, floatLiteral(n.attrs().getFloat("mg_alpha", 0)),
                        floatLiteral(n.attrs().getFloat("mg_beta", 0)));
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerPoolNd(const Node& n, const TileConfig& tile, LowerContext& cx) {
  (void)tile;
  const Value *x = n.input(0), *y = n.output(0);
  const char* t = floatTypeOf(x->dtype());
  if (!t) return unsupported("{}: pooling on {}", n.describe(), dtypeName(x->dtype()));
  if (x->rank() < 3 || x->rank() - 2 > 8) return unsupported("{}: pooling of rank {}", n.describe(), x->rank());
  if (n.numOutputs() > 1 && n.output(1) && (n.output(1)->hasUses() || n.output(1)->isGraphOutput()))
    return unsupported("{}: MaxPool's Indices output on the cuda/hip targets", n.describe());
  mgrt::SpatialAttrs sa;
  if (!spatialAttrsOf(n, &sa)) return unsupported("{}: auto_pad '{}'", n.describe(), n.attrs().getString("auto_pad", ""));
  if (sa.kernelShape.empty()) return unsupported("{}: kernel_shape is required", n.describe());
  std::vector<int64_t> in(x->dims().begin() + 2, x->dims().end());
  mgrt::SpatialGeometry g;
  std::string err = mgrt::resolveConvGeometry(n.kind().c_str(), in, sa.kernelShape, sa, &g);
  if (!err.empty()) return unsupported("{}: {}", n.describe(), err);
  if (!sameOut(y, g)) return unsupported("{}: result shape {} differs from the geometry", n.describe(), y->type().str());
  if (y->type().numel() == 0) return std::vector<GpuItem>{};
  GpuItem it = programItem("poolNd", fmt::format("{}, {}", t, kThreads), "mgk::PoolNdParams", kThreads, false,
                           "thread per output");
  it.init = fmt::format("p.NC = {}; p.isMax = {}; p.countIncludePad = {};\n", x->dims()[0] * x->dims()[1],
                        n.kind() == "MaxPool" ? 1 : 0, n.attrs().getInt("count_include_pad", 0) != 0 ? 1 : 0) +
            geometryInit(g) +
            fmt::format("mgSet(p.padEnd, {}); p.x = {}; p.y = {};\n", intList(g.padEnd), cx.ptr(x), cx.ptr(y));
  return std::vector<GpuItem>{it};
}

}  // namespace gpu
}  // namespace magneto
