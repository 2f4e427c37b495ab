// ONNX frontend: ModelProto -> ir::Graph with static shapes.
//
// Steps: read the file (errors for missing, empty, truncated or non-ONNX files), run ONNX's checker
// where libonnx knows the opset, upgrade opsets older than 7..17 with ONNX's version converter,
// load initializers (raw and typed data, external data confined to the model's folder), turn
// Constant nodes into constants, fix dynamic dimensions from --shape, then build nodes in
// topological order, inferring each node's shape (our op table) and folding nodes whose operands
// are constant as it goes, so that shape operands computed in the graph (Shape -> Gather -> Concat
// -> Reshape) are known when Reshape's shape is inferred.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "magneto/ir/dim_expr.h"
#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

// What an optional-typed graph input (ONNX's optional(tensor) or optional(seq(tensor))) holds in
// one compile: fixed at compile time, as a sequence's length is.
struct OptionalInput {
  enum class Kind { kEmpty, kTensor, kSequence };
  Kind kind = Kind::kEmpty;
  std::vector<TensorType> types;  // kTensor: the tensor's type; kSequence: the elements', in order
};

struct ImportOptions {
  // Fixes input shapes: name -> dims (from --shape NAME=1x3x224x224). Required for every input
  // with a symbolic or unknown dimension.
  std::map<std::string, Dims> shapes;
  // Dynamic dimensions (--dynamic NAME=LO..HI, --opt NAME=V,...): an input dim whose dim_param
  // is one of these names becomes that symbol; its static dim is the symbol's maximum
  // (docs/DYNAMIC_SHAPES.md). A name no input has is an error.
  std::vector<DimSymbol> dynamic;
  // Binds graph inputs to constant values (shape operands such as a Reshape target fed as an
  // input in ONNX's backend tests). A bound input stops being a graph input.
  std::map<std::string, Tensor> bindings;
  // Sequence-typed graph inputs: name -> the types of its elements, in order. Such an input
  // becomes one graph input per element, named NAME[K] (a sequence's length is fixed at compile
  // time like a shape; `magnetoc check` takes it from the test data). A sequence graph output
  // becomes one output per element the same way. A sequence input not given here is an error.
  std::map<std::string, std::vector<TensorType>> sequenceInputs;
  // Optional-typed graph inputs: name -> what it holds. Empty: no graph input; a tensor: one graph
  // input NAME; a sequence: NAME[K] as in sequenceInputs. An optional input not given here holds
  // a tensor of its declared type when that type is fully static, else it is an error. An
  // optional graph output becomes what it holds: no output, one output, or one per element.
  std::map<std::string, OptionalInput> optionalInputs;
  // Fold constant subgraphs during import (needed for shape operands; on by default).
  bool foldOnImport = true;
  // Bytes that folding on import may create in all; 0: FoldBudget::forGraph's (up to 256 MiB of
  // constants, or twice the initializers' bytes; interp/fold_node.h). The fuzzer sets a small
  // one, so that its time goes to the importer's logic and not to folding big tensors.
  int64_t foldBudgetBytes = 0;
};

struct ImportInfo {
  int64_t opsetVersion = 0;    // default domain, as written in the file
  int64_t irVersion = 0;
  bool versionConverted = false;  // upgraded by ONNX's version converter
  bool checkerRan = false;        // false when the opset is newer than libonnx knows
  std::string producer;           // producer_name + version
  std::vector<std::string> notes; // what the importer decided (bindings, conversions)
};

// Imports `path`. Errors name the file and, where one is at fault, the ONNX node (name and op).
Expected<std::unique_ptr<Graph>> importOnnx(const std::string& path, const ImportOptions& opts,
                                            ImportInfo* info = nullptr);

// Imports a model given as bytes (a serialized ModelProto); `name` stands for the file name in
// errors. Without a folder, external data is an error. This is the entry point of the fuzzer
// (tests/fuzz/fuzz_onnx_import.cpp): it touches no file.
Expected<std::unique_ptr<Graph>> importOnnxFromMemory(const void* data, size_t size,
                                                      const std::string& name,
                                                      const ImportOptions& opts,
                                                      ImportInfo* info = nullptr);

// A graph input of an ONNX file that is not an initializer, as declared in the file (no import).
struct OnnxModelInput {
  std::string name;
  bool staticShape = false;  // every dimension has a non-negative value
  bool sequence = false;     // a sequence of tensors (ImportOptions::sequenceInputs)
  bool optional = false;     // an optional (ImportOptions::optionalInputs)
};
// The model's graph inputs that are not initializers, in file order. Used by `magnetoc check` to
// match test data (input_K.pb) to inputs. An input or output that is not a tensor, a sequence or
// an optional (a map, a sparse tensor) is an error: its test data is not a TensorProto,
// SequenceProto or OptionalProto.
Expected<std::vector<OnnxModelInput>> onnxModelInputs(const std::string& path);
// For each graph output in file order, whether it is a sequence (its test data a SequenceProto;
// the package has one output per element, NAME[K]).
Expected<std::vector<bool>> onnxModelSequenceOutputs(const std::string& path);
// For each graph output in file order, whether it is an optional (its test data an OptionalProto;
// the package has the outputs of what it holds in its place: none, NAME, or NAME[K]).
Expected<std::vector<bool>> onnxModelOptionalOutputs(const std::string& path);
// The model's graph output names, in file order (no import). Used by `magnetoc check --atol NAME=A`.
Expected<std::vector<std::string>> onnxModelOutputNames(const std::string& path);

// Names of the graph inputs whose values (not only shapes) decide output shapes: those must be
// bound (ImportOptions::bindings) to compile. Used by `magnetoc check` to bind them from test data.
// `withData`: also those deciding a data-dependent extent (docs/DYNAMIC_SHAPES.md), which the cpu
// target computes at run time and the GPU targets need bound, except those of the ops in
// `runTimeDataOps` (the GPU targets compute NonZero's and Compress's extents at run time).
Expected<std::vector<std::string>> shapeDeterminingInputs(
    const std::string& path, bool withData = false,
    const std::vector<std::string>& runTimeDataOps = {});

// TensorProto files (.pb), the format of ONNX's backend tests and model zoo test data.
Expected<Tensor> readTensorProtoFile(const std::string& path, std::string* name = nullptr);
Status writeTensorProtoFile(const std::string& path, const Tensor& t, const std::string& name);
// SequenceProto files of tensors (ONNX's test data of sequence inputs and outputs): the elements.
Expected<std::vector<Tensor>> readSequenceProtoFile(const std::string& path,
                                                    std::string* name = nullptr);
// OptionalProto files (ONNX's test data of optional inputs and outputs): what the optional holds
// (kind kEmpty: nothing; kTensor: one tensor; kSequence: the elements). Optionals of maps, sparse
// tensors or optionals are refused.
struct OptionalData {
  OptionalInput::Kind kind = OptionalInput::Kind::kEmpty;
  std::vector<Tensor> values;
};
Expected<OptionalData> readOptionalProtoFile(const std::string& path, std::string* name = nullptr);
// The graph input or output name of element K of sequence NAME: "NAME[K]".
std::string sequenceElementName(const std::string& name, size_t k);

// Parses "1x3x224x224" (also "1,3,224,224"); an error names the text.
Expected<Dims> parseDims(const std::string& text);

}  // namespace magneto
