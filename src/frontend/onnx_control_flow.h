// Specialising If, Loop and Scan at import when their control is known at compile time
// (see onnx_control_flow.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// The most iterations one Loop or Scan is unrolled to, and the most body nodes all unrolling of
// one model may import (nested loops multiply): past either, the node is refused, so that a huge
// trip count cannot make the compiler build an unbounded graph.
constexpr int64_t kMaxUnrolledIterations = 1024;
constexpr int64_t kMaxUnrolledNodes = 100000;

// What specialisation needs from the importer (onnx_import.cpp implements it).
class BodyImporter {
 public:
  virtual ~BodyImporter() = default;
  // Imports `body` once: its formal inputs are bound to `inputs` (as many, checked by the caller),
  // its initializers and nodes are added under IR names starting with `prefix`, and names it does
  // not define resolve in the enclosing scopes. Returns its outputs' values in order. Errors name
  // the body's node at fault; the caller adds which node and iteration the body belongs to.
  virtual Expected<std::vector<Value*>> importBody(const onnx::GraphProto& body,
                                                   const std::vector<Value*>& inputs,
                                                   const std::string& prefix) = 0;
  // Adds one node of an IR op in its canonical form, inferred and, when its operands are
  // constant, folded; returns its (only) result.
  virtual Expected<Value*> addOp(const std::string& kind, const std::vector<Value*>& inputs,
                                 AttrMap attrs, const std::string& name) = 0;
  virtual Value* addConstant(const std::string& base, Tensor t) = 0;
  // The default-domain opset of the model.
  virtual int64_t opset() const = 0;
  // Records what the importer decided (ImportInfo::notes).
  virtual void note(const std::string& text) = 0;
  // Whether `v` stands for a sequence or an optional (the compile-time placeholders of
  // onnx_sequence.cpp and onnx_optional.cpp), not a tensor.
  virtual bool isPlaceholder(const Value* v) const = 0;
};

// If, Loop and Scan: the ops specialiseControlFlow handles.
bool isControlFlowOp(const std::string& opType);

// Replaces node `np` (IR name `name`, described as `desc` in errors, operands `inputs`, null where
// absent) by the nodes of its taken branch or of its unrolled body; returns the values of its
// outputs in order (null for an unnamed output nobody reads). Errors start with `desc`.
Expected<std::vector<Value*>> specialiseControlFlow(BodyImporter& imp, const onnx::NodeProto& np,
                                                    const std::string& name,
                                                    const std::string& desc,
                                                    const std::vector<Value*>& inputs);

}  // namespace frontend
}  // namespace magneto
