// TensorProto <-> Tensor: the one conversion used for initializers, Constant nodes, tensor
// attributes and the .pb files of ONNX's backend tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "magneto/ir/tensor.h"
#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// ONNX TensorProto.DataType -> DType; unsupported for string, complex and 8-bit float types.
Expected<DType> dtypeFromOnnx(int32_t onnxType);
// Name of an ONNX data type for messages ("FLOAT", "STRING", "99 (not an ONNX data type)").
std::string onnxDTypeName(int32_t onnxType);

// Converts `tp`, reading external data relative to `baseDir` (the model's folder; external files
// must stay inside it; empty for a model given as bytes, which cannot have external data). `what` names the tensor in errors ("initializer 'w'"); callers prefix the
// file name.
Expected<Tensor> tensorFromProto(const onnx::TensorProto& tp, const std::string& baseDir,
                                 const std::string& what);

// For a tensor with external data: checks that its location resolves inside `baseDir` (no
// absolute paths, no `..` or symlink escapes) to a file that exists, without reading it.
Status checkExternalLocation(const onnx::TensorProto& tp, const std::string& baseDir,
                             const std::string& what);

// Converts `t` (which must hold data) to a TensorProto with raw_data.
Status tensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* out);

}  // namespace frontend
}  // namespace magneto
