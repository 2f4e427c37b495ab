// Rewriting older ONNX op forms into the IR's canonical forms (see onnx_normalize.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {
namespace frontend {

// A node as read from ONNX, before it enters the graph. Operands are typed values (the importer
// builds in topological order), null where absent.
struct NodeDraft {
  std::string kind;
  std::string name;
  std::vector<Value*> inputs;
  AttrMap attrs;
  // Names constants that normalization adds; the importer passes one that avoids every tensor name
  // of the model. Graph::uniqueName when unset.
  std::function<std::string(const std::string&)> freshName;
  // The opset the file was written in, when ONNX's version converter upgraded it (else 0): a few
  // semantic changes the converter leaves alone depend on it (PRelu's channel-wise slope).
  int64_t sourceOpset = 0;

  std::string describe() const { return "node '" + name + "' (" + kind + ")"; }
};

// Rewrites `n` in place for default-domain opset `opset` (>= 7): attributes that later opsets
// made operands become constant operands added to `g`; Upsample and Resize-10 become Resize-11;
// legacy attributes are dropped or made explicit. Errors name the node.
Status normalizeNode(Graph& g, int64_t opset, NodeDraft& n);

// The ONNX operand positions of `opType` (as written at `opset`) whose values decide output shapes:
// the registered schema's shapeOperands mapped back through normalizeNode's rewrites; for If and
// Loop, the operands that decide their control (specialised on import, onnx_control_flow.cpp).
// With `withData`, also the schema's dataOperands (those of a data-dependent extent, which only the
// cpu target compiles at run time).
std::vector<int> onnxShapeOperands(const std::string& opType, int64_t opset, bool withData = false);

// IEEE half / bfloat16 bits <-> float.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

}  // namespace frontend
}  // namespace magneto
