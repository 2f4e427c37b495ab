// Optional-typed values resolved at import into what they hold (see onnx_optional.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "onnx_sequence.h"

namespace magneto {
namespace frontend {

// An optional whose presence is known at compile time: the value it holds (a tensor, or a
// sequence's placeholder), or null when it is empty.
struct OptValue {
  Value* content = nullptr;
};

// What the optional ops need from the importer (onnx_import.cpp implements it).
class OptionalHost : public SequenceHost {
 public:
  // The optional `v` stands for, or null when v is a tensor or a sequence.
  virtual const OptValue* optionalOf(const Value* v) const = 0;
  // A placeholder value standing for `o` (never read by an IR node, as a sequence's).
  virtual Value* makeOptional(const std::string& base, OptValue o) = 0;
};

// Optional, OptionalHasElement, OptionalGetElement.
bool isOptionalOp(const std::string& opType);

// Imports optional node `np` (`desc` in errors, operands `inputs`, null where absent): returns the
// value of its one output (a placeholder for an optional result).
Expected<Value*> importOptionalOp(OptionalHost& host, const onnx::NodeProto& np,
                                  const std::string& desc, const std::vector<Value*>& inputs);

}  // namespace frontend
}  // namespace magneto
