// canonicalize: removes ops that compute nothing at inference time — Identity, and Dropout (whose
// output equals its input when not training) — by forwarding their operand to their users; and
// rewrites a two-operand Sum as Add, the form the fusion passes know (old exporters write a
// ResNet shortcut as Sum: it then joins the Conv's epilogue like an Add would).
//
// Legal because both ops return their operand unchanged at inference, and Sum of two operands is
// Add by definition (the same multidirectional broadcasting, the same element type). Kept when
// forwarding would make a graph output alias a graph input or constant, or the same value appear
// twice among the graph outputs (the generated library hands each output its own buffer), and
// Dropout is kept when its mask result is used.
//
//   %a = Conv(%x, %w)                 %a = Conv(%x, %w)
//   %b = Identity(%a)          ->     %c = Relu(%a)
//   %c = Relu(%b)
//
// Golden test: tests/ir/canonicalize.mlir
#include <algorithm>

#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

namespace {
// Sum(a, b) -> Add(a, b), keeping the result value (its name, type and users) in place.
bool sumToAdd(Graph& g, Node* n) {
  if (n->kind() != "Sum" || n->numInputs() != 2 || n->numOutputs() != 1) return false;
  Value* out = n->output(0);
  Node* add = g.createNode("Add", {n->input(0), n->input(1)}, {out->type()}, {}, n->name(), n);
  g.replaceAllUsesWith(out, add->output(0));
  std::string name = out->name();
  g.eraseNode(n);
  g.renameValue(add->output(0), name);
  return true;
}
}  // namespace

Expected<bool> canonicalize(Graph& g) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (sumToAdd(g, n)) {
      changed = true;
      continue;
    }
    if (n->kind() != "Identity" && n->kind() != "Dropout") continue;
    if (n->kind() == "Dropout" && n->numOutputs() > 1 &&
        (n->output(1)->hasUses() || n->output(1)->isGraphOutput()))
      continue;
    Value* in = n->input(0);
    Value* out = n->output(0);
    if (out->isGraphOutput()) {
      bool producedByNode = in->producer() != nullptr;
      if (!producedByNode || in->isGraphOutput()) continue;
    }
    g.replaceAllUsesWith(out, in);
    g.eraseNode(n);
    changed = true;
  }
  return changed;
}

namespace {
class CanonicalizePass : public Pass {
 public:
  const char* name() const override { return "canonicalize"; }
  const char* summary() const override { return "remove Identity and inference-time Dropout; two-operand Sum -> Add"; }
  Expected<bool> run(Graph& g, PassContext&) override { return canonicalize(g); }
};
}  // namespace

std::unique_ptr<Pass> makeCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

}  // namespace magneto
