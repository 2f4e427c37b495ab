// The package writer: turns a planned graph into a self-contained folder that builds with CMake
// alone (see docs and codegen/templates/TARGET/ for what each file looks like).
//
//   OUT/NAME.h           the C interface          OUT/NAME.cpp        generated tables + glue
//   OUT/NAME_weights.bin weights blob             OUT/NAME_weights.S  .incbin of the blob
//   OUT/runtime/         copy of the runtime      OUT/CMakeLists.txt  library, runner, install
//   OUT/NAME_runner.cpp  runner used by check     OUT/NAME-config.cmake, README.md, report.json
//
// Output is deterministic: the same graph and options give byte-identical files (no timestamps,
// no absolute paths). Text files are rewritten only when their content changes, so rebuilding a
// package after recompiling the same model does no work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "magneto/analysis/memory_plan.h"
#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "magneto/target/tuning.h"

namespace magneto {

struct PackageOptions {
  std::string name;             // a C identifier: prefix of every symbol of the package
  std::string target = "cpu";
  std::string model;            // the model's file name (no folder), for comments and report
  std::string passes;           // the pipeline that ran, for report.json
  bool embedWeights = true;     // false: --weights-file
  std::string arch;             // cuda/hip: GPU architectures ("" = sm_80;sm_90 / gfx90a)
  std::string device = "h200";  // cuda/hip: the cost model's profile for tiles and joint kernels
  // The model's input and output names, by position (passes may rename the values that carry
  // them; the package's interface keeps the ONNX names). Empty: the values' names.
  std::vector<std::string> inputNames, outputNames;
  // cuda/hip: measured tiles (compile --tuning) or a forced candidate rank (tune); null: the
  // cost model's tiles.
  const TuningChoice* tuning = nullptr;
  // "fp32", or "fp16" (target cuda: GEMM/MatMul/Conv use the tensor-core programs)
  std::string precision = "fp32";
};

struct PackageSummary {
  int steps = 0;
  int aliasedViews = 0;
  int concatOperandsInPlace = 0;  // Concat operands their producers write in place
  int concatsElided = 0;          // Concats that run no step (every operand in place)
  int64_t arenaBytes = 0;
  int64_t weightsBytes = 0;
  uint64_t weightsChecksum = 0;
  int launches = 0, jointLaunches = 0;  // GPU targets: kernels per run, joint ones among them
  int kernels = 0;                      // GPU targets: distinct __global__ functions
  int tunedLaunches = 0;                // GPU targets: launches with measured/forced tiles
  std::vector<std::string> launchKeys;  // GPU targets, per launch (see GpuEmitSummary)
  std::vector<int> launchCandidates;
  std::vector<double> launchModeledUs;
  std::vector<std::vector<TileConfig>> launchTiles;
  std::vector<std::string> files;  // written (or unchanged) files, relative to the folder
};

// True for [A-Za-z_][A-Za-z0-9_]*, at most 64 characters.
bool isValidPackageName(const std::string& name);
// A valid package name derived from a model path ("models/resnet-50.onnx" -> "resnet_50").
std::string packageNameFromPath(const std::string& path);

// True for "cuda" and "hip": one GPU dialect, templates and runtime in .../gpu.
bool isGpuTarget(const std::string& target);

// Errors (bad input or unsupported) for anything the target cannot run: an op without a kernel
// (naming the node), a tensor of rank above the runtime's limit, a string tensor.
Status checkTargetSupport(const Graph& g, const MemoryPlan& plan, const std::string& target);

// Writes the package for `g` (verified, planned with `plan`) into `outDir` (created if needed).
Expected<PackageSummary> writePackage(const Graph& g, const MemoryPlan& plan,
                                      const PackageOptions& opts, const std::string& outDir);

// Writes `content` to `path` unless the file already holds exactly that; creates folders.
Status writeFileIfChanged(const std::string& path, const std::string& content);

}  // namespace magneto
