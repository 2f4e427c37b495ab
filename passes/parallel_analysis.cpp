// ParallelAnalysis (see include/magneto/passes/parallel_analysis.h) and the test-only pass
// `print-parallel-groups`, which prints the groups as comments before the IR and changes nothing.
//
// Golden test: tests/ir/parallel_analysis.mlir
#include "magneto/passes/parallel_analysis.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

bool isGroupableOp(const Node& n) {
  static const std::set<std::string> kCompute = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "LpPool", "BatchNormalization", "InstanceNormalization",
      "LayerNormalization", "RMSNormalization", "Softmax", "LogSoftmax", "LRN", "LSTM", "GRU", "RNN", "Einsum",
      "MgElementwise", "Resize", "ReduceMean", "ReduceSum", "ReduceMax", "Gather", "Transpose"};
  if (kCompute.count(n.kind())) return true;
  // A slice copied into its Concat's result (place-concat-slices) is a kernel; a view is not.
  if (n.kind() == "MgChannelSlice") return n.attrs().getInt("materialize", 0) != 0;
  const OpSchema* s = n.schema();
  return s && s->has(kElementwise) && n.output(0)->type().numel() >= 1024;
}

Reachability::Reachability(const Graph& g) {
  std::vector<Node*> nodes = g.nodes();
  order_.assign(nodes.begin(), nodes.end());
  size_t words = (order_.size() + 63) / 64;
  anc_.assign(order_.size(), std::vector<uint64_t>(words, 0));
  std::unordered_map<const Node*, int> idx;
  for (size_t i = 0; i < order_.size(); ++i) idx[order_[i]] = static_cast<int>(i);
  for (size_t i = 0; i < order_.size(); ++i) {
    for (const Value* v : order_[i]->inputs()) {
      if (!v || !v->producer()) continue;
      int p = idx.at(v->producer());
      anc_[i][p / 64] |= uint64_t{1} << (p % 64);
      for (size_t w = 0; w < words; ++w) anc_[i][w] |= anc_[p][w];
    }
  }
}

int Reachability::index(const Node* n) const {
  auto it = std::find(order_.begin(), order_.end(), n);
  return it == order_.end() ? -1 : static_cast<int>(it - order_.begin());
}

bool Reachability::dependsOn(const Node* b, const Node* a) const {
  int ib = index(b), ia = index(a);
  if (ib < 0 || ia < 0) return false;
  return (anc_[ib][ia / 64] >> (ia % 64)) & 1;
}

namespace {

// A node the memory planner turns into an alias of its operand (no step runs): a kView op, or a
// batch-1 MgChannelSlice that place-concat-slices did not materialize.
bool isViewNode(const Node& n) {
  if (n.kind() == "MgChannelSlice")
    return n.attrs().getInt("materialize", 0) == 0 && n.hasInput(0) && n.input(0)->rank() >= 2 &&
           n.input(0)->dims()[0] == 1;
  const OpSchema* s = n.schema();
  return s && s->has(kView);
}

// The branch starting at `head`: follow the only user while the current op has exactly one
// user and that user reads nothing else produced inside another branch (it is not the join).
std::vector<Node*> branchFrom(Node* head) {
  std::vector<Node*> chain{head};
  Node* cur = head;
  for (;;) {
    if (cur->numOutputs() != 1) break;
    const Value* out = cur->output(0);
    if (out->uses().size() != 1 || out->isGraphOutput()) break;
    Node* next = out->uses()[0].node;
    int produced = 0;  // operands of `next` that come from nodes (a join reads several)
    for (const Value* v : next->inputs())
      if (v && v->producer()) ++produced;
    if (produced != 1) break;
    chain.push_back(next);
    cur = next;
  }
  return chain;
}

// Keeps the largest prefix-closed set of mutually independent members (greedy, in order).
std::vector<Node*> independentSubset(const std::vector<Node*>& cands, const Reachability& r) {
  std::vector<Node*> kept;
  for (Node* c : cands) {
    bool ok = true;
    for (Node* k : kept) ok &= r.independent(c, k);
    if (ok) kept.push_back(c);
  }
  return kept;
}

}  // namespace

std::vector<SiblingGroup> findSiblingGroups(const Graph& g) {
  Reachability reach(g);
  return findSiblingGroups(g, reach);
}

std::vector<SiblingGroup> findSiblingGroups(const Graph& g, const Reachability& reach) {
  std::vector<SiblingGroup> groups;
  std::set<const Node*> taken;
  auto pos = [&](const Node* n) { return reach.index(n); };
  auto addGroup = [&](SiblingGroup::Kind kind, const Value* fork, const std::string& root, int step,
                      std::vector<Node*> c) {
    std::vector<Node*> filtered;
    for (Node* n : c)
      if (!taken.count(n) && isGroupableOp(*n)) filtered.push_back(n);
    std::sort(filtered.begin(), filtered.end(), [&](Node* a, Node* b) { return pos(a) < pos(b); });
    filtered.erase(std::unique(filtered.begin(), filtered.end()), filtered.end());
    filtered = independentSubset(filtered, reach);
    if (filtered.size() < 2) return;
    for (Node* n : filtered) taken.insert(n);
    groups.push_back({kind, fork, step, std::move(filtered), root});
  };
  // The branches starting at `heads` (consumers of one root), step by step.
  auto addBranches = [&](const Value* fork, const std::string& root, std::vector<Node*> heads,
                         bool sameInput) {
    std::sort(heads.begin(), heads.end(), [&](Node* a, Node* b) { return pos(a) < pos(b); });
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    if (heads.size() < 2) return;
    std::vector<std::vector<Node*>> branches;
    size_t longest = 0;
    // Steps count kernels: views (no step runs) are not a step of their branch, so a branch that
    // starts with a channel slice of a wide-merged result lines up with its siblings' first ops.
    for (Node* h : heads) {
      std::vector<Node*> chain;
      for (Node* n : branchFrom(h))
        if (!isViewNode(*n)) chain.push_back(n);
      branches.push_back(chain);
      longest = std::max(longest, branches.back().size());
    }
    addGroup(sameInput ? SiblingGroup::Kind::kSameInput : SiblingGroup::Kind::kBranchStep, fork, root,
             0, heads);
    for (size_t s = 0; s < longest; ++s) {
      std::vector<Node*> step;
      for (auto& b : branches)
        if (s < b.size()) step.push_back(b[s]);
      addGroup(SiblingGroup::Kind::kBranchStep, fork, root, static_cast<int>(s), step);
    }
  };
  // Forks in value creation order (deterministic): inputs, constants are not forks of work.
  std::vector<const Value*> forks;
  for (const Value* v : g.values()) {
    if (v->isConstant()) continue;
    std::set<const Node*> users;
    for (const Use& u : v->uses()) users.insert(u.node);
    if (users.size() >= 2) forks.push_back(v);
  }
  std::sort(forks.begin(), forks.end(), [&](const Value* a, const Value* b) {
    int pa = a->producer() ? pos(a->producer()) : -1, pb = b->producer() ? pos(b->producer()) : -1;
    return pa != pb ? pa < pb : a->id() < b->id();
  });
  for (const Value* f : forks) {
    std::vector<Node*> heads;
    for (const Use& u : f->uses()) heads.push_back(u.node);
    addBranches(f, "fork %" + f->name(), heads, /*sameInput=*/true);
  }
  // Multi-output nodes (Split, TopK, a recurrent op's outputs): the consumers of its outputs.
  // The outputs are computed together, so the branches on them are as independent as a fork's.
  for (const Node* n : g.nodes()) {
    if (n->numOutputs() < 2) continue;
    std::vector<Node*> heads;
    const Value* first = nullptr;
    int used = 0;
    for (const Value* o : n->outputs()) {
      if (!o || o->uses().empty()) continue;
      if (!first) first = o;
      ++used;
      for (const Use& u : o->uses()) heads.push_back(u.node);
    }
    if (used >= 2) addBranches(first, fmt::format("outputs of %{} ({})", n->name(), n->kind()), heads, false);
  }
  // The graph's inputs: branches that start on different inputs (recommendation towers, heads on
  // several feature maps) share no producer at all.
  {
    std::vector<Node*> heads;
    const Value* first = nullptr;
    int used = 0;
    for (const Value* in : g.inputs()) {
      if (in->uses().empty()) continue;
      if (!first) first = in;
      ++used;
      for (const Use& u : in->uses()) heads.push_back(u.node);
    }
    if (used >= 2) addBranches(first, "graph inputs", heads, false);
  }
  std::sort(groups.begin(), groups.end(), [&](const SiblingGroup& a, const SiblingGroup& b) {
    return pos(a.members[0]) < pos(b.members[0]);
  });
  return groups;
}

std::string describeGroups(const std::vector<SiblingGroup>& groups) {
  std::string s;
  for (size_t i = 0; i < groups.size(); ++i) {
    const SiblingGroup& gr = groups[i];
    s += fmt::format("group {}: {} step {} ({}):", i, gr.root, gr.step,
                     gr.kind == SiblingGroup::Kind::kSameInput ? "same input" : "branch step");
    for (size_t k = 0; k < gr.members.size(); ++k)
      s += fmt::format("{} {} ({})", k ? "," : "", gr.members[k]->name(), gr.members[k]->kind());
    s += "\n";
  }
  return s;
}

namespace {
class PrintParallelGroupsPass : public Pass {
 public:
  const char* name() const override { return "print-parallel-groups"; }
  const char* summary() const override {
    return "test only: print the sibling groups ParallelAnalysis finds (changes nothing)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override {
    std::string text;
    std::string groups = describeGroups(findSiblingGroups(g));
    size_t pos = 0;
    while (pos < groups.size()) {
      size_t end = groups.find('\n', pos);
      text += "// " + groups.substr(pos, end - pos) + "\n";
      pos = end + 1;
    }
    if (groups.empty()) text = "// no sibling groups\n";
    if (ctx.out) ctx.out(text);
    else std::fputs(text.c_str(), stderr);
    return false;
  }
};
}  // namespace

std::unique_ptr<Pass> makePrintParallelGroupsPass() {
  return std::make_unique<PrintParallelGroupsPass>();
}

}  // namespace magneto
