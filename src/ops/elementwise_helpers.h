// Private helpers of the elementwise and reduction op families (src/ops/elementwise_ops.cpp,
// src/ops/reduction_ops.cpp): sets of allowed element types, operand type checks whose errors say
// what was expected and what was got, and the shape inference functions that many ops share
// (same-shape unary, numpy broadcasting over N operands).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "magneto/ir/op_schema.h"

namespace magneto {
namespace ophelp {

// A set of DTypes as a bit mask over the ONNX numbering.
using DTypeSet = uint64_t;
constexpr DTypeSet dtypeBit(DType t) { return uint64_t{1} << static_cast<int>(t); }

constexpr DTypeSet kFloatSet =
    dtypeBit(DType::kF16) | dtypeBit(DType::kBF16) | dtypeBit(DType::kF32) | dtypeBit(DType::kF64);
constexpr DTypeSet kSignedIntSet =
    dtypeBit(DType::kI8) | dtypeBit(DType::kI16) | dtypeBit(DType::kI32) | dtypeBit(DType::kI64);
constexpr DTypeSet kUnsignedIntSet =
    dtypeBit(DType::kU8) | dtypeBit(DType::kU16) | dtypeBit(DType::kU32) | dtypeBit(DType::kU64);
constexpr DTypeSet kIntSet = kSignedIntSet | kUnsignedIntSet;
constexpr DTypeSet kSignedSet = kFloatSet | kSignedIntSet;
constexpr DTypeSet kNumericSet = kFloatSet | kIntSet;
constexpr DTypeSet kBoolSet = dtypeBit(DType::kBool);
constexpr DTypeSet kAllSet = kNumericSet | kBoolSet;

inline bool inSet(DType t, DTypeSet s) { return (dtypeBit(t) & s) != 0; }

// "f16, bf16, f32 or f64"
inline std::string describeSet(DTypeSet s) {
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i)
    if (s & (uint64_t{1} << i)) names.emplace_back(dtypeName(static_cast<DType>(i)));
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// Operand i must be present and of a type in `allowed`.
inline Status checkDType(const InferContext& c, size_t i, DTypeSet allowed) {
  if (!c.hasInput(i)) return badInput("operand {} is missing", i);
  DType t = c.inputDType(i);
  if (!inSet(t, allowed))
    return badInput("operand {} has type {}, expected {}", i, dtypeName(t), describeSet(allowed));
  return Status::success();
}

// Operand i must have the same type as operand j.
inline Status checkSameDType(const InferContext& c, size_t i, size_t j) {
  if (c.inputDType(i) != c.inputDType(j))
    return badInput("operand {} has type {}, expected {} (the type of operand {})", i,
                    dtypeName(c.inputDType(i)), dtypeName(c.inputDType(j)), j);
  return Status::success();
}

// One operand; the result has its shape, and its type (or `out` when given).
inline InferFn unaryInfer(DTypeSet allowed, DType out = DType::kUndefined) {
  return [allowed, out](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, allowed));
    c.setOutput(0, {out == DType::kUndefined ? c.inputDType(0) : out, c.inputDims(0)});
    return Status::success();
  };
}

// Numpy broadcast of the dims of operands [first, numInputs).
inline Expected<Dims> broadcastOperands(const InferContext& c, size_t first) {
  Dims dims = c.inputDims(first);
  for (size_t i = first + 1; i < c.numInputs(); ++i) {
    if (!c.hasInput(i)) return badInput("operand {} is missing", i);
    auto d = broadcastDims(dims, c.inputDims(i));
    if (!d.ok()) return d.status().withContext(fmt::format("operand {}: ", i));
    dims = std::move(d).value();
  }
  return dims;
}

// All operands of one type in `allowed`, broadcast together; the result has the broadcast shape
// and the operands' type (or bool for comparisons).
inline InferFn broadcastInfer(DTypeSet allowed, bool boolOut = false) {
  return [allowed, boolOut](InferContext& c) -> Status {
    MG_RETURN_IF_ERROR(checkDType(c, 0, allowed));
    for (size_t i = 1; i < c.numInputs(); ++i) {
      if (!c.hasInput(i)) return badInput("operand {} is missing", i);
      MG_RETURN_IF_ERROR(checkSameDType(c, i, 0));
    }
    MG_ASSIGN_OR_RETURN(Dims dims, broadcastOperands(c, 0));
    c.setOutput(0, {boolOut ? DType::kBool : c.inputDType(0), dims});
    return Status::success();
  };
}

}  // namespace ophelp
}  // namespace magneto
