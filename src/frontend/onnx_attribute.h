// ONNX AttributeProto -> ir Attribute, and the value of a Constant node (see onnx_attribute.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "magneto/ir/attribute.h"
#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// Converts one attribute of the node described by `node` ("node 'c1' (Conv)"); `baseDir` resolves
// external data of TENSOR attributes. Errors name the node and the attribute.
Expected<Attribute> convertAttribute(const onnx::AttributeProto& a, const std::string& baseDir,
                                     const std::string& node);

// The tensor a Constant node holds (value, value_float(s), value_int(s)).
Expected<Tensor> constantNodeValue(const onnx::NodeProto& n, const std::string& baseDir,
                                   const std::string& node);

}  // namespace frontend
}  // namespace magneto
