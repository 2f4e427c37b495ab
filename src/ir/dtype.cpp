#include "magneto/ir/dtype.h"

namespace magneto {
namespace {
struct DTypeInfo {
  DType t;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kInfos[] = {
    {DType::kF32, "f32", 4}, {DType::kU8, "u8", 1},   {DType::kI8, "i8", 1},
    {DType::kU16, "u16", 2}, {DType::kI16, "i16", 2}, {DType::kI32, "i32", 4},
    {DType::kI64, "i64", 8}, {DType::kString, "str", 0}, {DType::kBool, "bool", 1},
    {DType::kF16, "f16", 2}, {DType::kF64, "f64", 8}, {DType::kU32, "u32", 4},
    {DType::kU64, "u64", 8}, {DType::kBF16, "bf16", 2},
};
}  // namespace

std::string_view dtypeName(DType t) {
  for (const auto& i : kInfos)
    if (i.t == t) return i.name;
  return "undefined";
}

std::optional<DType> parseDType(std::string_view name) {
  for (const auto& i : kInfos)
    if (name == i.name) return i.t;
  return std::nullopt;
}

size_t dtypeSize(DType t) {
  for (const auto& i : kInfos)
    if (i.t == t) return i.size;
  return 0;
}

bool isFloat(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kF64 || t == DType::kBF16;
}

bool isInteger(DType t) {
  switch (t) {
    case DType::kU8: case DType::kI8: case DType::kU16: case DType::kI16: case DType::kI32:
    case DType::kI64: case DType::kU32: case DType::kU64:
      return true;
    default:
      return false;
  }
}

}  // namespace magneto
