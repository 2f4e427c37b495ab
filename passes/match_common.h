// Small predicates the pattern-matching passes (fuse-layernorm, fuse-attention, fuse-qdq) share
// when they walk a chain of single-use values. Internal to passes/; not an installed header.
#pragma once

#include <optional>

#include "magneto/ir/graph.h"

namespace magneto {
namespace match {

// The node producing v when it is of kind `kind` with one result, else null.
inline Node* producerOf(const Value* v, const char* kind) {
  Node* p = v ? v->producer() : nullptr;
  return p && p->kind() == kind && p->numOutputs() == 1 ? p : nullptr;
}

// The only reader of v, when v has exactly one use and is no graph output; else null.
inline Node* soleUser(const Value* v) {
  if (v->isGraphOutput() || v->uses().size() != 1) return nullptr;
  return v->uses()[0].node;
}

// The value of a one-element float or integer constant with its data.
inline std::optional<double> scalarConstant(const Value* v) {
  if (!v || !v->isConstant() || !v->constant().hasData() || v->type().numel() != 1) return std::nullopt;
  if (!isFloat(v->dtype()) && !isInteger(v->dtype())) return std::nullopt;
  return v->constant().floatAt(0);
}

}  // namespace match
}  // namespace magneto
