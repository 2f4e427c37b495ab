// Whole-file protobuf I/O with size guards (see proto_file.h).
//
// Protobuf cannot represent a message over 2 GiB; a larger model must keep its weights as external
// data. We check the size up front so that the user gets that advice instead of a parse failure,
// and raise CodedInputStream's total-bytes limit to the 2 GiB maximum (older protobufs default to
// 64 MiB).
#include "proto_file.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <system_error>

#include <filesystem>

namespace magneto {
namespace frontend {

namespace fs = std::filesystem;

Status readProtoFile(const std::string& path, google::protobuf::MessageLite& msg,
                     const char* what) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return badInput("{}: no such file", path);
  if (fs::is_directory(st)) return badInput("{}: is a directory, expected a file", path);
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return badInput("{}: cannot read ({})", path, ec.message());
  if (size == 0) return badInput("{}: file is empty (0 bytes), expected a serialized {}", path, what);
  if (size > static_cast<uintmax_t>(INT_MAX))
    return unsupported(
        "{}: file is {} bytes; protobuf files are limited to 2 GiB (store the weights as "
        "external data)",
        path, size);
  std::ifstream in(path, std::ios::binary);
  if (!in) return badInput("{}: cannot open ({})", path, std::strerror(errno));
  google::protobuf::io::IstreamInputStream zin(&in);
  google::protobuf::io::CodedInputStream cin(&zin);
  cin.SetTotalBytesLimit(INT_MAX);
  msg.Clear();
  if (!msg.ParseFromCodedStream(&cin) || !cin.ConsumedEntireMessage())
    return badInput("{}: not a valid {} (protobuf parse failed)", path, what);
  if (in.bad()) return badInput("{}: read error", path);
  return Status::success();
}

Status parseProtoBytes(const void* data, size_t size, const std::string& source,
                       google::protobuf::MessageLite& msg, const char* what) {
  if (size == 0) return badInput("{}: no bytes, expected a serialized {}", source, what);
  if (size > static_cast<size_t>(INT_MAX))
    return unsupported(
        "{}: {} bytes; protobuf files are limited to 2 GiB (store the weights as external data)",
        source, size);
  google::protobuf::io::CodedInputStream cin(static_cast<const uint8_t*>(data),
                                             static_cast<int>(size));
  cin.SetTotalBytesLimit(INT_MAX);
  msg.Clear();
  if (!msg.ParseFromCodedStream(&cin) || !cin.ConsumedEntireMessage())
    return badInput("{}: not a valid {} (protobuf parse failed)", source, what);
  return Status::success();
}

Status writeProtoFile(const std::string& path, const google::protobuf::MessageLite& msg) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return badInput("{}: cannot write ({})", path, std::strerror(errno));
  if (!msg.SerializeToOstream(&out)) return badInput("{}: serialization failed", path);
  out.close();
  if (!out) return badInput("{}: write failed", path);
  return Status::success();
}

}  // namespace frontend
}  // namespace magneto
