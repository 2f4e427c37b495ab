// ParallelCoOptimize: decides, per sibling group that ParallelAnalysis finds, how the group runs on
// the device of the PassContext (docs/DESIGN.md; docs/PARALLEL.md).
//
// Motivation: an Inception block launches four to six small convolutions that read the same
// tensor; each is too small to fill the device, so launch overhead and half-empty waves dominate.
// One joint kernel (blocks [0,n1) run member 1's tile program, [n1,n1+n2) member 2's, ...) pays
// one launch and fills the device with everyone's blocks.
//
// For every group not already decided by an earlier pass (wide-merge marks its nodes), the cost
// model (include/magneto/target/cost_model.h) gives three latencies of the members:
//   sequential  one launch per member with its best tile (what happens without this pass),
//   joint       one launch over all members with co-tuned tiles (coTune),
//   streams     each member's best kernel on its own stream, bodies overlapping (GPU only).
// The choice:
//   "joint"   when joint <= sequential * (1 - kMinGain) and joint <= streams;
//   "streams" when streams <= sequential * (1 - kMinStreamsGain) and joint is not chosen
//             (members too big to share one kernel well, but their bodies overlap);
//   "none"    otherwise, with the numbers in the reason.
// Every decision, "none" included, is a ParallelGroup in Graph::groups() (for `magnetoc report`);
// only joint/streams groups mark their nodes (Node::group) and so print as IR regions.
//
// Legality: members are mutually independent (ParallelAnalysis checks reachability), so only the
// schedule changes: members are made contiguous by moving every node between the first and the
// last member that depends on a member to after the group (nothing between them can both depend
// on a member and feed one, or the members would not be independent). The new order is checked
// to be topological; if not, the old order is restored and the group is declined. No value,
// operand or attribute changes: numerics are exactly those of the input graph.
//
//   %a = Conv(%x, %w1)                      parallel #0 "joint" "joint 9.1 us vs sequential ..." {
//   %r = Relu(%a)                             %a = Conv(%x, %w1)
//   %b = Conv(%x, %w3)               ->       %b = Conv(%x, %w3)
//   %c = Concat(%r, %b)                     }
//                                           %r = Relu(%a)
//                                           %c = Concat(%r, %b)
//
// Golden tests: tests/ir/parallel_co_optimize.mlir (joint), parallel_co_optimize_negative.mlir
// (huge GEMMs, chains).
#pragma once

#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/passes/pass.h"
#include "magneto/support/status.h"
#include "magneto/target/device_profile.h"

namespace magneto {

// Profitability limits (named so that the report and the docs can cite them).
// A joint kernel must beat sequential launches by 3%: below that the model's own error dominates.
constexpr double kMinGain = 0.03;
// Streams add events and a graph capture: ask for 5% before choosing them.
constexpr double kMinStreamsGain = 0.05;
// A joint kernel dispatches on the block index over its members' tile programs; past 32 members
// the dispatch and the co-tuning search stop being cheap, so larger groups are not made joint.
constexpr size_t kMaxJointMembers = 32;

// The decision for one candidate group (what the pass records), exposed for tests.
struct CoOptimizeDecision {
  std::string strategy;  // "joint", "streams", "none"
  std::string reason;
  double sequentialUs = 0, jointUs = 0, streamsUs = 0;
  // The modeled latency of the chosen strategy (sequential for "none").
  double chosenUs() const {
    return strategy == "joint" ? jointUs : strategy == "streams" ? streamsUs : sequentialUs;
  }
};

// The rule above for one set of mutually independent sibling ops on profile `p` (no graph change).
// wide-merge prices the alternative to a merge with it: the members left to this pass.
CoOptimizeDecision decideSiblingGroup(const std::vector<const Node*>& members, const DeviceProfile& p);

// Runs the pass's logic on `g` with the device profile named by ctx.device. Returns whether the
// graph (schedule, groups) changed.
Expected<bool> parallelCoOptimize(Graph& g, PassContext& ctx);

std::unique_ptr<Pass> makeParallelCoOptimizePass();

}  // namespace magneto
