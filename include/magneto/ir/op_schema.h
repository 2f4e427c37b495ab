// Ops as data: one OpSchema per op kind (ONNX's ops and Magneto's internal ones), declared in one
// place per op family under src/ops/. Passes ask about traits ("elementwise?") rather than names;
// shape inference, the verifier and the importer all read the same table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

enum OpTrait : uint32_t {
  kTraitNone = 0,
  kElementwise = 1u << 0,    // output[i] depends only on input[i] (after broadcasting)
  kUnary = 1u << 1,          // one tensor operand
  kBroadcasting = 1u << 2,   // numpy-style multidirectional broadcast of operands
  kCommutative = 1u << 3,
  kView = 1u << 4,           // output is input 0's bytes reinterpreted (Reshape, Flatten, ...)
  kShapeOnly = 1u << 5,      // output depends only on input shapes (Shape, Size)
  kNoFold = 1u << 6,         // never constant-fold (random ops)
  kHasEpilogue = 1u << 7,    // accepts fused mg_act/mg_residual epilogue attributes (Conv, Gemm, ...)
  kActivation = 1u << 8,     // a unary activation expressible as an epilogue
  kConcatLike = 1u << 9,     // joins operands along attribute "axis"
};

struct AttrSpec {
  std::string name;
  Attribute::Kind kind;
  bool required = false;
  // The value an absent optional float attribute means (filled for the activations from their
  // table, runtime/common/mg_acts.h); hasDefault is false where the schema does not say.
  bool hasDefault = false;
  double defaultValue = 0;
};

class InferContext;

// A result dim whose extent is computed at run time (docs/DYNAMIC_SHAPES.md, "Data-dependent
// extents"): the InferFn gave its bound. Dims of one node with the same `group` always have the
// same extent (Unique's Y, indices and counts) and share one data symbol.
struct DataDim {
  int output = 0;
  int dim = 0;
  int group = 0;
};

using InferFn = std::function<Status(InferContext&)>;

struct OpSchema {
  std::string name;
  int minInputs = 1;
  int maxInputs = 1;  // -1: variadic
  int minOutputs = 1;
  int maxOutputs = 1;  // -1: variadic
  std::vector<AttrSpec> attrs;
  uint32_t traits = kTraitNone;
  // Operands whose values (not only shapes) decide output shapes: they must be constant when the
  // node's shape is inferred (the importer folds or binds them first).
  std::vector<int> shapeOperands;
  // Operands whose values decide a data-dependent extent: constants give exact extents, others a
  // bound and a data symbol (docs/DYNAMIC_SHAPES.md, "Data-dependent extents"; the cpu target
  // only: `magnetoc check` binds them to its data set's values for the other targets).
  std::vector<int> dataOperands;
  InferFn infer;
  std::string doc;
  // Opset range of the ONNX op this schema implements (informational; importer upgrades first).
  int sinceVersion = 1;

  bool has(OpTrait t) const { return (traits & t) != 0; }
  const AttrSpec* attr(const std::string& n) const {
    for (const AttrSpec& a : attrs)
      if (a.name == n) return &a;
    return nullptr;
  }
};

class OpRegistry {
 public:
  static OpRegistry& instance();
  void add(OpSchema s);
  const OpSchema* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpSchema> schemas_;
};

// What an InferFn sees: the node's operand types and constant values, its attributes, and where
// to put result types. Errors name the node.
class InferContext {
 public:
  explicit InferContext(Node& n) : node_(n) {}
  // A probe (symbolic shape inference, magneto/ir/symbolic.h): operand types and constant values
  // are given instead of read from the graph, and results go to `outs`, not to the node.
  InferContext(Node& n, const std::vector<TensorType>* ins, const std::vector<const Tensor*>* consts,
               std::vector<TensorType>* outs)
      : node_(n), probeIn_(ins), probeConst_(consts), probeOut_(outs) {}
  Node& node() { return node_; }
  size_t numInputs() const { return node_.numInputs(); }
  size_t numOutputs() const { return node_.numOutputs(); }
  bool hasInput(size_t i) const { return node_.hasInput(i); }
  const TensorType& inputType(size_t i) const {
    return probeIn_ ? (*probeIn_)[i] : node_.input(i)->type();
  }
  const Dims& inputDims(size_t i) const { return inputType(i).dims; }
  DType inputDType(size_t i) const { return inputType(i).dtype; }
  // The operand's value when it is a constant, else null. An MgSymbolic operand (shape data of
  // dynamic dimensions) gives its elements at the reference binding (at the probe's binding in
  // a probe).
  const Tensor* constantInput(size_t i) const;
  // The operand's value as int64s; an error when absent or not constant.
  Expected<std::vector<int64_t>> constInts(size_t i, const char* what) const;
  const AttrMap& attrs() const { return node_.attrs(); }
  void setOutput(size_t i, TensorType t);
  // Says that result `output`'s dim `dim` (set by setOutput to its upper bound) is known only at
  // run time: the deciding operand is not a constant. The importer gives it a data symbol.
  void setDataDependent(int output, int dim, int group = 0) { dataDims_.push_back({output, dim, group}); }
  const std::vector<DataDim>& dataDims() const { return dataDims_; }
  Status error(const std::string& what) const { return badInput("{}", what); }

 private:
  Node& node_;
  const std::vector<TensorType>* probeIn_ = nullptr;
  const std::vector<const Tensor*>* probeConst_ = nullptr;
  std::vector<TensorType>* probeOut_ = nullptr;
  mutable std::map<size_t, Tensor> symbolicValues_;
  std::vector<DataDim> dataDims_;
};

// Infers result types of one node from its operands (context added to errors).
// `dataDims` (optional) receives the result dims whose extent is data-dependent (setDataDependent).
Status inferNode(Node& n, std::vector<DataDim>* dataDims = nullptr);
// The same for operands of the given types and constant values (null: not constant); the node and
// its results are not changed. What symbolic shape inference probes bindings with.
Status inferNodeAt(Node& n, const std::vector<TensorType>& ins,
                   const std::vector<const Tensor*>& consts, std::vector<TensorType>* outs,
                   std::vector<DataDim>* dataDims = nullptr);

// The elements of an MgSymbolic node's result at a binding (an int64/int32 tensor).
Expected<Tensor> symbolicValueAt(const Node& n, const DimBinding& b);

// Registers every op family; called once by OpRegistry::instance().
void registerAllOps(OpRegistry& r);

// Shape helpers shared by op families.
Expected<Dims> broadcastDims(const Dims& a, const Dims& b);
// Normalizes a possibly negative axis against rank; error when out of range.
Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank);

}  // namespace magneto
