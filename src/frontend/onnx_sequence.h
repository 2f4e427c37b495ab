// Sequence-typed values resolved at import into their tensors (see onnx_sequence.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "onnx_control_flow.h"

namespace magneto {
namespace frontend {

// A sequence whose length and elements are known at compile time: its tensors in order, and the
// element type (what SequenceEmpty declares, or the elements' type).
struct SeqValue {
  DType elem = DType::kF32;
  std::vector<Value*> items;
};

// What the sequence ops need from the importer (onnx_import.cpp implements it).
class SequenceHost : public BodyImporter {
 public:
  // The sequence `v` stands for, or null when v is a tensor.
  virtual const SeqValue* sequenceOf(const Value* v) const = 0;
  // A placeholder value standing for `s` (bound to ONNX names like any value; never read by an
  // IR node: the importer refuses a non-sequence op that reads one, naming the node).
  virtual Value* makeSequence(const std::string& base, SeqValue s) = 0;
  // Like addOp, for an op with `nresults` results.
  virtual Expected<std::vector<Value*>> addOpN(const std::string& kind,
                                               const std::vector<Value*>& inputs, AttrMap attrs,
                                               const std::string& name, int nresults) = 0;
  // The IR name of ONNX tensor `name` in the current scope.
  virtual std::string resultName(const std::string& name) = 0;
};

// SplitToSequence, ConcatFromSequence, SequenceConstruct, SequenceEmpty, SequenceInsert,
// SequenceErase, SequenceAt, SequenceLength, SequenceMap.
bool isSequenceOp(const std::string& opType);

// Imports sequence node `np` (IR name `name`, `desc` in errors, operands `inputs`, null where
// absent): returns the values of its outputs (a placeholder for a sequence result).
Expected<std::vector<Value*>> importSequenceOp(SequenceHost& host, const onnx::NodeProto& np,
                                               const std::string& name, const std::string& desc,
                                               const std::vector<Value*>& inputs);

}  // namespace frontend
}  // namespace magneto
