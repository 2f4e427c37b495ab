// Symbolic dimension expressions: canonical forms, evaluation, text, postfix code
// (include/magneto/ir/dim_expr.h).
#include "magneto/ir/dim_expr.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>

#include "mg_abi_tables.h"

namespace magneto {
namespace {

int64_t dimCheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  MG_CHECK(!__builtin_add_overflow(a, b, &r), "dimension expression coefficient overflows int64");
  return r;
}

int64_t dimCheckedMul(int64_t a, int64_t b) {
  int64_t r;
  MG_CHECK(!__builtin_mul_overflow(a, b, &r), "dimension expression coefficient overflows int64");
  return r;
}

int64_t dimFloorDivInt(int64_t a, int64_t c) {  // c > 0
  int64_t q = a / c;
  if ((a % c) != 0 && a < 0) --q;
  return q;
}

bool isPlainSymbol(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.')) return false;
  return s != "floor" && s != "ceil" && s != "mod" && s != "min" && s != "max";
}

std::string symbolText(const std::string& s) {
  return isPlainSymbol(s) ? s : "`" + s + "`";
}

}  // namespace

std::string DimExpr::Atom::key() const {
  if (!sym.empty()) return symbolText(sym);
  const std::string a = arg->str();
  if (fn != Fn::kFloor) return (fn == Fn::kMin ? "min(" : "max(") + a + ", " + std::to_string(div) + ")";
  bool bare = arg->terms_.size() == 1 && arg->terms_[0].coeff == 1 && arg->terms_[0].atoms.size() == 1;
  return "floor(" + (bare ? a : "(" + a + ")") + "/" + std::to_string(div) + ")";
}

std::string DimExpr::monoKey(const Monomial& m) {
  std::string s;
  for (const Atom& a : m) s += (s.empty() ? "" : "*") + a.key();
  return s;
}

DimExpr::DimExpr(int64_t c) {
  if (c != 0) terms_.push_back(Term{{}, c});
}

DimExpr DimExpr::symbol(const std::string& name) {
  DimExpr e;
  Atom a;
  a.sym = name;
  e.terms_.push_back(Term{{a}, 1});
  return e;
}

DimExpr DimExpr::fromTerm(Term t) {
  DimExpr e;
  if (t.coeff != 0) e.terms_.push_back(std::move(t));
  e.normalize();
  return e;
}

void DimExpr::normalize() {
  for (Term& t : terms_)
    std::sort(t.atoms.begin(), t.atoms.end(),
              [](const Atom& a, const Atom& b) { return a.key() < b.key(); });
  std::map<std::string, Term> merged;
  for (Term& t : terms_) {
    std::string k = monoKey(t.atoms);
    auto it = merged.find(k);
    if (it == merged.end()) merged.emplace(k, std::move(t));
    else it->second.coeff = dimCheckedAdd(it->second.coeff, t.coeff);
  }
  terms_.clear();
  for (auto& [k, t] : merged)
    if (t.coeff != 0) terms_.push_back(std::move(t));
  // Higher degree first, then by text; the constant last.
  std::stable_sort(terms_.begin(), terms_.end(), [](const Term& a, const Term& b) {
    if (a.atoms.size() != b.atoms.size()) return a.atoms.size() > b.atoms.size();
    return monoKey(a.atoms) < monoKey(b.atoms);
  });
}

bool DimExpr::isConstant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_[0].atoms.empty());
}

bool DimExpr::isMinMax() const {
  return terms_.size() == 1 && terms_[0].coeff == 1 && terms_[0].atoms.size() == 1 &&
         terms_[0].atoms[0].sym.empty() && terms_[0].atoms[0].fn != Fn::kFloor;
}

int64_t DimExpr::constant() const {
  MG_CHECK(isConstant(), "dimension expression '{}' is not a constant", str());
  return terms_.empty() ? 0 : terms_[0].coeff;
}

std::vector<DimExpr> DimExpr::floorAtoms() const {
  std::vector<DimExpr> out;
  for (const Term& t : terms_)
    for (const Atom& a : t.atoms)
      if (a.sym.empty()) {
        DimExpr e = fromTerm(Term{{a}, 1});
        if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
      }
  return out;
}

std::vector<std::string> DimExpr::symbols() const {
  std::vector<std::string> out;
  for (const Term& t : terms_)
    for (const Atom& a : t.atoms) {
      std::vector<std::string> sub = a.sym.empty() ? a.arg->symbols() : std::vector<std::string>{a.sym};
      out.insert(out.end(), sub.begin(), sub.end());
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DimExpr DimExpr::operator+(const DimExpr& o) const {
  DimExpr e = *this;
  e.terms_.insert(e.terms_.end(), o.terms_.begin(), o.terms_.end());
  e.normalize();
  return e;
}

DimExpr DimExpr::operator-() const {
  DimExpr e = *this;
  for (Term& t : e.terms_) t.coeff = dimCheckedMul(t.coeff, -1);
  return e;
}

DimExpr DimExpr::operator-(const DimExpr& o) const { return *this + (-o); }

DimExpr DimExpr::operator*(const DimExpr& o) const {
  DimExpr e;
  for (const Term& a : terms_)
    for (const Term& b : o.terms_) {
      Term t;
      t.atoms = a.atoms;
      t.atoms.insert(t.atoms.end(), b.atoms.begin(), b.atoms.end());
      t.coeff = dimCheckedMul(a.coeff, b.coeff);
      e.terms_.push_back(std::move(t));
    }
  e.normalize();
  return e;
}

DimExpr DimExpr::floorAtom(const DimExpr& reduced, int64_t c) {
  Atom a;
  a.arg = std::make_shared<const DimExpr>(reduced);
  a.div = c;
  return fromTerm(Term{{a}, 1});
}

Expected<DimExpr> DimExpr::floorDiv(int64_t c) const {
  if (c < 1) return badInput("dimension expression '{}' divided by {} (must be positive)", str(), c);
  if (c == 1) return *this;
  // E = c*Q + R with every coefficient of R in [0, c): floor(E/c) = Q + floor(R/c).
  DimExpr q, r;
  for (const Term& t : terms_) {
    int64_t qq = dimFloorDivInt(t.coeff, c);
    int64_t rr = t.coeff - qq * c;
    if (qq) q.terms_.push_back(Term{t.atoms, qq});
    if (rr) r.terms_.push_back(Term{t.atoms, rr});
  }
  q.normalize();
  r.normalize();
  if (r.isConstant()) return q;  // 0 <= R < c
  // Divide out g = gcd(c, non-constant coefficients): floor((g*M + r0)/c) = floor((M + r0/g)/(c/g)).
  int64_t g = c;
  int64_t r0 = 0;
  for (const Term& t : r.terms_) {
    if (t.atoms.empty()) r0 = t.coeff;
    else g = std::gcd(g, t.coeff);
  }
  if (g > 1) {
    DimExpr m;
    for (const Term& t : r.terms_)
      if (!t.atoms.empty()) m.terms_.push_back(Term{t.atoms, t.coeff / g});
    if (r0 / g) m.terms_.push_back(Term{{}, r0 / g});
    m.normalize();
    r = m;
    c /= g;
    if (c == 1) return q + r;
  }
  return q + floorAtom(r, c);
}

DimExpr DimExpr::clampWith(int64_t c, Fn fn) const {
  const bool isMin = fn == Fn::kMin;
  if (isConstant()) return DimExpr(isMin ? std::min(constant(), c) : std::max(constant(), c));
  // min(E0 + k, c) = min(E0, c - k) + k.
  int64_t k = 0;
  DimExpr e0;
  for (const Term& t : terms_) {
    if (t.atoms.empty()) k = t.coeff;
    else e0.terms_.push_back(t);
  }
  Atom a;
  a.arg = std::make_shared<const DimExpr>(e0);
  MG_CHECK(!__builtin_sub_overflow(c, k, &a.div), "dimension expression bound overflows int64");
  a.fn = fn;
  return fromTerm(Term{{a}, 1}) + DimExpr(k);
}

DimExpr DimExpr::minWith(int64_t c) const { return clampWith(c, Fn::kMin); }
DimExpr DimExpr::maxWith(int64_t c) const { return clampWith(c, Fn::kMax); }

Expected<DimExpr> DimExpr::ceilDiv(int64_t c) const {
  if (c < 1) return badInput("dimension expression '{}' divided by {} (must be positive)", str(), c);
  return (*this + DimExpr(c - 1)).floorDiv(c);
}

Expected<DimExpr> DimExpr::mod(int64_t c) const {
  MG_ASSIGN_OR_RETURN(DimExpr f, floorDiv(c));
  return *this - DimExpr(c) * f;
}

Expected<int64_t> DimExpr::evaluate(const DimBinding& b) const {
  int64_t sum = 0;
  for (const Term& t : terms_) {
    int64_t p = t.coeff;
    for (const Atom& a : t.atoms) {
      int64_t v;
      if (!a.sym.empty()) {
        auto it = b.find(a.sym);
        if (it == b.end())
          return badInput("dimension expression '{}': symbol '{}' has no value", str(), a.sym);
        v = it->second;
      } else {
        MG_ASSIGN_OR_RETURN(int64_t x, a.arg->evaluate(b));
        v = a.fn == Fn::kFloor ? dimFloorDivInt(x, a.div)
            : a.fn == Fn::kMin ? std::min(x, a.div)
                               : std::max(x, a.div);
      }
      if (__builtin_mul_overflow(p, v, &p))
        return badInput("dimension expression '{}' overflows int64 at this binding", str());
    }
    if (__builtin_add_overflow(sum, p, &sum))
      return badInput("dimension expression '{}' overflows int64 at this binding", str());
  }
  return sum;
}

std::string DimExpr::str() const {
  if (terms_.empty()) return "0";
  std::string s;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const Term& t = terms_[i];
    bool neg = t.coeff < 0;
    // |coeff| without overflow for INT64_MIN: print the digits of the negative value.
    std::string mag = std::to_string(t.coeff);
    if (neg) mag = mag.substr(1);
    if (i == 0) s += neg ? "-" : "";
    else s += neg ? "-" : "+";
    if (t.atoms.empty()) s += mag;
    else s += (mag == "1" ? "" : mag + "*") + monoKey(t.atoms);
  }
  return s;
}

Status DimExpr::emit(const std::map<std::string, int>& symbolIndex, std::vector<int64_t>* code) const {
  using namespace mgrt::abi;
  std::vector<int64_t> body;
  // Writes the expression without kDimEnd (atoms recurse into their arguments).
  std::function<Status(const DimExpr&)> emitSum = [&](const DimExpr& e) -> Status {
    if (e.terms_.empty()) {
      body.push_back(kDimConst);
      body.push_back(0);
      return Status::success();
    }
    for (size_t i = 0; i < e.terms_.size(); ++i) {
      const Term& t = e.terms_[i];
      bool first = true;
      auto mulIn = [&]() {
        if (!first) body.push_back(kDimMul);
        first = false;
      };
      if (t.atoms.empty() || t.coeff != 1) {
        body.push_back(kDimConst);
        body.push_back(t.coeff);
        first = false;
      }
      for (const Atom& a : t.atoms) {
        if (!a.sym.empty()) {
          auto it = symbolIndex.find(a.sym);
          if (it == symbolIndex.end())
            return badInput("dimension expression '{}' uses symbol '{}', which the package does "
                            "not declare", e.str(), a.sym);
          body.push_back(kDimSym);
          body.push_back(it->second);
        } else {
          MG_RETURN_IF_ERROR(emitSum(*a.arg));
          body.push_back(kDimConst);
          body.push_back(a.div);
          body.push_back(a.fn == Fn::kFloor ? kDimFloorDiv
                         : a.fn == Fn::kMin ? kDimMin
                                            : kDimMax);
        }
        mulIn();
      }
      if (i) body.push_back(kDimAdd);
    }
    return Status::success();
  };
  MG_RETURN_IF_ERROR(emitSum(*this));
  code->insert(code->end(), body.begin(), body.end());
  code->push_back(kDimEnd);
  return Status::success();
}

// ---- parsing ----

namespace {

struct DimExprParser {
  const std::string& s;
  size_t p = 0;

  void skip() {
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
  }
  bool eat(char c) {
    skip();
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  }
  Status err(const std::string& what) {
    return badInput("dimension expression '{}': {} at offset {}", s, what, p);
  }
  Expected<int64_t> integer() {
    skip();
    size_t start = p;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) ++p;
    if (start == p) return err("expected an integer");
    int64_t v = 0;
    for (size_t i = start; i < p; ++i)
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
        return err("integer out of range");
    return v;
  }
  Expected<DimExpr> expr() {
    MG_ASSIGN_OR_RETURN(DimExpr e, term());
    for (;;) {
      if (eat('+')) {
        MG_ASSIGN_OR_RETURN(DimExpr t, term());
        e = e + t;
      } else if (eat('-')) {
        MG_ASSIGN_OR_RETURN(DimExpr t, term());
        e = e - t;
      } else {
        return e;
      }
    }
  }
  Expected<DimExpr> term() {
    MG_ASSIGN_OR_RETURN(DimExpr e, unary());
    while (eat('*')) {
      MG_ASSIGN_OR_RETURN(DimExpr f, unary());
      e = e * f;
    }
    return e;
  }
  Expected<DimExpr> unary() {
    if (eat('-')) {
      MG_ASSIGN_OR_RETURN(DimExpr e, unary());
      return -e;
    }
    return primary();
  }
  Expected<DimExpr> primary() {
    skip();
    if (p >= s.size()) return err("unexpected end");
    char c = s[p];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      MG_ASSIGN_OR_RETURN(int64_t v, integer());
      return DimExpr(v);
    }
    if (eat('(')) {
      MG_ASSIGN_OR_RETURN(DimExpr e, expr());
      if (!eat(')')) return err("expected ')'");
      return e;
    }
    if (c == '`') {
      size_t end = s.find('`', p + 1);
      if (end == std::string::npos || end == p + 1) return err("unterminated `symbol`");
      std::string name = s.substr(p + 1, end - p - 1);
      p = end + 1;
      return DimExpr::symbol(name);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = p;
      while (p < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_' || s[p] == '.'))
        ++p;
      std::string name = s.substr(start, p - start);
      if (name == "min" || name == "max") {
        if (!eat('(')) return err("expected '(' after " + name);
        MG_ASSIGN_OR_RETURN(DimExpr e, expr());
        if (!eat(',')) return err("expected ','");
        const bool neg = eat('-');
        MG_ASSIGN_OR_RETURN(int64_t c, integer());
        if (!eat(')')) return err("expected ')'");
        if (neg) c = -c;
        return name == "min" ? e.minWith(c) : e.maxWith(c);
      }
      if (name == "floor" || name == "ceil" || name == "mod") {
        if (!eat('(')) return err("expected '(' after " + name);
        MG_ASSIGN_OR_RETURN(DimExpr e, expr());
        if (!eat(name == "mod" ? ',' : '/'))
          return err(name == "mod" ? "expected ','" : "expected '/'");
        MG_ASSIGN_OR_RETURN(int64_t d, integer());
        if (!eat(')')) return err("expected ')'");
        if (name == "floor") return e.floorDiv(d);
        if (name == "ceil") return e.ceilDiv(d);
        return e.mod(d);
      }
      return DimExpr::symbol(name);
    }
    return err(std::string("unexpected '") + c + "'");
  }
};

}  // namespace

Expected<DimExpr> DimExpr::parse(const std::string& text) {
  DimExprParser ps{text};
  MG_ASSIGN_OR_RETURN(DimExpr e, ps.expr());
  ps.skip();
  if (ps.p != text.size()) return ps.err("unexpected text");
  return e;
}

}  // namespace magneto
