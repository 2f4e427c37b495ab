// MgElementwise's program (the `program` attribute, documented in k_fused.cpp): parsed into
// instructions once, shared by the reference kernel (k_fused.cpp) and the fast one
// (f_elementwise.cpp) so both read a program the same way and compute the same ops.
#pragma once

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "mg_kernels.h"

namespace mgrt {
namespace fused {

// kAct: any activation of the table (runtime/common/mg_acts.h), by its name.
enum class Code { kAct, kAbs, kNeg, kExp, kLog, kSqrt, kRecip, kFloor, kCeil, kErf,
                  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };

struct Instr {
  Code code;
  Epilogue act;
  int a = -1, b = -1;  // operand slots: [0, nin) inputs, nin + k temps
};

inline bool parseCode(const std::string& op, Instr& in) {
  static const struct { const char* name; Code code; } kCodes[] = {
      {"Abs", Code::kAbs}, {"Neg", Code::kNeg}, {"Exp", Code::kExp}, {"Log", Code::kLog},
      {"Sqrt", Code::kSqrt}, {"Reciprocal", Code::kRecip}, {"Floor", Code::kFloor},
      {"Ceil", Code::kCeil}, {"Erf", Code::kErf},
      {"Add", Code::kAdd}, {"Sub", Code::kSub}, {"Mul", Code::kMul}, {"Div", Code::kDiv},
      {"Pow", Code::kPow}, {"Max", Code::kMax}, {"Min", Code::kMin}};
  for (const auto& c : kCodes)
    if (op == c.name) return in.code = c.code, true;
  Act a = parseAct(op);
  if (a == Act::kNone) return false;
  in.code = Code::kAct;
  in.act.act = a;
  return true;
}

inline bool parseSlot(const std::string& tok, int nin, int& slot) {
  if (tok.size() < 2 || (tok[0] != 'i' && tok[0] != 't')) return false;
  slot = std::atoi(tok.c_str() + 1) + (tok[0] == 't' ? nin : 0);
  return true;
}

inline bool isBinary(Code c) { return c >= Code::kAdd; }

inline float unary(const Instr& in, float x) {
  switch (in.code) {
    case Code::kAct: return applyAct(in.act, x);
    case Code::kAbs: return std::fabs(x);
    case Code::kNeg: return -x;
    case Code::kExp: return std::exp(x);
    case Code::kLog: return std::log(x);
    case Code::kSqrt: return std::sqrt(x);
    case Code::kRecip: return 1.f / x;
    case Code::kFloor: return std::floor(x);
    case Code::kCeil: return std::ceil(x);
    case Code::kErf: return std::erf(x);
    default: return x;
  }
}

inline float binary(Code c, float x, float y) {
  switch (c) {
    case Code::kAdd: return x + y;
    case Code::kSub: return x - y;
    case Code::kMul: return x * y;
    case Code::kDiv: return x / y;
    case Code::kPow: return std::pow(x, y);
    case Code::kMax: return std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y);
    case Code::kMin: return std::isnan(x) || std::isnan(y) ? NAN : (x < y ? x : y);
    default: return x;
  }
}

// Parses a.strings("program") for `nin` fused inputs into `code`; 0, or ctx.fail's status.
inline int parseProgram(const Attrs& a, int nin, std::vector<Instr>& code, Ctx& ctx) {
  std::vector<std::string> program = a.strings("program");
  if (program.empty()) return ctx.fail("MgElementwise: empty program");
  for (const std::string& line : program) {
    std::istringstream ss(line);
    std::string op, tok;
    ss >> op;
    Instr ins;
    if (!parseCode(op, ins)) return ctx.fail("MgElementwise: unknown op '%s'", op.c_str());
    int operands = 0;
    while (ss >> tok) {
      if (tok.rfind("alpha=", 0) == 0) ins.act.alpha = std::strtof(tok.c_str() + 6, nullptr);
      else if (tok.rfind("beta=", 0) == 0) ins.act.beta = std::strtof(tok.c_str() + 5, nullptr);
      else if (!parseSlot(tok, nin, operands++ == 0 ? ins.a : ins.b))
        return ctx.fail("MgElementwise: bad operand '%s'", tok.c_str());
    }
    int limit = nin + static_cast<int>(code.size());
    if (ins.a < 0 || ins.a >= limit || (isBinary(ins.code) && (ins.b < 0 || ins.b >= limit)))
      return ctx.fail("MgElementwise: instruction '%s' reads an undefined slot", line.c_str());
    code.push_back(ins);
  }
  return 0;
}

}  // namespace fused
}  // namespace mgrt
