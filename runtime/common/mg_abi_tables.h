// The package ABI's tables: the plain structs a generated package describes its tensors and ports
// with, and the status codes of NAME.h. Split from mg_abi.h (which includes this file) so that a
// CPU package's NAME.cpp, which is only these tables and the C entry points, includes nothing
// but <cstdint>: compiling it then takes a tenth of the time it took with the standard library's
// headers (every `magnetoc check` pays it). Host and device code, C++17.
#pragma once

#include <cstdint>

namespace mgrt {
namespace abi {

// The values of every package's NAME_status enum (NAME.h).
enum Status : int { kOk = 0, kErrInvalidArgument = 1, kErrWeights = 2, kErrRuntime = 3, kErrOutOfMemory = 4 };

enum StorageKind : int32_t { kArena = 0, kWeights = 1, kInput = 2, kOutput = 3 };

constexpr int kMaxDims = 8;

// One tensor of the model.
struct SlotDesc {
  int32_t dtype;    // ONNX numbering
  int32_t rank;
  int32_t storage;  // StorageKind
  int64_t where;    // byte offset (arena, weights) or input/output index
  int64_t bytes;
  int64_t dims[kMaxDims];
};

// A graph input or output: its name and slot.
struct PortDesc {
  const char* name;
  int32_t slot;
};

// A graph output no step writes (an input or a constant returned as is, a repeated output).
struct CopyDesc {
  int32_t output;  // graph output index
  int32_t slot;    // the slot whose bytes it receives
};

}  // namespace abi
}  // namespace mgrt
