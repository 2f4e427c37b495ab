// Building generated packages: CMake, and the fast path with a cached runtime library (see
// include/magneto/driver/build.h for why there are two).
#include "magneto/driver/build.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "magneto/codegen/template.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

namespace {

// Flags of the cached runtime library: optimized, because bench times it.
std::vector<std::string> runtimeFlags(const std::string& arch) {
  return {"-std=c++17", "-O3", "-march=" + (arch.empty() ? std::string("native") : arch), "-fPIC",
          "-DNDEBUG"};
}

Status toolFailed(const std::string& what, const ProcessResult& r, const std::string& log) {
  return Status(ErrorCode::kToolFailed,
                fmt::format("{} failed (exit status {}). The end of the log{}:\n{}", what,
                            r.exitCode, log.empty() ? "" : " (full log: " + log + ")",
                            tailLines(r.output, 30)));
}

// The compiler's name and the first line of its --version, part of every cache key (asked once
// per compiler and process).
std::string compilerIdentity(const std::string& compiler = cxxCompiler()) {
  static std::mutex mu;
  static std::map<std::string, std::string> ids;
  std::lock_guard<std::mutex> lock(mu);
  auto it = ids.find(compiler);
  if (it != ids.end()) return it->second;
  auto r = runProcess({compiler, "--version"});
  std::string id = compiler + "\n" + (r.ok() ? r->output.substr(0, r->output.find('\n')) : "?");
  ids.emplace(compiler, id);
  return id;
}

// What a command of a package build does, for its progress line: "compiling model.cu (c++)".
std::string describeCommand(const std::vector<std::string>& cmd) {
  std::string tool = fs::path(cmd[0]).filename().string();
  if (tool == "cmake") {
    for (const std::string& a : cmd)
      if (a == "--build") return "building with CMake";
    return "configuring with CMake";
  }
  bool compileOnly = std::find(cmd.begin(), cmd.end(), "-c") != cmd.end();
  std::string source;
  for (const std::string& a : cmd) {
    std::string ext = fs::path(a).extension().string();
    if (ext == ".cpp" || ext == ".cu" || ext == ".hip" || ext == ".S") source = fs::path(a).filename().string();
    if (compileOnly && !source.empty()) break;
  }
  if (compileOnly) return "compiling " + (source.empty() ? std::string("a source") : source) + " (" + tool + ")";
  return "linking (" + tool + ")";
}

// A build tool's own progress line ("[ 50%] Building CUDA object ...", "[3/7] Linking ..."), shown
// as ours so that a long nvcc or hipcc build says which file it is on.
bool isBuildProgressLine(const std::string& line) {
  if (line.size() < 4 || line[0] != '[') return false;
  size_t close = line.find("] ");
  if (close == std::string::npos || close > 12) return false;
  return line.find_first_not_of(" 0123456789%/", 1) == close;
}

// Runs `cmds` in order in `cwd` ("" = here), appending each command line and its output to `log`
// as it goes; stops at the first failure with `what` and the log's tail. Each command gets a
// progress line "[k/N] what it does", and a CMake build's per-file lines are passed on.
Status runLogged(const std::vector<std::vector<std::string>>& cmds, const std::string& cwd,
                 const std::string& log, const std::string& what, const Reporter& rep) {
  std::string all;
  for (size_t i = 0; i < cmds.size(); ++i) {
    const auto& cmd = cmds[i];
    rep.progress(fmt::format("  [{}/{}] {}", i + 1, cmds.size(), describeCommand(cmd)));
    rep.detail("running" + (cwd.empty() ? std::string() : " (in " + cwd + ")") + ": " + commandLine(cmd));
    MG_ASSIGN_OR_RETURN(ProcessResult r, runProcess(cmd, cwd, [&](const std::string& line) {
                          if (isBuildProgressLine(line)) rep.progress("    " + line);
                        }));
    all += "$ " + commandLine(cmd) + "\n" + r.output;
    (void)writeFile(log, all);
    if (r.exitCode != 0) return toolFailed(what, r, log);
  }
  return Status::success();
}

}  // namespace

Status buildWithCmake(const std::string& dir, const Reporter& rep) {
  fs::path build = fs::path(dir) / "build";
  std::error_code ec;
  fs::create_directories(build, ec);
  std::string log = (build / "magnetoc_build.log").string();
  std::vector<std::vector<std::string>> cmds = {
      {"cmake", "-S", dir, "-B", build.string(), "-DCMAKE_BUILD_TYPE=Release"},
      {"cmake", "--build", build.string(), "-j2"}};
  return runLogged(cmds, "", log, "building the package with CMake", rep);
}

namespace {

// `h` extended with each runtime file's name, size and text: cache keys change with any edit.
Expected<uint64_t> hashRuntimeFiles(const std::vector<RuntimeFile>& files, uint64_t h) {
  for (const RuntimeFile& f : files) {
    MG_ASSIGN_OR_RETURN(std::string text, readFile(f.path));
    h = hashString(f.rel + "\n" + std::to_string(text.size()) + "\n", h);
    h = hashString(text, h);
  }
  return h;
}

}  // namespace

Expected<std::string> runtimeKey(const std::string& target, const std::string& arch) {
  MG_ASSIGN_OR_RETURN(std::vector<RuntimeFile> files, runtimeSources(target));
  uint64_t h = hashString(compilerIdentity());
  for (const std::string& f : runtimeFlags(arch)) h = hashString(f + "\n", h);
  MG_ASSIGN_OR_RETURN(h, hashRuntimeFiles(files, h));
  return target + "-" + hashHex(h);
}

namespace {

// An exclusive lock on a file of the cache while one process builds what others would build too
// (a test suite runs many magnetoc processes at once on an empty cache: without it each compiled
// the whole runtime). Best effort: where the file system cannot lock, processes build side by
// side and publish atomically as before.
class CacheLock {
 public:
  explicit CacheLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~CacheLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_;
};

}  // namespace

Expected<std::string> cachedRuntimeLibrary(const std::string& target, const std::string& arch,
                                           const Reporter& rep) {
  MG_ASSIGN_OR_RETURN(std::string key, runtimeKey(target, arch));
  MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
  fs::path final = fs::path(cache) / ("runtime-" + key);
  fs::path lib = final / "libmagneto_rt.a";
  std::error_code ec;
  if (fs::is_regular_file(lib, ec)) return lib.string();
  // One builder at a time; whoever waited finds the library the first one published.
  CacheLock lock((fs::path(cache) / ("runtime-" + key + ".lock")).string());
  if (fs::is_regular_file(lib, ec)) return lib.string();

  MG_ASSIGN_OR_RETURN(std::vector<RuntimeFile> files, runtimeSources(target));
  MG_ASSIGN_OR_RETURN(std::string commonDir, runtimeCommonDir());
  std::vector<RuntimeFile> sources;
  for (const RuntimeFile& f : files)
    if (fs::path(f.rel).extension() == ".cpp") sources.push_back(f);
  MG_ASSIGN_OR_RETURN(std::string tmp, makeTempDir("runtime-" + key + ".tmp.", cache));
  rep.progress(fmt::format("building the {} runtime once into the cache {}", target,
                           final.string()));

  // Objects are cached one by one, keyed by their source, every header and the flags, so that a
  // change to one kernel file recompiles only that file.
  uint64_t common = hashString(compilerIdentity());
  for (const std::string& f : runtimeFlags(arch)) common = hashString(f + "\n", common);
  for (const RuntimeFile& f : files) {
    if (fs::path(f.rel).extension() != ".h") continue;
    MG_ASSIGN_OR_RETURN(std::string text, readFile(f.path));
    common = hashString(f.rel + "\n" + text, common);
  }
  fs::path objDir = fs::path(cache) / "objects";
  fs::create_directories(objDir, ec);

  // Compile in parallel: a handful of jobs, each one compiler process.
  std::vector<std::string> objects(sources.size());
  std::vector<Status> errors(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    MG_ASSIGN_OR_RETURN(std::string text, readFile(sources[i].path));
    objects[i] = (objDir / (fs::path(sources[i].rel).stem().string() + "-" +
                            hashHex(hashString(sources[i].rel + "\n" + text, common)) + ".o"))
                     .string();
  }
  std::mutex mu;
  size_t next = 0, done = 0;
  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= sources.size()) return;
        i = next++;
      }
      std::error_code e;
      if (fs::is_regular_file(objects[i], e)) {
        std::lock_guard<std::mutex> lock(mu);
        ++done;
        continue;
      }
      std::string tmpObj = tmp + "/" + fs::path(sources[i].rel).stem().string() + ".o";
      std::vector<std::string> cmd = {cxxCompiler()};
      for (const std::string& f : runtimeFlags(arch)) cmd.push_back(f);
      // runtime/common sits beside the target's files in a package; here it is a folder of its own.
      cmd.insert(cmd.end(), {"-I" + commonDir, "-c", sources[i].path, "-o", tmpObj});
      rep.detail("running: " + commandLine(cmd));
      auto r = runProcess(cmd);
      {
        std::lock_guard<std::mutex> lock(mu);
        rep.progress(fmt::format("  [{}/{}] compiled runtime/{}", ++done, sources.size(), sources[i].rel));
      }
      if (!r.ok()) errors[i] = r.status();
      else if (r->exitCode != 0) errors[i] = toolFailed("compiling runtime/" + sources[i].rel, r.value(), "");
      else if (std::rename(tmpObj.c_str(), objects[i].c_str()) != 0 && !fs::is_regular_file(objects[i], e))
        errors[i] = Status(ErrorCode::kToolFailed, "cannot store " + objects[i] + " in the cache");
    }
  };
  unsigned hw = std::thread::hardware_concurrency();
  size_t jobs = std::min<size_t>(sources.size(), std::max(2u, std::min(hw, 8u)));
  std::vector<std::thread> pool;
  for (size_t j = 0; j < jobs; ++j) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (const Status& s : errors)
    if (!s.ok()) {
      fs::remove_all(tmp, ec);
      return s;
    }
  std::vector<std::string> ar = {"ar", "rcs", tmp + "/libmagneto_rt.a"};
  ar.insert(ar.end(), objects.begin(), objects.end());
  MG_ASSIGN_OR_RETURN(ProcessResult r, runProcess(ar));
  if (r.exitCode != 0) {
    fs::remove_all(tmp, ec);
    return toolFailed("archiving the runtime", r, "");
  }
  // Publish atomically; when another process got there first, use its library.
  if (std::rename(tmp.c_str(), final.c_str()) != 0) fs::remove_all(tmp, ec);
  if (!fs::is_regular_file(lib, ec))
    return Status(ErrorCode::kToolFailed, fmt::format("cannot publish the runtime library to {}",
                                                      final.string()));
  return lib.string();
}

namespace {

// Flags of the per-model compile in the fast path. -O1: model.cpp is tables and a step loop;
// the kernels it calls are in the optimized cached runtime.
std::vector<std::string> modelFlags(const std::string& arch) {
  return {"-std=c++17", "-O1", "-march=" + (arch.empty() ? std::string("native") : arch),
          "-DNDEBUG"};
}

// Standard headers of the generated runner, precompiled once per compiler and flags: parsing
// them was most of a small model's build time (1 s of 1.5 s).
const char* const kPchHeaders[] = {"algorithm", "atomic", "chrono", "cmath",  "cstdint",
                                   "cstdio",    "cstdlib", "cstring", "functional", "memory",
                                   "mutex",     "new",    "set",     "string", "thread", "vector"};
// Those of an emulated GPU package: its template's and runtime/gpu's (73k of the 79k lines a
// small package's compile parsed).
const char* const kEmuPchHeaders[] = {
    "algorithm", "atomic",     "chrono", "cmath", "condition_variable", "cstddef", "cstdint",
    "cstdio",    "cstdlib",    "cstring", "functional", "initializer_list", "map", "memory",
    "mutex",     "new",        "set",     "string",     "thread",           "tuple", "type_traits",
    "utility",   "vector"};

// A temporary name beside `target` that no other process or thread writes: `magnetoc tune` builds
// its variants on several threads of one process, so the pid alone is not enough (two threads
// once wrote one .gch through the same name and left a corrupt precompiled header in the cache).
std::string uniqueTempName(const std::string& target) {
  static std::atomic<uint64_t> counter{0};
  return target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// Compiles `cmd` into `target` through a temporary file and an atomic rename, so that parallel
// checks never see a half-written cache entry. Returns early when the target exists.
Status publishCompiled(std::vector<std::string> cmd, const std::string& target,
                       const std::string& what) {
  std::error_code ec;
  if (fs::is_regular_file(target, ec)) return Status::success();
  std::string tmp = uniqueTempName(target);
  cmd.insert(cmd.end(), {"-o", tmp});
  MG_ASSIGN_OR_RETURN(ProcessResult r, runProcess(cmd));
  if (r.exitCode != 0) {
    fs::remove(tmp, ec);
    return toolFailed(what, r, "");
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) fs::remove(tmp, ec);
  return Status::success();
}

// The compiler options that make `compiler` read these standard `headers` precompiled for these
// flags (built once into the cache's pch-HASH folder): GCC finds mg_pch.h.gch beside the
// -include'd header (and falls back to the text if it cannot use it); clang reads the .pch it is
// given (-include-pch; it refuses a mismatched one, and the flags are the key).
Expected<std::vector<std::string>> cachedPch(const std::string& compiler,
                                             const std::vector<std::string>& flags,
                                             const std::vector<const char*>& headers) {
  MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
  const std::string id = compilerIdentity(compiler);
  const bool clang = id.find("clang") != std::string::npos;
  uint64_t h = hashString(id);
  for (const std::string& f : flags) h = hashString(f + "\n", h);
  std::string header;
  for (const char* name : headers) header += std::string("#include <") + name + ">\n";
  h = hashString(header, h);
  fs::path dir = fs::path(cache) / ("pch-" + hashHex(h));
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string hdr = (dir / "mg_pch.h").string();
  if (!fs::is_regular_file(hdr, ec)) {
    std::string tmp = uniqueTempName(hdr);
    MG_RETURN_IF_ERROR(writeFile(tmp, header));
    std::rename(tmp.c_str(), hdr.c_str());
  }
  const std::string pch = hdr + (clang ? ".pch" : ".gch");
  std::vector<std::string> cmd = {compiler};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  cmd.insert(cmd.end(), {"-x", "c++-header", hdr});
  MG_RETURN_IF_ERROR(publishCompiled(cmd, pch, "precompiling the standard headers"));
  if (clang) return std::vector<std::string>{"-include-pch", pch};
  return std::vector<std::string>{"-I" + dir.string(), "-include", "mg_pch.h"};
}

// The package's NAME_runner.cpp compiled into the cache's objects/ folder. It depends only on its
// own text and NAME.h (the package name and the C interface), so one object serves every check
// of every model with the same name: `flags` and `extra` (precompiled-header options, which do
// not change the object) are part of the key only through `flags`.
Expected<std::string> cachedRunnerObject(const std::string& dir, const std::string& name,
                                         const std::vector<std::string>& flags,
                                         const std::vector<std::string>& extra) {
  MG_ASSIGN_OR_RETURN(std::string runnerSrc, readFile(dir + "/" + name + "_runner.cpp"));
  MG_ASSIGN_OR_RETURN(std::string header, readFile(dir + "/" + name + ".h"));
  MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
  uint64_t h = hashString(compilerIdentity());
  for (const std::string& f : flags) h = hashString(f + "\n", h);
  h = hashString(header, hashString(runnerSrc, h));
  fs::path objDir = fs::path(cache) / "objects";
  std::error_code ec;
  fs::create_directories(objDir, ec);
  std::string obj = (objDir / ("runner-" + hashHex(h) + ".o")).string();
  std::vector<std::string> cmd = {cxxCompiler()};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  cmd.insert(cmd.end(), {"-I" + dir, "-c", dir + "/" + name + "_runner.cpp"});
  MG_RETURN_IF_ERROR(publishCompiled(cmd, obj, "compiling the package's runner"));
  return obj;
}

// The CPU emulation's entry points (the package's runtime/mg_emu_core.cpp: host API, grid and
// block runners) compiled once into the cache's objects/ folder for this compiler, these flags
// and this runtime text (the GPU runtime a package copies, as runtimeKey hashes the CPU one), and
// linked with every emulated package. A small package's compile was mostly the emulator
// (test_relu: 2.4 s of CPU with it, 1.4 s against its declarations and the precompiled headers).
Expected<std::string> cachedEmuCoreObject(const std::string& dir, const std::string& compiler,
                                          const std::vector<std::string>& flags) {
  MG_ASSIGN_OR_RETURN(std::string cache, cacheDir());
  MG_ASSIGN_OR_RETURN(std::vector<RuntimeFile> files, runtimeSources("gpu"));
  uint64_t h = hashString(compilerIdentity(compiler));
  for (const std::string& f : flags) h = hashString(f + "\n", h);
  MG_ASSIGN_OR_RETURN(h, hashRuntimeFiles(files, h));
  std::error_code ec;
  fs::path objDir = fs::path(cache) / "objects";
  fs::create_directories(objDir, ec);
  std::string obj = (objDir / ("emu-core-" + hashHex(h) + ".o")).string();
  if (fs::is_regular_file(obj, ec)) return obj;
  // Parallel checks on an empty cache: one compiles, the others wait and find its object.
  CacheLock lock(obj + ".lock");
  std::vector<std::string> cmd = {compiler};
  cmd.insert(cmd.end(), flags.begin(), flags.end());
  cmd.insert(cmd.end(), {"-c", (fs::path(dir) / "runtime" / "mg_emu_core.cpp").string()});
  MG_RETURN_IF_ERROR(publishCompiled(cmd, obj, "compiling the GPU emulation (runtime/mg_emu_core.cpp)"));
  return obj;
}

}  // namespace

Expected<std::string> buildRunnerFast(const std::string& dir, const std::string& name,
                                      bool embeddedWeights, const std::string& arch,
                                      const Reporter& rep) {
  MG_ASSIGN_OR_RETURN(std::string lib, cachedRuntimeLibrary("cpu", arch, rep));
  std::vector<std::string> flags = modelFlags(arch);
  std::vector<std::string> pchFlags;
  auto pch = cachedPch(cxxCompiler(), flags, {std::begin(kPchHeaders), std::end(kPchHeaders)});
  if (pch.ok()) pchFlags = pch.value();
  else rep.detail("no precompiled headers (" + pch.status().message() + "): compiling without");
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "build-fast", ec);

  MG_ASSIGN_OR_RETURN(std::string runnerObj, cachedRunnerObject(dir, name, flags, pchFlags));

  // model.cpp without the precompiled headers: it includes only the ABI's plain tables
  // (runtime/cpu/mg_package.h), and loading the 50 MB .gch took longer than compiling it (0.26 s
  // of 0.5 s; 0.1 s without). Then the link with the weights' assembler file.
  std::string runner = "build-fast/" + name + "_runner";
  std::vector<std::string> compile = {cxxCompiler()};
  compile.insert(compile.end(), flags.begin(), flags.end());
  compile.insert(compile.end(), {"-I.", "-c", name + ".cpp", "-o", "build-fast/" + name + ".o"});
  std::vector<std::string> link = {cxxCompiler()};
  link.insert(link.end(), flags.begin(), flags.end());
  link.insert(link.end(), {"-o", runner, "build-fast/" + name + ".o", runnerObj});
  if (embeddedWeights) link.insert(link.end(), {name + "_weights.S", "-Wa,-I."});
  link.insert(link.end(), {lib, "-lpthread"});
  // gold links a small model against the runtime archive in half the time of the default
  // linker (0.13 vs 0.30 s), which every `magnetoc check` pays; binutils ships it beside ld.
  if (inPath("ld.gold")) link.push_back("-fuse-ld=gold");
  std::string log = (fs::path(dir) / "build-fast" / "build.log").string();
  MG_RETURN_IF_ERROR(runLogged({compile, link}, dir, log, "compiling the package", rep));
  return (fs::path(dir) / runner).string();
}

Expected<std::string> buildSharedFast(const std::string& dir, const std::string& name,
                                      bool embeddedWeights, const std::string& arch,
                                      const Reporter& rep) {
  MG_ASSIGN_OR_RETURN(std::string lib, cachedRuntimeLibrary("cpu", arch, rep));
  std::vector<std::string> flags = modelFlags(arch);
  flags.push_back("-fPIC");
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "build-fast", ec);
  const std::string object = "build-fast/" + name + ".pic.o";
  const std::string shared = "lib" + name + ".so";
  std::vector<std::string> compile = {cxxCompiler()};
  compile.insert(compile.end(), flags.begin(), flags.end());
  compile.insert(compile.end(), {"-I.", "-c", name + ".cpp", "-o", object});
  std::vector<std::string> link = {cxxCompiler()};
  link.insert(link.end(), flags.begin(), flags.end());
  link.insert(link.end(), {"-shared", "-o", shared, object});
  if (embeddedWeights) link.insert(link.end(), {name + "_weights.S", "-Wa,-I."});
  link.insert(link.end(), {lib, "-lpthread", "-Wl,--exclude-libs,ALL"});
  if (inPath("ld.gold")) link.push_back("-fuse-ld=gold");  // as in buildRunnerFast
  std::string log = (fs::path(dir) / "build-fast" / "build-shared.log").string();
  MG_RETURN_IF_ERROR(runLogged({compile, link}, dir, log, "building the package's shared library", rep));
  return (fs::path(dir) / shared).string();
}

Expected<std::string> buildPackageRunner(const std::string& dir, const std::string& name,
                                         const std::string& target, bool emulate,
                                         bool embeddedWeights, const std::string& arch,
                                         const Reporter& rep, bool racecheck) {
  if (target == "cpu") {
    rep.progress("building (fast path: cached runtime + one compiler call)");
    return buildRunnerFast(dir, name, embeddedWeights, arch, rep);
  }
  std::string ext = target == "hip" ? "hip" : "cu";
  if (emulate) {
    rep.progress("building the " + target + " package for the CPU emulation (" +
                 (racecheck ? "clang++ with ThreadSanitizer: the race check" : "host compiler") +
                 ", -DMG_GPU_EMULATE)");
    return buildEmulatedRunner(dir, name, ext, embeddedWeights, rep, racecheck);
  }
  rep.progress("building the " + target + " package with its CMake (" +
               (target == "cuda" ? "nvcc" : "hipcc") + "); add --emulate to run it on the CPU");
  MG_RETURN_IF_ERROR(buildWithCmake(dir, rep));
  return (fs::path(dir) / "build" / (name + "_runner")).string();
}

Expected<std::string> buildEmulatedRunner(const std::string& dir, const std::string& name,
                                          const std::string& sourceExt, bool embeddedWeights,
                                          const Reporter& rep, bool racecheck) {
  const std::string out = racecheck ? "build-race" : "build-emu";
  std::error_code ec;
  fs::create_directories(fs::path(dir) / out, ec);
  // -Og: checks compile far more often than they run long. On the small zoo the compile takes
  // 40-60% less than at -O1 (squeezenet1_1 8.1 -> 3.6 s) and the emulated runs up to 1.5x longer
  // (0.28 -> 0.44 s for 4 runs): `magnetoc regress --target cuda --emulate` with three orders
  // over the 14 small models went from 101 to 71 s. (-O1 had already replaced -O2: the same run
  // time, 35-40% less compile.)
  // Warnings as errors: generated code must be clean.
  std::vector<std::string> flags = {"-std=c++17", "-Og", "-DNDEBUG", "-DMG_GPU_EMULATE=1",
                                    "-Wall", "-Werror", "-Wno-unused-function",
                                    "-Wno-maybe-uninitialized"};  // GCC false positives
  // The race check: ThreadSanitizer with the emulated GPU threads as its fibers, which needs
  // clang (the emulator's bookkeeping opts out with disable_sanitizer_instrumentation). -O1 as
  // TSan advises; line tables only (the reports' source lines; full -g took 6.2 s instead of 4.6
  // for a small package); no -Werror: clang's warnings are not GCC's.
  std::string compiler = cxxCompiler();
  if (racecheck) {
    if (!inPath("clang++"))
      return Status(ErrorCode::kToolFailed,
                    "--racecheck needs clang++ (ThreadSanitizer with fibers), not found in PATH; "
                    "scripts/setup.sh installs it (Debian: clang)");
    compiler = "clang++";
    flags = {"-std=c++17", "-O1", "-gline-tables-only", "-fsanitize=thread", "-DNDEBUG", "-DMG_GPU_EMULATE=1", "-Wall",
             "-Wno-unused-function"};
  }
  // The emulator itself (runtime/mg_emu_core.cpp) is one cached object per compiler and flags;
  // the package is compiled against its declarations only (MG_EMU_CORE_OBJECT).
  flags.push_back("-DMG_EMU_CORE_OBJECT=1");
  MG_ASSIGN_OR_RETURN(std::string coreObj, cachedEmuCoreObject(dir, compiler, flags));
  std::string runner = out + "/" + name + "_runner";
  std::vector<std::string> compile = {compiler};
  compile.insert(compile.end(), flags.begin(), flags.end());
  // The standard headers precompiled (most of what is left to parse once the emulator is an
  // object of its own).
  auto pch = cachedPch(compiler, flags, {std::begin(kEmuPchHeaders), std::end(kEmuPchHeaders)});
  if (pch.ok()) compile.insert(compile.end(), pch->begin(), pch->end());
  else rep.detail("no precompiled headers (" + pch.status().message() + "): compiling without");
  compile.insert(compile.end(), {"-I.", "-x", "c++", "-c", name + "." + sourceExt, "-o",
                                 out + "/" + name + ".o"});
  // The runner is plain host code (NAME.h's C interface): cached like the CPU fast path's.
  MG_ASSIGN_OR_RETURN(std::string runnerObj,
                      cachedRunnerObject(dir, name, {"-std=c++17", "-O1"}, {}));
  std::vector<std::string> link = {compiler, "-o", runner, out + "/" + name + ".o", coreObj, runnerObj};
  if (racecheck) link.push_back("-fsanitize=thread");
  if (embeddedWeights) link.insert(link.end(), {name + "_weights.S", "-Wa,-I."});
  link.push_back("-lpthread");
  if (inPath("ld.gold")) link.push_back("-fuse-ld=gold");  // as in buildRunnerFast
  std::string log = (fs::path(dir) / out / "build.log").string();
  MG_RETURN_IF_ERROR(runLogged({compile, link}, dir, log,
                               "compiling the emulated GPU package", rep));
  return (fs::path(dir) / runner).string();
}

}  // namespace driver
}  // namespace magneto
