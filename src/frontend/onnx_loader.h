// Loading an ONNX model: parse, validate, resolve and upgrade the opset (see onnx_loader.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "magneto/frontend/onnx_import.h"
#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// Newest default-domain opset the importer accepts, and newest that libonnx's checker knows.
constexpr int64_t kMaxOpset = 23;
constexpr int64_t kMaxCheckedOpset = 17;
// Oldest opset imported as written; older models go through ONNX's version converter first.
constexpr int64_t kMinNativeOpset = 7;

struct LoadedModel {
  onnx::ModelProto model;
  std::string path;    // as the user wrote it: prefixes every error
  std::string dir;     // the model's folder: external data must stay inside it (empty: from
                       // memory, no external data)
  int64_t opset = 0;   // default-domain opset after any conversion
  int64_t sourceOpset = 0;  // the opset as written, when the version converter upgraded it
};

// Reads and validates `path`; fills `info` (may be null). `runChecker` false skips ONNX's checker
// (shapeDeterminingInputs only needs the graph's structure).
Expected<std::unique_ptr<LoadedModel>> loadOnnxModel(const std::string& path, ImportInfo* info,
                                                     bool runChecker = true);
// The same for a model given as bytes; `name` stands for the path in errors. Such a model has no
// folder, so external data is an error.
Expected<std::unique_ptr<LoadedModel>> loadOnnxModelFromMemory(const void* data, size_t size,
                                                               const std::string& name,
                                                               ImportInfo* info,
                                                               bool runChecker = true);

// How errors and the IR name an ONNX node: its name, or "<OpType>_<index>" when it has none.
std::string onnxNodeName(const onnx::NodeProto& n, int index);
// "node 'conv1' (Conv)", matching Node::describe().
std::string describeOnnxNode(const onnx::NodeProto& n, int index);

}  // namespace frontend
}  // namespace magneto
