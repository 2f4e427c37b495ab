// Aligned host blocks for the runtime's large, long-lived buffers: a handle's arena, weights read
// from a file or copied out of the binary, a layer's pre-packed weights. One policy for all of
// them: 64-byte aligned (the kernels' vector loads), and from 4 MiB up 2 MiB aligned and asked for
// transparent huge pages (a hint: its failure changes nothing but speed). These buffers are read
// every run, and with 4 KiB pages a large layer pays a page walk every 4 KiB: VGG-19's fc6 (411 MB
// of packed weights, its K slices 4 MB apart) took from 16 to 440 ms per run from one process to
// the next, 13 to 17 ms with huge pages.
//
// Host code only (C++17); carried in a package's runtime/ folder like mg_abi.h, which includes it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace mgrt {
namespace abi {

constexpr uint64_t kHugeBlock = uint64_t{4} << 20;
constexpr size_t kHugeAlign = size_t{2} << 20;
inline size_t blockAlign(uint64_t bytes) { return bytes >= kHugeBlock ? kHugeAlign : 64; }

struct AlignedFree {
  size_t align = 64;
  void operator()(unsigned char* p) const { ::operator delete(p, std::align_val_t(align)); }
};
using AlignedBytes = std::unique_ptr<unsigned char, AlignedFree>;

// At least `bytes` (rounded up to 64, at least 64), aligned as above, not initialized; null when
// out of memory.
inline AlignedBytes alignedAllocUninit(uint64_t bytes) {
  const uint64_t n = std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
  const size_t align = blockAlign(n);
  void* p = ::operator new(n, std::align_val_t(align), std::nothrow);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p && align == kHugeAlign) madvise(p, n / align * align, MADV_HUGEPAGE);  // whole pages inside
#endif
  return AlignedBytes(static_cast<unsigned char*>(p), AlignedFree{align});
}

// The same, zeroed.
inline AlignedBytes alignedAlloc(uint64_t bytes) {
  AlignedBytes b = alignedAllocUninit(bytes);
  if (b) std::memset(b.get(), 0, std::max<uint64_t>(64, (bytes + 63) / 64 * 64));
  return b;
}

}  // namespace abi
}  // namespace mgrt
