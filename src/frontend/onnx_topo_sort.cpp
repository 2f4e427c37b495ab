// Topological order of an ONNX graph, established on the proto before anything else reads it.
//
// ONNX requires node lists to be sorted, but exporters and hand-edited models get it wrong, and
// ONNX's checker rejects such models with "Nodes in a graph must be topologically sorted". We sort
// first (stable: Kahn's algorithm taking the lowest written index among ready nodes), so a model
// that is only out of order imports, and a model that cannot be ordered gets a precise error:
// the undefined tensor and its reader, or the cycle spelled out node by node.
#include "onnx_topo_sort.h"

#include <map>
#include <queue>
#include <set>
#include <vector>

#include "onnx_loader.h"

namespace magneto {
namespace frontend {

namespace {

// Follows "reads a tensor written by a node not yet scheduled" edges from `start` until a node
// repeats; returns the cycle as text.
std::string describeCycle(const onnx::GraphProto& graph, const std::map<std::string, int>& producer,
                          const std::vector<int>& indegree, int start) {
  std::vector<int> path;
  std::vector<std::string> via;
  std::map<int, size_t> seen;
  int cur = start;
  while (!seen.count(cur)) {
    seen[cur] = path.size();
    path.push_back(cur);
    int next = -1;
    for (const std::string& in : graph.node(cur).input()) {
      auto it = producer.find(in);
      if (it != producer.end() && indegree[it->second] > 0) {
        next = it->second;
        via.push_back(in);
        break;
      }
    }
    if (next < 0) return describeOnnxNode(graph.node(cur), cur);  // not expected
    cur = next;
  }
  // path[s..] is the cycle, walked against the data flow (path[k] reads via[k], written by
  // path[k+1]; the last reads via.back(), written by path[s]); print it along the flow.
  const size_t s = seen[cur];
  std::string text = describeOnnxNode(graph.node(path[s]), path[s]);
  for (size_t i = path.size(); i-- > s;)
    text += " -> '" + via[i] + "' -> " + describeOnnxNode(graph.node(path[i]), path[i]);
  return text;
}

}  // namespace

Status sortOnnxNodes(onnx::GraphProto& graph, const std::string& path) {
  const int n = graph.node_size();
  std::set<std::string> defined;  // graph inputs and initializers
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& vi : graph.input()) defined.insert(vi.name());

  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    const auto& node = graph.node(i);
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      auto it = producer.find(out);
      if (it != producer.end())
        return badInput("{}: {} writes '{}', which {} already writes (ONNX graphs are in SSA form)",
                        path, describeOnnxNode(node, i), out,
                        it->second == i ? std::string("it")
                                        : describeOnnxNode(graph.node(it->second), it->second));
      if (defined.count(out))
        return badInput("{}: {} writes '{}', which is also a graph input or initializer", path,
                        describeOnnxNode(node, i), out);
      producer[out] = i;
    }
  }

  // Graph outputs must be defined too (ONNX's version converter dereferences them unchecked).
  for (const auto& vi : graph.output()) {
    if (producer.count(vi.name()) || defined.count(vi.name())) continue;
    return badInput("{}: graph output '{}' is not computed by any node, input or initializer", path,
                    vi.name());
  }

  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    const auto& node = graph.node(i);
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        if (defined.count(in)) continue;
        return badInput("{}: {} reads '{}', which no node, graph input or initializer defines",
                        path, describeOnnxNode(node, i), in);
      }
      ++indegree[i];
      consumers[it->second].push_back(i);
    }
  }

  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--indegree[c] == 0) ready.push(c);
  }
  if (static_cast<int>(order.size()) != n) {
    int start = 0;
    while (indegree[start] == 0) ++start;
    return badInput("{}: the graph has a cycle: {}", path,
                    describeCycle(graph, producer, indegree, start));
  }

  bool sorted = true;
  for (int i = 0; i < n; ++i) sorted &= order[i] == i;
  if (sorted) return Status::success();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (int i : order) graph.add_node()->Swap(nodes.Mutable(i));
  return Status::success();
}

}  // namespace frontend
}  // namespace magneto
