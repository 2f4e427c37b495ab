// wide-merge: strategy 1 of docs/DESIGN.md (parallel structures) — convolutions reading the same
// tensor become ONE wider convolution; each original result becomes a zero-copy channel slice.
//
//   %a = Conv(%x, %wa1x1) {mg_act = "Relu"}          %m = Conv(%x, %w3x3) {mg_act = "Relu",
//   %b = Conv(%x, %wb3x3) {mg_act = "Relu",    ->                          pads = [1, 1, 1, 1]}
//                          pads = [1, 1, 1, 1]}      %a = MgChannelSlice(%m) {begin = 0, end = 16}
//                                                    %b = MgChannelSlice(%m) {begin = 16, end = 128}
//
// Scope widening: a member with a smaller kernel k is padded with zero weights to the group's
// kernel K (per spatial dim). With the k taps placed at offset o (0 <= o <= K-k), output
// position y reads x[y*s - P + (j+o)*d] for tap j+o of the wide kernel; the original read
// x[y*s - p + j*d]; both agree when P = p + o*d, and the end pad must be P_end = p_end + (K-k-o)*d.
// The zero taps contribute exactly 0 (0 * finite = 0; x may hold inf/NaN only if the model
// already produces them). Output channels are independent of each other in a group-1 Conv, so
// concatenating weights (and biases, zeros where a member had none) along dim 0 computes every
// member's channels unchanged; the shared epilogue (mg_act/alpha/beta) is per element.
//
// Preconditions per member: f32 2-D Conv (NCHW), group 1, no auto_pad, no residual (operand 3),
// constant weights with data, constant bias (if any), same strides and dilations and epilogue as
// the rest of its merge set, identical output shape after widening. Merge sets are formed greedily
// in schedule order; a candidate that does not fit any open set starts a new one.
// Profitability, two steps. (1) Forming a set: the widened conv must not do more than
// kMaxPaddingFlopsRatio{Cpu,Gpu} times the members' FLOPs (by the PassContext's target; 1x1 with
// 1x1 is ratio 1). (2) Pricing it (issue #16) on the cost model of the PassContext's device against
// the alternative the merge removes, merging only where the merged form is strictly cheaper:
//   merged   = the wide conv's best kernel + a copy launch per slice that stays a kernel (batch
//              not 1, a dynamic extent, a graph output, or a member the planner wrote in place
//              into another Concat, where a view cannot live; else a view) + the fork's other siblings
//              as parallel-co-optimize would run them without the (marked, skipped) wide conv;
//   separate = members + those siblings as parallel-co-optimize would run them
//              (decideSiblingGroup: sequential / co-tuned joint kernel / streams) + the Concat of
//              the members' results that the merge elides (0 where the planner places it in place).
// A declined widened set is retried as its same-geometry subsets. A declined set is recorded as an
// advisory "none" group (marks nothing, claims no members: parallel-co-optimize still decides
// them) whose reason gives both sides; a merged group's reason gives them too. Without a device
// profile, step (1) alone decides; on the cpu target too: the host profile prices a joint region
// of the separate convs (each member whole on one core) below the wide conv split over the cores
// and would decline most merges, but measured on the zoo the merges are faster (yolox_heads, 2
// threads, 3 alternating rounds: 215-237 ms merged vs 233-251 ms declined, when measured),
// so the host model is not trusted with this trade-off until it is calibrated for it.
// Zero-copy: MgChannelSlice of an N=1 arena tensor is a byte-offset view in the memory planner
// (src/analysis/memory_plan.cpp); a Concat along channels of slices that tile the merged result in
// order is the merged result itself and is replaced by it (SqueezeNet's fire expand).
//
// Records one ParallelGroup (strategy "wide") per merged set and tags the merged node with it.
// Golden tests: tests/ir/wide_merge.mlir, wide_merge_pad.mlir, wide_merge_negative.mlir,
// wide_merge_cost.mlir (merged at batch 1, declined at batch 8 on the h200); unit tests
// (planner offset views): tests/unit/wide_merge_test.cpp; end to end: tests/e2e/wide_merge_model.py.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "magneto/analysis/memory_plan.h"
#include "magneto/ir/dim_expr.h"
#include "magneto/ir/op_schema.h"
#include "magneto/passes/parallel_analysis.h"
#include "magneto/passes/parallel_co_optimize.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"

#include <fmt/format.h>

#include "merge_common.h"

namespace magneto {
namespace {

// Widening a 1x1 to 3x3 beside a 3x3 of equal width costs 1.8x the FLOPs. On a GPU that buys a
// launch (several us) and a shared read of the input; up to 2x pays there. On the host CPU a
// "launch" is a function call: measured on SqueezeNet 1.1's fire modules (1.8x, which also drops
// the Concat copy), 2 threads, min of 40 runs: 10.64-10.70 ms merged vs 10.57-10.82 ms unmerged,
// a wash; so the CPU only accepts cheaper widening (a thin 1x1 beside a wide 3x3).
constexpr double kMaxPaddingFlopsRatioGpu = 2.0;
constexpr double kMaxPaddingFlopsRatioCpu = 1.5;
// Beyond this the merged weight tensor stops fitting the packed GEMM's panels well; the gain of
// one launch is long gone.
constexpr int64_t kMaxMergedChannels = 4096;

struct ConvInfo {
  Node* node;
  Dims kernel;  // [kh, kw]
  std::vector<int64_t> pads;  // [hb, wb, he, we]
  std::vector<int64_t> strides, dilations;
  int64_t outChannels;
  double flops;  // multiply-adds of the original conv
};

struct Logger {
  const PassContext* ctx;
  void operator()(const std::string& s) const { ctx->trace("wide-merge", s); }
};

std::string dimsText(const Dims& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

// Why `n` cannot be a member at all ("" when it can).
std::string rejectAlone(Node* n, ConvInfo& info) {
  if (n->kind() != "Conv") return "not a Conv";
  if (n->output(0)->dtype() != DType::kF32) return "not f32";
  const Dims& x = n->input(0)->dims();
  const Dims& w = n->input(1)->dims();
  if (x.size() != 4 || w.size() != 4) return "not a 2-D conv";
  const AttrMap& a = n->attrs();
  if (a.getInt("group", 1) != 1) return "group conv";
  if (a.getString("auto_pad", "NOTSET") != "NOTSET") return "auto_pad";
  if (n->hasInput(3)) return "has a residual operand";
  if (n->input(0) == n->input(1)) return "reads the fork as weight";
  const Value* wv = n->input(1);
  if (!wv->isConstant() || !wv->constant().hasData()) return "weight is not a constant with data";
  if (n->hasInput(2) && (!n->input(2)->isConstant() || !n->input(2)->constant().hasData()))
    return "bias is not a constant with data";
  info.node = n;
  info.kernel = {w[2], w[3]};
  info.pads = a.getInts("pads", {0, 0, 0, 0});
  info.strides = a.getInts("strides", {1, 1});
  info.dilations = a.getInts("dilations", {1, 1});
  if (info.pads.size() != 4 || info.strides.size() != 2 || info.dilations.size() != 2)
    return "malformed pads/strides/dilations";
  info.outChannels = w[0];
  const Dims& y = n->output(0)->dims();
  info.flops = static_cast<double>(w[0]) * w[1] * w[2] * w[3] * y[2] * y[3] * y[0];
  return "";
}

using merge::sameEpilogue;

// Whether a value's extent changes with the dynamic dims: the memory planner makes channel-slice
// views only between values of static extent (docs/DYNAMIC_SHAPES.md), so such a slice copies.
bool wideExtentVaries(const Value* v) {
  for (const DimExpr& e : v->symDims())
    if (!e.isConstant()) return true;
  return false;
}

// The merged geometry of a set: kernel = max per dim, pads from a member with that kernel.
struct Geometry {
  Dims kernel;
  std::vector<int64_t> pads;
  std::vector<std::vector<int64_t>> offsets;  // per member: tap offset [oh, ow]
};

// Fills `geo` for `set`, or returns why the set cannot share one conv.
std::string fitGeometry(const std::vector<const ConvInfo*>& set, Geometry& geo) {
  const ConvInfo& first = *set[0];
  geo.kernel = {0, 0};
  for (const ConvInfo* c : set)
    for (int d = 0; d < 2; ++d) geo.kernel[d] = std::max(geo.kernel[d], c->kernel[d]);
  geo.pads.assign(4, 0);
  for (int d = 0; d < 2; ++d)
    for (const ConvInfo* c : set)
      if (c->kernel[d] == geo.kernel[d]) {
        geo.pads[d] = c->pads[d];
        geo.pads[d + 2] = c->pads[d + 2];
        break;
      }
  geo.offsets.clear();
  for (const ConvInfo* c : set) {
    if (c->strides != first.strides) return "different strides";
    if (c->dilations != first.dilations) return "different dilations";
    if (!sameEpilogue(c->node, first.node)) return "different epilogue";
    const Dims& y = c->node->output(0)->dims();
    const Dims& y0 = first.node->output(0)->dims();
    if (y[0] != y0[0] || y[2] != y0[2] || y[3] != y0[3]) return "different output sizes";
    std::vector<int64_t> off(2);
    for (int d = 0; d < 2; ++d) {
      int64_t dil = c->dilations[d];
      int64_t shift = geo.pads[d] - c->pads[d];
      if (shift < 0 || shift % dil != 0) return "pads do not line up after widening";
      off[d] = shift / dil;
      int64_t spare = geo.kernel[d] - c->kernel[d];
      if (off[d] > spare) return "pads do not line up after widening";
      if (geo.pads[d + 2] != c->pads[d + 2] + (spare - off[d]) * dil)
        return "end pads do not line up after widening";
    }
    geo.offsets.push_back(off);
  }
  return "";
}

// Why `set` is not worth merging ("" when it is).
std::string unprofitable(const std::vector<const ConvInfo*>& set, const Geometry& geo,
                         double maxRatio) {
  double before = 0, after = 0;
  int64_t channels = 0;
  for (const ConvInfo* c : set) {
    before += c->flops;
    after += c->flops / (c->kernel[0] * c->kernel[1]) * (geo.kernel[0] * geo.kernel[1]);
    channels += c->outChannels;
  }
  if (channels > kMaxMergedChannels) return "more than kMaxMergedChannels output channels";
  if (after > maxRatio * before)
    return "zero padding would cost " + std::to_string(after / before) + "x the FLOPs (limit " +
           std::to_string(maxRatio) + ")";
  return "";
}

class WideMerger {
 public:
  WideMerger(Graph& g, Logger log, double maxRatio, const DeviceProfile* profile)
      : g_(g), log_(log), maxRatio_(maxRatio), profile_(profile) {}

  bool run() {
    bool changed = false;
    if (profile_) {
      // What the alternative to a merge is priced against: the Concats the memory planner would
      // place in place, and which siblings of a fork are independent (both of the input graph).
      concats_ = planConcatElision(g_);
      reach_ = std::make_unique<Reachability>(g_);
    }
    // Forks in value creation order; the set of candidates is fixed before any rewrite.
    std::vector<std::vector<ConvInfo>> forks;
    for (Value* x : g_.values()) {
      if (x->uses().size() < 2) continue;
      std::vector<ConvInfo> cands;
      std::set<Node*> seen;
      for (Node* n : g_.nodes()) {  // schedule order
        bool reads = false;
        for (const Use& u : x->uses()) reads |= u.node == n && u.operand == 0;
        if (!reads || seen.count(n) || n->kind() != "Conv") continue;
        seen.insert(n);
        ConvInfo info;
        std::string why = rejectAlone(n, info);
        if (!why.empty()) {
          log_("%" + x->name() + ": reject " + n->name() + ": " + why);
          continue;
        }
        cands.push_back(info);
      }
      if (cands.size() >= 2) forks.push_back(std::move(cands));
    }
    for (auto& cands : forks) changed |= mergeFork(cands);
    changed |= elideConcats();
    return changed;
  }

 private:
  // Phase 1: members with the same geometry and epilogue form sets (always profitable: no zero
  // taps). Phase 2: a set joins an earlier one when the widened geometry fits and pays.
  bool mergeFork(const std::vector<ConvInfo>& cands) {
    std::vector<std::vector<const ConvInfo*>> sets;
    for (const ConvInfo& c : cands) {
      bool placed = false;
      for (auto& set : sets) {
        const ConvInfo& f = *set[0];
        if (f.kernel != c.kernel || f.pads != c.pads) continue;
        auto trial = set;
        trial.push_back(&c);
        Geometry geo;
        if (!fitGeometry(trial, geo).empty() || !unprofitable(trial, geo, maxRatio_).empty())
          continue;
        set = trial;
        placed = true;
        break;
      }
      if (!placed) sets.push_back({&c});
    }
    std::vector<std::vector<const ConvInfo*>> merged;
    std::vector<std::vector<std::vector<const ConvInfo*>>> parts;  // per merged set: its phase-1 sets
    for (auto& set : sets) {
      std::string why;
      bool placed = false;
      for (size_t i = 0; i < merged.size(); ++i) {
        auto& into = merged[i];
        auto trial = into;
        trial.insert(trial.end(), set.begin(), set.end());
        Geometry geo;
        std::string w = fitGeometry(trial, geo);
        if (w.empty()) w = unprofitable(trial, geo, maxRatio_);
        if (w.empty()) {
          into = trial;
          parts[i].push_back(set);
          placed = true;
          break;
        }
        why += (why.empty() ? "" : "; ") + std::string("with ") + into[0]->node->name() + ": " + w;
      }
      if (placed) continue;
      if (!why.empty())
        for (const ConvInfo* c : set) log_("reject " + c->node->name() + " " + why);
      merged.push_back(set);
      parts.push_back({set});
    }
    // Channel order = schedule order of the members (cands are in schedule order).
    auto inOrder = [&](const std::vector<const ConvInfo*>& set) {
      std::vector<const ConvInfo*> ordered;
      for (const ConvInfo& c : cands)
        if (std::find(set.begin(), set.end(), &c) != set.end()) ordered.push_back(&c);
      return ordered;
    };
    bool changed = false;
    for (size_t i = 0; i < merged.size(); ++i) {
      if (merged[i].size() < 2) continue;
      std::vector<const ConvInfo*> ordered = inOrder(merged[i]);
      if (pays(ordered)) {
        changed |= mergeSet(ordered);
        continue;
      }
      // A widened set the cost model declines: its sets of one geometry (no zero taps) may
      // still pay on their own.
      if (parts[i].size() < 2) continue;
      for (const auto& part : parts[i]) {
        if (part.size() < 2) continue;
        std::vector<const ConvInfo*> po = inOrder(part);
        if (pays(po)) changed |= mergeSet(po);
      }
    }
    return changed;
  }

  // The merged form of `set` as it would run, and the alternative it removes, on profile_.
  struct Pricing {
    bool priced = false;   // false: no profile or no estimate; the FLOPs rule alone decides
    double mergedUs = 0;   // the wide conv + its slices that copy + the fork's other siblings
    double separateUs = 0; // the members and other siblings as parallel-co-optimize runs them + Concat
    std::string text;      // both sides, itemized, for the log and the report
  };

  // Whether `set` (in channel order) is worth one wider conv on the target. Without a profile
  // (or an estimate) the FLOPs rule that formed the set decides. A declined set is recorded as a
  // "none" group (advisory: its members stay free for the later passes) with the figures.
  bool pays(const std::vector<const ConvInfo*>& set) {
    lastPricing_.clear();
    if (!profile_) return true;
    Pricing pr = price(set);
    if (!pr.priced) {
      log_("merge " + set[0]->node->name() + " unpriced (" + pr.text + "): the FLOPs rule decides");
      return true;
    }
    lastPricing_ = pr.text;
    if (pr.mergedUs < pr.separateUs) return true;
    ParallelGroup pg;
    pg.strategy = "none";
    pg.advisory = true;
    pg.kernelsBefore = pg.kernelsAfter = static_cast<int>(set.size());
    for (const ConvInfo* c : set) pg.members.push_back(merge::memberName(c->node));
    std::vector<const Node*> members;
    for (const ConvInfo* c : set) members.push_back(c->node);
    pg.modeledUsBefore = pg.modeledUsAfter = sequentialLatency(members, *profile_);
    pg.reason = fmt::format("wide merge of {} Convs on %{} declined: {}", set.size(),
                            set[0]->node->input(0)->name(), pr.text);
    g_.addGroup(pg);
    log_("decline: " + pg.reason);
    return false;
  }

  Pricing price(const std::vector<const ConvInfo*>& set) {
    Pricing pr;
    Geometry geo;
    if (std::string w = fitGeometry(set, geo); !w.empty()) {
      pr.text = w;
      return pr;
    }
    Value* x = set[0]->node->input(0);
    const DeviceProfile& p = *profile_;
    // The merged conv, built in a scratch graph from types only (opaque weights).
    Graph scratch;
    Value* xs = scratch.addInput("x", x->type());
    int64_t total = 0;
    bool anyBias = false;
    for (const ConvInfo* c : set) total += c->outChannels, anyBias |= c->node->hasInput(2);
    std::vector<Value*> ins = {
        xs, scratch.addConstant("w", Tensor::opaque({DType::kF32, {total, x->dims()[1], geo.kernel[0],
                                                                   geo.kernel[1]}}, 0))};
    if (anyBias) ins.push_back(scratch.addConstant("b", Tensor::opaque({DType::kF32, {total}}, 0)));
    AttrMap attrs = set[0]->node->attrs();
    attrs.erase("kernel_shape");
    attrs.set("pads", geo.pads);
    Dims outDims = set[0]->node->output(0)->dims();
    outDims[1] = total;
    Node* wide = scratch.createNode("Conv", ins, {{DType::kF32, outDims}}, attrs, "wide");
    KernelEstimate we = bestKernel(*wide, p);
    if (!we.valid || !std::isfinite(we.latencyUs)) {
      pr.text = "no estimate of the merged conv: " + we.reason;
      return pr;
    }

    // The Concat the merge removes: channels of exactly the members' results, in order.
    const Node* concat = nullptr;
    for (const Use& u : set[0]->node->output(0)->uses()) {
      const Node* n = u.node;
      if (n->kind() != "Concat" || n->numInputs() != set.size() || n->numOutputs() != 1) continue;
      int64_t axis = n->attrs().getInt("axis", 0);
      if (axis < 0) axis += n->output(0)->rank();
      bool tiles = axis == 1 && n->output(0)->type() == wide->output(0)->type();
      for (size_t i = 0; tiles && i < set.size(); ++i) tiles = n->input(i) == set[i]->node->output(0);
      if (tiles) concat = n;
    }
    double concatUs = 0;
    if (concat) concatUs = concatCost(*concat, scratch);

    // Slices that stay: a member read by anything but that Concat, or a graph output. A slice is
    // a byte-offset view when the batch is 1 (and not a graph output), else a copy launch. A view
    // cannot also live inside another Concat's result: where the member was written in place into
    // one (the planner's choice without the merge), the merge adds that copy back (the Concat's,
    // or place-concat-slices' materialized slice).
    double slicesUs = 0;
    int copies = 0;
    int64_t c0 = 0;
    for (const ConvInfo* c : set) {
      const Value* out = c->node->output(0);
      bool kept = out->isGraphOutput(), placed = false;
      for (const Use& u : out->uses()) {
        kept |= u.node != concat;
        placed |= u.node != concat && u.node->kind() == "Concat" && concats_.isInPlace(u.node, out);
      }
      bool view = outDims[0] == 1 && !out->isGraphOutput() && !placed && !wideExtentVaries(out) &&
                  !wideExtentVaries(x);
      if (kept && !view) {
        AttrMap sa;
        sa.set("begin", c0);
        sa.set("end", c0 + c->outChannels);
        Node* s = scratch.createNode("MgChannelSlice", {wide->output(0)}, {out->type()}, sa);
        KernelEstimate se = bestKernel(*s, p);
        if (se.valid && std::isfinite(se.latencyUs)) slicesUs += se.latencyUs;
        ++copies;
      }
      c0 += c->outChannels;
    }

    // The fork's other siblings (ops reading %x that the later passes group with the members).
    std::vector<const Node*> others;
    for (const Use& u : x->uses()) {
      Node* n = u.node;
      if (n->group() >= 0 || !isGroupableOp(*n)) continue;
      if (std::find(others.begin(), others.end(), n) != others.end()) continue;
      bool member = false, indep = true;
      for (const ConvInfo* c : set) {
        member |= c->node == n;
        indep &= reach_->independent(c->node, n);
      }
      for (const Node* o : others) indep &= reach_->independent(o, n);
      if (!member && indep) others.push_back(n);
    }
    std::vector<const Node*> all;
    for (const ConvInfo* c : set) all.push_back(c->node);
    all.insert(all.end(), others.begin(), others.end());
    CoOptimizeDecision sep = decideSiblingGroup(all, p);
    double othersUs = 0;
    std::string othersText;
    if (others.size() >= 2) {
      CoOptimizeDecision od = decideSiblingGroup(others, p);
      othersUs = od.chosenUs();
      othersText = fmt::format(" + {} other siblings {} {:.2f} us", others.size(), od.strategy, othersUs);
    } else if (!others.empty()) {
      othersUs = sequentialLatency(others, p);
      othersText = fmt::format(" + 1 other sibling {:.2f} us", othersUs);
    }
    if (!std::isfinite(sep.chosenUs()) || !std::isfinite(othersUs)) {
      pr.text = "no estimate of the members left separate: " + sep.reason;
      return pr;
    }
    pr.priced = true;
    pr.mergedUs = we.latencyUs + slicesUs + othersUs;
    pr.separateUs = sep.chosenUs() + concatUs;
    pr.text = fmt::format(
        "merged {:.2f} us (wide {} conv {:.2f} us + {} slice copies {:.2f} us{}) vs separate {:.2f} us "
        "({} of {} with {} other siblings {:.2f} us{})",
        pr.mergedUs, dimsText(geo.kernel), we.latencyUs, copies, slicesUs, othersText, pr.separateUs,
        sep.strategy == "none" ? std::string("sequential") : sep.strategy, all.size(), others.size(),
        sep.chosenUs(), concat ? fmt::format(" + Concat {:.2f} us", concatUs) : std::string());
    return pr;
  }

  // What the Concat `n` costs without the merge: nothing when the planner writes every operand in
  // place, else the copy of the operands it still moves.
  double concatCost(const Node& n, Graph& scratch) const {
    if (concats_.isElided(&n)) return 0;
    std::vector<Value*> ins;
    int64_t axis = n.attrs().getInt("axis", 0);
    if (axis < 0) axis += n.output(0)->rank();
    Dims out = n.output(0)->dims();
    out[axis] = 0;
    for (const Value* v : n.inputs()) {
      if (!v || concats_.isInPlace(&n, v)) continue;
      ins.push_back(scratch.addInput("c" + std::to_string(ins.size()), v->type()));
      out[axis] += v->dims()[axis];
    }
    if (ins.empty()) return 0;
    KernelEstimate e = bestKernel(*scratch.createNode("Concat", ins, {{n.output(0)->dtype(), out}},
                                                      n.attrs()),
                                  *profile_);
    return e.valid && std::isfinite(e.latencyUs) ? e.latencyUs : 0;
  }

  bool mergeSet(const std::vector<const ConvInfo*>& set) {
    Geometry geo;
    if (!fitGeometry(set, geo).empty()) return false;
    Node* first = set[0]->node;
    Value* x = first->input(0);
    const int64_t cin = x->dims()[1];
    const int64_t K0 = geo.kernel[0], K1 = geo.kernel[1];
    int64_t total = 0;
    bool anyBias = false;
    for (const ConvInfo* c : set) total += c->outChannels, anyBias |= c->node->hasInput(2);
    std::vector<float> w(static_cast<size_t>(total * cin * K0 * K1), 0.f);
    std::vector<float> b(static_cast<size_t>(total), 0.f);
    int64_t c0 = 0;
    for (size_t i = 0; i < set.size(); ++i) {
      const ConvInfo& c = *set[i];
      const float* src = c.node->input(1)->constant().data<float>();
      const int64_t k0 = c.kernel[0], k1 = c.kernel[1];
      for (int64_t m = 0; m < c.outChannels; ++m)
        for (int64_t ci = 0; ci < cin; ++ci)
          for (int64_t a = 0; a < k0; ++a)
            for (int64_t e = 0; e < k1; ++e)
              w[(((c0 + m) * cin + ci) * K0 + a + geo.offsets[i][0]) * K1 + e + geo.offsets[i][1]] =
                  src[((m * cin + ci) * k0 + a) * k1 + e];
      if (c.node->hasInput(2)) {
        const float* bs = c.node->input(2)->constant().data<float>();
        for (int64_t m = 0; m < c.outChannels; ++m) b[c0 + m] = bs[m];
      }
      c0 += c.outChannels;
    }
    std::string base = first->name().empty() ? "wide" : first->name() + "_wide";
    Value* wv = g_.addConstant(
        base + "_w", Tensor::fromVector<float>(DType::kF32, {total, cin, K0, K1}, w));
    std::vector<Value*> ins = {x, wv};
    if (anyBias)
      ins.push_back(
          g_.addConstant(base + "_b", Tensor::fromVector<float>(DType::kF32, {total}, b)));
    AttrMap attrs = first->attrs();
    attrs.erase("kernel_shape");
    if (geo.pads != std::vector<int64_t>(4, 0)) attrs.set("pads", geo.pads);
    else attrs.erase("pads");
    Dims outDims = first->output(0)->dims();
    outDims[1] = total;
    Node* merged = g_.createNode("Conv", ins, {{DType::kF32, outDims}}, attrs, base, first);

    ParallelGroup pg;
    pg.strategy = "wide";
    pg.kernelsBefore = static_cast<int>(set.size());
    pg.kernelsAfter = 1;
    for (const ConvInfo* c : set) pg.members.push_back(c->node->name());
    pg.reason = std::to_string(set.size()) + " Convs on %" + x->name() + " merged into one " +
                dimsText(geo.kernel) + " Conv of " + std::to_string(total) + " channels";
    if (!lastPricing_.empty()) pg.reason += ": " + lastPricing_;
    lastPricing_.clear();
    if (profile_) {
      std::vector<const Node*> members;
      for (const ConvInfo* c : set) members.push_back(c->node);
      pg.modeledUsBefore = sequentialLatency(members, *profile_);
      pg.modeledUsAfter = bestKernel(*merged, *profile_).latencyUs;
    }
    int gid = g_.addGroup(pg);
    merged->setGroup(gid);
    log_("merge: " + pg.reason + " (modeled " + std::to_string(pg.modeledUsBefore) + " us -> " +
         std::to_string(pg.modeledUsAfter) + " us)");

    c0 = 0;
    for (const ConvInfo* c : set) {
      Node* n = c->node;
      AttrMap sa;
      sa.set("begin", c0);
      sa.set("end", c0 + c->outChannels);
      c0 += c->outChannels;
      Node* slice = g_.createNode("MgChannelSlice", {merged->output(0)},
                                  {n->output(0)->type()}, sa, n->name(), n,
                                  {n->output(0)->name()});
      slices_[slice] = merged->output(0);
      g_.replaceAllUsesWith(n->output(0), slice->output(0));
      g_.eraseNode(n);
    }
    return true;
  }

  // Concat(axis 1) of slices that tile a merged result in order, nothing else -> that result.
  bool elideConcats() {
    bool changed = false;
    for (Node* n : g_.nodes()) {
      if (n->kind() != "Concat" || n->numInputs() < 2 || n->numOutputs() != 1) continue;
      int64_t axis = n->attrs().getInt("axis", 0);
      if (axis < 0) axis += n->output(0)->rank();
      if (axis != 1) continue;
      Value* src = nullptr;
      int64_t expect = 0;
      bool ok = true;
      for (Value* in : n->inputs()) {
        Node* p = in ? in->producer() : nullptr;
        auto it = p ? slices_.find(p) : slices_.end();
        if (it == slices_.end() || (src && it->second != src) ||
            p->attrs().getInt("begin", -1) != expect) {
          ok = false;
          break;
        }
        src = it->second;
        expect = p->attrs().getInt("end", -1);
      }
      if (!ok || !src || expect != src->dims()[1] || src->type() != n->output(0)->type()) continue;
      log_("concat " + n->name() + " of slices is %" + src->name() + " itself");
      g_.replaceAllUsesWith(n->output(0), src);
      g_.eraseNode(n);
      changed = true;
    }
    // Slices nobody reads any more.
    for (auto& [slice, src] : slices_) {
      (void)src;
      if (!slice->output(0)->hasUses() && !slice->output(0)->isGraphOutput()) g_.eraseNode(slice);
    }
    slices_.clear();
    return changed;
  }

  Graph& g_;
  Logger log_;
  double maxRatio_;
  const DeviceProfile* profile_;  // prices each merge; null: the FLOPs rule alone decides
  ConcatElision concats_;                // of the input graph (profile_ only)
  std::unique_ptr<Reachability> reach_;  // of the input graph (profile_ only)
  std::string lastPricing_;              // the pricing of the set mergeSet is about to merge
  std::map<Node*, Value*> slices_;  // slice node -> the merged value it reads
};

}  // namespace

Expected<bool> wideMerge(Graph& g, PassContext& ctx) {
  double ratio = ctx.target == "cpu" ? kMaxPaddingFlopsRatioCpu : kMaxPaddingFlopsRatioGpu;
  // The GPU targets' profile prices every set (see the header); without one, and on the cpu
  // target, the FLOPs rule alone decides.
  auto profile = ctx.profile();
  const DeviceProfile* pricing = profile.ok() && ctx.target != "cpu" ? *profile : nullptr;
  return WideMerger(g, Logger{&ctx}, ratio, pricing).run();
}

Expected<bool> wideMerge(Graph& g, const std::string& target) {
  PassContext ctx;
  ctx.target = target;
  return wideMerge(g, ctx);
}

namespace {
class WideMergePass : public Pass {
 public:
  const char* name() const override { return "wide-merge"; }
  const char* summary() const override {
    return "merge same-input Convs into one wider Conv read through zero-copy channel slices";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override {
    return wideMerge(g, ctx);
  }
};
}  // namespace

std::unique_ptr<Pass> makeWideMergePass() { return std::make_unique<WideMergePass>(); }

}  // namespace magneto
