// Launch parameters of a graph with dynamic dimensions on the cuda/hip targets (see
// gpu_lowering.h, fitDynamicParams, and docs/DYNAMIC_SHAPES.md, "cuda and hip").
//
// A GPU item's parameters are C++ statements with integer literals computed from static dims. The
// emitter lowers every launch at the reference binding (every symbol at its maximum) and, through
// `lower`, at any other binding (every symbolic value's dims set to that binding). Lowering makes
// its choices of program by the reference dims (LowerContext::dynamic), so the texts at all
// bindings are the same but for integer literals. Each literal that varies is fitted as a DimExpr
// of the symbols with the symbolic inference's fitter (polynomials, one-symbol floor forms) and
// then verified at the checking bindings (every point of small ranges; corners, --opt values, the
// ends of each range and random points of large ones). The package evaluates the expressions
// whenever its input dims change and fills the parameters again. Anything else (a difference in
// structure, a float that varies, a literal no expression fits) is a kUnsupported error naming
// the node: a dynamic package is never right at some bindings only.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "gpu_lowering.h"
#include "magneto/ir/symbolic.h"

namespace magneto {
namespace gpu {
namespace {

// A token of an item's init text: its place in the text and, for a plain decimal integer, its value.
struct DynParamToken {
  size_t begin = 0, len = 0;
  bool isInt = false;
  int64_t value = 0;
};

std::vector<DynParamToken> dynTokenize(const std::string& s) {
  std::vector<DynParamToken> out;
  size_t i = 0;
  auto word = [&](unsigned char c) { return std::isalnum(c) || c == '_'; };
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    DynParamToken t;
    t.begin = i;
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {  // a comment: one token to the line's end
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (std::isalpha(c) || c == '_') {
      while (i < s.size() && word(static_cast<unsigned char>(s[i]))) ++i;
    } else if (std::isdigit(c)) {
      bool digits = true;
      while (i < s.size() && (word(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
        digits &= std::isdigit(static_cast<unsigned char>(s[i])) != 0;
        char e = s[i++];
        if ((e == 'e' || e == 'E') && i < s.size() && (s[i] == '+' || s[i] == '-') && s[t.begin + 1] != 'x') ++i;
      }
      if (digits && i - t.begin <= 18) {
        t.isInt = true;
        t.value = std::stoll(s.substr(t.begin, i - t.begin));
      }
    } else {
      ++i;
    }
    t.len = i - t.begin;
    out.push_back(t);
  }
  return out;
}

// What must be equal at every binding: everything of an item but its init's integer literals.
std::string dynItemShape(const GpuItem& it) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", it.paramsType, it.program, it.blocks, it.smem, it.threads,
                     it.syncs, it.functor, it.tile, it.coResident, it.phase);
}

thread_local const DimBinding* tlsLoweringBinding = nullptr;

// Every symbolic value's dims at a binding while it lives; the reference dims again after.
class DynBindingScope {
 public:
  explicit DynBindingScope(const Graph& g) {
    for (Value* v : g.values())
      if (v->isSymbolic()) saved_.push_back({v, v->type()});
  }
  ~DynBindingScope() {
    for (auto& [v, t] : saved_) v->setType(t);
    tlsLoweringBinding = nullptr;
  }
  Status set(const DimBinding& b) {
    binding_ = b;
    tlsLoweringBinding = &binding_;
    for (auto& [v, t] : saved_) {
      TensorType nt = t;
      for (int d = 0; d < v->rank(); ++d) {
        MG_ASSIGN_OR_RETURN(nt.dims[d], v->symDims()[d].evaluate(b));
      }
      v->setType(nt);
    }
    return Status::success();
  }

 private:
  std::vector<std::pair<Value*, TensorType>> saved_;
  DimBinding binding_;
};

}  // namespace

const DimBinding* dynLoweringBinding() { return tlsLoweringBinding; }

namespace {

// A polynomial of degree up to 3 in each symbol through its values on the grid hi, hi-1, hi-2,
// hi-3 of every symbol (Newton's divided differences, which must come out integers), for the
// products of several dims that fitDimExpr's multilinear forms do not cover: the score matrix of
// attention has seq*seq elements. The caller verifies it at every checking binding.
Expected<DimExpr> dynFitGridPolynomial(const std::vector<DimSymbol>& syms, const DimProbeFn& f) {
  std::vector<int> deg(syms.size());
  size_t points = 1;
  for (size_t s = 0; s < syms.size(); ++s) {
    deg[s] = static_cast<int>(std::min<int64_t>(3, syms[s].hi - syms[s].lo));
    points *= static_cast<size_t>(deg[s] + 1);
    if (points > 4096) return unsupported("too many dynamic dimensions for a polynomial fit");
  }
  std::vector<int64_t> c(points);
  auto multi = [&](size_t flat) {
    std::vector<int> j(syms.size());
    for (size_t s = 0; s < syms.size(); ++s) j[s] = static_cast<int>(flat % (deg[s] + 1)), flat /= (deg[s] + 1);
    return j;
  };
  for (size_t i = 0; i < points; ++i) {
    std::vector<int> j = multi(i);
    DimBinding b;
    for (size_t s = 0; s < syms.size(); ++s) b[syms[s].name] = syms[s].hi - j[s];
    MG_ASSIGN_OR_RETURN(c[i], f(b));
  }
  // Divided differences along each symbol in turn (the points x_i = hi - i are one apart).
  size_t stride = 1;
  for (size_t s = 0; s < syms.size(); ++s) {
    const size_t n = static_cast<size_t>(deg[s] + 1);
    for (size_t base = 0; base < points; ++base) {
      if ((base / stride) % n != 0) continue;  // the first point of a line along s
      for (int j = 1; j < static_cast<int>(n); ++j)
        for (int i = static_cast<int>(n) - 1; i >= j; --i) {
          int64_t& hiC = c[base + static_cast<size_t>(i) * stride];
          const int64_t num = hiC - c[base + static_cast<size_t>(i - 1) * stride];
          if (num % j != 0) return unsupported("not a polynomial with integer coefficients");
          hiC = num / -j;
        }
    }
    stride *= n;
  }
  DimExpr poly;
  for (size_t i = 0; i < points; ++i) {
    if (c[i] == 0) continue;
    std::vector<int> j = multi(i);
    DimExpr t(c[i]);
    for (size_t s = 0; s < syms.size(); ++s)
      for (int k = 0; k < j[s]; ++k) t = t * (DimExpr::symbol(syms[s].name) - DimExpr(syms[s].hi - k));
    poly = poly + t;
  }
  return poly;
}

}  // namespace

Status withDynamicBinding(const Graph& g, const DimBinding& b, const std::function<Status()>& f) {
  DynBindingScope scope(g);
  MG_RETURN_IF_ERROR(scope.set(b));
  return f();
}

Status fitDynamicParams(const Graph& g, const std::vector<std::string>& launchNames,
                        const std::vector<std::vector<DimExpr>>& coords, const DynLowerFn& lower,
                        std::vector<DynLaunchText>* launches, DynParamsResult* result) {
  const std::vector<DimSymbol>& syms = g.symbols();
  std::vector<std::string> names;
  for (const DimSymbol& s : syms) names.push_back(s.name);
  const DimBinding ref = g.referenceBinding();
  std::vector<DynLaunchText>& at0 = *launches;

  // The reference's literals: where each lives (launch, item, token) and its value; the scratch
  // requests of each launch follow as literals of their own.
  struct Where {
    int launch = 0, item = -1, token = 0;  // item -1: scratch request `token`
  };
  std::vector<Where> where;
  std::vector<int64_t> refValues;
  std::vector<std::vector<std::vector<DynParamToken>>> refTokens(at0.size());
  for (size_t l = 0; l < at0.size(); ++l) {
    for (size_t k = 0; k < at0[l].items.size(); ++k) {
      refTokens[l].push_back(dynTokenize(at0[l].items[k].init));
      const auto& toks = refTokens[l].back();
      for (size_t t = 0; t < toks.size(); ++t)
        if (toks[t].isInt) {
          where.push_back({static_cast<int>(l), static_cast<int>(k), static_cast<int>(t)});
          refValues.push_back(toks[t].value);
        }
    }
    for (size_t r = 0; r < at0[l].scratch.size(); ++r) {
      where.push_back({static_cast<int>(l), -1, static_cast<int>(r)});
      refValues.push_back(at0[l].scratch[r]);
    }
  }

  // The literals at a binding, lowered once per binding; a difference in anything but the
  // literals is an error naming the launch.
  std::map<DimBinding, std::vector<int64_t>> cache;
  cache[ref] = refValues;
  DynBindingScope scope(g);
  auto valuesAt = [&](const DimBinding& b) -> Expected<const std::vector<int64_t>*> {
    auto hit = cache.find(b);
    if (hit != cache.end()) return &hit->second;
    MG_RETURN_IF_ERROR(scope.set(b));
    std::vector<DynLaunchText> got;
    Status st = lower(&got);
    if (!st.ok()) return st.withContext("lowering at " + bindingStr(b) + ": ");
    if (got.size() != at0.size()) return internalStatus("dynamic lowering gave {} launches, {} at the reference", got.size(), at0.size());
    std::vector<int64_t> vals;
    vals.reserve(refValues.size());
    for (size_t l = 0; l < at0.size(); ++l) {
      auto differ = [&](const std::string& what) {
        return unsupported("{}: the cuda/hip lowering differs at {} from the largest shape ({}) in {}: its kernels "
                           "make a shape-dependent choice that a dynamic package cannot express (compile it with "
                           "--shape, or --target cpu)",
                           launchNames[l], bindingStr(b), bindingStr(ref), what);
      };
      if (got[l].items.size() != at0[l].items.size())
        return differ(fmt::format("its number of block programs ({} against {})", got[l].items.size(), at0[l].items.size()));
      for (size_t k = 0; k < at0[l].items.size(); ++k) {
        const GpuItem &a = at0[l].items[k], &c = got[l].items[k];
        if (dynItemShape(a) != dynItemShape(c))
          return differ(a.functor != c.functor
                            ? std::string("the text of its generated functor (a size in device code)")
                            : fmt::format("its program ('{}' against '{}')", c.program + " " + c.tile,
                                          a.program + " " + a.tile));
        std::vector<DynParamToken> toks = dynTokenize(c.init);
        const auto& rt = refTokens[l][k];
        if (toks.size() != rt.size()) return differ("the form of its parameters");
        for (size_t t = 0; t < toks.size(); ++t) {
          if (toks[t].isInt && rt[t].isInt) {
            vals.push_back(toks[t].value);
            continue;
          }
          std::string x = c.init.substr(toks[t].begin, toks[t].len), y = a.init.substr(rt[t].begin, rt[t].len);
          if (toks[t].isInt != rt[t].isInt || x != y)
            return differ(fmt::format("a parameter that is not an integer ('{}' against '{}')", x, y));
        }
      }
      if (got[l].scratch.size() != at0[l].scratch.size()) return differ("its scratch requests");
      for (int64_t r : got[l].scratch) vals.push_back(r);
    }
    return &cache.emplace(b, std::move(vals)).first->second;
  };

  // Fit every literal that differs at some checking binding; the others are constants.
  std::vector<DimBinding> checks = checkingBindings(syms);
  std::vector<char> varies(refValues.size(), 0);
  for (const DimBinding& b : checks) {
    MG_ASSIGN_OR_RETURN(const std::vector<int64_t>* v, valuesAt(b));
    for (size_t p = 0; p < refValues.size(); ++p) varies[p] |= (*v)[p] != refValues[p];
  }
  std::vector<DimExpr> exprs(refValues.size());
  for (size_t p = 0; p < refValues.size(); ++p) {
    if (!varies[p]) {
      exprs[p] = DimExpr(refValues[p]);
      continue;
    }
    const Where& w = where[p];
    DimProbeFn probe = [&](const DimBinding& b) -> Expected<int64_t> {
      MG_ASSIGN_OR_RETURN(const std::vector<int64_t>* v, valuesAt(b));
      return (*v)[p];
    };
    auto e = fitDimExpr(syms, names, probe, coords[w.launch]);
    if (!e.ok()) {  // products of several dims: a polynomial of higher degree, if it holds everywhere
      auto poly = dynFitGridPolynomial(syms, probe);
      bool holds = poly.ok();
      for (size_t c = 0; holds && c < checks.size(); ++c) {
        auto x = poly->evaluate(checks[c]);
        auto v = probe(checks[c]);
        holds = x.ok() && v.ok() && *x == *v;
      }
      if (holds) e = *poly;
    }
    std::string what = w.item < 0 ? fmt::format("its scratch request {} (bytes)", w.token)
                                  : fmt::format("launch parameter {} of block program {} ('{}')", refValues[p], w.item,
                                                at0[w.launch].items[w.item].init.substr(
                                                    refTokens[w.launch][w.item][std::max(0, w.token - 2)].begin,
                                                    refTokens[w.launch][w.item][w.token].begin +
                                                        refTokens[w.launch][w.item][w.token].len -
                                                        refTokens[w.launch][w.item][std::max(0, w.token - 2)].begin));
    if (!e.ok())
      return unsupported("{}: {} is not a function of the dynamic dims this compiler can express ({})",
                         launchNames[w.launch], what, e.status().message());
    exprs[p] = *e;
  }
  // Verify every literal at every checking binding.
  for (const DimBinding& b : checks) {
    MG_ASSIGN_OR_RETURN(const std::vector<int64_t>* v, valuesAt(b));
    for (size_t p = 0; p < refValues.size(); ++p) {
      auto x = exprs[p].evaluate(b);
      if (!x.ok() || *x != (*v)[p])
        return unsupported("{}: a launch parameter fitted as {} is {} at {}, not {}: not a function of the dynamic "
                           "dims this compiler can express",
                           launchNames[where[p].launch], exprs[p].str(), (*v)[p], bindingStr(b),
                           x.ok() ? std::to_string(*x) : x.status().message());
    }
  }

  // Scratch: each request gets the most it needs at any binding seen (the package refuses a
  // binding that would need more); launches run one after another and share one region.
  std::vector<std::vector<int64_t>> reserved(at0.size());
  for (size_t l = 0; l < at0.size(); ++l) reserved[l].assign(at0[l].scratch.size(), 0);
  for (const auto& [b, v] : cache)
    for (size_t p = 0; p < refValues.size(); ++p)
      if (where[p].item < 0) {
        int64_t& r = reserved[where[p].launch][where[p].token];
        r = std::max(r, v[p]);
      }
  result->scratchBytes = 0;
  std::vector<std::vector<int64_t>> offsets(at0.size());
  for (size_t l = 0; l < at0.size(); ++l) {
    int64_t off = 0;
    for (size_t r = 0; r < reserved[l].size(); ++r) {
      offsets[l].push_back(off);
      off += (reserved[l][r] + 255) / 256 * 256;
    }
    result->scratchBytes = std::max(result->scratchBytes, off);
  }
  result->exprs.clear();
  result->scratch.clear();
  std::map<DimExpr, int> index;
  for (size_t p = 0; p < refValues.size(); ++p) {
    const Where& w = where[p];
    if (w.item < 0) {
      if (!exprs[p].isConstant())
        result->scratch.push_back({exprs[p], reserved[w.launch][w.token],
                                   fmt::format("{}, scratch request {}", launchNames[w.launch], w.token)});
      continue;
    }
    if (exprs[p].isConstant()) continue;
    auto [it, fresh] = index.emplace(exprs[p], static_cast<int>(result->exprs.size()));
    if (fresh) result->exprs.push_back(exprs[p]);
  }

  // Rewrite the reference texts: varying literals become MG_DIM(k) (the package's value of
  // expression k at the current binding), SCRATCH_AT(r) the request's offset.
  size_t p = 0;
  for (size_t l = 0; l < at0.size(); ++l) {
    for (size_t k = 0; k < at0[l].items.size(); ++k) {
      const std::string& text = at0[l].items[k].init;
      const auto& toks = refTokens[l][k];
      std::string out;
      size_t pos = 0;
      for (size_t t = 0; t < toks.size(); ++t) {
        std::string tok = text.substr(toks[t].begin, toks[t].len);
        if (toks[t].isInt) {
          const DimExpr& e = exprs[p++];
          if (!e.isConstant()) {
            out += text.substr(pos, toks[t].begin - pos) + fmt::format("MG_DIM({})", index.at(e));
            pos = toks[t].begin + toks[t].len;
          }
          continue;
        }
        if (tok == "SCRATCH_AT" && t + 3 < toks.size() && toks[t + 2].isInt) {
          const int64_t r = toks[t + 2].value;
          if (r < 0 || r >= static_cast<int64_t>(offsets[l].size()))
            return internalStatus("{}: SCRATCH_AT({}) names no request", launchNames[l], r);
          out += text.substr(pos, toks[t].begin - pos) + fmt::format("SCRATCH({})", offsets[l][r]);
          pos = toks[t + 3].begin + toks[t + 3].len;
          ++p;  // the request index is a literal too (constant)
          t += 3;
        }
      }
      out += text.substr(pos);
      at0[l].items[k].init = out;
    }
    p += at0[l].scratch.size();
  }
  return Status::success();
}

}  // namespace gpu
}  // namespace magneto
