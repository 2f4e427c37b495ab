// `magnetoc report MODEL.onnx`: what the parallel passes found and decided (docs/DESIGN.md,
// "Parallel structures"; docs/PARALLEL.md). Imports the model, runs the target's pipeline with the
// cost model of a device profile, and shows each ParallelGroup (members, strategy and why, kernel
// launches and modeled latency before -> after), the whole model's totals, and optionally JSON,
// Graphviz DOT and SVG.
//
// Totals (one device):
//   kernels_fused     every node that launches work (cost model class != view) counts 1, except
//                     that the members of a marked group count the group's kernelsAfter together;
//   latency fused     sum of bestKernel over the nodes counted above, each marked group's
//                     modeledUsAfter in place of its members;
//   kernels_unfused,  the same counts over the baseline graph: the same pipeline without the
//   latency unfused   parallel passes (wide-merge, parallel-co-optimize), i.e. --no-parallel-opt.
// A group whose pass recorded no modeled latency (wide-merge) gets after = its marked nodes'
// best kernels and before = its members' best kernels in the baseline graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "magneto/driver/commands.h"
#include "magneto/driver/resources.h"
#include "magneto/ir/graph.h"
#include "magneto/passes/passes.h"
#include "magneto/support/status.h"

namespace magneto {
namespace driver {

struct ReportOptions {
  CompileOptions compile;  // model, target (cpu|cuda|hip), shapes, passes, parallelOpt, common
  std::string device;      // "" = the target's default: cpu -> host, cuda -> h200, hip -> mi250x
  std::string jsonPath, dotPath, svgPath;  // "" = not written
  // cuda/hip: where each launch's registers and shared memory come from (--resources):
  // auto = ptxas when nvcc is found (driver/resources.h), else the cost model's estimates.
  ResourceMode resources = ResourceMode::kAuto;
  // More models after compile.model (`magnetoc report A.onnx B.onnx ...`): each reported in turn;
  // their kernels' resources come from one compiler call (prefetchLaunchResources), and --json
  // writes a JSON array of the reports.
  std::vector<std::string> moreModels;
  // Leave Report::resources empty and keep the program in Report::program (reportModel fills the
  // resources of several models after one prefetch).
  bool deferResources = false;
};

struct ReportGroup {
  int id = 0;
  ParallelGroup group;
};

struct Report {
  std::string model;     // the path given
  std::string device;    // profile name
  std::string deviceDescription;
  std::string target;
  std::string pipeline;
  int nodes = 0;
  int kernelsUnfused = 0, kernelsFused = 0;
  double latencyUnfusedUs = 0, latencyFusedUs = 0;
  std::vector<ReportGroup> groups;  // by id
  // cuda/hip: every launch of the generated program with its resources and occupancy.
  bool hasLaunches = false;
  ResourceFeedback resources;
  std::shared_ptr<GpuEmitSummary> program;  // ReportOptions::deferResources: the launches to price
  std::unique_ptr<Graph> graph;     // after the pipeline
  // A quantized model: the ops left in float32 between DequantizeLinear and QuantizeLinear.
  std::vector<QdqFloatOp> floatInQdq;
  int integerOps = 0;  // QLinearConv, MgQuantizedAdd and byte MaxPools the pipeline made or kept
};

// The device a target reports on when --device is not given.
std::string defaultReportDevice(const std::string& target);

// Import + pipeline + totals; writes nothing.
Expected<Report> buildReport(const ReportOptions& opts);

// The human table (what `magnetoc report` prints on stdout).
std::string formatReport(const Report& r);
// JSON: model, device, target, pipeline, kernels_unfused, kernels_fused,
// modeled_latency_us {unfused, fused}, groups [{id, members, strategy, reason, kernels_before,
// kernels_after, modeled_us_before, modeled_us_after}]; a quantized model: integer_ops and
// float_between_qdq [{node, op, why}]; cuda/hip: resources and launches [...],
// a --opt variant launch with opt_variant {point, binding, instead_of, general_tiles, modeled_us,
// general_modeled_us} (docs/GPU_TARGET.md).
std::string reportJson(const Report& r);
// Graphviz DOT: one box per node ("name\nop"), edges by tensor, each marked group a coloured
// cluster labelled "#k strategy".
std::string graphDot(const Graph& g);

// The command: buildReport, print formatReport, write --json / --dot / --svg (dot -Tsvg).
Status reportModel(const ReportOptions& opts);

}  // namespace driver
}  // namespace magneto
