// What the merging passes (wide-merge, batch-merge, batch-merge-conv, parallel-co-optimize) share:
// how a member is named in reports, when two members' fused epilogues agree, and batch merge's
// driver and baseline. Internal to passes/; not an installed header.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "magneto/ir/graph.h"
#include "magneto/passes/parallel_analysis.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/parallel_co_optimize.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"

namespace magneto::merge {

// The ONNX node name a report lists (a result name for nameless nodes).
inline std::string memberName(const Node* n) {
  return !n->name().empty() ? n->name() : n->numOutputs() ? n->output(0)->name() : n->kind();
}

// Whether `a` and `b` carry the same fused epilogue (activation and its parameters).
inline bool sameEpilogue(const Node* a, const Node* b) {
  for (const char* k : {"mg_act", "mg_alpha", "mg_beta"}) {
    const Attribute* x = a->attrs().find(k);
    const Attribute* y = b->attrs().find(k);
    if ((x == nullptr) != (y == nullptr) || (x && *x != *y)) return false;
  }
  return true;
}

// The batch merges' driver. For every sibling group, `candidates(group)` returns the sets of
// members (each with a `node` field) that could share one batched op; `merge(set, reach)` tries
// one and says whether it rewrote the graph (or returns an error). A rewrite changes the graph and
// its groups, so the groups and the reachability (`reach`, one per unchanged graph, shared by the
// group search and the merges' checks) are computed again after each one; every set is tried
// once (by its members' names), so this ends.
template <class Candidates, class Merge>
Expected<bool> mergeSiblingSets(Graph& g, Candidates candidates, Merge merge) {
  std::set<std::vector<std::string>> tried;
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    Reachability reach(g);
    for (const SiblingGroup& sg : findSiblingGroups(g, reach)) {
      for (auto& set : candidates(sg)) {
        std::vector<std::string> key;
        for (const auto& m : set) key.push_back(memberName(m.node));
        if (!tried.insert(key).second) continue;
        MG_ASSIGN_OR_RETURN(bool merged, merge(set, reach));
        if (merged) {
          changed = again = true;
          break;
        }
      }
      if (again) break;
    }
  }
  return changed;
}

// What a batched set must beat: the better of its members one after another and one joint kernel
// of them (what parallel-co-optimize would otherwise build; n/a past kMaxJointMembers).
struct SiblingBaseline {
  double sequentialUs = 0;
  double jointUs = std::numeric_limits<double>::infinity();
  double best() const { return std::min(sequentialUs, jointUs); }
  std::string str() const {
    return fmt::format("sequential {:.2f} us, joint {}", sequentialUs,
                       std::isfinite(jointUs) ? fmt::format("{:.2f} us", jointUs) : std::string("n/a"));
  }
};

inline SiblingBaseline siblingBaseline(const std::vector<const Node*>& members, const DeviceProfile& p) {
  SiblingBaseline b;
  b.sequentialUs = sequentialLatency(members, p);
  if (members.size() <= kMaxJointMembers) {
    JointEstimate j = coTune(members, p);
    if (j.valid) b.jointUs = j.latencyUs;
  }
  return b;
}

// The members' names, comma separated (for logs).
template <class Set>
std::string memberList(const Set& set) {
  std::string list;
  for (const auto& m : set) list += (list.empty() ? "" : ", ") + memberName(m.node);
  return list;
}

// Why the members of `set` cannot be merged because one depends on another ("" when they are
// mutually independent, as ParallelAnalysis' groups promise; re-checked before any rewrite).
template <class Set>
std::string dependence(const Reachability& reach, const Set& set) {
  for (size_t i = 0; i < set.size(); ++i)
    for (size_t j = i + 1; j < set.size(); ++j)
      if (!reach.independent(set[i].node, set[j].node))
        return memberName(set[i].node) + " and " + memberName(set[j].node) + " depend on each other";
  return "";
}

// The latest member in schedule order (where a merge inserts its nodes).
template <class Set>
Node* lastMember(const Reachability& reach, const Set& set) {
  Node* last = set.back().node;
  for (const auto& m : set)
    if (reach.index(m.node) > reach.index(last)) last = m.node;
  return last;
}

// The modeled latency of `kernels` run one after another (infinite if any cannot be estimated);
// `ofKind` receives that of the last kernel of kind `kind`.
inline double kernelsUs(const std::vector<const Node*>& kernels, const DeviceProfile& p,
                        const std::string& kind, double& ofKind) {
  double total = 0;
  for (const Node* k : kernels) {
    KernelEstimate e = bestKernel(*k, p);
    double t = e.valid && std::isfinite(e.latencyUs) ? e.latencyUs : std::numeric_limits<double>::infinity();
    total += t;
    if (k->kind() == kind) ofKind = t;
  }
  return total;
}

// After a merge, consumers of an earlier member may sit before the merged nodes: re-sort (stable).
// The members are independent, so a cycle here is a compiler bug: reported as an internal error
// naming the pass and the members (the compile fails with it; nothing aborts).
inline Status resortAfterMerge(Graph& g, const char* pass, const std::string& list) {
  if (!g.topoSort()) return internalStatus("{}: the graph has a cycle after merging [{}]", pass, list);
  return Status::success();
}


// Whether batched kernels estimated at `afterUs` in all beat `before` by kMinGain.
inline bool batchPays(double afterUs, const SiblingBaseline& before) {
  return std::isfinite(afterUs) && std::isfinite(before.best()) &&
         afterUs <= before.best() * (1 - kMinGain);
}

}  // namespace magneto::merge
