// Resource feedback from the real device compiler (docs/GPU_TARGET.md, "Resource feedback"): the
// registers, spills and shared memory of every launch of a cuda package, read from ptxas for the
// device profile's architecture, and the occupancy they allow on that profile.
//
// Each distinct kernel of the program (GpuEmitSummary::kernelUnits) is compiled once by nvcc
// (-cubin -Xptxas -v, the profile's sm_XX), together with a probe whose mangled name carries the
// kernel's dynamic shared memory (a constexpr of the block programs' template arguments). Results
// are cached per kernel in the cache folder (MAGNETO_CACHE_DIR), keyed by the kernel's text with
// package-specific names made canonical (launch7 -> one name, F12_0 -> FN0, comments dropped),
// the runtime's text, nvcc's version and the flags: the many models that share a convolution tile
// compile it once. The kernels missing from the cache are compiled in one nvcc call.
//
// Without nvcc (or for hip, whose compiler's resource report is not read yet) every launch keeps
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
  int threads = 0;
  int registers = 0;
  int64_t spillBytes = 0;  // spill stores + spill loads (0: no spilling)
  int64_t smemBytes = 0;   // static + dynamic shared memory per block
  double occupancy = 0;    // resident warps / maximum warps per SM
  int blocksPerSm = 0;
  std::string limiter;     // what bounds the occupancy (kernelOccupancy)
  std::string source;      // "ptxas" or "estimate"
  // The cost model's own figures for the same launch (its tiles' registers and shared memory, the
  // largest over a joint kernel's members), whatever `source` is: where ptxas differs, the tile
  // model is off.
  int estimatedRegisters = 0;
  int64_t estimatedSmemBytes = 0;
  double estimatedOccupancy = 0;
};

struct ResourceFeedback {
  std::vector<LaunchResources> launches;  // in forward order
  std::string source;                     // "ptxas" or "estimate"
  std::string note;                       // why estimates (no nvcc, hip, a failed compile), or ""
  int kernelsCompiled = 0, kernelsCached = 0;
};

// How to get resources: kAuto reads ptxas when nvcc is found (target cuda, an sm_XX profile),
// kEstimate never runs it, kPtxas fails when it cannot.
enum class ResourceMode { kAuto, kEstimate, kPtxas };

// The nvcc to use: $CUDACXX, else nvcc in PATH, else /usr/local/cuda/bin/nvcc; "" when none.
std::string findNvcc();

Expected<ResourceFeedback> launchResources(const GpuEmitSummary& program, const DeviceProfile& device,
                                           const std::string& target, ResourceMode mode,
                                           const Reporter& rep);

}  // namespace driver
}  // namespace magneto
