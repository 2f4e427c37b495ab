#include "magneto/ir/graph.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"

namespace magneto {

[[noreturn]] void internalError(const char* file, int line, const std::string& what) {
  std::fprintf(stderr,
               "magnetoc: internal error at %s:%d: %s\n"
               "This is a bug in Magneto, not in your model. Please report it with the model and "
               "the command line (add --print-ir-after-all to see the IR).\n",
               file, line, what.c_str());
  std::exit(static_cast<int>(ErrorCode::kInternal));
}

std::string Node::describe() const {
  return fmt::format("node '{}' ({})", name_.empty() ? std::string("<unnamed>") : name_, kind_);
}

void Node::setInput(size_t i, Value* v) {
  MG_CHECK(i < inputs_.size(), "operand {} of {}", i, describe());
  Value* old = inputs_[i];
  if (old == v) return;
  if (old) {
    auto& u = old->uses_;
    u.erase(std::find(u.begin(), u.end(), Use{this, static_cast<int>(i)}));
  }
  inputs_[i] = v;
  if (v) v->uses_.push_back({this, static_cast<int>(i)});
}

void Node::addInput(Value* v) {
  inputs_.push_back(nullptr);
  setInput(inputs_.size() - 1, v);
}

void Node::truncateInputs(size_t n) {
  while (inputs_.size() > n) {
    setInput(inputs_.size() - 1, nullptr);
    inputs_.pop_back();
  }
}

Value* Graph::newValue(const std::string& name, TensorType type) {
  auto v = std::make_unique<Value>();
  v->name_ = uniqueName(name.empty() ? "v" : name);
  v->type_ = std::move(type);
  v->id_ = nextValueId_++;
  Value* raw = v.get();
  byName_[raw->name_] = raw;
  values_.push_back(std::move(v));
  return raw;
}

std::string Graph::uniqueName(const std::string& base) {
  if (!byName_.count(base)) return base;
  for (;;) {
    std::string candidate = base + "_" + std::to_string(++nextUnique_);
    if (!byName_.count(candidate)) return candidate;
  }
}

Value* Graph::addInput(const std::string& name, TensorType type) {
  Value* v = newValue(name, std::move(type));
  v->isInput_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::addConstant(const std::string& name, Tensor value) {
  Value* v = newValue(name, value.type());
  v->constant_ = std::move(value);
  return v;
}

Node* Graph::createNode(const std::string& kind, const std::vector<Value*>& inputs,
                        const std::vector<TensorType>& resultTypes, AttrMap attrs,
                        const std::string& name, Node* before,
                        const std::vector<std::string>& resultNames) {
  auto n = std::make_unique<Node>();
  Node* raw = n.get();
  raw->kind_ = kind;
  raw->schema_ = OpRegistry::instance().find(kind);
  raw->name_ = name;
  raw->attrs_ = std::move(attrs);
  raw->graph_ = this;
  auto pos = before ? before->self_ : nodes_.end();
  raw->self_ = nodes_.insert(pos, std::move(n));
  for (Value* v : inputs) raw->addInput(v);
  for (size_t i = 0; i < resultTypes.size(); ++i) {
    std::string base = i < resultNames.size() && !resultNames[i].empty()
                           ? resultNames[i]
                           : (name.empty() ? kind : name) + (resultTypes.size() > 1
                                                                ? "_" + std::to_string(i)
                                                                : std::string());
    Value* v = newValue(base, resultTypes[i]);
    v->producer_ = raw;
    v->producerIndex_ = static_cast<int>(i);
    raw->outputs_.push_back(v);
  }
  return raw;
}

void Graph::addOutput(Value* v) {
  outputs_.push_back(v);
  v->isOutput_ = true;
}

void Graph::setOutputs(const std::vector<Value*>& outs) {
  for (Value* v : outputs_) v->isOutput_ = false;
  outputs_.clear();
  for (Value* v : outs) addOutput(v);
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v.get());
  return out;
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> out;
  for (const auto& v : values_)
    if (v->isConstant()) out.push_back(v.get());
  return out;
}

Value* Graph::findValue(const std::string& name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

void Graph::renameValue(Value* v, const std::string& name) {
  if (v->name_ == name) return;
  MG_CHECK(!findValue(name), "renaming '{}' to '{}', which another value holds", v->name_, name);
  byName_.erase(v->name_);
  v->name_ = name;
  byName_[name] = v;
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) u.node->setInput(u.operand, to);
  for (Value*& o : outputs_) {
    if (o == from) {
      o = to;
      to->isOutput_ = true;
      from->isOutput_ = false;
    }
  }
}

void Graph::eraseNode(Node* n) {
  for (Value* v : n->outputs_) {
    MG_CHECK(v->uses_.empty() && !v->isOutput_, "erasing {} whose result '{}' is still used",
             n->describe(), v->name());
  }
  n->truncateInputs(0);
  for (Value* v : n->outputs_) {
    v->producer_ = nullptr;
    byName_.erase(v->name_);
    // From the back: the results of a node erased right after it was made (folding on import)
    // are the newest values, and a scan from the front made importing quadratic.
    auto it = std::find_if(values_.rbegin(), values_.rend(),
                           [v](const std::unique_ptr<Value>& p) { return p.get() == v; });
    values_.erase(std::next(it).base());
  }
  nodes_.erase(n->self_);
}

Value* Graph::makeConstant(Value* v, Tensor t) {
  // A fresh constant value replaces v; v's producer keeps a now-unused result.
  std::string name = v->name();
  Value* c = addConstant(name + "_const", std::move(t));
  replaceAllUsesWith(v, c);
  return c;
}

void Graph::removeDeadValues(bool removeInputs) {
  std::vector<std::unique_ptr<Value>> kept;
  std::vector<Value*> keptInputs;
  for (auto& v : values_) {
    bool dead = v->uses_.empty() && !v->isOutput_ && v->producer_ == nullptr &&
                (v->isConstant() || (v->isInput_ && removeInputs));
    if (dead) {
      byName_.erase(v->name_);
      continue;
    }
    if (v->isInput_) keptInputs.push_back(v.get());
    kept.push_back(std::move(v));
  }
  values_ = std::move(kept);
  inputs_ = std::move(keptInputs);
}

void Graph::moveBefore(Node* n, Node* before) {
  auto holder = std::move(*n->self_);
  nodes_.erase(n->self_);
  auto pos = before ? before->self_ : nodes_.end();
  n->self_ = nodes_.insert(pos, std::move(holder));
}

bool Graph::topoSort() {
  // Kahn's algorithm, always taking the earliest ready node in current order: stable.
  std::vector<Node*> order = nodes();
  std::unordered_map<Node*, size_t> index;
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
  std::vector<int> pending(order.size(), 0);
  for (size_t i = 0; i < order.size(); ++i)
    for (Value* v : order[i]->inputs_)
      if (v && v->producer_) ++pending[i];
  // Data symbols order nodes no value edge joins (dataSymbolPredecessors, symbolic.h).
  std::vector<std::vector<size_t>> after(order.size());
  for (const auto& [n, preds] : dataSymbolPredecessors(*this))
    for (const Node* p : preds) {
      after[index.at(const_cast<Node*>(p))].push_back(index.at(const_cast<Node*>(n)));
      ++pending[index.at(const_cast<Node*>(n))];
    }
  std::set<size_t> ready;
  for (size_t i = 0; i < order.size(); ++i)
    if (pending[i] == 0) ready.insert(i);
  std::vector<Node*> sorted;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    sorted.push_back(order[i]);
    for (Value* v : order[i]->outputs_)
      for (const Use& u : v->uses_)
        if (--pending[index[u.node]] == 0) ready.insert(index[u.node]);
    for (size_t j : after[i])
      if (--pending[j] == 0) ready.insert(j);
  }
  if (sorted.size() != order.size()) return false;
  std::list<std::unique_ptr<Node>> rebuilt;
  std::unordered_map<Node*, std::unique_ptr<Node>> owned;
  for (auto& n : nodes_) owned[n.get()] = std::move(n);
  nodes_.clear();
  for (Node* n : sorted) {
    nodes_.push_back(std::move(owned[n]));
    n->self_ = std::prev(nodes_.end());
  }
  return true;
}

int Graph::addGroup(ParallelGroup g) {
  int id = groups_.empty() ? 0 : groups_.rbegin()->first + 1;
  groups_[id] = std::move(g);
  return id;
}

const DimSymbol* Graph::findSymbol(const std::string& name) const {
  for (const DimSymbol& s : symbols_)
    if (s.name == name) return &s;
  return nullptr;
}

DimBinding Graph::referenceBinding() const {
  DimBinding b;
  for (const DimSymbol& s : symbols_) b[s.name] = s.hi;
  return b;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  g->name_ = name_;
  g->groups_ = groups_;
  g->symbols_ = symbols_;
  std::unordered_map<const Value*, Value*> map;
  // Recreate values in creation order so names (and their uniquifying) match exactly.
  for (const auto& v : values_) {
    if (v->producer_) continue;
    Value* nv = v->isConstant() ? g->addConstant(v->name_, *v->constant_)
                                : g->newValue(v->name_, v->type_);
    nv->symDims_ = v->symDims_;
    map[v.get()] = nv;
  }
  for (Value* in : inputs_) {
    map[in]->isInput_ = true;
    g->inputs_.push_back(map[in]);
  }
  for (const auto& n : nodes_) {
    auto nn = std::make_unique<Node>();
    Node* raw = nn.get();
    raw->kind_ = n->kind_;
    raw->schema_ = n->schema_;
    raw->name_ = n->name_;
    raw->attrs_ = n->attrs_;
    raw->group_ = n->group_;
    raw->graph_ = g.get();
    raw->self_ = g->nodes_.insert(g->nodes_.end(), std::move(nn));
    for (Value* in : n->inputs_) raw->addInput(in ? map.at(in) : nullptr);
    for (Value* out : n->outputs_) {
      auto v = std::make_unique<Value>();
      v->name_ = out->name_;
      v->type_ = out->type_;
      v->symDims_ = out->symDims_;
      v->producer_ = raw;
      v->producerIndex_ = out->producerIndex_;
      v->id_ = g->nextValueId_++;
      g->byName_[v->name_] = v.get();
      map[out] = v.get();
      raw->outputs_.push_back(v.get());
      g->values_.push_back(std::move(v));
    }
  }
  for (Value* o : outputs_) g->addOutput(map.at(o));
  g->nextUnique_ = nextUnique_;
  return g;
}

}  // namespace magneto
