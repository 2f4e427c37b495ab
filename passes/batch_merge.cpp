// batch-merge: strategy 2 of docs/DESIGN.md (parallel structures) — same-shape sibling GEMMs on
// DIFFERENT inputs (the towers of a recommender, experts fed by their own router slice) become ONE
// batched MatMul over stacked inputs and stacked (compile-time) weights; each member's result is a
// zero-copy slice of the batched result.
//
//   %a = Gemm(%x0, %w0, %b0) {mg_act = "Relu", transB = 1}     %s  = Concat(%x0', %x1') {axis = 1}
//   %b = Gemm(%x1, %w1, %b1) {mg_act = "Relu", transB = 1} ->  %y  = MatMul(%s, %W)   [1,N,R,N']
//                                                              %e  = MgElementwise(%y, %B)
//                                                                    {program = ["Add i0 i1", "Relu t0"]}
//                                                              %a  = Reshape(MgChannelSlice(%e){0,1})
//                                                              %b  = Reshape(MgChannelSlice(%e){1,2})
//   (%xi' = Reshape(%xi) to [1,1,R,K]; %W = stack of w_i^T [1,N,K,N'], %B = stack of b_i
//   [1,N,1,N']; without a bias the activation stays in the MatMul's epilogue and there is no
//   MgElementwise; when the inputs already are, in order, the slices of one batched result (the
//   next layer of merged towers) there is no Concat either.)
//
// Why it is legal: a MatMul with batch dims [1,N] computes N independent products, product i
// reading exactly x_i (rows of K) and w_i; Gemm's bias broadcast over rows and its activation are
// per element, and are applied in the same order (bias, then activation). Members are mutually
// independent (ParallelAnalysis' groups, re-checked here with explicit reachability), so no input
// of one depends on another's result and the stable topological re-sort after the rewrite cannot
// meet a cycle. Slices of the batch-1 result are byte-offset views (src/analysis/memory_plan.cpp).
//
// Preconditions per member: f32 Gemm (alpha 1, transA 0, constant B with data, optional constant
// C of N' elements) or MatMul (A rank >= 2, constant rank-2 B with data); all members of a set have
// the same kind, shapes, transB/beta, bias shape and epilogue; distinct inputs (same-input siblings
// belong to wide-merge / parallel-co-optimize); no member already in a group.
// Profitability (cost model of ctx.device, "host" on the CPU target): the batched kernels (MatMul,
// plus the Concat that stacks the inputs and the MgElementwise of the bias, when needed) must beat
// the better of running the members one after another and one joint kernel (what
// parallel-co-optimize would otherwise do) by kMinGain; otherwise the set is declined with the
// numbers (--debug-only=batch-merge) and left to parallel-co-optimize. Does nothing when
// ctx.parallelOpt is off (--no-parallel-opt, the report's baseline).
//
// Records one ParallelGroup (strategy "batch") per merged set and marks the batched MatMul with it.
// Golden tests: tests/ir/batch_merge.mlir, tests/ir/batch_merge_negative.mlir.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "magneto/ir/symbolic.h"
#include "magneto/passes/parallel_analysis.h"
#include "magneto/passes/parallel_co_optimize.h"
#include "merge_common.h"
#include "mg_acts.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"

namespace magneto {
namespace {

constexpr const char* kBatchMergePass = "batch-merge";
// Stacked weights beyond this are not built at compile time (they would double the package's
// weights for one group); no zoo group comes near it.
constexpr int64_t kMaxStackedWeightBytes = int64_t{256} << 20;

// The activation line of an MgElementwise program for a fused epilogue, or "" when unsupported.
// Activations with no parameter or with alpha only (mg_acts.h); two-parameter ones
// (Clip, HardSigmoid, Selu) are not written into programs here.
std::string actLine(const Node* n) {
  std::string act = n->attrs().getString("mg_act", "");
  const mgrt::acts::ActInfo* a = act.empty() ? nullptr : mgrt::acts::find(act.c_str());
  if (a && a->params == 0) return act + " t0";
  if (a && a->params == 1) return fmt::format("{} t0 alpha={:.9g}", act, n->attrs().getFloat("mg_alpha", 0.0));
  return "";
}

// One member seen as a GEMM: rows x k times k x cols (+ bias of cols), weights as [k, cols].
struct GemmMember {
  Node* node = nullptr;
  Value* x = nullptr;
  int64_t rows = 0, k = 0, cols = 0;
  bool transB = false;
  const Value* bias = nullptr;  // Gemm's C, [cols] or [1, cols]
  double beta = 1.0;
};

// Why `n` cannot be a member ("" when it can); fills `m`.
std::string rejectAlone(Node* n, GemmMember& m) {
  if (n->kind() != "Gemm" && n->kind() != "MatMul") return "not a Gemm or MatMul";
  if (n->group() >= 0) return "already in group #" + std::to_string(n->group());
  if (n->numOutputs() != 1 || n->output(0)->dtype() != DType::kF32) return "not f32";
  Value* a = n->input(0);
  Value* b = n->input(1);
  if (!a || !b || a->dtype() != DType::kF32) return "not f32";
  if (!b->isConstant() || !b->constant().hasData()) return "weight is not a constant with data";
  if (b->rank() != 2) return "weight is not rank 2";
  m.node = n;
  m.x = a;
  if (n->kind() == "Gemm") {
    const AttrMap& at = n->attrs();
    if (at.getInt("transA", 0) != 0) return "transA";
    if (at.getFloat("alpha", 1.0) != 1.0) return "alpha != 1";
    m.transB = at.getInt("transB", 0) != 0;
    m.rows = a->dims()[0];
    m.k = a->dims()[1];
    m.cols = m.transB ? b->dims()[0] : b->dims()[1];
    if (n->hasInput(2)) {
      const Value* c = n->input(2);
      if (!c->isConstant() || !c->constant().hasData()) return "bias is not a constant with data";
      if (c->constant().numel() != m.cols || c->rank() < 1 || c->dims().back() != m.cols)
        return "bias is not one row of " + std::to_string(m.cols);
      m.bias = c;
      m.beta = at.getFloat("beta", 1.0);
    }
  } else {
    if (a->rank() < 2) return "vector operand";
    m.k = a->dims().back();
    m.cols = b->dims()[1];
    m.rows = m.k > 0 ? a->type().numel() / m.k : 0;
  }
  if (m.rows <= 0 || m.k <= 0 || m.cols <= 0) return "empty GEMM";
  if (m.bias && n->attrs().find("mg_act") && actLine(n).empty())
    return "bias with activation " + n->attrs().getString("mg_act", "") +
           " (no MgElementwise form)";
  return "";
}

// Why `m` cannot share one batched op with `f` ("" when it can).
std::string incompatible(const GemmMember& f, const GemmMember& m) {
  if (m.node->kind() != f.node->kind()) return "different kinds";
  if (m.x->dims() != f.x->dims() || !sameSymbolicShape(m.x, f.x)) return "different input shapes";
  if (m.node->input(1)->dims() != f.node->input(1)->dims() || m.transB != f.transB)
    return "different weight shapes";
  if ((m.bias == nullptr) != (f.bias == nullptr) || (m.bias && m.bias->dims() != f.bias->dims()) ||
      m.beta != f.beta)
    return "different bias";
  if (!merge::sameEpilogue(m.node, f.node)) return "different epilogue";
  return "";
}

class BatchMerger {
 public:
  BatchMerger(Graph& g, PassContext& ctx, const DeviceProfile& p) : g_(g), ctx_(ctx), p_(p) {}

  Expected<bool> run() {
    return merge::mergeSiblingSets(
        g_, [this](const SiblingGroup& sg) { return candidateSets(sg); },
        [this](const std::vector<GemmMember>& set, const Reachability& reach) {
          return mergeSet(set, reach);
        });
  }

 private:
  void log(const std::string& s) const { ctx_.trace(kBatchMergePass, s); }

  // Members of `sg` split into sets that can share one batched op (schedule order kept).
  std::vector<std::vector<GemmMember>> candidateSets(const SiblingGroup& sg) {
    std::vector<std::vector<GemmMember>> sets;
    for (Node* n : sg.members) {
      GemmMember m;
      std::string why = rejectAlone(n, m);
      if (!why.empty()) {
        if (n->kind() == "Gemm" || n->kind() == "MatMul") log("reject " + merge::memberName(n) + ": " + why);
        continue;
      }
      bool placed = false;
      std::string whyNot;
      for (auto& set : sets) {
        std::string w = incompatible(set[0], m);
        bool sameInput = false;
        for (const GemmMember& o : set) sameInput |= o.x == m.x;
        if (w.empty() && sameInput) w = "same input";
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

  // The batched value [1,N,R,K] whose slices 0..N-1, in order, are the members' inputs (the
  // previous layer of merged towers), or null.
  static Value* alreadyStacked(const std::vector<GemmMember>& set) {
    Value* src = nullptr;
    for (size_t i = 0; i < set.size(); ++i) {
      Node* r = set[i].x->producer();
      if (!r || r->kind() != "Reshape") return nullptr;
      Node* s = r->input(0)->producer();
      if (!s || s->kind() != "MgChannelSlice") return nullptr;
      if (s->attrs().getInt("begin", -1) != static_cast<int64_t>(i) ||
          s->attrs().getInt("end", -1) != static_cast<int64_t>(i + 1))
        return nullptr;
      if (src && s->input(0) != src) return nullptr;
      src = s->input(0);
    }
    const GemmMember& f = set[0];
    Dims want = {1, static_cast<int64_t>(set.size()), f.rows, f.k};
    return src && src->dims() == want ? src : nullptr;
  }

  // One i64 shape constant per distinct shape (Reshape's operand).
  Value* shapeConst(const Dims& d) {
    Value*& c = shapes_[d];
    if (!c) {
      std::vector<int64_t> v(d.begin(), d.end());
      c = g_.addConstant(g_.uniqueName("batch_shape"),
                         Tensor::fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v));
    }
    return c;
  }

  Expected<bool> mergeSet(const std::vector<GemmMember>& set, const Reachability& reach) {
    const GemmMember& f = set[0];
    const int64_t n = static_cast<int64_t>(set.size());
    const std::string list = merge::memberList(set);

    // Legality: mutually independent (re-checked; the groups promise it).
    if (std::string why = merge::dependence(reach, set); !why.empty()) {
      log(fmt::format("decline [{}]: {}", list, why));
      return false;
    }
    if (static_cast<double>(n) * f.k * f.cols * 4 > kMaxStackedWeightBytes) {
      log(fmt::format("decline [{}]: stacked weights exceed kMaxStackedWeightBytes", list));
      return false;
    }

    // Profitability on the cost model, with the new kernels built in a scratch graph.
    Value* stacked = alreadyStacked(set);
    const Dims xDims = {1, n, f.rows, f.k}, wDims = {1, n, f.k, f.cols}, yDims = {1, n, f.rows, f.cols};
    const Dims bDims = {1, n, 1, f.cols};
    std::string act = actLine(f.node);
    bool needsEw = f.bias != nullptr;
    Graph scratch;
    std::vector<const Node*> kernels;
    Value* sx = scratch.addInput("x", {DType::kF32, xDims});
    if (!stacked) {
      std::vector<Value*> parts;
      for (int64_t i = 0; i < n; ++i)
        parts.push_back(scratch.addInput("x" + std::to_string(i), {DType::kF32, {1, 1, f.rows, f.k}}));
      AttrMap ca;
      ca.set("axis", int64_t{1});
      kernels.push_back(scratch.createNode("Concat", parts, {{DType::kF32, xDims}}, ca));
    }
    AttrMap ma;
    if (!needsEw)
      for (const char* k : {"mg_act", "mg_alpha", "mg_beta"})
        if (const Attribute* a = f.node->attrs().find(k)) ma.set(k, *a);
    Value* sw = scratch.addConstant("w", Tensor::zeros({DType::kF32, wDims}));
    kernels.push_back(scratch.createNode("MatMul", {sx, sw}, {{DType::kF32, yDims}}, ma));
    std::vector<std::string> program;
    if (needsEw) {
      program.push_back("Add i0 i1");
      if (f.node->attrs().find("mg_act")) program.push_back(act);
      AttrMap ea;
      ea.set("program", program);
      Value* sb = scratch.addConstant("b", Tensor::zeros({DType::kF32, bDims}));
      kernels.push_back(scratch.createNode("MgElementwise",
                                           {kernels.back()->output(0), sb},
                                           {{DType::kF32, yDims}}, ea));
    }
    double matmulUs = 0;
    const double after = merge::kernelsUs(kernels, p_, "MatMul", matmulUs);
    std::vector<const Node*> ms;
    for (const GemmMember& m : set) ms.push_back(m.node);
    const merge::SiblingBaseline base0 = merge::siblingBaseline(ms, p_);
    const double before = base0.best();
    const std::string numbers =
        fmt::format("batch {:.2f} us ({} kernel{}{}) vs {}", after, kernels.size(),
                    kernels.size() == 1 ? "" : "s", stacked ? ", inputs already stacked" : "", base0.str());
    if (!merge::batchPays(after, base0)) {
      log(fmt::format("decline [{}]: {}: gain below kMinGain {:.0f}% on {}", list, numbers,
                      100 * kMinGain, p_.name));
      return false;
    }

    // The rewrite. Stacked weights [1,N,K,N'] (w_i^T for transB) and biases [1,N,1,N'].
    std::vector<float> w(static_cast<size_t>(n * f.k * f.cols));
    std::vector<float> b(needsEw ? static_cast<size_t>(n * f.cols) : 0);
    for (int64_t i = 0; i < n; ++i) {
      const GemmMember& m = set[i];
      const float* src = m.node->input(1)->constant().data<float>();
      float* dst = w.data() + i * f.k * f.cols;
      for (int64_t r = 0; r < f.k; ++r)
        for (int64_t c = 0; c < f.cols; ++c)
          dst[r * f.cols + c] = m.transB ? src[c * f.k + r] : src[r * f.cols + c];
      if (needsEw) {
        const float* bs = m.bias->constant().data<float>();
        for (int64_t c = 0; c < f.cols; ++c)
          b[i * f.cols + c] = static_cast<float>(m.beta) * bs[c];
      }
    }
    Node* last = merge::lastMember(reach, set);
    std::string base = f.node->name().empty() ? std::string("batch") : f.node->name() + "_batch";
    ParallelGroup pg;
    pg.strategy = "batch";
    for (const GemmMember& m : set) pg.members.push_back(merge::memberName(m.node));
    pg.kernelsBefore = static_cast<int>(n);
    // Only the MatMul is marked (a group's nodes must be mutually independent; the verifier checks
    // it): the Concat and MgElementwise are counted by the report as kernels of their own, so the
    // group's after figure is the MatMul alone. The reason carries the whole comparison.
    pg.kernelsAfter = 1;
    pg.modeledUsBefore = before;
    pg.modeledUsAfter = matmulUs;
    pg.reason = fmt::format("{} {}s of {}x{}x{} on different inputs -> one MatMul batched {}; {} ({:+.1f}%)",
                            n, f.node->kind(), f.rows, f.k, f.cols, n, numbers,
                            100.0 * (after - before) / before);
    int gid = g_.addGroup(pg);

    if (!stacked) {
      std::vector<Value*> parts;
      for (int64_t i = 0; i < n; ++i) {
        Node* r = g_.createNode("Reshape", {set[i].x, shapeConst({1, 1, f.rows, f.k})},
                                {{DType::kF32, {1, 1, f.rows, f.k}}}, {},
                                base + "_in" + std::to_string(i), last);
        parts.push_back(r->output(0));
      }
      AttrMap ca;
      ca.set("axis", int64_t{1});
      Node* c = g_.createNode("Concat", parts, {{DType::kF32, xDims}}, ca, base + "_stack", last);
      stacked = c->output(0);
    }
    Value* wv = g_.addConstant(base + "_w", Tensor::fromVector<float>(DType::kF32, wDims, w));
    Node* mm = g_.createNode("MatMul", {stacked, wv}, {{DType::kF32, yDims}}, ma, base, last);
    mm->setGroup(gid);
    Value* y = mm->output(0);
    if (needsEw) {
      Value* bv = g_.addConstant(base + "_b", Tensor::fromVector<float>(DType::kF32, bDims, b));
      AttrMap ea;
      ea.set("program", program);
      Node* e = g_.createNode("MgElementwise", {y, bv}, {{DType::kF32, yDims}}, ea,
                              base + "_epilogue", last);
      y = e->output(0);
    }
    for (int64_t i = 0; i < n; ++i) {
      Node* m = set[i].node;
      AttrMap sa;
      sa.set("begin", i);
      sa.set("end", i + 1);
      Node* s = g_.createNode("MgChannelSlice", {y}, {{DType::kF32, {1, 1, f.rows, f.cols}}}, sa,
                              base + "_slice" + std::to_string(i), last);
      const Dims& od = m->output(0)->dims();
      Node* r = g_.createNode("Reshape", {s->output(0), shapeConst(od)}, {m->output(0)->type()}, {},
                              m->name(), last, {m->output(0)->name()});
      g_.replaceAllUsesWith(m->output(0), r->output(0));
    }
    for (const GemmMember& m : set) g_.eraseNode(m.node);
    MG_RETURN_IF_ERROR(merge::resortAfterMerge(g_, kBatchMergePass, list));
    log(fmt::format("#{} merge [{}]: {}", gid, list, pg.reason));
    return true;
  }

  Graph& g_;
  PassContext& ctx_;
  const DeviceProfile& p_;
  std::map<Dims, Value*> shapes_;
};

class BatchMergePass : public Pass {
 public:
  const char* name() const override { return kBatchMergePass; }
  const char* summary() const override {
    return "merge same-shape sibling GEMMs on different inputs into one batched MatMul (cost model)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return batchMerge(g, ctx); }
};

}  // namespace

Expected<bool> batchMerge(Graph& g, PassContext& ctx) {
  if (!ctx.parallelOpt) return false;
  MG_ASSIGN_OR_RETURN(const DeviceProfile* p, ctx.profile());
  return BatchMerger(g, ctx, *p).run();
}

std::unique_ptr<Pass> makeBatchMergePass() { return std::make_unique<BatchMergePass>(); }

}  // namespace magneto
