// Resource feedback from ptxas (include/magneto/driver/resources.h): each distinct kernel of a
// cuda program compiled once per content into the cache, its registers, spills and shared memory
// read from ptxas' verbose output, and each launch's occupancy on the device profile.
#include "magneto/driver/resources.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "magneto/codegen/template.h"
#include "magneto/target/resource_usage.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;
namespace {

// The flags every resource compile uses besides the architecture: the package's Release build
// (CMake's CUDA Release flags) and ptxas' resource report.
const std::vector<std::string> kPtxasFlags = {"-cubin", "-O3", "-DNDEBUG", "-std=c++17",
                                              "-Xptxas", "-v"};

// A kernel unit's text with the package-specific names made canonical, so that the same kernel of
// two packages (or of two launches) is one cache entry: the kernel -> MG_KERNEL, its argument
// struct -> MgArgs, the step functors F<step>_<k> -> FN0, FN1, ... in order of appearance, and
// comments (node names, step numbers) dropped.
struct CanonicalUnit {
  std::string code;      // functors, argument struct and kernel
  std::string smemExpr;
  std::string key;       // hash of both
};

CanonicalUnit canonicalUnit(const GpuKernelUnit& u) {
  static const std::regex kComment("//[^\n]*");
  static const std::regex kFunctor("\\bF[0-9]+_[0-9]+\\b");
  std::string argsName = "L" + u.name.substr(std::string("launch").size()) + "Args";
  std::string code = std::regex_replace(u.functors + u.argsStruct + u.kernel, kComment, "");
  std::string smem = u.smemExpr;
  code = std::regex_replace(code, std::regex("\\b" + argsName + "\\b"), "MgArgs");
  code = std::regex_replace(code, std::regex("\\b" + u.name + "\\b"), "MG_KERNEL");
  std::map<std::string, std::string> functors;
  auto renameFunctors = [&](const std::string& text) {
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), kFunctor);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += text.substr(last, it->position() - last);
      auto [f, fresh] = functors.emplace(it->str(), "");
      if (fresh) f->second = "FN" + std::to_string(functors.size() - 1);
      out += f->second;
      last = it->position() + it->length();
    }
    return out + text.substr(last);
  };
  CanonicalUnit c;
  c.code = renameFunctors(code);
  c.smemExpr = renameFunctors(smem);
  c.key = hashHex(hashString(c.smemExpr, hashString(c.code)));
  return c;
}

// The unit's section of the resource translation unit: its code in a namespace of its own, the
// kernel named mgk_KEY, and the probe mgp_KEY<dynamic smem bytes> whose mangled name ptxas prints.
std::string unitSection(const CanonicalUnit& c) {
  std::string code = std::regex_replace(c.code, std::regex("\\bMG_KERNEL\\b"), "mgk_" + c.key);
  return fmt::format(
      "namespace mgr_{0} {{\n{1}\ntemplate <size_t B> __global__ void mgp_{0}() {{}}\n"
      "template __global__ void mgp_{0}<static_cast<size_t>({2})>();\n}}  // namespace mgr_{0}\n\n",
      c.key, code, c.smemExpr);
}

struct KernelResult {
  PtxasKernelUsage usage;
  int64_t dynamicSmem = 0;
};

std::string resultText(const KernelResult& r) {
  return fmt::format("registers={} spill_stores={} spill_loads={} stack={} smem_static={} smem_dynamic={}\n",
                     r.usage.registers, r.usage.spillStoreBytes, r.usage.spillLoadBytes,
                     r.usage.stackBytes, r.usage.staticSmemBytes, r.dynamicSmem);
}

bool parseResultText(const std::string& text, KernelResult* r) {
  std::map<std::string, int64_t> v;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    size_t eq = tok.find('=');
    if (eq == std::string::npos) return false;
    v[tok.substr(0, eq)] = std::strtoll(tok.substr(eq + 1).c_str(), nullptr, 10);
  }
  for (const char* k : {"registers", "spill_stores", "spill_loads", "stack", "smem_static", "smem_dynamic"})
    if (!v.count(k)) return false;
  r->usage.registers = static_cast<int>(v["registers"]);
  r->usage.spillStoreBytes = v["spill_stores"];
  r->usage.spillLoadBytes = v["spill_loads"];
  r->usage.stackBytes = v["stack"];
  r->usage.staticSmemBytes = v["smem_static"];
  r->dynamicSmem = v["smem_dynamic"];
  return r->usage.registers > 0;
}

// The folder holding runtime/ as a package lays it out (the includes of the resource unit), made
// once per runtime text in the cache. Returns it and the runtime's hash.
Expected<std::pair<std::string, uint64_t>> ptxasRuntimeRoot(const std::string& cache) {
  MG_ASSIGN_OR_RETURN(std::vector<RuntimeFile> files, runtimeSources("gpu"));
  uint64_t h = hashString("gpu-runtime");
  std::vector<std::pair<std::string, std::string>> texts;
  for (const RuntimeFile& f : files) {
    MG_ASSIGN_OR_RETURN(std::string text, readFile(f.path));
    h = hashString(f.rel + "\n" + std::to_string(text.size()) + "\n", h);
    h = hashString(text, h);
    texts.emplace_back(f.rel, std::move(text));
  }
  fs::path root = fs::path(cache) / "ptxas" / ("rt-" + hashHex(h));
  std::error_code ec;
  if (fs::is_directory(root, ec)) return std::make_pair(root.string(), h);
  MG_ASSIGN_OR_RETURN(std::string tmp, makeTempDir("rt-tmp.", (fs::path(cache) / "ptxas").string()));
  for (const auto& [rel, text] : texts) {
    fs::path file = fs::path(tmp) / "runtime" / rel;
    fs::create_directories(file.parent_path(), ec);
    if (Status s = writeFile(file.string(), text); !s.ok()) {
      fs::remove_all(tmp, ec);
      return s;
    }
  }
  fs::rename(tmp, root, ec);
  if (ec) fs::remove_all(tmp, ec);  // another process published it first
  return std::make_pair(root.string(), h);
}

// The first line of `nvcc --version` that names the release (once per process).
std::string nvccIdentity(const std::string& nvcc) {
  static std::map<std::string, std::string> ids;
  auto it = ids.find(nvcc);
  if (it != ids.end()) return it->second;
  std::string id = nvcc;
  if (auto r = runProcess({nvcc, "--version"}); r.ok())
    for (std::istringstream in(r->output); std::getline(in, id);)
      if (id.find("release") != std::string::npos) break;
  return ids[nvcc] = id;
}

// The dynamic shared memory that the probe mgp_KEY<B> of `key` carries in its mangled name.
bool probeSmem(const std::map<std::string, PtxasKernelUsage>& entries, const std::string& key,
               int64_t* bytes) {
  std::string tag = "mgp_" + key + "IL";
  for (const auto& [name, usage] : entries) {
    size_t at = name.find(tag);
    if (at == std::string::npos) continue;
    size_t p = at + tag.size();
    while (p < name.size() && std::isalpha(static_cast<unsigned char>(name[p]))) ++p;
    size_t d = p;
    while (d < name.size() && std::isdigit(static_cast<unsigned char>(name[d]))) ++d;
    if (d == p) return false;
    *bytes = std::strtoll(name.substr(p, d - p).c_str(), nullptr, 10);
    return true;
  }
  return false;
}

// The ptxas results of `units` (canonical), from the cache or from one nvcc call for the misses.
Expected<std::map<std::string, KernelResult>> ptxasResults(const std::vector<CanonicalUnit>& units,
                                                           const std::string& nvcc,
                                                           const std::string& arch,
                                                           ResourceFeedback& fb,
                                                           const Reporter& rep) {
  MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
  std::error_code ec;
  fs::create_directories(fs::path(cache) / "ptxas", ec);
  MG_ASSIGN_OR_RETURN(auto rt, ptxasRuntimeRoot(cache));
  uint64_t common = hashString(nvccIdentity(nvcc) + "\n" + arch, rt.second);
  for (const std::string& f : kPtxasFlags) common = hashString(f + "\n", common);
  auto entryPath = [&](const std::string& key) {
    return (fs::path(cache) / "ptxas" / (hashHex(hashString(key, common)) + ".txt")).string();
  };
  std::map<std::string, KernelResult> out;
  std::vector<const CanonicalUnit*> missing;
  for (const CanonicalUnit& u : units) {
    if (out.count(u.key)) continue;
    KernelResult r;
    auto text = readFile(entryPath(u.key));
    if (text.ok() && parseResultText(*text, &r)) {
      out[u.key] = r;
      ++fb.kernelsCached;
    } else if (std::none_of(missing.begin(), missing.end(), [&](const CanonicalUnit* m) { return m->key == u.key; })) {
      missing.push_back(&u);
    }
  }
  if (missing.empty()) return out;

  rep.progress(fmt::format("reading register and shared-memory use of {} kernel(s) from ptxas ({})",
                           missing.size(), arch));
  std::string tu =
      "// Generated by magnetoc: the kernels of a package, each once, for ptxas' resource report.\n"
      "#include <cstddef>\n#include <cstdint>\n\n#include \"runtime/kernels/mg_kernels.cuh\"\n\n"
      "constexpr size_t mgMax(size_t a, size_t b) { return a > b ? a : b; }\n\n";
  for (const CanonicalUnit* u : missing) tu += unitSection(*u);
  MG_ASSIGN_OR_RETURN(std::string tmp, makeTempDir("ptxas-", (fs::path(cache) / "ptxas").string()));
  std::string src = (fs::path(tmp) / "kernels.cu").string();
  MG_RETURN_IF_ERROR(writeFile(src, tu));
  std::vector<std::string> cmd = {nvcc, "-arch=" + arch};
  cmd.insert(cmd.end(), kPtxasFlags.begin(), kPtxasFlags.end());
  cmd.insert(cmd.end(), {"-I" + rt.first, "-o", (fs::path(tmp) / "kernels.cubin").string(), src});
  rep.detail("running: " + commandLine(cmd));
  MG_ASSIGN_OR_RETURN(ProcessResult pr, runProcess(cmd));
  if (pr.exitCode != 0) {
    Status s(ErrorCode::kToolFailed,
             fmt::format("nvcc failed on the kernels for the resource report (exit status {}; the "
                         "source is kept in {}):\n{}",
                         pr.exitCode, src, tailLines(pr.output, 30)));
    return s;
  }
  std::map<std::string, PtxasKernelUsage> entries = parsePtxasVerbose(pr.output, arch);
  for (const CanonicalUnit* u : missing) {
    KernelResult r;
    bool found = false;
    for (const auto& [name, usage] : entries)
      if (name.find("mgk_" + u->key) != std::string::npos) r.usage = usage, found = true;
    if (!found || !probeSmem(entries, u->key, &r.dynamicSmem))
      return internalStatus("ptxas' output names no resources for kernel mgk_{} (source kept in {})",
                            u->key, src);
    out[u->key] = r;
    ++fb.kernelsCompiled;
    std::string path = entryPath(u->key);
    std::string part = path + ".tmp." + hashHex(hashString(tmp));
    if (writeFile(part, resultText(r)).ok() && std::rename(part.c_str(), path.c_str()) != 0)
      fs::remove(part, ec);
  }
  fs::remove_all(tmp, ec);
  return out;
}

}  // namespace

std::string findNvcc() {
  if (const char* c = std::getenv("CUDACXX"); c && *c) return c;
  if (inPath("nvcc")) return "nvcc";
  std::error_code ec;
  if (fs::is_regular_file("/usr/local/cuda/bin/nvcc", ec)) return "/usr/local/cuda/bin/nvcc";
  return "";
}

Expected<ResourceFeedback> launchResources(const GpuEmitSummary& program, const DeviceProfile& device,
                                           const std::string& target, ResourceMode mode,
                                           const Reporter& rep) {
  ResourceFeedback fb;
  fb.source = "estimate";
  std::string nvcc;
  bool smArch = device.arch.rfind("sm_", 0) == 0;
  if (mode == ResourceMode::kEstimate) {
    fb.note = "resource feedback off: the cost model's estimates";
  } else if (target != "cuda") {
    fb.note = "the hip compiler's resource report is not read yet: the cost model's estimates";
  } else if (!smArch) {
    fb.note = fmt::format("profile {} has no sm_XX architecture ('{}'): the cost model's estimates",
                          device.name, device.arch);
  } else if ((nvcc = findNvcc()).empty()) {
    fb.note = "nvcc not found (CUDACXX, PATH, /usr/local/cuda/bin): the cost model's estimates";
  }
  if (mode == ResourceMode::kPtxas && nvcc.empty())
    return Status(ErrorCode::kToolFailed, "--resources ptxas: " + fb.note);

  std::vector<CanonicalUnit> units;
  std::map<std::string, KernelResult> measured;
  if (!nvcc.empty()) {
    for (const GpuKernelUnit& u : program.kernelUnits) units.push_back(canonicalUnit(u));
    auto r = ptxasResults(units, nvcc, device.arch, fb, rep);
    if (!r.ok()) {
      if (mode == ResourceMode::kPtxas) return r.status();
      rep.progress("warning: " + r.status().message());
      fb.note = "nvcc failed on the kernels: the cost model's estimates";
    } else {
      measured = std::move(r).value();
      fb.source = "ptxas";
    }
  }

  for (size_t i = 0; i < program.launchInfo.size(); ++i) {
    const GpuLaunchInfo& info = program.launchInfo[i];
    LaunchResources l;
    l.name = info.name;
    l.members = info.members;
    l.threads = info.threads;
    const GpuKernelUnit* unit = info.kernel >= 0 && static_cast<size_t>(info.kernel) < program.kernelUnits.size()
                                    ? &program.kernelUnits[info.kernel] : nullptr;
    l.kernel = unit ? unit->name : info.name;
    // The cost model's tiles: a joint kernel needs the most any member needs.
    if (i < program.launchTiles.size())
      for (const TileConfig& t : program.launchTiles[i]) {
        l.estimatedRegisters = std::max(l.estimatedRegisters, t.regsPerThread);
        l.estimatedSmemBytes = std::max<int64_t>(l.estimatedSmemBytes, t.smemBytes);
      }
    l.estimatedOccupancy = kernelOccupancy(l.threads, l.estimatedRegisters, l.estimatedSmemBytes, device).fraction;
    if (fb.source == "ptxas" && unit) {
      const KernelResult& r = measured.at(units[info.kernel].key);
      l.registers = r.usage.registers;
      l.spillBytes = r.usage.spillStoreBytes + r.usage.spillLoadBytes;
      l.smemBytes = r.usage.staticSmemBytes + r.dynamicSmem;
      l.source = "ptxas";
    } else {
      l.registers = l.estimatedRegisters;
      l.smemBytes = l.estimatedSmemBytes;
      l.source = "estimate";
    }
    Occupancy o = kernelOccupancy(l.threads, l.registers, l.smemBytes, device);
    l.occupancy = o.fraction;
    l.blocksPerSm = o.blocksPerSm;
    l.limiter = o.limiter;
    fb.launches.push_back(std::move(l));
  }
  return fb;
}

}  // namespace driver
}  // namespace magneto
