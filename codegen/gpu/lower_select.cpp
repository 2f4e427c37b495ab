// The producers of data-dependent extents on the cuda/hip targets (docs/DYNAMIC_SHAPES.md,
// "Data-dependent extents"): NonZero and Compress lower to the single-block programs of
// runtime/gpu/kernels/mg_select.cuh, which write the result compactly at the count and the count
// to the package's count buffer (MG_COUNT(k), k the data symbol's index); the package reads it
// back after the launch and binds the symbol (the emitter adds MG_DATA_EXTENT after the launch).
// The items are the same at every binding of the symbols (the producer's parameters are its
// operands' extents), and a count of 0 still launches: the count must be written.
#include <algorithm>

#include "gpu_lowering.h"
#include "lower_opset.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/ir/symbolic.h"

namespace magneto {
namespace gpu {
namespace {

constexpr int kSelectThreads = 256;

// The index of the data symbol n produces (its only one), or an error naming the node.
Expected<int> producedSymbolIndex(const Node& n) {
  const Graph& g = *n.graph();
  std::vector<DataSymbolDim> ds = producedDataSymbols(g, n);
  if (ds.size() != 1)
    return unsupported("{}: {} on the cuda/hip targets needs a data-dependent extent (a data symbol) "
                       "for its result; found {}",
                       n.describe(), n.kind(), ds.size());
  for (size_t k = 0; k < g.symbols().size(); ++k)
    if (g.symbols()[k].name == ds[0].symbol) return static_cast<int>(k);
  return internalStatus("{}: data symbol '{}' is not declared", n.describe(), ds[0].symbol);
}

}  // namespace

Expected<std::vector<GpuItem>> lowerNonZero(const Node& n, const TileConfig&, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(int sym, producedSymbolIndex(n));
  const char* t = x->dtype() == DType::kBool ? "uint8_t" : opset::storageType(x->dtype());
  if (!t) return unsupported("{}: NonZero of {} on the cuda/hip targets", n.describe(), dtypeName(x->dtype()));
  if (x->rank() < 1) return unsupported("{}: NonZero of a scalar on the cuda/hip targets", n.describe());
  std::vector<int64_t> dims(x->dims().begin(), x->dims().end());
  GpuItem it = programItem("nonzero", fmt::format("{}, {}", t, kSelectThreads), "mgk::NonZeroParams",
                           kSelectThreads, true, "one block: count, scan, compact");
  it.init = fmt::format("p.numel = {}; p.rank = {}; mgSet(p.dims, {});\np.x = {}; p.y = {}; p.count = MG_COUNT({});\n",
                        x->type().numel(), x->rank(), intList(dims), cx.ptr(x),
                        cx.typedPtr("int64_t", y, false), sym);
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerCompress(const Node& n, const TileConfig&, LowerContext& cx) {
  const Value *x = n.input(0), *cond = n.input(1), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(int sym, producedSymbolIndex(n));
  if (cond->dtype() != DType::kBool)
    return unsupported("{}: Compress condition of type {}", n.describe(), dtypeName(cond->dtype()));
  const int64_t size = dtypeSize(x->dtype());
  const char* w = size == 1 ? "uint8_t" : size == 2 ? "uint16_t" : size == 4 ? "uint32_t" : size == 8 ? "uint64_t" : nullptr;
  if (!w || !opset::storageType(x->dtype()))
    return unsupported("{}: Compress of {} on the cuda/hip targets", n.describe(), dtypeName(x->dtype()));
  int64_t outer = 1, len = x->type().numel(), inner = 1;
  if (n.attrs().has("axis")) {
    int64_t axis = n.attrs().getInt("axis", 0);
    if (axis < 0) axis += x->rank();
    if (axis < 0 || axis >= x->rank()) return unsupported("{}: axis out of range", n.describe());
    outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x->dims()[d];
    for (int d = static_cast<int>(axis) + 1; d < x->rank(); ++d) inner *= x->dims()[d];
    len = x->dims()[axis];
  }
  GpuItem it = programItem("compress", fmt::format("{}, {}", w, kSelectThreads), "mgk::CompressParams",
                           kSelectThreads, true, "one block: count, scan, compact");
  it.init = fmt::format("p.outer = {}; p.axisLen = {}; p.inner = {}; p.condLen = {};\n"
                        "p.condition = {}; p.x = {}; p.y = {}; p.count = MG_COUNT({});\n",
                        outer, len, inner, cond->type().numel(), cx.typedPtr("uint8_t", cond, true), cx.ptr(x),
                        cx.ptr(y), sym);
  return std::vector<GpuItem>{it};
}

}  // namespace gpu

std::vector<std::string> gpuDataExtentOps() { return {"NonZero", "Compress"}; }

bool gpuProducesDataExtent(const std::string& op) {
  for (const std::string& o : gpuDataExtentOps())
    if (o == op) return true;
  return false;
}

}  // namespace magneto
