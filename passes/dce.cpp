// dce: removes nodes whose results nobody uses, and constants nobody reads.
//
// Legal because every op in the IR is free of side effects: a result that is neither used nor a
// graph output cannot change what the graph computes. Graph inputs are kept (they are the ABI).
//
//   %a = Relu(%x)          (unused)   ->   (removed)
//   %b = Sigmoid(%x)                        %b = Sigmoid(%x)
//   output %b                               output %b
//
// A node producing a data symbol (docs/DYNAMIC_SHAPES.md, "Data-dependent extents") is live while
// another value's shape or shape data names the symbol, even when nobody reads its results: the
// package binds the symbol after that node's step (Shape(NonZero(x)) folded into shape data leaves
// the NonZero without uses).
//
// Golden tests: tests/ir/dce.mlir, tests/ir/data_dependent_dead.mlir
#include <set>

#include "magneto/ir/symbolic.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

Expected<bool> eliminateDeadCode(Graph& g) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    // The data symbols some value names other than in its producer's own results.
    std::set<std::string> named;
    if (hasDataSymbols(g))
      for (const Node* n : g.nodes()) {
        for (const Value* v : n->inputs())
          for (const std::string& s : symbolsOf(v)) named.insert(s);
        if (n->kind() == "MgSymbolic")
          for (const std::string& s : symbolsOf(n->output(0))) named.insert(s);
      }
    for (const Value* v : g.outputs())
      for (const std::string& s : symbolsOf(v)) named.insert(s);
    std::vector<Node*> order = g.nodes();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      bool live = false;
      for (Value* v : n->outputs()) live |= v->hasUses() || v->isGraphOutput();
      if (!live && !named.empty())
        for (const DataSymbolDim& d : producedDataSymbols(g, *n)) live |= named.count(d.symbol) > 0;
      if (!live) {
        g.eraseNode(n);
        changed = again = true;
      }
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
