// The activation table: the one place where an activation's number, ONNX name, attributes with
// their defaults, uses and formula are written. Everything else is generated from it or reads it:
//   - the formulas, as inline templates usable on the host and on the device
//     (mgrt::acts::fn::<Id><T>(x, a, b)) and as one switch over the codes (applyCode<T>): the CPU
//     runtime's applyAct (runtime/cpu/mg_kernels.h), the standalone activation kernels
//     (k_elementwise.cpp), MgElementwise programs (k_fused_program.h), the recurrent ops (CPU
//     k_recurrent_act.h, device mg_recurrent.cuh), the device's applyAct (mg_kcommon.cuh) and the
//     expressions the GPU lowering writes into generated code (codegen/gpu/lower_map.cpp calls
//     fn::<Id><float>; runtime/common is copied beside runtime/kernels/ in every package);
//   - the numbering: the CPU enum Act, the device enum mgk::Act (mg_kparams.h) and the codes the
//     GPU lowering writes into launch parameters;
//   - the compiler's metadata: schemas and attribute defaults of the standalone ops
//     (src/ops/elementwise_ops.cpp, activation_params.cpp), what fuse-epilogue, fuse-elementwise
//     and the recurrent ops accept, the cost model's per-element weight (src/target/op_work.cpp).
//
// X(Id, "Name", code, params, "alphaAttr", alphaDefault, "betaAttr", betaDefault, flags, formula)
//   Id       C++ name: acts::k<Id>, Act::k<Id>, mgk::kAct<Id>, fn::<Id>;
//   "Name"   the ONNX op (and the mg_act value, and the op of an MgElementwise program line);
//   code     the number every runtime and the launch parameters use (never renumber one);
//   params   how many of alpha/beta it takes (0, 1: alpha, 2: alpha and beta), which is also how
//            many of an RNN's activation_alpha/activation_beta it consumes;
//   attrs    the ONNX attributes alpha and beta come from, and their defaults ("" when none);
//   flags    E: a Conv/Gemm/MatMul epilogue (mg_act); R: a name of the recurrent ops'
//            `activations`; O: a standalone ONNX op with a generic kernel and schema; F: fusable
//            into MgElementwise chains (passes/fuse_elementwise.cpp); H: costs a transcendental
//            call per element (the cost model);
//   formula  one expression in x, a (alpha), b (beta) of type T, with the math helpers below
//            (mexp, mlog1p, mtanh, merf, mfabs, mmax, mmin, mclamp01) and constants written T(c).
//
// Adding an activation: one line here (the next free code), then its tests (the sweeps of
// tests/unit/fast_kernels_test.cpp and tests/gpu/kernels_test.cpp iterate this table already; add
// backend node tests or a golden IR test when it needs one). Relu's integer types, Gelu's
// `approximate` (which picks GeluTanh) and Clip's bounds as inputs are the only special cases,
// each handled where the op is registered. A vector fast path (runtime/cpu/f_vmath.h) is optional.
//
// Header-only and dependency-free (the runtime_common layer): compiled by the host compiler, nvcc,
// hipcc and the GPU emulation (plain C++).
#pragma once

#include <math.h>
#include <string.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MG_ACT_FN __host__ __device__ inline
#else
#define MG_ACT_FN inline
#endif

#define MG_ACT_SELU_ALPHA 1.67326319217681884765625
#define MG_ACT_SELU_GAMMA 1.05070102214813232421875

// clang-format off
#define MG_ACTS(X)                                                                                           \
  X(None,            "",                0, 0, "",      0.0,  "",      0.0,  0,                      x)          \
  X(Relu,            "Relu",            1, 0, "",      0.0,  "",      0.0,  kE | kR | kO | kF,      x > T(0) ? x : T(0)) \
  X(LeakyRelu,       "LeakyRelu",       2, 1, "alpha", 0.01, "",      0.0,  kE | kR | kO | kF,      x >= T(0) ? x : x * a) \
  X(Clip,            "Clip",            3, 2, "",      0.0,  "",      0.0,  kE,                     x < a ? a : (x > b ? b : x)) \
  X(Sigmoid,         "Sigmoid",         4, 0, "",      0.0,  "",      0.0,  kE | kR | kO | kF | kH, T(1) / (T(1) + mexp(-x))) \
  X(Tanh,            "Tanh",            5, 0, "",      0.0,  "",      0.0,  kE | kR | kO | kF | kH, mtanh(x)) \
  X(HardSigmoid,     "HardSigmoid",     6, 2, "alpha", 0.2,  "beta",  0.5,  kE | kR | kO | kF,      mclamp01(a * x + b)) \
  X(Elu,             "Elu",             7, 1, "alpha", 1.0,  "",      0.0,  kE | kR | kO | kF | kH, x >= T(0) ? x : a * (mexp(x) - T(1))) \
  X(Gelu,            "Gelu",            8, 0, "",      0.0,  "",      0.0,  kE | kO | kF | kH,      T(0.5) * x * (T(1) + merf(x * T(0.70710678118654752)))) \
  X(HardSwish,       "HardSwish",       9, 0, "",      0.0,  "",      0.0,  kE | kO | kF | kH,      x * mclamp01(x / T(6) + T(0.5))) \
  X(Selu,            "Selu",           10, 2, "alpha", MG_ACT_SELU_ALPHA, "gamma", MG_ACT_SELU_GAMMA, kE | kO | kF | kH, x > T(0) ? b * x : b * (a * mexp(x) - a)) \
  X(Softplus,        "Softplus",       11, 0, "",      0.0,  "",      0.0,  kE | kR | kO | kF | kH, x > T(20) ? x : mlog1p(mexp(x))) \
  X(Swish,           "Swish",          12, 0, "",      0.0,  "",      0.0,  kE,                     x * (T(1) / (T(1) + mexp(-x)))) \
  X(Softsign,        "Softsign",       13, 0, "",      0.0,  "",      0.0,  kR | kO | kF | kH,      x / (T(1) + mfabs(x))) \
  X(Mish,            "Mish",           14, 0, "",      0.0,  "",      0.0,  kO | kF | kH,           x * mtanh(x > T(20) ? x : mlog1p(mexp(x)))) \
  X(ThresholdedRelu, "ThresholdedRelu", 15, 1, "alpha", 1.0, "",      0.0,  kE | kR | kO | kF | kH, x > a ? x : T(0)) \
  X(Celu,            "Celu",           16, 1, "alpha", 1.0,  "",      0.0,  kE | kO | kF | kH,      mmax(T(0), x) + mmin(T(0), a * (mexp(x / a) - T(1)))) \
  X(ScaledTanh,      "ScaledTanh",     17, 2, "",      1.0,  "",      1.0,  kR,                     a * mtanh(b * x)) \
  X(Affine,          "Affine",         18, 2, "",      1.0,  "",      0.0,  kR,                     a * x + b) \
  X(GeluTanh,        "GeluTanh",       19, 0, "",      0.0,  "",      0.0,  kF | kH,                T(0.5) * x * (T(1) + mtanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x))))
// clang-format on

namespace mgrt {
namespace acts {

// Flags (the table's flags column).
enum Flag : unsigned {
  kE = 1u << 0,  // Conv/ConvTranspose/Gemm/MatMul epilogue (mg_act)
  kR = 1u << 1,  // recurrent ops' `activations` name (case-insensitive)
  kO = 1u << 2,  // standalone ONNX op: generic kernel and schema from this table
  kF = 1u << 3,  // fusable into MgElementwise chains
  kH = 1u << 4,  // one transcendental call (or a division) per element, for the cost model
};

// The codes, as acts::k<Id>.
#define MG_ACT_CODE(id, name, code, params, an, ad, bn, bd, flags, f) k##id = code,
enum Code : int { MG_ACTS(MG_ACT_CODE) };
#undef MG_ACT_CODE

// Math helpers of the formulas: float calls the float functions of <math.h> (what std::exp(float)
// and friends call on the host; device functions under nvcc and hipcc), double the double ones.
namespace fn {
MG_ACT_FN float mexp(float x) { return ::expf(x); }
MG_ACT_FN double mexp(double x) { return ::exp(x); }
MG_ACT_FN float mlog1p(float x) { return ::log1pf(x); }
MG_ACT_FN double mlog1p(double x) { return ::log1p(x); }
MG_ACT_FN float mtanh(float x) { return ::tanhf(x); }
MG_ACT_FN double mtanh(double x) { return ::tanh(x); }
MG_ACT_FN float merf(float x) { return ::erff(x); }
MG_ACT_FN double merf(double x) { return ::erf(x); }
MG_ACT_FN float mfabs(float x) { return ::fabsf(x); }
MG_ACT_FN double mfabs(double x) { return ::fabs(x); }
// std::max / std::min's rules (the first operand when unordered): NaN handling as the CPU had it.
template <class T>
MG_ACT_FN T mmax(T p, T q) { return p < q ? q : p; }
template <class T>
MG_ACT_FN T mmin(T p, T q) { return q < p ? q : p; }
template <class T>
MG_ACT_FN T mclamp01(T y) { return y < T(0) ? T(0) : (y > T(1) ? T(1) : y); }

// fn::<Id><T>(x, a, b): the activation's formula.
#define MG_ACT_DEFINE(id, name, code, params, an, ad, bn, bd, flags, formula) \
  template <class T>                                                          \
  MG_ACT_FN T id(T x, T a, T b) {                                             \
    (void)a;                                                                  \
    (void)b;                                                                  \
    return formula;                                                           \
  }
MG_ACTS(MG_ACT_DEFINE)
#undef MG_ACT_DEFINE

// The same constants as the float literals the kernels had (bit-identical results).
static_assert(float(0.70710678118654752) == 0.70710678118654752f, "Gelu constant");
static_assert(float(0.7978845608028654) == 0.7978845608028654f, "GeluTanh constant");
static_assert(float(0.044715) == 0.044715f, "GeluTanh constant");
}  // namespace fn

// The activation of `code` applied to x; x itself for an unknown code.
template <class T>
MG_ACT_FN T applyCode(int code, T x, T a, T b) {
  switch (code) {
#define MG_ACT_CASE(id, name, c, params, an, ad, bn, bd, flags, f) \
  case c: return fn::id<T>(x, a, b);
    MG_ACTS(MG_ACT_CASE)
#undef MG_ACT_CASE
    default: return x;
  }
}

// Host metadata of an entry.
struct ActInfo {
  const char* name;
  int code;
  int params;
  const char* alphaAttr;  // "" when alpha is no ONNX attribute (or there is no alpha)
  double alphaDefault;
  const char* betaAttr;
  double betaDefault;
  unsigned flags;
  const char* formula;  // the formula's text, for documentation
  bool has(unsigned f) const { return (flags & f) == f; }
};

#define MG_ACT_INFO(id, name, code, params, an, ad, bn, bd, flags, formula) \
  {name, code, params, an, ad, bn, bd, flags, #formula},
inline constexpr ActInfo kTable[] = {MG_ACTS(MG_ACT_INFO)};
#undef MG_ACT_INFO
inline constexpr int kCount = static_cast<int>(sizeof(kTable) / sizeof(kTable[0]));

// Entries are in code order (code == index), so a code indexes the table.
#define MG_ACT_ORDER(id, name, c, params, an, ad, bn, bd, flags, f) \
  static_assert(kTable[c].code == c, #id ": codes must be 0, 1, 2, ... in table order");
MG_ACTS(MG_ACT_ORDER)
#undef MG_ACT_ORDER

// Every Id is its Name (None's is ""), so generated code can call fn::<Name>.
constexpr bool equal(const char* p, const char* q) { return *p == *q && (!*p || equal(p + 1, q + 1)); }
constexpr bool sameName(const char* id, const char* name) { return !*name || equal(id, name); }
#define MG_ACT_NAME(id, name, c, params, an, ad, bn, bd, flags, f) \
  static_assert(sameName(#id, name), #id ": the Id must be the Name");
MG_ACTS(MG_ACT_NAME)
#undef MG_ACT_NAME

// The entry of a name (an ONNX op name, an mg_act value or a program op), or null; "" is None.
inline const ActInfo* find(const char* name) {
  for (const ActInfo& a : kTable)
    if (strcmp(a.name, name) == 0) return &a;
  return nullptr;
}

// The entry of a code, or null.
inline const ActInfo* byCode(int code) { return code >= 0 && code < kCount ? &kTable[code] : nullptr; }

// The entry of a name that carries all of `flags`, compared case-insensitively when `anyCase`
// (the recurrent ops' names, as onnxruntime reads them), or null.
inline const ActInfo* find(const char* name, unsigned flags, bool anyCase = false) {
  for (const ActInfo& a : kTable) {
    if (!a.has(flags) || !a.name[0]) continue;
    const char *p = a.name, *q = name;
    for (; *p && *q; ++p, ++q) {
      char u = *p, v = *q;
      if (anyCase) {
        if (u >= 'A' && u <= 'Z') u = static_cast<char>(u - 'A' + 'a');
        if (v >= 'A' && v <= 'Z') v = static_cast<char>(v - 'A' + 'a');
      }
      if (u != v) break;
    }
    if (!*p && !*q) return &a;
  }
  return nullptr;
}

// The code of a name, -1 when it is not in the table.
inline int codeOf(const char* name) {
  const ActInfo* a = find(name);
  return a ? a->code : -1;
}

}  // namespace acts
}  // namespace mgrt
