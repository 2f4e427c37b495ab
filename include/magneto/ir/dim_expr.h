// Symbolic dimensions (dynamic shapes, docs/DYNAMIC_SHAPES.md): an integer expression over named
// symbols (the model's dim_params given to --dynamic).
//
// Canonical form: a sum of terms coeff * atom1 * atom2 * ..., where an atom is a symbol,
// floor(E / c) for a constant c >= 2 and an expression E that is reduced (the gcd of E's non-constant
// coefficients and c is 1, every non-constant coefficient and the constant lie in [0, c)), or
// min(E, c) / max(E, c) for a constant c and a non-constant E without a constant term (the
// constant is moved out: min(E + k, c) = min(E, c - k) + k; a slice's end clamping a count,
// keep[:300], is min(count, 300)). ceil and mod are rewritten into floor (ceil(E/c) =
// floor((E+c-1)/c), E mod c = E - c*floor(E/c)), terms are sorted and merged, zero terms
// dropped. So two expressions equal as functions are usually equal as objects, and two equal
// objects are always equal functions; `==` compares canonical forms.
//
// Printed as "2*N*T+1", "floor((T+1)/2)", "-N+3", "min(N, 300)"; parse() reads that back (and
// also ceil(E/c), mod(E, c), and parentheses). Emitted as postfix code in the DimOp format of
// runtime/common/mg_abi_tables.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "magneto/support/status.h"

namespace magneto {

// Values of the symbols, by name.
using DimBinding = std::map<std::string, int64_t>;

class DimExpr {
 public:
  DimExpr() = default;  // the constant 0
  DimExpr(int64_t c);   // NOLINT: a constant converts implicitly
  static DimExpr symbol(const std::string& name);

  bool isConstant() const;
  // Whether the expression is one min(E, c) or max(E, c).
  bool isMinMax() const;
  // The constant's value (precondition: isConstant()).
  int64_t constant() const;
  // The floor divisions, mins and maxes the expression's terms multiply (each as an expression
  // of its own): the coordinates a fit may be linear in.
  std::vector<DimExpr> floorAtoms() const;
  // The symbols the expression mentions, sorted.
  std::vector<std::string> symbols() const;

  DimExpr operator+(const DimExpr& o) const;
  DimExpr operator-(const DimExpr& o) const;
  DimExpr operator*(const DimExpr& o) const;
  DimExpr operator-() const;
  // Division rounding toward minus infinity / plus infinity, and the matching remainder, by a
  // positive constant (an error for c < 1).
  Expected<DimExpr> floorDiv(int64_t c) const;
  Expected<DimExpr> ceilDiv(int64_t c) const;
  Expected<DimExpr> mod(int64_t c) const;
  // min(E, c) and max(E, c) for a constant c.
  DimExpr minWith(int64_t c) const;
  DimExpr maxWith(int64_t c) const;

  // The value at `b`; an error naming the symbol when one is unbound, or on int64 overflow.
  Expected<int64_t> evaluate(const DimBinding& b) const;

  std::string str() const;
  static Expected<DimExpr> parse(const std::string& text);

  // Appends the postfix program (mgrt::abi::DimOp codes, ending with kDimEnd) to `code`;
  // `symbolIndex` gives each symbol's index in the package's symbol table (an error for a symbol
  // it does not have).
  Status emit(const std::map<std::string, int>& symbolIndex, std::vector<int64_t>* code) const;

  bool operator==(const DimExpr& o) const { return key() == o.key(); }
  bool operator!=(const DimExpr& o) const { return !(*this == o); }
  bool operator<(const DimExpr& o) const { return key() < o.key(); }

 private:
  enum class Fn : uint8_t { kFloor, kMin, kMax };
  struct Atom {
    std::string sym;                     // a symbol, or empty for a function of `arg`:
    std::shared_ptr<const DimExpr> arg;  // floor(arg / div), min(arg, div) or max(arg, div)
    int64_t div = 0;
    Fn fn = Fn::kFloor;
    std::string key() const;
  };
  using Monomial = std::vector<Atom>;  // sorted by key; repeats are powers
  struct Term {
    Monomial atoms;
    int64_t coeff = 0;
  };
  static std::string monoKey(const Monomial& m);
  void normalize();
  std::string key() const { return str(); }
  static DimExpr fromTerm(Term t);
  static DimExpr floorAtom(const DimExpr& reduced, int64_t c);
  DimExpr clampWith(int64_t c, Fn fn) const;

  std::vector<Term> terms_;  // canonical: sorted by monomial (constant last), no zero coeffs
};

// A graph's named dimension: declared range (inclusive) and the values to tune for.
struct DimSymbol {
  std::string name;
  int64_t lo = 1;
  int64_t hi = 1;
  std::vector<int64_t> opt;
  // A data symbol (docs/DYNAMIC_SHAPES.md, "Data-dependent extents"): its value is the extent a
  // node computes at run time (NonZero's count, Compress's kept slices, TopK's run-time k), not an
  // input dim. Its range may start at 0; the node producing it is the one whose result has the lone
  // symbol as a dim while none of its operands mentions it (dataSymbolProducer, symbolic.h).
  bool data = false;
};

}  // namespace magneto
