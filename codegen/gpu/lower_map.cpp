// GPU lowering of the elementwise ops (see gpu_lowering.h; their entries in lowering_table.cpp):
// unary math, activations, binary arithmetic with numpy broadcasting, the variadic Sum, Max, Min
// and Mean, comparisons and logic, Where, Clip, inference BatchNormalization and fused
// elementwise chains (MgElementwise). Each becomes mgk::mapBlock over the output's index space
// with a functor generated here from the op's expression (elementwise_exprs.h, or the activation
// table runtime/common/mg_acts.h). This file also holds the helpers of every map item (mapItem,
// functorHead, functorName, broadcastStrides), which lower_data_movement.cpp and lower_opset.cpp
// use too.
#include <fmt/format.h>

#include <cstdlib>

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

std::vector<int64_t> broadcastStrides(const LowerContext& cx, const Value* in, const Value* out) {
  const Dims &id = in->dims(), &od = out->dims(), &ref = cx.choiceDims(in);
  std::vector<int64_t> cs = contiguousStrides(id), s(od.size(), 0);
  size_t off = od.size() - id.size();
  for (size_t d = 0; d < id.size(); ++d)
    s[off + d] = ref[d] == 1 || (id[d] == 1 && od[off + d] != 1) ? 0 : cs[d];
  return s;
}

int itemsPerThread(const TileConfig& t) { return t.itemsPerThread > 0 ? t.itemsPerThread : 4; }

std::string functorName(LowerContext& cx) { return fmt::format("F{}_{}", cx.step, cx.functorCounter++); }

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

// The C type a map functor computes a value of type t in: float16 (half storage under
// --precision fp16) computes as float; the others as ctypeOf. nullptr when the map has none.
const char* mapComputeType(DType t) { return t == DType::kF16 ? "float" : ctypeOf(t); }

// Operand k of type t into the local a<k>: float16 is read as mgk::Half and widened to float.
std::string mapLoadOperand(DType t, size_t k) {
  if (t == DType::kF16)
    return fmt::format("    const float a{0} = mgk::ldF(static_cast<const mgk::Half*>(in[{0}])[idx[{0}]]);\n", k);
  return fmt::format("    const {0} a{1} = static_cast<const {0}*>(in[{1}])[idx[{1}]];\n", ctypeOf(t), k);
}

// out[o] = expr for a result of type t: float16 rounds the float to nearest even (mgk::stF).
std::string mapStoreResult(DType t, const std::string& expr) {
  if (t == DType::kF16)
    return fmt::format("    static_cast<mgk::Half*>(out)[o] = mgk::stF<mgk::Half>(static_cast<float>({}));\n", expr);
  return fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>({1});\n", ctypeOf(t), expr);
}

// Loads of every operand into locals a0, a1, ... of their compute types.
std::string loads(const Node& n) {
  std::string s;
  for (size_t k = 0; k < n.numInputs(); ++k) {
    const Value* v = n.input(k);
    if (!v) continue;
    s += mapLoadOperand(v->dtype(), k);
  }
  return s;
}

// out[o] = <expr> with the result's type.
std::string elementwiseFunctor(const std::string& name, const Node& n, const std::string& expr) {
  return functorHead(name) + loads(n) + mapStoreResult(n.output(0)->dtype(), expr) + kFunctorTail;
}

// The expression an elementwise node computes over a0.., or "" when not supported.
std::string elementwiseExpression(const Node& n) {
  const std::string& k = n.kind();
  DType t = n.input(0) ? n.input(0)->dtype() : DType::kUndefined;
  bool isFloat = t == DType::kF32 || t == DType::kF16;  // float16: half storage, float math
  if (k == "Where") return "a0 ? a1 : a2";
  if (k == "Not") return "!a0";
  if (!compareExpr(k).empty()) return compareExpr(k);
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
  body += mapStoreResult(n.output(0)->dtype(), "t" + std::to_string(program.size() - 1));
  return functorHead(name) + body + kFunctorTail;
}

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
  bool isFloat = t == DType::kF32 || t == DType::kF16;
  if (k != "Sum" && k != "Max" && k != "Min" && k != "Mean")
    return unsupported("{}: {} operands; the GPU map kernel takes at most {}", n.describe(), all.size(),
                       kMapInputs);
  const std::string fold = k == "Mean" ? "Add" : k;
  std::vector<GpuItem> items;
  size_t next = 0;
  for (int phase = 0; next < all.size(); ++phase) {
    std::vector<Operand> ins;
    if (phase > 0) ins.push_back({cx.ptr(y), 0, contiguousStrides(y->dims())});
    while (ins.size() < static_cast<size_t>(kMapInputs) && next < all.size()) ins.push_back(all[next++]);
    std::string body, acc = "a0";
    for (size_t i = 0; i < ins.size(); ++i) body += mapLoadOperand(t, i);
    for (size_t i = 1; i < ins.size(); ++i) acc = binaryExpr(fold, acc, "a" + std::to_string(i), isFloat);
    if (acc.empty())
      return unsupported("{}: the cuda/hip targets have no elementwise kernel for '{}' on {} yet",
                         n.describe(), k, dtypeName(t));
    if (k == "Mean" && next == all.size()) acc = fmt::format("({} / {}.f)", acc, all.size());
    std::string name = functorName(cx);
    body += mapStoreResult(t, acc);
    GpuItem it = mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(), ins, cx.ptr(y), 0,
                         contiguousStrides(y->dims()), itemsPerThread(tile));
    it.phase = phase;
    items.push_back(std::move(it));
  }
  return items;
}

}  // namespace

Expected<std::vector<GpuItem>> lowerElementwise(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value* y = n.output(0);
  for (size_t k = 0; k < n.numInputs(); ++k)
    if (n.input(k) && !mapComputeType(n.input(k)->dtype()))
      return unsupported("{}: operand {} has type {}, which the cuda/hip targets do not support yet",
                         n.describe(), k, dtypeName(n.input(k)->dtype()));
  if (!mapComputeType(y->dtype()))
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
      s = broadcastStrides(cx, v, y);
    }
    ins.push_back({cx.ptr(v), 0, s});
  }
  if (ins.size() > static_cast<size_t>(kMapInputs)) return variadicInPhases(n, ins, tile, cx);
  return std::vector<GpuItem>{mapItem(name, functor, y->dims(), ins, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

// Inference mode only: the training-mode results (running mean and variance) have no program.
Expected<std::vector<GpuItem>> lowerBatchNorm(const Node& n, const TileConfig& tile, LowerContext& cx) {
  for (size_t i = 1; i < n.numOutputs(); ++i)
    if (n.output(i) && (n.output(i)->hasUses() || n.output(i)->isGraphOutput()))
      return unsupported("{}: training-mode BatchNormalization outputs", n.describe());
  return lowerElementwise(n, tile, cx);
}

}  // namespace gpu
}  // namespace magneto
