#include "magneto/ir/tensor.h"

#include <fmt/format.h>

#include <cmath>

namespace magneto {

int64_t TensorType::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string TensorType::str() const {
  std::string s(dtypeName(dtype));
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Expected<int64_t> checkedNumel(const Dims& dims) {
  constexpr int64_t kLimit = int64_t{1} << 62;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return badInput("negative dimension {} in shape {}", d, dimsStr(dims));
    if (d != 0 && n > kLimit / d)
      return badInput("shape {} has more than 2^62 elements", dimsStr(dims));
    n *= d;
  }
  return n;
}

Expected<int64_t> checkedByteSize(const TensorType& t) {
  MG_ASSIGN_OR_RETURN(int64_t n, checkedNumel(t.dims));
  const int64_t size = static_cast<int64_t>(dtypeSize(t.dtype));
  if (size > 0 && n > kMaxTensorBytes / size)
    return badInput("{} has {} elements of {} bytes, more than 2^62 bytes", t.str(), n, size);
  return n * size;
}

std::string dimsStr(const Dims& dims) {
  if (dims.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t h) {
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

Tensor::Tensor(TensorType type, std::vector<uint8_t> bytes)
    : type_(std::move(type)),
      bytes_(std::make_shared<const std::vector<uint8_t>>(std::move(bytes))) {}

Tensor Tensor::opaque(TensorType type, uint64_t checksum) {
  Tensor t;
  t.type_ = std::move(type);
  t.opaqueChecksum_ = checksum;
  return t;
}

Tensor Tensor::zeros(TensorType type) {
  size_t n = static_cast<size_t>(type.numel()) * dtypeSize(type.dtype);
  return Tensor(std::move(type), std::vector<uint8_t>(n, 0));
}

uint64_t Tensor::checksum() const {
  return bytes_ ? fnv1a64(bytes_->data(), bytes_->size()) : opaqueChecksum_;
}

namespace {
template <typename R>
R elementAs(const Tensor& t, int64_t i) {
  const uint8_t* p = t.bytes();
  switch (t.dtype()) {
    case DType::kF32: return static_cast<R>(reinterpret_cast<const float*>(p)[i]);
    case DType::kF64: return static_cast<R>(reinterpret_cast<const double*>(p)[i]);
    case DType::kI64: return static_cast<R>(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kI32: return static_cast<R>(reinterpret_cast<const int32_t*>(p)[i]);
    case DType::kI16: return static_cast<R>(reinterpret_cast<const int16_t*>(p)[i]);
    case DType::kI8: return static_cast<R>(reinterpret_cast<const int8_t*>(p)[i]);
    case DType::kU8: return static_cast<R>(reinterpret_cast<const uint8_t*>(p)[i]);
    case DType::kU16: return static_cast<R>(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kU32: return static_cast<R>(reinterpret_cast<const uint32_t*>(p)[i]);
    case DType::kU64: return static_cast<R>(reinterpret_cast<const uint64_t*>(p)[i]);
    case DType::kBool: return static_cast<R>(p[i] != 0);
    default: return R{};
  }
}
}  // namespace

int64_t Tensor::intAt(int64_t i) const { return elementAs<int64_t>(*this, i); }
double Tensor::floatAt(int64_t i) const { return elementAs<double>(*this, i); }

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) v[i] = intAt(i);
  return v;
}

}  // namespace magneto
