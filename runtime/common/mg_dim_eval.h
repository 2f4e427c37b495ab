// The evaluator of dimension expressions: the postfix integer programs of a dynamic package's
// dimCode (format: mg_abi_tables.h, DimOp). One expression is the words from `code` up to its
// kDimEnd; kDimConst and kDimSym take the next word as operand. The result is exact int64
// arithmetic or a refusal: an overflow, a division (or mod) by zero, or a malformed program (an
// unknown op, a symbol index out of range, a stack that under- or overflows or does not end with
// exactly one value) gives a non-zero status and leaves *out alone, never a wrong value.
// Division rounds toward minus infinity (kDimFloorDiv; kDimMod is the matching remainder, with
// the divisor's sign) or plus infinity (kDimCeilDiv), whatever the operands' signs.
// Header-only, host and device code (CUDA/HIP: __host__ __device__), C++17, only <cstdint>.
#pragma once

#include <cstdint>

#include "mg_abi_tables.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MG_DIM_EVAL_HD __host__ __device__
#else
#define MG_DIM_EVAL_HD
#endif

namespace mgrt {
namespace abi {

enum DimEvalStatus : int {
  kDimEvalOk = 0,
  kDimEvalOverflow = 1,    // a value left the int64 range
  kDimEvalDivByZero = 2,   // a division or mod by zero
  kDimEvalBadCode = 3,     // not a well-formed program (see above)
};

// The deepest stack an expression may use (the canonical forms the compiler emits need a few).
constexpr int kDimEvalStackDepth = 32;

namespace dim_eval {

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kMin = INT64_MIN;

MG_DIM_EVAL_HD inline bool add(int64_t a, int64_t b, int64_t* r) {
  if ((b > 0 && a > kMax - b) || (b < 0 && a < kMin - b)) return false;
  *r = a + b;
  return true;
}
MG_DIM_EVAL_HD inline bool sub(int64_t a, int64_t b, int64_t* r) {
  if ((b < 0 && a > kMax + b) || (b > 0 && a < kMin + b)) return false;
  *r = a - b;
  return true;
}
MG_DIM_EVAL_HD inline bool mul(int64_t a, int64_t b, int64_t* r) {
  if (a == 0 || b == 0) {
    *r = 0;
    return true;
  }
  if (a > 0) {
    if (b > 0 ? a > kMax / b : b < kMin / a) return false;
  } else {
    if (b > 0 ? a < kMin / b : b < kMax / a) return false;  // a < 0, b < 0: a * b > 0
  }
  *r = a * b;
  return true;
}
// floor(a / b), b != 0; false on overflow (kMin / -1).
MG_DIM_EVAL_HD inline bool floorDiv(int64_t a, int64_t b, int64_t* r) {
  if (a == kMin && b == -1) return false;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  *r = q;
  return true;
}
MG_DIM_EVAL_HD inline bool ceilDiv(int64_t a, int64_t b, int64_t* r) {
  if (a == kMin && b == -1) return false;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0))) ++q;
  *r = q;
  return true;
}
// a - b * floor(a / b): 0 or the sign of b.
MG_DIM_EVAL_HD inline int64_t floorMod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1 overflows for kMin; the remainder is 0 for every a
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

}  // namespace dim_eval

// Evaluates the expression starting at code[0] with symbols[k] the value of symbol k
// (k < numSymbols). On kDimEvalOk, *out is the value and, when `words` is not null, *words the
// expression's length including its kDimEnd.
MG_DIM_EVAL_HD inline int evalDimCode(const int64_t* code, const int64_t* symbols, int numSymbols,
                                      int64_t* out, int64_t* words = nullptr) {
  if (!code || !out) return kDimEvalBadCode;
  int64_t stack[kDimEvalStackDepth];
  int sp = 0;
  int64_t pc = 0;
  for (;;) {
    const int64_t op = code[pc++];
    if (op == kDimEnd) break;
    if (op == kDimConst || op == kDimSym) {
      if (sp == kDimEvalStackDepth) return kDimEvalBadCode;
      const int64_t arg = code[pc++];
      if (op == kDimSym) {
        if (arg < 0 || arg >= numSymbols || !symbols) return kDimEvalBadCode;
        stack[sp++] = symbols[arg];
      } else {
        stack[sp++] = arg;
      }
      continue;
    }
    if (op < kDimAdd || op > kDimMax) return kDimEvalBadCode;
    if (sp < 2) return kDimEvalBadCode;
    const int64_t a = stack[sp - 2], b = stack[sp - 1];
    int64_t r = 0;
    bool ok = true;
    switch (op) {
      case kDimAdd: ok = dim_eval::add(a, b, &r); break;
      case kDimSub: ok = dim_eval::sub(a, b, &r); break;
      case kDimMul: ok = dim_eval::mul(a, b, &r); break;
      case kDimFloorDiv:
      case kDimCeilDiv:
      case kDimMod:
        if (b == 0) return kDimEvalDivByZero;
        if (op == kDimFloorDiv) ok = dim_eval::floorDiv(a, b, &r);
        else if (op == kDimCeilDiv) ok = dim_eval::ceilDiv(a, b, &r);
        else r = dim_eval::floorMod(a, b);
        break;
      case kDimMin: r = a < b ? a : b; break;
      default: r = a > b ? a : b; break;  // kDimMax
    }
    if (!ok) return kDimEvalOverflow;
    stack[sp - 2] = r;
    --sp;
  }
  if (sp != 1) return kDimEvalBadCode;
  *out = stack[0];
  if (words) *words = pc;
  return kDimEvalOk;
}

// A word for a status, for messages.
MG_DIM_EVAL_HD inline const char* dimEvalStatusText(int s) {
  switch (s) {
    case kDimEvalOk: return "ok";
    case kDimEvalOverflow: return "integer overflow";
    case kDimEvalDivByZero: return "division by zero";
    default: return "malformed dimension code";
  }
}

}  // namespace abi
}  // namespace mgrt
