// Textual IR: print and parse. One op per line; print(parse(print(g))) == print(g).
//
//   graph @main {
//     input %x : f32[1,3,8,8]
//     const %w : f32[4,3,3,3] = random<7>          # seeded uniform [-1,1): for tests
//     const %shape : i64[2] = dense<[1, -1]>       # small constants inline
//     const %big : f32[64,3,7,7] = blob<0x51a2...> # large ones by FNV-1a checksum only
//     %y : f32[1,4,6,6] = Conv(%x, %w, _) {pads = [1, 1, 1, 1]} loc("conv1")
//     %a : f32[1,2,6,6], %b : f32[1,2,6,6] = Split(%y) {axis = 1}
//     parallel #0 "joint" "why it was chosen" {
//       ...members, one per line...
//     }
//     output %y, %a
//   }
//
// Result types may be omitted when parsing ("%y = Relu(%x)"): the parser infers them. `_` is an
// absent optional operand. Names that are not [A-Za-z0-9_.]+ are quoted: %"onnx::Conv_3".
#pragma once

#include <memory>
#include <string>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

struct PrintOptions {
  int64_t inlineConstantLimit = 16;  // constants with at most this many elements print dense
};

std::string printGraph(const Graph& g, const PrintOptions& opts = {});
std::string printNode(const Node& n);

// Parses textual IR; `source` names the input in errors ("file.mlir:12:5: ...").
Expected<std::unique_ptr<Graph>> parseGraph(const std::string& text,
                                            const std::string& source = "<input>");

// The data a random<seed> constant holds: uniform in [-1, 1) for floats, [-4, 4] for integers,
// from a fixed generator so that every platform gets the same values.
Tensor randomTensor(const TensorType& type, uint64_t seed);

}  // namespace magneto
