// Constant evaluation of one node with the reference interpreter: what the fold pass does to every
// node, and what the ONNX frontend does to each node as it imports it (so that shape-computing
// subgraphs become constants before the next node's shapes are inferred). It sits in the interp
// layer because it is "evaluate this node at compile time", below both of its users.
#pragma once

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

// Folds n when its operands are constants (or, for shape-only ops such as Shape and Size, when its
// operand has a static shape) and a reference kernel exists: each result becomes a constant; the
// node is erased when none of its results is still used. Ops marked kNoFold (random generators)
// and results over 64 MiB (a broadcast of a scalar, not weight preprocessing) are kept.
// Returns whether n was folded; when it was and `constants` is given, the constants that replace its
// results, in result order (the importer binds them without scanning the graph's values).
Expected<bool> foldNode(Graph& g, Node* n, std::vector<Value*>* constants = nullptr);

}  // namespace magneto
