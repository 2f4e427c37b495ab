// Reading and writing one protobuf message (ModelProto, TensorProto) as a whole file.
//
// Why a helper: every frontend entry point must turn a missing, empty, oversized, truncated or
// non-protobuf file into an error that names the file, never an exception or a crash.
#pragma once

#include <google/protobuf/message_lite.h>

#include <string>

#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// Parses `path` into `msg`. `what` names the expected content in errors ("ONNX model",
// "TensorProto"), as in "model.onnx: not a valid ONNX model (protobuf parse failed)".
Status readProtoFile(const std::string& path, google::protobuf::MessageLite& msg,
                     const char* what);

// Parses `size` bytes at `data` into `msg`; `source` names the bytes in errors as a path would.
Status parseProtoBytes(const void* data, size_t size, const std::string& source,
                       google::protobuf::MessageLite& msg, const char* what);

// Serializes `msg` to `path`, replacing the file.
Status writeProtoFile(const std::string& path, const google::protobuf::MessageLite& msg);

}  // namespace frontend
}  // namespace magneto
