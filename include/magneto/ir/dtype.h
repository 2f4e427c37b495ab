// Element types. The numbering is ONNX's TensorProto.DataType, so the frontend and the generated
// runtime (runtime/cpu/mg_runtime.h) agree on it without a table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace magneto {

enum class DType : int32_t {
  kUndefined = 0,
  kF32 = 1,
  kU8 = 2,
  kI8 = 3,
  kU16 = 4,
  kI16 = 5,
  kI32 = 6,
  kI64 = 7,
  kString = 8,
  kBool = 9,
  kF16 = 10,
  kF64 = 11,
  kU32 = 12,
  kU64 = 13,
  kBF16 = 16,
};

// Short names used in the textual IR: f32, f16, f64, bf16, i8..i64, u8..u64, bool.
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType t);
bool isFloat(DType t);
bool isInteger(DType t);  // signed or unsigned, not bool

}  // namespace magneto
