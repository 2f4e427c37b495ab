// The GPU emitter: the program of a generated NAME.cu (targets cuda and hip; one source for both
// and for the CPU emulation) as template values for codegen/templates/gpu/NAME.cu.in.
//
// Every step of the memory plan is lowered to block programs (codegen/gpu/gpu_lowering.h). Steps
// become launches:
//   - a step alone: one __global__ kernel running its item(s) (a Concat's copies share it);
//   - the members of a parallel group with strategy "joint" (pass parallel-co-optimize; they are
//     contiguous in the schedule): ONE __global__ kernel whose block ranges run each member's
//     program, with every member's tile chosen together by the cost model (coTune) for the
//     target's device profile. This is the joint kernel of docs/DESIGN.md.
// Each launch has an argument struct (the params of its items and the block-range ends) that
// lives in device memory, filled once when a handle is created; the forward pass is a fixed
// sequence of launches, so it can be captured in a CUDA/HIP graph.
#pragma once

#include <string>
#include <vector>

#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/template.h"
#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "magneto/target/device_profile.h"
#include "magneto/target/tuning.h"

namespace magneto {

// One distinct __global__ function of the program, as text that compiles on its own after
// runtime/kernels/mg_kernels.cuh and mgMax (what the resource feedback of
// include/magneto/driver/resources.h hands to ptxas): the functors its items name, its argument
// struct, the kernel, and the C++ expression of its dynamic shared memory (constexpr).
struct GpuKernelUnit {
  std::string name;      // "launch3": the kernel's name and, with "Args" after an "L", its struct's
  std::string functors;  // struct definitions the programs name ("" when none)
  std::string argsStruct;
  std::string kernel;    // "__global__ void __launch_bounds__(T) launch3(const L3Args* ...) {...}"
  std::string smemExpr;  // "mgMax(mgMax(0, mgk::convSmemBytes<32, 32, 128>()), ...)"
  int threads = 0;       // the block size (__launch_bounds__)
};

// One launch of the forward pass, for reports: the kernel it runs (an index into
// GpuEmitSummary::kernelUnits) and the ONNX nodes it computes.
struct GpuLaunchInfo {
  std::string name;                  // "launch7"
  int kernel = 0;                    // index into kernelUnits
  std::vector<std::string> members;  // node names (kinds where a node has no name)
  int threads = 0;
  // A --opt variant (dynamic graphs, docs/DYNAMIC_SHAPES.md "cuda and hip"): the opt point it
  // runs at (-1: a general launch), that binding ("batch=1"), the general launch's tiles it
  // replaces there (TileConfig::str, "" for the default GEMM tile) and the cost model's latency
  // at that binding of the variant's tiles and of the general ones (NaN: no estimate).
  int optPoint = -1;
  std::string optBinding;
  std::vector<std::string> generalTiles;
  double optModeledUs = 0, generalModeledUs = 0;
};

struct GpuEmitSummary {
  int launches = 0;       // kernels per forward pass
  int jointLaunches = 0;  // of which joint kernels of parallel groups
  int kernels = 0;        // distinct __global__ functions (launches of the same programs share one)
  int sideStreams = 0;    // streams for the members of `streams` groups (0: one stream)
  int tunedLaunches = 0;  // launches whose tiles came from a tuning record or a forced variant
  // Per generated launch, for tune: the key (launchKey) of the plan launch it comes from (a
  // recurrent node's phases share one), that launch's candidate count and modeled latency.
  std::vector<std::string> launchKeys;
  std::vector<int> launchCandidates;
  std::vector<double> launchModeledUs;  // the cost model's latency of the tiles used
  std::vector<std::vector<TileConfig>> launchTiles;  // the tiles used, per member
  int steps = 0;
  std::vector<GpuKernelUnit> kernelUnits;  // the distinct kernels, in order of first use
  std::vector<GpuLaunchInfo> launchInfo;   // per launch, in forward order
};

// Fills the GPU template's keys (FUNCTORS, LAUNCH_STRUCTS, KERNELS, PARAMS_FIELDS, INIT_PARAMS,
// FORWARD, NUM_LAUNCHES, LAUNCH_TABLE) plus the slot/port/copy tables that the CPU emitter
// writes (the host side of both packages reads them the same way).
// `tuning`: measured tiles (compile --tuning) or a forced candidate rank (tune's variants); null:
// the cost model's tiles. `fp16`: GEMM/MatMul/Conv use the tensor-core programs (gemmF16Block,
// convF16Block; --precision fp16, cuda only). Launches whose recorded tiles are no longer candidates on `device` fall
// back to the cost model (GpuEmitSummary::tunedLaunches counts those that did not).
Expected<GpuEmitSummary> emitGpuProgram(const Graph& g, const MemoryPlan& plan,
                                        const DeviceProfile& device, TemplateVars& vars,
                                        const std::vector<std::string>& inputNames = {},
                                        const std::vector<std::string>& outputNames = {},
                                        const TuningChoice* tuning = nullptr,
                                        bool fp16 = false);

// The first step of `plan` that the GPU targets cannot lower, as an error naming the node; ok
// when every step can be lowered.
Status checkGpuSupport(const MemoryPlan& plan);

// The ops that the GPU targets have a lowering for: the entries of codegen/gpu/lowering_table.cpp,
// in table order.
std::vector<std::string> gpuLoweredOps();
// Whether the cuda/hip lowering of n reads and writes float16 storage (--precision fp16's half
// activations, passes/half_storage.cpp): its programs take the storage type as a parameter.
bool gpuReadsHalfStorage(const Node& n);
// Whether the cuda/hip targets compute op's data-dependent extents at run time (NonZero, Compress:
// codegen/gpu/lower_select.cpp); the other producers stay cpu-only (docs/DYNAMIC_SHAPES.md).
bool gpuProducesDataExtent(const std::string& op);
std::vector<std::string> gpuDataExtentOps();  // those ops

}  // namespace magneto
