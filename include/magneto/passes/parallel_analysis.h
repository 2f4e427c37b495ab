// ParallelAnalysis: finds sibling groups — sets of ops none of which depends on another, that
// could run at the same time. Groups start at a root and follow its branches:
//
//   roots  : a tensor with several consumers (a fork: Inception heads, Q/K/V projections, MoE
//            experts, detector heads on one feature map); the outputs of one multi-output node
//            (towers on the parts of a Split, as torch.split/chunk export them); the graph's
//            inputs (a two-tower recommender's user and item towers, a detector's heads each on
//            its own feature-map input). Tensor forks are tried first, then multi-output nodes,
//            then the graph inputs, each op joining at most one group;
//   fork   : ops that read the root (step 0 of the branches leaving it);
//   step k : the k-th op of each branch between a fork and its join (Inception's 3x3 beside the
//            5x5 path, NASNet cells, towers of a recommender), where a branch is the chain of
//            single-user ops that starts at one of the fork's consumers. Steps count kernels:
//            views (Reshape & co., batch-1 MgChannelSlices that are not materialized) run no step
//            and are skipped, so a branch that starts with a slice of a wide-merged result lines
//            up with its siblings' first ops (step 0 of such a fork groups the branches' first
//            kernels).
//
// Membership is checked against explicit reachability (an ancestor bitset per node), so no
// member of a group depends on another. Groups are deterministic: ordered by their first
// member's position in the schedule, members in schedule order.
#pragma once

#include <string>
#include <vector>

#include "magneto/ir/graph.h"

namespace magneto {

struct SiblingGroup {
  enum class Kind { kSameInput, kBranchStep };
  Kind kind;
  const Value* fork;          // the tensor whose consumers start the branches (for the other
                              // roots: one of the root's tensors)
  int step;                   // 0 for kSameInput
  std::vector<Node*> members; // in schedule order, at least two
  // The root, as printed: "fork %x", "outputs of %split (Split)", "graph inputs".
  std::string root;
};

// Ops worth grouping: the ones that launch real work (convolutions, GEMMs, pools, reductions,
// normalizations, elementwise chains). Views and tiny shape ops are not.
bool isGroupableOp(const Node& n);

class Reachability {
 public:
  explicit Reachability(const Graph& g);
  // True when `a` is a (transitive) producer of `b`.
  bool dependsOn(const Node* b, const Node* a) const;
  bool independent(const Node* a, const Node* b) const { return !dependsOn(a, b) && !dependsOn(b, a); }
  int index(const Node* n) const;

 private:
  std::vector<const Node*> order_;
  std::vector<std::vector<uint64_t>> anc_;
};

std::vector<SiblingGroup> findSiblingGroups(const Graph& g);
// The same with the caller's reachability of g (built once per unchanged graph and shared with
// the caller's own independence checks).
std::vector<SiblingGroup> findSiblingGroups(const Graph& g, const Reachability& reach);

// One line per group: "group 0: fork %x step 0 (same input): conv_a (Conv), conv_b (Conv)".
std::string describeGroups(const std::vector<SiblingGroup>& groups);

}  // namespace magneto
