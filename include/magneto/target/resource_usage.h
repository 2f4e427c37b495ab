// What a compiled kernel really uses (registers, spills, shared memory), as the device compiler's
// assembler reports it, and the occupancy those resources allow on a device profile: the feedback
// that checks the cost model's estimates (docs/GPU_TARGET.md, "Resource feedback").
//
// Occupancy follows the CUDA occupancy calculator: a block of T threads takes ceil(T / warp)
// warps; registers are allocated per warp in units of `reg_alloc_unit` registers, from one of
// `reg_partitions` equal register files (a warp's registers never span two); shared memory per
// block is its static + dynamic bytes plus `smem_reserved_per_block`, rounded up to
// `smem_alloc_unit`. The resident blocks per SM are the fewest that threads, the block limit,
// registers and shared memory allow; occupancy is their warps over the SM's maximum warps.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "magneto/target/device_profile.h"

namespace magneto {

// One kernel in ptxas' verbose output (`-Xptxas -v` / `--resource-usage`).
struct PtxasKernelUsage {
  int registers = 0;
  int64_t spillStoreBytes = 0, spillLoadBytes = 0;
  int64_t stackBytes = 0;   // stack frame
  int64_t staticSmemBytes = 0;
  int barriers = 0;
};

// Parses ptxas' info lines for `arch` ("sm_90"; empty: any), keyed by the (mangled) entry name:
//   ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
//   ptxas info    : Function properties for _Z1kPf
//       0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
//   ptxas info    : Used 40 registers, used 1 barriers, 256 bytes smem, 384 bytes cmem[0]
// Lines of other shapes are skipped; an entry without a "Used" line is left out.
std::map<std::string, PtxasKernelUsage> parsePtxasVerbose(const std::string& text,
                                                         const std::string& arch = "");

// One kernel in the AMDGPU back end's resource remarks (hipcc -Rpass-analysis=kernel-resource-usage),
// keyed by the (mangled) function name:
//   k.hip:4:1: remark: Function Name: _Z1kPfPKfi [-Rpass-analysis=kernel-resource-usage]
//   k.hip:4:1: remark:     SGPRs: 14 [...]
//   k.hip:4:1: remark:     VGPRs: 6 [...]
//   k.hip:4:1: remark:     AGPRs: 0 [...]
//   k.hip:4:1: remark:     ScratchSize [bytes/lane]: 0 [...]
//   k.hip:4:1: remark:     Occupancy [waves/SIMD]: 8 [...]
//   k.hip:4:1: remark:     SGPRs Spill: 0 [...]
//   k.hip:4:1: remark:     VGPRs Spill: 0 [...]
//   k.hip:4:1: remark:     LDS Size [bytes/block]: 1024 [...]
// A function whose "VGPRs" line is missing is left out.
struct AmdgpuKernelUsage {
  int sgprs = 0, vgprs = 0, agprs = 0;
  int64_t scratchBytesPerLane = 0;  // private segment (spills and stack arrays)
  int wavesPerSimd = 0;             // the compiler's occupancy at the kernel's launch bounds
  int sgprSpills = 0, vgprSpills = 0;  // registers spilled (VGPRs to scratch memory)
  int64_t ldsBytes = 0;             // static LDS per block
  // The per-lane vector registers a wave is allocated from the unified register file of CDNA2/3
  // (gfx90a, gfx94x): the architectural VGPRs rounded up to 4, then the AGPRs.
  int unifiedVgprs() const { return (vgprs + 3) / 4 * 4 + agprs; }
};
std::map<std::string, AmdgpuKernelUsage> parseAmdgpuResourceRemarks(const std::string& text);

struct Occupancy {
  int blocksPerSm = 0;    // resident blocks of this kernel per SM (0: the block cannot run)
  int warpsPerBlock = 0;
  double fraction = 0;    // resident warps / the SM's maximum warps, in [0, 1]
  std::string limiter;    // what bounds blocksPerSm: "threads", "blocks", "registers", "smem",
                          // or why none fits ("registers > max_regs_per_thread", ...)
};

// The occupancy of a kernel of `threads` threads per block using `registers` per thread and
// `smemBytes` of shared memory per block (static + dynamic) on `p` (a GPU profile).
Occupancy kernelOccupancy(int threads, int registers, int64_t smemBytes, const DeviceProfile& p);

}  // namespace magneto
