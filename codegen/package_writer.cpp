// The package writer (see include/magneto/codegen/package.h): renders the templates of the
// target, writes the weights blob, copies the runtime, and writes report.json.
#include "magneto/codegen/package.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "magneto/codegen/cpu_emitter.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/target/device_profile.h"
#include "magneto/codegen/template.h"

#ifndef MAGNETO_VERSION
#define MAGNETO_VERSION "0.0.0"
#endif

namespace magneto {
namespace fs = std::filesystem;

bool isValidPackageName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string packageNameFromPath(const std::string& path) {
  std::string stem = fs::path(path).stem().string();
  std::string name;
  for (char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "m_" + name;
  if (name.size() > 64) name.resize(64);
  return name;
}

Status writeFileIfChanged(const std::string& path, const std::string& content) {
  std::error_code ec;
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) return badInput("cannot create folder {}: {}", p.parent_path().string(), ec.message());
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str() == content) return Status::success();
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return badInput("cannot write {} (disk full or no permission?)", path);
  return Status::success();
}

bool isGpuTarget(const std::string& target) { return target == "cuda" || target == "hip"; }

Status checkTargetSupport(const Graph& g, const MemoryPlan& plan, const std::string& target) {
  if (isGpuTarget(target)) return checkGpuSupport(plan);
  if (target != "cpu") return badInput("unknown target '{}'; choose cpu, cuda or hip", target);
  for (const Node* n : plan.steps)
    if (cpuKernelKind(n->kind()).empty())
      return unsupported("{}: the CPU runtime has no kernel for op '{}' yet", n->describe(),
                         n->kind());
  for (const auto& [v, st] : plan.storage)
    if (v->rank() > 8)
      return unsupported("value '{}' has rank {}; the CPU runtime supports rank up to 8", v->name(),
                         v->rank());
  (void)g;
  return Status::success();
}

namespace {

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string jsonDims(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

std::string portName(const std::vector<Value*>& vs, const std::vector<std::string>& names,
                     size_t i) {
  return names.size() == vs.size() ? names[i] : vs[i]->name();
}

std::string jsonPorts(const std::vector<Value*>& vs, const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < vs.size(); ++i)
    s += fmt::format("{}\n    {{\"name\": {}, \"dtype\": \"{}\", \"dims\": {}}}", i ? "," : "",
                     jsonString(portName(vs, names, i)), dtypeName(vs[i]->dtype()),
                     jsonDims(vs[i]->dims()));
  return s + (vs.empty() ? "]" : "\n  ]");
}

std::string reportJson(const Graph& g, const MemoryPlan& plan, const PackageOptions& o,
                       uint64_t checksum) {
  std::string steps = "[";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Node* n = plan.steps[i];
    steps += fmt::format("{}\n    {{\"op\": {}, \"node\": {}, \"kernel\": \"{}\"}}", i ? "," : "",
                         jsonString(n->kind()), jsonString(n->name()),
                         isGpuTarget(o.target) ? "generated" : cpuKernelKind(n->kind()));
  }
  steps += plan.steps.empty() ? "]" : "\n  ]";
  return fmt::format(
      "{{\n  \"model\": {},\n  \"name\": {},\n  \"target\": {},\n  \"magneto_version\": \"{}\",\n"
      "  \"passes\": {},\n  \"kernels\": {},\n  \"aliased_views\": {},\n"
      "  \"concat_operands_in_place\": {},\n  \"concats_elided\": {},\n  \"arena_bytes\": {},\n"
      "  \"weights_bytes\": {},\n  \"weights_checksum\": \"0x{:016x}\",\n"
      "  \"weights_embedded\": {},\n  \"inputs\": {},\n  \"outputs\": {},\n  \"steps\": {}\n}}\n",
      jsonString(o.model), jsonString(o.name), jsonString(o.target), MAGNETO_VERSION,
      jsonString(o.passes), plan.steps.size(), plan.aliasedViews.size(), plan.concats.inPlace.size(),
      plan.concats.elided.size(), plan.arenaBytes,
      plan.weightsBytes, checksum, o.embedWeights ? "true" : "false", jsonPorts(g.inputs(), o.inputNames),
      jsonPorts(g.outputs(), o.outputNames), steps);
}

// Text for a Python docstring: no quotes that could end it, no backslash escapes.
std::string pythonDocSafe(std::string s) {
  for (char& c : s) {
    if (c == '"') c = '\'';
    if (c == '\\') c = '/';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return s;
}

std::string portRows(const std::vector<Value*>& vs, const std::vector<std::string>& names) {
  std::string rows;
  for (size_t i = 0; i < vs.size(); ++i)
    rows += fmt::format("| {} | `{}` | {} | {} |\n", i, commentSafe(portName(vs, names, i)),
                        dtypeName(vs[i]->dtype()), vs[i]->dims().empty() ? "scalar" : dimsStr(vs[i]->dims()));
  return rows;
}

// Writes the weights blob: each constant at its planned offset, zero padding in between.
Expected<uint64_t> writeWeights(const MemoryPlan& plan, const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return badInput("cannot write {}", path);
  uint64_t h = 0xcbf29ce484222325ull;
  int64_t at = 0;
  static const uint8_t kZeros[kTensorAlignment] = {0};
  for (const Value* v : plan.weights) {
    const Tensor& t = v->constant();
    int64_t offset = plan.storage.at(v).offset;
    while (at < offset) {
      size_t n = static_cast<size_t>(std::min<int64_t>(offset - at, kTensorAlignment));
      out.write(reinterpret_cast<const char*>(kZeros), static_cast<std::streamsize>(n));
      h = fnv1a64(kZeros, n, h);
      at += static_cast<int64_t>(n);
    }
    out.write(reinterpret_cast<const char*>(t.bytes()), static_cast<std::streamsize>(t.byteSize()));
    h = fnv1a64(t.bytes(), t.byteSize(), h);
    at += static_cast<int64_t>(t.byteSize());
  }
  while (at < plan.weightsBytes) {
    size_t n = static_cast<size_t>(std::min<int64_t>(plan.weightsBytes - at, kTensorAlignment));
    out.write(reinterpret_cast<const char*>(kZeros), static_cast<std::streamsize>(n));
    h = fnv1a64(kZeros, n, h);
    at += static_cast<int64_t>(n);
  }
  out.close();
  if (!out) return badInput("cannot write {} (disk full?)", path);
  return h;
}

Status copyRuntime(const std::string& target, const fs::path& outDir, std::vector<std::string>& files,
                   std::string& cmakeList) {
  MG_ASSIGN_OR_RETURN(std::vector<RuntimeFile> sources, runtimeSources(target));
  fs::path rt = outDir / "runtime";
  std::set<std::string> keep;
  for (const RuntimeFile& f : sources) keep.insert(f.rel);
  std::error_code ec;
  if (fs::is_directory(rt, ec)) {  // drop files of an older runtime
    std::vector<fs::path> stale;
    for (auto it = fs::recursive_directory_iterator(rt, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file() && !keep.count(fs::relative(it->path(), rt, ec).string()))
        stale.push_back(it->path());
    for (const fs::path& f : stale) fs::remove(f, ec);
  }
  for (const RuntimeFile& f : sources) {
    std::ifstream in(f.path, std::ios::binary);
    if (!in) return badInput("cannot read runtime source {}", f.path);
    std::stringstream ss;
    ss << in.rdbuf();
    MG_RETURN_IF_ERROR(writeFileIfChanged((rt / f.rel).string(), ss.str()));
    files.push_back("runtime/" + f.rel);
    if (fs::path(f.rel).extension() == ".cpp") cmakeList += "  runtime/" + f.rel + "\n";
  }
  return Status::success();
}

}  // namespace

Expected<PackageSummary> writePackage(const Graph& g, const MemoryPlan& plan,
                                      const PackageOptions& o, const std::string& outDirText) {
  const bool gpu = isGpuTarget(o.target);
  const std::string dirName = gpu ? "gpu" : o.target;  // templates and runtime: cuda and hip share
  if (!isValidPackageName(o.name))
    return badInput("package name '{}' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*, at most 64 "
                    "characters); choose another with --name",
                    o.name);
  MG_RETURN_IF_ERROR(checkTargetSupport(g, plan, o.target));
  fs::path out(outDirText);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return badInput("cannot create output folder {}: {}", outDirText, ec.message());

  PackageSummary sum;
  sum.steps = static_cast<int>(plan.steps.size());
  sum.aliasedViews = static_cast<int>(plan.aliasedViews.size());
  sum.concatOperandsInPlace = static_cast<int>(plan.concats.inPlace.size());
  sum.concatsElided = static_cast<int>(plan.concats.elided.size());
  sum.arenaBytes = plan.arenaBytes;
  sum.weightsBytes = plan.weightsBytes;

  std::string guard;
  for (char c : o.name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  TemplateVars vars;
  vars["NAME"] = o.name;
  vars["GUARD"] = guard + "_H_";
  vars["VERSION"] = MAGNETO_VERSION;
  vars["MODEL"] = commentSafe(o.model);
  vars["EMBEDDED"] = o.embedWeights ? "1" : "0";
  vars["NUM_INPUTS_OR_1"] = std::to_string(std::max<size_t>(1, g.inputs().size()));
  vars["NUM_OUTPUTS_OR_1"] = std::to_string(std::max<size_t>(1, g.outputs().size()));
  vars["INPUT_ROWS"] = portRows(g.inputs(), o.inputNames);
  vars["OUTPUT_ROWS"] = portRows(g.outputs(), o.outputNames);
  vars["TARGET"] = o.target;
  std::string sourceExt = o.target == "hip" ? "hip" : o.target == "cuda" ? "cu" : "cpp";
  vars["SOURCE_EXT"] = sourceExt;
  if (gpu) {
    MG_ASSIGN_OR_RETURN(DeviceProfile device, loadDeviceProfile(o.device));
    MG_ASSIGN_OR_RETURN(GpuEmitSummary gs, emitGpuProgram(g, plan, device, vars, o.inputNames, o.outputNames, o.tuning,
                                                                 o.precision == "fp16"));
    sum.launches = gs.launches;
    sum.jointLaunches = gs.jointLaunches;
    sum.kernels = gs.kernels;
    sum.tunedLaunches = gs.tunedLaunches;
    sum.launchKeys = gs.launchKeys;
    sum.launchCandidates = gs.launchCandidates;
    sum.launchModeledUs = gs.launchModeledUs;
    sum.launchTiles = gs.launchTiles;
    bool cuda = o.target == "cuda";
    vars["CUDA"] = cuda ? "1" : "0";
    vars["PRECISION"] = o.precision == "fp16"
                            ? "fp16: activations and weights stored in float16 (inputs and outputs "
                              "fp32), GEMM, MatMul and Conv on tensor cores (wmma), fp32 accumulation "
                              "and arithmetic"
                            : "fp32";
    vars["HIP"] = cuda ? "0" : "1";
    std::string arch = o.arch;
    for (char& c : arch) if (c == ',') c = ';';
    if (cuda) {  // "sm_80;sm_90" or "80;90" -> CMake's "80;90"
      std::string a;
      size_t p = 0;
      while (p <= arch.size()) {
        size_t q = arch.find(';', p);
        if (q == std::string::npos) q = arch.size();
        std::string one = arch.substr(p, q - p);
        if (one.rfind("sm_", 0) == 0 || one.rfind("compute_", 0) == 0) one = one.substr(one.find('_') + 1);
        if (!one.empty()) a += (a.empty() ? "" : ";") + one;
        p = q + 1;
      }
      arch = a;
    }
    vars["ARCH"] = !arch.empty() ? arch : cuda ? "80;90" : "gfx90a";
    vars["TARGET_BUILD_NOTE"] = cuda ? "for NVIDIA GPUs with nvcc (CUDA toolkit)" : "for AMD GPUs with hipcc (ROCm/HIP)";
    vars["TARGET_TOOLKIT"] = cuda ? "CUDA toolkit (nvcc, cudart)" : "HIP toolkit (hipcc, amdhip64)";
  } else {
    // The CPU profile prices each step's work (a step too small to split runs on one thread):
    // o.device where it names a cpu profile (a copy of devices/host.profile), else the host's.
    Expected<DeviceProfile> host = loadDeviceProfile(o.device.empty() ? "host" : o.device);
    if (!host.ok() || !host->isCpu()) host = loadDeviceProfile("host");
    if (!host.ok()) return host.status();
    MG_RETURN_IF_ERROR(emitCpuProgram(g, plan, vars, o.inputNames, o.outputNames, &host.value()));
  }

  std::string bin = o.name + "_weights.bin";
  MG_ASSIGN_OR_RETURN(sum.weightsChecksum, writeWeights(plan, (out / bin).string()));
  sum.files.push_back(bin);
  vars["WEIGHTS_BYTES"] = std::to_string(plan.weightsBytes);
  vars["WEIGHTS_CHECKSUM"] = fmt::format("0x{:016x}", sum.weightsChecksum);
  vars["STEPS"] = std::to_string(plan.steps.size());
  vars["ARENA_BYTES"] = std::to_string(plan.arenaBytes);

  std::string runtimeList;
  MG_RETURN_IF_ERROR(copyRuntime(dirName, out, sum.files, runtimeList));
  vars["RUNTIME_SOURCES"] = runtimeList;

  struct Item {
    const char* tmpl;
    std::string file;
  };
  std::vector<Item> items = {{"NAME.h.in", o.name + ".h"},
                             {gpu ? "NAME.cu.in" : "NAME.cpp.in", o.name + "." + sourceExt},
                             {"runner.cpp.in", o.name + "_runner.cpp"},
                             {"CMakeLists.txt.in", "CMakeLists.txt"},
                             {"config.cmake.in", o.name + "-config.cmake"},
                             {"README.md.in", "README.md"}};
  if (o.embedWeights) items.push_back({"weights.S.in", o.name + "_weights.S"});
  else fs::remove(out / (o.name + "_weights.S"), ec);  // from an earlier embedded compile
  for (const Item& it : items) {
    MG_ASSIGN_OR_RETURN(std::string text, renderTemplateFile(dirName, it.tmpl, vars));
    MG_RETURN_IF_ERROR(writeFileIfChanged((out / it.file).string(), text));
    sum.files.push_back(it.file);
  }
  // The Python loader uses only the C interface, the same for every target: one template.
  vars["MODEL_PY"] = pythonDocSafe(o.model);
  {
    MG_ASSIGN_OR_RETURN(std::string text, renderTemplateFile("common", "NAME.py.in", vars));
    const std::string file = o.name + ".py";
    MG_RETURN_IF_ERROR(writeFileIfChanged((out / file).string(), text));
    sum.files.push_back(file);
  }
  MG_RETURN_IF_ERROR(
      writeFileIfChanged((out / "report.json").string(), reportJson(g, plan, o, sum.weightsChecksum)));
  sum.files.push_back("report.json");
  return sum;
}

}  // namespace magneto
