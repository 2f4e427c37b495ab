// Attribute conversion. The IR keeps ONNX's attribute names and the kinds INT, FLOAT, STRING,
// INTS, FLOATS, STRINGS and TENSOR; the others (GRAPH(S): If, Loop and Scan are specialised before
// their attributes are converted, onnx_control_flow.cpp; SPARSE_TENSOR(S),
// TENSORS, TYPE_PROTO(S)) have no consumer in Magneto's op set and are refused by name.
// Models from IR version 1 may leave `type` unset: the kind is then taken from the field present.
#include "onnx_attribute.h"

#include "tensor_proto.h"

namespace magneto {
namespace frontend {

namespace {

using AP = onnx::AttributeProto;

AP::AttributeType guessType(const AP& a) {
  if (a.has_f()) return AP::FLOAT;
  if (a.has_i()) return AP::INT;
  if (a.has_s()) return AP::STRING;
  if (a.has_t()) return AP::TENSOR;
  if (a.has_g()) return AP::GRAPH;
  if (a.floats_size()) return AP::FLOATS;
  if (a.ints_size()) return AP::INTS;
  if (a.strings_size()) return AP::STRINGS;
  if (a.tensors_size()) return AP::TENSORS;
  if (a.graphs_size()) return AP::GRAPHS;
  return AP::UNDEFINED;
}

}  // namespace

Expected<Attribute> convertAttribute(const AP& a, const std::string& baseDir,
                                     const std::string& node) {
  AP::AttributeType type = a.type() == AP::UNDEFINED ? guessType(a) : a.type();
  switch (type) {
    case AP::INT: return Attribute(static_cast<int64_t>(a.i()));
    case AP::FLOAT: return Attribute(static_cast<double>(a.f()));
    case AP::STRING: return Attribute(a.s());
    case AP::INTS: return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AP::FLOATS: return Attribute(std::vector<double>(a.floats().begin(), a.floats().end()));
    case AP::STRINGS:
      return Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case AP::TENSOR: {
      auto t = tensorFromProto(a.t(), baseDir, node + ": attribute '" + a.name() + "'");
      if (!t.ok()) return t.status();
      return Attribute(std::move(t).value());
    }
    case AP::GRAPH:
    case AP::GRAPHS:
      return unsupported("{}: subgraph attribute '{}': only If, Loop and Scan take subgraphs", node,
                         a.name());
    case AP::UNDEFINED:
      return badInput("{}: attribute '{}' has no type and no value", node, a.name());
    default:
      return unsupported("{}: attribute '{}' of type {} is not supported", node, a.name(),
                         AP::AttributeType_Name(type));
  }
}

Expected<Tensor> constantNodeValue(const onnx::NodeProto& n, const std::string& baseDir,
                                   const std::string& node) {
  if (n.attribute_size() != 1)
    return badInput("{}: a Constant needs exactly one value attribute, got {}", node,
                    n.attribute_size());
  const AP& a = n.attribute(0);
  const std::string& k = a.name();
  if (k == "value") {
    if (!a.has_t()) return badInput("{}: attribute 'value' must be a tensor", node);
    return tensorFromProto(a.t(), baseDir, node + ": attribute 'value'");
  }
  if (k == "value_float") return Tensor::fromVector<float>(DType::kF32, {}, {a.f()});
  if (k == "value_int") return Tensor::fromVector<int64_t>(DType::kI64, {}, {a.i()});
  if (k == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    return Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(v.size())}, v);
  }
  if (k == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    return Tensor::fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v);
  }
  if (k == "value_string" || k == "value_strings")
    return unsupported("{}: string constants are not supported", node);
  if (k == "sparse_value") return unsupported("{}: sparse constants are not supported", node);
  return badInput("{}: unknown Constant attribute '{}'", node, k);
}

}  // namespace frontend
}  // namespace magneto
