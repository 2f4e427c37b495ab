// fuse-elementwise: merges chains of float32 elementwise ops into one MgElementwise op, so a
// chain of k ops reads and writes memory once instead of k times (BatchNormalization lowered to
// Mul+Add before a Relu, x * Sigmoid(x), GELU written out as Div/Erf/Add/Mul/Mul...).
//
// A chain grows from an elementwise node along its result's only user, as long as that user is
// a supported elementwise op on f32 whose result has the chain's output shape. Operands from
// outside the chain become the fused op's inputs (they may broadcast). Legal because every fused
// op computes each output element from the same-index elements of its operands, and every
// intermediate has exactly one user inside the chain and is not a graph output, so nothing else
// observes it. Chains of one op are left alone (nothing to gain). On targets whose fused kernel
// reads a bounded number of operands (cuda, hip: include/magneto/target/target_limits.h) a chain
// stops before the op that would take it past that many inputs; the rest starts a new chain.
//
//   %a = Mul(%x, %s)                      %r = MgElementwise(%x, %s, %t)
//   %b = Add(%a, %t)               ->          {program = ["Mul i0 i1", "Add t0 i2", "Relu t1"]}
//   %r = Relu(%b)
//
// Golden test: tests/ir/fuse_elementwise.mlir
#include <map>
#include <set>

#include "magneto/ir/symbolic.h"
#include "magneto/ir/activation.h"
#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/target_limits.h"
#include "mg_acts.h"

namespace magneto {
namespace {

// Ops MgElementwise can evaluate: the program op `op` (the node's kind, or the activation table's
// entry for it) and its alpha/beta text.
bool fusableOp(const Node* n, std::string& op, std::string& params) {
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  static const std::set<std::string> kUnary = {"Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal",
                                               "Floor", "Ceil", "Erf"};
  const std::string& k = n->kind();
  for (Value* v : n->inputs())
    if (!v || v->dtype() != DType::kF32) return false;
  if (n->output(0)->dtype() != DType::kF32 || n->numOutputs() != 1) return false;
  op = k;
  params.clear();
  if (kBinary.count(k)) return n->numInputs() == 2;
  if (kUnary.count(k)) return n->numInputs() == 1;
  // The activations of runtime/common/mg_acts.h flagged F; Gelu's tanh form is its own entry.
  const mgrt::acts::ActInfo* e = mgrt::acts::find(k.c_str(), mgrt::acts::kF | mgrt::acts::kO);
  if (!e || n->numInputs() != 1) return false;
  if (k == "Gelu" && n->attrs().getString("approximate", "none") == "tanh") e = mgrt::acts::find("GeluTanh");
  double alpha, beta;
  activationAttrParams(*n, alpha, beta);
  op = e->name;
  if (e->params >= 1) params += fmt::format(" alpha={:.9g}", alpha);
  if (e->params >= 2) params += fmt::format(" beta={:.9g}", beta);
  return true;
}

Value* soleUser(const Value* v, Node*& user) {
  if (v->uses().size() != 1 || v->isGraphOutput()) return nullptr;
  user = v->uses()[0].node;
  return user->output(0);
}

// Inputs from outside the chain that `n` would add to the chain's `external` ones.
int newInputs(const Node* n, const std::set<const Value*>& external, const std::set<const Value*>& internal) {
  std::set<const Value*> added;
  for (Value* v : n->inputs())
    if (!internal.count(v) && !external.count(v)) added.insert(v);
  return static_cast<int>(added.size());
}

}  // namespace

Expected<bool> fuseElementwise(Graph& g, int maxInputs) {
  bool changed = false;
  std::set<Node*> consumed;
  for (Node* head : g.nodes()) {
    std::string op, params;
    if (consumed.count(head) || !fusableOp(head, op, params)) continue;
    std::vector<Node*> chain{head};
    Value* out = head->output(0);
    std::set<const Value*> external, inChain{head->output(0)};
    for (Value* v : head->inputs()) external.insert(v);
    for (;;) {
      Node* user = nullptr;
      if (!soleUser(out, user) || !fusableOp(user, op, params)) break;
      if (user->output(0)->dims() != out->dims()) break;  // keep one index space
      if (!sameSymbolicShape(user->output(0), out)) break;  // at every binding
      if (maxInputs > 0 && static_cast<int>(external.size()) + newInputs(user, external, inChain) > maxInputs)
        break;  // the target's fused kernel reads no more operands
      for (Value* v : user->inputs())
        if (!inChain.count(v)) external.insert(v);
      inChain.insert(user->output(0));
      // Both operands of a binary op being the chain value is fine; a user that reads the chain
      // value twice still has two uses and stops the chain above.
      chain.push_back(user);
      out = user->output(0);
    }
    if (chain.size() < 2) continue;
    const std::set<const Value*>& internal = inChain;  // the chain's own results
    std::vector<Value*> inputs;
    std::map<const Value*, int> inputSlot;
    std::map<const Value*, int> tempSlot;
    std::vector<std::string> program;
    for (size_t k = 0; k < chain.size(); ++k) {
      Node* n = chain[k];
      fusableOp(n, op, params);
      std::string line = op;
      for (Value* v : n->inputs()) {
        if (internal.count(v)) {
          line += " t" + std::to_string(tempSlot.at(v));
        } else {
          auto it = inputSlot.find(v);
          if (it == inputSlot.end()) {
            it = inputSlot.emplace(v, static_cast<int>(inputs.size())).first;
            inputs.push_back(v);
          }
          line += " i" + std::to_string(it->second);
        }
      }
      program.push_back(line + params);
      tempSlot[n->output(0)] = static_cast<int>(k);
    }
    // The fused result must have the chain's output shape; an input broadcasting beyond it
    // would change the shape (the chain stopped on shape changes, so this only guards ranks).
    Dims fusedDims = inputs[0]->dims();
    bool ok = true;
    for (Value* v : inputs) {
      auto d = broadcastDims(fusedDims, v->dims());
      if (!d.ok()) { ok = false; break; }
      fusedDims = d.value();
    }
    if (!ok || fusedDims != out->dims()) continue;
    AttrMap attrs;
    attrs.set("program", program);
    Node* last = chain.back();
    Node* fused = g.createNode("MgElementwise", inputs, {out->type()}, attrs,
                               last->name().empty() ? "fused" : last->name() + "/fused", last);
    g.replaceAllUsesWith(out, fused->output(0));
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      consumed.insert(*it);
      g.eraseNode(*it);
    }
    changed = true;
  }
  return changed;
}

namespace {
class FuseElementwisePass : public Pass {
 public:
  const char* name() const override { return "fuse-elementwise"; }
  const char* summary() const override {
    return "merge chains of f32 elementwise ops into one MgElementwise op";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override {
    return fuseElementwise(g, maxFusedElementwiseInputs(ctx.target));
  }
};
}  // namespace

std::unique_ptr<Pass> makeFuseElementwisePass() { return std::make_unique<FuseElementwisePass>(); }

}  // namespace magneto
