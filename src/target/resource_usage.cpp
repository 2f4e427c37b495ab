// ptxas verbose-output parsing and the occupancy formula (include/magneto/target/resource_usage.h).
#include "magneto/target/resource_usage.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <sstream>

namespace magneto {
namespace {

// The number just before `unit` in `line` ("... 256 bytes smem" -> 256), or -1.
int64_t resourceNumberBefore(const std::string& line, const std::string& unit) {
  size_t at = line.find(unit);
  while (at != std::string::npos) {
    size_t end = at;
    while (end > 0 && line[end - 1] == ' ') --end;
    size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
    if (begin < end) return std::strtoll(line.substr(begin, end - begin).c_str(), nullptr, 10);
    at = line.find(unit, at + 1);
  }
  return -1;
}

int64_t roundUpTo(int64_t v, int64_t unit) { return unit > 1 ? (v + unit - 1) / unit * unit : v; }

}  // namespace

std::map<std::string, PtxasKernelUsage> parsePtxasVerbose(const std::string& text,
                                                         const std::string& arch) {
  std::map<std::string, PtxasKernelUsage> out;
  std::map<std::string, PtxasKernelUsage> pending;  // entries seen, "Used" line not yet
  std::string current;       // entry whose "Used" line comes next
  std::string properties;    // entry whose "Function properties" were announced
  bool wanted = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string kCompiling = "Compiling entry function '";
    if (size_t at = line.find(kCompiling); at != std::string::npos) {
      size_t begin = at + kCompiling.size();
      size_t end = line.find('\'', begin);
      if (end == std::string::npos) continue;
      current = line.substr(begin, end - begin);
      size_t forAt = line.find("for '", end);
      std::string entryArch;
      if (forAt != std::string::npos) {
        size_t b = forAt + 5, e = line.find('\'', b);
        if (e != std::string::npos) entryArch = line.substr(b, e - b);
      }
      wanted = arch.empty() || entryArch.empty() || entryArch == arch;
      if (wanted) pending[current] = PtxasKernelUsage{};
      continue;
    }
    const std::string kProps = "Function properties for ";
    if (size_t at = line.find(kProps); at != std::string::npos) {
      properties = line.substr(at + kProps.size());
      while (!properties.empty() && (properties.back() == ' ' || properties.back() == '\r'))
        properties.pop_back();
      continue;
    }
    if (line.find("bytes stack frame") != std::string::npos) {
      // Function properties belong to the entry named before them (or to the current one).
      std::string who = properties.empty() ? current : properties;
      if (!wanted || !pending.count(who)) continue;
      PtxasKernelUsage& u = pending[who];
      u.stackBytes = std::max<int64_t>(0, resourceNumberBefore(line, "bytes stack frame"));
      u.spillStoreBytes = std::max<int64_t>(0, resourceNumberBefore(line, "bytes spill stores"));
      u.spillLoadBytes = std::max<int64_t>(0, resourceNumberBefore(line, "bytes spill loads"));
      continue;
    }
    if (line.find("ptxas info") != std::string::npos && line.find("Used ") != std::string::npos &&
        line.find(" registers") != std::string::npos) {
      if (!wanted || current.empty() || !pending.count(current)) continue;
      PtxasKernelUsage u = pending[current];
      u.registers = static_cast<int>(resourceNumberBefore(line, " registers"));
      u.barriers = static_cast<int>(std::max<int64_t>(0, resourceNumberBefore(line, " barriers")));
      u.staticSmemBytes = std::max<int64_t>(0, resourceNumberBefore(line, " bytes smem"));
      out[current] = u;
      current.clear();
      properties.clear();
    }
  }
  return out;
}

std::map<std::string, AmdgpuKernelUsage> parseAmdgpuResourceRemarks(const std::string& text) {
  std::map<std::string, AmdgpuKernelUsage> out;
  std::map<std::string, bool> hasVgprs;
  std::string current;
  std::istringstream in(text);
  std::string line;
  const std::string kRemark = "remark: ";
  while (std::getline(in, line)) {
    if (line.find("kernel-resource-usage") == std::string::npos) continue;
    size_t at = line.find(kRemark);
    if (at == std::string::npos) continue;
    std::string body = line.substr(at + kRemark.size());
    size_t tail = body.rfind(" [-Rpass-analysis");
    if (tail != std::string::npos) body.resize(tail);
    size_t first = body.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    body = body.substr(first);
    size_t colon = body.rfind(": ");
    if (colon == std::string::npos) continue;
    std::string key = body.substr(0, colon), value = body.substr(colon + 2);
    if (key == "Function Name") {
      current = value;
      out[current] = AmdgpuKernelUsage{};
      continue;
    }
    if (current.empty()) continue;
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (end == value.c_str()) continue;
    AmdgpuKernelUsage& u = out[current];
    if (key == "SGPRs") u.sgprs = static_cast<int>(v);
    else if (key == "VGPRs") u.vgprs = static_cast<int>(v), hasVgprs[current] = true;
    else if (key == "AGPRs") u.agprs = static_cast<int>(v);
    else if (key == "ScratchSize [bytes/lane]") u.scratchBytesPerLane = v;
    else if (key == "Occupancy [waves/SIMD]") u.wavesPerSimd = static_cast<int>(v);
    else if (key == "SGPRs Spill") u.sgprSpills = static_cast<int>(v);
    else if (key == "VGPRs Spill") u.vgprSpills = static_cast<int>(v);
    else if (key == "LDS Size [bytes/block]") u.ldsBytes = v;
  }
  for (auto it = out.begin(); it != out.end();)
    it = hasVgprs.count(it->first) ? std::next(it) : out.erase(it);
  return out;
}

Occupancy kernelOccupancy(int threads, int registers, int64_t smemBytes, const DeviceProfile& p) {
  Occupancy o;
  int warp = std::max(p.warpSize, 1);
  int maxWarps = p.maxThreadsPerSm / warp;
  o.warpsPerBlock = (std::max(threads, 1) + warp - 1) / warp;
  if (threads <= 0 || maxWarps <= 0) {
    o.limiter = "no threads";
    return o;
  }
  if (o.warpsPerBlock > maxWarps) {
    o.limiter = "threads > max_threads_per_sm";
    return o;
  }
  if (registers > p.maxRegsPerThread && p.maxRegsPerThread > 0) {
    o.limiter = "registers > max_regs_per_thread";
    return o;
  }
  if (smemBytes > static_cast<int64_t>(p.maxSmemPerBlockKb * 1024)) {
    o.limiter = "smem > max_smem_per_block_kb";
    return o;
  }
  int best = maxWarps / o.warpsPerBlock;
  o.limiter = "threads";
  auto bound = [&](int blocks, const char* why) {
    if (blocks < best) best = blocks, o.limiter = why;
  };
  if (p.maxBlocksPerSm > 0) bound(p.maxBlocksPerSm, "blocks");
  if (registers > 0 && p.regsPerSm > 0) {
    int64_t perWarp = roundUpTo(static_cast<int64_t>(registers) * warp, p.regAllocUnit);
    int parts = std::max(p.regPartitions, 1);
    int64_t warpsByRegs = (p.regsPerSm / parts) / perWarp * parts;
    bound(static_cast<int>(warpsByRegs / o.warpsPerBlock), "registers");
  }
  int64_t perBlockSmem = smemBytes + p.smemReservedPerBlock;
  if (perBlockSmem > 0) {
    perBlockSmem = roundUpTo(perBlockSmem, p.smemAllocUnit);
    bound(static_cast<int>(static_cast<int64_t>(p.smemPerSmKb * 1024) / perBlockSmem), "smem");
  }
  o.blocksPerSm = std::max(best, 0);
  if (o.blocksPerSm == 0 && o.limiter.find('>') == std::string::npos) o.limiter += " (none fits)";
  o.fraction = static_cast<double>(o.blocksPerSm) * o.warpsPerBlock / maxWarps;
  return o;
}

}  // namespace magneto
