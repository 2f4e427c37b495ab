// fuse-layernorm: rewrites the decomposed normalizations that exporters write below opset 17
// (torch 1.13's LayerNorm) and the hand-written RMSNorm of Llama-style models into one
// LayerNormalization (opset 17) or RMSNormalization (opset 23) node, so that the CPU target runs
// one row kernel (runtime/cpu/f_norm.cpp) instead of two reductions and a fused elementwise pass.
//
//   LayerNorm  %m = ReduceMean(%x, axes) ; %d = Sub(%x, %m) ; %q = Pow(%d, 2) | Mul(%d, %d)
//              %v = ReduceMean(%q, axes) ; %s = Sqrt(Add(%v, eps))
//              %n = Div(%d, %s) | Mul(%d, Reciprocal(%s)) | Mul(%d, Div(1, %s))
//              [%g = Mul(%n, gamma)] [%y = Add(%g, beta)]
//        ->    %y = LayerNormalization(%x, gamma, beta) {axis = rank - |axes|, epsilon = eps}
//   RMSNorm    %q = Pow(%x, 2) | Mul(%x, %x) ; %v = ReduceMean(%q, axes) ; %s = Sqrt(Add(%v, eps))
//              %n = Div(%x, %s) | Mul(%x, Reciprocal(%s)) | Mul(%x, Div(1, %s))  [%y = Mul(%n, w)]
//        ->    %y = RMSNormalization(%x, w) {axis = rank - |axes|, epsilon = eps}
// (Mul and Add in either operand order; axes as the attribute or as the constant operand.) Without
// gamma (or w) the op gets a constant scale of ones; without beta no bias.
//
// Legal because the two ops are defined by exactly these formulas: ONNX LayerNormalization
// computes Mean = ReduceMean(X, axes [axis, rank)), D = X - Mean, Var = ReduceMean(D^2),
// Y = D / Sqrt(Var + epsilon) * Scale + B, and RMSNormalization Y = X / Sqrt(ReduceMean(X^2) +
// epsilon) * scale, both over the trailing axes [axis, rank). So the pass requires: the reduced
// axes are exactly the trailing ones (both ReduceMeans the same), keepdims = 1; epsilon and the
// exponent are constant one-element tensors (exponent exactly 2) that do not broadcast the
// result up; every intermediate result has the shape the formula gives it (x's, or x's with the
// normalized dims 1) and the element type of x; every intermediate is read only by the next step
// of the pattern (D by the square and the division) and is no graph output, so nothing else sees
// it disappear. gamma/beta are taken into the op only where they broadcast over the normalized
// dims alone (their dims before the axis are 1, and the Mul/Add result has x's shape), else the
// Mul/Add stays after the op; beta only when gamma was taken (or there is none). The kernels
// compute the statistics in a wider accumulator than the float32 chain did: the result differs
// by rounding only.
//
// Per target (include/magneto/target/target_limits.h, read into NormRules): cpu takes both forms
// in float32 and float64; cuda and hip take LayerNormalization in float32 with gamma/beta of the
// full normalized size (what their row program reads), and no RMSNormalization (they have no
// kernel for it: the decomposed chain stays, as decompose-attention leaves it).
//
//   %m = ReduceMean(%x, [-1]) ; %d = Sub(%x, %m) ; %q = Pow(%d, 2.0) ; %v = ReduceMean(%q, [-1])
//   %s = Sqrt(Add(%v, 1e-5)) ; %n = Div(%d, %s) ; %y = Add(Mul(%n, %g), %b)
//     ->  %y = LayerNormalization(%x, %g, %b) {axis = 2, epsilon = 1e-5}
//
// Golden tests: tests/ir/fuse_layernorm.mlir (the forms), fuse_layernorm_rms.mlir,
// fuse_layernorm_negative.mlir (what must stay), fuse_layernorm_target.mlir (cuda/hip),
// fuse_layernorm_decomposed.mlir (decompose-attention's RMSNormalization chain comes back on cpu).
#include <cmath>
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/target_limits.h"
#include "match_common.h"

namespace magneto {
namespace {

// What the target takes, as facts (target_limits.h).
struct NormRules {
  bool rms = true;                // may create RMSNormalization
  bool f64 = true;                // may create float64 nodes
  bool affineFullOnly = false;    // gamma/beta must hold every normalized element
};

NormRules rulesFor(const std::string& target) {
  NormRules r;
  r.rms = targetRunsRMSNormalization(target);
  r.f64 = targetRunsFloat64Norms(target);
  r.affineFullOnly = targetNeedsFullNormAffine(target);
  return r;
}

enum class NormKind { kLayer, kRms };

// One match, decided before anything is rewritten.
struct NormMatch {
  NormKind kind = NormKind::kLayer;
  Value* x = nullptr;
  int64_t axis = 0;
  double epsilon = 0;
  Value* scale = nullptr;        // gamma / w taken into the op (null: ones)
  bool scaleReshape = false;     // gamma's leading 1s are dropped (a constant, re-made)
  Value* bias = nullptr;         // beta taken into the op (LayerNormalization only)
  bool biasReshape = false;
  std::vector<Node*> chain;      // the nodes replaced, producers first; the last is the root
};

// The value is read only by `users` (counted per operand) and is no graph output.
bool onlyUsedBy(const Value* v, const std::vector<const Node*>& users) {
  if (v->isGraphOutput() || v->uses().size() != users.size()) return false;
  std::vector<const Node*> left = users;
  for (const Use& u : v->uses()) {
    auto it = std::find(left.begin(), left.end(), u.node);
    if (it == left.end()) return false;
    left.erase(it);
  }
  return true;
}

// The other operand of a binary node, given one.
Value* otherOperand(const Node* n, const Value* one) {
  if (n->numInputs() != 2) return nullptr;
  if (n->input(0) == one) return n->input(1);
  if (n->input(1) == one) return n->input(0);
  return nullptr;
}

// ReduceMean over exactly the trailing axes [axis, rank) with keepdims: the axis, or -1.
int64_t trailingMeanAxis(const Node* r) {
  if (!r || r->kind() != "ReduceMean" || r->attrs().getInt("keepdims", 1) == 0) return -1;
  const int64_t rank = r->input(0)->rank();
  std::vector<int64_t> axes;
  if (r->hasInput(1)) {
    const Value* a = r->input(1);
    if (!a->isConstant() || !a->constant().hasData()) return -1;
    axes = a->constant().toInts();
  } else {
    axes = r->attrs().getInts("axes");
  }
  if (axes.empty()) {
    if (r->attrs().getInt("noop_with_empty_axes", 0) != 0) return -1;
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || seen[a]) return -1;
    seen[a] = true;
  }
  const int64_t axis = rank - static_cast<int64_t>(axes.size());
  for (int64_t d = axis; d < rank; ++d)
    if (!seen[d]) return -1;
  return axis;
}

// Dims of x with the normalized dims [axis, rank) set to 1 (the statistics' shape).
Dims statDims(const Value* x, int64_t axis) {
  Dims d = x->dims();
  for (size_t i = static_cast<size_t>(axis); i < d.size(); ++i) d[i] = 1;
  return d;
}

bool hasType(const Value* v, DType t, const Dims& dims) { return v->dtype() == t && v->dims() == dims; }

// `sq` squares `t`: Pow(t, 2) or Mul(t, t).
bool isSquareOf(const Node* sq, const Value* t) {
  if (!sq || sq->numOutputs() != 1 || sq->numInputs() != 2) return false;
  if (sq->kind() == "Mul") return sq->input(0) == t && sq->input(1) == t;
  if (sq->kind() != "Pow" || sq->input(0) != t) return false;
  auto e = match::scalarConstant(sq->input(1));
  return e && *e == 2.0 && sq->input(1)->rank() <= t->rank();
}

// How gamma (beta) may be taken: whether it broadcasts over the normalized dims only, and whether
// its leading dims (all 1) have to be dropped first (only for constants, which are re-made).
bool affineFits(const Value* g, const Value* x, int64_t axis, const NormRules& rules, bool* reshape) {
  const int64_t rank = x->rank(), nd = rank - axis;
  if (g->dtype() != x->dtype() || g->rank() > rank || g->isSymbolic()) return false;
  const int64_t lead = rank - g->rank();
  int64_t numel = 1;
  for (int64_t i = 0; i < g->rank(); ++i) {
    const int64_t p = lead + i, d = g->dims()[i];
    if (p < axis && d != 1) return false;
    if (p >= axis && d != 1 && d != x->dims()[p]) return false;
    numel *= d;
  }
  *reshape = g->rank() > nd;
  if (*reshape && (!g->isConstant() || !g->constant().hasData())) return false;
  if (rules.affineFullOnly) {
    int64_t len = 1;
    for (int64_t p = axis; p < rank; ++p) len *= x->dims()[p];
    if (numel != len) return false;
  }
  return true;
}

// Matches the pattern whose Sqrt is `sqrtNode`; nullopt when it is not one of the forms or a
// legality condition fails.
std::optional<NormMatch> matchAt(Node* sqrtNode, const NormRules& rules) {
  NormMatch m;
  Node* add = match::producerOf(sqrtNode->input(0), "Add");
  if (!add || !onlyUsedBy(add->output(0), {sqrtNode})) return std::nullopt;
  Value* var = nullptr;
  std::optional<double> eps;
  for (int i = 0; i < 2 && !eps; ++i)
    if ((eps = match::scalarConstant(add->input(1 - i)))) var = add->input(i);
  if (!eps || !std::isfinite(*eps) || !var) return std::nullopt;
  Node* varMean = match::producerOf(var, "ReduceMean");
  if (!varMean || !onlyUsedBy(var, {add})) return std::nullopt;
  const int64_t axis = trailingMeanAxis(varMean);
  if (axis < 0) return std::nullopt;
  Node* sq = varMean->input(0)->producer();
  if (!sq || sq->numInputs() != 2 || !onlyUsedBy(sq->output(0), {varMean})) return std::nullopt;
  Value* t = sq->input(0);  // the squared value: D (LayerNorm) or X (RMSNorm)
  if (!isSquareOf(sq, t)) return std::nullopt;
  const DType dt = t->dtype();
  if (dt != DType::kF32 && !(dt == DType::kF64 && rules.f64)) return std::nullopt;
  const Dims& xd = t->dims();
  const Dims sd = statDims(t, axis);
  for (int64_t d = axis; d < t->rank(); ++d)
    if (t->isSymbolic() && !t->dimExpr(static_cast<int>(d)).isConstant()) return std::nullopt;
  if (!hasType(sq->output(0), dt, xd) || !hasType(var, dt, sd) || !hasType(add->output(0), dt, sd) ||
      !hasType(sqrtNode->output(0), dt, sd))
    return std::nullopt;

  // The normalization: Div(t, s), or Mul(t, r) with r = Reciprocal(s) or Div(1, s).
  Value* s = sqrtNode->output(0);
  Node* user = match::soleUser(s);
  if (!user || user->numOutputs() != 1) return std::nullopt;
  std::vector<Node*> recip;
  Node* norm = nullptr;
  if (user->kind() == "Div" && user->input(0) == t && user->input(1) == s) {
    norm = user;
  } else {
    const bool reciprocal = user->kind() == "Reciprocal";
    auto one = user->kind() == "Div" && user->input(1) == s ? match::scalarConstant(user->input(0)) : std::nullopt;
    if (!reciprocal && !(one && *one == 1.0 && user->input(0)->rank() <= s->rank())) return std::nullopt;
    if (!hasType(user->output(0), dt, sd)) return std::nullopt;
    Node* mul = match::soleUser(user->output(0));
    if (!mul || mul->kind() != "Mul" || mul->numOutputs() != 1 || otherOperand(mul, user->output(0)) != t)
      return std::nullopt;
    recip.push_back(user);
    norm = mul;
  }
  if (!hasType(norm->output(0), dt, xd)) return std::nullopt;

  // LayerNorm when t = Sub(x, ReduceMean(x)) over the same axes and D is read by the pattern only
  // (the square, once for Pow and twice for Mul(D, D), and the normalization).
  Node* sub = match::producerOf(t, "Sub");
  Node* mean = sub ? match::producerOf(sub->input(1), "ReduceMean") : nullptr;
  const std::vector<const Node*> dUsers =
      sq->kind() == "Mul" ? std::vector<const Node*>{sq, sq, norm} : std::vector<const Node*>{sq, norm};
  const bool layer = sub && mean && mean->input(0) == sub->input(0) && trailingMeanAxis(mean) == axis &&
                     onlyUsedBy(sub->input(1), {sub}) && onlyUsedBy(t, dUsers) &&
                     sub->input(0)->dtype() == dt && sub->input(0)->dims() == xd;
  if (layer) {
    m.kind = NormKind::kLayer;
    m.x = sub->input(0);
    m.chain = {mean, sub};
  } else {
    if (!rules.rms) return std::nullopt;
    m.kind = NormKind::kRms;
    m.x = t;
  }
  m.axis = axis;
  m.epsilon = *eps;
  m.chain.push_back(sq);
  m.chain.push_back(varMean);
  m.chain.push_back(add);
  m.chain.push_back(sqrtNode);
  for (Node* r : recip) m.chain.push_back(r);
  m.chain.push_back(norm);

  // gamma / w, then beta.
  Value* y = norm->output(0);
  if (Node* g = match::soleUser(y); g && g->kind() == "Mul" && g->numOutputs() == 1 && hasType(g->output(0), dt, xd)) {
    Value* gamma = otherOperand(g, y);
    if (gamma && gamma != y && affineFits(gamma, m.x, axis, rules, &m.scaleReshape)) {
      m.scale = gamma;
      m.chain.push_back(g);
      y = g->output(0);
    }
  }
  // beta follows the normalization itself, or gamma taken into the op (a Mul left in between
  // is not the Add: beta then stays too).
  if (m.kind == NormKind::kLayer) {
    if (Node* b = match::soleUser(y); b && b->kind() == "Add" && b->numOutputs() == 1 && hasType(b->output(0), dt, xd)) {
      Value* beta = otherOperand(b, y);
      if (beta && beta != y && affineFits(beta, m.x, axis, rules, &m.biasReshape)) {
        m.bias = beta;
        m.chain.push_back(b);
      }
    }
  }
  return m;
}

// gamma/beta as the op takes them: the normalized dims only (a constant re-made without its
// leading 1s), or ones of the normalized dims when there is none.
Value* affineOperand(Graph& g, Value* v, bool reshape, const Value* x, int64_t axis, const std::string& base) {
  const Dims norm(x->dims().begin() + axis, x->dims().end());
  if (v && !reshape) return v;
  if (v) {
    const Tensor& c = v->constant();
    std::vector<uint8_t> bytes(c.bytes(), c.bytes() + c.byteSize());
    Dims d(v->dims().end() - static_cast<std::ptrdiff_t>(norm.size()), v->dims().end());
    return g.addConstant(g.uniqueName(base), Tensor(TensorType{v->dtype(), d}, std::move(bytes)));
  }
  int64_t n = 1;
  for (int64_t d : norm) n *= d;
  Tensor ones = x->dtype() == DType::kF64
                    ? Tensor::fromVector<double>(DType::kF64, norm, std::vector<double>(static_cast<size_t>(n), 1.0))
                    : Tensor::fromVector<float>(DType::kF32, norm, std::vector<float>(static_cast<size_t>(n), 1.f));
  return g.addConstant(g.uniqueName(base), std::move(ones));
}

Status rewrite(Graph& g, const NormMatch& m) {
  Node* root = m.chain.back();
  const std::string base = root->name().empty() ? root->output(0)->name() : root->name();
  const bool layer = m.kind == NormKind::kLayer;
  std::vector<Value*> ins = {m.x, affineOperand(g, m.scale, m.scaleReshape, m.x, m.axis, base + "/scale")};
  if (m.bias) ins.push_back(affineOperand(g, m.bias, m.biasReshape, m.x, m.axis, base + "/bias"));
  AttrMap attrs;
  attrs.set("axis", Attribute(m.axis));
  attrs.set("epsilon", Attribute(m.epsilon));
  Node* n = g.createNode(layer ? "LayerNormalization" : "RMSNormalization", ins, {TensorType{}}, std::move(attrs),
                         base + (layer ? "/layernorm" : "/rmsnorm"), root);
  MG_RETURN_IF_ERROR(inferNode(*n));
  if (n->output(0)->type() != root->output(0)->type())
    return internalStatus("fuse-layernorm: {} gives {}, the chain gave {}", n->describe(),
                          n->output(0)->type().str(), root->output(0)->type().str());
  const std::string name = root->output(0)->name();
  g.replaceAllUsesWith(root->output(0), n->output(0));
  for (auto it = m.chain.rbegin(); it != m.chain.rend(); ++it) g.eraseNode(*it);
  g.renameValue(n->output(0), name);
  return Status::success();
}

}  // namespace

Expected<bool> fuseLayerNorm(Graph& g, const std::string& target) {
  const NormRules rules = rulesFor(target);
  bool changed = false;
  std::set<const Node*> erased;  // nodes of the snapshot that a rewrite removed
  for (Node* n : g.nodes()) {
    if (erased.count(n) || n->kind() != "Sqrt" || n->numInputs() != 1) continue;
    std::optional<NormMatch> m = matchAt(n, rules);
    if (!m) continue;
    MG_RETURN_IF_ERROR(rewrite(g, *m));
    erased.insert(m->chain.begin(), m->chain.end());
    changed = true;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FuseLayerNormPass : public Pass {
 public:
  const char* name() const override { return "fuse-layernorm"; }
  const char* summary() const override {
    return "decomposed LayerNorm / RMSNorm chains -> LayerNormalization / RMSNormalization";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return fuseLayerNorm(g, ctx.target); }
};
}  // namespace

std::unique_ptr<Pass> makeFuseLayerNormPass() { return std::make_unique<FuseLayerNormPass>(); }

}  // namespace magneto
