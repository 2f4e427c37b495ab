// Checking and sorting an ONNX graph's node list into a schedule (see onnx_topo_sort.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// Reorders graph.node() topologically, keeping the written order wherever it is already legal.
// Errors (prefixed with `path`): a tensor written twice (by two nodes, or by a node and a graph
// input or initializer), a node or graph output reading a tensor that nothing defines, a cycle.
Status sortOnnxNodes(onnx::GraphProto& graph, const std::string& path);

}  // namespace frontend
}  // namespace magneto
