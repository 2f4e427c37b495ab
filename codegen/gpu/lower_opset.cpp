// GPU lowering of the operators that opsets 18 to 21 brought (tests/opset's set, issue #8) and of
// the element types that the float32 lowerings of lower_map.cpp / lower_compute.cpp refuse. This
// file holds the ops that are generated map functors; lower_opset_compute.cpp the ones with block
// programs of their own (gpu_lowering.h declares both, lowering_table.cpp points at them).
//
// What they lower (where an op also has a float32 lowering, the table's entry for it picks by
// element type, so each node has exactly one lowering):
//   Cast, CastLike                      every type pair; mgk::convertTo, the CPU's ew::convert
//                                       (saturating float -> integer, NaN -> 0, float16 and
//                                       bfloat16 rounded to nearest even)
//   BitwiseAnd/Or/Xor/Not, BitShift     integer types, numpy broadcasting
//   IsNaN, IsInf                        float types
//   unary math on float64               Mish, Exp, Tanh, ... with the CPU's formulas in double
//   Reduce* on bool, integers, float64  mgk::reduceTyped (wrapping integer sums, double sums)
//   CenterCropPad                       a copy with a shift per axis, zeros where it pads
//   QuantizeLinear, DequantizeLinear    int8/uint8 (int32 into DequantizeLinear), per tensor or
//                                       per axis; runtime/common/mg_quant.h's formulas, the CPU's
//   Resize, ScatterND, ScatterElements, Scatter, GroupNormalization, Col2Im, LpPool, DeformConv
//                                       lower_opset_compute.cpp
// Why the results equal the CPU target's: every functor and program computes the CPU runtime's
// formula (runtime/cpu, named at each one) in the same precision; where the CPU accumulates in
// double, so do they. The cases of tests/opset run through both targets
// (tests/opset/run_opset_tests.sh --target cuda --emulate) and compare with onnxruntime.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "elementwise_exprs.h"
#include "lower_opset.h"
#include "magneto/ir/activation.h"
#include "mg_acts.h"

namespace magneto {
namespace gpu {
namespace opset {

const char* storageType(DType t) {
  switch (t) {
    case DType::kBool: return "mgk::Bool";
    case DType::kF16: return "mgk::Half";
    case DType::kBF16: return "mgk::BFloat16";
    default: return ctypeOf(t);
  }
}

std::string doubleList(const std::vector<double>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt::format("{:.17g}", v[i]);
  return s + "}";
}

namespace {

// A map item over the output's index space whose functor loads operands `ins` (broadcast to the
// output, or read with `strides[k]` per output dim where given) into locals a0, a1, ... of their
// storage types and then runs `body`.
Expected<std::vector<GpuItem>> elementwise(const Node& n, const std::vector<const Value*>& ins,
                                           const std::string& body, const TileConfig& tile,
                                           LowerContext& cx,
                                           const std::vector<std::vector<int64_t>>& strides = {}) {
  const Value* y = n.output(0);
  std::string name = functorName(cx), f = functorHead(name);
  std::vector<MapOperand> ops;
  for (size_t k = 0; k < ins.size(); ++k) {
    const char* t = storageType(ins[k]->dtype());
    if (!t)
      return unsupported("{}: operand {} of type {} on the cuda/hip targets", n.describe(), k,
                         dtypeName(ins[k]->dtype()));
    f += fmt::format("    const {0} a{1} = static_cast<const {0}*>(in[{1}])[idx[{1}]];\n", t, k);
    ops.push_back({cx.ptr(ins[k]), 0,
                   k < strides.size() ? strides[k] : broadcastStrides(cx, ins[k], y)});
  }
  f += body + kFunctorTail;
  return std::vector<GpuItem>{mapItem(name, f, y->dims(), ops, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

std::string store(const Value* y, const std::string& expr) {
  return fmt::format("    static_cast<{}*>(out)[o] = {};\n", storageType(y->dtype()), expr);
}

// The float64 expression of a unary math op or activation over the local x, or "": the float64
// column of elementwise_exprs.h, or the activation table's formula (runtime/common/mg_acts.h)
// with the node's alpha/beta.
std::string f64UnaryExpr(const Node& n) {
  const std::string& k = n.kind();
  for (const UnaryMathExpr& u : kUnaryMathExprs)
    if (k == u.op) return fmt::format(fmt::runtime(u.f64), "x");
  const mgrt::acts::ActInfo* a = mgrt::acts::find(k.c_str(), mgrt::acts::kO);
  if (!a) return "";
  if (k == "Gelu" && n.attrs().getString("approximate", "none") == "tanh") a = mgrt::acts::find("GeluTanh");
  double alpha, beta;
  activationAttrParams(n, alpha, beta);
  return fmt::format("mgrt::acts::fn::{}<double>(x, {:.17g}, {:.17g})", a->name, alpha, beta);
}

// The mgk::reduceTyped reducer of a Reduce* op (k_reduction.cpp's).
const char* reduceOpName(const std::string& k) {
  static const std::pair<const char*, const char*> kOps[] = {
      {"ReduceSum", "mgk::kRedSum"}, {"ReduceMean", "mgk::kRedMean"}, {"ReduceMax", "mgk::kRedMax"},
      {"ReduceMin", "mgk::kRedMin"}, {"ReduceProd", "mgk::kRedProd"}, {"ReduceL1", "mgk::kRedL1"},
      {"ReduceL2", "mgk::kRedL2"}, {"ReduceLogSum", "mgk::kRedLogSum"},
      {"ReduceLogSumExp", "mgk::kRedLogSumExp"}, {"ReduceSumSquare", "mgk::kRedSumSquare"},
  };
  for (const auto& [op, code] : kOps)
    if (k == op) return code;
  return nullptr;
}

}  // namespace

// ---- Cast, CastLike: runtime/cpu/k_elementwise_binary.cpp castTo ----------------------------
Expected<std::vector<GpuItem>> lowerCast(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  const char* to = storageType(y->dtype());
  if (!to) return unsupported("{}: {} to {} on the cuda/hip targets", n.describe(), n.kind(), dtypeName(y->dtype()));
  return elementwise(n, {x}, store(y, fmt::format("mgk::convertTo<{}>(a0)", to)), tile, cx);
}

// ---- ConstantOfShape: runtime/cpu/k_tensor.cpp kConstantOfShape -----------------------------
// The result's dims are its type's (static, or at the binding being lowered: with dynamic dims the
// shape operand is shape data that the package writes, never read here). The value is the CPU's:
// mg_value as a double for float results, mg_value_i (or mg_value truncated) for the others,
// converted as Cast converts.
Expected<std::vector<GpuItem>> lowerConstantOfShape(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value* y = n.output(0);
  const char* to = storageType(y->dtype());
  if (!to) return unsupported("{}: ConstantOfShape of {} on the cuda/hip targets", n.describe(), dtypeName(y->dtype()));
  std::string value;
  if (isFloat(y->dtype())) {
    const double v = n.attrs().getFloat("mg_value", 0.0);
    if (std::isnan(v)) value = "static_cast<double>(NAN)";
    else if (std::isinf(v)) value = v > 0 ? "static_cast<double>(INFINITY)" : "(-static_cast<double>(INFINITY))";
    else value = fmt::format("{:.17g}", v);
    if (value.find_first_of(".eN(I") == std::string::npos) value += ".0";  // a double, not an int
  } else {
    const int64_t v = n.attrs().has("mg_value_i") ? n.attrs().getInt("mg_value_i", 0)
                                                    : static_cast<int64_t>(n.attrs().getFloat("mg_value", 0.0));
    value = fmt::format("static_cast<int64_t>({}LL)", v);
  }
  return elementwise(n, {}, store(y, fmt::format("mgk::convertTo<{}>({})", to, value)), tile, cx);
}

// ---- QuantizeLinear, DequantizeLinear: k_quantize.cpp, runtime/common/mg_quant.h ------------
// Scale and zero point are one per tensor (read at index 0 for every element) or one per slice
// of `axis` (stride 1 along it); shape inference checked which, and refused block quantization.
Expected<std::vector<GpuItem>> lowerQuantize(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const bool quantize = n.kind() == "QuantizeLinear";
  const Value *x = n.input(0), *y = n.output(0);
  const int rank = y->rank();
  std::vector<const Value*> ins = {x, n.input(1)};
  std::vector<std::vector<int64_t>> strides = {contiguousStrides(x->dims())};
  std::vector<int64_t> param(rank, 0);
  if (n.input(1)->type().numel() != 1) {
    int64_t axis = n.attrs().getInt("axis", 1);
    param[axis < 0 ? axis + rank : axis] = 1;
  }
  strides.push_back(param);
  std::string zp = "0";
  if (n.input(2)) {
    ins.push_back(n.input(2));
    strides.push_back(param);
    zp = "int32_t(a2)";
  }
  if (!quantize)
    return elementwise(n, ins, store(y, fmt::format("mgrt::quant::dequantize(int32_t(a0), {}, a1)", zp)),
                       tile, cx, strides);
  const bool s8 = y->dtype() == DType::kI8;
  std::string expr = fmt::format("static_cast<{}>(mgrt::quant::quantize(float(a0), a1, {}, {}, {}))",
                                 ctypeOf(y->dtype()), zp, s8 ? -128 : 0, s8 ? 127 : 255);
  return elementwise(n, ins, store(y, expr), tile, cx, strides);
}

// ---- Bitwise ops, BitShift: k_elementwise.cpp BitwiseNotOp, k_elementwise_binary.cpp MG_BITS ----
Expected<std::vector<GpuItem>> lowerBitwise(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const std::string& k = n.kind();
  const Value* y = n.output(0);
  DType t = n.input(0)->dtype();
  bool unsignedOnly = k == "BitShift";
  bool isUnsigned = t == DType::kU8 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
  if (!isInteger(t) || (unsignedOnly && !isUnsigned))
    return unsupported("{}: {} on {}", n.describe(), k, dtypeName(t));
  const char* c = ctypeOf(t);
  if (k == "BitwiseNot") return elementwise(n, {n.input(0)}, store(y, fmt::format("static_cast<{}>(~a0)", c)), tile, cx);
  std::string expr;
  if (k == "BitShift") {
    // Shifts by the bit width or more give 0 (the CPU's BitShiftOp; C++ leaves them undefined).
    bool left = n.attrs().getString("direction", "") == "LEFT";
    expr = fmt::format("a1 >= sizeof({0}) * 8 ? {0}(0) : static_cast<{0}>({1})", c,
                       left ? "uint64_t(a0) << a1" : "a0 >> a1");
  } else {
    const char* op = k == "BitwiseAnd" ? "&" : k == "BitwiseOr" ? "|" : "^";
    expr = fmt::format("static_cast<{}>(a0 {} a1)", c, op);
  }
  return elementwise(n, {n.input(0), n.input(1)}, store(y, expr), tile, cx);
}

// ---- IsNaN, IsInf: k_elementwise.cpp IsNaNOp, IsInfOp ----------------------------------------
Expected<std::vector<GpuItem>> lowerIsNanInf(const Node& n, const TileConfig& tile, LowerContext& cx) {
  DType t = n.input(0)->dtype();
  if (!isFloat(t)) return unsupported("{}: {} on {}", n.describe(), n.kind(), dtypeName(t));
  std::string body = "    const double v = double(mgk::loadValue(a0));\n";
  if (n.kind() == "IsNaN") {
    body += "    static_cast<uint8_t*>(out)[o] = v != v;\n";
  } else {
    bool neg = n.attrs().getInt("detect_negative", 1) != 0, pos = n.attrs().getInt("detect_positive", 1) != 0;
    body += fmt::format("    static_cast<uint8_t*>(out)[o] = fabs(v) == INFINITY && (v > 0 ? {} : {});\n",
                        pos ? "true" : "false", neg ? "true" : "false");
  }
  return elementwise(n, {n.input(0)}, body, tile, cx);
}

// ---- unary math on float64: k_elementwise.cpp's formulas with C = double ----------------------
Expected<std::vector<GpuItem>> lowerUnaryF64(const Node& n, const TileConfig& tile, LowerContext& cx) {
  std::string body = "    const double x = a0;\n" + store(n.output(0), f64UnaryExpr(n));
  return elementwise(n, {n.input(0)}, body, tile, cx);
}

// ---- Reduce* on bool, integer and float64 tensors: k_reduction.cpp's reducers ----------------
Expected<std::vector<GpuItem>> lowerTypedReduce(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  DType t = x->dtype();
  bool isBool = t == DType::kBool;
  if (!(isInteger(t) || t == DType::kF64 || isBool) ||
      (isBool && n.kind() != "ReduceMax" && n.kind() != "ReduceMin"))
    return unsupported("{}: {} on {} on the cuda/hip targets", n.describe(), n.kind(), dtypeName(t));
  std::vector<int64_t> axes = n.attrs().getInts("axes");
  if (n.input(1)) {
    if (!n.input(1)->isConstant())
      return unsupported("{}: computed reduction axes on the cuda/hip targets", n.describe());
    axes = n.input(1)->constant().toInts();
  }
  std::vector<bool> reduced(x->rank(), false);
  // noop_with_empty_axes: nothing is reduced; each output is its op over one element.
  if (axes.empty() && n.attrs().getInt("noop_with_empty_axes", 0) == 0) reduced.assign(x->rank(), true);
  for (int64_t a : axes) reduced[a < 0 ? a + x->rank() : a] = true;
  std::vector<int64_t> xs = contiguousStrides(x->dims()), od, os, rd, rs;
  int64_t redN = 1;
  for (int d = 0; d < x->rank(); ++d) {
    if (reduced[d]) rd.push_back(x->dims()[d]), rs.push_back(xs[d]), redN *= x->dims()[d];
    else od.push_back(x->dims()[d]), os.push_back(xs[d]);
  }
  if (od.empty()) od = {1}, os = {0};
  if (rd.empty()) rd = {1}, rs = {0};
  const char* c = ctypeOf(t);  // bool reduces as uint8_t, stored as r != 0
  std::string name = functorName(cx);
  std::string f = functorHead(name) +
                  fmt::format("    const int64_t dims[] = {}, strides[] = {};\n"
                              "    const {} r = mgk::reduceTyped<{}, {}>(static_cast<const {}*>(in[0]) + idx[0], {}, dims, strides, {});\n",
                              intList(rd), intList(rs), c, c, reduceOpName(n.kind()), c, rd.size(), redN) +
                  fmt::format("    static_cast<{}*>(out)[o] = {};\n", c, isBool ? "r != 0" : "r") + kFunctorTail;
  return std::vector<GpuItem>{mapItem(name, f, Dims(od.begin(), od.end()), {{cx.ptr(x), 0, os}}, cx.ptr(y), 0,
                                      contiguousStrides(Dims(od.begin(), od.end())), itemsPerThread(tile))};
}

// ---- CenterCropPad: k_tensor.cpp kCenterCropPad -----------------------------------------------
Expected<std::vector<GpuItem>> lowerCenterCropPad(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  const char* t = storageType(x->dtype());
  if (!t) return unsupported("{}: CenterCropPad of {}", n.describe(), dtypeName(x->dtype()));
  int r = x->rank();
  // Source index = output index + shift: (in - out) / 2 truncated, i.e. the floor of a crop and
  // minus the floor of a pad (the extra element of an odd difference goes to the end).
  std::vector<int64_t> xs = contiguousStrides(x->dims()), ys = contiguousStrides(y->dims());
  std::string body = "    int64_t rest = o, at = 0;\n    bool inside = true;\n";
  for (int d = 0; d < r; ++d) {
    int64_t shift = (x->dims()[d] - y->dims()[d]) / 2;
    body += fmt::format("    {{ const int64_t c = rest / {} + {}; rest %= {};\n"
                        "      inside = inside && c >= 0 && c < {}; at += c * {}; }}\n",
                        ys[d], shift, ys[d], x->dims()[d], xs[d]);
  }
  body += fmt::format("    static_cast<{0}*>(out)[o] = inside ? static_cast<const {0}*>(in[0])[at] : {0}{{}};\n", t);
  std::string name = functorName(cx);
  return std::vector<GpuItem>{mapItem(name, functorHead(name) + body + kFunctorTail, y->dims(),
                                      {{cx.ptr(x), 0, std::vector<int64_t>(y->rank(), 0)}}, cx.ptr(y), 0, ys,
                                      itemsPerThread(tile))};
}

}  // namespace opset
}  // namespace gpu
}  // namespace magneto
