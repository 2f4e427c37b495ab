// Symbolic shape inference: probe, fit, verify (include/magneto/ir/symbolic.h).
#include "magneto/ir/symbolic.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "magneto/ir/op_schema.h"

namespace magneto {
namespace {

const DimSymbol* symFind(const std::vector<DimSymbol>& syms, const std::string& name) {
  for (const DimSymbol& s : syms)
    if (s.name == name) return &s;
  return nullptr;
}

DimBinding symReference(const std::vector<DimSymbol>& syms) {
  DimBinding b;
  for (const DimSymbol& s : syms) b[s.name] = s.hi;
  return b;
}

uint64_t symNextRandom(uint64_t& state) {  // splitmix64: deterministic on every platform
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The bindings a fit is checked at before the graph-wide verification: each mentioned symbol
// through up to 24 values of its range (the others at their maximum), the lo/hi corners, and a few
// pseudo-random points.
std::vector<DimBinding> symFitCheckBindings(const std::vector<DimSymbol>& syms,
                                         const std::vector<std::string>& mentioned) {
  DimBinding ref = symReference(syms);
  std::set<DimBinding> out;
  for (const std::string& name : mentioned) {
    const DimSymbol* s = symFind(syms, name);
    int64_t span = s->hi - s->lo;
    for (int64_t i = 0; i < 24; ++i) {
      DimBinding b = ref;
      b[name] = span < 24 ? std::min(s->hi, s->lo + i) : s->lo + span * i / 23;
      out.insert(b);
    }
  }
  if (mentioned.size() <= 8) {
    for (uint32_t mask = 0; mask < (1u << mentioned.size()); ++mask) {
      DimBinding b = ref;
      for (size_t k = 0; k < mentioned.size(); ++k)
        b[mentioned[k]] = (mask >> k) & 1 ? symFind(syms, mentioned[k])->lo : symFind(syms, mentioned[k])->hi;
      out.insert(b);
    }
  }
  uint64_t state = 17;
  for (int i = 0; i < 16; ++i) {
    DimBinding b = ref;
    for (const std::string& name : mentioned) {
      const DimSymbol* s = symFind(syms, name);
      b[name] = s->lo + static_cast<int64_t>(symNextRandom(state) %
                                              static_cast<uint64_t>(s->hi - s->lo + 1));
    }
    out.insert(b);
  }
  return {out.begin(), out.end()};
}

struct SymProbeCache {
  const DimProbeFn& f;
  std::map<DimBinding, Expected<int64_t>> memo;
  Expected<int64_t> operator()(const DimBinding& b) {
    auto it = memo.find(b);
    if (it != memo.end()) return it->second;
    return memo.emplace(b, f(b)).first->second;
  }
};

bool symFitHolds(const DimExpr& e, SymProbeCache& f, const std::vector<DimBinding>& points) {
  for (const DimBinding& b : points) {
    auto want = f(b);
    if (!want.ok()) continue;  // reported by the caller's probe of the same point
    auto got = e.evaluate(b);
    if (!got.ok() || *got != *want) return false;
  }
  return true;
}

}  // namespace

std::string bindingStr(const DimBinding& b) {
  std::string s;
  for (const auto& [k, v] : b) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

bool dependsOnSymbols(const Value* v) {
  if (!v) return false;
  if (v->isSymbolic()) return true;
  return v->producer() && v->producer()->kind() == "MgSymbolic";
}

std::vector<std::string> symbolsOf(const Value* v) {
  std::set<std::string> out;
  if (!v) return {};
  for (const DimExpr& e : v->symDims())
    for (const std::string& s : e.symbols()) out.insert(s);
  if (v->producer() && v->producer()->kind() == "MgSymbolic")
    for (const std::string& text : v->producer()->attrs().getStrings("exprs")) {
      auto e = DimExpr::parse(text);
      if (e.ok())
        for (const std::string& s : e->symbols()) out.insert(s);
    }
  return {out.begin(), out.end()};
}

bool sameSymbolicShape(const Value* a, const Value* b) {
  if (a->rank() != b->rank()) return false;
  for (int d = 0; d < a->rank(); ++d)
    if (a->dimExpr(d) != b->dimExpr(d)) return false;
  return true;
}

std::vector<DimBinding> checkingBindings(const std::vector<DimSymbol>& syms) {
  std::vector<DimBinding> out;
  if (syms.empty()) return out;
  // Every point when the ranges' product is small.
  long double points = 1;
  for (const DimSymbol& s : syms) points *= static_cast<long double>(s.hi - s.lo + 1);
  if (points <= 4096) {
    DimBinding b;
    for (const DimSymbol& s : syms) b[s.name] = s.lo;
    for (;;) {
      out.push_back(b);
      size_t k = 0;
      for (; k < syms.size(); ++k) {
        if (++b[syms[k].name] <= syms[k].hi) break;
        b[syms[k].name] = syms[k].lo;
      }
      if (k == syms.size()) break;
    }
    return out;
  }
  std::set<DimBinding> set;
  DimBinding ref = symReference(syms);
  // Corners.
  if (syms.size() <= 10)
    for (uint32_t mask = 0; mask < (1u << syms.size()); ++mask) {
      DimBinding b;
      for (size_t k = 0; k < syms.size(); ++k) b[syms[k].name] = (mask >> k) & 1 ? syms[k].lo : syms[k].hi;
      set.insert(b);
    }
  // The --opt values, and both ends of each range (16 values each), the others at lo and at hi.
  for (const DimSymbol& s : syms) {
    std::vector<int64_t> vals = s.opt;
    for (int64_t i = 0; i < 16; ++i) {
      vals.push_back(std::min(s.hi, s.lo + i));
      vals.push_back(std::max(s.lo, s.hi - i));
    }
    for (int64_t v : vals) {
      DimBinding hiB = ref, loB;
      for (const DimSymbol& o : syms) loB[o.name] = o.lo;
      hiB[s.name] = loB[s.name] = v;
      set.insert(hiB);
      set.insert(loB);
    }
  }
  // Pseudo-random points.
  uint64_t state = 0x5eed;
  for (int i = 0; i < 512; ++i) {
    DimBinding b;
    for (const DimSymbol& s : syms)
      b[s.name] = s.lo + static_cast<int64_t>(symNextRandom(state) %
                                              static_cast<uint64_t>(s.hi - s.lo + 1));
    set.insert(b);
  }
  return {set.begin(), set.end()};
}

Expected<DimExpr> fitDimExpr(const std::vector<DimSymbol>& syms,
                             const std::vector<std::string>& mentioned, const DimProbeFn& fn,
                             const std::vector<DimExpr>& coords) {
  SymProbeCache f{fn, {}};
  DimBinding ref = symReference(syms);
  // Symbols whose range has one value are constants here.
  std::vector<std::string> vary;
  for (const std::string& name : mentioned) {
    const DimSymbol* s = symFind(syms, name);
    if (!s) return internalStatus("symbol '{}' is not declared", name);
    if (s->lo < s->hi) vary.push_back(name);
  }
  if (vary.size() > 12)
    return unsupported("{} dynamic dimensions meet in one shape; at most 12 are supported",
                       vary.size());
  std::vector<DimBinding> checks = symFitCheckBindings(syms, vary);
  for (const DimBinding& b : checks) {
    auto v = f(b);
    if (!v.ok()) return v.status().withContext("at " + bindingStr(b) + ": ");
  }
  // Multilinear in one coordinate per symbol (the symbol itself, or a floor expression of it from
  // `coords`): f = sum over subsets T of d_T * prod_{s in T} (C_s - C_s(x0_s)), with x0_s, x1_s
  // values of s where C_s steps by one and d_T the finite differences over those corners.
  const size_t k = vary.size();
  std::vector<std::vector<DimExpr>> choices(k);
  for (size_t i = 0; i < k; ++i) {
    choices[i].push_back(DimExpr::symbol(vary[i]));
    for (const DimExpr& c : coords)
      if (c.symbols() == std::vector<std::string>{vary[i]}) choices[i].push_back(c);
  }
  // The combinations in order, all symbols first; second, where operands clamp counts, the
  // min/max coordinates (a Concat of ten clamped counts is linear in them, and the enumeration
  // would not reach that combination within its budget).
  std::vector<size_t> enumerated(k, 0), preferred(k, 0);
  bool hasPreferred = false;
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 1; j < choices[i].size() && !preferred[i]; ++j)
      if (choices[i][j].isMinMax()) {
        preferred[i] = j;
        hasPreferred = true;
      }
  for (int combos = 0; combos < 64; ++combos) {
    const bool usePreferred = combos == 1 && hasPreferred;
    const std::vector<size_t>& pick = usePreferred ? preferred : enumerated;
    std::vector<int64_t> x0(k), x1(k), c0(k);
    bool usable = true;
    for (size_t i = 0; i < k && usable; ++i) {
      const DimExpr& c = choices[i][pick[i]];
      const DimSymbol* s = symFind(syms, vary[i]);
      x1[i] = s->hi;
      auto top = c.evaluate({{vary[i], s->hi}});
      usable = top.ok();
      x0[i] = s->lo - 1;
      for (int64_t x = s->hi - 1; usable && x >= s->lo && x >= s->hi - 256; --x) {
        auto v = c.evaluate({{vary[i], x}});
        if (v.ok() && *v == *top - 1) {
          x0[i] = x;
          c0[i] = *v;
          break;
        }
      }
      if (usable && x0[i] < s->lo) {
        // Farther down (min(s, 1000) steps at 999): the least x where a non-decreasing
        // coordinate reaches its top, by bisection, then one below.
        int64_t from = s->lo - 1, to = s->hi;
        while (to - from > 1) {
          int64_t mid = from + (to - from) / 2;
          auto v = c.evaluate({{vary[i], mid}});
          if (v.ok() && *v >= *top) to = mid;
          else from = mid;
        }
        auto v = c.evaluate({{vary[i], to - 1}});
        if (to - 1 >= s->lo && v.ok() && *v == *top - 1) {
          x0[i] = to - 1;
          c0[i] = *v;
        }
      }
      usable &= x0[i] >= s->lo;
    }
    if (usable) {
      std::vector<int64_t> vals(size_t{1} << k);
      bool okVals = true;
      for (uint32_t mask = 0; mask < vals.size() && okVals; ++mask) {
        DimBinding b = ref;
        for (size_t i = 0; i < k; ++i) b[vary[i]] = (mask >> i) & 1 ? x1[i] : x0[i];
        auto v = f(b);
        if (!v.ok()) {
          if (combos == 0) return v.status().withContext("at " + bindingStr(b) + ": ");
          okVals = false;
          break;
        }
        vals[mask] = *v;
      }
      // Moebius inversion over the subset lattice.
      for (size_t i = 0; i < k && okVals; ++i)
        for (uint32_t mask = 0; mask < vals.size(); ++mask)
          if ((mask >> i) & 1)
            if (__builtin_sub_overflow(vals[mask], vals[mask ^ (1u << i)], &vals[mask]))
              return unsupported("dimension values overflow while fitting");
      if (okVals) {
        DimExpr poly;
        for (uint32_t mask = 0; mask < vals.size(); ++mask) {
          if (vals[mask] == 0) continue;
          DimExpr t(vals[mask]);
          for (size_t i = 0; i < k; ++i)
            if ((mask >> i) & 1) t = t * (choices[i][pick[i]] - DimExpr(c0[i]));
          poly = poly + t;
        }
        if (symFitHolds(poly, f, checks)) return poly;
      }
    }
    if (usePreferred) continue;
    // Next combination of coordinates.
    size_t i = 0;
    for (; i < k; ++i) {
      if (++enumerated[i] < choices[i].size()) break;
      enumerated[i] = 0;
    }
    if (i == k && !(combos == 0 && hasPreferred)) break;
  }
  // floor((a*s + b)/c) in one symbol: which symbols change the value?
  std::vector<std::string> moving;
  for (const std::string& name : vary) {
    const DimSymbol* s = symFind(syms, name);
    std::set<int64_t> seen;
    for (int64_t i = 0; i < 26; ++i) {
      DimBinding b = ref;
      // 24 points down from the top, then the bottom two (a count clamped low, min(s, 3)).
      b[name] = i < 24 ? std::max(s->lo, s->hi - i * std::max<int64_t>(1, (s->hi - s->lo) / 23))
                       : std::min(s->hi, s->lo + (i - 24));
      auto v = f(b);
      if (v.ok()) seen.insert(*v);
    }
    if (seen.size() > 1) moving.push_back(name);
  }
  if (moving.size() == 1) {
    const std::string& name = moving[0];
    const DimSymbol* s = symFind(syms, name);
    auto at = [&](int64_t x) {
      DimBinding b = ref;
      b[name] = x;
      return f(b);
    };
    int64_t lo = std::max(s->lo, s->hi - 160);
    std::vector<std::pair<int64_t, int64_t>> samples;
    for (int64_t x = lo; x <= s->hi; ++x) {
      auto v = at(x);
      if (!v.ok()) return v.status().withContext("at " + name + "=" + std::to_string(x) + ": ");
      samples.push_back({x, *v});
    }
    for (int64_t c = 2; c <= 64 && s->hi - c >= lo; ++c) {
      int64_t a = samples.back().second - (*at(s->hi - c));
      for (int64_t r = 0; r < c; ++r) {
        int64_t b = c * samples.back().second - a * s->hi + r;
        DimExpr lin = DimExpr(a) * DimExpr::symbol(name) + DimExpr(b);
        auto e = lin.floorDiv(c);
        if (!e.ok()) continue;
        bool ok = true;
        for (const auto& [x, v] : samples) {
          auto got = e->evaluate({{name, x}});
          if (!got.ok() || *got != v) {
            ok = false;
            break;
          }
        }
        if (ok && symFitHolds(*e, f, checks)) return *e;
      }
    }
    // max(min(a*s + b, hi), lo) in one symbol, a monotone count clamped at either end (a slice
    // of a run-time count, keep[:300], is min(count, 300)): the end values give the clamps,
    // binary searches the ends of the linear part, two points inside it a and b.
    auto vLo = at(s->lo), vHi = at(s->hi);
    if (vLo.ok() && vHi.ok() && *vLo != *vHi) {
      auto firstWhere = [&](int64_t from, int64_t to, auto pred) -> Expected<int64_t> {
        // The least x in (from, to] with pred(v(x)), assuming it holds from some x on.
        while (to - from > 1) {
          int64_t mid = from + (to - from) / 2;
          MG_ASSIGN_OR_RETURN(int64_t v, at(mid));
          if (pred(v)) to = mid;
          else from = mid;
        }
        return to;
      };
      auto t0 = firstWhere(s->lo, s->hi, [&](int64_t v) { return v != *vLo; });
      auto t1 = firstWhere(s->lo, s->hi, [&](int64_t v) { return v == *vHi; });
      if (t0.ok() && t1.ok() && *t0 + 1 < *t1) {
        auto v0 = at(*t0), v1 = at(*t0 + 1);
        if (v0.ok() && v1.ok() && *v1 != *v0) {
          const int64_t a = *v1 - *v0, b = *v0 - a * *t0;
          DimExpr e = DimExpr(a) * DimExpr::symbol(name) + DimExpr(b);
          const int64_t top = std::max(*vLo, *vHi), bottom = std::min(*vLo, *vHi);
          auto lin = [&](int64_t x) { return a * x + b; };
          if (std::max(lin(s->lo), lin(s->hi)) > top) e = e.minWith(top);
          if (std::min(lin(s->lo), lin(s->hi)) < bottom) e = e.maxWith(bottom);
          bool ok = true;
          std::vector<int64_t> probes{s->lo, *t0 - 1, *t0, *t0 + 1, *t1 - 1, *t1, s->hi};
          for (int64_t i = 0; i < 24; ++i)
            probes.push_back(s->lo + i * std::max<int64_t>(1, (s->hi - s->lo) / 23));
          for (int64_t x : probes) {
            if (x < s->lo || x > s->hi) continue;
            auto want = at(x);
            auto got = e.evaluate({{name, x}});
            if (!want.ok() || !got.ok() || *want != *got) ok = false;
          }
          for (const auto& [x, v] : samples) {
            auto got = e.evaluate({{name, x}});
            if (!got.ok() || *got != v) ok = false;
          }
          if (ok && symFitHolds(e, f, checks)) return e;
        }
      }
    }
  }
  std::string seen;
  int shown = 0;
  for (const DimBinding& b : checks) {
    if (shown++ == 6) break;
    seen += (seen.empty() ? "" : "; ") + bindingStr(b) + " -> " + std::to_string(*f(b));
  }
  return unsupported("no dimension expression fits the values ({}): Magneto fits polynomials in "
                     "the symbols, and floor((a*s+b)/c) and max(min(a*s+b, hi), lo) in one symbol",
                     seen);
}

namespace {

// Operand types and constant values of n at binding b (from the operands' expressions).
struct SymOperandsAt {
  std::vector<TensorType> types;
  std::vector<Tensor> owned;
  std::vector<const Tensor*> consts;
};

Status symOperandsAt(const Node& n, const DimBinding& b,
                     std::unordered_map<const Node*, std::vector<DimExpr>>& parsed,
                     SymOperandsAt* out) {
  out->types.clear();
  out->owned.clear();
  out->consts.assign(n.numInputs(), nullptr);
  out->owned.reserve(n.numInputs());
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (!v) {
      out->types.push_back({});
      continue;
    }
    TensorType t = v->type();
    if (v->isSymbolic())
      for (int d = 0; d < v->rank(); ++d) {
        MG_ASSIGN_OR_RETURN(t.dims[d], v->symDims()[d].evaluate(b));
        if (t.dims[d] < 0)
          return badInput("operand '{}' has dim {} = {} < 0", v->name(), d, t.dims[d]);
      }
    out->types.push_back(t);
    if (v->isConstant() && v->constant().hasData()) {
      out->consts[i] = &v->constant();
    } else if (v->producer() && v->producer()->kind() == "MgSymbolic") {
      const Node* p = v->producer();
      auto it = parsed.find(p);
      if (it == parsed.end()) {
        std::vector<DimExpr> es;
        for (const std::string& s : p->attrs().getStrings("exprs")) {
          MG_ASSIGN_OR_RETURN(DimExpr e, DimExpr::parse(s));
          es.push_back(e);
        }
        it = parsed.emplace(p, std::move(es)).first;
      }
      std::vector<int64_t> vals;
      for (const DimExpr& e : it->second) {
        MG_ASSIGN_OR_RETURN(int64_t x, e.evaluate(b));
        vals.push_back(x);
      }
      if (v->dtype() == DType::kI32) {
        std::vector<int32_t> v32(vals.begin(), vals.end());
        out->owned.push_back(Tensor::fromVector(DType::kI32, v->dims(), v32));
      } else {
        out->owned.push_back(Tensor::fromVector(DType::kI64, v->dims(), vals));
      }
      out->consts[i] = &out->owned.back();
    }
  }
  return Status::success();
}

bool symNodeDepends(const Node* n) {
  if (n->kind() == "MgSymbolic") return false;
  for (const Value* v : n->inputs())
    if (dependsOnSymbols(v)) return true;
  return false;
}

}  // namespace

std::vector<DimExpr> fitCoordinates(const Node& n) {
  std::vector<DimExpr> coords;
  for (const Value* v : n.inputs()) {
    if (!v) continue;
    std::vector<DimExpr> exprs = v->symDims();
    if (v->producer() && v->producer()->kind() == "MgSymbolic")
      for (const std::string& t : v->producer()->attrs().getStrings("exprs")) {
        auto e = DimExpr::parse(t);
        if (e.ok()) exprs.push_back(*e);
      }
    for (const DimExpr& e : exprs)
      for (const DimExpr& a : e.floorAtoms())
        if (a.symbols().size() == 1 && std::find(coords.begin(), coords.end(), a) == coords.end())
          coords.push_back(a);
  }
  return coords;
}

Status inferSymbolicNode(Graph& g, Node* n) {
  if (g.symbols().empty()) return Status::success();
  const std::vector<DataSymbolDim> produced = producedDataSymbols(g, *n);
  auto producedAt = [&](size_t i, int d) -> const DataSymbolDim* {
    for (const DataSymbolDim& p : produced)
      if (p.output == static_cast<int>(i) && p.dim == d) return &p;
    return nullptr;
  };
  if (!symNodeDepends(n)) {
    // Static operands: the results are static but for the data symbols the node produces.
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      Value* v = n->output(i);
      std::vector<DimExpr> dims;
      bool any = false;
      for (int d = 0; d < v->rank(); ++d) {
        const DataSymbolDim* p = producedAt(i, d);
        any |= p != nullptr;
        dims.push_back(p ? DimExpr::symbol(p->symbol) : DimExpr(v->dims()[d]));
      }
      v->setSymDims(any ? dims : std::vector<DimExpr>{});
    }
    return Status::success();
  }
  const std::vector<DimSymbol>& syms = g.symbols();
  const DimBinding ref = g.referenceBinding();
  std::unordered_map<const Node*, std::vector<DimExpr>> parsed;
  std::set<std::string> mentionedSet;
  for (const Value* v : n->inputs())
    for (const std::string& s : symbolsOf(v)) mentionedSet.insert(s);
  std::vector<std::string> mentioned(mentionedSet.begin(), mentionedSet.end());
  std::vector<DimExpr> coords = fitCoordinates(*n);
  std::map<DimBinding, Expected<std::vector<TensorType>>> memo;
  auto outsAt = [&](const DimBinding& b) -> Expected<std::vector<TensorType>> {
    auto it = memo.find(b);
    if (it != memo.end()) return it->second;
    auto compute = [&]() -> Expected<std::vector<TensorType>> {
      SymOperandsAt ops;
      MG_RETURN_IF_ERROR(symOperandsAt(*n, b, parsed, &ops));
      std::vector<TensorType> outs;
      MG_RETURN_IF_ERROR(inferNodeAt(*n, ops.types, ops.consts, &outs));
      for (const DataSymbolDim& p : produced) outs[p.output].dims[p.dim] = b.at(p.symbol);
      return outs;
    };
    return memo.emplace(b, compute()).first->second;
  };
  // A data symbol the node cannot take down to its lower bound (TopK's constant K over a count,
  // a Reshape to a fixed size, ...) gets its lower bound raised to the least value the node's
  // inference accepts (with every other symbol at its maximum): the package then refuses a
  // smaller count at run time, naming the producing node and the range, where the model cannot
  // run anyway, instead of the compile failing. The verification still checks every binding left.
  for (const std::string& name : mentioned) {
    DimSymbol* s = nullptr;
    for (DimSymbol& y : g.symbols())
      if (y.name == name) s = &y;
    if (!s || !s->data || s->lo >= s->hi) continue;
    auto okAt = [&](int64_t v) {
      DimBinding b = ref;
      b[name] = v;
      return outsAt(b).ok();
    };
    if (okAt(s->lo) || !okAt(s->hi)) continue;
    int64_t bad = s->lo, good = s->hi;  // inference fails at `bad`, succeeds at `good`
    while (good - bad > 1) {
      const int64_t mid = bad + (good - bad) / 2;
      (okAt(mid) ? good : bad) = mid;
    }
    s->lo = good;
  }
  for (size_t i = 0; i < n->numOutputs(); ++i) {
    Value* out = n->output(i);
    std::vector<DimExpr> dims;
    bool symbolic = false;
    for (int d = 0; d < out->rank(); ++d) {
      if (const DataSymbolDim* p = producedAt(i, d)) {
        dims.push_back(DimExpr::symbol(p->symbol));
        symbolic = true;
        continue;
      }
      auto probe = [&](const DimBinding& b) -> Expected<int64_t> {
        MG_ASSIGN_OR_RETURN(std::vector<TensorType> outs, outsAt(b));
        if (outs[i].rank() != out->rank())
          return unsupported("the result's rank is {} here but {} at the maximum: ranks must "
                             "not depend on dynamic dimensions",
                             outs[i].rank(), out->rank());
        return outs[i].dims[d];
      };
      auto e = fitDimExpr(syms, mentioned, probe, coords);
      if (!e.ok())
        return e.status().withContext(fmt::format(
            "symbolic shape inference: {}, result '{}' dim {}: ", n->describe(), out->name(), d));
      auto atRef = e->evaluate(ref);
      if (!atRef.ok() || *atRef != out->dims()[d])
        return internalStatus("symbolic shape inference: {}, result '{}' dim {}: '{}' is {} at "
                              "the maximum, the static dim is {}",
                              n->describe(), out->name(), d, e->str(),
                              atRef.ok() ? std::to_string(*atRef) : "undefined", out->dims()[d]);
      symbolic |= !e->isConstant();
      dims.push_back(*e);
    }
    out->setSymDims(symbolic ? dims : std::vector<DimExpr>{});
  }
  return Status::success();
}

Status inferSymbolicShapes(Graph& g) {
  // A data symbol whose producer was removed as dead (with every value naming it) is dropped.
  std::set<std::string> used;
  for (const Value* v : g.values())
    for (const std::string& name : symbolsOf(v)) used.insert(name);
  auto& syms = g.symbols();
  syms.erase(std::remove_if(syms.begin(), syms.end(),
                            [&](const DimSymbol& s) { return s.data && !used.count(s.name); }),
             syms.end());
  if (g.symbols().empty()) return Status::success();
  for (Node* n : g.nodes()) MG_RETURN_IF_ERROR(inferSymbolicNode(g, n));
  return verifySymbolicShapes(g);
}

Status operandsAtBinding(const Node& n, const DimBinding& b, std::vector<TensorType>* types,
                         std::vector<Tensor>* values) {
  std::unordered_map<const Node*, std::vector<DimExpr>> parsed;
  SymOperandsAt ops;
  MG_RETURN_IF_ERROR(symOperandsAt(n, b, parsed, &ops));
  *types = ops.types;
  values->assign(n.numInputs(), Tensor());
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (ops.consts[i]) (*values)[i] = *ops.consts[i];
  return Status::success();
}

Status verifySymbolicShapes(const Graph& g) {
  if (g.symbols().empty()) return Status::success();
  const DimBinding ref = g.referenceBinding();
  std::unordered_map<const Node*, std::vector<DimExpr>> parsed;
  std::vector<Node*> nodes;
  std::unordered_map<const Node*, std::vector<DataSymbolDim>> produced;
  for (Node* n : g.nodes())
    if (symNodeDepends(n)) {
      nodes.push_back(n);
      produced[n] = producedDataSymbols(g, *n);
    }
  auto sizeCheck = [&](const Value* v, const TensorType& t, const DimBinding& b) -> Status {
    auto now = checkedByteSize(t);
    auto max = checkedByteSize(v->type());
    if (!now.ok()) return now.status().withContext(fmt::format("value '{}' at {}: ", v->name(), bindingStr(b)));
    if (max.ok() && *now > *max)
      return unsupported("value '{}' is {} at {} ({} bytes), larger than {} at the maximum of "
                         "every dynamic dimension ({} bytes), which memory is planned for; "
                         "narrow the --dynamic ranges",
                         v->name(), t.str(), bindingStr(b), *now, v->type().str(), *max);
    return Status::success();
  };
  for (const DimBinding& b : checkingBindings(g.symbols())) {
    for (const Value* in : g.inputs()) {
      if (!in->isSymbolic()) continue;
      TensorType t = in->type();
      for (int d = 0; d < in->rank(); ++d) {
        MG_ASSIGN_OR_RETURN(t.dims[d], in->symDims()[d].evaluate(b));
      }
      MG_RETURN_IF_ERROR(sizeCheck(in, t, b));
    }
    for (Node* n : nodes) {
      SymOperandsAt ops;
      std::vector<TensorType> outs;
      Status st = symOperandsAt(*n, b, parsed, &ops);
      if (st.ok()) st = inferNodeAt(*n, ops.types, ops.consts, &outs);
      if (!st.ok())
        return Status(st.code(), fmt::format("symbolic shape check: {} fails at {}: {}",
                                             n->describe(), bindingStr(b), st.message()));
      for (const DataSymbolDim& p : produced[n]) outs[p.output].dims[p.dim] = b.at(p.symbol);
      for (size_t i = 0; i < n->numOutputs(); ++i) {
        const Value* out = n->output(i);
        if (outs[i].rank() != out->rank())
          return unsupported("symbolic shape check: {}, result '{}': rank {} at {}, {} at the "
                             "maximum (ranks must not depend on dynamic dimensions)",
                             n->describe(), out->name(), outs[i].rank(), bindingStr(b), out->rank());
        for (int d = 0; d < out->rank(); ++d) {
          DimExpr e = out->dimExpr(d);
          auto want = e.evaluate(b);
          if (!want.ok() || *want != outs[i].dims[d])
            return unsupported("symbolic shape check: {}, result '{}' dim {}: the shape says '{}' "
                               "= {} at {}, shape inference gives {}",
                               n->describe(), out->name(), d, e.str(),
                               want.ok() ? std::to_string(*want) : want.status().message(),
                               bindingStr(b), outs[i].dims[d]);
        }
        if (outs[i].dtype != out->dtype())
          return internalStatus("symbolic shape check: {}, result '{}' changes type at {}",
                                n->describe(), out->name(), bindingStr(b));
        MG_RETURN_IF_ERROR(sizeCheck(out, outs[i], b));
      }
    }
  }
  (void)ref;
  return Status::success();
}

std::unordered_map<const Node*, std::vector<const Node*>> dataSymbolPredecessors(const Graph& g) {
  std::unordered_map<const Node*, std::vector<const Node*>> out;
  if (!hasDataSymbols(g)) return out;
  std::map<std::string, const Node*> producer;
  for (const Node* n : g.nodes())
    for (const DataSymbolDim& d : producedDataSymbols(g, *n)) producer.emplace(d.symbol, n);
  for (const Node* n : g.nodes()) {
    std::set<const Node*> preds;
    auto note = [&](const Value* v) {
      for (const std::string& name : symbolsOf(v)) {
        auto it = producer.find(name);
        if (it != producer.end() && it->second != n) preds.insert(it->second);
      }
    };
    for (const Value* v : n->inputs()) note(v);
    for (const Value* v : n->outputs()) note(v);
    if (!preds.empty()) out[n].assign(preds.begin(), preds.end());
  }
  return out;
}

std::vector<DataSymbolDim> producedDataSymbols(const Graph& g, const Node& n) {
  std::vector<DataSymbolDim> out;
  for (size_t i = 0; i < n.numOutputs(); ++i) {
    const Value* v = n.output(i);
    for (int d = 0; v->isSymbolic() && d < v->rank(); ++d) {
      const std::vector<std::string> syms = v->symDims()[d].symbols();
      if (syms.size() != 1 || v->symDims()[d] != DimExpr::symbol(syms[0])) continue;
      const DimSymbol* s = g.findSymbol(syms[0]);
      if (!s || !s->data) continue;
      bool mentioned = false;
      for (const Value* in : n.inputs())
        for (const std::string& name : symbolsOf(in)) mentioned |= name == syms[0];
      if (!mentioned) out.push_back({static_cast<int>(i), d, syms[0]});
    }
  }
  return out;
}

bool hasDataSymbols(const Graph& g) {
  for (const DimSymbol& s : g.symbols())
    if (s.data) return true;
  return false;
}

Status declareDataSymbols(Graph& g, Node* n, const std::vector<DataDim>& dims) {
  if (dims.empty()) return Status::success();
  // A DimExpr symbol is [A-Za-z_][A-Za-z0-9_.]*: the node's name (or its first result's) made so.
  std::string base = n->name().empty() ? n->output(0)->name() : n->name();
  std::string clean;
  for (unsigned char c : base) clean += std::isalnum(c) || c == '_' ? static_cast<char>(c) : '_';
  if (clean.empty() || std::isdigit(static_cast<unsigned char>(clean[0]))) clean = "n_" + clean;
  std::map<int, std::string> groupSymbol;
  std::map<int, int64_t> groupBound;
  for (const DataDim& dd : dims) {
    if (dd.output < 0 || dd.output >= static_cast<int>(n->numOutputs()) || dd.dim < 0 ||
        dd.dim >= n->output(dd.output)->rank())
      return internalStatus("{}: data-dependent dim {} of result {} does not exist", n->describe(),
                            dd.dim, dd.output);
    const int64_t bound = n->output(dd.output)->dims()[dd.dim];
    auto it = groupBound.find(dd.group);
    if (it != groupBound.end() && it->second != bound)
      return internalStatus("{}: data-dependent dims of one extent have bounds {} and {}",
                            n->describe(), it->second, bound);
    groupBound[dd.group] = bound;
  }
  for (const auto& [group, bound] : groupBound) {
    std::string name = clean + "_count" + (groupBound.size() > 1 ? std::to_string(group) : "");
    for (int k = 2; g.findSymbol(name); ++k)
      name = clean + "_count" + (groupBound.size() > 1 ? std::to_string(group) : "") + "_" +
             std::to_string(k);
    DimSymbol s;
    s.name = name;
    s.lo = 0;
    s.hi = bound;
    s.data = true;
    g.symbols().push_back(s);
    groupSymbol[group] = name;
  }
  for (size_t i = 0; i < n->numOutputs(); ++i) {
    Value* v = n->output(i);
    std::vector<DimExpr> sd;
    bool any = false;
    for (int d = 0; d < v->rank(); ++d) {
      std::string sym;
      for (const DataDim& dd : dims)
        if (dd.output == static_cast<int>(i) && dd.dim == d) sym = groupSymbol[dd.group];
      any |= !sym.empty();
      sd.push_back(sym.empty() ? DimExpr(v->dims()[d]) : DimExpr::symbol(sym));
    }
    if (any) v->setSymDims(sd);
  }
  return Status::success();
}

}  // namespace magneto
