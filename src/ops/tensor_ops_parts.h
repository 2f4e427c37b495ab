// Internal to the tensor op family (src/ops/tensor_ops*.cpp): the parts registerTensorOps calls,
// and helpers the parts share.
#pragma once

#include <optional>
#include <vector>

#include "magneto/ir/op_schema.h"

namespace magneto {
namespace tensor_ops {

void registerIndexOps(OpRegistry& r);     // tensor_ops_index.cpp: Gather*, Scatter*, OneHot, ...
void registerComputeOps(OpRegistry& r);   // tensor_ops_compute.cpp: Resize, Einsum, Range, ...

// A list that ONNX moved from an attribute to operand `operand` (Squeeze axes, Split split,
// Reduce axes): the constant operand when present, else the attribute, else nullopt.
Expected<std::optional<std::vector<int64_t>>> listAttrOrOperand(const InferContext& c,
                                                                const char* attr, size_t operand,
                                                                const char* what);

// Schema with the common fields filled; callers add attrs, traits and shape operands.
OpSchema makeSchema(const char* name, int minIn, int maxIn, int minOut, int maxOut, InferFn infer,
                    const char* doc);

}  // namespace tensor_ops
}  // namespace magneto
