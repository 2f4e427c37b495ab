// parallel-co-optimize: per sibling group, chooses joint kernel, concurrent streams or nothing from
// the cost model of ctx.device, records the decision as a ParallelGroup and makes the members of a
// joint/streams group contiguous in the schedule.
//
// What it rewrites, why that is legal, the decision rule and a before/after picture: the design
// comment in include/magneto/passes/parallel_co_optimize.h and docs/PARALLEL.md.
// Preconditions: runs after the canonical passes (fusion decides what a kernel is first) and after
// wide-merge (its groups are marked and skipped here).
//
// Golden tests: tests/ir/parallel_co_optimize.mlir, tests/ir/parallel_co_optimize_negative.mlir
#include "magneto/passes/parallel_co_optimize.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "magneto/passes/parallel_analysis.h"
#include "magneto/passes/passes.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"

#include "group_order.h"
#include "merge_common.h"

namespace magneto {
namespace {

constexpr const char* kCoOptimizePass = "parallel-co-optimize";
constexpr double kInf = std::numeric_limits<double>::infinity();

using merge::memberName;

std::string us(double v) { return std::isfinite(v) ? fmt::format("{:.2f} us", v) : "n/a"; }

std::string percent(double after, double before) {
  return fmt::format("{:+.1f}%", before > 0 ? 100.0 * (after - before) / before : 0.0);
}

class CoOptimizer {
 public:
  CoOptimizer(Graph& g, PassContext& ctx, const DeviceProfile& p) : g_(g), ctx_(ctx), p_(p) {}

  bool run() {
    // Groups already recorded (a rerun, or a parsed graph) by their member names: not decided twice.
    std::set<std::vector<std::string>> recorded;
    // Advisory groups (a merge another pass declined) leave their members to this pass.
    for (const auto& [id, pg] : g_.groups())
      if (!pg.advisory) recorded.insert(pg.members);
    bool changed = false;
    for (const SiblingGroup& sg : findSiblingGroups(g_)) {
      std::vector<Node*> members;
      for (Node* n : sg.members) {
        if (n->group() >= 0) {
          log(fmt::format("{}: already in group #{}, skipped", n->describe(), n->group()));
          continue;
        }
        members.push_back(n);
      }
      std::string where = fmt::format("{} step {}", sg.root, sg.step);
      if (members.size() < 2) {
        log(where + ": fewer than two undecided members, skipped");
        continue;
      }
      std::vector<std::string> names;
      for (const Node* n : members) names.push_back(memberName(n));
      if (recorded.count(names)) {
        log(where + ": already decided, skipped");
        continue;
      }
      CoOptimizeDecision d =
          decideSiblingGroup(std::vector<const Node*>(members.begin(), members.end()), p_);
      std::string why;
      if (d.strategy != "none" && !group_order::makeContiguous(g_, members, why)) {
        d.reason = fmt::format("{} ({}) declined: {}", d.strategy, d.reason, why);
        d.strategy = "none";
      }
      ParallelGroup pg;
      pg.strategy = d.strategy;
      pg.reason = d.reason;
      pg.members = names;
      pg.kernelsBefore = static_cast<int>(members.size());
      pg.kernelsAfter = d.strategy == "joint" ? 1 : static_cast<int>(members.size());
      pg.modeledUsBefore = d.sequentialUs;
      pg.modeledUsAfter = d.strategy == "joint"     ? d.jointUs
                          : d.strategy == "streams" ? d.streamsUs
                                                    : d.sequentialUs;
      int id = g_.addGroup(pg);
      if (d.strategy != "none")
        for (Node* n : members) n->setGroup(id);
      recorded.insert(names);
      changed = true;
      std::string list;
      for (const std::string& s : names) list += (list.empty() ? "" : ", ") + s;
      log(fmt::format("#{} {} [{}]: {}: {}", id, where, list, d.strategy, d.reason));
    }
    return changed;
  }

 private:
  void log(const std::string& line) const { ctx_.trace(kCoOptimizePass, line); }

  Graph& g_;
  PassContext& ctx_;
  const DeviceProfile& p_;
};

class ParallelCoOptimizePass : public Pass {
 public:
  const char* name() const override { return kCoOptimizePass; }
  const char* summary() const override {
    return "choose joint kernel / streams / nothing per sibling group from the device cost model";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return parallelCoOptimize(g, ctx); }
};

}  // namespace

CoOptimizeDecision decideSiblingGroup(const std::vector<const Node*>& ms, const DeviceProfile& p) {
  CoOptimizeDecision d;
  d.sequentialUs = sequentialLatency(ms, p);
  d.jointUs = d.streamsUs = kInf;
  d.strategy = "none";
  if (!std::isfinite(d.sequentialUs)) {
    d.reason = fmt::format("no kernel estimate for every member on {}", p.name);
    return d;
  }
  std::string jointWhy;
  JointEstimate j;
  if (ms.size() > kMaxJointMembers) {
    jointWhy = fmt::format("{} members exceed kMaxJointMembers = {}", ms.size(), kMaxJointMembers);
  } else {
    j = coTune(ms, p);
    if (j.valid) d.jointUs = j.latencyUs;
    else jointWhy = "no joint kernel: " + j.reason;
  }
  if (p.isGpu()) d.streamsUs = streamsLatency(ms, p);
  const double seq = d.sequentialUs;
  bool jointOk = d.jointUs <= seq * (1 - kMinGain);
  bool streamsOk = d.streamsUs <= seq * (1 - kMinStreamsGain);
  if (jointOk && (!streamsOk || d.jointUs <= d.streamsUs)) {
    d.strategy = "joint";
    d.reason = fmt::format("joint {} vs sequential {} ({}), 1 launch instead of {}", us(d.jointUs),
                           us(seq), percent(d.jointUs, seq), ms.size());
    if (p.isGpu() && j.independentLatencyUs > j.latencyUs)
      d.reason += fmt::format("; co-tuned tiles beat independently tuned ({})",
                              us(j.independentLatencyUs));
    return d;
  }
  if (jointWhy.empty() && jointOk) {
    jointWhy = fmt::format("joint {} ({}) is slower than streams", us(d.jointUs),
                           percent(d.jointUs, seq));
  } else if (jointWhy.empty()) {
    double gain = 1 - d.jointUs / seq;
    jointWhy = gain <= 0 ? fmt::format("joint {} vs sequential {}: no gain", us(d.jointUs), us(seq))
                         : fmt::format("joint {} vs sequential {}: gain {:.1f}% below kMinGain "
                                       "{:.0f}%",
                                       us(d.jointUs), us(seq), 100 * gain, 100 * kMinGain);
  }
  if (streamsOk) {
    d.strategy = "streams";
    d.reason = fmt::format("streams {} vs sequential {} ({}); {}", us(d.streamsUs), us(seq),
                           percent(d.streamsUs, seq), jointWhy);
    return d;
  }
  d.reason = jointWhy;
  if (p.isGpu())
    d.reason += fmt::format("; streams {} ({})", us(d.streamsUs), percent(d.streamsUs, seq));
  return d;
}

Expected<bool> parallelCoOptimize(Graph& g, PassContext& ctx) {
  MG_ASSIGN_OR_RETURN(const DeviceProfile* p, ctx.profile());
  return CoOptimizer(g, ctx, *p).run();
}

std::unique_ptr<Pass> makeParallelCoOptimizePass() {
  return std::make_unique<ParallelCoOptimizePass>();
}

}  // namespace magneto
