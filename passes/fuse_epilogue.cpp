// fuse-epilogue: folds what follows a Conv, ConvTranspose, Gemm or MatMul into the op's epilogue,
// so the result is written once instead of re-read by each following elementwise op.
//
//   a. Conv + Add(constant broadcast over channels, [M,1,1] / [1,M,1,1]) -> the Conv's bias.
//   b. Conv + Add(other tensor of the Conv's result shape)              -> Conv operand 3
//      (the residual, added after the bias and before the activation: ResNet's shortcut).
//   c. any of the four + an activation (trait kActivation: Relu, LeakyRelu, Sigmoid, Clip with
//      constant bounds, ...)                                            -> attr mg_act/mg_alpha/mg_beta.
//   d. any of the four + Mul(y, Sigmoid(y)) (Swish / SiLU, as PyTorch exports it: the result's
//      two users are that Sigmoid and that Mul)                         -> mg_act = "Swish";
//      Mul(y, HardSigmoid(y)) with alpha 1/6, beta 0.5 (hardswish below opset 14) -> "HardSwish".
//
// Legal because each rewrite applies exactly the same elementwise function to every output
// element, in the same order (bias, residual, activation), and only when the op's result has no
// other user (and is not a graph output): nobody can observe the unfused intermediate.
// A second activation, or an Add after an activation, is not fused (the order would change).
//
//   %c = Conv(%x, %w, %b)                   %r = Conv(%x, %w, %b, %s) {mg_act = "Relu"}
//   %a = Add(%c, %s)               ->
//   %r = Relu(%a)
//
// Golden test: tests/ir/fuse_epilogue.mlir
#include <cmath>
#include <set>

#include "magneto/ir/symbolic.h"
#include "magneto/ir/activation.h"
#include "mg_acts.h"
#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

bool soleUse(const Value* v) { return v->uses().size() == 1 && !v->isGraphOutput(); }

bool isEpilogueHost(const Node* n) {
  const OpSchema* s = n->schema();
  return s && s->has(kHasEpilogue) && n->output(0)->dtype() == DType::kF32;
}

// The activation's parameters as the runtime's Epilogue expects them, or false if not fusable.
bool activationParams(const Node* act, double& alpha, double& beta) {
  const std::string& k = act->kind();
  activationAttrParams(*act, alpha, beta);
  const mgrt::acts::ActInfo* a = mgrt::acts::find(k.c_str(), mgrt::acts::kE);
  if (!a) return false;  // not an epilogue activation (mg_acts.h, flag E)
  if (k == "Gelu") return act->attrs().getString("approximate", "none") == "none";
  if (k == "Clip") {
    alpha = -3.4028234663852886e38, beta = 3.4028234663852886e38;
    for (int i = 1; i <= 2; ++i) {
      if (!act->hasInput(i)) continue;
      const Value* b = act->input(i);
      if (!b->isConstant() || !b->constant().hasData() || b->constant().numel() != 1) return false;
      (i == 1 ? alpha : beta) = b->constant().floatAt(0);
    }
    return true;
  }
  return true;
}

// Per-channel constant of a Conv's output [N,M,...]: shape [M,1,..] or [1,M,1,..].
bool isChannelBias(const Value* c, const Value* convOut, std::vector<float>& out) {
  if (!c->isConstant() || !c->constant().hasData() || c->dtype() != DType::kF32) return false;
  const Dims& d = c->dims();
  const Dims& o = convOut->dims();
  int64_t m = o.size() > 1 ? o[1] : 0;
  if (d.size() + 1 != o.size() && d.size() != o.size()) return false;
  size_t lead = o.size() - d.size();  // 1: [M,1,..]; 0: [1,M,1,..]
  for (size_t i = 0; i < d.size(); ++i) {
    size_t oi = i + lead;
    int64_t want = oi == 1 ? m : 1;
    if (d[i] != want) return false;
  }
  out.assign(c->constant().data<float>(), c->constant().data<float>() + m);
  return true;
}

bool fuseBias(Graph& g, Node* conv, Node* add) {
  Value* y = conv->output(0);
  Value* other = add->input(0) == y ? add->input(1) : add->input(0);
  std::vector<float> bias;
  if (!isChannelBias(other, y, bias) || conv->hasInput(3) || conv->attrs().has("mg_act")) return false;
  if (conv->hasInput(2)) {
    const Value* b = conv->input(2);
    if (!b->isConstant() || !b->constant().hasData()) return false;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] += b->constant().data<float>()[i];
  }
  Value* nb = g.addConstant(conv->name() + "_bias", Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(bias.size())}, bias));
  while (conv->numInputs() < 3) conv->addInput(nullptr);
  conv->setInput(2, nb);
  g.replaceAllUsesWith(add->output(0), y);
  g.eraseNode(add);
  return true;
}

bool fuseResidual(Graph& g, Node* conv, Node* add) {
  Value* y = conv->output(0);
  Value* other = add->input(0) == y ? add->input(1) : add->input(0);
  if (other == y || other->type() != y->type() || other->isConstant()) return false;
  if (conv->hasInput(3) || conv->attrs().has("mg_act")) return false;
  // The residual must be computed before the Conv runs. Moving the Conv down to just before the
  // Add is always legal: its operands are defined earlier still, and the Add is its only user.
  g.moveBefore(conv, add);
  while (conv->numInputs() < 3) conv->addInput(nullptr);
  conv->addInput(other);
  g.replaceAllUsesWith(add->output(0), y);
  g.eraseNode(add);
  return true;
}

// y = host's result with exactly two users, s = gate(y) used only by m = Mul(y, s) (either
// order): m is y times its own gate, per element:
//   Sigmoid(y)                               -> Swish (SiLU):  y * (1 / (1 + e^-y))
//   HardSigmoid(y) with alpha 1/6, beta 0.5  -> HardSwish:     y * clamp(y / 6 + 0.5, 0, 1)
// (PyTorch exports hardswish so below opset 14). The same function of every element; alpha is
// float(1/6) in the model, the fused form divides by 6: within an ulp of the gate.
bool fuseGatedActivation(Graph& g, Node* host) {
  Value* y = host->output(0);
  if (host->attrs().has("mg_act") || y->isGraphOutput() || y->uses().size() != 2) return false;
  Node* gate = nullptr;
  Node* mul = nullptr;
  for (const auto& u : y->uses()) {
    if (u.node->kind() == "Sigmoid" || u.node->kind() == "HardSigmoid") gate = u.node;
    else if (u.node->kind() == "Mul") mul = u.node;
  }
  if (!gate || !mul || !soleUse(gate->output(0)) || gate->output(0)->uses()[0].node != mul) return false;
  if (mul->output(0)->type() != y->type()) return false;
  std::string act = "Swish";
  if (gate->kind() == "HardSigmoid") {
    double alpha = 0, beta = 0;
    activationAttrParams(*gate, alpha, beta);
    if (std::fabs(alpha - 1.0 / 6.0) > 1e-7 || beta != 0.5) return false;
    act = "HardSwish";
  }
  host->attrs().set("mg_act", act);
  g.replaceAllUsesWith(mul->output(0), y);
  g.eraseNode(mul);
  g.eraseNode(gate);
  return true;
}

bool fuseActivation(Graph& g, Node* host, Node* act) {
  if (host->attrs().has("mg_act")) return false;
  double alpha, beta;
  if (!activationParams(act, alpha, beta)) return false;
  host->attrs().set("mg_act", act->kind());
  if (alpha != 0) host->attrs().set("mg_alpha", alpha);
  if (beta != 0) host->attrs().set("mg_beta", beta);
  g.replaceAllUsesWith(act->output(0), host->output(0));
  g.eraseNode(act);
  return true;
}

}  // namespace

Expected<bool> fuseEpilogues(Graph& g) {
  bool changed = false;
  std::set<Node*> erased;
  for (Node* host : g.nodes()) {
    if (erased.count(host) || !isEpilogueHost(host)) continue;
    for (;;) {  // bias, then residual, then activation, as far as the chain goes
      Value* y = host->output(0);
      if (!soleUse(y)) {
        if (y->uses().size() == 2) {
          Node* a = y->uses()[0].node;
          Node* b = y->uses()[1].node;
          if (fuseGatedActivation(g, host)) {
            erased.insert(a);
            erased.insert(b);
            changed = true;
          }
        }
        break;
      }
      Node* next = y->uses()[0].node;
      bool fused = false;
      erased.insert(next);  // erased when fused; if not fused, the loop stops here anyway
      // A residual must have y's shape at every binding, not only at the maximum (an operand of
      // dim M broadcast against N when M = 1): checked on the symbolic shapes.
      bool sameAtEveryBinding = true;
      for (const Value* in : next->inputs())
        if (in && !in->isConstant() && !sameSymbolicShape(in, y)) sameAtEveryBinding = false;
      if (next->kind() == "Add" && next->output(0)->type() == y->type() && sameAtEveryBinding) {
        fused = host->kind() == "Conv" && (fuseBias(g, host, next) || fuseResidual(g, host, next));
      } else {
        const OpSchema* s = next->schema();
        if (s && s->has(kActivation)) fused = fuseActivation(g, host, next);
      }
      if (!fused) {
        erased.erase(next);
        break;
      }
      changed = true;
    }
  }
  return changed;
}

namespace {
class FuseEpiloguePass : public Pass {
 public:
  const char* name() const override { return "fuse-epilogue"; }
  const char* summary() const override {
    return "fold bias, residual Add and activation into Conv/Gemm/MatMul epilogues";
  }
  Expected<bool> run(Graph& g, PassContext&) override { return fuseEpilogues(g); }
};
}  // namespace

std::unique_ptr<Pass> makeFuseEpiloguePass() { return std::make_unique<FuseEpiloguePass>(); }

}  // namespace magneto
