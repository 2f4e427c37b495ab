// Device profiles: what the cost model knows about a target, read from small data files so that a
// new device is one dropped file (devices/NAME.profile), never a code change.
//
// Format (docs/COST_MODEL.md): one `key = value` per line, `#` starts a comment, blank lines are
// ignored. Every key is known to the loader: an unknown key, a malformed line, a repeated key, a
// bad number or a missing required key is an error naming `file:line`. `sm_count = auto` (and
// `fp32_tflops = auto` on a CPU) are resolved when the file is loaded, from
// std::thread::hardware_concurrency and clock * cores * fp32_flops_per_cycle.
//
// Units are the ones vendors print: GHz, TFLOP/s, GB/s (1e9 bytes), MB, KB (1024 bytes), us.
// For a CPU, "SM" means a core; the GPU-only keys (registers, shared memory, warps) default to 0.
#pragma once

#include <string>
#include <vector>

#include "magneto/support/status.h"

namespace magneto {

enum class DeviceKind { kGpu, kCpu };

struct DeviceProfile {
  std::string name;  // "h200"
  DeviceKind kind = DeviceKind::kGpu;
  std::string vendor;  // "nvidia", "amd", "intel", ...
  std::string arch;    // "sm_90", "gfx90a", "x86-64"
  std::string source;  // the file it was loaded from (or "<text>")
  std::string description;

  int smCount = 0;  // SMs (NVIDIA), CUs (AMD), cores (CPU)
  double clockGhz = 0;
  double fp32Tflops = 0;  // non-tensor-core FP32 peak
  double fp16Tflops = 0;  // dense FP16 tensor/matrix-core peak (0: same as fp32)
  double memBandwidthGbs = 0;
  double l2Mb = 0;
  int regsPerSm = 0;  // 32-bit registers per SM / CU
  int maxRegsPerThread = 0;
  double smemPerSmKb = 0;  // shared memory (LDS) per SM / CU
  double maxSmemPerBlockKb = 0;
  int maxThreadsPerSm = 0;
  int maxBlocksPerSm = 0;
  int warpSize = 32;
  double launchOverheadUs = 0;       // one kernel launch (or one parallel region on a CPU)
  double graphLaunchOverheadUs = 0;  // one kernel inside a captured CUDA/HIP graph
  double fp32FlopsPerCycle = 0;      // CPU only: per core (32 = one 512-bit FMA port)
  // Occupancy granularity (include/magneto/target/resource_usage.h); optional, the defaults
  // allocate exactly what a kernel uses.
  int regAllocUnit = 1;          // registers per warp are allocated in units of this many
  int regPartitions = 1;         // the SM's register file is this many equal parts (schedulers)
  int smemAllocUnit = 1;         // shared memory per block is allocated in units of this many bytes
  int smemReservedPerBlock = 0;  // bytes of shared memory the system takes per resident block

  bool isGpu() const { return kind == DeviceKind::kGpu; }
  bool isCpu() const { return kind == DeviceKind::kCpu; }
  // Peak FP32 FLOP per microsecond of one SM (or core).
  double fp32FlopsPerSmUs() const { return fp32Tflops * 1e6 / smCount; }
  double fp16FlopsPerSmUs() const {
    return (fp16Tflops > 0 ? fp16Tflops : fp32Tflops) * 1e6 / smCount;
  }
  // Bytes per microsecond of the whole device.
  double bytesPerUs() const { return memBandwidthGbs * 1e3; }
};

// The same device with every launch costing graph_launch_overhead_us: the model of a forward pass
// captured in a CUDA/HIP graph (docs/DESIGN.md, streams). Pass it to any cost-model call.
DeviceProfile capturedInGraph(const DeviceProfile& p);

// Parses profile text; `fileName` names errors ("h200.profile:12: unknown key 'smcount'").
Expected<DeviceProfile> parseDeviceProfile(const std::string& text, const std::string& fileName);

// Loads a profile by name ("h200": devices/h200.profile in the search path) or by path (anything
// containing '/' or ending in ".profile"). Search path, in order: $MAGNETO_DEVICES (a directory),
// $MAGNETO_HOME/share/magneto/devices, <executable>/../share/magneto/devices (an installed
// magnetoc), the source tree's devices/.
Expected<DeviceProfile> loadDeviceProfile(const std::string& nameOrPath);

// Names of the profiles found in the search path, sorted, without duplicates.
std::vector<std::string> listDeviceProfiles();

// The directories searched, in order (those that exist).
std::vector<std::string> deviceProfileDirs();

}  // namespace magneto
