// The schedule of marked groups (passes/group_order.h).
#include "group_order.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "magneto/ir/symbolic.h"

namespace magneto {
namespace group_order {

namespace {

using Preds = std::unordered_map<const Node*, std::vector<const Node*>>;

bool isTopological(const Graph& g, const Preds& dataPreds) {
  std::unordered_set<const Node*> seen;
  for (const Node* n : g.nodes()) {
    for (const Value* v : n->inputs())
      if (v && v->producer() && !seen.count(v->producer())) return false;
    if (auto it = dataPreds.find(n); it != dataPreds.end())
      for (const Node* p : it->second)
        if (!seen.count(p)) return false;
    seen.insert(n);
  }
  return true;
}

}  // namespace

bool isTopological(const Graph& g) { return isTopological(g, dataSymbolPredecessors(g)); }

bool groupsContiguous(const Graph& g) {
  std::set<int> closed;
  int prev = -1;
  for (const Node* n : g.nodes()) {
    if (n->group() != prev && n->group() >= 0 && !closed.insert(n->group()).second) return false;
    prev = n->group();
  }
  return true;
}

bool makeContiguous(Graph& g, const std::vector<Node*>& members, std::string& why) {
  std::vector<Node*> order = g.nodes();
  std::unordered_map<const Node*, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::unordered_set<const Node*> memberSet(members.begin(), members.end());
  size_t first = order.size(), last = 0;
  for (const Node* m : members) {
    first = std::min(first, pos.at(m));
    last = std::max(last, pos.at(m));
  }
  if (last - first + 1 == members.size()) return true;
  const auto dataPreds = dataSymbolPredecessors(g);
  std::unordered_set<const Node*> after;
  std::set<int> afterGroups;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = first; i <= last; ++i) {
      Node* n = order[i];
      if (memberSet.count(n) || after.count(n)) continue;
      bool dep = n->group() >= 0 && afterGroups.count(n->group());
      for (const Value* v : n->inputs())
        dep |= v && v->producer() && (memberSet.count(v->producer()) || after.count(v->producer()));
      if (auto it = dataPreds.find(n); it != dataPreds.end())
        for (const Node* p : it->second) dep |= memberSet.count(p) || after.count(p);
      if (!dep) continue;
      after.insert(n);
      if (n->group() >= 0) afterGroups.insert(n->group());
      grew = true;
    }
  }
  Node* anchor = last + 1 < order.size() ? order[last + 1] : nullptr;
  for (size_t i = first; i <= last; ++i)
    if (memberSet.count(order[i])) g.moveBefore(order[i], anchor);
  for (size_t i = first; i <= last; ++i)
    if (after.count(order[i])) g.moveBefore(order[i], anchor);
  bool topo = isTopological(g, dataPreds), runs = groupsContiguous(g);
  if (topo && runs) return true;
  for (Node* n : order) g.moveBefore(n, nullptr);
  why = !topo ? "no topological order puts the members next to each other"
              : "making them contiguous would split an earlier group";
  return false;
}

}  // namespace group_order
}  // namespace magneto
