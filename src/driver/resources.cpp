// Resource feedback from the device compiler (include/magneto/driver/resources.h): each distinct
// kernel of a cuda or hip program compiled once per content into the cache, its registers, spills
// and shared memory read from ptxas' verbose output (nvcc) or the AMDGPU back end's resource
// remarks (hipcc), and each launch's occupancy on the device profile.
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
// (CMake's CUDA/HIP Release flags) and the compiler's resource report. hipcc compiles the device
// side only (no host object, no link), which is all the remarks need.
const std::vector<std::string> kPtxasFlags = {"-cubin", "-O3", "-DNDEBUG", "-std=c++17",
                                              "-Xptxas", "-v"};
const std::vector<std::string> kHipccFlags = {"-x", "hip", "--cuda-device-only", "-c", "-O3",
                                              "-DNDEBUG", "-std=c++17",
                                              "-Wno-unused-command-line-argument",
                                              "-Rpass-analysis=kernel-resource-usage"};

// Which device compiler reads the resources: its command, flags and how its report is parsed.
struct ResourceCompiler {
  std::string tool;  // nvcc or hipcc
  std::string kind;  // "ptxas" or "hipcc": LaunchResources::source
  std::string arch;  // sm_90, gfx90a
  bool hip() const { return kind == "hipcc"; }
  const std::vector<std::string>& flags() const { return hip() ? kHipccFlags : kPtxasFlags; }
};

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

// One kernel's resources in ptxas' terms; for hip, `usage` holds the AMDGPU figures mapped onto
// them (registers: the unified VGPRs a wave is allocated; stack: the scratch bytes per lane; static
// smem: LDS; spill bytes: the scratch bytes per lane when registers were spilled, since gfx90a
// spills VGPRs into free AGPRs and SGPRs into VGPR lanes first, which touch no memory) and
// sgprs/vgprs/agprs, the spilled register count and the compiler's waves per SIMD the rest.
struct KernelResult {
  PtxasKernelUsage usage;
  int64_t dynamicSmem = 0;
  int sgprs = 0, vgprs = 0, agprs = 0, wavesPerSimd = 0, spilledRegisters = 0;
};

KernelResult fromAmdgpu(const AmdgpuKernelUsage& a) {
  KernelResult r;
  r.usage.registers = a.unifiedVgprs();
  r.spilledRegisters = a.vgprSpills + a.sgprSpills;
  r.usage.spillStoreBytes = r.spilledRegisters > 0 ? a.scratchBytesPerLane : 0;
  r.usage.stackBytes = a.scratchBytesPerLane;
  r.usage.staticSmemBytes = a.ldsBytes;
  r.sgprs = a.sgprs;
  r.vgprs = a.vgprs;
  r.agprs = a.agprs;
  r.wavesPerSimd = a.wavesPerSimd;
  return r;
}

std::string resultText(const KernelResult& r) {
  return fmt::format("registers={} spill_stores={} spill_loads={} stack={} smem_static={} smem_dynamic={} "
                     "sgprs={} vgprs={} agprs={} waves_per_simd={} spilled_registers={}\n",
                     r.usage.registers, r.usage.spillStoreBytes, r.usage.spillLoadBytes,
                     r.usage.stackBytes, r.usage.staticSmemBytes, r.dynamicSmem, r.sgprs, r.vgprs,
                     r.agprs, r.wavesPerSimd, r.spilledRegisters);
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
  r->sgprs = static_cast<int>(v["sgprs"]);
  r->vgprs = static_cast<int>(v["vgprs"]);
  r->agprs = static_cast<int>(v["agprs"]);
  r->wavesPerSimd = static_cast<int>(v["waves_per_simd"]);
  r->spilledRegisters = static_cast<int>(v["spilled_registers"]);
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

// What names the compiler's release in `TOOL --version`, once per process: part of the cache key.
// nvcc: its line with "release" ("Cuda compilation tools, release 13.0, V13.0.48"); hipcc: every
// line with "version" (the HIP and the clang versions).
std::string deviceCompilerIdentity(const std::string& tool) {
  static std::map<std::string, std::string> ids;
  auto it = ids.find(tool);
  if (it != ids.end()) return it->second;
  std::string id = tool, line, versions;
  if (auto r = runProcess({tool, "--version"}); r.ok()) {
    for (std::istringstream in(r->output); std::getline(in, line);) {
      if (line.find("release") != std::string::npos) {
        versions.clear();
        id = line;
        break;
      }
      if (line.find("version") != std::string::npos) versions += "\n" + line;
    }
  }
  return ids[tool] = id + versions;
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

// The compiler's results of `units` (canonical), from the cache or from one compiler call for the
// misses.
Expected<std::map<std::string, KernelResult>> compilerResults(const std::vector<CanonicalUnit>& units,
                                                              const ResourceCompiler& cc,
                                                              ResourceFeedback& fb,
                                                              const Reporter& rep) {
  const std::string& arch = cc.arch;
  MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
  std::error_code ec;
  fs::create_directories(fs::path(cache) / "ptxas", ec);
  MG_ASSIGN_OR_RETURN(auto rt, ptxasRuntimeRoot(cache));
  uint64_t common = hashString(deviceCompilerIdentity(cc.tool) + "\n" + arch, rt.second);
  for (const std::string& f : cc.flags()) common = hashString(f + "\n", common);
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

  rep.progress(fmt::format("reading register and shared-memory use of {} kernel(s) from {} ({})",
                           missing.size(), cc.kind, arch));
  std::string tu =
      "// Generated by magnetoc: the kernels of a package, each once, for the compiler's resource report.\n"
      "#include <cstddef>\n#include <cstdint>\n\n#include \"runtime/kernels/mg_kernels.cuh\"\n\n"
      "constexpr size_t mgMax(size_t a, size_t b) { return a > b ? a : b; }\n\n";
  for (const CanonicalUnit* u : missing) tu += unitSection(*u);
  MG_ASSIGN_OR_RETURN(std::string tmp, makeTempDir("ptxas-", (fs::path(cache) / "ptxas").string()));
  std::string src = (fs::path(tmp) / "kernels.cu").string();
  MG_RETURN_IF_ERROR(writeFile(src, tu));
  std::vector<std::string> cmd = {cc.tool, cc.hip() ? "--offload-arch=" + arch : "-arch=" + arch};
  cmd.insert(cmd.end(), cc.flags().begin(), cc.flags().end());
  cmd.insert(cmd.end(), {"-I" + rt.first, "-o",
                         (fs::path(tmp) / (cc.hip() ? "kernels.o" : "kernels.cubin")).string(), src});
  rep.detail("running: " + commandLine(cmd));
  MG_ASSIGN_OR_RETURN(ProcessResult pr, runProcess(cmd));
  if (pr.exitCode != 0) {
    Status s(ErrorCode::kToolFailed,
             fmt::format("{} failed on the kernels for the resource report (exit status {}; the "
                         "source is kept in {}):\n{}",
                         cc.tool, pr.exitCode, src, tailLines(pr.output, 30)));
    return s;
  }
  // Both reports become name -> KernelResult; the probes only need a name.
  std::map<std::string, KernelResult> byName;
  std::map<std::string, PtxasKernelUsage> entries;
  if (cc.hip()) {
    for (const auto& [name, a] : parseAmdgpuResourceRemarks(pr.output)) {
      byName[name] = fromAmdgpu(a);
      entries[name] = byName[name].usage;
    }
  } else {
    entries = parsePtxasVerbose(pr.output, arch);
    for (const auto& [name, usage] : entries) byName[name].usage = usage;
  }
  for (const CanonicalUnit* u : missing) {
    KernelResult r;
    bool found = false;
    for (const auto& [name, result] : byName)
      if (name.find("mgk_" + u->key) != std::string::npos) r = result, found = true;
    if (!found || !probeSmem(entries, u->key, &r.dynamicSmem))
      return internalStatus("{}' output names no resources for kernel mgk_{} (source kept in {})",
                            cc.tool, u->key, src);
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

std::string findHipcc() {
  if (const char* c = std::getenv("HIPCXX"); c && *c) return c;
  if (inPath("hipcc")) return "hipcc";
  std::error_code ec;
  if (fs::is_regular_file("/opt/rocm/bin/hipcc", ec)) return "/opt/rocm/bin/hipcc";
  return "";
}

std::string findNvcc() {
  if (const char* c = std::getenv("CUDACXX"); c && *c) return c;
  if (inPath("nvcc")) return "nvcc";
  std::error_code ec;
  if (fs::is_regular_file("/usr/local/cuda/bin/nvcc", ec)) return "/usr/local/cuda/bin/nvcc";
  return "";
}

namespace {

// The device compiler that reads resources for `target` on `device`, or none (cc.tool empty) with
// the reason in fb.note; an error when `mode` requires one.
Expected<ResourceCompiler> selectResourceCompiler(const DeviceProfile& device, const std::string& target,
                                                  ResourceMode mode, ResourceFeedback& fb) {
  fb.source = "estimate";
  ResourceCompiler cc;
  cc.arch = device.arch;
  cc.kind = target == "hip" ? "hipcc" : "ptxas";
  bool archFits = target == "hip" ? device.arch.rfind("gfx", 0) == 0 : device.arch.rfind("sm_", 0) == 0;
  if (mode == ResourceMode::kEstimate) {
    fb.note = "resource feedback off: the cost model's estimates";
  } else if (target != "cuda" && target != "hip") {
    fb.note = "target " + target + " has no device compiler: the cost model's estimates";
  } else if (!archFits) {
    fb.note = fmt::format("profile {} has no {} architecture ('{}'): the cost model's estimates",
                          device.name, target == "hip" ? "gfxNNN" : "sm_XX", device.arch);
  } else if ((cc.tool = target == "hip" ? findHipcc() : findNvcc()).empty()) {
    fb.note = target == "hip" ? "hipcc not found (HIPCXX, PATH, /opt/rocm/bin): the cost model's estimates"
                              : "nvcc not found (CUDACXX, PATH, /usr/local/cuda/bin): the cost model's estimates";
  }
  if (mode == ResourceMode::kPtxas && cc.tool.empty())
    return Status(ErrorCode::kToolFailed, "--resources " + cc.kind + ": " + fb.note);

  return cc;
}

}  // namespace

Status prefetchLaunchResources(const std::vector<const GpuEmitSummary*>& programs,
                               const DeviceProfile& device, const std::string& target,
                               ResourceMode mode, const Reporter& rep) {
  ResourceFeedback fb;
  MG_ASSIGN_OR_RETURN(ResourceCompiler cc, selectResourceCompiler(device, target, mode, fb));
  if (cc.tool.empty()) return Status::success();
  std::vector<CanonicalUnit> units;
  std::set<std::string> keys;
  for (const GpuEmitSummary* p : programs)
    for (const GpuKernelUnit& u : p->kernelUnits) {
      CanonicalUnit c = canonicalUnit(u);
      if (keys.insert(c.key).second) units.push_back(std::move(c));
    }
  auto r = compilerResults(units, cc, fb, rep);
  if (!r.ok()) {
    if (mode == ResourceMode::kPtxas) return r.status();
    rep.progress("warning: " + r.status().message());
    return Status::success();
  }
  rep.progress(fmt::format("{} distinct kernel(s) of {} program(s): {} compiled by {} in one call, {} cached",
                           units.size(), programs.size(), fb.kernelsCompiled, cc.kind, fb.kernelsCached));
  return Status::success();
}

Expected<ResourceFeedback> launchResources(const GpuEmitSummary& program, const DeviceProfile& device,
                                           const std::string& target, ResourceMode mode,
                                           const Reporter& rep) {
  ResourceFeedback fb;
  MG_ASSIGN_OR_RETURN(ResourceCompiler cc, selectResourceCompiler(device, target, mode, fb));

  std::vector<CanonicalUnit> units;
  std::map<std::string, KernelResult> measured;
  if (!cc.tool.empty()) {
    for (const GpuKernelUnit& u : program.kernelUnits) units.push_back(canonicalUnit(u));
    auto r = compilerResults(units, cc, fb, rep);
    if (!r.ok()) {
      if (mode == ResourceMode::kPtxas) return r.status();
      rep.progress("warning: " + r.status().message());
      fb.note = cc.tool + " failed on the kernels: the cost model's estimates";
    } else {
      measured = std::move(r).value();
      fb.source = cc.kind;
    }
  }

  for (size_t i = 0; i < program.launchInfo.size(); ++i) {
    const GpuLaunchInfo& info = program.launchInfo[i];
    LaunchResources l;
    l.name = info.name;
    l.members = info.members;
    l.threads = info.threads;
    l.optPoint = info.optPoint;
    l.optBinding = info.optBinding;
    l.generalTiles = info.generalTiles;
    l.optModeledUs = info.optModeledUs;
    l.generalModeledUs = info.generalModeledUs;
    const GpuKernelUnit* unit = info.kernel >= 0 && static_cast<size_t>(info.kernel) < program.kernelUnits.size()
                                    ? &program.kernelUnits[info.kernel] : nullptr;
    l.kernel = unit ? unit->name : info.name;
    // The cost model's tiles: a joint kernel needs the most any member needs.
    if (i < program.launchTiles.size())
      for (const TileConfig& t : program.launchTiles[i]) {
        l.estimatedRegisters = std::max(l.estimatedRegisters, t.regsPerThread);
        l.estimatedSmemBytes = std::max<int64_t>(l.estimatedSmemBytes, t.smemBytes);
      }
    if (i < program.launchTiles.size())
      for (const TileConfig& t : program.launchTiles[i]) l.tiles.push_back(t.str());
    l.estimatedOccupancy = kernelOccupancy(l.threads, l.estimatedRegisters, l.estimatedSmemBytes, device).fraction;
    if (fb.source != "estimate" && unit) {
      const KernelResult& r = measured.at(units[info.kernel].key);
      l.registers = r.usage.registers;
      l.spillBytes = r.usage.spillStoreBytes + r.usage.spillLoadBytes;
      l.smemBytes = r.usage.staticSmemBytes + r.dynamicSmem;
      l.stackBytes = r.usage.stackBytes;
      l.sgprs = r.sgprs;
      l.vgprs = r.vgprs;
      l.agprs = r.agprs;
      l.spilledRegisters = r.spilledRegisters;
      l.compilerWavesPerSimd = r.wavesPerSimd;
      l.source = fb.source;
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
