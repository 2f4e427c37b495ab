// `magnetoc compile`: ONNX model -> passes -> memory plan -> package (-> CMake build).
#include <algorithm>
#include <filesystem>

#include <fmt/ranges.h>

#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/codegen/package.h"
#include "magneto/passes/passes.h"
#include "magneto/driver/build.h"
#include "magneto/driver/commands.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/ir/symbolic.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "magneto/passes/pass.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

Status checkTarget(const std::string& target) {
  if (target == "cpu") return Status::success();
  if (target == "cuda" || target == "hip") return Status::success();
  return badInput("unknown target '{}'; choose cpu, cuda or hip", target);
}

Status checkPrecision(const std::string& target, const std::string& precision) {
  if (precision == "fp32") return Status::success();
  if (precision != "fp16") return badInput("unknown --precision '{}'; choose fp32 or fp16", precision);
  if (target == "cuda") return Status::success();
  if (target == "hip")
    return unsupported("--precision fp16 is not supported for --target hip: the hip target has no "
                       "matrix-core (MFMA) path yet; use --precision fp32, or --target cuda for "
                       "tensor cores");
  return unsupported("--precision fp16 is not supported for --target {}: fp16 is the cuda "
                     "target's tensor-core path; the cpu target computes in fp32 only",
                     target);
}

// Every target compiles dynamic dimensions (cuda and hip fit their launch parameters as
// expressions of the symbols: docs/DYNAMIC_SHAPES.md); kept as the one place to refuse a target.
Status checkDynamicTarget(const std::string& target, const std::vector<DimSymbol>& dynamic) {
  if (dynamic.empty() || target == "cpu" || target == "cuda" || target == "hip") return Status::success();
  return unsupported("dynamic dimensions are not supported for --target {}", target);
}

namespace {

bool parseDynInt(const std::string& s, int64_t* v) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
    return false;
  *v = std::stoll(s);
  return true;
}

}  // namespace

Expected<DimSymbol> parseDynamicFlag(const std::string& text) {
  size_t eq = text.rfind('=');
  size_t dots = text.find("..", eq == std::string::npos ? 0 : eq);
  DimSymbol s;
  if (eq == std::string::npos || eq == 0 || dots == std::string::npos ||
      !parseDynInt(text.substr(eq + 1, dots - eq - 1), &s.lo) ||
      !parseDynInt(text.substr(dots + 2), &s.hi))
    return badInput("--dynamic expects NAME=LO..HI (the model's dim_param and its range), e.g. "
                    "--dynamic batch=1..32; got '{}'",
                    text);
  s.name = text.substr(0, eq);
  if (s.lo > s.hi) return badInput("--dynamic {}: LO is greater than HI", text);
  return s;
}

Status addOptFlag(const std::string& text, std::vector<DimSymbol>* dynamic) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return badInput("--opt expects NAME=V1,V2,... (values of a --dynamic dimension to tune "
                    "for), e.g. --opt batch=1,8; got '{}'",
                    text);
  std::string name = text.substr(0, eq);
  DimSymbol* sym = nullptr;
  for (DimSymbol& s : *dynamic)
    if (s.name == name) sym = &s;
  if (!sym) return badInput("--opt {}: '{}' is not declared with --dynamic", text, name);
  std::string rest = text.substr(eq + 1);
  size_t start = 0;
  for (;;) {
    size_t comma = rest.find(',', start);
    std::string one = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t v;
    if (!parseDynInt(one, &v))
      return badInput("--opt {}: '{}' is not a non-negative integer", text, one);
    if (v < sym->lo || v > sym->hi)
      return badInput("--opt {}: {} is outside {}'s range {}..{}", text, v, name, sym->lo, sym->hi);
    if (std::find(sym->opt.begin(), sym->opt.end(), v) == sym->opt.end()) sym->opt.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Status::success();
}

Expected<CompileResult> compileModel(const CompileOptions& o) {
  Reporter rep(o.common.verbosity);
  MG_RETURN_IF_ERROR(checkTarget(o.target));
  MG_RETURN_IF_ERROR(checkDynamicTarget(o.target, o.dynamic));
  MG_RETURN_IF_ERROR(checkPrecision(o.target, o.precision));
  if (o.outDir.empty()) return badInput("no output folder: add -o OUT_DIR");
  std::string name = o.name.empty() ? packageNameFromPath(o.model) : o.name;
  if (!isValidPackageName(name))
    return badInput("--name '{}' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*, at most 64 "
                    "characters): it prefixes every symbol of the package",
                    name);

  // Import.
  rep.progress("importing " + o.model);
  ImportOptions io;
  io.shapes = o.shapes;
  io.dynamic = o.dynamic;
  io.bindings = o.bindings;
  io.sequenceInputs = o.sequenceInputs;
  io.optionalInputs = o.optionalInputs;
  ImportInfo info;
  MG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, importOnnx(o.model, io, &info));
  // Data-dependent extents (docs/DYNAMIC_SHAPES.md): every producer on the cpu target; those of
  // gpuDataExtentOps on cuda/hip too (codegen/gpu/lower_select.cpp: today every op that has one).
  if (o.target != "cpu")
    for (const Node* n : g->nodes())
      for (const DataSymbolDim& d : producedDataSymbols(*g, *n))
        if (!gpuProducesDataExtent(n->kind()))
          return unsupported("{}: {}, result '{}' dim {} is a data-dependent extent (data symbol "
                             "'{}', known only at run time): the {} target builds those of "
                             "{}, {} only on the cpu target; make the operand deciding it a "
                             "constant (`magnetoc check` binds it from its data set) or use "
                             "--target cpu",
                             o.model, n->describe(), n->output(d.output)->name(), d.dim, d.symbol,
                             o.target, fmt::format("{}", fmt::join(gpuDataExtentOps(), ", ")), n->kind());
  // Symbolic shapes of every value, fitted and verified over the declared ranges.
  if (Status s = inferSymbolicShapes(*g); !s.ok()) return s.withContext(o.model + ": ");
  for (const std::string& n : info.notes) rep.detail("import: " + n);
  rep.detail(fmt::format("imported {} nodes (opset {}, producer '{}')", g->numNodes(),
                         info.opsetVersion, info.producer));
  if (o.common.printAfter.count("import") || o.common.printAfter.count("*"))
    std::fputs(("// ----- IR after import -----\n" + printGraph(*g)).c_str(), stdout);

  // The interface keeps the imported names even when a pass replaces the values carrying them.
  std::vector<std::string> inputNames, outputNames;
  for (const Value* v : g->inputs()) inputNames.push_back(v->name());
  for (const Value* v : g->outputs()) outputNames.push_back(v->name());

  // Passes.
  std::string pipelineText = o.passesGiven ? o.passes : defaultPipeline(o.target, o.parallelOpt);
  MG_ASSIGN_OR_RETURN(auto pipeline, parsePipeline(pipelineText));
  rep.progress(fmt::format("running passes: {}", pipelineText.empty() ? "(none)" : pipelineText));
  PassContext ctx;
  ctx.target = o.target;
  ctx.parallelOpt = o.parallelOpt;
  ctx.device = !o.device.empty() ? o.device
               : o.target == "cuda" ? "h200"
               : o.target == "hip"  ? "mi250x"
                                    : "host";
  ctx.printAfter = o.common.printAfter;
  ctx.printAfter.erase("import");
  ctx.debugOnly = o.common.debugOnly;
#ifndef NDEBUG
  ctx.verifyEach = true;
#else
  ctx.verifyEach = o.common.verifyEach;
#endif
  ctx.out = [](const std::string& s) { std::fputs(s.c_str(), stdout); };
  // Errors from here on name the model too (import errors do already).
  const std::string where = o.model + ": ";
  MG_RETURN_IF_ERROR(runPipeline(*g, pipeline, ctx).withContext(where));
  if (Status v = verifyGraph(*g); !v.ok())
    return internalStatus("{}the IR after the passes is invalid (a compiler bug): {}\n{}", where,
                          v.message(), printGraph(*g));
  // Again after the passes: the safety net for rewrites that looked at the reference dims only.
  if (Status s = inferSymbolicShapes(*g); !s.ok())
    return s.withContext(where + "after the passes: ");

  // --precision fp16 on cuda: activations and GEMM/conv weights in float16 between launches.
  if (o.precision == "fp16" && o.target == "cuda") {
    auto hs = storeActivationsInHalf(*g, gpuReadsHalfStorage);
    if (!hs.ok()) return hs.status().withContext(where);
    const HalfStorageResult& h = hs.value();
    rep.detail(fmt::format("half storage: {} values and {} constants in float16, {} casts", h.halfValues,
                           h.halfConstants, h.casts));
    if (!h.floatNodes.empty()) {
      std::string list;
      for (size_t i = 0; i < h.floatNodes.size() && i < 8; ++i) list += (i ? ", " : "") + h.floatNodes[i];
      if (h.floatNodes.size() > 8) list += fmt::format(", ... ({} in all)", h.floatNodes.size());
      rep.progress(fmt::format("--precision fp16: {} node(s) keep float32 tensors (cast around them): {}",
                               h.floatNodes.size(), list));
    }
    // Not re-verified: the op schemas describe the CPU reference kernels, which compute Conv,
    // MatMul, pooling, ... in f32/f64 only; this float16 storage form is the cuda emitter's input.
    if (o.common.printAfter.count("half-storage") || o.common.printAfter.count("*"))
      std::fputs(("// ----- IR after half-storage -----\n" + printGraph(*g)).c_str(), stdout);
  }

  // Plan and emit.
  rep.progress(fmt::format("generating the {} package '{}' in {}", o.target, name, o.outDir));
  auto planned = planMemory(*g);
  if (!planned.ok()) return planned.status().withContext(where);
  MemoryPlan plan = std::move(planned).value();
  PackageOptions po;
  po.name = name;
  po.target = o.target;
  po.model = fs::path(o.model).filename().string();
  po.passes = pipelineText;
  po.embedWeights = !o.weightsFile;
  po.arch = o.arch;
  po.device = ctx.device;
  po.precision = o.precision;
  if (g->inputs().size() == inputNames.size()) po.inputNames = inputNames;
  if (g->outputs().size() == outputNames.size()) po.outputNames = outputNames;
  TuningChoice tuning;
  if (!o.tuningFile.empty() || o.tuneVariant >= 0) {
    if (!isGpuTarget(o.target))
      return badInput("--tuning: tuning records are for --target cuda or hip (the {} target has no tiles)", o.target);
    if (!o.tuningFile.empty()) {
      MG_ASSIGN_OR_RETURN(TuningRecord rec, loadTuningRecord(o.tuningFile));
      if (!rec.target.empty() && rec.target != o.target)
        return badInput("--tuning {}: the record was measured for --target {}, this compile is --target {}",
                        o.tuningFile, rec.target, o.target);
      if (!rec.device.empty() && rec.device != ctx.device)
        rep.progress(fmt::format("note: the tuning record was made with --device {}, this compile uses {}; "
                                 "tiles that are not candidates on {} fall back to the cost model",
                                 rec.device, ctx.device, ctx.device));
      tuning = tuningChoiceFrom(rec);
    }
    tuning.variant = o.tuneVariant;
    po.tuning = &tuning;
  }
  auto written = writePackage(*g, plan, po, o.outDir);
  if (!written.ok()) return written.status().withContext(where);
  PackageSummary sum = std::move(written).value();
  if (!o.tuningFile.empty())
    rep.progress(fmt::format("tiles measured by magnetoc tune ({}) used for {} of {} launches; the "
                             "cost model chose the rest", o.tuningFile, sum.tunedLaunches, sum.launches));
  rep.detail(fmt::format("{} steps ({} views aliased; {} Concat operands written in place, {} Concats "
                         "elided), arena {} bytes, weights {} bytes",
                         sum.steps, sum.aliasedViews, sum.concatOperandsInPlace, sum.concatsElided,
                         sum.arenaBytes, sum.weightsBytes));

  if (o.shared) {
    if (o.target != "cpu")
      return unsupported("--shared builds the cpu target's library against the cached runtime; "
                         "for --target {} use --build (the package's CMake builds lib{}.so, "
                         "option {}_SHARED)",
                         o.target, name, name);
    rep.progress("building " + (fs::path(o.outDir) / ("lib" + name + ".so")).string() +
                 " (fast path: cached runtime + one compiler call)");
    MG_RETURN_IF_ERROR(buildSharedFast(o.outDir, name, !o.weightsFile, o.arch, rep).status());
  }
  if (o.build) {
    rep.progress("building with CMake in " + (fs::path(o.outDir) / "build").string());
    MG_RETURN_IF_ERROR(buildWithCmake(o.outDir, rep));
  }
  CompileResult r;
  r.outDir = o.outDir;
  r.name = name;
  r.summary = std::move(sum);
  r.graph = std::move(g);
  r.inputNames = po.inputNames;
  r.outputNames = po.outputNames;
  return r;
}

}  // namespace driver
}  // namespace magneto
