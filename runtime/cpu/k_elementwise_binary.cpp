// Reference kernels of the elementwise family, part 2: numpy-broadcasting binary arithmetic,
// comparisons and logic, the variadic Max/Min/Sum/Mean, PRelu, Pow, Where, Cast and CastLike.
//
// Integer arithmetic wraps (computed in uint64) instead of overflowing, and integer division or
// modulo by zero fails the kernel with a message: a data-dependent error must never crash the
// process that runs a generated package.
#include <algorithm>
#include <cmath>

#include "k_elementwise_impl.h"

namespace mgrt {
namespace ew {
namespace {

struct BinaryBase {
  static constexpr bool kBoolOut = false;
  explicit BinaryBase(const Attrs&) {}
  mutable const char* error = nullptr;  // set by a functor on a data-dependent failure
};

template <typename C>
constexpr bool kWraps = std::is_integral<C>::value && !std::is_same<C, bool>::value;

// Two operands broadcast to the result; output T (or bool for comparisons).
template <typename Op, typename Types>
int binaryKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 2, Op::kName, ctx)) return rc;
  if (int rc = needOutputs(nout, 1, Op::kName, ctx)) return rc;
  if (in[1].dtype != in[0].dtype)
    return ctx.fail("%s: operand types differ (%s and %s)", Op::kName, dtypeLabel(in[0].dtype),
                    dtypeLabel(in[1].dtype));
  const Tensor* ops[2] = {&in[0], &in[1]};
  Broadcaster b(out[0], ops, 2, Op::kName, ctx);
  if (!b.ok()) return 1;
  const Op op(a);
  return visitType(Types{}, in[0].dtype, ctx, Op::kName, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using O = std::conditional_t<Op::kBoolOut, bool, T>;
    if (out[0].dtype != dtypeOf<O>())
      return ctx.fail("%s: result type %s, expected %s", Op::kName, dtypeLabel(out[0].dtype),
                      dtypeLabel(dtypeOf<O>()));
    const T* x0 = in[0].as<T>();
    const T* x1 = in[1].as<T>();
    O* y = out[0].as<O>();
    b.run([&](int64_t i, const int64_t* o) { y[i] = store<O>(op(load(x0[o[0]]), load(x1[o[1]]))); });
    if (op.error) return ctx.fail("%s: %s", Op::kName, op.error);
    return 0;
  });
}

struct AddOp : BinaryBase {
  static constexpr const char* kName = "Add";
  using BinaryBase::BinaryBase;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kWraps<C>) return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else return a + b;
  }
};
struct SubOp : BinaryBase {
  static constexpr const char* kName = "Sub";
  using BinaryBase::BinaryBase;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kWraps<C>) return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
    else return a - b;
  }
};
struct MulOp : BinaryBase {
  static constexpr const char* kName = "Mul";
  using BinaryBase::BinaryBase;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kWraps<C>) return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else return a * b;
  }
};
// Integer division truncates toward zero (C semantics, as onnxruntime).
struct DivOp : BinaryBase {
  static constexpr const char* kName = "Div";
  using BinaryBase::BinaryBase;
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kWraps<C>) {
      if (b == 0) {
        error = "integer division by zero";
        return 0;
      }
      if constexpr (std::is_signed<C>::value)
        if (b == -1) return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(a));
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
};
// fmod = 0: the result takes the divisor's sign (Python); fmod = 1: the dividend's (C fmod).
struct ModOp {
  static constexpr const char* kName = "Mod";
  static constexpr bool kBoolOut = false;
  bool cFmod;
  mutable const char* error = nullptr;
  explicit ModOp(const Attrs& a) : cFmod(a.i("fmod", 0) != 0) {}
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (kWraps<C>) {
      if (b == 0) {
        error = "integer modulo by zero";
        return 0;
      }
      if constexpr (std::is_signed<C>::value) {
        if (b == -1) return 0;
        C r = static_cast<C>(a % b);
        if (!cFmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    } else {
      C r = std::fmod(a, b);
      if (!cFmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r += b;
      return r;
    }
  }
};

template <typename C>
inline bool isNan(C v) {
  if constexpr (std::is_floating_point<C>::value) return std::isnan(v);
  else return false;
}

// Max and Min propagate NaN (numpy's maximum/minimum).
struct MaxOp : BinaryBase {
  static constexpr const char* kName = "Max";
  using BinaryBase::BinaryBase;
  template <typename C>
  C operator()(C a, C b) const { return isNan(a) ? a : (isNan(b) ? b : (a < b ? b : a)); }
};
struct MinOp : BinaryBase {
  static constexpr const char* kName = "Min";
  using BinaryBase::BinaryBase;
  template <typename C>
  C operator()(C a, C b) const { return isNan(a) ? a : (isNan(b) ? b : (b < a ? b : a)); }
};

#define MG_COMPARE(NAME, EXPR)                    \
  struct NAME##Op : BinaryBase {                  \
    static constexpr const char* kName = #NAME;   \
    static constexpr bool kBoolOut = true;        \
    using BinaryBase::BinaryBase;                 \
    template <typename C>                         \
    bool operator()(C a, C b) const {             \
      return EXPR;                                \
    }                                             \
  };
MG_COMPARE(Equal, a == b)
MG_COMPARE(Less, a < b)
MG_COMPARE(Greater, a > b)
MG_COMPARE(LessOrEqual, a <= b)
MG_COMPARE(GreaterOrEqual, a >= b)
#undef MG_COMPARE

#define MG_BITS(NAME, EXPR)                       \
  struct NAME##Op : BinaryBase {                  \
    static constexpr const char* kName = #NAME;   \
    using BinaryBase::BinaryBase;                 \
    template <typename C>                         \
    C operator()(C a, C b) const {                \
      return static_cast<C>(EXPR);                \
    }                                             \
  };
MG_BITS(And, a && b)
MG_BITS(Or, a || b)
MG_BITS(Xor, a != b)
MG_BITS(BitwiseAnd, a & b)
MG_BITS(BitwiseOr, a | b)
MG_BITS(BitwiseXor, a ^ b)
#undef MG_BITS

// Shifts by the bit width or more give 0 (C++ leaves them undefined).
struct BitShiftOp {
  static constexpr const char* kName = "BitShift";
  static constexpr bool kBoolOut = false;
  bool left;
  mutable const char* error = nullptr;
  explicit BitShiftOp(const Attrs& a) : left(a.s("direction", "") == "LEFT") {}
  template <typename C>
  C operator()(C a, C b) const {
    if (b >= sizeof(C) * 8) return 0;
    return static_cast<C>(left ? static_cast<uint64_t>(a) << b : a >> b);
  }
};

// ---- variadic Max / Min / Sum / Mean -----------------------------------------------------------

template <typename Op, typename Types, bool kMean = false>
int variadicKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 1, Op::kName, ctx)) return rc;
  if (int rc = needOutputs(nout, 1, Op::kName, ctx)) return rc;
  for (int k = 1; k < nin; ++k) {
    if (!in[k].present()) return ctx.fail("%s: operand %d is missing", Op::kName, k);
    if (in[k].dtype != in[0].dtype)
      return ctx.fail("%s: operand %d has type %s, expected %s", Op::kName, k,
                      dtypeLabel(in[k].dtype), dtypeLabel(in[0].dtype));
  }
  if (out[0].dtype != in[0].dtype) return ctx.fail("%s: result type differs from operands", Op::kName);
  const Op op(a);
  return visitType(Types{}, in[0].dtype, ctx, Op::kName, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    T* y = out[0].as<T>();
    // Accumulate in the compute type, one operand at a time, over the broadcast result.
    std::vector<C> acc(static_cast<size_t>(out[0].numel()));
    for (int k = 0; k < nin; ++k) {
      const Tensor* ops[1] = {&in[k]};
      Broadcaster b(out[0], ops, 1, Op::kName, ctx);
      if (!b.ok()) return 1;
      const T* x = in[k].as<T>();
      if (k == 0) b.run([&](int64_t i, const int64_t* o) { acc[i] = load(x[o[0]]); });
      else b.run([&](int64_t i, const int64_t* o) { acc[i] = op(acc[i], load(x[o[0]])); });
    }
    for (size_t i = 0; i < acc.size(); ++i) {
      if constexpr (kMean) y[i] = store<T>(acc[i] / static_cast<C>(nin));
      else y[i] = store<T>(acc[i]);
    }
    return 0;
  });
}

struct SumOp : AddOp {
  static constexpr const char* kName = "Sum";
  using AddOp::AddOp;
};
struct MeanOp : AddOp {
  static constexpr const char* kName = "Mean";
  using AddOp::AddOp;
};

// ---- PRelu: slope broadcast to X ---------------------------------------------------------------

int preluKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 2, "PRelu", ctx)) return rc;
  if (int rc = needOutputs(nout, 1, "PRelu", ctx)) return rc;
  if (in[1].dtype != in[0].dtype || out[0].dtype != in[0].dtype)
    return ctx.fail("PRelu: operand types differ");
  const Tensor* ops[2] = {&in[0], &in[1]};
  Broadcaster b(out[0], ops, 2, "PRelu", ctx);
  if (!b.ok()) return 1;
  return visitType(SignedTypes{}, in[0].dtype, ctx, "PRelu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0].as<T>();
    const T* s = in[1].as<T>();
    T* y = out[0].as<T>();
    b.run([&](int64_t i, const int64_t* o) {
      auto v = load(x[o[0]]);
      y[i] = v < decltype(v)(0) ? store<T>(MulOp(a)(v, load(s[o[1]]))) : x[o[0]];
    });
    return 0;
  });
}

// ---- Pow: base and exponent types may differ; the result has the base's type -----------------

template <typename C, typename E>
C powValue(C base, E exp) {
  if constexpr (std::is_floating_point<C>::value) {
    return std::pow(base, static_cast<C>(exp));
  } else if constexpr (std::is_integral<E>::value) {
    // Integer power by squaring, wrapping like the other integer ops.
    if (exp < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed<C>::value)
        if (base == -1) return (exp % 2 == 0) ? 1 : -1;
      return 0;
    }
    uint64_t r = 1, b = static_cast<uint64_t>(base);
    uint64_t e = static_cast<uint64_t>(exp);
    while (e) {
      if (e & 1) r *= b;
      b *= b;
      e >>= 1;
    }
    return static_cast<C>(r);
  } else {
    return convert<C>(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  }
}

// The exponent is read once into one of three carriers that hold every exponent type's values
// exactly (double for the floating types, int64 for the integers but uint64, uint64), so that the
// broadcasting loop exists for 3 exponent types instead of 12: Pow's 144 loops were a third of
// this file's compile time, which every package build pays.
template <typename E>
using PowCarrier = std::conditional_t<
    std::is_floating_point<Compute<E>>::value, double,
    std::conditional_t<std::is_same<E, uint64_t>::value, uint64_t, int64_t>>;

int powKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 2, "Pow", ctx)) return rc;
  if (int rc = needOutputs(nout, 1, "Pow", ctx)) return rc;
  if (out[0].dtype != in[0].dtype) return ctx.fail("Pow: result type differs from the base's");
  const Tensor* ops[2] = {&in[0], &in[1]};
  Broadcaster b(out[0], ops, 2, "Pow", ctx);
  if (!b.ok()) return 1;
  std::vector<double> expF;
  std::vector<int64_t> expI;
  std::vector<uint64_t> expU;
  int carrier = 0;  // 0: expF, 1: expI, 2: expU
  int rc = visitType(NumericTypes{}, in[1].dtype, ctx, "Pow", [&](auto expTag) {
    using E = typename decltype(expTag)::type;
    using W = PowCarrier<E>;
    auto fill = [&](std::vector<W>& dst) {
      const E* e = in[1].as<E>();
      dst.resize(static_cast<size_t>(in[1].numel()));
      for (size_t i = 0; i < dst.size(); ++i) dst[i] = static_cast<W>(load(e[i]));
    };
    if constexpr (std::is_same<W, double>::value) fill(expF), carrier = 0;
    else if constexpr (std::is_same<W, int64_t>::value) fill(expI), carrier = 1;
    else fill(expU), carrier = 2;
    return 0;
  });
  if (rc) return rc;
  return visitType(NumericTypes{}, in[0].dtype, ctx, "Pow", [&](auto baseTag) {
    using T = typename decltype(baseTag)::type;
    const T* x = in[0].as<T>();
    T* y = out[0].as<T>();
    auto run = [&](const auto* e) {
      b.run([&](int64_t i, const int64_t* o) { y[i] = store<T>(powValue(load(x[o[0]]), e[o[1]])); });
      return 0;
    };
    return carrier == 0 ? run(expF.data()) : carrier == 1 ? run(expI.data()) : run(expU.data());
  });
}

// ---- Where(cond, X, Y) -------------------------------------------------------------------------

int whereKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 3, "Where", ctx)) return rc;
  if (int rc = needOutputs(nout, 1, "Where", ctx)) return rc;
  if (in[0].dtype != kBool)
    return ctx.fail("Where: condition has type %s, expected bool", dtypeLabel(in[0].dtype));
  if (in[1].dtype != in[2].dtype || out[0].dtype != in[1].dtype)
    return ctx.fail("Where: X and Y types differ (%s and %s)", dtypeLabel(in[1].dtype),
                    dtypeLabel(in[2].dtype));
  const Tensor* ops[3] = {&in[0], &in[1], &in[2]};
  Broadcaster b(out[0], ops, 3, "Where", ctx);
  if (!b.ok()) return 1;
  return visitType(AllTypes{}, in[1].dtype, ctx, "Where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* c = in[0].as<bool>();
    const T* x = in[1].as<T>();
    const T* yv = in[2].as<T>();
    T* y = out[0].as<T>();
    b.run([&](int64_t i, const int64_t* o) { y[i] = c[o[0]] ? x[o[1]] : yv[o[2]]; });
    return 0;
  });
}

// ---- Cast / CastLike ---------------------------------------------------------------------------

int castTo(const Tensor& src, Tensor& dst, const char* op, Ctx& ctx) {
  if (src.numel() != dst.numel()) return ctx.fail("%s: result size differs from the operand's", op);
  return visitType(AllTypes{}, src.dtype, ctx, op, [&](auto srcTag) {
    using S = typename decltype(srcTag)::type;
    return visitType(AllTypes{}, dst.dtype, ctx, op, [&](auto dstTag) {
      using D = typename decltype(dstTag)::type;
      const S* x = src.as<S>();
      D* y = dst.as<D>();
      for (int64_t i = 0; i < src.numel(); ++i) y[i] = convert<D>(x[i]);
      return 0;
    });
  });
}

int castKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 1, "Cast", ctx)) return rc;
  if (int rc = needOutputs(nout, 1, "Cast", ctx)) return rc;
  int64_t to = a.i("to", out[0].dtype);
  if (to != out[0].dtype)
    return ctx.fail("Cast: result type %s, but to = %lld", dtypeLabel(out[0].dtype), static_cast<long long>(to));
  return castTo(in[0], out[0], "Cast", ctx);
}

int castLikeKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = needInputs(in, nin, 2, "CastLike", ctx)) return rc;
  if (int rc = needOutputs(nout, 1, "CastLike", ctx)) return rc;
  if (out[0].dtype != in[1].dtype) return ctx.fail("CastLike: result type differs from target_type's");
  return castTo(in[0], out[0], "CastLike", ctx);
}

const KernelEntry kBinaryTable[] = {
    {"Add", binaryKernel<AddOp, NumericTypes>},
    {"Sub", binaryKernel<SubOp, NumericTypes>},
    {"Mul", binaryKernel<MulOp, NumericTypes>},
    {"Div", binaryKernel<DivOp, NumericTypes>},
    {"Mod", binaryKernel<ModOp, NumericTypes>},
    {"Pow", powKernel},
    {"Max", variadicKernel<MaxOp, NumericTypes>},
    {"Min", variadicKernel<MinOp, NumericTypes>},
    {"Sum", variadicKernel<SumOp, FloatTypes>},
    {"Mean", variadicKernel<MeanOp, FloatTypes, true>},
    {"Equal", binaryKernel<EqualOp, AllTypes>},
    {"Less", binaryKernel<LessOp, NumericTypes>},
    {"Greater", binaryKernel<GreaterOp, NumericTypes>},
    {"LessOrEqual", binaryKernel<LessOrEqualOp, NumericTypes>},
    {"GreaterOrEqual", binaryKernel<GreaterOrEqualOp, NumericTypes>},
    {"And", binaryKernel<AndOp, BoolTypes>},
    {"Or", binaryKernel<OrOp, BoolTypes>},
    {"Xor", binaryKernel<XorOp, BoolTypes>},
    {"BitShift", binaryKernel<BitShiftOp, UnsignedIntTypes>},
    {"BitwiseAnd", binaryKernel<BitwiseAndOp, IntTypes>},
    {"BitwiseOr", binaryKernel<BitwiseOrOp, IntTypes>},
    {"BitwiseXor", binaryKernel<BitwiseXorOp, IntTypes>},
    {"PRelu", preluKernel},
    {"Where", whereKernel},
    {"Cast", castKernel},
    {"CastLike", castLikeKernel},
    {nullptr, nullptr},
};

}  // namespace

const KernelEntry* elementwiseBinaryKernels() { return kBinaryTable; }

}  // namespace ew
}  // namespace mgrt
