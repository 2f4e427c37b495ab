#include "magneto/ir/verifier.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"
#include "magneto/ir/text.h"

namespace magneto {

Status inferShapes(Graph& g) {
  for (Node* n : g.nodes()) MG_RETURN_IF_ERROR(inferNode(*n));
  return Status::success();
}

namespace {

// Transitive producers of `n` within the graph (for the group independence check).
void ancestors(const Node* n, std::unordered_set<const Node*>& seen) {
  for (const Value* v : n->inputs()) {
    if (!v || !v->producer() || seen.count(v->producer())) continue;
    seen.insert(v->producer());
    ancestors(v->producer(), seen);
  }
}

}  // namespace

Status verifyGraph(const Graph& g) {
  std::unordered_set<const Value*> defined;
  std::set<std::string> names;
  for (const Value* v : g.values()) {
    if (!names.insert(v->name()).second) return badInput("value name '{}' is used twice", v->name());
    if (!v->producer()) defined.insert(v);
    if (v->isConstant() && v->constant().type() != v->type())
      return badInput("constant '{}' has type {} but holds {}", v->name(), v->type().str(),
                      v->constant().type().str());
  }
  // Dynamic dimensions: symbols well formed; a symbolic shape has the value's rank, mentions only
  // declared symbols and gives the static dims at the reference binding (every symbol at its max).
  std::set<std::string> symNames;
  for (const DimSymbol& s : g.symbols()) {
    if (!symNames.insert(s.name).second) return badInput("symbol '{}' is declared twice", s.name);
    if (s.lo < 0 || s.lo > s.hi)
      return badInput("symbol '{}' has range [{}, {}]; need 0 <= lo <= hi", s.name, s.lo, s.hi);
    if (s.data && !s.opt.empty())
      return badInput("data symbol '{}' has opt values: its value is computed at run time", s.name);
  }
  const DimBinding ref = g.referenceBinding();
  for (const Value* v : g.values()) {
    if (!v->isSymbolic()) continue;
    if (static_cast<int>(v->symDims().size()) != v->rank())
      return badInput("value '{}' has {} symbolic dims for rank {}", v->name(),
                      v->symDims().size(), v->rank());
    if (v->isConstant()) return badInput("constant '{}' has a symbolic shape", v->name());
    for (int d = 0; d < v->rank(); ++d) {
      const DimExpr& e = v->symDims()[d];
      for (const std::string& s : e.symbols())
        if (!symNames.count(s))
          return badInput("value '{}' dim {} ('{}') uses undeclared symbol '{}'", v->name(), d,
                          e.str(), s);
      auto atRef = e.evaluate(ref);
      if (!atRef.ok() || *atRef != v->dims()[d])
        return badInput("value '{}' dim {}: '{}' is {} with every symbol at its maximum, but the "
                        "static dim is {}",
                        v->name(), d, e.str(),
                        atRef.ok() ? std::to_string(*atRef) : atRef.status().message(),
                        v->dims()[d]);
    }
  }
  std::unordered_map<int, int> groupRuns;  // group -> number of contiguous runs
  int prevGroup = -1;
  std::map<int, std::vector<const Node*>> members;
  for (const Node* n : g.nodes()) {
    for (size_t i = 0; i < n->numInputs(); ++i) {
      const Value* v = n->input(i);
      if (!v) continue;
      if (!defined.count(v))
        return badInput("{} uses '{}' before it is defined", n->describe(), v->name());
      bool found = false;
      for (const Use& u : v->uses()) found |= u.node == n && u.operand == static_cast<int>(i);
      if (!found) return internalStatus("{}: use list of '{}' is stale", n->describe(), v->name());
    }
    // Results must be what shape inference says.
    for (const Value* v : n->outputs()) {
      if (v->producer() != n) return internalStatus("{}: result '{}' has a wrong producer", n->describe(), v->name());
      defined.insert(v);
    }
    if (n->group() != prevGroup && n->group() >= 0) {
      if (++groupRuns[n->group()] > 1)
        return badInput("members of parallel group #{} are not contiguous", n->group());
      if (!g.groups().count(n->group()))
        return badInput("{} is in undeclared parallel group #{}", n->describe(), n->group());
    }
    if (n->group() >= 0) members[n->group()].push_back(n);
    prevGroup = n->group();
  }
  for (const Value* v : g.outputs())
    if (!defined.count(v)) return badInput("graph output '{}' is not defined", v->name());
  for (const auto& [id, nodes] : members) {
    // A wavefront (passes/recurrent_wavefront.cpp) is a chain of stacked layers by design: its
    // program orders each layer's steps after the layer below's; the other strategies run their
    // members in any order, so those must be independent.
    if (g.groups().at(id).strategy == "wavefront") continue;
    std::unordered_set<const Node*> set(nodes.begin(), nodes.end());
    for (const Node* n : nodes) {
      std::unordered_set<const Node*> anc;
      ancestors(n, anc);
      for (const Node* a : anc)
        if (set.count(a))
          return badInput("parallel group #{}: {} depends on {}", id, n->describe(), a->describe());
    }
  }
  // Re-infer every node on a copy and compare result types.
  auto copy = g.clone();
  std::vector<Node*> orig = g.nodes(), cn = copy->nodes();
  for (size_t k = 0; k < cn.size(); ++k) {
    // A node whose shape operands are not constants yet (textual IR before folding) keeps the
    // types it was given: they cannot be re-derived.
    if (const OpSchema* s = cn[k]->schema()) {
      bool pending = false;
      for (int op : s->shapeOperands) {
        const Value* v = cn[k]->input(op);
        pending |= v && !(v->isConstant() && v->constant().hasData());
      }
      if (pending) continue;
    }
    std::vector<DataDim> dataDims;
    MG_RETURN_IF_ERROR(inferNode(*cn[k], &dataDims));
    // A data-dependent extent must be a data symbol this node produces (else the package would
    // run it at its bound as if it were exact).
    if (!dataDims.empty()) {
      const std::vector<DataSymbolDim> produced = producedDataSymbols(g, *orig[k]);
      for (const DataDim& d : dataDims) {
        bool found = false;
        for (const DataSymbolDim& p : produced) found |= p.output == d.output && p.dim == d.dim;
        if (!found)
          return badInput("{}: result '{}' dim {} is data-dependent (known only at run time) but "
                          "is not a data symbol the node produces (declare `symbol NAME [0, {}] "
                          "data` and give the dim as NAME)",
                          orig[k]->describe(), orig[k]->output(d.output)->name(), d.dim,
                          orig[k]->output(d.output)->dims()[d.dim]);
      }
    }
    for (size_t i = 0; i < cn[k]->numOutputs(); ++i)
      if (cn[k]->output(i)->type() != orig[k]->output(i)->type())
        return badInput("{}: result '{}' is typed {} but shape inference gives {}",
                        orig[k]->describe(), orig[k]->output(i)->name(),
                        orig[k]->output(i)->type().str(), cn[k]->output(i)->type().str());
  }
  return Status::success();
}

}  // namespace magneto
