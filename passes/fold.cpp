// fold: constant folding. A node whose operands are all constants (or, for shape-only ops such as
// Shape and Size, whose operand has a static shape) is evaluated at compile time with the
// reference interpreter, and its results become constants.
//
// Legal because every op is a pure function of its operands; the reference kernels are the same
// ones that define the interpreter's semantics. Ops marked kNoFold (random generators) are kept.
// Results larger than kMaxFoldedBytes are not folded, so that folding never inflates the weights
// (an Expand of a scalar to a big tensor stays a node), and one run folds at most a FoldBudget of
// bytes in all (include/magneto/interp/fold_node.h: an unrolled Loop must not fold gigabytes).
//
//   const %a = dense<[1, 2]>            const %c = dense<[2, 4]>
//   %c = Mul(%a, %a)             ->     %y = Add(%x, %c)
//   %y = Add(%x, %c)
//
// Golden test: tests/ir/fold.mlir
#include "magneto/interp/fold_node.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

Expected<bool> foldConstants(Graph& g) {
  bool changed = false;
  FoldBudget budget = FoldBudget::forGraph(g);
  for (Node* n : g.nodes()) {
    MG_ASSIGN_OR_RETURN(bool c, foldNode(g, n, nullptr, &budget));
    changed |= c;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FoldPass : public Pass {
 public:
  const char* name() const override { return "fold"; }
  const char* summary() const override { return "evaluate nodes whose operands are constants"; }
  Expected<bool> run(Graph& g, PassContext&) override { return foldConstants(g); }
};
}  // namespace

std::unique_ptr<Pass> makeFoldPass() { return std::make_unique<FoldPass>(); }

}  // namespace magneto
