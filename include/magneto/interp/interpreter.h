// The reference interpreter: runs a Graph node by node with the plain reference kernels of
// runtime/cpu (never the optimized ones). It is the numeric oracle for pass tests and what constant
// folding evaluates with.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

// Evaluates one node on the given operand values (nullptr for absent operands).
Expected<std::vector<Tensor>> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs);
// The same with the result types given (a node evaluated at another binding of its dynamic
// dimensions than the one its results' types describe).
Expected<std::vector<Tensor>> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs,
                                           const std::vector<TensorType>& resultTypes);

// Runs the whole graph. Inputs by graph input name; returns graph outputs by name.
Expected<std::map<std::string, Tensor>> interpret(const Graph& g,
                                                  const std::map<std::string, Tensor>& inputs);

// Whether the reference runtime has a kernel for this op.
bool hasReferenceKernel(const std::string& op);

}  // namespace magneto
