// Checking and sorting an ONNX graph's node list into a schedule (see onnx_topo_sort.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// Reorders graph.node() topologically, keeping the written order wherever it is already legal.
// Errors (prefixed with `path`): a tensor written twice (by two nodes, or by a node and a graph
// input or initializer), a node or graph output reading a tensor that nothing defines, a cycle.
// Subgraphs (If, Loop and Scan bodies) are sorted too: a node reads, besides its operands, every
// outer-scope name its subgraphs read (ONNX's implicit inputs), and a subgraph may read the names
// of the graphs around it. `where` and `outer` are for that recursion: how errors name the
// subgraph, and the names defined around it.
Status sortOnnxNodes(onnx::GraphProto& graph, const std::string& path,
                     const std::string& where = "", const std::set<std::string>& outer = {});

}  // namespace frontend
}  // namespace magneto
