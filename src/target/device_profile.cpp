// Device profile files: parser, search path and listing (include/magneto/target/device_profile.h).
// The key table below is the whole format: adding a key is one row.
#include "magneto/target/device_profile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace magneto {
namespace {

namespace fs = std::filesystem;

enum class KeyType { kString, kKind, kInt, kDouble };
// Which kinds of device must give the key.
enum Need : unsigned { kOptional = 0, kGpuNeeds = 1, kCpuNeeds = 2, kBothNeed = 3 };

struct KeySpec {
  const char* key;
  KeyType type;
  unsigned need;
  bool allowAuto;  // `auto` is resolved at load time (sm_count, fp32_tflops on a CPU)
  std::string DeviceProfile::*str = nullptr;
  int DeviceProfile::*i = nullptr;
  double DeviceProfile::*d = nullptr;
};

const std::vector<KeySpec>& keyTable() {
  using P = DeviceProfile;
  static const std::vector<KeySpec> kKeys = {
      {"name", KeyType::kString, kBothNeed, false, &P::name},
      {"kind", KeyType::kKind, kBothNeed, false},
      {"vendor", KeyType::kString, kBothNeed, false, &P::vendor},
      {"arch", KeyType::kString, kBothNeed, false, &P::arch},
      {"description", KeyType::kString, kOptional, false, &P::description},
      {"sm_count", KeyType::kInt, kBothNeed, true, nullptr, &P::smCount},
      {"clock_ghz", KeyType::kDouble, kBothNeed, false, nullptr, nullptr, &P::clockGhz},
      {"fp32_tflops", KeyType::kDouble, kBothNeed, true, nullptr, nullptr, &P::fp32Tflops},
      {"fp16_tflops", KeyType::kDouble, kOptional, false, nullptr, nullptr, &P::fp16Tflops},
      {"mem_bandwidth_gbs", KeyType::kDouble, kBothNeed, false, nullptr, nullptr,
       &P::memBandwidthGbs},
      {"l2_mb", KeyType::kDouble, kOptional, false, nullptr, nullptr, &P::l2Mb},
      {"regs_per_sm", KeyType::kInt, kGpuNeeds, false, nullptr, &P::regsPerSm},
      {"max_regs_per_thread", KeyType::kInt, kGpuNeeds, false, nullptr, &P::maxRegsPerThread},
      {"smem_per_sm_kb", KeyType::kDouble, kGpuNeeds, false, nullptr, nullptr, &P::smemPerSmKb},
      {"max_smem_per_block_kb", KeyType::kDouble, kGpuNeeds, false, nullptr, nullptr,
       &P::maxSmemPerBlockKb},
      {"max_threads_per_sm", KeyType::kInt, kGpuNeeds, false, nullptr, &P::maxThreadsPerSm},
      {"max_blocks_per_sm", KeyType::kInt, kGpuNeeds, false, nullptr, &P::maxBlocksPerSm},
      {"warp_size", KeyType::kInt, kGpuNeeds, false, nullptr, &P::warpSize},
      {"launch_overhead_us", KeyType::kDouble, kBothNeed, false, nullptr, nullptr,
       &P::launchOverheadUs},
      {"graph_launch_overhead_us", KeyType::kDouble, kOptional, false, nullptr, nullptr,
       &P::graphLaunchOverheadUs},
      {"fp32_flops_per_cycle", KeyType::kDouble, kOptional, false, nullptr, nullptr,
       &P::fp32FlopsPerCycle},
      {"reg_alloc_unit", KeyType::kInt, kOptional, false, nullptr, &P::regAllocUnit},
      {"reg_partitions", KeyType::kInt, kOptional, false, nullptr, &P::regPartitions},
      {"smem_alloc_unit", KeyType::kInt, kOptional, false, nullptr, &P::smemAllocUnit},
      {"smem_reserved_per_block", KeyType::kInt, kOptional, false, nullptr, &P::smemReservedPerBlock},
  };
  return kKeys;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool parseDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parseInt(const std::string& s, int* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size() || v < INT32_MIN || v > INT32_MAX) return false;
  *out = static_cast<int>(v);
  return true;
}

bool isDir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

}  // namespace

Expected<DeviceProfile> parseDeviceProfile(const std::string& text, const std::string& fileName) {
  DeviceProfile p;
  p.source = fileName;
  std::map<std::string, int> seen;  // key -> line
  std::set<std::string> autoKeys;
  std::istringstream in(text);
  std::string raw;
  int lineNo = 0;
  auto err = [&](int line, const std::string& what) {
    return badInput("{}:{}: {}", fileName, line, what);
  };
  while (std::getline(in, raw)) {
    ++lineNo;
    std::string line = raw;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      return err(lineNo, fmt::format("expected 'key = value', got '{}'", line));
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key.empty()) return err(lineNo, "missing key before '='");
    if (value.empty()) return err(lineNo, fmt::format("missing value for key '{}'", key));
    const auto& keys = keyTable();
    auto spec =
        std::find_if(keys.begin(), keys.end(), [&](const KeySpec& k) { return key == k.key; });
    if (spec == keys.end()) return err(lineNo, fmt::format("unknown key '{}'", key));
    if (seen.count(key))
      return err(lineNo, fmt::format("key '{}' repeated (first at line {})", key, seen[key]));
    seen[key] = lineNo;
    if (value == "auto") {
      if (!spec->allowAuto) return err(lineNo, fmt::format("key '{}' cannot be 'auto'", key));
      autoKeys.insert(key);
      continue;
    }
    switch (spec->type) {
      case KeyType::kString:
        p.*(spec->str) = value;
        break;
      case KeyType::kKind:
        if (value == "gpu")
          p.kind = DeviceKind::kGpu;
        else if (value == "cpu")
          p.kind = DeviceKind::kCpu;
        else
          return err(lineNo, fmt::format("kind must be 'gpu' or 'cpu', got '{}'", value));
        break;
      case KeyType::kInt: {
        int v = 0;
        if (!parseInt(value, &v) || v < 0)
          return err(lineNo,
                     fmt::format("key '{}' needs a non-negative integer, got '{}'", key, value));
        p.*(spec->i) = v;
        break;
      }
      case KeyType::kDouble: {
        double v = 0;
        if (!parseDouble(value, &v) || v < 0)
          return err(lineNo,
                     fmt::format("key '{}' needs a non-negative number, got '{}'", key, value));
        p.*(spec->d) = v;
        break;
      }
    }
  }
  if (!seen.count("kind")) return badInput("{}: missing required key 'kind'", fileName);
  unsigned need = p.isGpu() ? kGpuNeeds : kCpuNeeds;
  for (const KeySpec& k : keyTable())
    if ((k.need & need) && !seen.count(k.key))
      return badInput("{}: missing required key '{}' for a {} profile", fileName, k.key,
                      p.isGpu() ? "gpu" : "cpu");

  // Resolve `auto`.
  if (autoKeys.count("sm_count")) {
    if (p.isGpu()) return err(seen["sm_count"], "sm_count = auto is only for cpu profiles");
    unsigned hc = std::thread::hardware_concurrency();
    p.smCount = hc > 0 ? static_cast<int>(hc) : 1;
  }
  if (autoKeys.count("fp32_tflops")) {
    if (p.isGpu()) return err(seen["fp32_tflops"], "fp32_tflops = auto is only for cpu profiles");
    if (p.fp32FlopsPerCycle <= 0)
      return err(seen["fp32_tflops"], "fp32_tflops = auto needs fp32_flops_per_cycle");
    p.fp32Tflops = p.clockGhz * p.smCount * p.fp32FlopsPerCycle / 1e3;
  }

  // Values the model divides by.
  auto positive = [&](const char* key, double v) -> Status {
    if (v > 0) return Status::success();
    return err(seen.count(key) ? seen[key] : 0, fmt::format("key '{}' must be positive", key));
  };
  MG_RETURN_IF_ERROR(positive("sm_count", p.smCount));
  MG_RETURN_IF_ERROR(positive("clock_ghz", p.clockGhz));
  MG_RETURN_IF_ERROR(positive("fp32_tflops", p.fp32Tflops));
  MG_RETURN_IF_ERROR(positive("mem_bandwidth_gbs", p.memBandwidthGbs));
  if (p.isGpu()) {
    MG_RETURN_IF_ERROR(positive("regs_per_sm", p.regsPerSm));
    MG_RETURN_IF_ERROR(positive("max_regs_per_thread", p.maxRegsPerThread));
    MG_RETURN_IF_ERROR(positive("smem_per_sm_kb", p.smemPerSmKb));
    MG_RETURN_IF_ERROR(positive("max_smem_per_block_kb", p.maxSmemPerBlockKb));
    MG_RETURN_IF_ERROR(positive("max_threads_per_sm", p.maxThreadsPerSm));
    MG_RETURN_IF_ERROR(positive("max_blocks_per_sm", p.maxBlocksPerSm));
    if (p.warpSize != 32 && p.warpSize != 64)
      return err(seen["warp_size"], fmt::format("warp_size must be 32 or 64, got {}", p.warpSize));
    if (p.maxSmemPerBlockKb > p.smemPerSmKb)
      return err(seen["max_smem_per_block_kb"], "max_smem_per_block_kb exceeds smem_per_sm_kb");
    MG_RETURN_IF_ERROR(positive("reg_alloc_unit", p.regAllocUnit));
    MG_RETURN_IF_ERROR(positive("reg_partitions", p.regPartitions));
    MG_RETURN_IF_ERROR(positive("smem_alloc_unit", p.smemAllocUnit));
    if (p.smemReservedPerBlock < 0)
      return err(seen["smem_reserved_per_block"], "smem_reserved_per_block must not be negative");
  }
  if (p.graphLaunchOverheadUs <= 0) p.graphLaunchOverheadUs = p.launchOverheadUs;
  return p;
}

DeviceProfile capturedInGraph(const DeviceProfile& p) {
  DeviceProfile g = p;
  g.launchOverheadUs = p.graphLaunchOverheadUs;
  g.description += " (launches in a captured graph)";
  return g;
}

std::vector<std::string> deviceProfileDirs() {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("MAGNETO_DEVICES"); d && *d) dirs.push_back(d);
  if (const char* h = std::getenv("MAGNETO_HOME"); h && *h)
    dirs.push_back(std::string(h) + "/share/magneto/devices");
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share/magneto/devices").string());
#ifdef MAGNETO_SOURCE_DIR
  dirs.push_back(std::string(MAGNETO_SOURCE_DIR) + "/devices");
#endif
  std::vector<std::string> existing;
  for (const std::string& d : dirs)
    if (isDir(d) && std::find(existing.begin(), existing.end(), d) == existing.end())
      existing.push_back(d);
  return existing;
}

Expected<DeviceProfile> loadDeviceProfile(const std::string& nameOrPath) {
  std::string path;
  bool isPath =
      nameOrPath.find('/') != std::string::npos ||
      (nameOrPath.size() > 8 && nameOrPath.compare(nameOrPath.size() - 8, 8, ".profile") == 0);
  if (isPath) {
    path = nameOrPath;
  } else {
    for (const std::string& d : deviceProfileDirs()) {
      std::string candidate = d + "/" + nameOrPath + ".profile";
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      std::string known;
      for (const std::string& n : listDeviceProfiles()) known += (known.empty() ? "" : ", ") + n;
      return badInput("unknown device '{}' (known: {})", nameOrPath,
                      known.empty() ? "none" : known);
    }
  }
  std::ifstream f(path);
  if (!f) return badInput("cannot open device profile '{}'", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return parseDeviceProfile(ss.str(), path);
}

std::vector<std::string> listDeviceProfiles() {
  std::set<std::string> names;
  for (const std::string& d : deviceProfileDirs()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      if (e.path().extension() == ".profile") names.insert(e.path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace magneto
