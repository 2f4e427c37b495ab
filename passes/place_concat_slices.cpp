// place-concat-slices: a Concat operand that is a channel slice of a wider result (wide-merge's
// members, batch-merge-conv's paths) becomes a COPY of that slice written straight into its place
// in the Concat's result, so that the Concat itself runs nothing (concat elision,
// src/analysis/memory_plan.cpp) and the copy, now a node of its own at the branch's step, can join a
// joint kernel with its siblings (parallel-co-optimize runs next).
//
//   %w = Conv(%x, ...)                              %w = Conv(%x, ...)
//   %a = MgChannelSlice(%w) {begin = 0, end = 64}   %a = MgChannelSlice(%w) {begin = 0, end = 64, materialize = 1}
//   %b = MgChannelSlice(%w) {...}              ->   %b = MgChannelSlice(%w) {...}
//   %c = Conv(%b, ...)                              %c = Conv(%b, ...)
//   %y = Concat(%a, %c) {axis = 1}                  %y = Concat(%a, %c) {axis = 1}   (elided: no step)
//
// Without it the planner makes %a a byte-offset view of %w, which cannot also live inside %y, so
// the Concat runs and copies %a (and only %a). With it the same bytes are copied once either way,
// but by a node that has no join to wait for.
// Why it is legal: `materialize` only tells the memory planner to run the slice's copy kernel
// instead of aliasing it; the value is the same either way.
// When: only where it makes the Concat elided (every other operand already written in place, as
// the planner decides: planConcatElision); otherwise the attribute is taken back, since the copy
// would then just move to another step. Runs with the parallel passes (their slices are what it
// places); --no-parallel-opt leaves it out.
//
// Golden test: tests/ir/place_concat_slices.mlir
#include <map>
#include <vector>

#include "magneto/analysis/memory_plan.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

Expected<bool> placeConcatSlices(Graph& g) {
  // Tentatively materialize every slice operand of every Concat...
  std::map<const Node*, std::vector<Node*>> tried;  // Concat -> slices marked for it
  for (Node* n : g.nodes()) {
    if (n->kind() != "Concat") continue;
    for (Value* v : n->inputs()) {
      Node* s = v ? v->producer() : nullptr;
      if (!s || s->kind() != "MgChannelSlice" || s->attrs().getInt("materialize", 0) != 0) continue;
      s->attrs().set("materialize", int64_t{1});
      tried[n].push_back(s);
    }
  }
  // ...and keep it where the planner then elides the Concat.
  ConcatElision ce = planConcatElision(g);
  bool changed = false;
  for (auto& [concat, slices] : tried) {
    bool keep = ce.isElided(concat);
    for (Node* s : slices) {
      if (keep) changed = true;
      else s->attrs().erase("materialize");
    }
  }
  return changed;
}

namespace {
class PlaceConcatSlicesPass : public Pass {
 public:
  const char* name() const override { return "place-concat-slices"; }
  const char* summary() const override {
    return "copy channel slices straight into their Concat's result where that elides the Concat";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override {
    if (!ctx.parallelOpt) return false;
    return placeConcatSlices(g);
  }
};
}  // namespace

std::unique_ptr<Pass> makePlaceConcatSlicesPass() { return std::make_unique<PlaceConcatSlicesPass>(); }

}  // namespace magneto
