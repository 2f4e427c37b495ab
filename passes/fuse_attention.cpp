// fuse-attention: rewrites the scaled dot-product attention that exporters write as separate ops
// (torch 1.13's nn.MultiheadAttention and hand-written attention, and what decompose-attention
// makes of opset 23's Attention) into one ONNX Attention node, which the CPU target runs on one
// fused kernel (runtime/cpu/f_attention.cpp: no [S, L] score matrix in memory, one pass over K
// and V per block of queries) instead of two batched MatMuls, the scaling, the mask and a Softmax.
//
//   %t = MatMul(%a, %kt)                  %a = Q, or Mul(Q, c) / Div(Q, c)  (Q prescaled)
//   [%s = Mul(%t, c) | Div(%t, c)]...     at most three scalar factors
//   [%x = Add(%s, %mask)]                 an additive float mask, either operand order
//   %p = Softmax(%x) {axis = -1}
//   %o = MatMul(%p, %v)
//     ->  %o = Attention(Q, K, %v[, %mask]) {scale = product of the factors}
// where K is %kt with its last two dims swapped: when %kt is a Transpose read only here, K is that
// Transpose's input under the permutation with its last two entries swapped (no node at all when
// that is the identity, as for Transpose(K, [0, 1, 3, 2]) of decompose-attention); else a
// Transpose node is added. 4-D operands [B, H, S, D] are Attention's 4-D form; 3-D ones
// [N, S, D] (nn.MultiheadAttention's batch x heads) its 3-D form with one head (q_num_heads =
// kv_num_heads = 1), a batch of N single-head attentions.
//
// Legal because ONNX Attention computes exactly softmax(Q K^T * scale + mask) V over the last
// axis with the mask broadcast to the scores' shape [B, H, S, L] (3-D: [N, 1, S, L]), and the
// factors commute with the product (c Q) K^T = c (Q K^T). So the pass requires: every value is
// float32; Q, K^T and V have one rank (3 or 4) and the same batch dims (equal symbolic shapes
// where dynamic), Q [.., S, D], K^T [.., D, L], V [.., L, Dv]; the factors are one-element
// constants and the Softmax is over the last axis; the mask is float32 and does not broadcast the
// scores up (the Add's result has the scores' shape), and in the 3-D form it has at most two
// dims or a leading 1 (a [N, S, L] mask would broadcast against the head dim); each intermediate
// (%a when prescaled, %t, %s, %x, %p, and %kt when its Transpose is taken) is read only by the
// next step and is no graph output. The kernel sums in another order than the MatMuls and the
// Softmax did: the result differs by float rounding only.
//
// Per target (include/magneto/target/target_limits.h): cpu only; the cuda and hip lowerings have
// no Attention program, so there the chain stays (decompose-attention's output included).
//
// Golden tests: tests/ir/fuse_attention.mlir (the 4-D form with a mask and the 3-D prescaled
// form), fuse_attention_negative.mlir (what must stay), fuse_attention_decomposed.mlir (opset
// 23's Attention comes back as one node on cpu).
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/target_limits.h"
#include "match_common.h"

namespace magneto {
namespace {

// Names local to this pass (the unity build compiles several passes in one translation unit).
namespace attn {

// v is read by `n` alone (once) and is no graph output.
bool onlyFeeds(const Value* v, const Node* n) { return match::soleUser(v) == n; }

// n is Mul(x, c), Mul(c, x) or Div(x, c) with c a one-element float constant that does not change x's
// type: x, and the factor (1 / c for Div).
std::optional<std::pair<Value*, double>> scaling(const Node* n) {
  if (!n || n->numInputs() != 2 || n->numOutputs() != 1) return std::nullopt;
  const bool mul = n->kind() == "Mul", div = n->kind() == "Div";
  if (!mul && !div) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (div && i == 0) continue;  // only the divisor may be the constant
    auto c = isFloat(n->input(i)->dtype()) ? match::scalarConstant(n->input(i)) : std::nullopt;
    Value* x = n->input(1 - i);
    if (c && x->type() == n->output(0)->type() && !x->isConstant() && (mul || *c != 0.0))
      return std::make_pair(x, mul ? *c : 1.0 / *c);
  }
  return std::nullopt;
}

// Dims [0, rank - 2) of a and b are one and the same (symbolically too).
bool sameBatch(const Value* a, const Value* b) {
  if (b->rank() != a->rank()) return false;
  for (int d = 0; d + 2 < a->rank(); ++d)
    if (a->dimExpr(d) != b->dimExpr(d)) return false;
  return true;
}

struct Match {
  Node* qk = nullptr;         // MatMul(a, kt)
  Node* preScale = nullptr;   // Mul / Div on Q (taken into the scale)
  std::vector<Node*> scales;  // the factors after the MatMul, in order
  Node* add = nullptr;        // the mask's Add
  Node* softmax = nullptr;
  Node* pv = nullptr;         // MatMul(p, v): the root
  Node* ktTranspose = nullptr;  // the Transpose producing kt, when taken
  Value *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr;
  double scale = 1.0;
};

// The score chain ending in `s` (scale factors over a MatMul): fills m.qk, m.scales, m.scale.
bool scoreChain(Value* s, const Node* reader, Match& m) {
  std::vector<Node*> scales;
  double scale = 1.0;
  for (int i = 0; i < 4; ++i) {
    if (!onlyFeeds(s, reader)) return false;
    Node* p = s->producer();
    if (!p) return false;
    if (p->kind() == "MatMul" && p->numInputs() == 2 && p->numOutputs() == 1) {
      std::reverse(scales.begin(), scales.end());
      m.qk = p;
      m.scales = scales;
      m.scale = scale;
      return true;
    }
    auto f = scaling(p);
    if (!f) return false;
    scales.push_back(p);
    scale *= f->second;
    reader = p;
    s = f->first;
  }
  return false;
}

std::optional<Match> matchAt(Node* pv) {
  Match m;
  m.pv = pv;
  if (pv->kind() != "MatMul" || pv->numInputs() != 2 || pv->numOutputs() != 1) return std::nullopt;
  Value* p = pv->input(0);
  m.v = pv->input(1);
  m.softmax = match::producerOf(p, "Softmax");
  if (!m.softmax || !onlyFeeds(p, pv)) return std::nullopt;
  const int rank = p->rank();
  if (rank != 3 && rank != 4) return std::nullopt;
  int64_t axis = m.softmax->attrs().getInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return std::nullopt;
  Value* x = m.softmax->input(0);
  if (!onlyFeeds(x, m.softmax)) return std::nullopt;
  // The mask's Add: the operand whose chain reaches the MatMul is the scores.
  if (Node* add = match::producerOf(x, "Add"); add && add->numInputs() == 2) {
    for (int i = 0; i < 2 && !m.qk; ++i) {
      Match t = m;
      if (scoreChain(add->input(i), add, t)) {
        t.add = add;
        t.mask = add->input(1 - i);
        m = t;
      }
    }
    if (!m.qk) return std::nullopt;
  } else if (!scoreChain(x, m.softmax, m)) {
    return std::nullopt;
  }
  Value* scores = m.qk->output(0);
  Value* a = m.qk->input(0);
  m.kt = m.qk->input(1);
  m.q = a;
  if (Node* pre = a->producer(); pre && onlyFeeds(a, m.qk)) {
    if (auto f = scaling(pre)) {
      m.preScale = pre;
      m.q = f->first;
      m.scale *= f->second;
    }
  }
  // Types and shapes: float32 throughout, one rank, Q [.., S, D], K^T [.., D, L], V [.., L, Dv].
  for (const Value* t : {m.q, m.kt, m.v, scores, p, pv->output(0)})
    if (t->dtype() != DType::kF32 || t->rank() != rank) return std::nullopt;
  if (!sameBatch(m.q, m.kt) || !sameBatch(m.q, m.v)) return std::nullopt;
  if (!(m.q->dimExpr(rank - 1) == m.kt->dimExpr(rank - 2)) ||
      !(m.kt->dimExpr(rank - 1) == m.v->dimExpr(rank - 2)))
    return std::nullopt;
  if (m.mask) {
    if (m.mask->dtype() != DType::kF32 || !sameSymbolicShape(m.add->output(0), scores)) return std::nullopt;
    if (rank == 3 && m.mask->rank() == 3 && m.mask->dims()[0] != 1) return std::nullopt;
  }
  for (Node* s : m.scales)
    if (!sameSymbolicShape(s->output(0), scores)) return std::nullopt;
  // K^T's Transpose is taken when nothing else reads it.
  if (Node* t = match::producerOf(m.kt, "Transpose"); t && onlyFeeds(m.kt, m.qk) && !t->attrs().getInts("perm").empty())
    m.ktTranspose = t;
  return m;
}

Status rewrite(Graph& g, const Match& m) {
  Node* root = m.pv;
  const int rank = m.q->rank();
  const std::string base = root->name().empty() ? root->output(0)->name() : root->name();
  // K: K^T with its last two dims swapped.
  Value* k = nullptr;
  std::vector<int64_t> perm;
  Value* from = m.kt;
  if (m.ktTranspose) {
    perm = m.ktTranspose->attrs().getInts("perm");
    from = m.ktTranspose->input(0);
  } else {
    for (int d = 0; d < rank; ++d) perm.push_back(d);
  }
  std::swap(perm[rank - 2], perm[rank - 1]);
  bool identity = true;
  for (int d = 0; d < rank; ++d) identity &= perm[d] == d;
  if (identity) {
    k = from;
  } else {
    AttrMap ta;
    ta.set("perm", Attribute(perm));
    Node* t = g.createNode("Transpose", {from}, {TensorType{}}, std::move(ta), base + "/attention_k", root);
    MG_RETURN_IF_ERROR(inferNode(*t));
    MG_RETURN_IF_ERROR(inferSymbolicNode(g, t));
    k = t->output(0);
  }
  std::vector<Value*> ins = {m.q, k, m.v};
  if (m.mask) ins.push_back(m.mask);
  AttrMap attrs;
  attrs.set("scale", Attribute(m.scale));
  if (rank == 3) {
    attrs.set("q_num_heads", Attribute(int64_t{1}));
    attrs.set("kv_num_heads", Attribute(int64_t{1}));
  }
  // Both new nodes go before the root (createNode places them before `before`), K's first.
  Node* n = g.createNode("Attention", ins, {TensorType{}}, std::move(attrs), base + "/attention", root);
  MG_RETURN_IF_ERROR(inferNode(*n));
  MG_RETURN_IF_ERROR(inferSymbolicNode(g, n));
  if (n->output(0)->type() != root->output(0)->type() || !sameSymbolicShape(n->output(0), root->output(0)))
    return internalStatus("fuse-attention: {} gives {}, the chain gave {}", n->describe(),
                          n->output(0)->type().str(), root->output(0)->type().str());
  const std::string name = root->output(0)->name();
  g.replaceAllUsesWith(root->output(0), n->output(0));
  // The chain, readers first.
  std::vector<Node*> chain = {root, m.softmax};
  if (m.add) chain.push_back(m.add);
  for (auto it = m.scales.rbegin(); it != m.scales.rend(); ++it) chain.push_back(*it);
  chain.push_back(m.qk);
  if (m.preScale) chain.push_back(m.preScale);
  if (m.ktTranspose) chain.push_back(m.ktTranspose);
  for (Node* c : chain) g.eraseNode(c);
  g.renameValue(n->output(0), name);
  return Status::success();
}

}  // namespace attn
}  // namespace

Expected<bool> fuseAttention(Graph& g, const std::string& target) {
  if (!targetRunsFusedAttention(target)) return false;
  bool changed = false;
  std::set<const Node*> erased;
  for (Node* n : g.nodes()) {
    if (erased.count(n) || n->kind() != "MatMul") continue;
    std::optional<attn::Match> m = attn::matchAt(n);
    if (!m) continue;
    MG_RETURN_IF_ERROR(attn::rewrite(g, *m));
    for (Node* c : {m->pv, m->softmax, m->add, m->qk, m->preScale, m->ktTranspose})
      if (c) erased.insert(c);
    erased.insert(m->scales.begin(), m->scales.end());
    changed = true;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FuseAttentionPass : public Pass {
 public:
  const char* name() const override { return "fuse-attention"; }
  const char* summary() const override {
    return "MatMul -> [scale] -> [+ mask] -> Softmax -> MatMul -> one Attention node (cpu)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return fuseAttention(g, ctx.target); }
};
}  // namespace

std::unique_ptr<Pass> makeFuseAttentionPass() { return std::make_unique<FuseAttentionPass>(); }

}  // namespace magneto
