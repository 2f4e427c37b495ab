// `magnetoc tune`: measured co-tuning (include/magneto/target/tuning.h). Variant k of the model is
// the package in which every launch takes its k-th tile candidate (rank 0 = the cost model's
// choice); each variant is built, its launches are timed one by one on the device
// (RUNNER --profile-launches: device events between launches, median over --runs), and each
// launch keeps the tiles of the variant in which it was fastest. Launches are independent in
// this respect: a launch's tiles change its own blocks, never another launch's inputs, outputs or
// memory plan, so choosing per launch from different variants is sound.
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "magneto/driver/build.h"
#include "magneto/driver/commands.h"

namespace magneto {
namespace driver {
namespace fs = std::filesystem;

namespace {

struct Variant {
  CompileResult compiled;
  std::string runner;
  std::vector<double> launchMs;  // per generated launch
  Status status = Status::success();
};

// "launch I: MS ms" lines of RUNNER --profile-launches.
Expected<std::vector<double>> parseProfile(const std::string& out, int launches) {
  std::vector<double> ms(static_cast<size_t>(launches), -1.0);
  size_t pos = 0;
  while ((pos = out.find("launch ", pos)) != std::string::npos) {
    int i = -1;
    double t = -1;
    if (std::sscanf(out.c_str() + pos, "launch %d: %lf ms", &i, &t) == 2 && i >= 0 && i < launches)
      ms[static_cast<size_t>(i)] = t;
    pos += 7;
  }
  for (int i = 0; i < launches; ++i)
    if (ms[static_cast<size_t>(i)] < 0)
      return Status(ErrorCode::kToolFailed,
                    fmt::format("the runner printed no time for launch {}:\n{}", i, tailLines(out, 5)));
  return ms;
}

std::string shortKey(const std::string& key) {
  size_t nl = key.find('\n');
  if (nl == std::string::npos) return key;
  int more = 0;
  for (char c : key) more += c == '\n';
  return fmt::format("{} (+{} joint members)", key.substr(0, nl), more);
}

}  // namespace

Status tuneModel(const TuneOptions& o) {
  Reporter rep(o.compile.common.verbosity);
  MG_RETURN_IF_ERROR(checkTarget(o.compile.target));
  if (!isGpuTarget(o.compile.target))
    return badInput("tune: --target must be cuda or hip (the cpu target has no tiles to tune)");
  if (o.output.empty()) return badInput("tune: no record file: add -o RECORD.json");
  if (o.variants < 1 || o.variants > 16) return badInput("tune: --variants must be 1..16, got {}", o.variants);
  if (o.runs < 1) return badInput("tune: --runs must be at least 1");

  std::string work = o.workDir;
  bool removeWork = false;
  if (work.empty()) {
    MG_ASSIGN_OR_RETURN(work, makeTempDir("magneto-tune."));
    removeWork = o.compile.common.verbosity < 2;
  }

  // 1. Compile the variants; stop early when no launch has a candidate of the next rank.
  std::vector<Variant> variants;
  for (int k = 0; k < o.variants; ++k) {
    CompileOptions co = o.compile;
    co.outDir = (fs::path(work) / fmt::format("variant-{}", k)).string();
    co.tuneVariant = k;
    co.build = false;
    if (co.name.empty()) co.name = packageNameFromPath(co.model);
    rep.progress(fmt::format("variant {}: compiling (every launch takes its tile candidate of rank {})", k, k));
    MG_ASSIGN_OR_RETURN(CompileResult r, compileModel(co));
    int more = 0;
    for (int c : r.summary.launchCandidates) more += c > k;
    variants.push_back(Variant{std::move(r), "", {}, Status::success()});
    if (k > 0 && more == 0) {
      variants.pop_back();
      break;
    }
    if (k == 0) {
      int tunable = 0;
      for (int c : variants[0].compiled.summary.launchCandidates) tunable += c > 1;
      rep.progress(fmt::format("{} launches, {} with more than one tile candidate", variants[0].compiled.summary.launches,
                               tunable));
    }
  }

  // 2. Build them, two at a time (device compilers are single-threaded per file).
  std::mutex mu;
  size_t next = 0;
  auto worker = [&] {
    for (;;) {
      size_t k;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= variants.size()) return;
        k = next++;
      }
      Variant& v = variants[k];
      Reporter quiet(o.compile.common.verbosity > 1 ? 1 : 0);
      auto runner = buildPackageRunner(v.compiled.outDir, v.compiled.name, o.compile.target, o.emulate,
                                       true, o.compile.arch, quiet);
      std::lock_guard<std::mutex> lock(mu);
      if (!runner.ok()) v.status = runner.status();
      else v.runner = runner.value();
      rep.progress(fmt::format("variant {}: {}", k, runner.ok() ? "built" : "build FAILED"));
    }
  };
  rep.progress(fmt::format("building {} variant(s){}", variants.size(),
                           o.emulate ? " for the CPU emulation" : " with the device compiler"));
  {
    std::vector<std::thread> pool;
    for (size_t j = 0; j < std::min<size_t>(2, variants.size()); ++j) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  for (const Variant& v : variants) MG_RETURN_IF_ERROR(v.status);

  // 3. Time every launch of every variant, one variant at a time (the device is not shared).
  int launches = variants[0].compiled.summary.launches;
  for (size_t k = 0; k < variants.size(); ++k) {
    Variant& v = variants[k];
    if (v.compiled.summary.launches != launches)
      return internalStatus(fmt::format("tune: variant {} has {} launches, variant 0 {}", k,
                                        v.compiled.summary.launches, launches));
    rep.progress(fmt::format("variant {}: timing each launch over {} run(s)", k, o.runs));
    MG_ASSIGN_OR_RETURN(ProcessResult r,
                        runProcess({v.runner, "--profile-launches", "--runs", std::to_string(o.runs), "--seed", "1"}));
    if (r.exitCode != 0)
      return Status(ErrorCode::kToolFailed,
                    fmt::format("variant {} failed to run:\n{}", k, tailLines(r.output, 10)));
    MG_ASSIGN_OR_RETURN(v.launchMs, parseProfile(r.output, launches));
  }

  // 4. Per plan launch (its phases summed): the fastest variant.
  const PackageSummary& base = variants[0].compiled.summary;
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> perKey;  // key -> ms per variant
  std::map<std::string, size_t> firstLaunch;
  for (int i = 0; i < launches; ++i) {
    const std::string& key = base.launchKeys[static_cast<size_t>(i)];
    if (!perKey.count(key)) {
      order.push_back(key);
      perKey[key].assign(variants.size(), 0.0);
      firstLaunch[key] = static_cast<size_t>(i);
    }
    for (size_t k = 0; k < variants.size(); ++k) perKey[key][k] += variants[k].launchMs[static_cast<size_t>(i)];
  }
  TuningRecord rec;
  rec.model = fs::path(o.compile.model).filename().string();
  rec.target = o.compile.target;
  rec.arch = o.compile.arch;
  rec.device = !o.compile.device.empty() ? o.compile.device : o.compile.target == "hip" ? "mi250x" : "h200";
  rec.emulated = o.emulate;
  rec.variants = static_cast<int>(variants.size());
  rec.runs = o.runs;
  double before = 0, after = 0;
  int changed = 0;
  std::printf("%-60s %5s %12s %s\n", "launch (first member)", "cands", "modeled_us", "measured_us per variant -> chosen");
  for (const std::string& key : order) {
    size_t li = firstLaunch[key];
    int cands = std::max(1, base.launchCandidates[li]);
    const std::vector<double>& ms = perKey[key];
    size_t best = 0;
    for (size_t k = 1; k < ms.size() && static_cast<int>(k) < cands; ++k)
      if (ms[k] < ms[best]) best = k;
    before += ms[0];
    after += ms[best];
    changed += best != 0;
    TuningRecordEntry e;
    size_t p = 0;
    while (p <= key.size()) {
      size_t q = key.find('\n', p);
      if (q == std::string::npos) q = key.size();
      e.members.push_back(key.substr(p, q - p));
      p = q + 1;
    }
    e.tiles = variants[best].compiled.summary.launchTiles[li];
    e.chosen = static_cast<int>(best);
    e.costModelUs = base.launchModeledUs[li];
    for (size_t k = 0; k < ms.size(); ++k) e.measuredUs.push_back(static_cast<int>(k) < cands ? ms[k] * 1e3 : -1.0);
    std::string line;
    for (size_t k = 0; k < ms.size() && static_cast<int>(k) < cands; ++k)
      line += fmt::format("{}{:.1f}", k ? " " : "", ms[k] * 1e3);
    std::printf("%-60.60s %5d %12.1f %s -> %zu\n", shortKey(key).c_str(), cands, e.costModelUs, line.c_str(), best);
    if (!e.tiles.empty()) rec.launches.push_back(std::move(e));
  }
  MG_RETURN_IF_ERROR(saveTuningRecord(rec, o.output));
  std::printf("tuned: %d of %zu launches changed tiles; sum of launch times %.4f ms with the cost model's tiles, "
              "%.4f ms tuned (%.2fx)%s\n",
              changed, order.size(), before, after, after > 0 ? before / after : 1.0,
              o.emulate ? " [CPU emulation: these times are not GPU times]" : "");
  std::printf("wrote %s: use it with magnetoc compile MODEL --target %s --tuning %s\n", o.output.c_str(),
              o.compile.target.c_str(), o.output.c_str());
  if (removeWork) {
    std::error_code ec;
    fs::remove_all(work, ec);
  }
  return Status::success();
}

}  // namespace driver
}  // namespace magneto
