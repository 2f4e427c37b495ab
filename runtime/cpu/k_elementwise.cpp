// Reference kernels of the elementwise family, part 1: the shared helpers (broadcasting, integer
// operands), unary math, activations and Clip; and elementwiseKernels(), the family's table, which
// joins this file's kernels with k_elementwise_binary.cpp's (binary ops, logic, Where, Cast).
//
// Each op is a small functor; one template kernel per arity instantiates it over the dtypes ONNX
// allows for that op. 16-bit floats are stored as Half/BFloat16 and computed in float. Activations
// are generated from the activation table (runtime/common/mg_acts.h) and compute its formulas, as
// applyAct (mg_kernels.h) does, so a fused epilogue and the standalone op give identical numbers.
#include <algorithm>
#include <cmath>

#include "k_elementwise_impl.h"

namespace mgrt {
namespace ew {

const char* dtypeLabel(int32_t dt) {
  switch (dt) {
    case kF32: return "f32";
    case kF64: return "f64";
    case kF16: return "f16";
    case kBF16: return "bf16";
    case kI8: return "i8";
    case kI16: return "i16";
    case kI32: return "i32";
    case kI64: return "i64";
    case kU8: return "u8";
    case kU16: return "u16";
    case kU32: return "u32";
    case kU64: return "u64";
    case kBool: return "bool";
    case kStr: return "string";
    default: return "unknown";
  }
}

bool isIntegerDType(int32_t dt) {
  switch (dt) {
    case kI8: case kI16: case kI32: case kI64: case kU8: case kU16: case kU32: case kU64: return true;
    default: return false;
  }
}

std::vector<int64_t> readInts(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype) {
      case kI8: v[i] = t.as<int8_t>()[i]; break;
      case kI16: v[i] = t.as<int16_t>()[i]; break;
      case kI32: v[i] = t.as<int32_t>()[i]; break;
      case kI64: v[i] = t.as<int64_t>()[i]; break;
      case kU8: v[i] = t.as<uint8_t>()[i]; break;
      case kU16: v[i] = t.as<uint16_t>()[i]; break;
      case kU32: v[i] = t.as<uint32_t>()[i]; break;
      case kU64: v[i] = static_cast<int64_t>(t.as<uint64_t>()[i]); break;
      default: v[i] = 0;
    }
  }
  return v;
}

Broadcaster::Broadcaster(const Tensor& out, const Tensor* const* ins, int n, const char* op,
                         Ctx& ctx)
    : n_(n), rank_(out.rank), size_(out.numel()) {
  for (int d = 0; d < rank_; ++d) dims_[d] = out.dims[d];
  for (int k = 0; k < n; ++k) {
    const Tensor& t = *ins[k];
    if (t.rank > rank_) {
      ok_ = false;
      ctx.fail("%s: operand %d has rank %d, more than the result's %d", op, k, t.rank, rank_);
      return;
    }
    int64_t stride = 1;
    for (int d = rank_ - 1; d >= 0; --d) {
      int td = d - (rank_ - t.rank);
      int64_t dim = td >= 0 ? t.dims[td] : 1;
      if (dim == dims_[d]) {
        strides_[k][d] = dim == 1 ? 0 : stride;
      } else if (dim == 1) {
        strides_[k][d] = 0;
      } else {
        ok_ = false;
        ctx.fail("%s: operand %d dimension %d is %lld, does not broadcast to %lld", op, k, td,
                 static_cast<long long>(dim), static_cast<long long>(dims_[d]));
        return;
      }
      stride *= dim;
    }
    scalar_[k] = t.numel() == 1;
    if (!scalar_[k] && t.numel() != size_) same_ = false;
  }
}

namespace {

// ---- functor building blocks ----------------------------------------------------------------

struct UnaryBase {
  static constexpr bool kBoolOut = false;
  explicit UnaryBase(const Attrs&) {}
};

template <typename C>
inline C wrapNeg(C x) {
  if constexpr (std::is_integral<C>::value) return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
  else return -x;
}

// One input, one output of the same shape; output type T (or bool for predicates).
template <typename Op, typename Types>
int unaryKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 1, Op::kName, ctx)) return rc;
  if (int rc = needOutputs(nout, 1, Op::kName, ctx)) return rc;
  if (in[0].numel() != out[0].numel())
    return ctx.fail("%s: result has %lld elements, operand %lld", Op::kName,
                    static_cast<long long>(out[0].numel()), static_cast<long long>(in[0].numel()));
  const Op op(a);
  return visitType(Types{}, in[0].dtype, ctx, Op::kName, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<Op::kBoolOut, bool, T>;
    if (out[0].dtype != dtypeOf<O>())
      return ctx.fail("%s: result type %s, expected %s", Op::kName, dtypeLabel(out[0].dtype),
                      dtypeLabel(dtypeOf<O>()));
    const T* x = in[0].as<T>();
    O* y = out[0].as<O>();
    int64_t n = in[0].numel();
    for (int64_t i = 0; i < n; ++i) y[i] = store<O>(op(load(x[i])));
    return 0;
  });
}

#define MG_FLOAT_UNARY(NAME, EXPR)                      \
  struct NAME##Op : UnaryBase {                         \
    static constexpr const char* kName = #NAME;         \
    using UnaryBase::UnaryBase;                         \
    template <typename C>                               \
    C operator()(C x) const {                           \
      return EXPR;                                      \
    }                                                   \
  };

MG_FLOAT_UNARY(Floor, std::floor(x))
MG_FLOAT_UNARY(Ceil, std::ceil(x))
MG_FLOAT_UNARY(Round, std::nearbyint(x))  // half to even in the default rounding mode
MG_FLOAT_UNARY(Sqrt, std::sqrt(x))
MG_FLOAT_UNARY(Reciprocal, C(1) / x)
MG_FLOAT_UNARY(Exp, std::exp(x))
MG_FLOAT_UNARY(Log, std::log(x))
MG_FLOAT_UNARY(Sin, std::sin(x))
MG_FLOAT_UNARY(Cos, std::cos(x))
MG_FLOAT_UNARY(Tan, std::tan(x))
MG_FLOAT_UNARY(Asin, std::asin(x))
MG_FLOAT_UNARY(Acos, std::acos(x))
MG_FLOAT_UNARY(Atan, std::atan(x))
MG_FLOAT_UNARY(Sinh, std::sinh(x))
MG_FLOAT_UNARY(Cosh, std::cosh(x))
MG_FLOAT_UNARY(Asinh, std::asinh(x))
MG_FLOAT_UNARY(Acosh, std::acosh(x))
MG_FLOAT_UNARY(Atanh, std::atanh(x))
MG_FLOAT_UNARY(Erf, std::erf(x))
#undef MG_FLOAT_UNARY

struct AbsOp : UnaryBase {
  static constexpr const char* kName = "Abs";
  using UnaryBase::UnaryBase;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned<C>::value) return x;
    else if constexpr (std::is_integral<C>::value) return x < 0 ? wrapNeg(x) : x;
    else return std::fabs(x);
  }
};

struct NegOp : UnaryBase {
  static constexpr const char* kName = "Neg";
  using UnaryBase::UnaryBase;
  template <typename C>
  C operator()(C x) const { return wrapNeg(x); }
};

struct SignOp : UnaryBase {
  static constexpr const char* kName = "Sign";
  using UnaryBase::UnaryBase;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point<C>::value)
      if (std::isnan(x)) return x;
    return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
  }
};

struct IsNaNOp : UnaryBase {
  static constexpr const char* kName = "IsNaN";
  static constexpr bool kBoolOut = true;
  using UnaryBase::UnaryBase;
  template <typename C>
  bool operator()(C x) const { return std::isnan(x); }
};

struct IsInfOp {
  static constexpr const char* kName = "IsInf";
  static constexpr bool kBoolOut = true;
  bool negative, positive;
  explicit IsInfOp(const Attrs& a)
      : negative(a.i("detect_negative", 1) != 0), positive(a.i("detect_positive", 1) != 0) {}
  template <typename C>
  bool operator()(C x) const { return std::isinf(x) && (x > 0 ? positive : negative); }
};

struct NotOp : UnaryBase {
  static constexpr const char* kName = "Not";
  using UnaryBase::UnaryBase;
  bool operator()(bool x) const { return !x; }
};

struct BitwiseNotOp : UnaryBase {
  static constexpr const char* kName = "BitwiseNot";
  using UnaryBase::UnaryBase;
  template <typename C>
  C operator()(C x) const { return static_cast<C>(~x); }
};

// ---- activations -------------------------------------------------------------------------------
// Every entry of the activation table (runtime/common/mg_acts.h) flagged O is a kernel here: one
// functor per entry, generated, that reads alpha and beta from the ONNX attributes the table
// names (with its defaults) and computes the table's formula in the op's compute type.

struct ActParams {
  static constexpr bool kBoolOut = false;
  float alpha, beta;
  ActParams(const Attrs& a, int code) {
    const acts::ActInfo& e = acts::kTable[code];
    alpha = e.alphaAttr[0] ? a.f(e.alphaAttr, static_cast<float>(e.alphaDefault)) : static_cast<float>(e.alphaDefault);
    beta = e.betaAttr[0] ? a.f(e.betaAttr, static_cast<float>(e.betaDefault)) : static_cast<float>(e.betaDefault);
  }
};

#define MG_ACT_OP(id, name, code, params, an, ad, bn, bd, flags, f)        \
  struct id##ActOp : ActParams {                                           \
    static constexpr const char* kName = name;                             \
    explicit id##ActOp(const Attrs& a) : ActParams(a, code) {}             \
    template <typename C>                                                  \
    C operator()(C x) const {                                              \
      return acts::fn::id<C>(x, static_cast<C>(alpha), static_cast<C>(beta)); \
    }                                                                      \
  };
MG_ACTS(MG_ACT_OP)
#undef MG_ACT_OP

// Gelu's `approximate` picks the table's Gelu (erf) or GeluTanh.
struct GeluOp : ActParams {
  static constexpr const char* kName = "Gelu";
  bool tanhApprox;
  explicit GeluOp(const Attrs& a) : ActParams(a, acts::kGelu), tanhApprox(a.s("approximate", "none") == "tanh") {}
  template <typename C>
  C operator()(C x) const {
    return tanhApprox ? acts::fn::GeluTanh<C>(x, C(0), C(0)) : acts::fn::Gelu<C>(x, C(0), C(0));
  }
};

// The kernel of an activation: float types, except Relu (any signed type, as the newest ONNX
// signature) and Gelu (its approximate attribute).
template <typename Op>
struct ActKernel {
  static constexpr KernelFn fn = unaryKernel<Op, FloatTypes>;
};
template <>
struct ActKernel<ReluActOp> {
  static constexpr KernelFn fn = unaryKernel<ReluActOp, SignedTypes>;
};
template <>
struct ActKernel<GeluActOp> {
  static constexpr KernelFn fn = unaryKernel<GeluOp, FloatTypes>;
};

struct ActEntry {
  int code;
  KernelFn fn;
};
#define MG_ACT_KERNEL(id, name, code, params, an, ad, bn, bd, flags, f) {code, ActKernel<id##ActOp>::fn},
const ActEntry kActKernels[] = {MG_ACTS(MG_ACT_KERNEL)};
#undef MG_ACT_KERNEL

struct ShrinkOp {
  static constexpr const char* kName = "Shrink";
  static constexpr bool kBoolOut = false;
  float bias, lambd;
  explicit ShrinkOp(const Attrs& a) : bias(a.f("bias", 0.f)), lambd(a.f("lambd", 0.5f)) {}
  template <typename C>
  C operator()(C x) const {
    // Integers compute in double so that a fractional bias behaves as ONNX's reference does.
    if constexpr (std::is_floating_point<C>::value) {
      if (x < C(-lambd)) return x + C(bias);
      if (x > C(lambd)) return x - C(bias);
      return C(0);
    } else {
      double v = static_cast<double>(x);
      if (v < -lambd) return convert<C>(v + bias);
      if (v > lambd) return convert<C>(v - bias);
      return C(0);
    }
  }
};

// Clip(x, min?, max?): an absent bound does not clip. The old attribute form (min/max attributes,
// opset < 11) is honoured when the operand is absent.
int clipKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 1, "Clip", ctx)) return rc;
  if (int rc = needOutputs(nout, 1, "Clip", ctx)) return rc;
  if (in[0].numel() != out[0].numel() || out[0].dtype != in[0].dtype)
    return ctx.fail("Clip: result does not match the operand");
  for (int k = 1; k < 3 && k < nin; ++k) {
    if (!in[k].present()) continue;
    if (in[k].numel() != 1) return ctx.fail("Clip: bound operand %d must be a scalar", k);
    if (in[k].dtype != in[0].dtype)
      return ctx.fail("Clip: bound operand %d has type %s, expected %s", k, dtypeLabel(in[k].dtype),
                      dtypeLabel(in[0].dtype));
  }
  return visitType(NumericTypes{}, in[0].dtype, ctx, "Clip", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    bool hasLo = nin > 1 && in[1].present(), hasHi = nin > 2 && in[2].present();
    C lo = hasLo ? load(in[1].as<T>()[0]) : C(0);
    C hi = hasHi ? load(in[2].as<T>()[0]) : C(0);
    if (!hasLo && a.has("min")) {
      hasLo = true;
      lo = convert<C>(a.f("min", 0.f));
    }
    if (!hasHi && a.has("max")) {
      hasHi = true;
      hi = convert<C>(a.f("max", 0.f));
    }
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      C v = load(x[i]);
      if (hasLo && v < lo) v = lo;
      if (hasHi && v > hi) v = hi;
      y[i] = store<T>(v);
    }
    return 0;
  });
}

// Shrink on any numeric type follows the newest ONNX signature.
using FloatOnly = FloatTypes;

const KernelEntry kMathTable[] = {
    {"Abs", unaryKernel<AbsOp, NumericTypes>},
    {"Neg", unaryKernel<NegOp, SignedTypes>},
    {"Floor", unaryKernel<FloorOp, FloatOnly>},
    {"Ceil", unaryKernel<CeilOp, FloatOnly>},
    {"Round", unaryKernel<RoundOp, FloatOnly>},
    {"Sqrt", unaryKernel<SqrtOp, FloatOnly>},
    {"Reciprocal", unaryKernel<ReciprocalOp, FloatOnly>},
    {"Exp", unaryKernel<ExpOp, FloatOnly>},
    {"Log", unaryKernel<LogOp, FloatOnly>},
    {"Sin", unaryKernel<SinOp, FloatOnly>},
    {"Cos", unaryKernel<CosOp, FloatOnly>},
    {"Tan", unaryKernel<TanOp, FloatOnly>},
    {"Asin", unaryKernel<AsinOp, FloatOnly>},
    {"Acos", unaryKernel<AcosOp, FloatOnly>},
    {"Atan", unaryKernel<AtanOp, FloatOnly>},
    {"Sinh", unaryKernel<SinhOp, FloatOnly>},
    {"Cosh", unaryKernel<CoshOp, FloatOnly>},
    {"Asinh", unaryKernel<AsinhOp, FloatOnly>},
    {"Acosh", unaryKernel<AcoshOp, FloatOnly>},
    {"Atanh", unaryKernel<AtanhOp, FloatOnly>},
    {"Sign", unaryKernel<SignOp, NumericTypes>},
    {"Erf", unaryKernel<ErfOp, FloatOnly>},
    {"IsNaN", unaryKernel<IsNaNOp, FloatOnly>},
    {"IsInf", unaryKernel<IsInfOp, FloatOnly>},
    {"Not", unaryKernel<NotOp, BoolTypes>},
    {"BitwiseNot", unaryKernel<BitwiseNotOp, IntTypes>},
    {"Shrink", unaryKernel<ShrinkOp, NumericTypes>},
    {"Clip", clipKernel},
    {nullptr, nullptr},
};

}  // namespace

const KernelEntry* elementwiseMathKernels() { return kMathTable; }

const KernelEntry* elementwiseActKernels() {
  static const std::vector<KernelEntry> table = [] {
    std::vector<KernelEntry> t;
    for (const ActEntry& e : kActKernels)
      if (acts::kTable[e.code].has(acts::kO)) t.push_back({acts::kTable[e.code].name, e.fn});
    t.push_back({nullptr, nullptr});
    return t;
  }();
  return table.data();
}

}  // namespace ew

const KernelEntry* elementwiseKernels() {
  static const std::vector<KernelEntry> table = [] {
    std::vector<KernelEntry> t;
    for (const KernelEntry* part : {ew::elementwiseMathKernels(), ew::elementwiseActKernels(),
                                     ew::elementwiseBinaryKernels()})
      for (const KernelEntry* e = part; e->op; ++e) t.push_back(*e);
    t.push_back({nullptr, nullptr});
    return t;
  }();
  return table.data();
}

}  // namespace mgrt
