// Constant evaluation of one node (include/magneto/interp/fold_node.h): the fold pass and the ONNX
// frontend's fold-on-import both call it.
#include "magneto/interp/fold_node.h"

#include <algorithm>

#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"

namespace magneto {

namespace {
constexpr int64_t kMaxFoldedBytes = 64 << 20;  // fold weight preprocessing, not broadcasts
constexpr int64_t kMinFoldBudgetBytes = int64_t{256} << 20;

bool allConstant(const Node& n) {
  for (Value* v : n.inputs())
    if (v && !(v->isConstant() && v->constant().hasData())) return false;
  return true;
}
}  // namespace

FoldBudget FoldBudget::forGraph(const Graph& g) {
  int64_t held = 0;
  for (const Value* v : g.constants()) {
    auto b = checkedByteSize(v->type());
    if (b.ok() && *b < (int64_t{1} << 60) - held) held += *b;
  }
  // Folding may at most double the constants' bytes, or bring them up to 256 MiB.
  return FoldBudget(std::max(kMinFoldBudgetBytes - held, held));
}

bool FoldBudget::take(int64_t bytes) {
  if (bytes > left_) return false;
  left_ -= bytes;
  return true;
}

Expected<bool> foldNode(Graph& g, Node* n, std::vector<Value*>* constants, FoldBudget* budget) {
  const OpSchema* s = n->schema();
  if (!s || s->has(kNoFold)) return false;
  bool shapeOnly = s->has(kShapeOnly);
  if (!shapeOnly && !allConstant(*n)) return false;
  // A shape that depends on dynamic dimensions is not a constant: its dims are only the reference
  // binding's (docs/DYNAMIC_SHAPES.md).
  for (const Value* v : n->inputs())
    if (v && v->isSymbolic()) return false;
  if (!hasReferenceKernel(n->kind())) return false;
  int64_t bytes = 0;
  for (Value* v : n->outputs()) {
    auto b = checkedByteSize(v->type());
    if (!b.ok() || *b > kMaxFoldedBytes - bytes) return false;
    bytes += *b;
  }
  if (budget && !shapeOnly && !budget->take(bytes)) return false;
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
  if (constants) constants->clear();
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* c = g.makeConstant(n->output(i), std::move(outs[i]));
    if (constants) constants->push_back(c);
  }
  for (Value* v : n->outputs())
    if (v->hasUses() || v->isGraphOutput()) return true;
  g.eraseNode(n);
  return true;
}

}  // namespace magneto
