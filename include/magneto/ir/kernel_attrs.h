// The kernel ABI's attribute text for a node: what runtime/cpu/mg_runtime.h's class Attrs parses
// ("group=i:1;strides=i:2,2;mg_act=s:Relu"). One encoder, used by the reference interpreter and by
// the code generators, so kernels get the same attributes whether a graph is interpreted or
// compiled into a package. It sits in the ir layer because it reads only a node's attributes.
#pragma once

#include <string>

#include "magneto/ir/graph.h"

namespace magneto {

// Attributes sorted by name (AttrMap order), `name=KIND:values` joined by ';'. Kinds: i (ints,
// comma-separated), f (floats, %.9g), s (string), S (strings, '|'-separated). Tensor attributes are
// left out: they are folded into constant operands before any kernel runs.
std::string encodeAttrs(const Node& n);

}  // namespace magneto
