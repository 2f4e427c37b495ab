// The cost model behind ParallelCoOptimize (docs/DESIGN.md, parallel structures): how long
// one op takes as a kernel, how long a set of sibling ops takes as ONE joint kernel, and which tile
// configuration of each member makes the joint kernel fastest (co-tuning).
//
// Three layers, each usable alone (formulas in docs/COST_MODEL.md):
//
//   opWork         FLOPs and bytes of a node, and its GEMM view (Conv as implicit GEMM:
//                  M = N*OH*OW, N = out channels per group, K = C/group*KH*KW, batch = groups).
//   estimateKernel one launch of a tile program on a device profile: blocks = tiles, occupancy
//                  from registers / shared memory / threads / block limit, waves over the SMs,
//                  per-block time = max(compute, memory) under a tile-efficiency factor.
//   estimateJoint  one launch running every member's blocks: resources are the MAX over members
//                  (one occupancy for all), latency = launch + block-time over the slots with a
//                  wave-quantization tail, at least the longest block.
//   coTune         every member's tile chosen together for the joint latency, compared with the
//                  joint latency of per-member best tiles ("independently tuned").
//
// On a CPU profile (kind = cpu) tiles are ignored: an op is a parallel region costing
// max(compute, memory) + region overhead; a joint region pays the overhead once and runs each
// member whole on one core, biggest first, so it costs the makespan of that schedule.
//
// Everything is a pure function of (nodes, profile, tiles): deterministic, no global state. It is
// a model; `magnetoc tune` on a real GPU measures and its records win.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/target/device_profile.h"

namespace magneto {

// The GEMM a GEMM-like op is tiled as: `batch` independent M x N x K products (groups of a
// grouped conv, batch dims of a MatMul, one per time step and direction of an RNN).
struct GemmShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

// What a node costs, independent of any device.
struct OpWork {
  enum class Class {
    kGemm,    // tiled GEMM program (Conv, ConvTranspose, Gemm, MatMul, LSTM/GRU/RNN steps)
    kMemory,  // streaming over elements (elementwise, pools, reductions, norms, copies)
    kView,    // no kernel at all (Reshape, Flatten, Squeeze, Identity, ...)
  };
  Class cls = Class::kMemory;
  double flops = 0;            // useful floating-point operations (a multiply-add is 2)
  double bytes = 0;            // operands + results + weights read/written once
  double weightBytes = 0;      // the part of `bytes` that is constant operands
  int64_t elements = 0;        // parallel work items of a memory kernel (max of input/output numel)
  GemmShape gemm;              // kGemm only: one step's GEMM
  int64_t serialSteps = 1;     // RNNs: dependent steps (seq_len); each step is one GEMM of `gemm`
  bool halfPrecision = false;  // f16/bf16 operands: tensor/matrix-core peak applies
  std::string note;            // how it was counted ("implicit GEMM 1x64x3136x576", "fallback")
};

OpWork opWork(const Node& n);

// Gemm and MatMul whose smaller side (min(M, N) of the GEMM view) is at most this many rows get
// the GEMV tiles among their candidates (mg_gemv.cuh holds up to 16 rows in registers).
constexpr int64_t kGemvMaxRows = 16;
// Whether a GEMV of this GEMM runs transposed (Y^T = B^T A^T, rows = N): when N < M. The cost
// model and the lowering (codegen/gpu/lower_compute.cpp) must agree on it.
inline bool gemvTransposed(int64_t m, int64_t n) { return n < m; }

// A kernel's tile program and the resources one block of it needs. GEMM tiles have tileM/N/K;
// memory tiles have itemsPerThread (elements per block = threads * itemsPerThread). GEMV tiles
// (the split-K program for skinny Gemm/MatMul, mg_gemv.cuh) are GEMM tiles with tileK = 0: no K
// tile is staged, K is split across the block's threads; tileM is the rows of the small side
// (min(M, N): the lowering transposes the product when N < M), tileN the columns per block.
struct TileConfig {
  int tileM = 0, tileN = 0, tileK = 0;
  int itemsPerThread = 0;
  int warps = 0;  // of the device's warp size (32 NVIDIA, 64 AMD)
  int regsPerThread = 0;
  int smemBytes = 0;

  bool isGemm() const { return tileM > 0; }
  bool isGemv() const { return tileM > 0 && tileK == 0; }
  // "128x64x32 w8 r80 s48K", "gemv 1x8 w8 r32 s1K" or "items4 w8 r40 s0K".
  std::string str() const;
  bool operator==(const TileConfig& o) const;
  bool operator!=(const TileConfig& o) const { return !(*this == o); }
};

// The candidate tiles for a node on a device, in a fixed order, only those whose resources fit
// the device (registers per thread, shared memory per block, threads per SM). Empty on a CPU and
// for views.
std::vector<TileConfig> tileCandidates(const Node& n, const DeviceProfile& p);

struct KernelEstimate {
  bool valid = false;
  std::string reason;  // why invalid
  TileConfig tile;
  int64_t blocks = 0;
  int occupancy = 0;  // blocks per SM the resources allow
  int resident = 0;   // blocks per SM actually co-resident: min(occupancy, ceil(blocks/SMs))
  int64_t waves = 0;
  double blockUs = 0;  // time one block holds its slot (SM shared by `resident` blocks)
  double launchUs = 0;
  double latencyUs = 0;  // launch + waves * blockUs (GPU); overhead + max(compute, memory) (CPU)
  double flops = 0;      // executed, including tile padding
  double bytes = 0;
  bool computeBound = false;
  std::string str() const;
};

KernelEstimate estimateKernel(const Node& n, const DeviceProfile& p, const TileConfig& tile);
// The fastest candidate (first one on ties). On a CPU: the CPU model.
KernelEstimate bestKernel(const Node& n, const DeviceProfile& p);

struct JointEstimate {
  bool valid = false;
  std::string reason;
  std::vector<TileConfig> tiles;  // per member
  std::vector<int64_t> blocks;    // per member
  std::vector<double> blockUs;    // per member
  int64_t totalBlocks = 0;
  int threadsPerBlock = 0, regsPerThread = 0, smemBytes = 0;  // max over members
  int occupancy = 0, resident = 0;
  double launchUs = 0;
  double latencyUs = 0;
  // Filled by coTune: the joint latency when each member keeps its best-alone tile.
  std::vector<TileConfig> independentTiles;
  double independentLatencyUs = 0;
  int64_t combinations = 0;  // tile combinations evaluated
  bool exhaustive = false;   // else coordinate descent
  std::string str() const;
};

// One launch over all members, each with the given tile (tiles.size() == members.size()).
JointEstimate estimateJoint(const std::vector<const Node*>& members, const DeviceProfile& p,
                            const std::vector<TileConfig>& tiles);
// Chooses every member's tile together: exhaustive when the candidate product is at most
// kMaxExhaustiveCombinations, else coordinate descent from the per-member best tiles.
JointEstimate coTune(const std::vector<const Node*>& members, const DeviceProfile& p);
constexpr int64_t kMaxExhaustiveCombinations = 4096;

// Stacked recurrent layers run as one wavefront (a co-resident launch with progress flags: layer
// l step t beside layer l-1 step t+1; runtime/gpu/kernels/mg_recurrent.cuh). Each layer's step
// costs what its best kernel costs per step (the op's model already prices a step as the gates of
// [x_t, h_{t-1}], the input product included), plus kWavefrontHandshakeUs for the flag between
// neighbouring layers; the wavefront takes seq + layers - 1 steps of the slowest layer, in one
// launch. Invalid (with a reason) when the layers do not run as one (not a recurrent op, steps
// or batch differing) or the launch of layers*batch blocks does not fit on the device at once.
struct WavefrontEstimate {
  bool valid = false;
  std::string reason;
  int64_t steps = 0, blocks = 0, capacity = 0;  // blocks: layers*batch; capacity: co-resident
  int threads = 0, smemBytes = 0;
  double stepUs = 0;        // the slowest layer's step, handshake included
  double sequentialUs = 0;  // each layer's best kernel, one after another
  double latencyUs = 0;     // launch + (steps + layers - 1) * stepUs
};
constexpr double kWavefrontHandshakeUs = 0.8;  // a flag through L2 to another SM and back
constexpr int kWavefrontMaxHidden = 1024;      // shared memory 8*HMAX floats: 32 KiB
// The host (CPU target): each layer on its own core, its input projection in chunks of
// kWavefrontHostChunkRows rows (whole steps); a step waits on an atomic counter another core wrote.
constexpr int64_t kWavefrontHostChunkRows = 16;  // f_recurrent.cpp kWavefrontChunkRows
constexpr double kWavefrontHostHandshakeUs = 0.2;
WavefrontEstimate estimateWavefront(const std::vector<const Node*>& layers, const DeviceProfile& p);
// Blocks of `threads` threads and `smemBytes` of shared memory the device holds at once.
int64_t coResidentBlocks(int threads, int smemBytes, const DeviceProfile& p);

// No fusion: one launch per member, each with its best tile, one after another.
double sequentialLatency(const std::vector<const Node*>& members, const DeviceProfile& p);
// Each member's best kernel on its own stream: the bodies overlap (max when all blocks fit in one
// wave of the device, else the sum of their device-time shares); launches partially overlap.
double streamsLatency(const std::vector<const Node*>& members, const DeviceProfile& p);

// The CPU target: how many threads node `n` keeps busy as one step of a package (StepDesc::threads,
// runtime/cpu/mg_package.h): the model's cores for a lone op, floor(serial / kCpuMinChunkUs) at
// least 1, before the cap by the profile's core count (the package may run with another pool).
// 0: no limit (work for kCpuMaxStepThreads threads or more, a view, shapes known only at run
// time, or a GPU profile).
int cpuStepThreads(const Node& n, const DeviceProfile& p);
constexpr int kCpuMaxStepThreads = 64;

}  // namespace magneto
