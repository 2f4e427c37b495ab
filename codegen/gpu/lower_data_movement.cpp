// GPU lowering of the ops that only move bytes (see gpu_lowering.h; one entry each in
// lowering_table.cpp): the Reshape-like copies, Dropout, MgChannelSlice, Transpose, Expand, Tile,
// Slice, Pad, ArgMax/ArgMin, OneHot, Concat, Split and Gather. Each becomes mgk::mapBlock over
// the output's index space with a functor generated here. Most are a copy functor over strided
// views, so no op needs a program of its own: a transpose permutes the input's strides, a slice
// offsets and scales them, an expand sets the broadcast ones to 0, and a Concat is one item per
// input writing into its slice of the output (all in one launch).
#include <fmt/format.h>

#include <algorithm>

#include "gpu_lowering.h"
#include "magneto/ir/symbolic.h"

namespace magneto {
namespace gpu {
namespace {

// Copy functor for elements of `bytes` bytes (dtype-agnostic).
std::string copyFunctor(const std::string& name, size_t bytes) {
  const char* t = bytes == 1 ? "uint8_t" : bytes == 2 ? "uint16_t" : bytes == 4 ? "uint32_t" : "uint64_t";
  return functorHead(name) + fmt::format("    static_cast<{0}*>(out)[o] = static_cast<const {0}*>(in[0])[idx[0]];\n", t) +
         kFunctorTail;
}

// A copy of `dims` elements from a strided view of `in` into a strided view of `out`.
GpuItem copyItem(LowerContext& cx, const Value* in, int64_t inOffset, std::vector<int64_t> inStrides,
                 const Value* out, int64_t outOffset, std::vector<int64_t> outStrides, const Dims& dims,
                 int items) {
  std::string name = functorName(cx);
  return mapItem(name, copyFunctor(name, dtypeSize(in->dtype())), dims, {{cx.ptr(in), inOffset, std::move(inStrides)}},
                 cx.ptr(out), outOffset, std::move(outStrides), items);
}

int64_t normAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

}  // namespace

Expected<std::vector<GpuItem>> lowerCopy(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  Dims flat{y->type().numel()};
  return std::vector<GpuItem>{copyItem(cx, x, 0, {1}, y, 0, {1}, flat, itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerDropout(const Node& n, const TileConfig& tile, LowerContext& cx) {
  if (n.numOutputs() > 1 && n.output(1) && (n.output(1)->hasUses() || n.output(1)->isGraphOutput()))
    return unsupported("{}: Dropout's mask output is not supported by the cuda/hip targets", n.describe());
  return lowerCopy(n, tile, cx);
}

Expected<std::vector<GpuItem>> lowerChannelSlice(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  int64_t begin = n.attrs().getInt("begin", 0);
  return std::vector<GpuItem>{copyItem(cx, x, begin * (x->rank() > 1 ? xs[1] : 1), xs, y, 0,
                                       contiguousStrides(y->dims()), y->dims(), itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerTranspose(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  std::vector<int64_t> perm = n.attrs().getInts("perm");
  if (perm.empty())
    for (int d = x->rank() - 1; d >= 0; --d) perm.push_back(d);
  std::vector<int64_t> s;
  for (int64_t p : perm) s.push_back(xs[p]);
  return std::vector<GpuItem>{copyItem(cx, x, 0, s, y, 0, contiguousStrides(y->dims()), y->dims(), itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerExpand(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  return std::vector<GpuItem>{copyItem(cx, x, 0, broadcastStrides(cx, x, y), y, 0,
                                       contiguousStrides(y->dims()), y->dims(), itemsPerThread(tile))};
}

// Each input dim d becomes two copy dims: the repetitions (input stride 0) and the dim itself.
Expected<std::vector<GpuItem>> lowerTile(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  Dims dims;
  std::vector<int64_t> in, out;
  std::vector<int64_t> ys = contiguousStrides(y->dims());
  for (int d = 0; d < x->rank(); ++d) {
    int64_t reps = y->dims()[d] / std::max<int64_t>(1, x->dims()[d]);
    dims.push_back(reps), in.push_back(0), out.push_back(x->dims()[d] * ys[d]);
    dims.push_back(x->dims()[d]), in.push_back(xs[d]), out.push_back(ys[d]);
  }
  if (dims.size() > 8) return unsupported("{}: Tile of rank {} (the GPU map handles rank 4)", n.describe(), x->rank());
  return std::vector<GpuItem>{copyItem(cx, x, 0, in, y, 0, out, dims, itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerSlice(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  // Dynamic dims: starts/ends that are shape data (MgSymbolic: x[past:past + seq] of a position
  // table) are evaluated at the binding being lowered; the offset they give is a fitted literal.
  std::vector<Tensor> atBinding;
  for (size_t i = 1; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (!v || v->isConstant()) continue;
    if (!v->producer() || v->producer()->kind() != "MgSymbolic")
      return unsupported("{}: Slice with computed starts/ends/axes/steps (operand {}{}) is not supported by the cuda/hip targets",
                         n.describe(), i, v->producer() ? ", from " + v->producer()->describe() : "");
    if (atBinding.empty()) {
      const DimBinding* b = dynLoweringBinding();
      DimBinding ref;
      if (!b) ref = n.graph()->referenceBinding(), b = &ref;
      std::vector<TensorType> types;
      MG_RETURN_IF_ERROR(operandsAtBinding(n, *b, &types, &atBinding));
      // Outside the emitter's binding scope the values must be at the reference binding.
      for (size_t k = 0; k < types.size() && k < n.numInputs(); ++k)
        if (n.input(k) && types[k].dims != n.input(k)->dims())
          return unsupported("{}: Slice with shape-data starts/ends lowered away from its binding", n.describe());
    }
  }
  auto constInts = [&](size_t i) -> std::vector<int64_t> {
    const Value* v = n.input(i);
    if (v && v->isConstant()) return v->constant().toInts();
    return v && i < atBinding.size() ? atBinding[i].toInts() : std::vector<int64_t>{};
  };
  std::vector<int64_t> starts = constInts(1), ends = constInts(2), axes = constInts(3), steps = constInts(4);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> s = xs;
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normAxis(axes[i], x->rank());
    int64_t dim = x->dims()[a], step = steps.empty() ? 1 : steps[i];
    int64_t st = starts[i];
    if (st < 0) st += dim;
    const int64_t unclamped = std::max<int64_t>(st, 0);
    st = step > 0 ? std::clamp<int64_t>(st, 0, dim) : std::clamp<int64_t>(st, 0, dim - 1);
    // An empty result reads nothing, so its offset is free: with dynamic dims it is the start as
    // given, the same expression as where the result is not empty (x[1:] of a cache of 0 or 1).
    if (y->dims()[a] > 0) offset += st * xs[a];
    else if (cx.dynamic) offset += unclamped * xs[a];
    s[a] = xs[a] * step;
  }
  return std::vector<GpuItem>{copyItem(cx, x, offset, s, y, 0, contiguousStrides(y->dims()), y->dims(), itemsPerThread(tile))};
}

// The functor recomputes the output coordinates from its flat index (the output is contiguous),
// maps them into the input by the mode, and reads or writes the constant.
Expected<std::vector<GpuItem>> lowerPad(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  for (size_t i = 1; i < n.numInputs(); ++i)
    if (i != 2 && n.input(i) && !n.input(i)->isConstant())
      return unsupported("{}: Pad with computed pads or axes on the cuda/hip targets", n.describe());
  std::string mode = n.attrs().getString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    return unsupported("{}: Pad mode '{}'", n.describe(), mode);
  // 16-bit floats are copied as their bits (the pad value too: a constant of x's type; +0 is 0).
  const bool bits16 = x->dtype() == DType::kF16 || x->dtype() == DType::kBF16;
  const char* et = bits16 ? "uint16_t" : ctypeOf(x->dtype());
  if (!et) return unsupported("{}: Pad of {}", n.describe(), dtypeName(x->dtype()));
  int r = x->rank();
  std::vector<int64_t> pads = n.input(1)->constant().toInts(), axes;
  if (n.input(3)) axes = n.input(3)->constant().toInts();
  else for (int d = 0; d < r; ++d) axes.push_back(d);
  std::vector<int64_t> before(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) before[normAxis(axes[i], r)] = pads[i];
  const Value* cv = n.input(2);
  std::string name = functorName(cx);
  std::string body = "    int64_t rest = o, at = 0;\n    bool inside = true;\n";
  std::vector<int64_t> ys = contiguousStrides(y->dims());
  for (int d = 0; d < r; ++d) {
    int64_t dim = x->dims()[d];
    body += fmt::format("    {{ int64_t c = rest / {} - {}; rest %= {};\n", ys[d], before[d], ys[d]);
    if (mode == "constant") body += fmt::format("      if (c < 0 || c >= {}) inside = false;\n", dim);
    else if (mode == "edge") body += fmt::format("      c = c < 0 ? 0 : (c >= {0} ? {0} - 1 : c);\n", dim);
    else if (mode == "wrap") body += fmt::format("      c = ((c % {0}) + {0}) % {0};\n", dim);
    else  // reflect: mirror without repeating the edge, period 2*(dim-1)
      body += dim <= 1 ? std::string("      c = 0;\n")
                       : fmt::format("      {{ int64_t p = 2 * ({0} - 1); c = ((c % p) + p) % p; if (c >= {0}) c = p - c; }}\n", dim);
    body += fmt::format("      at += c * {}; }}\n", xs[d]);
  }
  bool hasValue = cv && cv->type().numel() > 0;
  std::string value = hasValue ? fmt::format("static_cast<const {}*>(in[1])[0]", et) : "0";
  body += fmt::format("    static_cast<{0}*>(out)[o] = inside ? static_cast<const {0}*>(in[0])[at] : static_cast<{0}>({1});\n",
                      et, value);
  std::string functor = functorHead(name) + body + kFunctorTail;
  std::vector<MapOperand> ins = {{cx.ptr(x), 0, std::vector<int64_t>(y->rank(), 0)}};
  if (hasValue) {
    if (cv->dtype() != x->dtype()) return unsupported("{}: Pad value of another type", n.describe());
    ins.push_back({cx.ptr(cv), 0, std::vector<int64_t>(y->rank(), 0)});
  }
  return std::vector<GpuItem>{mapItem(name, functor, y->dims(), ins, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

// ArgMax, ArgMin: one output element per map index; the functor walks the reduced axis (short rows).
Expected<std::vector<GpuItem>> lowerArgMaxMin(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const std::string& k = n.kind();
  const Value *x = n.input(0), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  if (x->dtype() != DType::kF32 && x->dtype() != DType::kF16)
    return unsupported("{}: {} of {}", n.describe(), k, dtypeName(x->dtype()));
  // float16 (half storage) is compared as float.
  const char* et = x->dtype() == DType::kF16 ? "mgk::Half" : "float";
  int64_t axis = normAxis(n.attrs().getInt("axis", 0), x->rank());
  bool last = n.attrs().getInt("select_last_index", 0) != 0;
  std::vector<int64_t> s;  // input strides over the output's dims
  bool keep = y->rank() == x->rank();
  for (int d = 0; d < x->rank(); ++d) {
    if (d == axis) {
      if (keep) s.push_back(0);
      continue;
    }
    s.push_back(xs[d]);
  }
  std::string name = functorName(cx);
  const char* cmp = k == "ArgMax" ? (last ? ">=" : ">") : (last ? "<=" : "<");
  std::string body = fmt::format(
      "    const {3}* p = static_cast<const {3}*>(in[0]) + idx[0];\n"
      "    float best = mgk::ldF(p[0]);\n    int64_t at = 0;\n"
      "    for (int64_t j = 1; j < {0}; ++j) {{\n"
      "      const float v = mgk::ldF(p[j * {1}]);\n"
      "      if (v {2} best || (v != v && best == best)) {{ best = v; at = j; }}\n"
      "    }}\n"
      "    static_cast<int64_t*>(out)[o] = at;\n",
      x->dims()[axis], xs[axis], cmp, et);
  return std::vector<GpuItem>{mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(),
                                      {{cx.ptr(x), 0, s}}, cx.ptr(y), 0, contiguousStrides(y->dims()),
                                      itemsPerThread(tile))};
}

// out[..., j, ...] = indices[...] == j (negative indices count from depth) ? on : off.
Expected<std::vector<GpuItem>> lowerOneHot(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *ind = n.input(0), *vals = n.input(2), *y = n.output(0);
  const char* it = ctypeOf(ind->dtype());
  const char* vt = ctypeOf(vals->dtype());
  if (!it || !vt) return unsupported("{}: OneHot of these types", n.describe());
  int64_t axis = normAxis(n.attrs().getInt("axis", -1), y->rank());
  int64_t depth = y->dims()[axis];
  std::vector<int64_t> ys = contiguousStrides(y->dims()), is = contiguousStrides(ind->dims()), s;
  for (int d = 0, k2 = 0; d < y->rank(); ++d) s.push_back(d == axis ? 0 : is[k2++]);
  std::string name = functorName(cx);
  std::string body = fmt::format(
      "    int64_t v = static_cast<int64_t>(static_cast<const {0}*>(in[0])[idx[0]]);\n"
      "    if (v < 0) v += {1};\n"
      "    const int64_t j = (o / {2}) % {1};\n"
      "    static_cast<{3}*>(out)[o] = static_cast<const {3}*>(in[1])[v == j ? 1 : 0];\n",
      it, depth, ys[axis], vt);
  return std::vector<GpuItem>{mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(),
                                      {{cx.ptr(ind), 0, s}, {cx.ptr(vals), 0, std::vector<int64_t>(y->rank(), 0)}},
                                      cx.ptr(y), 0, ys, itemsPerThread(tile))};
}

// One copy item per input into its slice of the output, except the inputs that the memory plan's
// concat elision placed there already (their producers wrote them in place). An empty input is
// dropped, unless its extent is dynamic (a KV cache empty at past = 0): the launch then keeps the
// same block programs at every binding, the empty one running no blocks.
Expected<std::vector<GpuItem>> lowerConcat(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value* y = n.output(0);
  int64_t axis = normAxis(n.attrs().getInt("axis", 0), y->rank());
  std::vector<int64_t> ys = contiguousStrides(y->dims());
  std::vector<GpuItem> out;
  int64_t at = 0;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    bool inPlace = cx.concats && cx.concats->isInPlace(&n, v);
    if ((v->type().numel() > 0 || (cx.dynamic && !v->symDims().empty())) && !inPlace)
      out.push_back(copyItem(cx, v, 0, contiguousStrides(v->dims()), y, at * ys[axis], ys, v->dims(),
                             itemsPerThread(tile)));
    at += v->dims()[axis];
  }
  return out;
}

// One copy item per non-empty result (or result of a dynamic extent, as for Concat), out of its
// slice of the input.
Expected<std::vector<GpuItem>> lowerSplit(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value* x = n.input(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  int64_t axis = normAxis(n.attrs().getInt("axis", 0), x->rank());
  std::vector<GpuItem> out;
  int64_t at = 0;
  for (size_t i = 0; i < n.numOutputs(); ++i) {
    const Value* v = n.output(i);
    if (v->type().numel() > 0 || (cx.dynamic && !v->symDims().empty()))
      out.push_back(copyItem(cx, x, at * xs[axis], xs, v, 0, contiguousStrides(v->dims()), v->dims(),
                             itemsPerThread(tile)));
    at += v->dims()[axis];
  }
  return out;
}

// The map runs over the output (data dims before the axis, the indices' dims, data dims after);
// the data operand's stride is 0 over the indices' dims, where the functor adds j * stride.
Expected<std::vector<GpuItem>> lowerGather(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *ind = n.input(1), *y = n.output(0);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  if (ind->dtype() != DType::kI64 && ind->dtype() != DType::kI32)
    return unsupported("{}: Gather indices of type {}", n.describe(), dtypeName(ind->dtype()));
  int64_t axis = normAxis(n.attrs().getInt("axis", 0), x->rank());
  std::vector<int64_t> dataS, indS, is = contiguousStrides(ind->dims());
  for (int64_t d = 0; d < axis; ++d) dataS.push_back(xs[d]), indS.push_back(0);
  for (int d = 0; d < ind->rank(); ++d) dataS.push_back(0), indS.push_back(is[d]);
  for (int64_t d = axis + 1; d < x->rank(); ++d) dataS.push_back(xs[d]), indS.push_back(0);
  std::string name = functorName(cx);
  // 16-bit floats are copied as their bits.
  const bool bits16 = x->dtype() == DType::kF16 || x->dtype() == DType::kBF16;
  const char* et = bits16 ? "uint16_t" : ctypeOf(x->dtype());
  if (!et) return unsupported("{}: data of type {}", n.describe(), dtypeName(x->dtype()));
  if (cx.dynamic) {
    // Dynamic dims: the axis's extent and stride change with the binding, so they are launch
    // parameters, not functor text: operands 2 and 3 read nothing, and their offsets (idx[2],
    // idx[3] with all strides 0) carry the extent and the stride.
    std::string f = functorHead(name) +
                    fmt::format("    int64_t j = static_cast<int64_t>(static_cast<const {}*>(in[1])[idx[1]]);\n"
                                "    if (j < 0) j += idx[2];\n"
                                "    if (j < 0 || j >= idx[2]) j = 0;  // out of range: the CPU target reports it\n"
                                "    static_cast<{}*>(out)[o] = static_cast<const {}*>(in[0])[idx[0] + j * idx[3]];\n",
                                ctypeOf(ind->dtype()), et, et) +
                    kFunctorTail;
    std::vector<int64_t> none(y->rank(), 0);
    return std::vector<GpuItem>{mapItem(name, f, y->dims(),
                                        {{cx.ptr(x), 0, dataS}, {cx.ptr(ind), 0, indS}, {"nullptr", x->dims()[axis], none},
                                         {"nullptr", xs[axis], none}},
                                        cx.ptr(y), 0, contiguousStrides(y->dims()), itemsPerThread(tile))};
  }
  std::string f = functorHead(name) +
                  fmt::format("    int64_t j = static_cast<int64_t>(static_cast<const {}*>(in[1])[idx[1]]);\n"
                              "    if (j < 0) j += {};\n"
                              "    if (j < 0 || j >= {}) j = 0;  // out of range: the CPU target reports it\n"
                              "    static_cast<{}*>(out)[o] = static_cast<const {}*>(in[0])[idx[0] + j * {}];\n",
                              ctypeOf(ind->dtype()), x->dims()[axis], x->dims()[axis], et, et, xs[axis]) +
                  kFunctorTail;
  return std::vector<GpuItem>{mapItem(name, f, y->dims(), {{cx.ptr(x), 0, dataS}, {cx.ptr(ind), 0, indS}},
                                      cx.ptr(y), 0, contiguousStrides(y->dims()), itemsPerThread(tile))};
}

// GatherND: output [B..., I..., S...] (batch dims, the index tuples' dims, the data's dims after
// the k indexed ones). Operand 0's offset covers the batch and S coordinates, operand 1's points
// at the index tuple; the functor adds index_t * stride for each of the k components. The
// indexed dims and their strides are functor text, so they must not change with the binding
// (the data's dims from batch_dims on static); the index tuples' count may (a run-time count).
Expected<std::vector<GpuItem>> lowerGatherND(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *ind = n.input(1), *y = n.output(0);
  if (ind->dtype() != DType::kI64 && ind->dtype() != DType::kI32)
    return unsupported("{}: GatherND indices of type {}", n.describe(), dtypeName(ind->dtype()));
  const int64_t b = n.attrs().getInt("batch_dims", 0), r = x->rank(), q = ind->rank();
  const int64_t k = ind->dims()[q - 1];
  if (k < 1 || b + k > r) return unsupported("{}: index tuples of {} components", n.describe(), k);
  for (int64_t d = b; d < r; ++d)
    if (!x->dimExpr(static_cast<int>(d)).isConstant())
      return unsupported("{}: the gathered data's dim {} depends on a dynamic dimension; the cuda/hip "
                         "GatherND needs the data's dims from batch_dims on fixed",
                         n.describe(), d);
  std::vector<int64_t> xs = contiguousStrides(x->dims()), is = contiguousStrides(ind->dims());
  // Output coordinates: b batch dims, q - 1 - b index dims, r - b - k slice dims.
  std::vector<int64_t> dataS, indS;
  for (int64_t d = 0; d < b; ++d) dataS.push_back(xs[d]), indS.push_back(is[d]);
  for (int64_t d = b; d < q - 1; ++d) dataS.push_back(0), indS.push_back(is[d]);
  for (int64_t d = b + k; d < r; ++d) dataS.push_back(xs[d]), indS.push_back(0);
  if (static_cast<int64_t>(dataS.size()) != y->rank())
    return internalStatus("{}: GatherND result of rank {} for {} coordinates", n.describe(), y->rank(),
                          dataS.size());
  const bool bits16 = x->dtype() == DType::kF16 || x->dtype() == DType::kBF16;
  const char* et = bits16 ? "uint16_t" : ctypeOf(x->dtype());
  if (!et) return unsupported("{}: data of type {}", n.describe(), dtypeName(x->dtype()));
  std::string body = fmt::format("    const {}* t = static_cast<const {}*>(in[1]) + idx[1];\n"
                                 "    int64_t off = idx[0];\n",
                                 ctypeOf(ind->dtype()), ctypeOf(ind->dtype()));
  for (int64_t c = 0; c < k; ++c)
    body += fmt::format("    {{ int64_t j = static_cast<int64_t>(t[{}]); if (j < 0) j += {}; "
                        "if (j < 0 || j >= {}) j = 0;  // out of range: the CPU target reports it\n"
                        "      off += j * {}; }}\n",
                        c, x->dims()[b + c], x->dims()[b + c], xs[b + c]);
  body += fmt::format("    static_cast<{}*>(out)[o] = static_cast<const {}*>(in[0])[off];\n", et, et);
  std::string name = functorName(cx);
  return std::vector<GpuItem>{mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(),
                                      {{cx.ptr(x), 0, dataS}, {cx.ptr(ind), 0, indS}}, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

}  // namespace gpu
}  // namespace magneto
