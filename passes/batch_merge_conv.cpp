// batch-merge-conv: strategy 2 of docs/DESIGN.md "Parallel structures", the convolution half —
// sibling convolutions of the same shape on DIFFERENT inputs (ResNeXt's paths written out as
// branches, towers of a multi-head model) become ONE grouped convolution over the channel-
// concatenation of their inputs; each member's result is a zero-copy channel slice.
//
//   %a = Conv(%x0, %w0, %b0) {group = g, mg_act = "Relu", ...}     %s = Concat(%x0, %x1) {axis = 1}
//   %b = Conv(%x1, %w1, %b1) {group = g, mg_act = "Relu", ...} ->  %y = Conv(%s, %W, %B)
//                                                                       {group = 2g, mg_act = "Relu", ...}
//                                                                  %a = MgChannelSlice(%y) {begin = 0, end = M}
//                                                                  %b = MgChannelSlice(%y) {begin = M, end = 2M}
//   (%W = concat of w_i along dim 0 [nM, C/g, kh, kw], %B = concat of b_i. When the inputs already
//   are, in some order, channel slices that tile one tensor — the outputs of a wide-merged conv
//   (ResNeXt's first 1x1 of every path), of an earlier batch merge (the next layer of the same
//   towers), or the parts of a Split along the channels (towers on torch.split/chunk's parts) —
//   that tensor is the grouped conv's input and there is no Concat; the members are ordered by
//   their slice.)
//
// Why it is legal: a Conv with group G splits its input channels into G equal runs and its output
// channels (and weight rows) into G equal runs, run j of the output reading only run j of the
// input. With n members of group g on inputs of C channels each, run i*g + j of the merged conv
// reads channels [iC + jC/g, iC + (j+1)C/g) of the stacked input — member i's run j — with weight
// rows [iM + jM/g, ...) — member i's rows for run j — so every output channel is computed exactly as
// the member computed it (same taps, same summation order), and bias and the activation epilogue
// are per output channel / per element. Members are mutually independent (ParallelAnalysis'
// groups, re-checked with explicit reachability), so the stable topological re-sort after the
// rewrite meets no cycle. The slices of a batch-1 NCHW tensor are byte-offset views
// (src/analysis/memory_plan.cpp).
//
// Preconditions per member: f32 2-D Conv with batch 1, no auto_pad, no residual operand (3),
// constant weights with data, constant bias (if any); all members of a set have the same input and
// weight shapes, pads, strides, dilations, group, bias presence and epilogue; distinct inputs
// (same-input siblings are wide-merge's); no member already in a group.
// Profitability (cost model of ctx.device, "host" on the CPU target): the grouped conv (plus the
// Concat when the inputs are not stacked yet) must beat the better of the members one after
// another and one joint kernel of them by kMinGain, else the set is declined with the numbers
// (--debug-only=batch-merge-conv) and left to parallel-co-optimize. On the cost model a joint
// kernel of n equal convolutions and the grouped conv launch the same blocks, so this pays where
// no joint kernel can be built: past kMaxJointMembers (ResNeXt-101 64x4d's 64 paths). Does nothing
// when ctx.parallelOpt is off.
//
// Records one ParallelGroup (strategy "batch") per merged set and marks the grouped conv with it.
// Golden tests: tests/ir/batch_merge_conv.mlir, tests/ir/batch_merge_conv_negative.mlir.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "magneto/ir/symbolic.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "merge_common.h"

namespace magneto {
namespace {

constexpr const char* kBatchMergeConvPass = "batch-merge-conv";
// Beyond this the merged weights stop being one packed GEMM panel set worth sharing; no real
// group comes near it.
constexpr int64_t kMaxMergedWeightBytes = int64_t{256} << 20;

struct ConvMember {
  Node* node = nullptr;
  Value* x = nullptr;
  int64_t slice = -1;  // the channel where x begins inside an already stacked tensor, else -1
};

// Why `n` cannot be a member ("" when it can).
std::string rejectAlone(Node* n) {
  if (n->kind() != "Conv") return "not a Conv";
  if (n->group() >= 0) return "already in group #" + std::to_string(n->group());
  if (n->numOutputs() != 1 || n->output(0)->dtype() != DType::kF32) return "not f32";
  const Value* x = n->input(0);
  const Value* w = n->input(1);
  if (!x || !w || x->dtype() != DType::kF32) return "not f32";
  if (x->rank() != 4 || w->rank() != 4) return "not a 2-D conv";
  if (x->dims()[0] != 1) return "batch " + std::to_string(x->dims()[0]) + " (slices are views only at batch 1)";
  if (n->attrs().getString("auto_pad", "NOTSET") != "NOTSET") return "auto_pad";
  if (n->hasInput(3)) return "has a residual operand";
  if (!w->isConstant() || !w->constant().hasData()) return "weight is not a constant with data";
  if (n->hasInput(2) && (!n->input(2)->isConstant() || !n->input(2)->constant().hasData()))
    return "bias is not a constant with data";
  return "";
}

// Why `m` cannot share one grouped conv with `f` ("" when it can).
std::string incompatible(const Node* f, const Node* m) {
  if (m->input(0)->dims() != f->input(0)->dims() || !sameSymbolicShape(m->input(0), f->input(0)))
    return "different input shapes";
  if (m->input(1)->dims() != f->input(1)->dims()) return "different weight shapes";
  if (m->hasInput(2) != f->hasInput(2)) return "different bias";
  const AttrMap& a = f->attrs();
  const AttrMap& b = m->attrs();
  if (a.getInt("group", 1) != b.getInt("group", 1)) return "different group";
  if (a.getInts("pads", {0, 0, 0, 0}) != b.getInts("pads", {0, 0, 0, 0})) return "different pads";
  if (a.getInts("strides", {1, 1}) != b.getInts("strides", {1, 1})) return "different strides";
  if (a.getInts("dilations", {1, 1}) != b.getInts("dilations", {1, 1})) return "different dilations";
  if (!merge::sameEpilogue(f, m)) return "different epilogue";
  return "";
}

class ConvBatchMerger {
 public:
  ConvBatchMerger(Graph& g, PassContext& ctx, const DeviceProfile& p) : g_(g), ctx_(ctx), p_(p) {}

  Expected<bool> run() {
    return merge::mergeSiblingSets(
        g_, [this](const SiblingGroup& sg) { return candidateSets(sg); },
        [this](std::vector<ConvMember>& set, const Reachability& reach) {
          return mergeSet(set, reach);
        });
  }

 private:
  void log(const std::string& s) const { ctx_.trace(kBatchMergeConvPass, s); }

  // Members of `sg` split into sets that can share one grouped conv (schedule order kept).
  std::vector<std::vector<ConvMember>> candidateSets(const SiblingGroup& sg) {
    std::vector<std::vector<ConvMember>> sets;
    for (Node* n : sg.members) {
      std::string why = rejectAlone(n);
      if (!why.empty()) {
        if (n->kind() == "Conv") log("reject " + merge::memberName(n) + ": " + why);
        continue;
      }
      ConvMember m{n, n->input(0)};
      bool placed = false;
      std::string whyNot;
      for (auto& set : sets) {
        std::string w = incompatible(set[0].node, n);
        bool sameInput = false;
        for (const ConvMember& o : set) sameInput |= o.x == m.x;
        if (w.empty() && sameInput) w = "same input (wide-merge's case)";
        if (!w.empty()) {
          whyNot += (whyNot.empty() ? "" : "; ") + ("with " + merge::memberName(set[0].node) + ": " + w);
          continue;
        }
        set.push_back(m);
        placed = true;
        break;
      }
      if (!placed) {
        if (!whyNot.empty()) log("reject " + merge::memberName(n) + " " + whyNot);
        sets.push_back({m});
      }
    }
    sets.erase(std::remove_if(sets.begin(), sets.end(), [](auto& s) { return s.size() < 2; }),
               sets.end());
    return sets;
  }

  // The tensor [1, nC, H, W] whose channel slices of C, in some order, are exactly the members'
  // inputs (each member's `slice` filled), or null.
  static Value* alreadyStacked(std::vector<ConvMember>& set) {
    Value* src = nullptr;
    const int64_t c = set[0].x->dims()[1];
    std::vector<bool> seen(set.size(), false);
    for (ConvMember& m : set) {
      Node* s = m.x->producer();
      if (!s) return nullptr;
      int64_t begin = -1, end = -1;
      if (s->kind() == "MgChannelSlice") {
        begin = s->attrs().getInt("begin", -1);
        end = s->attrs().getInt("end", -1);
      } else if (s->kind() == "Split" && s->input(0)->rank() == 4 &&
                 (s->attrs().getInt("axis", 0) + 4) % 4 == 1) {
        // Towers on the parts of a Split along the channels (torch.split/chunk): part k starts
        // where the parts before it end.
        begin = 0;
        for (const Value* o : s->outputs()) {
          if (o == m.x) break;
          begin += o->dims()[1];
        }
        end = begin + m.x->dims()[1];
      } else {
        return nullptr;
      }
      if (src && s->input(0) != src) return nullptr;
      src = s->input(0);
      if (begin < 0 || end - begin != c || begin % c != 0) return nullptr;
      size_t at = static_cast<size_t>(begin / c);
      if (at >= seen.size() || seen[at]) return nullptr;
      seen[at] = true;
      m.slice = begin;
    }
    Dims want = set[0].x->dims();
    want[1] = c * static_cast<int64_t>(set.size());
    return src && src->dims() == want ? src : nullptr;
  }

  // The Split whose parts are the members' inputs when nothing but the members reads them (it
  // dies once the members read its input directly); or null.
  static const Node* splitOnlyFeeding(const std::vector<ConvMember>& set) {
    const Node* split = set[0].x->producer();
    if (!split || split->kind() != "Split") return nullptr;
    std::set<const Node*> members;
    for (const ConvMember& m : set) members.insert(m.node);
    for (const Value* o : split->outputs()) {
      if (o->isGraphOutput()) return nullptr;
      for (const Use& u : o->uses())
        if (!members.count(u.node)) return nullptr;
    }
    return split;
  }

  // The Sum that reads every member's result exactly once, when nothing else reads them; or null.
  static Node* sumOfAll(const std::vector<ConvMember>& set) {
    Node* join = nullptr;
    for (const ConvMember& m : set) {
      const auto& uses = m.node->output(0)->uses();
      if (uses.size() != 1 || m.node->output(0)->isGraphOutput()) return nullptr;
      Node* u = uses[0].node;
      if (u->kind() != "Sum" || (join && u != join)) return nullptr;
      join = u;
    }
    if (!join || join->numInputs() != set.size() || join->output(0)->dims() != set[0].node->output(0)->dims())
      return nullptr;
    return join;
  }

  Expected<bool> mergeSet(std::vector<ConvMember>& set, const Reachability& reach) {
    const int64_t n = static_cast<int64_t>(set.size());
    Value* stacked = alreadyStacked(set);
    if (stacked)
      std::stable_sort(set.begin(), set.end(),
                       [](const ConvMember& a, const ConvMember& b) { return a.slice < b.slice; });
    const Node* f = set[0].node;
    const std::string list = merge::memberList(set);

    if (std::string why = merge::dependence(reach, set); !why.empty()) {
      log(fmt::format("decline [{}]: {}", list, why));
      return false;
    }
    const Dims& xd = f->input(0)->dims();
    const Dims& wd = f->input(1)->dims();
    const Dims& yd = f->output(0)->dims();
    const int64_t group = f->attrs().getInt("group", 1);
    const int64_t wNumel = wd[0] * wd[1] * wd[2] * wd[3];
    if (n * wNumel * 4 > kMaxMergedWeightBytes) {
      log(fmt::format("decline [{}]: merged weights exceed kMaxMergedWeightBytes", list));
      return false;
    }

    // Profitability on the cost model, with the new kernels built in a scratch graph.
    const Dims sxDims = {1, n * xd[1], xd[2], xd[3]}, swDims = {n * wd[0], wd[1], wd[2], wd[3]};
    const Dims syDims = {1, n * yd[1], yd[2], yd[3]};
    AttrMap ca = f->attrs();
    ca.set("group", n * group);
    Graph scratch;
    std::vector<const Node*> kernels;
    Value* sx = scratch.addInput("x", {DType::kF32, sxDims});
    if (!stacked) {
      std::vector<Value*> parts;
      for (int64_t i = 0; i < n; ++i)
        parts.push_back(scratch.addInput("x" + std::to_string(i), {DType::kF32, xd}));
      AttrMap aa;
      aa.set("axis", int64_t{1});
      kernels.push_back(scratch.createNode("Concat", parts, {{DType::kF32, sxDims}}, aa));
    }
    std::vector<Value*> sOps = {sx, scratch.addConstant("w", Tensor::zeros({DType::kF32, swDims}))};
    if (f->hasInput(2)) sOps.push_back(scratch.addConstant("b", Tensor::zeros({DType::kF32, {n * wd[0]}})));
    kernels.push_back(scratch.createNode("Conv", sOps, {{DType::kF32, syDims}}, ca));
    double convUs = 0;
    const double after = merge::kernelsUs(kernels, p_, "Conv", convUs);
    std::vector<const Node*> ms;
    for (const ConvMember& m : set) ms.push_back(m.node);
    merge::SiblingBaseline base0 = merge::siblingBaseline(ms, p_);
    // Stacked by a Split that only the members read: the merge leaves it dead, so the members'
    // baselines pay for it and the grouped conv does not.
    if (const Node* split = splitOnlyFeeding(set)) {
      KernelEstimate e = bestKernel(*split, p_);
      if (e.valid && std::isfinite(e.latencyUs)) {
        base0.sequentialUs += e.latencyUs;
        base0.jointUs += e.latencyUs;
      }
    }
    const std::string numbers =
        fmt::format("batch {:.2f} us ({} kernel{}{}) vs {}", after, kernels.size(),
                    kernels.size() == 1 ? "" : "s", stacked ? ", inputs already stacked" : "", base0.str());
    if (!merge::batchPays(after, base0)) {
      log(fmt::format("decline [{}]: {}: gain below kMinGain {:.0f}% on {}", list, numbers,
                      100 * kMinGain, p_.name));
      return false;
    }

    // The rewrite: weights and biases concatenated along the output channels, in set order.
    std::vector<float> w, b;
    w.reserve(static_cast<size_t>(n * wNumel));
    for (const ConvMember& m : set) {
      const float* src = m.node->input(1)->constant().data<float>();
      w.insert(w.end(), src, src + wNumel);
      if (f->hasInput(2)) {
        const float* bs = m.node->input(2)->constant().data<float>();
        b.insert(b.end(), bs, bs + wd[0]);
      }
    }
    Node* last = merge::lastMember(reach, set);
    std::string base = f->name().empty() ? std::string("batch_conv") : f->name() + "_batch";
    ParallelGroup pg;
    pg.strategy = "batch";
    for (const ConvMember& m : set) pg.members.push_back(merge::memberName(m.node));
    pg.kernelsBefore = static_cast<int>(n);
    // Only the grouped conv is marked; a Concat is counted by the report as a kernel of its own.
    pg.kernelsAfter = 1;
    pg.modeledUsBefore = base0.best();
    pg.modeledUsAfter = convUs;
    pg.reason = fmt::format(
        "{} Convs {}x{}x{}x{} (group {}) on different inputs -> one grouped Conv (group {}); {} ({:+.1f}%)",
        n, wd[0], wd[1], wd[2], wd[3], group, n * group, numbers,
        100.0 * (after - base0.best()) / base0.best());
    Node* join = sumOfAll(set);
    if (join) pg.reason += "; their Sum -> one ReduceSum";
    int gid = g_.addGroup(pg);

    if (!stacked) {
      std::vector<Value*> parts;
      for (const ConvMember& m : set) parts.push_back(m.x);
      AttrMap aa;
      aa.set("axis", int64_t{1});
      stacked = g_.createNode("Concat", parts, {{DType::kF32, sxDims}}, aa, base + "_stack", last)->output(0);
    }
    std::vector<Value*> ops = {stacked, g_.addConstant(base + "_w", Tensor::fromVector<float>(DType::kF32, swDims, w))};
    if (f->hasInput(2))
      ops.push_back(g_.addConstant(base + "_b", Tensor::fromVector<float>(DType::kF32, {n * wd[0]}, b)));
    Node* conv = g_.createNode("Conv", ops, {{DType::kF32, syDims}}, ca, base, last);
    conv->setGroup(gid);
    if (join) {
      // The members' results are summed and read by nothing else (ResNeXt's aggregation): the
      // Sum of the n slices is a sum over the merged result seen as [1, n, M, OH, OW].
      const Dims five = {1, n, yd[1], yd[2], yd[3]};
      std::vector<int64_t> fv(five.begin(), five.end());
      Value* shape = g_.addConstant(g_.uniqueName(base + "_paths_shape"),
                                    Tensor::fromVector<int64_t>(DType::kI64, {5}, fv));
      Node* r = g_.createNode("Reshape", {conv->output(0), shape}, {{DType::kF32, five}}, {},
                              base + "_paths", last);
      AttrMap ra;
      ra.set("axes", std::vector<int64_t>{1});
      ra.set("keepdims", int64_t{0});
      Node* sum = g_.createNode("ReduceSum", {r->output(0)}, {join->output(0)->type()}, ra, join->name(),
                                last, {join->output(0)->name()});
      g_.replaceAllUsesWith(join->output(0), sum->output(0));
      g_.eraseNode(join);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        Node* m = set[i].node;
        AttrMap sa;
        sa.set("begin", i * yd[1]);
        sa.set("end", (i + 1) * yd[1]);
        Node* s = g_.createNode("MgChannelSlice", {conv->output(0)}, {m->output(0)->type()}, sa,
                               m->name(), last, {m->output(0)->name()});
        g_.replaceAllUsesWith(m->output(0), s->output(0));
      }
    }
    for (const ConvMember& m : set) g_.eraseNode(m.node);
    MG_RETURN_IF_ERROR(merge::resortAfterMerge(g_, kBatchMergeConvPass, list));
    log(fmt::format("#{} merge [{}]: {}", gid, list, pg.reason));
    return true;
  }

  Graph& g_;
  PassContext& ctx_;
  const DeviceProfile& p_;
};

class BatchMergeConvPass : public Pass {
 public:
  const char* name() const override { return kBatchMergeConvPass; }
  const char* summary() const override {
    return "merge same-shape sibling Convs on different inputs into one grouped Conv (cost model)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return batchMergeConv(g, ctx); }
};

}  // namespace

Expected<bool> batchMergeConv(Graph& g, PassContext& ctx) {
  if (!ctx.parallelOpt) return false;
  MG_ASSIGN_OR_RETURN(const DeviceProfile* p, ctx.profile());
  return ConvBatchMerger(g, ctx, *p).run();
}

std::unique_ptr<Pass> makeBatchMergeConvPass() { return std::make_unique<BatchMergeConvPass>(); }

}  // namespace magneto
