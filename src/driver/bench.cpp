// `magnetoc bench`: compile + build (fast path, cached by a hash of the model and the options
// in the work folder), then time the runner on seeded random inputs. The last line on stdout is
// median_ms=X. With --dynamic, the package keeps the named dimensions symbolic and --shape gives
// the shapes to time it at (the runner's --dims, the package's set_input_dims): one build serves
// every shape in the declared ranges.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "magneto/driver/build.h"
#include "magneto/driver/commands.h"

#ifndef MAGNETO_VERSION
#define MAGNETO_VERSION "0.0.0"
#endif

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

namespace {

// The running magnetoc's own bytes, hashed once: a rebuilt compiler (a changed pass) must not reuse
// a runner that an older one generated under the same version number. Empty where /proc is absent.
const std::string& compilerKey() {
  static const std::string key = [] {
    auto exe = readFile("/proc/self/exe");
    return exe.ok() ? hashHex(hashString(exe.value())) : std::string();
  }();
  return key;
}

// What decides the built runner: the model's bytes, every compile option, the compiler (version
// and binary) and the runtime (through runtimeKey).
Expected<std::string> benchKey(const BenchOptions& o) {
  const CompileOptions& c = o.compile;
  MG_ASSIGN_OR_RETURN(std::string model, readFile(c.model));
  // cuda and hip packages carry the GPU runtime (runtime/gpu), the cpu ones the CPU runtime.
  MG_ASSIGN_OR_RETURN(std::string rt, runtimeKey(c.target == "cpu" ? "cpu" : "gpu", c.arch));
  uint64_t h = hashString(model);
  h = hashString(compilerKey(), h);
  std::string opts = fmt::format("v={};target={};emu={};arch={};dev={};name={};wf={};passes={}{};popt={};rt={};",
                                 MAGNETO_VERSION, c.target, o.emulate, c.arch, c.device, c.name, c.weightsFile,
                                 c.passesGiven ? "given:" : "default:", c.passes, c.parallelOpt, rt);
  // A dynamic build does not depend on --shape (run-time shapes), only on the ranges.
  if (c.dynamic.empty())
    for (const auto& [n, d] : c.shapes) opts += "shape " + n + "=" + dimsStr(d) + ";";
  for (const DimSymbol& d : c.dynamic) opts += fmt::format("dynamic {}={}..{};", d.name, d.lo, d.hi);
  for (const DimSymbol& d : c.dynamic)
    if (!d.opt.empty()) opts += fmt::format("opt {}={};", d.name, fmt::join(d.opt, ","));
  if (c.precision != "fp32") opts += "precision=" + c.precision + ";";
  if (!c.tuningFile.empty()) {  // the record's tiles decide the kernels
    MG_ASSIGN_OR_RETURN(std::string record, readFile(c.tuningFile));
    opts += "tuning=" + hashHex(hashString(record)) + ";";
  }
  h = hashString(opts, h);
  return hashHex(h);
}

// The default bench cache keeps the builds of the kBenchKeep most recently used keys (a build of
// VGG-19 weighs 1.1 GB: runner and weights); older ones are removed. A --work-dir is the user's
// own and is never pruned.
constexpr size_t kBenchKeep = 8;

void pruneBenchCache(const fs::path& work, const fs::path& keep, Reporter& rep) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const auto& e : fs::directory_iterator(work, ec)) {
    if (!e.is_directory(ec) || e.path() == keep) continue;
    fs::path stamp = e.path() / "magnetoc_bench.stamp";
    auto t = fs::last_write_time(fs::exists(stamp, ec) ? stamp : e.path(), ec);
    if (!ec) entries.emplace_back(t, e.path());
  }
  if (entries.size() < kBenchKeep) return;
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = kBenchKeep - 1; i < entries.size(); ++i) {
    fs::remove_all(entries[i].second, ec);
    if (!ec) rep.detail("removed the older bench build " + entries[i].second.string());
  }
}

// Runs the built runner at `shapes` (set through --dims when the library is dynamic) and prints
// its summary: threads/runs, min_ms, mean_ms and, last, median_ms.
Status timeRunner(const BenchOptions& o, const std::string& runner, const fs::path& dir,
                  const std::map<std::string, Dims>& shapes, Reporter& rep) {
  rep.progress(fmt::format("timing {} runs after {} warm-up runs on {} thread(s)", o.runs, o.warmup,
                           o.threads));
  std::vector<std::string> cmd = {runner, "--runs", std::to_string(o.runs), "--warmup",
                                  std::to_string(o.warmup), "--threads", std::to_string(o.threads),
                                  "--seed", "1"};
  if (!o.compile.dynamic.empty())
    for (const auto& [n, d] : shapes) cmd.insert(cmd.end(), {"--dims", n + "=" + dimsStr(d)});
  if (o.deviceTime) {
    if (o.compile.target == "cpu") return badInput("--device-time is for --target cuda or hip");
    cmd.push_back("--device-time");
  }
  if (o.profile) {
    if (o.compile.target != "cpu") return badInput("--profile is for --target cpu");
    ::setenv("MAGNETO_PROFILE", "1", 1);  // read by the package when the runner creates its handle
  }
  if (o.compile.weightsFile) {
    std::string name = o.compile.name.empty() ? packageNameFromPath(o.compile.model) : o.compile.name;
    cmd.insert(cmd.end(), {"--weights", (dir / "package" / (name + "_weights.bin")).string()});
  }
  MG_ASSIGN_OR_RETURN(ProcessResult r, runProcess(cmd));
  if (r.exitCode != 0)
    return Status(ErrorCode::kToolFailed,
                  fmt::format("the compiled model failed to run:\n{}", tailLines(r.output, 10)));
  // The runner prints per-run lines, then threads/runs, min, mean and median (last).
  std::string out;
  size_t pos = 0;
  while (pos < r.output.size()) {
    size_t nl = r.output.find('\n', pos);
    std::string line = r.output.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? r.output.size() : nl + 1;
    if (line.rfind("run ", 0) == 0 || line.rfind("output ", 0) == 0) {
      rep.detail(line);
      continue;
    }
    out += line + "\n";
  }
  if (out.find("median_ms=") == std::string::npos)
    return Status(ErrorCode::kToolFailed, "the runner printed no median_ms: " + tailLines(r.output, 5));
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return Status::success();
}

}  // namespace

Status benchModel(const BenchOptions& o) {
  Reporter rep(o.compile.common.verbosity);
  MG_RETURN_IF_ERROR(checkTarget(o.compile.target));
  if (o.threads < 1) return badInput("--threads must be at least 1");
  if (o.runs < 1) return badInput("--runs must be at least 1");
  std::string work = o.workDir;
  const bool defaultCache = work.empty();
  if (defaultCache) {
    MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
    work = cache + "/bench";
  }
  MG_ASSIGN_OR_RETURN(std::string key, benchKey(o));
  fs::path dir = fs::path(work) / key;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return badInput("--work-dir {}: cannot create it: {}", work, ec.message());

  // The stamp names the runner of a finished build; a build cut short leaves none.
  fs::path stamp = dir / "magnetoc_bench.stamp";
  std::string runner;
  if (auto s = readFile(stamp.string()); s.ok() && fs::is_regular_file(s.value(), ec)) {
    runner = s.value();
    rep.progress("using the cached build in " + dir.string());
    fs::last_write_time(stamp, fs::file_time_type::clock::now(), ec);  // most recently used
  } else {
    CompileOptions co = o.compile;
    if (!co.dynamic.empty()) co.shapes.clear();  // the run's shapes, given to the runner below
    co.outDir = (dir / "package").string();
    co.build = false;
    MG_ASSIGN_OR_RETURN(CompileResult r, compileModel(co));
    MG_ASSIGN_OR_RETURN(runner, buildPackageRunner(r.outDir, r.name, co.target, o.emulate,
                                                   !co.weightsFile, co.arch, rep));
    MG_RETURN_IF_ERROR(writeFile(stamp.string(), runner));
  }
  if (defaultCache) pruneBenchCache(work, dir, rep);

  // The shapes to time at: one set, or with --dynamic each of BenchOptions::shapeRuns in turn.
  std::vector<std::map<std::string, Dims>> runs;
  if (o.compile.dynamic.empty() || o.shapeRuns.size() <= 1) {
    runs.push_back(o.compile.shapes);
  } else {
    for (const auto& set : o.shapeRuns) {
      std::map<std::string, Dims> full = runs.empty() ? std::map<std::string, Dims>{} : runs.back();
      for (const auto& [n, d] : set) full[n] = d;
      runs.push_back(std::move(full));
    }
  }
  for (const auto& shapes : runs) {
    if (runs.size() > 1) {
      std::string head = "shape";
      for (const auto& [n, d] : shapes) head += " " + n + "=" + dimsStr(d);
      std::printf("%s\n", head.c_str());
      std::fflush(stdout);
    }
    MG_RETURN_IF_ERROR(timeRunner(o, runner, dir, shapes, rep));
  }
  return Status::success();
}

}  // namespace driver
}  // namespace magneto
