// The package ABI's shared pieces, written once for every target: the tables a generated package
// describes its tensors and ports with, the status codes of NAME.h, the registry of live handles,
// the error messages (per handle and per thread), the weights blob (loaded from a file or linked
// in, size and FNV-1a checksum verified) and the introspection of inputs and outputs.
//
// Users: the CPU package core (runtime/cpu/mg_package.cpp) and every GPU package's NAME.cu
// (codegen/templates/gpu/NAME.cu.in), so a weights file, a misuse or an index out of range is
// handled and worded the same whatever the target. Host code only (C++17). A package carries this
// file in its runtime/ folder; CPU packages rename the mgrt namespace per package (NAME_mgrt).
#pragma once

#include "mg_abi_tables.h"
#include "mg_aligned.h"

#include <algorithm>
#include <map>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>

namespace mgrt {
namespace abi {

inline uint64_t fnv1a64(const unsigned char* p, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// This thread's last error message: what NAME_last_error(NULL) returns, and where a call that
// has no usable handle (NULL, destroyed, busy on another thread) leaves its message.
inline std::string& threadError() {
  thread_local std::string message;
  return message;
}

// Records a failure and returns `status`: the message goes to this thread and, with a handle, to the handle too.
inline int report(std::string* handleError, int status, const std::string& message) {
  threadError() = message;
  if (handleError) *handleError = message;
  return status;
}

// Live handles, each with the package (`owner`, any address unique to it) that created it: a
// handle passed to another package's functions, or used after destroy, is refused.
class Registry {
 public:
  static void add(const void* handle, const void* owner) {
    std::lock_guard<std::mutex> lock(mu());
    live().insert({handle, owner});
  }
  static bool isLive(const void* handle, const void* owner) {
    std::lock_guard<std::mutex> lock(mu());
    return live().count({handle, owner}) != 0;
  }
  // False when it was not live (destroyed twice, or another package's).
  static bool remove(const void* handle, const void* owner) {
    std::lock_guard<std::mutex> lock(mu());
    return live().erase({handle, owner}) != 0;
  }

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::set<std::pair<const void*, const void*>>& live() {
    static std::set<std::pair<const void*, const void*>> s;
    return s;
  }
};

// Loads a weights file into `out` (aligned): its size must be `bytes` and its checksum `checksum`.
inline int loadWeightsFile(const char* path, uint64_t bytes, uint64_t checksum, AlignedBytes& out,
                           std::string* handleError) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return report(handleError, kErrWeights, std::string("cannot open weights file '") + path + "'");
  out = alignedAlloc(bytes);
  if (!out) {
    std::fclose(f);
    return report(handleError, kErrOutOfMemory, "out of memory allocating the weights");
  }
  uint64_t got = 0;
  while (got < bytes) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(bytes - got, 1u << 24));
    size_t r = std::fread(out.get() + got, 1, chunk, f);
    if (r == 0) break;
    got += r;
  }
  unsigned char extra;
  bool longer = std::fread(&extra, 1, 1, f) == 1;
  std::fclose(f);
  if (got != bytes || longer)
    return report(handleError, kErrWeights,
                std::string("weights file '") + path + "' has the wrong size (" +
                    (longer ? "longer than" : std::to_string(got) + " bytes instead of") + " " +
                    std::to_string(bytes) +
                    " bytes): it belongs to another compile of the model or is truncated");
  if (fnv1a64(out.get(), bytes) != checksum)
    return report(handleError, kErrWeights,
                std::string("weights file '") + path +
                    "' fails its checksum: it belongs to another compile of the model or is "
                    "corrupt");
  return kOk;
}

// The weights linked into the library ([data, end), null when the package was compiled with
// --weights-file), verified once per blob and process: read-only, shared by every handle.
inline int useEmbeddedWeights(const char* package, const unsigned char* data, const unsigned char* end,
                              uint64_t bytes, uint64_t checksum, std::string* handleError) {
  if (bytes == 0) return kOk;
  if (!data)
    return report(handleError, kErrWeights,
                std::string("this package was compiled with --weights-file: pass the path of ") +
                    package + "_weights.bin to " + package + "_create");
  static std::mutex mu;
  static std::set<const unsigned char*> verified;
  std::lock_guard<std::mutex> lock(mu);
  if (!verified.count(data)) {
    uint64_t size = static_cast<uint64_t>(end - data);
    if (size < bytes || fnv1a64(data, bytes) != checksum)
      return report(handleError, kErrWeights,
                  "the embedded weights fail their size or checksum test: rebuild the package");
    verified.insert(data);
  }
  return kOk;
}

// The embedded weights as a heap copy shared by every handle of the package in this process
// (created by the first, freed with the last). The CPU kernels read large weight matrices at
// memory bandwidth (a batch-1 fully connected layer: 411 MB for VGG's fc6), and they did so 1.7x
// slower from the binary's read-only data pages than from the heap (50 against 29 ms, the file
// mapping gets neither transparent huge pages nor the heap's physical layout); the copy is an
// alignedAllocUninit block (huge pages from 4 MiB up). Checked like useEmbeddedWeights first.
inline int shareEmbeddedWeights(const char* package, const unsigned char* data, const unsigned char* end,
                                uint64_t bytes, uint64_t checksum, std::shared_ptr<const unsigned char>* out,
                                std::string* handleError) {
  if (int s = useEmbeddedWeights(package, data, end, bytes, checksum, handleError)) return s;
  if (bytes == 0) return kOk;
  static std::mutex mu;
  static std::map<const unsigned char*, std::weak_ptr<const unsigned char>> copies;
  std::lock_guard<std::mutex> lock(mu);
  if (auto live = copies[data].lock()) {
    *out = live;
    return kOk;
  }
  AlignedBytes buf = alignedAllocUninit(bytes);
  if (!buf) return report(handleError, kErrOutOfMemory, "out of memory copying the embedded weights");
  std::memcpy(buf.get(), data, bytes);
  const AlignedFree free = buf.get_deleter();
  std::shared_ptr<const unsigned char> copy(buf.release(), [free](const unsigned char* q) {
    free(const_cast<unsigned char*>(q));
  });
  copies[data] = copy;
  *out = copy;
  return kOk;
}

// The slot of input or output `index` of a port table of `count` entries; out of range: null and
// a message for this thread.
inline const SlotDesc* port(const SlotDesc* slots, const PortDesc* table, int count, int index,
                            const char* what) {
  if (index < 0 || index >= count) {
    threadError() = std::string(what) + " index " + std::to_string(index) + " is out of range [0, " +
                    std::to_string(count) + ")";
    return nullptr;
  }
  return &slots[table[index].slot];
}

}  // namespace abi
}  // namespace mgrt
