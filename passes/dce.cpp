// dce: removes nodes whose results nobody uses, and constants nobody reads.
//
// Legal because every op in the IR is free of side effects: a result that is neither used nor a
// graph output cannot change what the graph computes. Graph inputs are kept (they are the ABI).
//
//   %a = Relu(%x)          (unused)   ->   (removed)
//   %b = Sigmoid(%x)                        %b = Sigmoid(%x)
//   output %b                               output %b
//
// Golden test: tests/ir/dce.mlir
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

Expected<bool> eliminateDeadCode(Graph& g) {
  bool changed = false;
  std::vector<Node*> order = g.nodes();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    bool live = false;
    for (Value* v : n->outputs()) live |= v->hasUses() || v->isGraphOutput();
    if (!live) {
      g.eraseNode(n);
      changed = true;
    }
  }
  size_t before = g.constants().size();
  g.removeDeadValues();
  return changed || g.constants().size() != before;
}

namespace {
class DcePass : public Pass {
 public:
  const char* name() const override { return "dce"; }
  const char* summary() const override { return "remove unused nodes and constants"; }
  Expected<bool> run(Graph& g, PassContext&) override { return eliminateDeadCode(g); }
};
}  // namespace

std::unique_ptr<Pass> makeDcePass() { return std::make_unique<DcePass>(); }

}  // namespace magneto
