// Optional-typed values (ONNX's optional(tensor) and optional(seq(tensor))) resolved at import
// into what they hold.
//
// Magneto's IR has tensors only, and a sequence whose length is known is tracked as the list of
// its tensors (onnx_sequence.cpp). An optional is tracked the same way: as the value it holds, or
// as "empty". Whether it holds something is fixed at compile time, as a sequence's length is: an
// optional graph input is given as empty, a tensor or a sequence (ImportOptions::optionalInputs;
// `magnetoc check` reads it from the test data's OptionalProto), an If whose condition decides it
// has that condition bound (shapeDeterminingInputs), and a Loop that carries one unrolls. So:
//
//   Optional(x)                   -> an optional holding x                     (no node)
//   Optional() {type}             -> the empty optional of that type           (no node)
//   OptionalHasElement(o)         -> a bool scalar constant: whether o holds a value; true for a
//                                    tensor or a sequence (opset 18), false with no operand
//   OptionalGetElement(o)         -> the value o holds; a tensor or a sequence is itself (opset 18)
//   Identity(o)                   -> o
//   an optional graph output      -> what it holds: nothing, one output, or one per element
//
// Why that is legal: the optional ops compute no values, only presence, and presence is a
// compile-time fact here, so each is exactly the value it names or a constant.
//
// Refused with an error naming the node: OptionalGetElement of an empty optional (the spec makes
// it an error), an optional of an optional, map or sparse tensor, and (onnx_import.cpp) any other
// op reading an optional.
#include "onnx_optional.h"

namespace magneto {
namespace frontend {

namespace {

// Whether `tp` (an Optional's `type` attribute) is a tensor or a sequence of tensors.
bool supportedElement(const onnx::TypeProto& tp) {
  if (tp.has_tensor_type()) return true;
  if (!tp.has_sequence_type()) return false;
  const auto& st = tp.sequence_type();
  return !st.has_elem_type() || st.elem_type().has_tensor_type() ||
         st.elem_type().value_case() == onnx::TypeProto::VALUE_NOT_SET;
}

}  // namespace

bool isOptionalOp(const std::string& op) {
  return op == "Optional" || op == "OptionalHasElement" || op == "OptionalGetElement";
}

Expected<Value*> importOptionalOp(OptionalHost& h, const onnx::NodeProto& np,
                                  const std::string& desc, const std::vector<Value*>& in) {
  const std::string& op = np.op_type();
  if (np.output_size() != 1 || np.output(0).empty())
    return badInput("{}: {} has one named result, the node names {}", desc, op, np.output_size());
  if (in.size() > 1) return badInput("{}: takes at most one operand, got {}", desc, in.size());
  Value* x = in.empty() ? nullptr : in[0];
  const OptValue* opt = x ? h.optionalOf(x) : nullptr;

  if (op == "Optional") {
    if (x) {
      if (opt) return unsupported("{}: an optional of an optional is not supported", desc);
      return h.makeOptional(h.resultName(np.output(0)), OptValue{x});
    }
    const onnx::TypeProto* type = nullptr;
    for (const auto& a : np.attribute())
      if (a.name() == "type" && a.has_tp()) type = &a.tp();
    if (!type)
      return badInput("{}: an Optional without an operand needs its 'type' attribute (the type "
                      "of the empty optional)",
                      desc);
    if (!supportedElement(*type))
      return unsupported("{}: an empty optional of a map or sparse tensor is not supported (only "
                         "tensors and sequences of tensors)",
                         desc);
    return h.makeOptional(h.resultName(np.output(0)), OptValue{nullptr});
  }

  if (op == "OptionalHasElement") {
    // Opset 15 requires an optional operand; opset 18 also takes a tensor or a sequence (true)
    // or none at all (false).
    const bool has = x && (!opt || opt->content);
    return h.addConstant(h.resultName(np.output(0)),
                         Tensor::fromVector<uint8_t>(DType::kBool, {}, {has ? uint8_t{1} : uint8_t{0}}));
  }

  // OptionalGetElement
  if (!x) return badInput("{}: the operand is required", desc);
  if (!opt) return x;  // opset 18: a tensor or a sequence is its own element
  if (!opt->content)
    return badInput("{}: the optional '{}' is empty, and OptionalGetElement of an empty optional "
                    "is an error (ONNX)",
                    desc, np.input(0));
  return opt->content;
}

}  // namespace frontend
}  // namespace magneto
