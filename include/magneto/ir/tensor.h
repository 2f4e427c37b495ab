// Tensor types (element type + static dims) and constant tensors (initializers, folded values).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "magneto/ir/dtype.h"
#include "magneto/support/status.h"

namespace magneto {

using Dims = std::vector<int64_t>;

struct TensorType {
  DType dtype = DType::kUndefined;
  Dims dims;

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t numel() const;  // product of dims; 1 for a scalar
  bool operator==(const TensorType& o) const { return dtype == o.dtype && dims == o.dims; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
  std::string str() const;  // "f32[1,3,224,224]", "i64[]" for a scalar
};

// Product of dims, or an error when a dim is negative or the product passes 2^62 elements.
Expected<int64_t> checkedNumel(const Dims& dims);

// The largest tensor Magneto compiles, in bytes: sums of a few such sizes (arena offsets, weight
// offsets, folded bytes) still fit in int64.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 62;

// Size of `t` in bytes, or an error when checkedNumel fails or the size passes kMaxTensorBytes
// (a 2^62-element tensor of 8-byte elements would overflow int64).
Expected<int64_t> checkedByteSize(const TensorType& t);

std::string dimsStr(const Dims& dims);  // "1x3x224x224"

// A constant value. Data is shared between copies (constants are immutable once built).
// A tensor parsed from textual IR as blob<...> has no data, only its checksum: it can be printed
// and verified, not evaluated.
class Tensor {
 public:
  Tensor() = default;
  Tensor(TensorType type, std::vector<uint8_t> bytes);
  static Tensor opaque(TensorType type, uint64_t checksum);
  static Tensor zeros(TensorType type);
  template <typename T>
  static Tensor fromVector(DType dtype, Dims dims, const std::vector<T>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Tensor(TensorType{dtype, std::move(dims)}, std::move(bytes));
  }

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Dims& dims() const { return type_.dims; }
  int64_t numel() const { return type_.numel(); }
  bool hasData() const { return bytes_ != nullptr; }
  size_t byteSize() const { return bytes_ ? bytes_->size() : 0; }
  const uint8_t* bytes() const { return bytes_ ? bytes_->data() : nullptr; }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes()); }
  uint64_t checksum() const;  // FNV-1a 64 over the bytes

  // Element i converted to int64/double (any numeric dtype). Precondition: hasData().
  int64_t intAt(int64_t i) const;
  double floatAt(int64_t i) const;
  std::vector<int64_t> toInts() const;
  // Same type and same bytes (by checksum for opaque tensors).
  bool operator==(const Tensor& o) const { return type_ == o.type_ && checksum() == o.checksum(); }

 private:
  TensorType type_;
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  uint64_t opaqueChecksum_ = 0;
};

uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace magneto
