// The expressions that generated GPU code computes for the elementwise ops, one row per op: the
// one place where an op's formula in a map functor is written. The activations are not here:
// their formulas are the table of runtime/common/mg_acts.h, which generated code calls
// (mgrt::acts::fn::<Id><T>).
//
// Readers: lower_map.cpp (the float32 functors and fused chains, MgElementwise), lower_opset.cpp
// (the float64 column) and lowering_table.cpp, which gives every op here its lowering.
// Adding an op: one row, and its schema in src/ops; the formula is the CPU runtime's
// (runtime/cpu/k_elementwise*.cpp), in the same precision, so that both targets agree.
#pragma once

namespace magneto {
namespace gpu {

// Unary math: fmt formats of the operand's expression ("fabsf({})" of "a0" is "fabsf(a0)").
struct UnaryMathExpr {
  const char* op;
  const char* f32;
  const char* f64;
};
inline constexpr UnaryMathExpr kUnaryMathExprs[] = {
    {"Abs", "fabsf({})", "fabs({})"},
    {"Neg", "(-{})", "-{}"},
    {"Exp", "expf({})", "exp({})"},
    {"Log", "logf({})", "log({})"},
    {"Sqrt", "sqrtf({})", "sqrt({})"},
    {"Reciprocal", "(1.f / {})", "1.0 / {}"},
    {"Floor", "floorf({})", "floor({})"},
    {"Ceil", "ceilf({})", "ceil({})"},
    {"Round", "rintf({})", "rint({})"},
    {"Erf", "erff({})", "erf({})"},
    // A NaN: the float64 form returns it, as the CPU's SignOp does for both types; the float32
    // form gives 0.
    {"Sign", "({0} > 0.f ? 1.f : ({0} < 0.f ? -1.f : 0.f))",
     "{0} != {0} ? {0} : ({0} > 0.0 ? 1.0 : ({0} < 0.0 ? -1.0 : 0.0))"},
    {"Sin", "sinf({})", "sin({})"},
    {"Cos", "cosf({})", "cos({})"},
    {"Tan", "tanf({})", "tan({})"},
    {"Asin", "asinf({})", "asin({})"},
    {"Acos", "acosf({})", "acos({})"},
    {"Atan", "atanf({})", "atan({})"},
    {"Sinh", "sinhf({})", "sinh({})"},
    {"Cosh", "coshf({})", "cosh({})"},
    {"Asinh", "asinhf({})", "asinh({})"},
    {"Acosh", "acoshf({})", "acosh({})"},
    {"Atanh", "atanhf({})", "atanh({})"},
};

// Binary arithmetic: fmt formats of the operands {0}, {1} over float32 and over the integer types
// (nullptr: float32 only). Sum, Max and Min fold more operands pairwise, Mean folds with Add.
struct BinaryExpr {
  const char* op;
  const char* f32;
  const char* integer;
};
inline constexpr BinaryExpr kBinaryExprs[] = {
    {"Add", "({0} + {1})", "({0} + {1})"},
    {"Sum", "({0} + {1})", "({0} + {1})"},
    {"Sub", "({0} - {1})", "({0} - {1})"},
    {"Mul", "({0} * {1})", "({0} * {1})"},
    {"Div", "({0} / {1})", "({0} / {1})"},
    {"Pow", "powf({0}, {1})", nullptr},
    {"Max", "fmaxf({0}, {1})", "({0} > {1} ? {0} : {1})"},
    {"Min", "fminf({0}, {1})", "({0} < {1} ? {0} : {1})"},
    {"PRelu", "({0} < 0.f ? {0} * {1} : {0})", nullptr},
};

// Comparisons and logic, over the loaded operands a0 and a1 of any type; the result is bool.
struct CompareExpr {
  const char* op;
  const char* expr;
};
inline constexpr CompareExpr kCompareExprs[] = {
    {"Equal", "a0 == a1"},
    {"Less", "a0 < a1"},
    {"Greater", "a0 > a1"},
    {"LessOrEqual", "a0 <= a1"},
    {"GreaterOrEqual", "a0 >= a1"},
    {"And", "a0 && a1"},
    {"Or", "a0 || a1"},
    {"Xor", "(a0 != 0) != (a1 != 0)"},
};

}  // namespace gpu
}  // namespace magneto
