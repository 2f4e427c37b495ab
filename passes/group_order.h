// The schedule of marked groups, shared by the passes that record them (parallel-co-optimize,
// recurrent-wavefront): a group's members must form one contiguous run of the node order, which
// must stay topological. Internal to passes/; not an installed header.
#pragma once

#include <string>
#include <vector>

#include "magneto/ir/graph.h"

namespace magneto {
namespace group_order {

// Every input is defined before its use, in the current node order.
bool isTopological(const Graph& g);

// Every marked group's members form one contiguous run.
bool groupsContiguous(const Graph& g);

// Moves `members` next to each other, in their order: every non-member between the first and the
// last member that depends on a member (or shares a group with one that does) goes after them;
// the rest stays before. Legal when the result is topological with every group contiguous; on
// failure the old order is restored and `why` says what went wrong.
bool makeContiguous(Graph& g, const std::vector<Node*>& members, std::string& why);

}  // namespace group_order
}  // namespace magneto
