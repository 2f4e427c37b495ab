// The producers of data-dependent extents on the cuda/hip targets (docs/DYNAMIC_SHAPES.md,
// "Data-dependent extents"): NonZero and Compress lower to the single-block programs of
// runtime/gpu/kernels/mg_select.cuh, Unique and NonMaxSuppression to its two-phase programs, TopK
// to mg_topk.cuh's topkBlock (a constant K: no data symbol; a run-time K: the count is K). Each
// writes its result compactly at the count and the count to the package's count buffer
// (MG_COUNT(k), k the data symbol's index); the package reads it back after the node's last
// launch and binds the symbol (the emitter adds MG_DATA_EXTENT there). The items are the same at
// every binding of the symbols (the producer's parameters are its operands' extents, never its
// results'), and a count of 0 still launches: the count must be written.
#include <algorithm>

#include "gpu_lowering.h"
#include "lower_opset.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/ir/symbolic.h"

namespace magneto {
namespace gpu {
namespace {

constexpr int kSelectThreads = 256;
constexpr int kSortThreads = 128;  // TopK, Unique, NonMaxSuppression

int64_t nextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// The element type a sorting program reads x as (bool as uint8_t), or null.
const char* sortType(DType t) {
  switch (t) {
    case DType::kBool: return "uint8_t";
    case DType::kF32: case DType::kF64: case DType::kF16: case DType::kBF16: case DType::kI8:
    case DType::kI16: case DType::kI32: case DType::kI64: case DType::kU8: case DType::kU16:
    case DType::kU32: case DType::kU64:
      return opset::storageType(t);
    default: return nullptr;
  }
}

// An optional operand's typed device address, or a null pointer of that type.
std::string optionalPtr(LowerContext& cx, const Node& n, size_t i, const char* ctype) {
  if (i < n.numInputs() && n.input(i)) return cx.typedPtr(ctype, n.input(i), true);
  return fmt::format("static_cast<const {}*>(nullptr)", ctype);
}

// The index of the data symbol n produces (its only one: TopK's values and indices, Unique's Y,
// indices and counts share it), or an error naming the node.
Expected<int> producedSymbolIndex(const Node& n) {
  const Graph& g = *n.graph();
  std::vector<DataSymbolDim> ds = producedDataSymbols(g, n);
  bool one = !ds.empty();
  for (const DataSymbolDim& d : ds) one = one && d.symbol == ds[0].symbol;
  if (!one)
    return unsupported("{}: {} on the cuda/hip targets needs one data-dependent extent (a data symbol) "
                       "for its results; found {} dim(s) of {}",
                       n.describe(), n.kind(), ds.size(), ds.empty() ? std::string("none") : "several symbols");
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

Expected<std::vector<GpuItem>> lowerTopK(const Node& n, const TileConfig&, LowerContext& cx) {
  const Value *x = n.input(0), *kv = n.input(1);
  const char* t = sortType(x->dtype());
  if (!t || x->dtype() == DType::kBool)
    return unsupported("{}: TopK of {} on the cuda/hip targets", n.describe(), dtypeName(x->dtype()));
  if (x->rank() < 1) return unsupported("{}: TopK of a scalar", n.describe());
  int64_t axis = n.attrs().getInt("axis", -1);
  if (axis < 0) axis += x->rank();
  if (axis < 0 || axis >= x->rank()) return unsupported("{}: axis out of range", n.describe());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x->dims()[d];
  for (int d = static_cast<int>(axis) + 1; d < x->rank(); ++d) inner *= x->dims()[d];
  const int64_t len = x->dims()[axis];
  if (cx.choiceDims(x)[axis] >= (int64_t(1) << 31))
    return unsupported("{}: TopK over an axis of 2^31 elements or more", n.describe());
  const bool constantK = kv->isConstant();
  std::string kPtr = "static_cast<const int64_t*>(nullptr)", count = "static_cast<int64_t*>(nullptr)";
  int64_t k = 0, c = 0;
  if (constantK) {
    std::vector<int64_t> ks = kv->constant().toInts();
    if (ks.size() != 1 || ks[0] < 0 || ks[0] > len)
      return unsupported("{}: K must be one value in [0, {}]", n.describe(), len);
    k = ks[0];
    c = std::max<int64_t>(64, nextPow2(k));  // K > 1024: the counting path
    if (c > 1024) c = 1024;
  } else {
    if (kv->dtype() != DType::kI64)
      return unsupported("{}: a run-time K of type {} on the cuda/hip targets (int64 is)", n.describe(),
                         dtypeName(kv->dtype()));
    kPtr = cx.typedPtr("int64_t", kv, true);
    // Room for every K the row allows, up to 1024 (larger: the counting path).
    c = std::min<int64_t>(1024, std::max<int64_t>(64, nextPow2(cx.choiceDims(x)[axis])));
    if (!producedDataSymbols(*n.graph(), n).empty()) {
      MG_ASSIGN_OR_RETURN(int sym, producedSymbolIndex(n));
      count = fmt::format("MG_COUNT({})", sym);
    }
  }
  GpuItem it = programItem("topk", fmt::format("{}, {}, {}", t, c, kSortThreads), "mgk::TopKParams", kSortThreads,
                           true, fmt::format("C{} t{}", c, kSortThreads));
  it.init = fmt::format("p.rows = {}; p.inner = {}; p.n = {}; p.k = {}; p.kPtr = {}; p.largest = {};\n"
                        "p.x = {}; p.values = {}; p.indices = {}; p.count = {};\n",
                        outer * inner, inner, len, k, kPtr, n.attrs().getInt("largest", 1) != 0 ? 1 : 0,
                        cx.ptr(x), cx.ptr(n.output(0)), cx.typedPtr("int64_t", n.output(1), false), count);
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerUnique(const Node& n, const TileConfig&, LowerContext& cx) {
  const Value* x = n.input(0);
  const char* t = sortType(x->dtype());
  if (!t) return unsupported("{}: Unique of {} on the cuda/hip targets", n.describe(), dtypeName(x->dtype()));
  MG_ASSIGN_OR_RETURN(int sym, producedSymbolIndex(n));
  int64_t outer = 1, len = x->type().numel(), inner = 1;
  if (n.attrs().has("axis")) {
    int64_t axis = n.attrs().getInt("axis", 0);
    if (axis < 0) axis += x->rank();
    if (axis < 0 || axis >= x->rank()) return unsupported("{}: axis out of range", n.describe());
    for (int d = 0; d < axis; ++d) outer *= x->dims()[d];
    for (int d = static_cast<int>(axis) + 1; d < x->rank(); ++d) inner *= x->dims()[d];
    len = x->dims()[axis];
  }
  auto out = [&](size_t i) {
    const Value* v = i < n.numOutputs() ? n.output(i) : nullptr;
    return v ? cx.typedPtr("int64_t", v, false) : std::string("static_cast<int64_t*>(nullptr)");
  };
  const std::string first = cx.scratch(len * 8);
  std::string init = fmt::format(
      "p.outer = {}; p.n = {}; p.inner = {}; p.sorted = {};\n"
      "p.x = {}; p.y = {}; p.indices = {}; p.inverse = {}; p.counts = {};\n"
      "p.first = reinterpret_cast<int64_t*>({}); p.count = MG_COUNT({});\n",
      outer, len, inner, n.attrs().getInt("sorted", 1) != 0 ? 1 : 0, cx.ptr(x), cx.ptr(n.output(0)), out(1), out(2),
      out(3), first, sym);
  const std::string args = fmt::format("{}, {}", t, kSortThreads);
  GpuItem a = programItem("uniqueFirst", args, "mgk::UniqueParams", kSortThreads, false,
                          "each position's first equal position");
  GpuItem b = programItem("uniqueWrite", args, "mgk::UniqueParams", kSortThreads, true,
                          "the count, the groups, the results");
  a.init = b.init = init;
  b.phase = 1;
  return std::vector<GpuItem>{a, b};
}

Expected<std::vector<GpuItem>> lowerNonMaxSuppression(const Node& n, const TileConfig&, LowerContext& cx) {
  const Value *boxes = n.input(0), *scores = n.input(1);
  if (boxes->dtype() != DType::kF32 || scores->dtype() != DType::kF32)
    return unsupported("{}: NonMaxSuppression of {} boxes on the cuda/hip targets", n.describe(),
                       dtypeName(boxes->dtype()));
  if (n.numInputs() > 2 && n.input(2) && n.input(2)->dtype() != DType::kI64)
    return unsupported("{}: max_output_boxes_per_class must be int64", n.describe());
  MG_ASSIGN_OR_RETURN(int sym, producedSymbolIndex(n));
  const int64_t batches = boxes->dims()[0], nb = boxes->dims()[1], classes = scores->dims()[1];
  if (cx.choiceDims(boxes)[1] >= (int64_t(1) << 30))
    return unsupported("{}: NonMaxSuppression of 2^30 boxes or more", n.describe());
  // The sort's size from the reference dims: the same program text at every binding.
  const int64_t sortSize = nextPow2(std::max<int64_t>(1, cx.choiceDims(boxes)[1]));
  const int64_t groups = batches * classes;
  const std::string kept = cx.scratch(groups * nb * 4), keptCount = cx.scratch(groups * 8);
  std::string sortKey = "static_cast<uint64_t*>(nullptr)", sortIdx = "static_cast<int32_t*>(nullptr)";
  if (sortSize > 2048) {  // mgk::kNmsSmemBoxes: beyond it each block sorts in its scratch
    sortKey = fmt::format("reinterpret_cast<uint64_t*>({})", cx.scratch(groups * sortSize * 8));
    sortIdx = fmt::format("reinterpret_cast<int32_t*>({})", cx.scratch(groups * sortSize * 4));
  }
  std::string init = fmt::format(
      "p.batches = {}; p.classes = {}; p.boxes = {}; p.sortSize = {}; p.center = {};\n"
      "p.box = {}; p.score = {}; p.maxOut = {}; p.iou = {}; p.scoreThreshold = {};\n"
      "p.sortKey = {}; p.sortIdx = {}; p.kept = reinterpret_cast<int32_t*>({});\n"
      "p.keptCount = reinterpret_cast<int64_t*>({}); p.y = {}; p.count = MG_COUNT({});\n",
      batches, classes, nb, sortSize, n.attrs().getInt("center_point_box", 0) == 1 ? 1 : 0,
      cx.typedPtr("float", boxes, true), cx.typedPtr("float", scores, true), optionalPtr(cx, n, 2, "int64_t"),
      optionalPtr(cx, n, 3, "float"), optionalPtr(cx, n, 4, "float"), sortKey, sortIdx, kept, keptCount,
      cx.typedPtr("int64_t", n.output(0), false), sym);
  const std::string args = fmt::format("{}", kSortThreads);
  GpuItem a = programItem("nmsSelect", args, "mgk::NmsParams", kSortThreads, true,
                          "per batch and class: sort by score, greedy suppression");
  GpuItem b = programItem("nmsWrite", args, "mgk::NmsParams", kSortThreads, false,
                          "the kept boxes at their offsets, the count");
  a.init = b.init = init;
  b.phase = 1;
  return std::vector<GpuItem>{a, b};
}

}  // namespace gpu

std::vector<std::string> gpuDataExtentOps() { return {"NonZero", "Compress", "TopK", "Unique", "NonMaxSuppression"}; }

bool gpuProducesDataExtent(const std::string& op) {
  for (const std::string& o : gpuDataExtentOps())
    if (o == op) return true;
  return false;
}

}  // namespace magneto
