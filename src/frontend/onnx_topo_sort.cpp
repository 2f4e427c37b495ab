// Topological order of an ONNX graph, established on the proto before anything else reads it.
//
// ONNX requires node lists to be sorted, but exporters and hand-edited models get it wrong, and
// ONNX's checker rejects such models with "Nodes in a graph must be topologically sorted". We sort
// first (stable: Kahn's algorithm taking the lowest written index among ready nodes), so a model
// that is only out of order imports, and a model that cannot be ordered gets a precise error:
// the undefined tensor and its reader, or the cycle spelled out node by node. A node with
// subgraphs (If, Loop, Scan) also depends on the outer-scope names its subgraphs read (ONNX's
// implicit inputs); each subgraph is sorted the same way, seeing the names defined around it.
#include "onnx_topo_sort.h"

#include <map>
#include <queue>
#include <set>
#include <vector>

#include "onnx_loader.h"

namespace magneto {
namespace frontend {

namespace {

// Names that `g` (and its subgraphs) read without defining them: what it takes from the scopes
// around it.
void freeNames(const onnx::GraphProto& g, std::set<std::string>& out) {
  std::set<std::string> local;
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& vi : g.input()) local.insert(vi.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) local.insert(o);
  std::set<std::string> read;
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) read.insert(in);
    for (const auto& a : n.attribute())
      if (a.has_g()) freeNames(a.g(), read);
  }
  for (const auto& vi : g.output()) read.insert(vi.name());
  for (const auto& name : read)
    if (!name.empty() && !local.count(name)) out.insert(name);
}

// What node `n` reads: its operands, then the free names of its subgraphs.
std::vector<std::string> nodeReads(const onnx::NodeProto& n) {
  std::vector<std::string> reads(n.input().begin(), n.input().end());
  std::set<std::string> implicit;
  for (const auto& a : n.attribute())
    if (a.has_g()) freeNames(a.g(), implicit);
  reads.insert(reads.end(), implicit.begin(), implicit.end());
  return reads;
}

bool isOperand(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& in : n.input())
    if (in == name) return true;
  return false;
}

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
    for (const std::string& in : nodeReads(graph.node(cur))) {
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

Status sortOnnxNodes(onnx::GraphProto& graph, const std::string& path, const std::string& where,
                     const std::set<std::string>& outer) {
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
        return badInput("{}: {}{} writes '{}', which {} already writes (ONNX graphs are in SSA "
                        "form)",
                        path, describeOnnxNode(node, i), where, out,
                        it->second == i ? std::string("it")
                                        : describeOnnxNode(graph.node(it->second), it->second));
      if (defined.count(out))
        return badInput("{}: {}{} writes '{}', which is also a graph input or initializer", path,
                        describeOnnxNode(node, i), where, out);
      producer[out] = i;
    }
  }

  // Graph outputs must be defined too (ONNX's version converter dereferences them unchecked).
  for (const auto& vi : graph.output()) {
    if (producer.count(vi.name()) || defined.count(vi.name()) || outer.count(vi.name())) continue;
    if (where.empty())
      return badInput("{}: graph output '{}' is not computed by any node, input or initializer",
                      path, vi.name());
    return badInput("{}: output '{}'{} is not computed by any node, input or initializer", path,
                    vi.name(), where);
  }

  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    const auto& node = graph.node(i);
    std::set<int> from;  // a producer counts once, however many of its tensors node i reads
    for (const std::string& in : nodeReads(node)) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        // An implicit input nothing defines is reported by the subgraph's own sort, below,
        // naming the node inside that reads it.
        if (defined.count(in) || outer.count(in) || !isOperand(node, in)) continue;
        return badInput("{}: {}{} reads '{}', which no node, graph input or initializer defines",
                        path, describeOnnxNode(node, i), where, in);
      }
      if (from.insert(it->second).second) {
        ++indegree[i];
        consumers[it->second].push_back(i);
      }
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
  if (!sorted) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(graph.mutable_node());
    for (int i : order) graph.add_node()->Swap(nodes.Mutable(i));
  }

  // The subgraphs, seeing everything defined here and around here.
  std::set<std::string> visible = outer;
  visible.insert(defined.begin(), defined.end());
  for (const auto& [name, index] : producer) visible.insert(name);
  for (int i = 0; i < n; ++i) {
    onnx::NodeProto& node = *graph.mutable_node(i);
    for (auto& a : *node.mutable_attribute()) {
      if (!a.has_g()) continue;
      MG_RETURN_IF_ERROR(sortOnnxNodes(
          *a.mutable_g(), path,
          fmt::format(" in subgraph '{}' of {}{}", a.name(), describeOnnxNode(node, i), where),
          visible));
    }
  }
  return Status::success();
}

}  // namespace frontend
}  // namespace magneto
