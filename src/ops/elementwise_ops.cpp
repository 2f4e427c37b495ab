// The elementwise op family, as data: unary math, activations, numpy-broadcasting binary
// arithmetic, comparisons and logic, the variadic Max/Min/Sum/Mean, Where, Cast and CastLike.
// Reference kernels: runtime/cpu/k_elementwise.cpp and k_elementwise_binary.cpp.
//
// Traits are what passes ask: every op here is kElementwise; one-operand ops are kUnary; ops with
// numpy broadcasting are kBroadcasting; the activations an epilogue can express (mg_act, see
// runtime/common/mg_acts.h, flag E) are kActivation. Clip is kActivation but not kUnary (its bounds
// are operands 1 and 2), and Gelu is expressible only with approximate = "none".
#include <fmt/format.h>

#include "elementwise_helpers.h"
#include "families.h"
#include "mg_acts.h"

namespace magneto {
namespace {

using namespace ophelp;
using K = Attribute::Kind;

constexpr uint32_t kUnaryTraits = kElementwise | kUnary;
constexpr uint32_t kActTraits = kElementwise | kUnary | kActivation;
constexpr uint32_t kBinaryTraits = kElementwise | kBroadcasting;
constexpr uint32_t kCommutativeTraits = kElementwise | kBroadcasting | kCommutative;

void addUnary(OpRegistry& r, const char* name, DTypeSet allowed, uint32_t traits,
              std::vector<AttrSpec> attrs, std::string doc, DType out = DType::kUndefined) {
  OpSchema s;
  s.name = name;
  s.minInputs = s.maxInputs = 1;
  s.attrs = std::move(attrs);
  s.traits = traits;
  s.infer = unaryInfer(allowed, out);
  s.doc = std::move(doc);
  r.add(std::move(s));
}

void addBroadcast(OpRegistry& r, const char* name, DTypeSet allowed, uint32_t traits,
                  std::vector<AttrSpec> attrs, const char* doc, bool boolOut = false,
                  int minInputs = 2, int maxInputs = 2) {
  OpSchema s;
  s.name = name;
  s.minInputs = minInputs;
  s.maxInputs = maxInputs;
  s.attrs = std::move(attrs);
  s.traits = traits;
  s.infer = broadcastInfer(allowed, boolOut);
  s.doc = doc;
  r.add(std::move(s));
}

void registerUnaryMath(OpRegistry& r) {
  addUnary(r, "Abs", kNumericSet, kUnaryTraits, {}, "|x|");
  addUnary(r, "Neg", kSignedSet, kUnaryTraits, {}, "-x (integers wrap)");
  struct FloatFn {
    const char* name;
    const char* doc;
  };
  static const FloatFn kFloatFns[] = {
      {"Floor", "floor(x)"}, {"Ceil", "ceil(x)"}, {"Round", "round half to even"},
      {"Sqrt", "sqrt(x)"},   {"Reciprocal", "1/x"}, {"Exp", "e^x"},
      {"Log", "ln(x)"},      {"Sin", "sin(x)"},   {"Cos", "cos(x)"},
      {"Tan", "tan(x)"},     {"Asin", "asin(x)"}, {"Acos", "acos(x)"},
      {"Atan", "atan(x)"},   {"Sinh", "sinh(x)"}, {"Cosh", "cosh(x)"},
      {"Asinh", "asinh(x)"}, {"Acosh", "acosh(x)"}, {"Atanh", "atanh(x)"},
      {"Erf", "the error function"},
  };
  for (const FloatFn& f : kFloatFns) addUnary(r, f.name, kFloatSet, kUnaryTraits, {}, f.doc);
  addUnary(r, "Sign", kNumericSet, kUnaryTraits, {}, "-1, 0 or 1 by the sign of x");
  addUnary(r, "IsNaN", kFloatSet, kUnaryTraits, {}, "x is NaN", DType::kBool);
  addUnary(r, "IsInf", kFloatSet, kUnaryTraits,
           {{"detect_negative", K::kInt}, {"detect_positive", K::kInt}},
           "x is an infinity of a detected sign", DType::kBool);
  addUnary(r, "Not", kBoolSet, kUnaryTraits, {}, "logical not");
  addUnary(r, "BitwiseNot", kIntSet, kUnaryTraits, {}, "~x");
}

void registerActivations(OpRegistry& r) {
  // The activations of runtime/common/mg_acts.h flagged O: attributes, defaults and formula from
  // the table; Relu also takes signed integers, Gelu has `approximate` ("tanh": GeluTanh, which is
  // no epilogue).
  for (const mgrt::acts::ActInfo& e : mgrt::acts::kTable) {
    if (!e.has(mgrt::acts::kO)) continue;
    std::vector<AttrSpec> attrs;
    std::string doc = e.formula;
    if (e.alphaAttr[0]) {
      attrs.push_back({e.alphaAttr, K::kFloat, false, true, e.alphaDefault});
      doc += fmt::format("; a: {} ({:g})", e.alphaAttr, e.alphaDefault);
    }
    if (e.betaAttr[0]) {
      attrs.push_back({e.betaAttr, K::kFloat, false, true, e.betaDefault});
      doc += fmt::format("; b: {} ({:g})", e.betaAttr, e.betaDefault);
    }
    const std::string name = e.name;
    if (name == "Gelu") {
      attrs.push_back({"approximate", K::kString});
      doc += "; approximate = \"tanh\" uses the tanh form (no epilogue)";
    }
    addUnary(r, e.name, name == "Relu" ? kSignedSet : kFloatSet,
             e.has(mgrt::acts::kE) ? kActTraits : kUnaryTraits, std::move(attrs), doc);
  }
  addUnary(r, "Shrink", kNumericSet, kUnaryTraits, {{"bias", K::kFloat}, {"lambd", K::kFloat}},
           "x < -lambd ? x + bias : x > lambd ? x - bias : 0");

  OpSchema prelu;
  prelu.name = "PRelu";
  prelu.minInputs = prelu.maxInputs = 2;
  prelu.traits = kBinaryTraits;
  prelu.doc = "x < 0 ? slope * x : x, slope broadcast to x's shape";
  prelu.infer = [](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, kSignedSet));
    MG_RETURN_IF_ERROR(checkDType(c, 1, kSignedSet));
    MG_RETURN_IF_ERROR(checkSameDType(c, 1, 0));
    MG_ASSIGN_OR_RETURN(Dims dims, broadcastDims(c.inputDims(0), c.inputDims(1)));
    if (dims != c.inputDims(0))
      return badInput("slope of shape [{}] does not broadcast to x's shape [{}]",
                      dimsStr(c.inputDims(1)), dimsStr(c.inputDims(0)));
    c.setOutput(0, c.inputType(0));
    return Status::success();
  };
  r.add(std::move(prelu));

  OpSchema clip;
  clip.name = "Clip";
  clip.minInputs = 1;
  clip.maxInputs = 3;
  clip.attrs = {{"min", K::kFloat}, {"max", K::kFloat}};  // opset < 11 form, accepted
  clip.traits = kElementwise | kActivation;
  clip.doc = "clamp(x, min, max); operands 1 (min) and 2 (max) are optional scalars";
  clip.infer = [](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, kNumericSet));
    for (size_t i = 1; i < c.numInputs(); ++i) {
      if (!c.hasInput(i)) continue;
      MG_RETURN_IF_ERROR(checkSameDType(c, i, 0));
      if (c.inputType(i).numel() != 1)
        return badInput("operand {} ({}) has shape [{}], expected a scalar", i,
                        i == 1 ? "min" : "max", dimsStr(c.inputDims(i)));
    }
    c.setOutput(0, c.inputType(0));
    return Status::success();
  };
  r.add(std::move(clip));
}

void registerBinary(OpRegistry& r) {
  addBroadcast(r, "Add", kNumericSet, kCommutativeTraits, {}, "a + b");
  addBroadcast(r, "Sub", kNumericSet, kBinaryTraits, {}, "a - b");
  addBroadcast(r, "Mul", kNumericSet, kCommutativeTraits, {}, "a * b");
  addBroadcast(r, "Div", kNumericSet, kBinaryTraits, {}, "a / b (integers truncate toward zero)");
  addBroadcast(r, "Mod", kNumericSet, kBinaryTraits, {{"fmod", K::kInt}},
               "remainder: fmod = 0 takes the divisor's sign, fmod = 1 the dividend's");
  addBroadcast(r, "Max", kNumericSet, kCommutativeTraits, {}, "elementwise max of 1+ operands",
               false, 1, -1);
  addBroadcast(r, "Min", kNumericSet, kCommutativeTraits, {}, "elementwise min of 1+ operands",
               false, 1, -1);
  addBroadcast(r, "Sum", kFloatSet, kCommutativeTraits, {}, "sum of 1+ operands", false, 1, -1);
  addBroadcast(r, "Mean", kFloatSet, kCommutativeTraits, {}, "mean of 1+ operands", false, 1, -1);
  addBroadcast(r, "Equal", kAllSet, kCommutativeTraits, {}, "a == b", true);
  addBroadcast(r, "Less", kNumericSet, kBinaryTraits, {}, "a < b", true);
  addBroadcast(r, "Greater", kNumericSet, kBinaryTraits, {}, "a > b", true);
  addBroadcast(r, "LessOrEqual", kNumericSet, kBinaryTraits, {}, "a <= b", true);
  addBroadcast(r, "GreaterOrEqual", kNumericSet, kBinaryTraits, {}, "a >= b", true);
  addBroadcast(r, "And", kBoolSet, kCommutativeTraits, {}, "a && b");
  addBroadcast(r, "Or", kBoolSet, kCommutativeTraits, {}, "a || b");
  addBroadcast(r, "Xor", kBoolSet, kCommutativeTraits, {}, "a != b");
  addBroadcast(r, "BitShift", kUnsignedIntSet, kBinaryTraits,
               {{"direction", K::kString, true}}, "a << b or a >> b (shifts >= width give 0)");
  addBroadcast(r, "BitwiseAnd", kIntSet, kCommutativeTraits, {}, "a & b");
  addBroadcast(r, "BitwiseOr", kIntSet, kCommutativeTraits, {}, "a | b");
  addBroadcast(r, "BitwiseXor", kIntSet, kCommutativeTraits, {}, "a ^ b");

  OpSchema pow;
  pow.name = "Pow";
  pow.minInputs = pow.maxInputs = 2;
  pow.traits = kBinaryTraits;
  pow.doc = "a^b; the exponent's type may differ from the base's; the result has the base's";
  pow.infer = [](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, kNumericSet));
    MG_RETURN_IF_ERROR(checkDType(c, 1, kNumericSet));
    MG_ASSIGN_OR_RETURN(Dims dims, broadcastOperands(c, 0));
    c.setOutput(0, {c.inputDType(0), dims});
    return Status::success();
  };
  r.add(std::move(pow));

  OpSchema where;
  where.name = "Where";
  where.minInputs = where.maxInputs = 3;
  where.traits = kBinaryTraits;
  where.doc = "cond ? x : y, the three broadcast together";
  where.infer = [](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, kBoolSet));
    MG_RETURN_IF_ERROR(checkDType(c, 1, kAllSet));
    MG_RETURN_IF_ERROR(checkDType(c, 2, kAllSet));
    MG_RETURN_IF_ERROR(checkSameDType(c, 2, 1));
    MG_ASSIGN_OR_RETURN(Dims dims, broadcastOperands(c, 0));
    c.setOutput(0, {c.inputDType(1), dims});
    return Status::success();
  };
  r.add(std::move(where));
}

void registerCasts(OpRegistry& r) {
  OpSchema cast;
  cast.name = "Cast";
  cast.attrs = {{"to", K::kInt, true}, {"saturate", K::kInt}};
  cast.traits = kUnaryTraits;
  cast.doc = "converts to element type `to` (floats to integers truncate; to bool is x != 0)";
  cast.infer = [](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, kAllSet));
    int64_t to = c.attrs().getInt("to", 0);
    DType t = static_cast<DType>(to);
    if (to < 0 || to >= 64 || !inSet(t, kAllSet))
      return unsupported("Cast to element type {} is not supported, expected one of {}", to,
                         describeSet(kAllSet));
    c.setOutput(0, {t, c.inputDims(0)});
    return Status::success();
  };
  r.add(std::move(cast));

  OpSchema castLike;
  castLike.name = "CastLike";
  castLike.minInputs = castLike.maxInputs = 2;
  castLike.attrs = {{"saturate", K::kInt}};
  castLike.traits = kElementwise;
  castLike.doc = "Cast to the element type of operand 1";
  castLike.infer = [](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, kAllSet));
    MG_RETURN_IF_ERROR(checkDType(c, 1, kAllSet));
    c.setOutput(0, {c.inputDType(1), c.inputDims(0)});
    return Status::success();
  };
  r.add(std::move(castLike));
}

}  // namespace

void registerElementwiseOps(OpRegistry& r) {
  registerUnaryMath(r);
  registerActivations(r);
  registerBinary(r);
  registerCasts(r);
}

}  // namespace magneto
