// Symbolic dimensions: DimExpr canonical forms, evaluation, text, postfix code; the symbolic shape
// inference (probe, fit, verify) on small graphs.
#include <gtest/gtest.h>

#include <algorithm>

#include "magneto/ir/dim_expr.h"
#include "mg_abi_tables.h"

using namespace magneto;

namespace {

DimExpr P(const std::string& s) {
  auto e = DimExpr::parse(s);
  EXPECT_TRUE(e.ok()) << s << ": " << e.status().message();
  return e.ok() ? *e : DimExpr();
}

// Runs postfix code the way the package runtime does (floor semantics), for the emission test.
int64_t runDimCode(const std::vector<int64_t>& code, const std::vector<int64_t>& syms) {
  using namespace mgrt::abi;
  std::vector<int64_t> st;
  for (size_t i = 0; i < code.size(); ++i) {
    int64_t op = code[i];
    if (op == kDimEnd) break;
    if (op == kDimConst) { st.push_back(code[++i]); continue; }
    if (op == kDimSym) { st.push_back(syms.at(code[++i])); continue; }
    int64_t b = st.back();
    st.pop_back();
    int64_t a = st.back();
    st.pop_back();
    int64_t r = 0;
    switch (op) {
      case kDimAdd: r = a + b; break;
      case kDimSub: r = a - b; break;
      case kDimMul: r = a * b; break;
      case kDimFloorDiv: r = a / b - ((a % b) != 0 && ((a < 0) != (b < 0))); break;
      case kDimMin: r = std::min(a, b); break;
      case kDimMax: r = std::max(a, b); break;
      default: ADD_FAILURE() << "unexpected op " << op;
    }
    st.push_back(r);
  }
  EXPECT_EQ(st.size(), 1u);
  return st.empty() ? 0 : st.back();
}

}  // namespace

TEST(DimExpr, CanonicalForms) {
  DimExpr n = DimExpr::symbol("N"), t = DimExpr::symbol("T");
  EXPECT_EQ((n * t * DimExpr(2) + DimExpr(1)).str(), "2*N*T+1");
  EXPECT_EQ((t * n + n * t).str(), "2*N*T");
  EXPECT_EQ((n - n).str(), "0");
  EXPECT_TRUE((n - n).isConstant());
  EXPECT_EQ((DimExpr(3) - n).str(), "-N+3");
  // floor((T-1)/2)+1 == floor((T+1)/2): both reduce to the same canonical form.
  EXPECT_EQ(*(t - DimExpr(1)).floorDiv(2) + DimExpr(1), *(t + DimExpr(1)).floorDiv(2));
  EXPECT_EQ((*(t - DimExpr(1)).floorDiv(2) + DimExpr(1)).str(), "floor((T+1)/2)");
  // Exact divisions disappear; common factors are divided out.
  EXPECT_EQ((*(DimExpr(4) * n + DimExpr(6)).floorDiv(2)).str(), "2*N+3");
  EXPECT_EQ((*(DimExpr(2) * n + DimExpr(1)).floorDiv(4)).str(), "floor(N/2)");
  EXPECT_EQ((*(DimExpr(5) * n + DimExpr(7)).floorDiv(3)).str(), "N+floor((2*N+1)/3)+2");
  // ceil and mod are floors.
  EXPECT_EQ(*t.ceilDiv(2), *(t + DimExpr(1)).floorDiv(2));
  EXPECT_EQ((*n.mod(4)).str(), "N-4*floor(N/4)");
  EXPECT_FALSE(n.floorDiv(0).ok());
  EXPECT_FALSE(n.mod(-2).ok());
  EXPECT_EQ(n.symbols(), std::vector<std::string>{"N"});
  EXPECT_EQ((*(n * t).floorDiv(3)).symbols(), (std::vector<std::string>{"N", "T"}));
}

TEST(DimExpr, EvaluateWithOverflow) {
  DimExpr e = P("floor((T-1)/2)+1");
  for (int64_t tv = -7; tv <= 9; ++tv) {
    int64_t a = tv - 1;
    int64_t want = (a >= 0 ? a / 2 : -((-a + 1) / 2)) + 1;  // floor(a/2) + 1
    EXPECT_EQ(*e.evaluate({{"T", tv}}), want) << tv;
  }
  EXPECT_EQ(*P("2*N*T+1").evaluate({{"N", 3}, {"T", 5}}), 31);
}

TEST(DimExpr, EvaluateErrors) {
  auto unbound = P("N+T").evaluate({{"N", 3}});
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("'T'"), std::string::npos);
  auto big = P("N*N*N").evaluate({{"N", int64_t{1} << 30}});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("overflow"), std::string::npos);
  EXPECT_FALSE(P("N+N").evaluate({{"N", INT64_MAX}}).ok());
}

TEST(DimExpr, PrintParseRoundTrip) {
  for (const char* s : {"0", "7", "-3", "N", "-N+3", "2*N*T+1", "floor((T+1)/2)", "floor(N/2)",
                        "N*floor((T+1)/2)+N", "N-4*floor(N/4)", "floor((floor((T+1)/2)+1)/2)",
                        "3*`batch size`"}) {
    DimExpr e = P(s);
    EXPECT_EQ(e.str(), s);
    EXPECT_EQ(P(e.str()), e);
  }
  EXPECT_EQ(P("ceil(T/2)").str(), "floor((T+1)/2)");
  EXPECT_EQ(P("mod(N, 4)").str(), "N-4*floor(N/4)");
  EXPECT_EQ(P("(N+1)*(N-1)").str(), "N*N-1");
  for (const char* bad : {"", "N+", "floor(N)", "floor(N/0)", "2**N", "(N", "N)", "floor(N/T)",
                          "99999999999999999999"})
    EXPECT_FALSE(DimExpr::parse(bad).ok()) << bad;
}

// min/max with a constant (a slice's end clamping a run-time count): constants move out, so
// equal functions meet in one form; constant arguments fold; text round-trips.
TEST(DimExpr, MinAndMaxWithAConstant) {
  DimExpr n = DimExpr::symbol("N");
  EXPECT_EQ(n.minWith(300).str(), "min(N, 300)");
  EXPECT_TRUE(n.minWith(300).isMinMax());
  EXPECT_FALSE((n.minWith(300) + DimExpr(1)).isMinMax());
  EXPECT_EQ((n + DimExpr(2)).minWith(10), n.minWith(8) + DimExpr(2));
  EXPECT_EQ((n + DimExpr(2)).minWith(10).str(), "min(N, 8)+2");
  EXPECT_EQ(DimExpr(7).minWith(3).str(), "3");
  EXPECT_EQ(DimExpr(-7).maxWith(0).str(), "0");
  EXPECT_EQ((n - DimExpr(1)).maxWith(0).str(), "max(N, 1)-1");
  for (const char* s : {"min(N, 300)", "max(N, -3)", "2*min(N, 4)+1", "max(min(N, 9), 3)",
                        "min(N, 4)*min(T, 2)"})
    EXPECT_EQ(P(s).str(), s);
  for (int64_t v : {0, 5, 299, 300, 12936})
    EXPECT_EQ(*P("min(N, 300)").evaluate({{"N", v}}), std::min<int64_t>(v, 300));
  EXPECT_EQ(P("min(N, 300)").symbols(), std::vector<std::string>{"N"});
  EXPECT_EQ(P("min(N, 300)*T").floorAtoms(), std::vector<DimExpr>{P("min(N, 300)")});
  for (const char* bad : {"min(N)", "min(N, T)", "max(N, )", "min N, 3"})
    EXPECT_FALSE(DimExpr::parse(bad).ok()) << bad;
}

TEST(DimExpr, EmitsPostfixCode) {
  std::map<std::string, int> idx{{"N", 0}, {"T", 1}};
  for (const char* s : {"0", "5", "N", "2*N*T+1", "-N+3", "floor((T+1)/2)", "N*floor((T+1)/2)-7",
                        "floor((floor((T+1)/2)+1)/2)", "N-4*floor(N/4)", "min(N, 5)",
                        "max(min(2*N-1, 9), 3)", "min(N, 4)*T+min(T, 100)"}) {
    DimExpr e = P(s);
    std::vector<int64_t> code;
    ASSERT_TRUE(e.emit(idx, &code).ok());
    EXPECT_EQ(code.back(), mgrt::abi::kDimEnd);
    for (int64_t nv : {1, 2, 7, 32})
      for (int64_t tv : {1, 3, 8, 127})
        EXPECT_EQ(runDimCode(code, {nv, tv}), *e.evaluate({{"N", nv}, {"T", tv}})) << s;
  }
  std::vector<int64_t> code;
  EXPECT_EQ(P("2*N+1").str(), "2*N+1");
  ASSERT_TRUE(P("2*N+1").emit(idx, &code).ok());
  using namespace mgrt::abi;
  EXPECT_EQ(code, (std::vector<int64_t>{kDimConst, 2, kDimSym, 0, kDimMul, kDimConst, 1, kDimAdd,
                                        kDimEnd}));
  EXPECT_FALSE(P("Q").emit(idx, &code).ok());
}

// ---- symbolic shape inference ----

#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"

namespace {

const char* kSymGraph = R"(graph @g {
  symbol N [1, 32] opt [1, 8]
  symbol T [4, 64]
  input %x : f32[32,3,64] as [N,3,T]
  input %s : f32[32,64,3] as [N,T,3]
  const %w : f32[4,3,3] = random<1>
  const %pads : i64[6] = dense<[0, 0, 0, 0, 0, 1]>
  %shape : i64[2] = MgSymbolic() {exprs = ["N*T", "3"], shape = [2], to = 7}
  %r = Relu(%x)
  %c = Concat(%x, %x) {axis = 0}
  %f = Reshape(%s, %shape)
  %p = Pad(%x, %pads) {mode = "constant"}
  %y = Conv(%x, %w, _) {kernel_shape = [3], pads = [1, 1], strides = [2]}
  output %r, %c, %f, %p, %y
}
)";

std::unique_ptr<Graph> symGraph() {
  auto g = parseGraph(kSymGraph);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(*g) : nullptr;
}

std::string symShape(const Graph& g, const char* name) {
  const Value* v = g.findValue(name);
  std::string s;
  for (int d = 0; d < v->rank(); ++d) s += (d ? "," : "") + v->dimExpr(d).str();
  return s;
}

}  // namespace

TEST(SymbolicShapes, FitsPolynomialsAndFloorForms) {
  auto g = symGraph();
  ASSERT_TRUE(g);
  Status st = inferSymbolicShapes(*g);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(symShape(*g, "r"), "N,3,T");
  EXPECT_EQ(symShape(*g, "c"), "2*N,3,T");
  EXPECT_EQ(symShape(*g, "f"), "N*T,3");
  EXPECT_EQ(symShape(*g, "p"), "N,3,T+1");
  EXPECT_EQ(symShape(*g, "y"), "N,4,floor((T+1)/2)");  // floor((T-1)/2)+1
  EXPECT_TRUE(verifyGraph(*g).ok());
  // The text IR carries symbols and symbolic shapes through a round trip.
  std::string text = printGraph(*g);
  EXPECT_NE(text.find("symbol N [1, 32] opt [1, 8]"), std::string::npos) << text;
  EXPECT_NE(text.find("%y : f32[32,4,32] as [N,4,floor((T+1)/2)]"), std::string::npos) << text;
  auto again = parseGraph(text);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(printGraph(**again), text);
  EXPECT_TRUE(verifySymbolicShapes(**again).ok());
}

TEST(SymbolicShapes, FitsAFunctionDirectly) {
  std::vector<DimSymbol> syms{{"N", 1, 100, {}}, {"T", 3, 50, {}}};
  auto fit = [&](std::vector<std::string> m, std::function<int64_t(int64_t, int64_t)> f) {
    return fitDimExpr(syms, m, [&](const DimBinding& b) -> Expected<int64_t> {
      return f(b.at("N"), b.at("T"));
    });
  };
  EXPECT_EQ(fit({"N"}, [](int64_t n, int64_t) { return n; })->str(), "N");
  EXPECT_EQ(fit({"N"}, [](int64_t n, int64_t) { return 2 * n; })->str(), "2*N");
  EXPECT_EQ(fit({"N", "T"}, [](int64_t n, int64_t t) { return n * t; })->str(), "N*T");
  EXPECT_EQ(fit({"T"}, [](int64_t, int64_t t) { return t + 1; })->str(), "T+1");
  EXPECT_EQ(fit({"T"}, [](int64_t, int64_t t) { return (t - 1) / 2 + 1; })->str(), "floor((T+1)/2)");
  EXPECT_EQ(fit({"T"}, [](int64_t, int64_t t) { return (t + 2 - 5) / 3 + 1; })->str(), "floor(T/3)");
  EXPECT_EQ(fit({"N", "T"}, [](int64_t, int64_t) { return 7; })->str(), "7");
  // N*N is not multilinear and not a single floor form: a clear error, never a wrong fit.
  auto bad = fit({"N"}, [](int64_t n, int64_t) { return n * n; });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no dimension expression fits"), std::string::npos);
  // A probe that fails names the binding.
  auto fails = fitDimExpr(syms, {"T"}, [](const DimBinding& b) -> Expected<int64_t> {
    if (b.at("T") < 5) return badInput("kernel larger than input");
    return b.at("T");
  });
  ASSERT_FALSE(fails.ok());
  EXPECT_NE(fails.status().message().find("T=3"), std::string::npos) << fails.status().message();
}

TEST(SymbolicShapes, VerificationCatchesAWrongRewrite) {
  // A "rewrite" that folded the Reshape target to its value at the maximum: right at N=32, T=64,
  // wrong elsewhere. The check after the pipeline refuses it and names node and binding.
  auto g = symGraph();
  ASSERT_TRUE(g);
  ASSERT_TRUE(inferSymbolicShapes(*g).ok());
  Value* shape = g->findValue("shape");
  Value* folded = g->addConstant("shape_folded", Tensor::fromVector<int64_t>(DType::kI64, {2}, {32 * 64, 3}));
  g->replaceAllUsesWith(shape, folded);
  Status st = inferSymbolicShapes(*g);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Reshape"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("N=1"), std::string::npos) << st.message();

  // A symbolic shape that agrees at the maximum but not elsewhere.
  auto g2 = symGraph();
  ASSERT_TRUE(inferSymbolicShapes(*g2).ok());
  Value* c = g2->findValue("c");
  std::vector<DimExpr> wrong = c->symDims();
  wrong[0] = *DimExpr::parse("N+32");
  c->setSymDims(wrong);
  EXPECT_TRUE(verifyGraph(*g2).ok());  // equal at the reference binding
  Status st2 = verifySymbolicShapes(*g2);
  ASSERT_FALSE(st2.ok());
  EXPECT_NE(st2.message().find("'c' dim 0"), std::string::npos) << st2.message();
  // Wrong at the reference binding: the verifier itself refuses it.
  wrong[0] = *DimExpr::parse("N");
  c->setSymDims(wrong);
  EXPECT_FALSE(verifyGraph(*g2).ok());
}

// A count clamped at either end (keep[:300] of a run-time count, a slice from 2 of one) fits as
// max(min(a*s+b, hi), lo); a sum of clamped counts is linear in the clamps given as coordinates,
// however far below the range's top they step.
TEST(SymbolicShapes, FitsClampedCounts) {
  std::vector<DimSymbol> syms{{"C", 0, 12936, {}}, {"D", 0, 72000, {}}, {"E", 0, 405, {}}};
  for (auto& s : syms) s.data = true;
  auto fit = [&](std::vector<std::string> m, std::function<int64_t(const DimBinding&)> f,
                 std::vector<DimExpr> coords = {}) {
    return fitDimExpr(syms, m, [&](const DimBinding& b) -> Expected<int64_t> { return f(b); },
                      coords);
  };
  auto c = [](const DimBinding& b) { return b.at("C"); };
  EXPECT_EQ(fit({"C"}, [&](const DimBinding& b) { return std::min<int64_t>(c(b), 300); })->str(),
            "min(C, 300)");
  EXPECT_EQ(fit({"C"}, [&](const DimBinding& b) { return std::max<int64_t>(c(b) - 2, 0); })->str(),
            "max(C, 2)-2");
  EXPECT_EQ(fit({"C"}, [&](const DimBinding& b) {
              return std::max<int64_t>(std::min<int64_t>(c(b), 300) - 2, 0);
            })->str(),
            "max(min(C, 300), 2)-2");
  auto sum = [](const DimBinding& b) {
    return std::min<int64_t>(b.at("C"), 1000) + std::min<int64_t>(b.at("D"), 1000) + b.at("E");
  };
  EXPECT_FALSE(fit({"C", "D", "E"}, sum).ok());  // not without the coordinates
  auto e = fit({"C", "D", "E"}, sum, {P("min(C, 1000)"), P("min(D, 1000)")});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(*e, P("min(C, 1000)+min(D, 1000)+E"));
  // Not monotone: no clamp fits, a clear error.
  EXPECT_FALSE(fit({"C"}, [&](const DimBinding& b) { return c(b) % 7; }).ok());
}

TEST(SymbolicShapes, FitsProductsWithFloorCoordinates) {
  std::vector<DimSymbol> syms{{"N", 1, 16, {}}, {"T", 3, 40, {}}};
  DimExpr half = *DimExpr::parse("floor((T+1)/2)");
  auto f = [](const DimBinding& b) -> Expected<int64_t> {
    return b.at("N") * 4 * ((b.at("T") + 1) / 2) + 1;
  };
  EXPECT_FALSE(fitDimExpr(syms, {"N", "T"}, f).ok());  // not without the coordinate
  auto e = fitDimExpr(syms, {"N", "T"}, f, {half});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->str(), "4*N*floor((T+1)/2)+1");
}
