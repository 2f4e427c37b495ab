// GPU lowering of the map family (see gpu_lowering.h): elementwise ops with broadcasting, fused
// elementwise chains (MgElementwise), inference BatchNormalization, casts, comparisons, Where,
// Gather, and every op that only moves bytes (Reshape-like copies, Transpose, Slice, Expand, Tile,
// Concat, Split, MgChannelSlice). Each becomes mgk::mapBlock over the output's index space with a
// functor generated here; data movement is a copy functor over strided views, so a Concat is one
// item per input writing into its slice of the output (all in one launch).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "elementwise_exprs.h"
#include "gpu_lowering.h"
#include "magneto/ir/activation.h"
#include "magneto/target/target_limits.h"
#include "mg_acts.h"

namespace magneto {
namespace gpu {
namespace {

constexpr int kMapThreads = 256;

using Operand = MapOperand;
// Operands one map item takes: mgk::kMaxMapInputs (runtime/gpu/kernels/mg_kparams.h).
constexpr int kMapInputs = kGpuMapMaxInputs;  // include/magneto/target/target_limits.h

}  // namespace

std::vector<int64_t> broadcastStrides(const Dims& in, const Dims& out) {
  std::vector<int64_t> cs = contiguousStrides(in), s(out.size(), 0);
  size_t off = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) s[off + d] = in[d] == 1 ? 0 : cs[d];
  return s;
}

namespace {
int itemsFor(const TileConfig& t) { return t.itemsPerThread > 0 ? t.itemsPerThread : 4; }
}  // namespace

GpuItem mapItem(const std::string& functorName, const std::string& functor, const Dims& dims,
                const std::vector<Operand>& ins, const std::string& outPtr, int64_t outOffset,
                const std::vector<int64_t>& outStrides, int items) {
  GpuItem it;
  std::string args = fmt::format("{}, {}, {}", functorName, items, kMapThreads);
  it.paramsType = "mgk::MapParams";
  it.program = "mgk::mapBlock<" + args + ">";
  it.blocks = "mgk::mapBlocks<" + args + ">";
  it.smem = "mgk::mapSmemBytes<" + args + ">";
  it.threads = kMapThreads;
  it.functor = functor;
  it.tile = fmt::format("items{}", items);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> d(dims.begin(), dims.end());
  if (d.empty()) d = {1};  // a scalar is one element
  auto pad = [&](std::vector<int64_t> s) {
    if (s.empty()) s = {0};
    return s;
  };
  it.init += fmt::format("p.n = {}; p.rank = {}; p.nin = {}; mgSet(p.dims, {});\n", n, d.size(),
                         ins.size(), intList(d));
  for (size_t k = 0; k < ins.size(); ++k)
    it.init += fmt::format("p.in[{}] = {}; p.inOffset[{}] = {}; mgSet(p.inStrides[{}], {});\n", k,
                           ins[k].ptr, k, ins[k].offset, k, intList(pad(ins[k].strides)));
  it.init += fmt::format("p.out = {}; p.outOffset = {}; mgSet(p.outStrides, {});\n", outPtr,
                         outOffset, intList(pad(outStrides)));
  return it;
}

std::string functorHead(const std::string& name) {
  return "struct " + name +
         " {\n  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out, "
         "int64_t o) const {\n";
}
const char* const kFunctorTail = "  }\n};\n";

namespace {

// Copy functor for elements of `bytes` bytes (dtype-agnostic).
std::string copyFunctor(const std::string& name, size_t bytes) {
  const char* t = bytes == 1 ? "uint8_t" : bytes == 2 ? "uint16_t" : bytes == 4 ? "uint32_t" : "uint64_t";
  return functorHead(name) + fmt::format("    static_cast<{0}*>(out)[o] = static_cast<const {0}*>(in[0])[idx[0]];\n", t) +
         kFunctorTail;
}

// The float expression of a unary op applied to `x`, or "" when unknown. An activation of the
// table (runtime/common/mg_acts.h: every package has it beside runtime/kernels/) is a call of its
// shared formula, alpha and beta as in the CPU runtime's applyAct; the other ops are the rows of
// elementwise_exprs.h.
std::string unaryExpr(const std::string& op, const std::string& x, double alpha, double beta) {
  if (const mgrt::acts::ActInfo* e = mgrt::acts::find(op.c_str()); e && e->code != mgrt::acts::kNone)
    return fmt::format("mgrt::acts::fn::{}<float>({}, {}, {})", e->name, x, floatLiteral(alpha),
                       floatLiteral(beta));
  for (const UnaryMathExpr& u : kUnaryMathExprs)
    if (op == u.op) return fmt::format(fmt::runtime(u.f32), x);
  return "";
}

// The expression of a binary op over float32 values or (isFloat false) integers, or "".
std::string binaryExpr(const std::string& op, const std::string& x, const std::string& y, bool isFloat) {
  for (const BinaryExpr& b : kBinaryExprs)
    if (op == b.op) {
      const char* f = isFloat ? b.f32 : b.integer;
      return f ? fmt::format(fmt::runtime(f), x, y) : "";
    }
  return "";
}

std::string compareExpr(const std::string& op) {
  for (const CompareExpr& c : kCompareExprs)
    if (op == c.op) return c.expr;
  return "";
}

// Loads of every operand into locals a0, a1, ... of their C types.
std::string loads(const Node& n) {
  std::string s;
  for (size_t k = 0; k < n.numInputs(); ++k) {
    const Value* v = n.input(k);
    if (!v) continue;
    s += fmt::format("    const {0} a{1} = static_cast<const {0}*>(in[{1}])[idx[{1}]];\n",
                     ctypeOf(v->dtype()), k);
  }
  return s;
}

// out[o] = <expr> with the result's C type.
std::string elementwiseFunctor(const std::string& name, const Node& n, const std::string& expr) {
  return functorHead(name) + loads(n) +
         fmt::format("    static_cast<{}*>(out)[o] = static_cast<{}>({});\n",
                     ctypeOf(n.output(0)->dtype()), ctypeOf(n.output(0)->dtype()), expr) +
         kFunctorTail;
}

// The expression an elementwise node computes over a0.., or "" when not supported.
std::string elementwiseExpression(const Node& n) {
  const std::string& k = n.kind();
  DType t = n.input(0) ? n.input(0)->dtype() : DType::kUndefined;
  bool isFloat = t == DType::kF32;
  if (k == "Where") return "a0 ? a1 : a2";
  if (k == "Not") return "!a0";
  if (!compareExpr(k).empty()) return compareExpr(k);
  if ((k == "Cast" || k == "Identity") && n.output(0)->dtype() == DType::kBool) return "a0 != 0";
  if (k == "Cast" || k == "Identity") return "a0";
  if (k == "Clip" && isFloat) {
    std::string lo = n.input(1) ? "a1" : "-3.402823466e38f", hi = n.input(2) ? "a2" : "3.402823466e38f";
    return fmt::format("(a0 < {1} ? {1} : (a0 > {2} ? {2} : a0))", "", lo, hi);
  }
  if (n.numInputs() == 1 && isFloat) {
    double alpha, beta;
    activationAttrParams(n, alpha, beta);
    std::string op = k;
    if (k == "Gelu" && n.attrs().getString("approximate", "none") == "tanh") op = "GeluTanh";
    return unaryExpr(op, "a0", alpha, beta);
  }
  if (n.numInputs() >= 2 && (isFloat || t == DType::kI32 || t == DType::kI64)) {
    std::string acc = "a0";
    for (size_t i = 1; i < n.numInputs(); ++i) {
      acc = binaryExpr(k == "Mean" ? "Add" : k, acc, "a" + std::to_string(i), isFloat);
      if (acc.empty()) return "";
    }
    if (k == "Mean") acc = fmt::format("({} / {}.f)", acc, n.numInputs());
    if (n.numInputs() > 2 && k != "Max" && k != "Min" && k != "Sum" && k != "Mean") return "";
    return acc;
  }
  return "";
}

// MgElementwise: the fused program, one local per instruction (see runtime/cpu/k_fused.cpp).
Expected<std::string> fusedFunctor(const std::string& name, const Node& n) {
  std::string body = loads(n);
  std::vector<std::string> program = n.attrs().getStrings("program");
  for (size_t i = 0; i < program.size(); ++i) {
    std::vector<std::string> tok;
    size_t p = 0;
    const std::string& ins = program[i];
    while (p < ins.size()) {
      size_t q = ins.find(' ', p);
      if (q == std::string::npos) q = ins.size();
      if (q > p) tok.push_back(ins.substr(p, q - p));
      p = q + 1;
    }
    double alpha = 0, beta = 0;
    std::vector<std::string> operands;
    for (size_t j = 1; j < tok.size(); ++j) {
      if (tok[j].rfind("alpha=", 0) == 0) alpha = std::strtod(tok[j].c_str() + 6, nullptr);
      else if (tok[j].rfind("beta=", 0) == 0) beta = std::strtod(tok[j].c_str() + 5, nullptr);
      else if (tok[j].size() >= 2 && (tok[j][0] == 'i' || tok[j][0] == 't'))
        operands.push_back((tok[j][0] == 'i' ? "a" : "t") + tok[j].substr(1));
      else return unsupported("{}: cannot read fused instruction '{}'", n.describe(), ins);
    }
    if (tok.empty() || operands.empty())
      return unsupported("{}: empty fused instruction {}", n.describe(), i);
    std::string expr = operands.size() == 1 ? unaryExpr(tok[0], operands[0], alpha, beta)
                                            : binaryExpr(tok[0], operands[0], operands[1], true);
    if (expr.empty())
      return unsupported("{}: the cuda/hip targets have no expression for fused op '{}'",
                         n.describe(), tok[0]);
    body += fmt::format("    const float t{} = {};\n", i, expr);
  }
  body += fmt::format("    static_cast<float*>(out)[o] = t{};\n", program.size() - 1);
  return functorHead(name) + body + kFunctorTail;
}

bool isCopyKind(const std::string& k) {
  return k == "Reshape" || k == "Flatten" || k == "Squeeze" || k == "Unsqueeze" ||
         k == "Identity" || k == "Dropout";
}

std::string functorName(LowerContext& cx) { return fmt::format("F{}_{}", cx.step, cx.functorCounter++); }

// Sum, Max, Min or Mean of more operands than a map item takes (kMaxMapInputs): one item per
// phase, i.e. launches in order. Phase 0 folds the first kMaxMapInputs operands into y; each
// later phase folds y with the next kMaxMapInputs - 1 (a thread reads y[o] and writes y[o]: no
// other thread touches o); Mean divides in the last. The fold runs left to right over the
// operands, as the CPU runtime's does, so the sums are the same to the bit.
Expected<std::vector<GpuItem>> variadicInPhases(const Node& n, const std::vector<Operand>& all,
                                                const TileConfig& tile, LowerContext& cx) {
  const std::string& k = n.kind();
  const Value* y = n.output(0);
  DType t = n.input(0)->dtype();
  bool isFloat = t == DType::kF32;
  if (k != "Sum" && k != "Max" && k != "Min" && k != "Mean")
    return unsupported("{}: {} operands; the GPU map kernel takes at most {}", n.describe(), all.size(),
                       kMapInputs);
  const char* ct = ctypeOf(t);
  const std::string fold = k == "Mean" ? "Add" : k;
  std::vector<GpuItem> items;
  size_t next = 0;
  for (int phase = 0; next < all.size(); ++phase) {
    std::vector<Operand> ins;
    if (phase > 0) ins.push_back({cx.ptr(y), 0, contiguousStrides(y->dims())});
    while (ins.size() < static_cast<size_t>(kMapInputs) && next < all.size()) ins.push_back(all[next++]);
    std::string body, acc = "a0";
    for (size_t i = 0; i < ins.size(); ++i)
      body += fmt::format("    const {0} a{1} = static_cast<const {0}*>(in[{1}])[idx[{1}]];\n", ct, i);
    for (size_t i = 1; i < ins.size(); ++i) acc = binaryExpr(fold, acc, "a" + std::to_string(i), isFloat);
    if (acc.empty())
      return unsupported("{}: the cuda/hip targets have no elementwise kernel for '{}' on {} yet",
                         n.describe(), k, dtypeName(t));
    if (k == "Mean" && next == all.size()) acc = fmt::format("({} / {}.f)", acc, all.size());
    std::string name = functorName(cx);
    body += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>({1});\n", ct, acc);
    GpuItem it = mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(), ins, cx.ptr(y), 0,
                         contiguousStrides(y->dims()), itemsFor(tile));
    it.phase = phase;
    items.push_back(std::move(it));
  }
  return items;
}

Expected<std::vector<GpuItem>> lowerElementwise(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value* y = n.output(0);
  for (size_t k = 0; k < n.numInputs(); ++k)
    if (n.input(k) && !ctypeOf(n.input(k)->dtype()))
      return unsupported("{}: operand {} has type {}, which the cuda/hip targets do not support yet",
                         n.describe(), k, dtypeName(n.input(k)->dtype()));
  if (!ctypeOf(y->dtype()))
    return unsupported("{}: result type {} is not supported by the cuda/hip targets yet",
                       n.describe(), dtypeName(y->dtype()));
  std::string name = functorName(cx), functor;
  if (n.kind() == "MgElementwise") {
    MG_ASSIGN_OR_RETURN(functor, fusedFunctor(name, n));
  } else if (n.kind() == "BatchNormalization") {
    double eps = n.attrs().getFloat("epsilon", 1e-5);
    functor = elementwiseFunctor(name, n,
                                 fmt::format("(a0 - a3) / sqrtf(a4 + {}) * a1 + a2", floatLiteral(eps)));
  } else {
    std::string expr = elementwiseExpression(n);
    if (expr.empty())
      return unsupported("{}: the cuda/hip targets have no elementwise kernel for '{}' on {} yet",
                         n.describe(), n.kind(), dtypeName(n.input(0)->dtype()));
    functor = elementwiseFunctor(name, n, expr);
  }
  std::vector<Operand> ins;
  for (size_t k = 0; k < n.numInputs(); ++k) {
    const Value* v = n.input(k);
    if (!v) {  // an absent optional operand (Clip without min): never read
      ins.push_back({"nullptr", 0, std::vector<int64_t>(y->rank(), 0)});
      continue;
    }
    std::vector<int64_t> s;
    if (n.kind() == "BatchNormalization" && k > 0) {  // per-channel parameters along dim 1
      s.assign(y->rank(), 0);
      if (y->rank() >= 2) s[1] = 1;
    } else {
      s = broadcastStrides(v->dims(), y->dims());
    }
    ins.push_back({cx.ptr(v), 0, s});
  }
  if (ins.size() > static_cast<size_t>(kMapInputs)) return variadicInPhases(n, ins, tile, cx);
  return std::vector<GpuItem>{mapItem(name, functor, y->dims(), ins, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsFor(tile))};
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

Expected<std::vector<GpuItem>> lowerDataMovement(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const std::string& k = n.kind();
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  int items = itemsFor(tile);
  std::vector<int64_t> xs = contiguousStrides(x->dims());
  if (isCopyKind(k) || k == "MgChannelSlice") {
    if (k == "Dropout" && n.numOutputs() > 1 && n.output(1) && (n.output(1)->hasUses() || n.output(1)->isGraphOutput()))
      return unsupported("{}: Dropout's mask output is not supported by the cuda/hip targets", n.describe());
    if (k == "MgChannelSlice") {
      int64_t begin = n.attrs().getInt("begin", 0);
      return std::vector<GpuItem>{copyItem(cx, x, begin * (x->rank() > 1 ? xs[1] : 1), xs, y, 0,
                                           contiguousStrides(y->dims()), y->dims(), items)};
    }
    Dims flat{y->type().numel()};
    return std::vector<GpuItem>{copyItem(cx, x, 0, {1}, y, 0, {1}, flat, items)};
  }
  if (k == "Transpose") {
    std::vector<int64_t> perm = n.attrs().getInts("perm");
    if (perm.empty())
      for (int d = x->rank() - 1; d >= 0; --d) perm.push_back(d);
    std::vector<int64_t> s;
    for (int64_t p : perm) s.push_back(xs[p]);
    return std::vector<GpuItem>{copyItem(cx, x, 0, s, y, 0, contiguousStrides(y->dims()), y->dims(), items)};
  }
  if (k == "Expand") {
    return std::vector<GpuItem>{copyItem(cx, x, 0, broadcastStrides(x->dims(), y->dims()), y, 0,
                                         contiguousStrides(y->dims()), y->dims(), items)};
  }
  if (k == "Tile") {
    Dims dims;
    std::vector<int64_t> in, out;
    std::vector<int64_t> ys = contiguousStrides(y->dims());
    for (int d = 0; d < x->rank(); ++d) {
      int64_t reps = y->dims()[d] / std::max<int64_t>(1, x->dims()[d]);
      dims.push_back(reps), in.push_back(0), out.push_back(x->dims()[d] * ys[d]);
      dims.push_back(x->dims()[d]), in.push_back(xs[d]), out.push_back(ys[d]);
    }
    if (dims.size() > 8) return unsupported("{}: Tile of rank {} (the GPU map handles rank 4)", n.describe(), x->rank());
    return std::vector<GpuItem>{copyItem(cx, x, 0, in, y, 0, out, dims, items)};
  }
  if (k == "Slice") {
    auto constInts = [&](size_t i) -> std::vector<int64_t> {
      const Value* v = n.input(i);
      return v && v->isConstant() ? v->constant().toInts() : std::vector<int64_t>{};
    };
    for (size_t i = 1; i < n.numInputs(); ++i)
      if (n.input(i) && !n.input(i)->isConstant())
        return unsupported("{}: Slice with computed starts/ends/axes/steps (operand {}) is not supported by the cuda/hip targets", n.describe(), i);
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
      st = step > 0 ? std::clamp<int64_t>(st, 0, dim) : std::clamp<int64_t>(st, 0, dim - 1);
      if (y->dims()[a] > 0) offset += st * xs[a];
      s[a] = xs[a] * step;
    }
    return std::vector<GpuItem>{copyItem(cx, x, offset, s, y, 0, contiguousStrides(y->dims()), y->dims(), items)};
  }
  if (k == "Pad") {
    // The functor recomputes the output coordinates from its flat index (the output is
    // contiguous), maps them into the input by the mode, and reads or writes the constant.
    for (size_t i = 1; i < n.numInputs(); ++i)
      if (i != 2 && n.input(i) && !n.input(i)->isConstant())
        return unsupported("{}: Pad with computed pads or axes on the cuda/hip targets", n.describe());
    std::string mode = n.attrs().getString("mode", "constant");
    if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
      return unsupported("{}: Pad mode '{}'", n.describe(), mode);
    const char* et = ctypeOf(x->dtype());
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
    std::vector<Operand> ins = {{cx.ptr(x), 0, std::vector<int64_t>(y->rank(), 0)}};
    if (hasValue) {
      if (cv->dtype() != x->dtype()) return unsupported("{}: Pad value of another type", n.describe());
      ins.push_back({cx.ptr(cv), 0, std::vector<int64_t>(y->rank(), 0)});
    }
    return std::vector<GpuItem>{mapItem(name, functor, y->dims(), ins, cx.ptr(y), 0,
                                        contiguousStrides(y->dims()), items)};
  }
  if (k == "ArgMax" || k == "ArgMin") {
    // One output element per map index; the functor walks the reduced axis (short rows).
    if (x->dtype() != DType::kF32) return unsupported("{}: {} of {}", n.describe(), k, dtypeName(x->dtype()));
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
        "    const float* p = static_cast<const float*>(in[0]) + idx[0];\n"
        "    float best = p[0];\n    int64_t at = 0;\n"
        "    for (int64_t j = 1; j < {0}; ++j) {{\n"
        "      const float v = p[j * {1}];\n"
        "      if (v {2} best || (v != v && best == best)) {{ best = v; at = j; }}\n"
        "    }}\n"
        "    static_cast<int64_t*>(out)[o] = at;\n",
        x->dims()[axis], xs[axis], cmp);
    return std::vector<GpuItem>{mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(),
                                        {{cx.ptr(x), 0, s}}, cx.ptr(y), 0, contiguousStrides(y->dims()), items)};
  }
  if (k == "OneHot") {
    // out[..., j, ...] = indices[...] == j (negative indices count from depth) ? on : off.
    const Value *ind = x, *vals = n.input(2);
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
                                        cx.ptr(y), 0, ys, items)};
  }
  if (k == "Concat") {
    int64_t axis = normAxis(n.attrs().getInt("axis", 0), y->rank());
    std::vector<int64_t> ys = contiguousStrides(y->dims());
    std::vector<GpuItem> out;
    int64_t at = 0;
    for (size_t i = 0; i < n.numInputs(); ++i) {
      const Value* v = n.input(i);
      bool inPlace = cx.concats && cx.concats->isInPlace(&n, v);  // its producer wrote it there
      if (v->type().numel() > 0 && !inPlace)
        out.push_back(copyItem(cx, v, 0, contiguousStrides(v->dims()), y, at * ys[axis], ys, v->dims(), items));
      at += v->dims()[axis];
    }
    return out;
  }
  if (k == "Split") {
    int64_t axis = normAxis(n.attrs().getInt("axis", 0), x->rank());
    std::vector<GpuItem> out;
    int64_t at = 0;
    for (size_t i = 0; i < n.numOutputs(); ++i) {
      const Value* v = n.output(i);
      if (v->type().numel() > 0)
        out.push_back(copyItem(cx, x, at * xs[axis], xs, v, 0, contiguousStrides(v->dims()), v->dims(), items));
      at += v->dims()[axis];
    }
    return out;
  }
  if (k == "Gather") {
    const Value* ind = n.input(1);
    if (ind->dtype() != DType::kI64 && ind->dtype() != DType::kI32)
      return unsupported("{}: Gather indices of type {}", n.describe(), dtypeName(ind->dtype()));
    int64_t axis = normAxis(n.attrs().getInt("axis", 0), x->rank());
    std::vector<int64_t> dataS, indS, is = contiguousStrides(ind->dims());
    for (int64_t d = 0; d < axis; ++d) dataS.push_back(xs[d]), indS.push_back(0);
    for (int d = 0; d < ind->rank(); ++d) dataS.push_back(0), indS.push_back(is[d]);
    for (int64_t d = axis + 1; d < x->rank(); ++d) dataS.push_back(xs[d]), indS.push_back(0);
    std::string name = functorName(cx);
    const char* et = ctypeOf(x->dtype());
    if (!et) return unsupported("{}: data of type {}", n.describe(), dtypeName(x->dtype()));
    std::string f = functorHead(name) +
                    fmt::format("    int64_t j = static_cast<int64_t>(static_cast<const {}*>(in[1])[idx[1]]);\n"
                                "    if (j < 0) j += {};\n"
                                "    if (j < 0 || j >= {}) j = 0;  // out of range: the CPU target reports it\n"
                                "    static_cast<{}*>(out)[o] = static_cast<const {}*>(in[0])[idx[0] + j * {}];\n",
                                ctypeOf(ind->dtype()), x->dims()[axis], x->dims()[axis], et, et, xs[axis]) +
                    kFunctorTail;
    return std::vector<GpuItem>{mapItem(name, f, y->dims(), {{cx.ptr(x), 0, dataS}, {cx.ptr(ind), 0, indS}},
                                        cx.ptr(y), 0, contiguousStrides(y->dims()), items)};
  }
  return unsupported("{}: internal: not a data-movement op", n.describe());
}

const char* const kDataMovement[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                     "Dropout", "MgChannelSlice", "Transpose", "Expand", "Tile",
                                     "Slice", "Concat", "Split", "Gather", "Pad",
                                     "ArgMax", "ArgMin", "OneHot"};

}  // namespace

bool lowerMapFamily(const Node& n, const TileConfig& tile, LowerContext& cx,
                    Expected<std::vector<GpuItem>>& out) {
  for (const char* k : kDataMovement)
    if (n.kind() == k) {
      out = lowerDataMovement(n, tile, cx);
      return true;
    }
  if (n.kind() == "MgElementwise" || n.kind() == "BatchNormalization" || n.kind() == "Where" ||
      n.kind() == "Cast" || n.kind() == "Not" || !compareExpr(n.kind()).empty() ||
      !unaryExpr(n.kind(), "x", 0, 0).empty() || !binaryExpr(n.kind(), "x", "y", true).empty() ||
      n.kind() == "Mean" || n.kind() == "Clip" || n.kind() == "Gelu") {
    if (n.kind() == "BatchNormalization" && n.numOutputs() > 1)
      for (size_t i = 1; i < n.numOutputs(); ++i)
        if (n.output(i) && (n.output(i)->hasUses() || n.output(i)->isGraphOutput())) {
          out = unsupported("{}: training-mode BatchNormalization outputs", n.describe());
          return true;
        }
    out = lowerElementwise(n, tile, cx);
    return true;
  }
  return false;
}

}  // namespace gpu
}  // namespace magneto
