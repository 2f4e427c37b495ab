// The magnetoc command line (see include/magneto/driver/cli.h). Every flag is declared once, as
// data (name, value, help, example), and both the parser and --help read that table, so the help
// can never forget a flag.
#include "magneto/driver/cli.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "magneto/driver/commands.h"
#include "magneto/driver/regress.h"
#include "magneto/driver/report.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/passes/pass.h"
#include "magneto/target/device_profile.h"

#ifndef MAGNETO_VERSION
#define MAGNETO_VERSION "0.0.0"
#endif

namespace magneto {
namespace driver {
namespace {

enum Scope : unsigned {
  kCompile = 1u << 0,
  kCheck = 1u << 1,
  kBench = 1u << 2,
  kReport = 1u << 3,
  kRegress = 1u << 4,
  kTune = 1u << 5,
  kModel = kCompile | kCheck | kBench,  // flags that shape the compiled model
  kAll = kModel | kReport,
};

struct Flag {
  const char* name;
  const char* alias;  // short form or nullptr
  const char* value;  // metavariable, nullptr for a switch
  unsigned scope;
  const char* help;
  const char* example;
};

const Flag kFlags[] = {
    {"--output", "-o", "OUT_DIR", kCompile | kTune,
     "compile: folder to write the package to (created if needed); tune: the record file (JSON)",
     "-o out/resnet"},
    {"--target", nullptr, "T", kModel | kReport | kRegress | kTune,
     "code generation target: cpu (default), cuda (NVIDIA, nvcc) or hip (AMD, hipcc)",
     "--target cpu"},
    {"--arch", nullptr, "ARCH", kModel | kRegress | kTune,
     "target architecture: for cpu the -march of check/bench builds (default native; the "
     "package's CMake has option NAME_NATIVE); for cuda the SM list (default sm_80,sm_90); for "
     "hip the offload archs (default gfx90a)",
     "--arch x86-64-v3"},
    {"--name", nullptr, "NAME", kModel,
     "package name, a C identifier prefixing every symbol (default: from the model's file name)",
     "--name resnet50"},
    {"--shape", nullptr, "INPUT=DIMS", kModel | kReport | kTune,
     "fix the shape of an input with symbolic dimensions (repeatable); 'scalar' for rank 0",
     "--shape input=1x3x224x224"},
    {"--dynamic", nullptr, "NAME=LO..HI", kModel | kReport | kRegress,
     "keep the model's symbolic dimension NAME (a dim_param) dynamic over LO..HI (every target): "
     "one library for every value, memory planned for HI, input dims set at run time "
     "(NAME_set_input_dims; repeatable; docs/DYNAMIC_SHAPES.md)",
     "--dynamic batch=1..32"},
    {"--opt", nullptr, "NAME=V1,V2", kModel | kReport | kRegress,
     "values of a --dynamic dimension to check and tune for (repeatable)", "--opt batch=1,8"},
    {"--bind", nullptr, "INPUT=FILE.pb", kCompile | kReport,
     "compile the input as a constant: its value from a TensorProto file (repeatable). For inputs "
     "that decide output shapes (NonMaxSuppression's boxes and scores, a Range's limits): the "
     "package is compiled for that value and no longer takes the input, as check does with its data",
     "--bind boxes=test_data_set_0/input_0.pb"},
    {"--precision", nullptr, "P", kModel | kTune,
     "fp32 (default) or fp16: with --target cuda, activations and weights are stored in float16 "
     "(inputs and outputs stay fp32), GEMM, MatMul and Conv run on tensor cores (wmma, sm_70 and "
     "newer), and everything accumulates and computes in fp32; ops without a float16 program keep "
     "fp32 with casts around them (listed). check's default tolerance becomes rtol 2e-2, atol 2e-3. "
     "Not supported for hip or cpu (exit status 2)",
     "--precision fp16"},
    {"--weights-file", nullptr, nullptr, kModel,
     "do not embed the weights: NAME_create(&m, PATH) loads NAME_weights.bin at run time",
     "--weights-file"},
    {"--passes", nullptr, "LIST", kModel | kReport | kTune,
     "run these passes (comma separated) instead of the target's default pipeline",
     "--passes fold,dce"},
    {"--no-parallel-opt", nullptr, nullptr, kModel | kReport | kRegress | kTune,
     "leave out the parallel-branch optimizations of the default pipeline", "--no-parallel-opt"},
    {"--device", nullptr, "PROFILE", kModel | kReport | kTune,
     "device profile of the cost model that picks tiles and joint kernels (name in devices/ or a "
     ".profile path; default: h200 for cuda, mi250x for hip, host for cpu)",
     "--device h100"},
    {"--json", nullptr, "FILE", kReport, "also write the report as JSON", "--json report.json"},
    {"--resources", nullptr, "MODE", kReport,
     "cuda/hip: where each launch's registers, spills and shared memory come from: auto (default; "
     "the device compiler when found: ptxas through nvcc for cuda, hipcc's resource remarks for "
     "hip, each distinct kernel compiled once and cached in MAGNETO_CACHE_DIR), ptxas or hipcc "
     "(the target's compiler, fail without it) or estimate (the cost model's, no compiler)",
     "--resources estimate"},
    {"--dot", nullptr, "FILE", kReport, "also write the graph as Graphviz DOT, groups as clusters",
     "--dot graph.dot"},
    {"--svg", nullptr, "FILE", kReport, "also render the graph with Graphviz (dot -Tsvg)",
     "--svg graph.svg"},
    {"--build", nullptr, nullptr, kCompile,
     "also build the package with its own CMake (OUT_DIR/build)", "--build"},
    {"--shared", nullptr, nullptr, kCompile,
     "cpu: also build OUT_DIR/libNAME.so, the shared library NAME.py (the package's Python "
     "loader) uses, against the runtime cached in MAGNETO_CACHE_DIR (seconds, not the CMake "
     "build's minute)",
     "--shared"},
    {"--data", nullptr, "DIR", kCheck,
     "a test data folder with input_K.pb and output_K.pb (repeatable)",
     "--data model/test_data_set_0"},
    {"--emulate", nullptr, nullptr, kCheck | kBench | kRegress | kTune,
     "build cuda/hip packages for the CPU emulation and run them there (no GPU needed; no effect "
     "for --target cpu)",
     "--emulate"},
    {"--emulate-order", nullptr, "LIST", kCheck | kRegress,
     "with --emulate: run the package once per order of a block's threads and a grid's blocks "
     "(forward, reverse, random[:SEED]; comma-separated), each checked against the data; a GPU "
     "promises no order, so a result that changes with it has a missing barrier or a race",
     "--emulate-order forward,reverse,random:7"},
    {"--racecheck", nullptr, nullptr, kCheck | kRegress,
     "with --emulate: build the package with ThreadSanitizer (clang++) and fail on a data race "
     "between emulated GPU threads (a write and another thread's access of the same shared or "
     "global address with no barrier, warp step or atomic between them), naming both threads "
     "and source lines; about 5-15x slower",
     "--emulate --racecheck"},
    {"--rtol", nullptr, "R", kCheck | kRegress,
     "relative tolerance (default 1e-3, 2e-2 with --precision fp16; regress: the model's meta.json, else 1e-3)", "--rtol 1e-2"},
    {"--atol", nullptr, "A", kCheck | kRegress,
     "absolute tolerance (default 1e-4, 2e-3 with --precision fp16; regress: the model's meta.json, else 1e-4); check: OUTPUT=A sets one output's (repeatable)", "--atol 1e-5"},
    {"--unordered-rows", nullptr, "OUT,OUT...", kCheck,
     "compare these outputs (same extent on axis 0) as one set of rows in any order: row r is the "
     "tuple of their slices r, each expected row paired with a computed one within tolerance "
     "(a detector's boxes,scores,labels, sorted by scores that differ in the 7th digit; "
     "repeatable, one group each)", "--unordered-rows boxes,scores,labels"},
    {"--threads", nullptr, "N", kCheck | kBench | kRegress,
     "threads the model runs on (default: 1 for check, 2 for bench)", "--threads 4"},
    {"--device-time", nullptr, nullptr, kBench,
     "cuda/hip: time the forward pass alone with device events (no host copies), as CUDA events "
     "around a framework's forward do; without it a run includes copying inputs and outputs",
     "--device-time"},
    {"--profile", nullptr, nullptr, kBench,
     "cpu: time every step of the timed runs and print where the time goes: per op kind, then "
     "the slowest steps (the package's MAGNETO_PROFILE=1)",
     "--profile"},
    {"--runs", nullptr, "N", kBench | kTune, "timed runs (default 20; tune: per variant, median per launch)",
     "--runs 50"},
    {"--tuning", nullptr, "RECORD.json", kModel,
     "cuda/hip: use the tiles magnetoc tune measured (per launch, where still valid); the cost "
     "model picks the rest",
     "--tuning tuned.json"},
    {"--variants", nullptr, "K", kTune,
     "tile-candidate ranks built and timed per launch (default 4; rank 0 is the cost model's choice)",
     "--variants 3"},
    {"--warmup", nullptr, "N", kBench, "untimed runs first (default 3)", "--warmup 5"},
    {"--work-dir", nullptr, "DIR", kCheck | kBench | kTune,
     "folder for packages and builds (check: default a temporary folder, removed unless -v; "
     "bench: default the cache folder, builds reused by model hash)",
     "--work-dir /tmp/mg"},
    {"--junit", nullptr, "FILE", kRegress, "also write the results as JUnit XML (for CI systems)",
     "--junit regress.xml"},
    {"--jobs", "-j", "N", kRegress, "models checked at the same time (default 1)", "--jobs 2"},
    {"--timeout", nullptr, "SECONDS", kRegress,
     "a model still running after this long fails as timed out (default 1800; 0: no limit)",
     "--timeout 600"},
    {"--print-ir-after", nullptr, "PASS", kAll,
     "print the IR after PASS ('import' for the imported graph; repeatable)",
     "--print-ir-after=fold"},
    {"--print-ir-after-all", nullptr, nullptr, kAll, "print the IR after import and every pass",
     "--print-ir-after-all"},
    {"--debug-only", nullptr, "PASS", kAll, "trace the decisions of PASS on stderr",
     "--debug-only=parallel-analysis"},
    {"--verify-each", nullptr, nullptr, kAll,
     "run the IR verifier after every pass (always on in debug builds)", "--verify-each"},
    {"--verbose", "-v", nullptr, kAll | kRegress | kTune, "more detail: import notes, commands run, per-run times",
     "-v"},
    {"--quiet", "-q", nullptr, kAll | kRegress | kTune, "no progress lines on stderr", "-q"},
    {"--help", "-h", nullptr, kAll | kRegress | kTune, "this help", "--help"},
};

struct Command {
  const char* name;
  Scope scope;
  const char* usage;
  const char* summary;
};

const Command kCommands[] = {
    {"compile", kCompile,
     "magnetoc compile MODEL.onnx -o OUT_DIR [--target cpu|cuda|hip] [--arch ARCH] [--name NAME]\n"
     "        [--shape INPUT=DIMS]... [--bind INPUT=FILE.pb]... [--weights-file] [--passes LIST]\n"
     "        [--no-parallel-opt] [--build] [--shared] [--device PROFILE] [--tuning RECORD.json]\n"
     "        [--precision fp32|fp16]",
     "Compiles an ONNX model into a C library package: NAME.h, NAME.cpp, weights, runtime/,\n"
     "CMakeLists.txt, README.md, report.json, NAME.py (a Python loader: ctypes and NumPy).\n"
     "--build builds it with the package's own CMake; --shared builds libNAME.so for NAME.py fast."},
    {"check", kCheck,
     "magnetoc check MODEL.onnx --data TEST_DATA_DIR [--data DIR]... [--target T] [--emulate]\n"
     "        [--emulate-order LIST] [--racecheck]\n"
     "        [--rtol R] [--atol A] [--unordered-rows OUT,...] [--threads N] [--work-dir DIR]\n        [--precision fp32|fp16]",
     "Compiles the model, builds it (fast path: the runtime is compiled once into a cache), runs\n"
     "each data set's input_K.pb and compares with output_K.pb, one line per output. Inputs that\n"
     "decide output shapes are bound to the data's values; symbolic input dims take the data's\n"
     "shape. Exit status 0 when every output is within |got-exp| <= atol + rtol*|exp|, else 1."},
    {"bench", kBench,
     "magnetoc bench MODEL.onnx [--target cpu] [--threads N] [--runs N] [--warmup N] [--profile]\n"
     "        [--shape INPUT=DIMS]... [--work-dir DIR] [--precision fp32|fp16]\n"
     "        [--dynamic NAME=LO..HI --shape INPUT=DIMS1 --shape INPUT=DIMS2 ...]",
     "Compiles and builds the model (cached by model hash), times it on seeded random inputs and\n"
     "prints min_ms, mean_ms and, last, median_ms=X. With --dynamic, an input's shape may be given\n"
     "several times: ONE library is built and timed at each shape in turn (the k-th --shape of\n"
     "every input; an input given fewer times keeps its last), each block headed `shape ...`."},
    {"report", kReport,
     "magnetoc report MODEL.onnx [MODEL.onnx...] [--target cpu|cuda|hip] [--device PROFILE]\n"
     "        [--json FILE] [--dot FILE] [--svg FILE] [--shape INPUT=DIMS]... [--bind INPUT=FILE.pb]...\n"
     "        [--no-parallel-opt] [--passes LIST] [--resources auto|ptxas|hipcc|estimate]",
     "Runs the pipeline with the cost model of a device and shows the parallel groups found:\n"
     "members, strategy (joint, streams, wide, none) and why, kernel launches and modeled latency\n"
     "before -> after, and the whole model's totals. Writes no package (docs/PARALLEL.md). For\n"
     "cuda/hip it also lists every launch's registers, spills, shared memory and occupancy, from\n"
     "ptxas (cuda) or hipcc (hip) when found (docs/GPU_TARGET.md, resource feedback), and prints\n"
     "the five of lowest occupancy. Several models: each reported in turn, the kernels of all\n"
     "compiled in one compiler call, --json writes an array."},
    {"tune", kTune,
     "magnetoc tune MODEL.onnx --target cuda|hip -o RECORD.json [--arch ARCH] [--device PROFILE]\n"
     "        [--variants K] [--runs N] [--emulate] [--work-dir DIR] [--no-parallel-opt]\n"
     "        [--precision fp32|fp16]",
     "Measured co-tuning: builds the model K times, variant k giving every kernel launch (joint\n"
     "kernels included) its k-th tile candidate of the cost model, times each launch of each variant\n"
     "on the GPU (device events between launches, median of N runs), and writes per launch the\n"
     "fastest tiles to RECORD.json for 'magnetoc compile --tuning RECORD.json'. With --emulate it\n"
     "runs on the CPU emulation: the mechanism works, the times are not GPU times."},
    {"regress", kRegress,
     "magnetoc regress DIR [--target T] [--emulate] [--junit FILE] [--jobs N] [--no-parallel-opt]\n"
     "        [--rtol R] [--atol A] [--threads N] [--timeout SECONDS] [--emulate-order LIST]\n        [--racecheck]",
     "Checks every model folder under DIR (model.onnx + test_data_set_*, the layout of ONNX's\n"
     "backend tests and of models/zoo), each as its own 'magnetoc check' so that a crash or a\n"
     "hang fails that model only. One line per model in folder order, then 'N passed, M failed'.\n"
     "Tolerances come from the model's meta.json (\"tolerance\": {\"rtol\", \"atol\"}) unless\n"
     "given. Exit status 0 only when every model passes."},
};

void printTopHelp(std::FILE* f) {
  std::fprintf(f,
               "magnetoc %s: an ahead-of-time compiler from ONNX models to C libraries\n\n"
               "usage: magnetoc COMMAND MODEL.onnx [options]\n\ncommands:\n",
               MAGNETO_VERSION);
  for (const Command& c : kCommands) std::fprintf(f, "  %-8s %s\n", c.name, c.usage + 9);
  std::fprintf(f,
               "\nmagnetoc COMMAND --help explains every option. magnetoc --version prints the "
               "version.\n"
               "Exit status: 0 ok, 1 bad input (or check out of tolerance), 2 not supported, 3 "
               "internal error, 4 a tool (compiler, cmake) failed.\n"
               "Environment: MAGNETO_HOME (templates and runtime), MAGNETO_CACHE_DIR (runtime and "
               "bench cache), CXX (compiler of check/bench builds).\n");
}

void printCommandHelp(const Command& c) {
  std::printf("usage: %s\n\n%s\n\noptions:\n", c.usage, c.summary);
  for (const Flag& f : kFlags) {
    if (!(f.scope & c.scope)) continue;
    std::string head = f.alias ? std::string(f.alias) + ", " + f.name : std::string("    ") + f.name;
    if (f.value) head += std::string(" ") + f.value;
    std::printf("  %-28s %s\n  %-28s e.g. %s\n", head.c_str(), f.help, "", f.example);
  }
  if (c.scope == kReport) {
    std::string names;
    for (const std::string& d : listDeviceProfiles()) names += (names.empty() ? "" : ", ") + d;
    std::printf("\nDevice profiles: %s\n", names.c_str());
  }
  if (c.scope == kCompile)
    std::printf("\nThe passes: magneto-opt --list-passes. Default pipeline for cpu: %s\n",
                defaultPipeline("cpu", true).c_str());
}

struct Parsed {
  std::string model;
  std::vector<std::string> moreModels;  // report only: the models after the first
  std::vector<std::pair<const Flag*, std::string>> flags;
};

int usageError(const std::string& cmd, const std::string& msg) {
  std::fprintf(stderr, "magnetoc: error: %s\nSee 'magnetoc %s --help'.\n", msg.c_str(),
               cmd.c_str());
  return static_cast<int>(ErrorCode::kBadInput);
}

const Flag* findFlag(const std::string& name) {
  for (const Flag& f : kFlags)
    if (name == f.name || (f.alias && name == f.alias)) return &f;
  return nullptr;
}

// Returns -1 on success, else the exit code (after printing the error).
int parseArgs(const Command& c, int argc, char** argv, Parsed& p) {
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 1 && a[0] == '-') {
      std::string name = a, value;
      bool inlineValue = false;
      size_t eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        inlineValue = true;
      }
      const Flag* f = findFlag(name);
      if (!f || !(f->scope & c.scope))
        return usageError(c.name, "unknown option '" + name + "' for 'magnetoc " + c.name + "'");
      if (f->value && !inlineValue) {
        if (i + 1 >= argc)
          return usageError(c.name, std::string("option ") + f->name + " needs a value, e.g. " + f->example);
        value = argv[++i];
      } else if (!f->value && inlineValue) {
        return usageError(c.name, std::string("option ") + f->name + " takes no value");
      }
      p.flags.push_back({f, value});
      continue;
    }
    if (!p.model.empty() && c.scope == kReport) {
      p.moreModels.push_back(a);
      continue;
    }
    if (!p.model.empty())
      return usageError(c.name, "more than one model given ('" + p.model + "' and '" + a + "')");
    p.model = a;
  }
  return -1;
}

bool parseNumber(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0';
}

bool parseCount(const std::string& s, int lo, int& v) {
  char* end = nullptr;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || !end || *end != '\0' || x < lo || x > 1000000) return false;
  v = static_cast<int>(x);
  return true;
}

int reportError(const Status& s) {
  std::string hint;
  switch (s.code()) {
    case ErrorCode::kUnsupported: hint = "\n(not supported yet; see docs/ for what is)"; break;
    case ErrorCode::kInternal:
      hint = "\nThis is a bug in Magneto, not in your model: please report it with the model and "
             "the command line.";
      break;
    default: break;
  }
  std::fprintf(stderr, "magnetoc: error: %s%s\n", s.message().c_str(), hint.c_str());
  return static_cast<int>(s.code());
}

int runCommand(const Command& c, int argc, char** argv) {
  Parsed p;
  if (int rc = parseArgs(c, argc, argv, p); rc >= 0) return rc;
  for (const auto& [f, v] : p.flags)
    if (std::string(f->name) == "--help") {
      printCommandHelp(c);
      return 0;
    }
  if (p.model.empty())
    return usageError(c.name, c.scope == kRegress
                                  ? std::string("no folder given: magnetoc regress DIR ...")
                                  : "no model given: magnetoc " + std::string(c.name) + " MODEL.onnx ...");

  CompileOptions co;
  co.model = p.model;
  CheckOptions ck;
  BenchOptions bo;
  ReportOptions ro;
  RegressOptions rg;
  TuneOptions tu;
  bool threadsGiven = false, rtolGiven = false, atolGiven = false;
  int threads = 1;
  // --dynamic first, so that --opt may come before or after the --dynamic it refers to.
  for (const auto& [f, v] : p.flags)
    if (std::string(f->name) == "--dynamic") {
      auto sym = parseDynamicFlag(v);
      if (!sym.ok()) return usageError(c.name, sym.status().message());
      for (const DimSymbol& other : co.dynamic)
        if (other.name == sym->name) return usageError(c.name, "--dynamic names '" + sym->name + "' twice");
      co.dynamic.push_back(*sym);
    }
  for (const auto& [f, v] : p.flags)
    if (std::string(f->name) == "--opt")
      if (Status s = addOptFlag(v, &co.dynamic); !s.ok()) return usageError(c.name, s.message());
  for (const auto& [f, v] : p.flags) {
    std::string n = f->name;
    if (n == "--output") co.outDir = v;
    else if (n == "--target") co.target = v;
    else if (n == "--arch") co.arch = v == "native" ? "" : v;
    else if (n == "--name") co.name = v;
    else if (n == "--shape") {
      size_t eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0)
        return usageError(c.name, "--shape expects INPUT=DIMS, e.g. --shape input=1x3x224x224; got '" + v + "'");
      auto dims = parseDims(v.substr(eq + 1));
      if (!dims.ok()) return usageError(c.name, "--shape " + v + ": " + dims.status().message());
      const std::string input = v.substr(0, eq);
      // `bench --dynamic` times one library at each shape of an input given several times;
      // everywhere else a second shape for one input is a mistake, not a silent override.
      if (co.shapes.count(input) && !(c.scope == kBench && !co.dynamic.empty()))
        return usageError(c.name, "--shape " + input + " is given twice (" + dimsStr(co.shapes[input]) + " and " +
                                      dimsStr(dims.value()) + "); several shapes of one input are for " +
                                      "`magnetoc bench --dynamic ...`, which times one library at each");
      if (!co.shapes.count(input)) co.shapes[input] = dims.value();
      size_t k = 0;  // this input's k-th --shape goes into the k-th timed shape
      while (k < bo.shapeRuns.size() && bo.shapeRuns[k].count(input)) ++k;
      if (k == bo.shapeRuns.size()) bo.shapeRuns.emplace_back();
      bo.shapeRuns[k][input] = dims.value();
    } else if (n == "--bind") {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        return usageError(c.name, "--bind expects INPUT=FILE.pb, e.g. --bind boxes=data/input_0.pb; got '" + v + "'");
      auto t = readTensorProtoFile(v.substr(eq + 1));
      if (!t.ok()) return usageError(c.name, "--bind " + v + ": " + t.status().message());
      co.bindings[v.substr(0, eq)] = std::move(t).value();
    } else if (n == "--weights-file") co.weightsFile = true;
    else if (n == "--precision") {
      if (v != "fp32" && v != "fp16") return usageError(c.name, "--precision expects fp32 or fp16, got '" + v + "'");
      co.precision = v;
    }
    else if (n == "--passes") {
      co.passes = v;
      co.passesGiven = true;
    } else if (n == "--no-parallel-opt") co.parallelOpt = false;
    else if (n == "--build") co.build = true;
    else if (n == "--shared") co.shared = true;
    else if (n == "--device") ro.device = co.device = v;
    else if (n == "--json") ro.jsonPath = v;
    else if (n == "--resources") {
      if (v == "auto") ro.resources = ResourceMode::kAuto;
      else if (v == "ptxas" || v == "hipcc") ro.resources = ResourceMode::kPtxas;
      else if (v == "estimate") ro.resources = ResourceMode::kEstimate;
      else return usageError(c.name, "--resources expects auto, ptxas, hipcc or estimate, got '" + v + "'");
    }
    else if (n == "--dot") ro.dotPath = v;
    else if (n == "--svg") ro.svgPath = v;
    else if (n == "--data") ck.dataDirs.push_back(v);
    else if (n == "--emulate") ck.emulate = bo.emulate = true;
    else if (n == "--racecheck") ck.racecheck = true;
    else if (n == "--emulate-order") {
      ck.emulateOrders.clear();
      size_t start = 0;
      for (;;) {
        size_t comma = v.find(',', start);
        std::string one = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        bool seeded = one.rfind("random:", 0) == 0 && one.size() > 7 &&
                      one.find_first_not_of("0123456789", 7) == std::string::npos;
        if (one != "forward" && one != "reverse" && one != "random" && !seeded)
          return usageError(c.name, "--emulate-order: '" + one +
                                        "' is not an order (forward, reverse, random or random:SEED)");
        ck.emulateOrders.push_back(one);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    else if (n == "--device-time") bo.deviceTime = true;
    else if (n == "--profile") bo.profile = true;
    else if (n == "--tuning") co.tuningFile = v;
    else if (n == "--variants") {
      if (!parseCount(v, 1, tu.variants)) return usageError(c.name, "--variants expects a number >= 1, got '" + v + "'");
    }
    else if (n == "--unordered-rows") {
      std::vector<std::string> group;
      for (size_t start = 0;;) {
        size_t comma = v.find(',', start);
        std::string one = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (one.empty()) return usageError(c.name, "--unordered-rows expects output names separated by commas, got '" + v + "'");
        group.push_back(one);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      ck.unorderedRows.push_back(group);
    }
    else if (n == "--atol" && v.find('=') != std::string::npos) {
      double x;
      std::string name = v.substr(0, v.rfind('='));
      if (name.empty() || !parseNumber(v.substr(v.rfind('=') + 1), x) || !(x >= 0))
        return usageError(c.name, "--atol expects A or OUTPUT=A with A a number >= 0, got '" + v + "'");
      ck.outputAtol[name] = x;
    } else if (n == "--rtol" || n == "--atol") {
      double x;
      if (!parseNumber(v, x) || !(x >= 0)) return usageError(c.name, n + " expects a number >= 0, got '" + v + "'");
      (n == "--rtol" ? ck.rtol : ck.atol) = x;
      (n == "--rtol" ? rtolGiven : atolGiven) = true;
    } else if (n == "--threads") {
      if (!parseCount(v, 1, threads)) return usageError(c.name, "--threads expects a number >= 1, got '" + v + "'");
      threadsGiven = true;
    } else if (n == "--runs") {
      if (!parseCount(v, 1, bo.runs)) return usageError(c.name, "--runs expects a number >= 1, got '" + v + "'");
    } else if (n == "--warmup") {
      if (!parseCount(v, 0, bo.warmup)) return usageError(c.name, "--warmup expects a number >= 0, got '" + v + "'");
    } else if (n == "--work-dir") ck.workDir = bo.workDir = v;
    else if (n == "--junit") rg.junitPath = v;
    else if (n == "--jobs") {
      if (!parseCount(v, 1, rg.jobs)) return usageError(c.name, "--jobs expects a number >= 1, got '" + v + "'");
    } else if (n == "--timeout") {
      if (!parseCount(v, 0, rg.timeoutSeconds))
        return usageError(c.name, "--timeout expects a number of seconds >= 0, got '" + v + "'");
    } else if (n == "--print-ir-after") co.common.printAfter.insert(v);
    else if (n == "--print-ir-after-all") co.common.printAfter.insert("*");
    else if (n == "--debug-only") co.common.debugOnly.insert(v);
    else if (n == "--verify-each") co.common.verifyEach = true;
    else if (n == "--verbose") co.common.verbosity = 2;
    else if (n == "--quiet") co.common.verbosity = 0;
  }

  std::string cmd = c.name;
  if (!co.dynamic.empty()) {
    if (Status s = checkTarget(co.target); !s.ok()) return reportError(s);
    if (Status s = checkDynamicTarget(co.target, co.dynamic); !s.ok()) return reportError(s);
  }
  if (co.precision == "fp16") {
    // Refused before any work for hip and cpu (exit status 2); check's tolerance loosens.
    if (Status s = checkTarget(co.target); !s.ok()) return reportError(s);
    if (Status s = checkPrecision(co.target, co.precision); !s.ok()) return reportError(s);
    if (!rtolGiven) ck.rtol = 2e-2;
    if (!atolGiven) ck.atol = 2e-3;
  }
  if (cmd == "compile") {
    if (co.outDir.empty()) return usageError(c.name, "no output folder: add -o OUT_DIR");
    auto r = compileModel(co);
    if (!r.ok()) return reportError(r.status());
    Reporter(co.common.verbosity)
        .progress(fmt::format("wrote {} ({} steps{}, arena {} bytes, weights {} bytes){}{}", co.outDir,
                              r->summary.steps,
                              r->summary.kernels > 0
                                  ? fmt::format(", {} launches of {} kernels ({} joint)", r->summary.launches,
                                                r->summary.kernels, r->summary.jointLaunches)
                                  : "",
                              r->summary.arenaBytes, r->summary.weightsBytes,
                              co.build ? "; built in " + co.outDir + "/build" : "",
                              co.shared ? "; shared library " + co.outDir + "/lib" + r->name + ".so" : ""));
    return 0;
  }
  if (cmd == "report") {
    ro.compile = co;
    ro.moreModels = p.moreModels;
    Status s = reportModel(ro);
    return s.ok() ? 0 : reportError(s);
  }
  if (cmd == "regress") {
    rg.dir = p.model;
    rg.target = co.target;
    rg.arch = co.arch;
    rg.emulate = ck.emulate;
    rg.emulateOrders = ck.emulateOrders;
    rg.racecheck = ck.racecheck;
    rg.parallelOpt = co.parallelOpt;
    rg.dynamic = co.dynamic;
    rg.verbosity = co.common.verbosity;
    if (threadsGiven) rg.threads = threads;
    for (const auto& [f, v] : p.flags) {
      if (std::string(f->name) == "--rtol") rg.rtol = ck.rtol;
      if (std::string(f->name) == "--atol") rg.atol = ck.atol;
    }
    if (Status s = checkTarget(rg.target); !s.ok()) return reportError(s);
    auto r = regressModels(rg);
    if (!r.ok()) return reportError(r.status());
    return r.value() ? 0 : 1;
  }
  if (cmd == "tune") {
    tu.compile = co;
    tu.output = co.outDir;
    tu.emulate = ck.emulate;
    tu.workDir = bo.workDir;
    for (const auto& [f, v] : p.flags)
      if (std::string(f->name) == "--runs") tu.runs = bo.runs;
    if (tu.output.empty()) return usageError(c.name, "no record file: add -o RECORD.json");
    Status s = tuneModel(tu);
    return s.ok() ? 0 : reportError(s);
  }
  if (cmd == "check") {
    ck.compile = co;
    if (threadsGiven) ck.threads = threads;
    auto r = checkModel(ck);
    if (!r.ok()) return reportError(r.status());
    // 5: every output matched, but the package folded to constants (a check of constant folding).
    return r.value() == CheckStatus::kPass ? 0 : r.value() == CheckStatus::kFail ? 1 : 5;
  }
  bo.compile = co;
  if (threadsGiven) bo.threads = threads;
  Status s = benchModel(bo);
  return s.ok() ? 0 : reportError(s);
}

}  // namespace

int runCli(int argc, char** argv) {
  if (argc < 2) {
    printTopHelp(stderr);
    return static_cast<int>(ErrorCode::kBadInput);
  }
  std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    if (first == "help" && argc > 2)
      for (const Command& c : kCommands)
        if (argv[2] == std::string(c.name)) {
          printCommandHelp(c);
          return 0;
        }
    printTopHelp(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("magnetoc %s\n", MAGNETO_VERSION);
    return 0;
  }
  for (const Command& c : kCommands)
    if (first == c.name) return runCommand(c, argc, argv);
  std::fprintf(stderr,
               "magnetoc: error: unknown command '%s'; the commands are compile, check, bench, "
               "report and regress "
               "(see 'magnetoc --help')\n",
               first.c_str());
  return static_cast<int>(ErrorCode::kBadInput);
}

}  // namespace driver
}  // namespace magneto
