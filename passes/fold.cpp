// fold: constant folding. A node whose operands are all constants (or, for shape-only ops such as
// Shape and Size, whose operand has a static shape) is evaluated at compile time with the
// reference interpreter, and its results become constants.
//
// Legal because every op is a pure function of its operands; the reference kernels are the same
// ones that define the interpreter's semantics. Ops marked kNoFold (random generators) are kept.
// Results larger than kMaxFoldedBytes are not folded, so that folding never inflates the weights
// (an Expand of a scalar to a big tensor stays a node).
//
//   const %a = dense<[1, 2]>            const %c = dense<[2, 4]>
//   %c = Mul(%a, %a)             ->     %y = Add(%x, %c)
//   %y = Add(%x, %c)
//
// Golden test: tests/ir/fold.mlir
#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

namespace {
constexpr int64_t kMaxFoldedBytes = 64 << 20;  // fold weight preprocessing, not broadcasts

bool allConstant(const Node& n) {
  for (Value* v : n.inputs())
    if (v && !(v->isConstant() && v->constant().hasData())) return false;
  return true;
}
}  // namespace

Expected<bool> foldNode(Graph& g, Node* n) {
  const OpSchema* s = OpRegistry::instance().find(n->kind());
  if (!s || s->has(kNoFold)) return false;
  bool shapeOnly = s->has(kShapeOnly);
  if (!shapeOnly && !allConstant(*n)) return false;
  if (!hasReferenceKernel(n->kind())) return false;
  int64_t bytes = 0;
  for (Value* v : n->outputs()) {
    auto b = checkedByteSize(v->type());
    if (!b.ok() || *b > kMaxFoldedBytes - bytes) return false;
    bytes += *b;
  }
  std::vector<Tensor> storage;
  std::vector<const Tensor*> ins;
  storage.reserve(n->numInputs());
  for (Value* v : n->inputs()) {
    if (!v) {
      ins.push_back(nullptr);
    } else if (v->isConstant() && v->constant().hasData()) {
      ins.push_back(&v->constant());
    } else {  // shape-only op on a non-constant: a tensor without data stands in (the input
              // may be far too big to allocate; the kernel reads only its dims)
      storage.push_back(Tensor::opaque(v->type(), 0));
      ins.push_back(&storage.back());
    }
  }
  MG_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluateNode(*n, ins));
  for (size_t i = 0; i < outs.size(); ++i) g.makeConstant(n->output(i), std::move(outs[i]));
  for (Value* v : n->outputs())
    if (v->hasUses() || v->isGraphOutput()) return true;
  g.eraseNode(n);
  return true;
}

Expected<bool> foldConstants(Graph& g) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    MG_ASSIGN_OR_RETURN(bool c, foldNode(g, n));
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
