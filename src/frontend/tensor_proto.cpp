// TensorProto -> Tensor and back, plus the .pb file entry points and parseDims of
// magneto/frontend/onnx_import.h.
//
// ONNX stores tensor data either as raw little-endian bytes (raw_data), in a typed repeated field
// (float_data; int32_data, which also carries int8/16, uint8/16, bool and the bits of float16 and
// bfloat16; int64_data; double_data; uint64_data, which also carries uint32), or in an external
// file next to the model. Whatever the source, the element count must match the shape exactly:
// a short or long initializer is a broken model, not something to pad or truncate silently.
#include "tensor_proto.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

#include <onnx/onnx-data_pb.h>

#include "magneto/frontend/onnx_import.h"
#include "proto_file.h"

namespace magneto {
namespace frontend {

namespace fs = std::filesystem;

namespace {

// Copies a typed repeated field into element type T (narrowing as ONNX's encoding prescribes).
template <typename T, typename Field>
std::vector<uint8_t> packField(const Field& f) {
  std::vector<uint8_t> bytes(static_cast<size_t>(f.size()) * sizeof(T));
  T* out = reinterpret_cast<T*>(bytes.data());
  for (int i = 0; i < f.size(); ++i) out[i] = static_cast<T>(f.Get(i));
  return bytes;
}

template <typename Field>
std::vector<uint8_t> packBool(const Field& f) {
  std::vector<uint8_t> bytes(static_cast<size_t>(f.size()));
  for (int i = 0; i < f.size(); ++i) bytes[i] = f.Get(i) != 0 ? 1 : 0;
  return bytes;
}

Expected<uint64_t> parseUnsigned(const std::string& s, const std::string& what) {
  if (s.empty()) return badInput("{} is empty", what);
  uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return badInput("{} '{}' is not a non-negative integer", what, s);
    if (v > (std::numeric_limits<uint64_t>::max() - 9) / 10)
      return badInput("{} '{}' is too large", what, s);
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

bool isInside(const fs::path& dir, const fs::path& p) {
  auto d = dir.begin(), e = dir.end();
  auto q = p.begin();
  for (; d != e; ++d, ++q) {
    if (d->empty()) continue;  // trailing separator
    if (q == p.end() || *d != *q) return false;
  }
  return true;
}

struct ExternalRef {
  fs::path file;  // canonical, inside the model's folder
  uint64_t offset = 0;
  bool hasLength = false;
  uint64_t length = 0;
};

// Parses tp.external_data() and resolves the location, which must stay inside `baseDir` after
// resolving `..` and symlinks.
Expected<ExternalRef> resolveExternal(const onnx::TensorProto& tp, const std::string& baseDir,
                                      const std::string& what) {
  ExternalRef ref;
  std::string location;
  for (const auto& kv : tp.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      MG_ASSIGN_OR_RETURN(ref.offset, parseUnsigned(kv.value(), what + ": external data offset"));
    } else if (kv.key() == "length") {
      MG_ASSIGN_OR_RETURN(ref.length, parseUnsigned(kv.value(), what + ": external data length"));
      ref.hasLength = true;
    }
    // "checksum" and unknown keys are informational.
  }
  if (location.empty()) return badInput("{}: external data has no 'location'", what);
  if (baseDir.empty())
    return badInput("{}: external data '{}' cannot be read: the model was given as bytes, "
                    "without a folder",
                    what, location);
  fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    return badInput("{}: external data location '{}' is an absolute path; it must be relative to "
                    "the model's folder",
                    what, location);
  std::error_code ec;
  fs::path dir = fs::canonical(fs::path(baseDir), ec);
  if (ec) return badInput("{}: cannot resolve the model's folder '{}'", what, baseDir);
  // weakly_canonical resolves symlinks and `..` for the part that exists.
  fs::path resolved = fs::weakly_canonical(dir / rel, ec);
  if (ec) return badInput("{}: cannot resolve external data location '{}'", what, location);
  if (!isInside(dir, resolved))
    return badInput("{}: external data location '{}' resolves to '{}', outside the model's folder "
                    "'{}'",
                    what, location, resolved.string(), dir.string());
  ref.file = resolved;
  return ref;
}

// Reads `expectedBytes` bytes of external data described by tp.external_data().
Expected<std::vector<uint8_t>> readExternal(const onnx::TensorProto& tp, const std::string& baseDir,
                                            const std::string& what, uint64_t expectedBytes) {
  MG_ASSIGN_OR_RETURN(ExternalRef ref, resolveExternal(tp, baseDir, what));
  const fs::path& resolved = ref.file;
  const uint64_t offset = ref.offset;
  std::error_code ec;
  if (!fs::is_regular_file(resolved, ec))
    return badInput("{}: external data file '{}' not found", what, resolved.string());
  uint64_t fileSize = fs::file_size(resolved, ec);
  if (ec) return badInput("{}: cannot read external data file '{}'", what, resolved.string());
  if (ref.hasLength && ref.length != expectedBytes)
    return badInput("{}: external data length is {} bytes, the shape needs {}", what, ref.length,
                    expectedBytes);
  if (offset > fileSize || fileSize - offset < expectedBytes)
    return badInput("{}: external data file '{}' is {} bytes, but the tensor's {} bytes at offset "
                    "{} end at byte {}",
                    what, resolved.string(), fileSize, expectedBytes, offset,
                    offset + expectedBytes < offset ? std::string("2^64 or more")
                                                    : std::to_string(offset + expectedBytes));
  std::ifstream in(resolved, std::ios::binary);
  if (!in) return badInput("{}: cannot open external data file '{}'", what, resolved.string());
  std::vector<uint8_t> bytes(static_cast<size_t>(expectedBytes));
  in.seekg(static_cast<std::streamoff>(offset));
  if (expectedBytes > 0)
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(expectedBytes));
  if (!in || static_cast<uint64_t>(in.gcount()) != expectedBytes)
    return badInput("{}: short read from external data file '{}'", what, resolved.string());
  return bytes;
}

// Typed-field data for `dtype`; `count` receives the number of elements found.
std::vector<uint8_t> typedData(const onnx::TensorProto& tp, DType dtype, int64_t* count) {
  switch (dtype) {
    case DType::kF32: *count = tp.float_data_size(); return packField<float>(tp.float_data());
    case DType::kF64: *count = tp.double_data_size(); return packField<double>(tp.double_data());
    case DType::kI64: *count = tp.int64_data_size(); return packField<int64_t>(tp.int64_data());
    case DType::kI32: *count = tp.int32_data_size(); return packField<int32_t>(tp.int32_data());
    case DType::kI16: *count = tp.int32_data_size(); return packField<int16_t>(tp.int32_data());
    case DType::kI8: *count = tp.int32_data_size(); return packField<int8_t>(tp.int32_data());
    case DType::kU16: case DType::kF16: case DType::kBF16:
      *count = tp.int32_data_size(); return packField<uint16_t>(tp.int32_data());
    case DType::kU8: *count = tp.int32_data_size(); return packField<uint8_t>(tp.int32_data());
    case DType::kBool: *count = tp.int32_data_size(); return packBool(tp.int32_data());
    case DType::kU32: *count = tp.uint64_data_size(); return packField<uint32_t>(tp.uint64_data());
    case DType::kU64: *count = tp.uint64_data_size(); return packField<uint64_t>(tp.uint64_data());
    default: *count = 0; return {};
  }
}

}  // namespace

Status checkExternalLocation(const onnx::TensorProto& tp, const std::string& baseDir,
                             const std::string& what) {
  if (tp.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return Status::success();
  MG_ASSIGN_OR_RETURN(ExternalRef ref, resolveExternal(tp, baseDir, what));
  std::error_code ec;
  if (!fs::is_regular_file(ref.file, ec))
    return badInput("{}: external data file '{}' not found", what, ref.file.string());
  return Status::success();
}

namespace {
// Element types that ONNX added after the protobuf definitions Magneto is built against (codes
// 17 to 26 of ONNX's TensorProto.DataType: the float8 variants of opset 19, the 4-bit types of
// opset 21, FLOAT4E2M1, FLOAT8E8M0 and the 2-bit types), so that a model using one is told that
// the type is not supported (exit 2), not that it is no ONNX type at all. Null for other codes.
const char* newerOnnxTypeName(int32_t onnxType) {
  static const char* const kNames[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                       "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
                                       "FLOAT8E8M0", "UINT2", "INT2"};
  return onnxType >= 17 && onnxType <= 26 ? kNames[onnxType - 17] : nullptr;
}
}  // namespace

std::string onnxDTypeName(int32_t onnxType) {
  if (onnx::TensorProto_DataType_IsValid(onnxType))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(onnxType));
  if (const char* newer = newerOnnxTypeName(onnxType)) return newer;
  return fmt::format("{} (not an ONNX data type)", onnxType);
}

Expected<DType> dtypeFromOnnx(int32_t onnxType) {
  switch (onnxType) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 10: case 11: case 12:
    case 13: case 16:
      return static_cast<DType>(onnxType);
    case 0: return badInput("element type is UNDEFINED");
    default:
      if (!onnx::TensorProto_DataType_IsValid(onnxType) && !newerOnnxTypeName(onnxType))
        return badInput("element type {} is not an ONNX data type", onnxType);
      return unsupported("element type {} is not supported", onnxDTypeName(onnxType));
  }
}

Expected<Tensor> tensorFromProto(const onnx::TensorProto& tp, const std::string& baseDir,
                                 const std::string& what) {
  auto dt = dtypeFromOnnx(tp.data_type());
  if (!dt.ok()) return dt.status().withContext(what + ": ");
  DType dtype = *dt;
  if (tp.has_segment()) return unsupported("{}: segmented tensors are not supported", what);
  Dims dims(tp.dims().begin(), tp.dims().end());
  auto numel = checkedNumel(dims);
  if (!numel.ok()) return numel.status().withContext(what + ": ");
  const size_t elemSize = dtypeSize(dtype);
  TensorType type{dtype, dims};
  auto byteSize = checkedByteSize(type);
  if (!byteSize.ok()) return byteSize.status().withContext(what + ": ");
  const uint64_t wantBytes = static_cast<uint64_t>(*byteSize);

  if (tp.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    MG_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, readExternal(tp, baseDir, what, wantBytes));
    return Tensor(std::move(type), std::move(bytes));
  }
  if (tp.has_raw_data()) {
    const std::string& raw = tp.raw_data();
    if (raw.size() != wantBytes)
      return badInput("{}: raw data is {} bytes ({} elements of {}), shape {} needs {} bytes", what,
                      raw.size(), raw.size() / std::max<size_t>(elemSize, 1), dtypeName(dtype),
                      dimsStr(dims), wantBytes);
    return Tensor(std::move(type), std::vector<uint8_t>(raw.begin(), raw.end()));
  }
  int64_t count = 0;
  std::vector<uint8_t> bytes = typedData(tp, dtype, &count);
  if (count != *numel)
    return badInput("{}: data has {} elements, shape {} needs {}", what, count, dimsStr(dims),
                    *numel);
  return Tensor(std::move(type), std::move(bytes));
}

Status tensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* out) {
  if (!t.hasData()) return badInput("tensor '{}' has no data (an opaque constant)", name);
  if (t.dtype() == DType::kUndefined || t.dtype() == DType::kString)
    return unsupported("tensor '{}': element type {} cannot be written", name,
                       dtypeName(t.dtype()));
  out->Clear();
  out->set_name(name);
  out->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) out->add_dims(d);
  out->set_raw_data(reinterpret_cast<const char*>(t.bytes()), t.byteSize());
  return Status::success();
}

}  // namespace frontend

Expected<Tensor> readTensorProtoFile(const std::string& path, std::string* name) {
  onnx::TensorProto tp;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, tp, "TensorProto"));
  if (name) *name = tp.name();
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  if (baseDir.empty()) baseDir = ".";
  std::string what = tp.name().empty() ? std::string("tensor") : "tensor '" + tp.name() + "'";
  auto t = frontend::tensorFromProto(tp, baseDir, what);
  if (!t.ok()) return t.status().withContext(path + ": ");
  return t;
}

Expected<std::vector<Tensor>> readSequenceProtoFile(const std::string& path, std::string* name) {
  onnx::SequenceProto sp;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, sp, "SequenceProto"));
  if (name) *name = sp.name();
  if (sp.elem_type() != onnx::SequenceProto::TENSOR && sp.tensor_values_size() > 0)
    return unsupported("{}: a sequence of {} elements: only sequences of tensors are supported",
                       path, sp.elem_type() == onnx::SequenceProto::SEQUENCE ? "sequence" : "non-tensor");
  if (sp.sequence_values_size() || sp.map_values_size() || sp.optional_values_size() ||
      sp.sparse_tensor_values_size())
    return unsupported("{}: only sequences of tensors are supported", path);
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  if (baseDir.empty()) baseDir = ".";
  std::vector<Tensor> out;
  for (int i = 0; i < sp.tensor_values_size(); ++i) {
    auto t = frontend::tensorFromProto(sp.tensor_values(i), baseDir,
                                       fmt::format("element {} of sequence '{}'", i, sp.name()));
    if (!t.ok()) return t.status().withContext(path + ": ");
    out.push_back(std::move(t).value());
  }
  return out;
}

Expected<OptionalData> readOptionalProtoFile(const std::string& path, std::string* name) {
  onnx::OptionalProto op;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, op, "OptionalProto"));
  if (name) *name = op.name();
  OptionalData d;
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  if (baseDir.empty()) baseDir = ".";
  switch (op.elem_type()) {
    case onnx::OptionalProto::UNDEFINED:
      if (op.has_tensor_value() || op.has_sequence_value())
        return badInput("{}: an optional with no element type holds a value", path);
      return d;
    case onnx::OptionalProto::TENSOR: {
      if (!op.has_tensor_value()) return d;  // typed, and empty
      auto t = frontend::tensorFromProto(op.tensor_value(), baseDir,
                                         fmt::format("the tensor of optional '{}'", op.name()));
      if (!t.ok()) return t.status().withContext(path + ": ");
      d.kind = OptionalInput::Kind::kTensor;
      d.values.push_back(std::move(t).value());
      return d;
    }
    case onnx::OptionalProto::SEQUENCE: {
      if (!op.has_sequence_value()) return d;
      const onnx::SequenceProto& sp = op.sequence_value();
      if ((sp.elem_type() != onnx::SequenceProto::TENSOR && sp.tensor_values_size() > 0) ||
          sp.sequence_values_size() || sp.map_values_size() || sp.optional_values_size() ||
          sp.sparse_tensor_values_size())
        return unsupported("{}: optional '{}' holds a sequence of non-tensors: only sequences of "
                           "tensors are supported",
                           path, op.name());
      d.kind = OptionalInput::Kind::kSequence;
      for (int i = 0; i < sp.tensor_values_size(); ++i) {
        auto t = frontend::tensorFromProto(
            sp.tensor_values(i), baseDir,
            fmt::format("element {} of the sequence of optional '{}'", i, op.name()));
        if (!t.ok()) return t.status().withContext(path + ": ");
        d.values.push_back(std::move(t).value());
      }
      return d;
    }
    default:
      return unsupported("{}: optional '{}' holds a map, a sparse tensor or an optional: only "
                         "tensors and sequences of tensors are supported",
                         path, op.name());
  }
}

std::string sequenceElementName(const std::string& name, size_t k) {
  return fmt::format("{}[{}]", name, k);
}

Status writeTensorProtoFile(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto tp;
  MG_RETURN_IF_ERROR(frontend::tensorToProto(t, name, &tp).withContext(path + ": "));
  return frontend::writeProtoFile(path, tp);
}

Expected<Dims> parseDims(const std::string& text) {
  if (text == "scalar") return Dims{};
  if (text.empty()) return badInput("empty shape (write 'scalar' for a rank-0 tensor)");
  Dims dims;
  size_t pos = 0;
  while (true) {
    size_t end = text.find_first_of("x,", pos);
    std::string tok = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    size_t b = tok.find_first_not_of(" \t"), e = tok.find_last_not_of(" \t");
    tok = b == std::string::npos ? std::string() : tok.substr(b, e - b + 1);
    if (tok.empty()) return badInput("shape '{}' has an empty dimension", text);
    if (tok[0] == '-') return badInput("shape '{}' has a negative dimension {}", text, tok);
    int64_t v = 0;
    for (char c : tok) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return badInput("shape '{}': '{}' is not a dimension (expected e.g. 1x3x224x224)", text,
                        tok);
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
        return badInput("shape '{}': dimension {} is too large", text, tok);
      v = v * 10 + (c - '0');
    }
    dims.push_back(v);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  auto n = checkedNumel(dims);
  if (!n.ok()) return n.status().withContext("shape '" + text + "': ");
  return dims;
}

}  // namespace magneto
