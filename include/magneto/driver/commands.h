// The magnetoc commands as library functions: compile, check, bench. tools/magnetoc.cpp parses
// the command line (src/driver/cli.cpp) and calls these; tests may call them directly.
//
// Pipeline of every command: importOnnx -> runPipeline (the target's default pipeline or
// --passes; the verifier after each pass with --verify-each and in debug builds) -> memory plan
// -> package -> (build) -> (run).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "magneto/codegen/package.h"
#include "magneto/driver/process.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {
namespace driver {

struct CommonOptions {
  int verbosity = 1;                 // 0: -q, 1: default, 2: -v
  std::set<std::string> printAfter;  // pass names, "import", or "*"
  std::set<std::string> debugOnly;
  bool verifyEach = false;
};

struct CompileOptions {
  std::string model;
  std::string outDir;
  std::string target = "cpu";
  std::string arch;  // cpu: the -march of fast builds ("" = native); cuda/hip: architectures
  std::string device;  // cost-model profile ("" = the target's default: host, h200, mi250x)
  std::string name;  // "" = from the model's file name
  std::map<std::string, Dims> shapes;
  // Dynamic dimensions (--dynamic NAME=LO..HI, --opt NAME=V,...): docs/DYNAMIC_SHAPES.md.
  std::vector<DimSymbol> dynamic;
  std::map<std::string, Tensor> bindings;  // check binds shape-determining inputs
  // Sequence inputs' element types (ImportOptions::sequenceInputs; check takes them from the data).
  std::map<std::string, std::vector<TensorType>> sequenceInputs;
  // What optional inputs hold (ImportOptions::optionalInputs; check takes it from the data).
  std::map<std::string, OptionalInput> optionalInputs;
  bool weightsFile = false;
  std::string passes;  // "" = the default pipeline
  bool passesGiven = false;
  bool parallelOpt = true;
  bool build = false;
  bool shared = false;  // cpu: also build OUT_DIR/libNAME.so the fast way (what NAME.py loads)
  std::string tuningFile;  // cuda/hip: a record from magnetoc tune ("" = the cost model's tiles)
  int tuneVariant = -1;    // tune's builds: every launch takes its candidate of this rank
  // "fp32" or "fp16" (cuda only: float16 activations and weights, GEMM/MatMul/Conv on tensor cores)
  std::string precision = "fp32";
  CommonOptions common;
};

struct CompileResult {
  std::string outDir;
  std::string name;
  PackageSummary summary;
  std::unique_ptr<Graph> graph;  // the graph the package was generated from
  std::vector<std::string> inputNames, outputNames;  // the model's, by position
};

// Checks that the target is one of "cpu", "cuda", "hip".
// Dynamic dimensions: every target compiles them (cpu, cuda and hip); an unknown target is refused.
Status checkDynamicTarget(const std::string& target, const std::vector<DimSymbol>& dynamic);
// Parses "NAME=LO..HI" (--dynamic) / "NAME=V1,V2,..." (--opt).
Expected<DimSymbol> parseDynamicFlag(const std::string& text);
Status addOptFlag(const std::string& text, std::vector<DimSymbol>* dynamic);
Status checkTarget(const std::string& target);
// Checks --precision: "fp32" anywhere, "fp16" on cuda only (unsupported on hip and cpu).
Status checkPrecision(const std::string& target, const std::string& precision);

Expected<CompileResult> compileModel(const CompileOptions& opts);

struct CheckOptions {
  CompileOptions compile;  // outDir unused (work dir)
  std::vector<std::string> dataDirs;
  bool emulate = false;
  // --emulate-order: run the emulated package once per order (forward, reverse, random[:SEED]),
  // each checked against the data; empty: once, in the default order.
  std::vector<std::string> emulateOrders;
  // --racecheck: with --emulate, build the package with ThreadSanitizer (clang++) so that a data
  // race between emulated GPU threads fails the check (runtime/gpu/mg_emu_context.h).
  bool racecheck = false;
  double rtol = 1e-3;
  double atol = 1e-4;
  // --atol NAME=A: the absolute tolerance of output NAME (a model whose outputs differ in scale,
  // such as probabilities beside their logits); the others keep atol.
  std::map<std::string, double> outputAtol;
  // --unordered-rows A,B,...: outputs whose rows (axis 0) are compared as one multiset of tuples
  // (a detector's boxes, scores and labels, sorted by near-equal scores; driver/compare.h).
  std::vector<std::vector<std::string>> unorderedRows;
  int threads = 1;
  std::string workDir;  // "" = a temporary folder, removed afterwards
};

// What a check that compared found. kPass: every output of every data set within tolerance, and
// the package computes them from run-time inputs. kFail: some output out of tolerance or
// mismatched. kFolded: every output matched, but once the shape-deciding inputs were bound the
// package reads no run-time input (every output a constant): the run tested only constant
// folding, which is not a pass (`magnetoc check` exits 5).
enum class CheckStatus { kPass, kFail, kFolded };
Expected<CheckStatus> checkModel(const CheckOptions& opts);

// The race check's findings in a run's output (ThreadSanitizer's reports), cut to what names each
// race: its kind, both accesses with their innermost frame, the emulated threads' names (block and
// thread index); at most 5 reports, then a closing "race check: N data race report(s) ... [FAIL]"
// line. Empty when the output holds no report.
std::string summarizeRaceReports(const std::string& output);

struct BenchOptions {
  CompileOptions compile;
  int threads = 2;
  int runs = 20;
  int warmup = 3;
  bool emulate = false;  // cuda/hip: time the CPU emulation (a plumbing test, not a GPU figure)
  bool deviceTime = false;  // cuda/hip: time the forward pass alone with device events
  bool profile = false;     // cpu: MAGNETO_PROFILE=1 for the timed runs (per-op-kind and per-step tables)
  std::string workDir;  // "" = <cache>/bench
  // With --dynamic: the shapes to time the one library at, in turn (the k-th --shape of each
  // input; an input missing from a later set keeps its shape of the set before). One set (or
  // none) is the plain single timing.
  std::vector<std::map<std::string, Dims>> shapeRuns;
};

// Prints latencies; median_ms=X is the last line on stdout.
Status benchModel(const BenchOptions& opts);

struct TuneOptions {
  CompileOptions compile;  // target cuda or hip; outDir unused
  std::string output;      // -o RECORD.json
  int variants = 4;        // candidate ranks built and timed
  int runs = 20;           // profiled forward passes per variant (median per launch)
  bool emulate = false;    // time the CPU emulation: the plumbing works, the figures mean nothing
  std::string workDir;     // "" = a temporary folder, removed afterwards (kept with -v)
};

// Builds the model once per tile-candidate rank, times every launch of each, and writes the
// fastest tiles per launch to a record for compile --tuning (include/magneto/target/tuning.h).
Status tuneModel(const TuneOptions& opts);

}  // namespace driver
}  // namespace magneto
