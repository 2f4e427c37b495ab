// shared-weight-merge: GEMMs that multiply DIFFERENT inputs by the SAME weight (one Value), at any
// depth of the graph, become ONE GEMM over the inputs' rows stacked; each member's result is a
// zero-copy row slice of the merged result. The weight is then read once instead of once per
// member: an unrolled decoder's vocabulary projection of every step (8 steps x 20 MB of weights
// at a few GB/s was most of seq2seq's time), a time-distributed Linear, siamese towers, a head
// applied to several inputs.
//
//   %p0 = Gemm(%h0, %W, %b) {transB = 1}          %s  = Concat(%h0, %h1) {axis = 0}      [R0+R1, K]
//   ...                                  ->       %m  = Gemm(%s, %W, %b) {transB = 1}   [R0+R1, N]
//   %p1 = Gemm(%h1, %W, %b) {transB = 1}          %v  = Reshape(%m) to [1, R0+R1, N]
//                                                 %p0 = Reshape(MgChannelSlice(%v){0, R0})
//                                                 %p1 = Reshape(MgChannelSlice(%v){R0, R0+R1})
//   (a MatMul member of rank > 2 has its input flattened to rows first, and its result reshaped
//   back.)
//
// Why it is legal: row r of A x B (+ a bias broadcast over rows, then an element-wise epilogue)
// reads only row r of A, so the merged product's rows [off_i, off_i + R_i) are exactly member i's
// result. The members are mutually independent (no member's result reaches another's input,
// checked with explicit reachability), so the merged node, placed after the last member, can
// wait for every input without a cycle; their other consumers wait for it instead of their own
// member, which delays them but reads the same values. The weight and bias are the same Value
// for every member, so nothing is copied or stacked.
//
// Preconditions per member: f32; Gemm with transA 0, alpha 1, a rank-2 input, and a bias absent or
// one row ([N] or [1, N]); or MatMul with a rank-2 weight; static shapes (rows at a symbolic
// extent would make the slices' offsets vary); not in a group already. All members of a set:
// the same kind, weight Value, bias Value, attributes (transB, beta, the fused epilogue) and K.
// Profitability (cost model of ctx.device, "host" on the CPU target): the Concat plus the merged
// GEMM must beat the members one after another by kMinGain; otherwise the set is declined with
// the numbers (--debug-only=shared-weight-merge). Does nothing when ctx.parallelOpt is off.
//
// Records one ParallelGroup (strategy "batch") per merged set and marks the merged GEMM with it.
// Golden tests: tests/ir/shared_weight_merge.mlir.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "magneto/passes/parallel_analysis.h"
#include "magneto/passes/parallel_co_optimize.h"
#include "merge_common.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"

namespace magneto {
namespace {

constexpr const char* kSharedWeightMergePass = "shared-weight-merge";

// One member seen as rows x k times the shared weight.
struct Member {
  Node* node = nullptr;
  int64_t rows = 0, k = 0, cols = 0;
};

bool staticShape(const Value* v) {
  for (const DimExpr& e : v->symDims())
    if (!e.isConstant()) return false;
  return true;
}

// Why `n` cannot be a member ("" when it can); fills `m`.
std::string rejectAlone(Node* n, Member& m) {
  if (n->kind() != "Gemm" && n->kind() != "MatMul") return "not a Gemm or MatMul";
  if (n->group() >= 0) return "already in group #" + std::to_string(n->group());
  if (n->numOutputs() != 1 || n->output(0)->dtype() != DType::kF32) return "not f32";
  const Value* a = n->input(0);
  const Value* b = n->hasInput(1) ? n->input(1) : nullptr;
  if (!a || !b || a->dtype() != DType::kF32 || b->dtype() != DType::kF32) return "not f32";
  if (b->rank() != 2) return "weight is not rank 2";
  if (!staticShape(a) || !staticShape(n->output(0))) return "symbolic shape";
  m.node = n;
  if (n->kind() == "Gemm") {
    const AttrMap& at = n->attrs();
    if (at.getInt("transA", 0) != 0) return "transA";
    if (at.getFloat("alpha", 1.0) != 1.0) return "alpha != 1";
    if (a->rank() != 2) return "input is not rank 2";
    const bool transB = at.getInt("transB", 0) != 0;
    m.rows = a->dims()[0];
    m.k = a->dims()[1];
    m.cols = transB ? b->dims()[0] : b->dims()[1];
    if (n->numInputs() > 3) return "extra operands";
    if (n->hasInput(2)) {
      const Value* c = n->input(2);
      if (c->type().numel() != m.cols || c->rank() < 1 || c->rank() > 2 || c->dims().back() != m.cols)
        return "bias is not one row of " + std::to_string(m.cols);
    }
  } else {
    if (n->numInputs() != 2) return "extra operands";
    if (a->rank() < 2) return "vector operand";
    m.k = a->dims().back();
    m.cols = b->dims()[1];
    m.rows = m.k > 0 ? a->type().numel() / m.k : 0;
  }
  if (m.rows <= 0 || m.k <= 0 || m.cols <= 0) return "empty GEMM";
  return "";
}

// Members that may share one merged GEMM have equal keys (kind, weight and bias Values) and equal
// attributes (compared within a key's sets).
using Key = std::tuple<std::string, const Value*, const Value*>;
Key keyOf(const Node* n) {
  return {n->kind(), n->input(1), n->kind() == "Gemm" && n->hasInput(2) ? n->input(2) : nullptr};
}

class SharedWeightMerger {
 public:
  SharedWeightMerger(Graph& g, PassContext& ctx, const DeviceProfile& p) : g_(g), ctx_(ctx), p_(p) {}

  Expected<bool> run() {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      Reachability reach(g_);
      for (const std::vector<Member>& set : candidateSets(reach)) {
        std::vector<std::string> names;
        for (const Member& m : set) names.push_back(merge::memberName(m.node));
        if (!tried_.insert(names).second) continue;
        MG_ASSIGN_OR_RETURN(bool merged, mergeSet(set, reach));
        if (merged) {
          changed = again = true;
          break;
        }
      }
    }
    return changed;
  }

 private:
  void log(const std::string& s) const { ctx_.trace(kSharedWeightMergePass, s); }

  // Per key, the members in schedule order split greedily into sets of mutually independent
  // members (a member that depends on one of a set's starts or joins another set).
  std::vector<std::vector<Member>> candidateSets(const Reachability& reach) {
    std::map<Key, std::vector<Member>> byKey;
    std::vector<Key> order;
    for (Node* n : g_.nodes()) {
      if (n->kind() != "Gemm" && n->kind() != "MatMul") continue;
      Member m;
      if (std::string why = rejectAlone(n, m); !why.empty()) {
        log("reject " + merge::memberName(n) + ": " + why);
        continue;
      }
      Key k = keyOf(n);
      if (!byKey.count(k)) order.push_back(k);
      byKey[k].push_back(m);
    }
    std::vector<std::vector<Member>> sets;
    for (const Key& k : order) {
      std::vector<std::vector<Member>> local;
      for (const Member& m : byKey[k]) {
        bool placed = false;
        for (auto& s : local) {
          if (s[0].k != m.k || !(s[0].node->attrs() == m.node->attrs())) continue;
          bool free = true;
          for (const Member& o : s) free &= reach.independent(o.node, m.node);
          if (free) {
            s.push_back(m);
            placed = true;
            break;
          }
        }
        if (!placed) local.push_back({m});
      }
      for (auto& s : local)
        if (s.size() >= 2) sets.push_back(std::move(s));
    }
    return sets;
  }

  Value* shapeConst(const Dims& d) {
    Value*& c = shapes_[d];
    if (!c) {
      std::vector<int64_t> v(d.begin(), d.end());
      c = g_.addConstant(g_.uniqueName("shared_shape"),
                         Tensor::fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v));
    }
    return c;
  }

  Expected<bool> mergeSet(const std::vector<Member>& set, const Reachability& reach) {
    const Member& f = set[0];
    const std::string list = merge::memberList(set);
    if (std::string why = merge::dependence(reach, set); !why.empty()) {
      log(fmt::format("decline [{}]: {}", list, why));
      return false;
    }
    int64_t rows = 0;
    for (const Member& m : set) rows += m.rows;

    // Profitability: the stacking Concat and the merged GEMM against the members in sequence.
    Graph scratch;
    std::vector<const Node*> kernels;
    std::vector<Value*> parts;
    for (size_t i = 0; i < set.size(); ++i)
      parts.push_back(scratch.addInput("x" + std::to_string(i), {DType::kF32, {set[i].rows, f.k}}));
    AttrMap ca;
    ca.set("axis", int64_t{0});
    Node* sc = scratch.createNode("Concat", parts, {{DType::kF32, {rows, f.k}}}, ca);
    kernels.push_back(sc);
    std::vector<Value*> ins = {sc->output(0),
                               scratch.addConstant("w", Tensor::zeros(f.node->input(1)->type()))};
    if (f.node->kind() == "Gemm" && f.node->hasInput(2))
      ins.push_back(scratch.addConstant("b", Tensor::zeros(f.node->input(2)->type())));
    kernels.push_back(scratch.createNode(f.node->kind(), ins, {{DType::kF32, {rows, f.cols}}},
                                         f.node->attrs()));
    double gemmUs = 0;
    const double after = merge::kernelsUs(kernels, p_, f.node->kind(), gemmUs);
    std::vector<const Node*> ms;
    for (const Member& m : set) ms.push_back(m.node);
    const double before = sequentialLatency(ms, p_);
    const std::string numbers = fmt::format("merged {:.2f} us (Concat + {}) vs sequential {:.2f} us",
                                            after, f.node->kind(), before);
    if (!std::isfinite(after) || !std::isfinite(before) || after > before * (1 - kMinGain)) {
      log(fmt::format("decline [{}]: {}: gain below kMinGain {:.0f}% on {}", list, numbers,
                      100 * kMinGain, p_.name));
      return false;
    }

    // The rewrite, in creation order just before the last member (every member's input is
    // computed by then); the stable re-sort then moves the members' consumers after it.
    Node* last = merge::lastMember(reach, set);
    const std::string base = f.node->name().empty() ? std::string("shared") : f.node->name() + "_shared";
    ParallelGroup pg;
    pg.strategy = "batch";
    for (const Member& m : set) pg.members.push_back(merge::memberName(m.node));
    pg.kernelsBefore = static_cast<int>(set.size());
    pg.kernelsAfter = 1;
    pg.modeledUsBefore = before;
    pg.modeledUsAfter = gemmUs;
    pg.reason = fmt::format("{} {}s of K={} N={} sharing weight %{} on different inputs -> one {} of {} rows; {} ({:+.1f}%)",
                            set.size(), f.node->kind(), f.k, f.cols, f.node->input(1)->name(),
                            f.node->kind(), rows, numbers, 100.0 * (after - before) / before);
    const int gid = g_.addGroup(pg);

    std::vector<Value*> stackParts;
    for (size_t i = 0; i < set.size(); ++i) {
      Value* x = set[i].node->input(0);
      if (x->rank() != 2)
        x = g_.createNode("Reshape", {x, shapeConst({set[i].rows, f.k})}, {{DType::kF32, {set[i].rows, f.k}}},
                          {}, base + "_in" + std::to_string(i), last)
                ->output(0);
      stackParts.push_back(x);
    }
    Node* stack = g_.createNode("Concat", stackParts, {{DType::kF32, {rows, f.k}}}, ca, base + "_stack", last);
    std::vector<Value*> mins = {stack->output(0), f.node->input(1)};
    if (f.node->kind() == "Gemm" && f.node->hasInput(2)) mins.push_back(f.node->input(2));
    Node* mm = g_.createNode(f.node->kind(), mins, {{DType::kF32, {rows, f.cols}}}, f.node->attrs(), base, last);
    mm->setGroup(gid);
    Node* view = g_.createNode("Reshape", {mm->output(0), shapeConst({1, rows, f.cols})},
                               {{DType::kF32, {1, rows, f.cols}}}, {}, base + "_rows", last);
    int64_t at = 0;
    for (const Member& m : set) {
      AttrMap sa;
      sa.set("begin", at);
      sa.set("end", at + m.rows);
      at += m.rows;
      Node* s = g_.createNode("MgChannelSlice", {view->output(0)}, {{DType::kF32, {1, m.rows, f.cols}}}, sa,
                              merge::memberName(m.node) + "_rows", last);
      Value* old = m.node->output(0);
      const std::string oldName = old->name();
      Node* r = g_.createNode("Reshape", {s->output(0), shapeConst(old->dims())}, {old->type()}, {},
                              m.node->name(), last);
      g_.replaceAllUsesWith(old, r->output(0));
      g_.eraseNode(m.node);
      g_.renameValue(r->output(0), oldName);  // graph outputs keep their port names
    }
    MG_RETURN_IF_ERROR(merge::resortAfterMerge(g_, kSharedWeightMergePass, list));
    log(fmt::format("#{} merge [{}]: {}", gid, list, pg.reason));
    return true;
  }

  Graph& g_;
  PassContext& ctx_;
  const DeviceProfile& p_;
  std::map<Dims, Value*> shapes_;
  std::set<std::vector<std::string>> tried_;
};

class SharedWeightMergePass : public Pass {
 public:
  const char* name() const override { return kSharedWeightMergePass; }
  const char* summary() const override {
    return "merge GEMMs sharing one weight on different inputs into one GEMM over their rows (cost model)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return sharedWeightMerge(g, ctx); }
};

}  // namespace

Expected<bool> sharedWeightMerge(Graph& g, PassContext& ctx) {
  if (!ctx.parallelOpt) return false;
  MG_ASSIGN_OR_RETURN(const DeviceProfile* p, ctx.profile());
  return SharedWeightMerger(g, ctx, *p).run();
}

std::unique_ptr<Pass> makeSharedWeightMergePass() { return std::make_unique<SharedWeightMergePass>(); }

}  // namespace magneto
