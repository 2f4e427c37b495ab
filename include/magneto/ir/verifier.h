// The verifier: structural invariants of a Graph, checked after every pass in tests and debug
// builds. Returns an error that names the offending node; never aborts.
#pragma once

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

// Checks: every node's op is registered and its arity and attributes fit the schema; operands are
// defined before use (the node order is a schedule); use lists match operands; result types are
// what shape inference gives; value names are unique; graph outputs are defined; members of a
// parallel group are contiguous in the schedule and do not depend on each other.
Status verifyGraph(const Graph& g);

// Runs shape inference over every node in order (types of results are overwritten).
Status inferShapes(Graph& g);

}  // namespace magneto
