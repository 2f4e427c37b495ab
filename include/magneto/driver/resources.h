// Resource feedback from the real device compiler (docs/GPU_TARGET.md, "Resource feedback"): the
// registers, spills and shared memory of every launch of a cuda or hip package, read from ptxas
// (nvcc) or from the AMDGPU back end's resource remarks (hipcc -Rpass-analysis=
// kernel-resource-usage) for the device profile's architecture, and the occupancy they allow on
// that profile.
//
// Each distinct kernel of the program (GpuEmitSummary::kernelUnits) is compiled once by nvcc
// (-cubin -Xptxas -v, the profile's sm_XX) or hipcc (--cuda-device-only, the profile's gfxNNN),
// together with a probe whose mangled name carries the
// kernel's dynamic shared memory (a constexpr of the block programs' template arguments). Results
// are cached per kernel in the cache folder (MAGNETO_CACHE_DIR), keyed by the kernel's text with
// package-specific names made canonical (launch7 -> one name, F12_0 -> FN0, comments dropped),
// the runtime's text, nvcc's version and the flags: the many models that share a convolution tile
// compile it once. The kernels missing from the cache are compiled in one compiler call
// (prefetchLaunchResources: one call for the kernels of many programs).
//
// Without the compiler every launch keeps
// the cost model's estimates: the tile's registers and shared memory (TileConfig), the largest
// over a joint kernel's members; `source` says which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "magneto/codegen/gpu_emitter.h"
#include "magneto/driver/process.h"
#include "magneto/support/status.h"
#include "magneto/target/device_profile.h"

namespace magneto {
namespace driver {

struct LaunchResources {
  std::string name;    // "launch7"
  std::string kernel;  // the __global__ function it runs ("launch3")
  std::vector<std::string> members;
  std::vector<std::string> kinds;  // the members' operators (filled by the report)
  std::vector<std::string> tiles;  // the cost model's tile of each member (TileConfig::str)
  // A joint launch whose co-tuned tiles are not each member's best alone: which tiles changed
  // and the occupancy and modeled latency before and after (filled by the report), else "".
  std::string coTuneReason;
  int threads = 0;
  int registers = 0;
  int64_t spillBytes = 0;  // spill stores + spill loads (0: no spilling)
  int64_t smemBytes = 0;   // static + dynamic shared memory per block
  double occupancy = 0;    // resident warps / maximum warps per SM
  int blocksPerSm = 0;
  std::string limiter;     // what bounds the occupancy (kernelOccupancy)
  std::string source;      // "ptxas", "hipcc" or "estimate"
  int64_t stackBytes = 0;  // ptxas: stack frame; hipcc: scratch bytes per lane
  int sgprs = 0, vgprs = 0, agprs = 0;  // hipcc only: registers = VGPRs rounded up to 4 + AGPRs
  // hipcc only: registers spilled (VGPRs to AGPRs or scratch, SGPRs to VGPR lanes or scratch;
  // spillBytes counts only the scratch memory) and the compiler's own waves per SIMD.
  int spilledRegisters = 0, compilerWavesPerSimd = 0;
  // The cost model's own figures for the same launch (its tiles' registers and shared memory, the
  // largest over a joint kernel's members), whatever `source` is: where ptxas differs, the tile
  // model is off.
  int estimatedRegisters = 0;
  int64_t estimatedSmemBytes = 0;
  double estimatedOccupancy = 0;
  // A --opt variant of a dynamic graph (GpuLaunchInfo): its opt point (-1: a general launch),
  // binding, the general tiles it replaces there and both modeled latencies at that binding.
  int optPoint = -1;
  std::string optBinding;
  std::vector<std::string> generalTiles;
  double optModeledUs = 0, generalModeledUs = 0;
};

struct ResourceFeedback {
  std::vector<LaunchResources> launches;  // in forward order
  std::string source;                     // "ptxas", "hipcc" or "estimate"
  std::string note;                       // why estimates (no nvcc, hip, a failed compile), or ""
  int kernelsCompiled = 0, kernelsCached = 0;
};

// How to get resources: kAuto reads the device compiler when it is found (nvcc for cuda and an
// sm_XX profile, hipcc for hip and a gfxNNN profile), kEstimate never runs it, kPtxas (the
// compiler's report: ptxas or hipcc) fails when it cannot.
enum class ResourceMode { kAuto, kEstimate, kPtxas };

// The nvcc to use: $CUDACXX, else nvcc in PATH, else /usr/local/cuda/bin/nvcc; "" when none.
std::string findNvcc();
// The hipcc to use: $HIPCXX, else hipcc in PATH, else /opt/rocm/bin/hipcc; "" when none.
std::string findHipcc();

// Compiles the kernels of several programs (report over several models) that the cache lacks in
// ONE compiler call, so that launchResources on each afterwards only reads the cache: one front
// end pass over the runtime headers for all, and a kernel two programs share compiled once. With
// kAuto a compiler failure is a warning (launchResources then reports it per program).
Status prefetchLaunchResources(const std::vector<const GpuEmitSummary*>& programs,
                               const DeviceProfile& device, const std::string& target,
                               ResourceMode mode, const Reporter& rep);

Expected<ResourceFeedback> launchResources(const GpuEmitSummary& program, const DeviceProfile& device,
                                           const std::string& target, ResourceMode mode,
                                           const Reporter& rep);

}  // namespace driver
}  // namespace magneto
