// The graph IR: SSA values with use lists, nodes in topological order, owned by the Graph.
//
//   Value  - a tensor: produced by one node (or a graph input, or a constant), typed statically.
//   Node   - one op: kind (the op name, ONNX's where the op is ONNX's), operands, results,
//            attributes, the ONNX node name it came from, and its parallel group (-1 for none).
//   Graph  - owns both; keeps nodes in a list whose order is always a valid schedule.
//
// Everything that feeds generated output iterates in a deterministic order: the node list, the
// value list (creation order), AttrMap (sorted).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "magneto/ir/attribute.h"
#include "magneto/ir/dim_expr.h"
#include "magneto/ir/tensor.h"

namespace magneto {

class Node;
class Graph;
struct OpSchema;

struct Use {
  Node* node;
  int operand;
  bool operator==(const Use& o) const { return node == o.node && operand == o.operand; }
};

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  DType dtype() const { return type_.dtype; }
  const Dims& dims() const { return type_.dims; }
  int rank() const { return type_.rank(); }

  Node* producer() const { return producer_; }
  int producerIndex() const { return producerIndex_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }

  bool isConstant() const { return constant_.has_value(); }
  const Tensor& constant() const { return *constant_; }
  bool isGraphInput() const { return isInput_; }
  bool isGraphOutput() const { return isOutput_; }
  int id() const { return id_; }

  // Symbolic shape (dynamic dimensions): one expression per dim, or empty when the value's shape
  // is static. dims() stays the shape at the reference binding (every symbol at its maximum).
  const std::vector<DimExpr>& symDims() const { return symDims_; }
  bool isSymbolic() const { return !symDims_.empty(); }
  void setSymDims(std::vector<DimExpr> d) { symDims_ = std::move(d); }
  // Dim i as an expression (a constant for a static dim).
  DimExpr dimExpr(int i) const { return symDims_.empty() ? DimExpr(type_.dims[i]) : symDims_[i]; }

 private:
  friend class Graph;
  friend class Node;
  std::string name_;
  TensorType type_;
  std::vector<DimExpr> symDims_;
  Node* producer_ = nullptr;
  int producerIndex_ = -1;
  std::vector<Use> uses_;
  std::optional<Tensor> constant_;
  bool isInput_ = false;
  bool isOutput_ = false;
  int id_ = 0;
};

class Node {
 public:
  const std::string& kind() const { return kind_; }
  // The op's schema (magneto/ir/op_schema.h), looked up once when the node is created; null for
  // an op the registry does not know (the importer reports those by name).
  const OpSchema* schema() const { return schema_; }
  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  // "node 'conv1' (Conv)": how errors name a node.
  std::string describe() const;

  size_t numInputs() const { return inputs_.size(); }
  size_t numOutputs() const { return outputs_.size(); }
  // nullptr for an absent optional operand.
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return outputs_[i]; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  bool hasInput(size_t i) const { return input(i) != nullptr; }

  void setInput(size_t i, Value* v);
  void addInput(Value* v);
  void truncateInputs(size_t n);  // drops operands from n on

  AttrMap& attrs() { return attrs_; }
  const AttrMap& attrs() const { return attrs_; }

  int group() const { return group_; }
  void setGroup(int g) { group_ = g; }
  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  std::string kind_;
  const OpSchema* schema_ = nullptr;
  std::string name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttrMap attrs_;
  int group_ = -1;
  Graph* graph_ = nullptr;
  std::list<std::unique_ptr<Node>>::iterator self_;
};

// A set of sibling nodes chosen by the parallel co-optimization, printed as a region.
struct ParallelGroup {
  std::string strategy;  // "wide", "batch", "joint", "streams", "none"
  std::string reason;
  // What the parallel passes record for `magnetoc report` (not printed in the textual IR):
  std::vector<std::string> members;  // ONNX node names of the original sibling ops
  int kernelsBefore = 0;             // launches the members took before the decision
  int kernelsAfter = 0;              // launches after it
  double modeledUsBefore = 0;        // cost model, device of the PassContext
  double modeledUsAfter = 0;
  // A decision recorded for the report only that changed nothing (wide-merge's declined merges):
  // it claims no members, so a later pass may still group them.
  bool advisory = false;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Deep copy (constants share their immutable data).
  std::unique_ptr<Graph> clone() const;

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  Value* addInput(const std::string& name, TensorType type);
  Value* addConstant(const std::string& name, Tensor value);
  // Creates a node after `before` (or at the end when before is null) with fresh result values.
  // Result names are made unique from `resultNames` (or from the node name when empty).
  Node* createNode(const std::string& kind, const std::vector<Value*>& inputs,
                   const std::vector<TensorType>& resultTypes, AttrMap attrs = {},
                   const std::string& name = "", Node* before = nullptr,
                   const std::vector<std::string>& resultNames = {});
  void addOutput(Value* v);
  void setOutputs(const std::vector<Value*>& outs);

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Nodes in schedule order (a snapshot: safe to mutate the graph while iterating it).
  std::vector<Node*> nodes() const;
  size_t numNodes() const { return nodes_.size(); }
  // All values in creation order (inputs, constants, node results).
  std::vector<Value*> values() const;
  std::vector<Value*> constants() const;

  Value* findValue(const std::string& name) const;
  // Gives v the name `name`, which no other value may hold (a rewrite that replaces a node keeps
  // its result's name: graph outputs are the generated library's port names).
  void renameValue(Value* v, const std::string& name);
  std::string uniqueName(const std::string& base);

  // Rewrites every use of `from` (and graph outputs) to `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  // Removes a node; its results must be unused and not graph outputs.
  void eraseNode(Node* n);
  // Turns a value into a constant (constant folding): detaches it from its producer.
  Value* makeConstant(Value* v, Tensor t);
  // Removes constants and inputs nobody uses (inputs only when removeInputs).
  void removeDeadValues(bool removeInputs = false);
  // Moves n to just before `before` (caller keeps the order topological).
  void moveBefore(Node* n, Node* before);
  // Re-sorts nodes topologically, keeping the current relative order where legal (stable).
  // Returns false when the graph has a cycle.
  bool topoSort();

  std::map<int, ParallelGroup>& groups() { return groups_; }
  const std::map<int, ParallelGroup>& groups() const { return groups_; }
  int addGroup(ParallelGroup g);

  // Dynamic dimensions: the symbols the graph's shapes may mention (empty: a static graph).
  std::vector<DimSymbol>& symbols() { return symbols_; }
  const std::vector<DimSymbol>& symbols() const { return symbols_; }
  const DimSymbol* findSymbol(const std::string& name) const;
  // Every symbol at its maximum: the binding the static dims of every value describe.
  DimBinding referenceBinding() const;

 private:
  Value* newValue(const std::string& name, TensorType type);
  std::string name_ = "main";
  std::list<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, Value*> byName_;
  std::map<int, ParallelGroup> groups_;
  std::vector<DimSymbol> symbols_;
  int nextValueId_ = 0;
  int nextUnique_ = 0;
};

}  // namespace magneto
