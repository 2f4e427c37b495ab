// fold-affine: merges chains of Mul and Add by constants into one Mul and one Add.
//
//   Mul(Mul(x, a), b)  ->  Mul(x, a*b)
//   Add(Add(x, a), b)  ->  Add(x, a+b)
//   Mul(Add(x, a), b)  ->  Add(Mul(x, b), a*b)        (the Mul moves inwards, to meet the next one)
//
// applied until nothing changes, with a, b float32 constants (either operand position; the
// constant products and sums are evaluated at compile time by the reference interpreter). Old
// exporters write a BatchNormalization then a per-channel scale layer (Mul, Add) before each
// ReLU (DenseNet-121 of the ONNX model zoo); after fold-batchnorm that is Mul, Add, Mul, Add per
// element, and this pass leaves one Mul and one Add for fuse-elementwise.
//
// Legal because multiplication distributes over addition and both associate in real arithmetic;
// in float32 the result differs by rounding only (a few ulp, as when fold-batchnorm scales a
// convolution's weights). The inner node must have no other use (it is rewritten, not copied) and
// must not be a graph output. Result shapes are unchanged: broadcasting is associative, so
// broadcast(x, a, b) is the same whichever pair is combined first.
//
//   const %a, %b, %c, %d : f32[C,1,1]            const %ac = a*c, %bcd = b*c+d
//   %t = Mul(%x, %a)                              %u = Mul(%x, %ac)
//   %u = Add(%t, %b)                      ->      %w = Add(%u, %bcd)
//   %v = Mul(%u, %c)
//   %w = Add(%v, %d)
//
// Golden test: tests/ir/fold_affine.mlir
#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"
#include "fold_common.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

// A name for what is made from n: its own, else its result's.
std::string baseName(const Node* n) { return n->name().empty() ? n->output(0)->name() : n->name(); }

using fold::constF32;

// n is Mul or Add of a float32 value and a float32 constant: its variable and constant operands.
bool splitAffine(Node* n, Value** var, Value** cst) {
  if ((n->kind() != "Mul" && n->kind() != "Add") || n->numInputs() != 2 || n->numOutputs() != 1) return false;
  Value* a = n->input(0);
  Value* b = n->input(1);
  if (!a || !b || n->output(0)->dtype() != DType::kF32) return false;
  if (constF32(b) && !constF32(a)) return *var = a, *cst = b, true;
  if (constF32(a) && !constF32(b)) return *var = b, *cst = a, true;
  return false;
}

// The constant op(a, b), evaluated now by the reference interpreter (as the fold pass does).
Expected<Value*> foldedConstant(Graph& g, const char* op, Value* a, Value* b, Node* at) {
  MG_ASSIGN_OR_RETURN(Dims dims, broadcastDims(a->dims(), b->dims()));
  Node* k = g.createNode(op, {a, b}, {TensorType{DType::kF32, dims}}, {}, baseName(at) + "/affine", at);
  auto outs = evaluateNode(*k, {&a->constant(), &b->constant()});
  g.eraseNode(k);
  if (!outs.ok()) return outs.status();
  return g.addConstant(baseName(at) + "/affine", std::move(outs.value()[0]));
}

}  // namespace

Expected<bool> foldAffine(Graph& g) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (Node* n : g.nodes()) {
      Value *x, *c;
      if (!splitAffine(n, &x, &c)) continue;
      Node* p = x->producer();
      Value *y, *c2;
      if (!p || x->uses().size() != 1 || x->isGraphOutput() || !splitAffine(p, &y, &c2)) continue;
      const bool mul = n->kind() == "Mul", innerMul = p->kind() == "Mul";
      if (!mul && innerMul) continue;  // Add(Mul(y, c2), c): already the target form
      if (mul == innerMul) {  // same op twice: combine the constants
        MG_ASSIGN_OR_RETURN(Value* k, foldedConstant(g, mul ? "Mul" : "Add", c2, c, n));
        n->setInput(0, y);
        n->setInput(1, k);
      } else {  // Mul(Add(y, c2), c) -> Add(Mul(y, c), c2*c)
        MG_ASSIGN_OR_RETURN(Value* k, foldedConstant(g, "Mul", c2, c, n));
        MG_ASSIGN_OR_RETURN(Dims dims, broadcastDims(y->dims(), c->dims()));
        Node* m = g.createNode("Mul", {y, c}, {TensorType{DType::kF32, dims}}, {}, baseName(p) + "/scaled", p);
        Node* add = g.createNode("Add", {m->output(0), k}, {n->output(0)->type()}, {}, baseName(n) + "/folded", n);
        g.replaceAllUsesWith(n->output(0), add->output(0));
        g.eraseNode(n);
      }
      if (!x->hasUses()) g.eraseNode(p);
      changed = again = true;
      break;  // the node list changed: start over
    }
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FoldAffinePass : public Pass {
 public:
  const char* name() const override { return "fold-affine"; }
  const char* summary() const override {
    return "merge chains of Mul/Add by constants into one Mul and one Add";
  }
  Expected<bool> run(Graph& g, PassContext&) override { return foldAffine(g); }
};
}  // namespace

std::unique_ptr<Pass> makeFoldAffinePass() { return std::make_unique<FoldAffinePass>(); }

}  // namespace magneto
