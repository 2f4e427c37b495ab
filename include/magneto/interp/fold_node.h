// Constant evaluation of one node with the reference interpreter: what the fold pass does to every
// node, and what the ONNX frontend does to each node as it imports it (so that shape-computing
// subgraphs become constants before the next node's shapes are inferred). It sits in the interp
// layer because it is "evaluate this node at compile time", below both of its users.
#pragma once

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

// How many bytes of folded results one import, or one run of the fold pass, may create in all. Each
// fold is capped (64 MiB), but a Loop unrolled 1024 times can fold a 16 MiB result per iteration, and
// every one stays in memory until the import ends: 16 GiB from a 300-byte model. Past the budget,
// nodes stay nodes (computed at run time, exactly as they would be without folding). Folding may at
// most double the bytes of the graph's constants (when the budget is made), or bring them up to
// 256 MiB, so that weight preprocessing (transposes, dequantization of initializers) of a big model
// still folds.
class FoldBudget {
 public:
  explicit FoldBudget(int64_t bytes) : left_(bytes) {}
  static FoldBudget forGraph(const Graph& g);
  // Takes `bytes` from the budget when they fit; false (and nothing taken) when they do not.
  bool take(int64_t bytes);
  int64_t left() const { return left_; }

 private:
  int64_t left_;
};

// Folds n when its operands are constants (or, for shape-only ops such as Shape and Size, when its
// operand has a static shape) and a reference kernel exists: each result becomes a constant; the
// node is erased when none of its results is still used. Ops marked kNoFold (random generators)
// and results over 64 MiB (a broadcast of a scalar, not weight preprocessing) are kept.
// A fold whose results do not fit in `budget` (when given) is skipped too.
// Returns whether n was folded; when it was and `constants` is given, the constants that replace its
// results, in result order (the importer binds them without scanning the graph's values).
Expected<bool> foldNode(Graph& g, Node* n, std::vector<Value*>* constants = nullptr,
                        FoldBudget* budget = nullptr);

}  // namespace magneto
