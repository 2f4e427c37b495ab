// Kernel, joint-kernel and CPU latency models, and co-tuning (include/magneto/target/cost_model.h).
// Formulas and their reasons: docs/COST_MODEL.md. Every profitability constant is named here with
// the reason beside it; the model is deliberately simple and monotone (more FLOPs or bytes never
// make a kernel faster, more SMs or bandwidth never make it slower).
#include "magneto/target/cost_model.h"

#include "magneto/target/resource_usage.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace magneto {
namespace {

// Threads resident on one SM needed to keep its FMA pipes busy (4 schedulers x 2 warps of 32):
// fewer threads leave issue slots idle, so compute throughput scales down linearly.
constexpr double kThreadsForCompute = 256;
// Threads resident on one SM needed to keep enough loads in flight to reach the SM's share of
// DRAM bandwidth (Little's law; about half of a 2048-thread SM on Hopper/Ampere/CDNA).
constexpr double kThreadsForMemory = 1024;
// Fixed cost of one block (dispatch, prologue, epilogue, final barrier), in microseconds.
constexpr double kBlockOverheadUs = 0.1;
// Tile efficiency eff = I / (I + kTileIntensityHalf), I = tm*tn/(tm+tn) (FMAs per operand element
// staged in shared memory): at I = kTileIntensityHalf, half of peak. 32x32 -> 0.67, 128x128 ->
// 0.89.
constexpr double kTileIntensityHalf = 8;
// Streams: launches to different streams overlap with the previous kernel's body only partly.
constexpr double kStreamLaunchFraction = 0.5;
// CPU: fraction of peak reached by GEMM-like loops (blocked, vectorized) and by other loops.
constexpr double kCpuGemmEfficiency = 0.6;
constexpr double kCpuOtherEfficiency = 0.25;
// CPU: a parallel region splits work into chunks of at least this many microseconds of one core's
// time; below that the fork/join cost dominates, so small ops use fewer cores.
constexpr double kCpuMinChunkUs = 2.0;
// CPU: one op split over several cores (chunks of its loops, a barrier at the end) does not scale
// perfectly: shared caches and bandwidth, chunk imbalance, the join. Measured on the zoo at 2
// threads against 1 (2026-11-30, the Xeon VM of then): Inception v3 0.74, ResNeXt-50 0.77,
// SqueezeNet 0.58. Members of a joint region each run whole on one core and pay none of it.
constexpr double kCpuIntraOpEfficiency = 0.75;
constexpr int64_t kCpuConcurrentDirsMaxStepMacs = int64_t{1} << 18;  // f_recurrent.cpp's rule

constexpr double kInf = std::numeric_limits<double>::infinity();

int roundUp8(double v) { return static_cast<int>(std::ceil(v / 8.0) * 8.0); }
int64_t ceilDiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

struct TileShape {
  int m, n, threads;
};
// GEMM tiles, in the order ties are broken. 128x16 and 16x128 serve skinny GEMMs (depthwise convs,
// batch-1 fully connected layers, RNN steps) that square tiles would mostly pad.
constexpr TileShape kGemmTiles[] = {{32, 32, 128},   {64, 32, 128},  {32, 64, 128},
                                    {64, 64, 128},   {128, 64, 256}, {64, 128, 256},
                                    {128, 128, 256}, {128, 16, 128}, {16, 128, 128}};
constexpr int kGemmTileK = 32;
// GEMV (split-K) tiles for Gemm/MatMul with min(M, N) <= kGemvMaxRows (mg_gemv.cuh): rows of the
// small side per block (the smallest of kGemvRows that holds them), columns per block, threads.
// 8 columns give a 1000-class head 125 blocks (every SM streams part of the weight); 32 columns
// suit wide N (fewer blocks, A re-read less). The lowering instantiates gemvBlock<rows, cols, 256>.
constexpr int kGemvRows[] = {1, 4, 16};
constexpr int kGemvCols[] = {8, 32};
constexpr int kGemvThreads = 256;
constexpr int kMemoryThreads = 256;
constexpr int kMemoryItems[] = {1, 4, 16};

// Registers per thread of the fp32 GEMM-tile programs, read from the device compilers for every
// tile of kGemmTiles (tools/calibrate_registers.sh prints this table): ptxas for sm_90 (-O3) and
// hipcc's AMDGPU back end for gfx90a (VGPRs rounded up to 4 plus AGPRs). The programs stage A and
// B fragments and unroll the K tile, so they need 2-4x the registers their accumulators suggest:
// the old estimate 40 + 1.25 * accumulators said 56-120 where the compilers give 120-255 (sm_90)
// and 184-399 (gfx90a), which put the real occupancy of the zoo's launches at a third to a half of
// what the model planned (docs/GPU_TARGET.md, "Register-aware co-tuning").
struct RegisterRow {
  const char* program;  // "conv" (mgk::convBlock) or "gemm" (mgk::gemmBlock)
  int tileM, tileN, threads;
  int sm90, gfx90a;
};
constexpr RegisterRow kRegisterTable[] = {
    {"conv", 16, 128, 128, 168, 262},  {"conv", 32, 32, 128, 128, 184},
    {"conv", 32, 64, 128, 168, 232},   {"conv", 64, 32, 128, 168, 232},
    {"conv", 64, 64, 128, 236, 310},   {"conv", 64, 128, 256, 242, 301},
    {"conv", 128, 16, 128, 128, 256},  {"conv", 128, 64, 256, 169, 302},
    {"conv", 128, 128, 256, 255, 354}, {"gemm", 16, 128, 128, 255, 324},
    {"gemm", 32, 32, 128, 120, 196},   {"gemm", 32, 64, 128, 230, 256},
    {"gemm", 64, 32, 128, 228, 256},   {"gemm", 64, 64, 128, 255, 381},
    {"gemm", 64, 128, 256, 255, 344},  {"gemm", 128, 16, 128, 255, 318},
    {"gemm", 128, 64, 256, 255, 346},  {"gemm", 128, 128, 256, 255, 399},
};

// The measured registers of `program` ("conv", "gemm", or "" for another GEMM-class operator:
// the larger of both) with this tile on the profile's vendor (NVIDIA: the sm_90 column; AMD: the
// gfx90a one, whose CDNA3 successors share the register file), or 0 when not measured.
int measuredTileRegisters(const std::string& program, const TileShape& s, const DeviceProfile& p) {
  int regs = 0;
  for (const RegisterRow& r : kRegisterTable) {
    if (r.tileM != s.m || r.tileN != s.n || r.threads != s.threads) continue;
    if (!program.empty() && program != r.program) continue;
    int v = p.vendor == "nvidia" ? r.sm90 : p.vendor == "amd" ? r.gfx90a : 0;
    regs = std::max(regs, v);
  }
  return regs;
}

// `program`: see measuredTileRegisters; fp16 tiles (the tensor-core programs) keep the
// accumulator estimate (not measured).
TileConfig makeGemmTile(const TileShape& s, const DeviceProfile& p, int elemBytes,
                        const std::string& program = "") {
  TileConfig t;
  t.tileM = s.m;
  t.tileN = s.n;
  t.tileK = kGemmTileK;
  t.warps = std::max(1, s.threads / p.warpSize);
  double acc = static_cast<double>(s.m) * s.n / s.threads;  // accumulators per thread
  int measured = elemBytes == 4 ? measuredTileRegisters(program, s, p) : 0;
  t.regsPerThread = measured > 0 ? measured : roundUp8(40 + 1.25 * acc);
  t.smemBytes = 2 * (s.m + s.n) * kGemmTileK * elemBytes;  // double-buffered A and B tiles
  return t;
}

// Registers per thread of gemvBlock<rows, cols, 256> from the compilers (the zoo's launches,
// magnetoc report --resources ptxas|hipcc; the columns per block do not change them): sm_90 32,
// 48 and 64, gfx90a 52, 72 and 236 for 1, 4 and 16 rows (the row accumulators, two strided
// pointers and the loop state). Other rows: the line through the sm_90 figures.
TileConfig makeGemvTile(int rows, int cols, const DeviceProfile& p) {
  TileConfig t;
  t.tileM = rows;
  t.tileN = cols;
  t.tileK = 0;
  t.warps = std::max(1, kGemvThreads / p.warpSize);
  static constexpr int kRows[] = {1, 4, 16}, kSm90[] = {32, 48, 64}, kGfx90a[] = {52, 72, 236};
  t.regsPerThread = roundUp8(28 + 2.25 * rows);
  for (int i = 0; i < 3; ++i)
    if (kRows[i] == rows && (p.vendor == "nvidia" || p.vendor == "amd"))
      t.regsPerThread = p.vendor == "nvidia" ? kSm90[i] : kGfx90a[i];
  t.smemBytes = rows * (kGemvThreads / cols) * (cols + 1) * 4;  // the partial sums
  return t;
}

bool gemvShaped(const Node& n, const GemmShape& g) {
  return (n.kind() == "Gemm" || n.kind() == "MatMul") && std::min(g.m, g.n) >= 1 &&
         std::min(g.m, g.n) <= kGemvMaxRows;
}

TileConfig makeMemoryTile(int items, const DeviceProfile& p, bool needsSmem) {
  TileConfig t;
  t.itemsPerThread = items;
  t.warps = std::max(1, kMemoryThreads / p.warpSize);
  t.regsPerThread = roundUp8(24 + 2.5 * items);
  t.smemBytes = needsSmem ? kMemoryThreads * 4 : 0;  // one partial per thread for block reductions
  return t;
}

int threadsOf(const TileConfig& t, const DeviceProfile& p) { return t.warps * p.warpSize; }

// Blocks per SM that registers, shared memory, threads and the block limit allow; 0 if none fits:
// the occupancy calculator of target/resource_usage.h (registers allocated per warp in the
// profile's units from its register files, shared memory in its units plus the per-block
// reserve), the same formula the resource report applies to the compilers' figures.
int occupancyFor(int threads, int regs, int smem, const DeviceProfile& p) {
  return kernelOccupancy(threads, regs, smem, p).blocksPerSm;
}

// The model's first occupancy formula (registers and shared memory divided exactly, no
// allocation units), kept for the wavefront's co-residency bound below, which adds its own
// reserve and margin.
int wholeDivisionOccupancy(int threads, int regs, int smem, const DeviceProfile& p) {
  if (threads <= 0 || threads > p.maxThreadsPerSm) return 0;
  if (regs > p.maxRegsPerThread) return 0;
  if (smem > p.maxSmemPerBlockKb * 1024) return 0;
  int occ = std::min(p.maxBlocksPerSm, p.maxThreadsPerSm / threads);
  occ = std::min(occ, static_cast<int>(p.regsPerSm / (std::max(regs, 1) * threads)));
  if (smem > 0) occ = std::min(occ, static_cast<int>(p.smemPerSmKb * 1024 / smem));
  return std::max(occ, 0);
}

bool needsBlockReduction(const Node& n) {
  const std::string& k = n.kind();
  return k.rfind("Reduce", 0) == 0 || k.rfind("Global", 0) == 0 || k == "Softmax" ||
         k == "LogSoftmax" || k.find("Normalization") != std::string::npos || k == "ArgMax" ||
         k == "ArgMin";
}

// A member of a (possibly one-member) kernel, with its work counted once.
struct Member {
  const Node* node;
  OpWork work;
};

// What one member's tile implies for a block of it.
struct BlockWork {
  int64_t blocks = 0;
  double flops = 0, bytes = 0;  // per block
  double eff = 1;
  int threads = 0;
  int64_t steps = 1;
  double executedFlops = 0;
};

Expected<BlockWork> blockWork(const Member& m, const TileConfig& t, const DeviceProfile& p) {
  BlockWork b;
  const OpWork& w = m.work;
  if (w.cls == OpWork::Class::kView) return b;
  b.threads = threadsOf(t, p);
  if (w.cls == OpWork::Class::kGemm) {
    if (!t.isGemm()) return badInput("{} is a GEMM but got tile '{}'", m.node->describe(), t.str());
    if (t.isGemv()) {
      // Split K: every block streams its columns of the weight once and re-reads its rows of the
      // small operand (L2-resident, counted anyway); no tile efficiency factor, the block's
      // FMAs per weight element are its rows (at most 16): memory-bound.
      const bool tr = gemvTransposed(w.gemm.m, w.gemm.n);
      const int64_t rows = tr ? w.gemm.n : w.gemm.m, cols = tr ? w.gemm.m : w.gemm.n;
      b.blocks = w.gemm.batch * ceilDiv(rows, t.tileM) * ceilDiv(cols, t.tileN);
      b.steps = std::max<int64_t>(w.serialSteps, 1);
      if (b.blocks == 0) return b;
      const double k = static_cast<double>(w.gemm.k);
      const double padRows = static_cast<double>(std::min<int64_t>(rows, t.tileM));
      b.flops = 2.0 * padRows * t.tileN * k;
      b.executedFlops = b.flops * b.blocks * b.steps;
      double extra = w.flops - 2.0 * w.gemm.batch * w.gemm.m * w.gemm.n * w.gemm.k * b.steps;
      if (extra > 0) b.flops += extra / (b.blocks * b.steps);
      double elem = w.halfPrecision ? 2 : 4;
      b.bytes = w.bytes / (b.blocks * b.steps) + padRows * k * elem;
      b.eff = 1;
      return b;
    }
    int64_t tilesM = ceilDiv(w.gemm.m, t.tileM), tilesN = ceilDiv(w.gemm.n, t.tileN);
    b.blocks = w.gemm.batch * tilesM * tilesN;
    b.steps = std::max<int64_t>(w.serialSteps, 1);
    if (b.blocks == 0) return b;
    b.flops = 2.0 * t.tileM * t.tileN * static_cast<double>(w.gemm.k);  // padded tile
    b.executedFlops = b.flops * b.blocks * b.steps;
    // Epilogue and bias FLOPs ride along with the tile; add them per block.
    double extra = w.flops - 2.0 * w.gemm.batch * w.gemm.m * w.gemm.n * w.gemm.k * b.steps;
    if (extra > 0) b.flops += extra / (b.blocks * b.steps);
    b.bytes = w.bytes / (b.blocks * b.steps);
    double intensity = static_cast<double>(t.tileM) * t.tileN / (t.tileM + t.tileN);
    b.eff = intensity / (intensity + kTileIntensityHalf);
    return b;
  }
  if (t.isGemm() || t.itemsPerThread <= 0)
    return badInput("{} is memory-bound but got tile '{}'", m.node->describe(), t.str());
  b.blocks = ceilDiv(w.elements, static_cast<int64_t>(b.threads) * t.itemsPerThread);
  if (b.blocks == 0) return b;
  b.flops = w.flops / b.blocks;
  b.bytes = w.bytes / b.blocks;
  b.executedFlops = w.flops;
  b.eff = 1;
  return b;
}

// Time one block holds its slot when `resident` blocks share its SM: each gets 1/resident of the
// SM, whose FMA pipes and memory path are busy in proportion to the threads resident. Compute and
// memory are separate pipes, so the two parts are kept apart (the joint model overlaps them
// across members); a block's own time is the larger. With resident = 1: the block alone on an SM.
struct BlockTime {
  double compute = 0, memory = 0;  // each including the per-block overhead
  double total() const { return std::max(compute, memory); }
};

BlockTime blockTime(const BlockWork& b, int resident, bool half, const DeviceProfile& p) {
  double rate = half ? p.fp16FlopsPerSmUs() : p.fp32FlopsPerSmUs();
  double bwSm = p.bytesPerUs() / p.smCount;
  double uCompute = std::min(1.0, resident * b.threads / kThreadsForCompute);
  double uMemory = std::min(1.0, resident * b.threads / kThreadsForMemory);
  double steps = static_cast<double>(b.steps);
  BlockTime t;
  t.compute = steps * (resident * b.flops / (rate * b.eff * uCompute) + kBlockOverheadUs);
  t.memory = steps * (resident * b.bytes / (bwSm * uMemory) + kBlockOverheadUs);
  return t;
}

// The GPU joint model; a single kernel is a joint of one member.
JointEstimate gpuJoint(const std::vector<Member>& members, const DeviceProfile& p,
                       const std::vector<TileConfig>& tiles) {
  JointEstimate j;
  j.tiles = tiles;
  if (tiles.size() != members.size()) {
    j.reason = fmt::format("{} tiles for {} members", tiles.size(), members.size());
    return j;
  }
  std::vector<BlockWork> works;
  for (size_t i = 0; i < members.size(); ++i) {
    auto bw = blockWork(members[i], tiles[i], p);
    if (!bw.ok()) {
      j.reason = bw.status().message();
      return j;
    }
    works.push_back(bw.value());
    j.blocks.push_back(bw->blocks);
    j.totalBlocks += bw->blocks;
    if (bw->blocks == 0) continue;
    j.threadsPerBlock = std::max(j.threadsPerBlock, bw->threads);
    j.regsPerThread = std::max(j.regsPerThread, tiles[i].regsPerThread);
    j.smemBytes = std::max(j.smemBytes, tiles[i].smemBytes);
  }
  j.launchUs = p.launchOverheadUs;
  if (j.totalBlocks == 0) {  // only views or empty tensors: nothing to launch
    j.valid = true;
    j.launchUs = 0;
    j.blockUs.assign(members.size(), 0.0);
    return j;
  }
  j.occupancy = occupancyFor(j.threadsPerBlock, j.regsPerThread, j.smemBytes, p);
  if (j.occupancy == 0) {
    j.reason = fmt::format("block of {} threads x {} regs, {} B shared memory does not fit an SM",
                           j.threadsPerBlock, j.regsPerThread, j.smemBytes);
    return j;
  }
  j.resident = static_cast<int>(
      std::min<int64_t>(j.occupancy, std::max<int64_t>(1, ceilDiv(j.totalBlocks, p.smCount))));
  double slots = static_cast<double>(p.smCount) * j.resident;
  double total = 0, computeTotal = 0, memoryTotal = 0, longest = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    if (works[i].blocks == 0) {
      j.blockUs.push_back(0.0);
      continue;
    }
    bool half = members[i].work.halfPrecision;
    BlockTime t = blockTime(works[i], j.resident, half, p);
    double blocks = static_cast<double>(works[i].blocks);
    j.blockUs.push_back(t.total());
    total += t.total() * blocks;
    computeTotal += t.compute * blocks;
    memoryTotal += t.memory * blocks;
    // A block cannot finish sooner than it would alone on an SM (its co-residents may be short
    // blocks of other members that leave early, so the shared time is not a lower bound).
    longest = std::max(longest, blockTime(works[i], 1, half, p).total());
  }
  double n = static_cast<double>(j.totalBlocks);
  double meanBlock = total / n;
  // Throughput: the busier pipe's demand spread over the slots (a compute-bound member overlaps a
  // memory-bound one). Tail: the idle part of the last, partial wave at the mean block time.
  // Never less than the longest block. For one member this is exactly ceil(n/S) * t.
  double throughput = std::max(computeTotal, memoryTotal) / slots;
  double tail = (std::ceil(n / slots) - n / slots) * meanBlock;
  double body = std::max(longest, throughput + tail);
  j.latencyUs = j.launchUs + body;
  j.valid = true;
  return j;
}

// CPU: a parallel region over the cores.
double cpuSerialUs(const OpWork& w, const DeviceProfile& p) {
  double perCore = p.fp32Tflops * 1e6 / p.smCount;  // FLOP per us of one core
  double eff = w.cls == OpWork::Class::kGemm ? kCpuGemmEfficiency : kCpuOtherEfficiency;
  return w.flops / (perCore * eff);
}

int cpuCoresFor(double serialUs, const DeviceProfile& p) {
  double chunks = std::floor(serialUs / kCpuMinChunkUs);
  return static_cast<int>(std::clamp(chunks, 1.0, static_cast<double>(p.smCount)));
}

// A joint region on the CPU runs its members as work items: each member whole on one core, the
// biggest first onto whichever core frees up (the generated NAME.cpp's runRegion). Its latency is
// that schedule's makespan (longest processing time first), one region overhead, and never less
// than streaming every member's bytes. A lone op (one member) is an ordinary parallel region
// split over the cores its work can keep busy (cpuCoresFor); a lone recurrence is one such region
// per time step.
JointEstimate cpuJoint(const std::vector<Member>& members, const DeviceProfile& p) {
  JointEstimate j;
  j.tiles.assign(members.size(), TileConfig{});
  std::vector<double> serial;
  double bytes = 0, total = 0;
  for (const Member& m : members) {
    if (m.work.cls == OpWork::Class::kView) {
      j.blocks.push_back(0);
      continue;
    }
    serial.push_back(cpuSerialUs(m.work, p));
    total += serial.back();
    bytes += m.work.bytes;
    j.blocks.push_back(1);
  }
  j.valid = true;
  if (serial.empty()) return j;
  j.occupancy = j.resident = 1;
  j.launchUs = p.launchOverheadUs;
  double body;
  const Member* lone = nullptr;
  for (const Member& m : members)
    if (m.work.cls != OpWork::Class::kView) lone = &m;
  const int64_t steps = serial.size() == 1 ? std::max<int64_t>(lone->work.serialSteps, 1) : 1;
  if (steps > 1) {
    // A recurrence: one parallel region per dependent step (the pool forks and joins every step),
    // so each step is split over the cores its own work keeps busy and pays a region's overhead.
    const double step = total / static_cast<double>(steps);
    int cores = cpuCoresFor(step, p);
    j.totalBlocks = cores;
    body = static_cast<double>(steps) * (cores > 1 ? step / (cores * kCpuIntraOpEfficiency) + p.launchOverheadUs : step);
    // A bidirectional layer's two time loops run side by side, each on one core, when the pool
    // has 2 or 3 threads or a direction's step is small (runtime/cpu/f_recurrent.cpp's rule,
    // kCpuConcurrentDirsMaxStepMacs): no fork/join per step, half the step on each core.
    const OpWork& lw = lone->work;
    const int64_t dirs = lw.gemm.batch, hidden = lone->node->attrs().getInt("hidden_size", 0);
    if (dirs == 2 && p.smCount >= 2 &&
        (p.smCount <= 3 || lw.gemm.m * lw.gemm.n * hidden <= kCpuConcurrentDirsMaxStepMacs)) {
      j.totalBlocks = 2;
      body = static_cast<double>(steps) * step / 2;
    }
  } else if (serial.size() == 1) {
    int cores = cpuCoresFor(total, p);
    j.totalBlocks = cores;
    body = cores > 1 ? total / (cores * kCpuIntraOpEfficiency) : total;
  } else {
    std::vector<double> load(static_cast<size_t>(std::max(1, p.smCount)), 0.0);
    std::vector<double> order = serial;
    std::sort(order.begin(), order.end(), std::greater<double>());
    for (double s : order) *std::min_element(load.begin(), load.end()) += s;
    body = *std::max_element(load.begin(), load.end());
    j.totalBlocks = static_cast<int64_t>(
        std::count_if(load.begin(), load.end(), [](double l) { return l > 0; }));
  }
  j.latencyUs = j.launchUs + std::max(body, bytes / p.bytesPerUs());
  j.blockUs.assign(members.size(), body);
  return j;
}

std::vector<Member> membersOf(const std::vector<const Node*>& nodes) {
  std::vector<Member> ms;
  for (const Node* n : nodes) ms.push_back({n, opWork(*n)});
  return ms;
}

KernelEstimate kernelFromJoint(const Member& m, const JointEstimate& j, const DeviceProfile& p) {
  KernelEstimate e;
  e.valid = j.valid;
  e.reason = j.reason;
  e.tile = j.tiles.empty() ? TileConfig{} : j.tiles[0];
  e.blocks = j.totalBlocks;
  e.occupancy = j.occupancy;
  e.resident = j.resident;
  e.launchUs = j.launchUs;
  e.latencyUs = j.valid ? j.latencyUs : kInf;
  e.blockUs = j.blockUs.empty() ? 0 : j.blockUs[0];
  e.bytes = m.work.bytes;
  e.flops = m.work.flops;
  if (p.isGpu() && j.valid && j.totalBlocks > 0) {
    e.waves = ceilDiv(j.totalBlocks, static_cast<int64_t>(p.smCount) * j.resident);
    auto bw = blockWork(m, e.tile, p);
    if (bw.ok()) {
      e.flops = bw->executedFlops;
      double rate = m.work.halfPrecision ? p.fp16FlopsPerSmUs() : p.fp32FlopsPerSmUs();
      e.computeBound = bw->flops / (rate * bw->eff) > bw->bytes / (p.bytesPerUs() / p.smCount);
    }
  } else if (p.isCpu() && j.totalBlocks > 0) {
    e.waves = 1;
    e.computeBound = cpuSerialUs(m.work, p) / j.totalBlocks > m.work.bytes / p.bytesPerUs();
  }
  return e;
}

std::vector<TileConfig> candidatesFor(const Member& m, const DeviceProfile& p) {
  std::vector<TileConfig> out;
  if (!p.isGpu() || m.work.cls == OpWork::Class::kView) return {TileConfig{}};
  if (m.work.cls == OpWork::Class::kGemm) {
    int elemBytes = m.work.halfPrecision ? 2 : 4;
    const std::string& k = m.node->kind();
    std::string program = k == "Conv" ? "conv" : (k == "Gemm" || k == "MatMul") ? "gemm" : "";
    for (const TileShape& s : kGemmTiles) {
      TileConfig t = makeGemmTile(s, p, elemBytes, program);
      if (occupancyFor(threadsOf(t, p), t.regsPerThread, t.smemBytes, p) > 0) out.push_back(t);
    }
    if (gemvShaped(*m.node, m.work.gemm)) {
      const int64_t small = std::min(m.work.gemm.m, m.work.gemm.n);
      int rows = 0;
      for (int r : kGemvRows)
        if (rows == 0 && r >= small) rows = r;
      for (int cols : kGemvCols) {
        TileConfig t = makeGemvTile(rows, cols, p);
        if (occupancyFor(threadsOf(t, p), t.regsPerThread, t.smemBytes, p) > 0) out.push_back(t);
      }
    }
  } else {
    bool smem = needsBlockReduction(*m.node);
    for (int items : kMemoryItems) {
      TileConfig t = makeMemoryTile(items, p, smem);
      if (occupancyFor(threadsOf(t, p), t.regsPerThread, t.smemBytes, p) > 0) out.push_back(t);
    }
  }
  return out;
}

JointEstimate jointOf(const std::vector<Member>& ms, const DeviceProfile& p,
                      const std::vector<TileConfig>& tiles) {
  return p.isGpu() ? gpuJoint(ms, p, tiles) : cpuJoint(ms, p);
}

double latencyOr(const JointEstimate& j) { return j.valid ? j.latencyUs : kInf; }

// Strictly better by more than rounding: ties keep the earlier choice (deterministic).
bool better(double a, double b) {
  if (!std::isfinite(b)) return a < b;
  return a < b - 1e-9 * std::max(1.0, std::fabs(b));
}

}  // namespace

std::string TileConfig::str() const {
  if (isGemv())
    return fmt::format("gemv {}x{} w{} r{} s{}K", tileM, tileN, warps, regsPerThread,
                       smemBytes / 1024);
  if (isGemm())
    return fmt::format("{}x{}x{} w{} r{} s{}K", tileM, tileN, tileK, warps, regsPerThread,
                       smemBytes / 1024);
  if (itemsPerThread > 0)
    return fmt::format("items{} w{} r{} s{}K", itemsPerThread, warps, regsPerThread,
                       smemBytes / 1024);
  return "none";
}

bool TileConfig::operator==(const TileConfig& o) const {
  return tileM == o.tileM && tileN == o.tileN && tileK == o.tileK &&
         itemsPerThread == o.itemsPerThread && warps == o.warps &&
         regsPerThread == o.regsPerThread && smemBytes == o.smemBytes;
}

std::string KernelEstimate::str() const {
  if (!valid) return "invalid: " + reason;
  if (!tile.isGemm() && tile.itemsPerThread == 0)  // CPU region (or a view)
    return fmt::format(
        "{:.2f} us (parallel region on {} cores, {:.3f} us each, overhead {:.1f} us, {})",
        latencyUs, blocks, blockUs, launchUs, computeBound ? "compute-bound" : "memory-bound");
  return fmt::format(
      "{:.2f} us ({}; {} blocks, occupancy {}, resident {}, {} waves, {:.3f} us/block, "
      "launch {:.1f} us, {})",
      latencyUs, tile.str(), blocks, occupancy, resident, waves, blockUs, launchUs,
      computeBound ? "compute-bound" : "memory-bound");
}

std::string JointEstimate::str() const {
  if (!valid) return "invalid: " + reason;
  if (threadsPerBlock == 0)  // CPU region (or only views)
    return fmt::format("{:.2f} us (one parallel region of {} members on {} cores)", latencyUs,
                       tiles.size(), totalBlocks);
  std::string tilesStr;
  for (size_t i = 0; i < tiles.size(); ++i)
    tilesStr += fmt::format("{}[{}: {} blocks]", i ? ", " : "", tiles[i].str(), blocks[i]);
  std::string s = fmt::format(
      "{:.2f} us ({} blocks of {} threads x {} regs, {} B smem; occupancy "
      "{}, resident {}; {})",
      latencyUs, totalBlocks, threadsPerBlock, regsPerThread, smemBytes, occupancy, resident,
      tilesStr);
  if (combinations > 0)
    s += fmt::format("; independently tuned {:.2f} us; {} combinations {}", independentLatencyUs,
                     combinations, exhaustive ? "(exhaustive)" : "(coordinate descent)");
  return s;
}

std::vector<TileConfig> tileCandidates(const Node& n, const DeviceProfile& p) {
  if (!p.isGpu()) return {};
  Member m{&n, opWork(n)};
  if (m.work.cls == OpWork::Class::kView) return {};
  return candidatesFor(m, p);
}

KernelEstimate estimateKernel(const Node& n, const DeviceProfile& p, const TileConfig& tile) {
  std::vector<Member> ms = membersOf({&n});
  return kernelFromJoint(ms[0], jointOf(ms, p, {tile}), p);
}

KernelEstimate bestKernel(const Node& n, const DeviceProfile& p) {
  std::vector<Member> ms = membersOf({&n});
  KernelEstimate best;
  best.latencyUs = kInf;
  best.reason = "no tile fits the device";
  for (const TileConfig& t : candidatesFor(ms[0], p)) {
    KernelEstimate e = kernelFromJoint(ms[0], jointOf(ms, p, {t}), p);
    if (e.valid && (!best.valid || better(e.latencyUs, best.latencyUs))) best = e;
  }
  return best;
}

JointEstimate estimateJoint(const std::vector<const Node*>& members, const DeviceProfile& p,
                            const std::vector<TileConfig>& tiles) {
  return jointOf(membersOf(members), p, tiles);
}

JointEstimate coTune(const std::vector<const Node*>& members, const DeviceProfile& p) {
  std::vector<Member> ms = membersOf(members);
  std::vector<std::vector<TileConfig>> cands;
  std::vector<TileConfig> independent;
  for (const Member& m : ms) {
    cands.push_back(candidatesFor(m, p));
    if (cands.back().empty()) {
      JointEstimate j;
      j.reason = fmt::format("no tile of {} fits {}", m.node->describe(), p.name);
      return j;
    }
    // The member's best tile alone.
    std::vector<Member> one{m};
    size_t bestIdx = 0;
    double bestLat = kInf;
    for (size_t c = 0; c < cands.back().size(); ++c) {
      double l = latencyOr(jointOf(one, p, {cands.back()[c]}));
      if (better(l, bestLat)) bestLat = l, bestIdx = c;
    }
    independent.push_back(cands.back()[bestIdx]);
  }
  JointEstimate indep = jointOf(ms, p, independent);
  JointEstimate best = indep;
  int64_t evaluated = 1;

  double product = 1;
  for (const auto& c : cands) product *= static_cast<double>(c.size());
  bool exhaustive = product <= static_cast<double>(kMaxExhaustiveCombinations);
  if (exhaustive) {
    std::vector<size_t> idx(ms.size(), 0);
    std::vector<TileConfig> tiles(ms.size());
    while (true) {
      for (size_t i = 0; i < ms.size(); ++i) tiles[i] = cands[i][idx[i]];
      JointEstimate j = jointOf(ms, p, tiles);
      ++evaluated;
      if (j.valid && (!best.valid || better(j.latencyUs, best.latencyUs))) best = j;
      size_t d = 0;
      while (d < idx.size() && ++idx[d] == cands[d].size()) idx[d++] = 0;
      if (d == idx.size()) break;
    }
  } else {
    // Coordinate descent from the independent choice: re-tune one member at a time with the
    // others fixed, until a full round changes nothing.
    std::vector<TileConfig> tiles = independent;
    for (int round = 0; round < 16; ++round) {
      bool changed = false;
      for (size_t i = 0; i < ms.size(); ++i) {
        for (const TileConfig& c : cands[i]) {
          if (c == tiles[i]) continue;
          std::vector<TileConfig> trial = tiles;
          trial[i] = c;
          JointEstimate j = jointOf(ms, p, trial);
          ++evaluated;
          if (j.valid && (!best.valid || better(j.latencyUs, best.latencyUs))) {
            best = j;
            tiles = trial;
            changed = true;
          }
        }
      }
      if (!changed) break;
    }
  }
  best.independentTiles = independent;
  best.independentLatencyUs = latencyOr(indep);
  best.combinations = evaluated;
  best.exhaustive = exhaustive;
  return best;
}

int64_t coResidentBlocks(int threads, int smemBytes, const DeviceProfile& p) {
  // Registers: the wavefront program's are not measured here; 128 per thread is what ptxas gives
  // the largest recurrent programs at most (docs/PERFORMANCE.md, kernels.nvcc figures).
  return static_cast<int64_t>(wholeDivisionOccupancy(threads, 128, smemBytes + 1024, p)) * p.smCount;
}

WavefrontEstimate estimateWavefront(const std::vector<const Node*>& layers, const DeviceProfile& p) {
  WavefrontEstimate w;
  if (layers.size() < 2) {
    w.reason = "fewer than two layers";
    return w;
  }
  int64_t batch = -1, hmax = 64;
  double slowest = 0;
  for (const Node* n : layers) {
    OpWork work = opWork(*n);
    const std::string& kind = n->kind();
    if ((kind != "LSTM" && kind != "GRU" && kind != "RNN") || work.cls != OpWork::Class::kGemm || work.serialSteps <= 0) {
      w.reason = n->describe() + " is not a recurrent op with a time loop";
      return w;
    }
    if (work.gemm.batch != 1) {
      w.reason = n->describe() + ": bidirectional (the backward direction needs the layer below whole)";
      return w;
    }
    if (w.steps && (work.serialSteps != w.steps || work.gemm.m != batch)) {
      w.reason = n->describe() + ": its steps or batch differ from the layer below";
      return w;
    }
    w.steps = work.serialSteps;
    batch = work.gemm.m;
    const int64_t hidden = work.gemm.n / (n->kind() == "LSTM" ? 4 : n->kind() == "GRU" ? 3 : 1);
    if (p.isGpu() && hidden > kWavefrontMaxHidden) {
      w.reason = fmt::format("{}: hidden size {} above the wavefront's {}", n->describe(), hidden,
                             kWavefrontMaxHidden);
      return w;
    }
    while (hmax < hidden) hmax *= 2;
    KernelEstimate e = bestKernel(*n, p);
    if (!e.valid) {
      w.reason = n->describe() + ": no kernel estimate";
      return w;
    }
    w.sequentialUs += e.latencyUs;
    slowest = std::max(slowest, (e.latencyUs - e.launchUs) / static_cast<double>(w.steps));
  }
  if (!p.isGpu()) {
    // The host runs each layer whole on one core of a pipelined region (f_recurrent.cpp): layer
    // l's chunk of time steps starts once layer l-1 has published them. Its step is the layer's
    // single-core time per step; each layer above starts a chunk of steps late.
    double slowestSerial = 0;
    for (const Node* n : layers) slowestSerial = std::max(slowestSerial, cpuSerialUs(opWork(*n), p) / w.steps);
    const int64_t chunk = std::clamp<int64_t>(kWavefrontHostChunkRows / std::max<int64_t>(batch, 1), 1, w.steps);
    w.threads = 1;
    w.blocks = static_cast<int64_t>(layers.size());
    w.capacity = p.smCount;
    if (w.blocks > w.capacity) {
      w.reason = fmt::format("{} layers, each on its own core; {} has {}", w.blocks, p.name, w.capacity);
      return w;
    }
    w.stepUs = slowestSerial + kWavefrontHostHandshakeUs;
    w.latencyUs = p.launchOverheadUs +
                  static_cast<double>(w.steps + chunk * (static_cast<int64_t>(layers.size()) - 1)) * w.stepUs;
    w.valid = true;
    return w;
  }
  w.threads = static_cast<int>(std::min<int64_t>(hmax, 256));
  w.smemBytes = static_cast<int>(8 * hmax * 4);
  w.blocks = static_cast<int64_t>(layers.size()) * batch;
  w.capacity = p.isGpu() ? coResidentBlocks(w.threads, w.smemBytes, p) : p.smCount;
  if (w.blocks > w.capacity) {
    w.reason = fmt::format("{} blocks of {} threads and {} B shared memory; {} fit on {} at once",
                           w.blocks, w.threads, w.smemBytes, w.capacity, p.name);
    return w;
  }
  w.stepUs = slowest + kWavefrontHandshakeUs;
  w.latencyUs = p.launchOverheadUs + static_cast<double>(w.steps + static_cast<int64_t>(layers.size()) - 1) * w.stepUs;
  w.valid = true;
  return w;
}

double sequentialLatency(const std::vector<const Node*>& members, const DeviceProfile& p) {
  double total = 0;
  for (const Node* n : members) total += bestKernel(*n, p).latencyUs;
  return total;
}

double streamsLatency(const std::vector<const Node*>& members, const DeviceProfile& p) {
  if (!p.isGpu()) return sequentialLatency(members, p);  // one thread pool: no streams
  double longestBody = 0, share = 0, waveFraction = 0;
  int launches = 0;
  for (const Node* n : members) {
    KernelEstimate e = bestKernel(*n, p);
    if (!e.valid) return kInf;
    if (e.blocks == 0) continue;
    ++launches;
    double slots = static_cast<double>(p.smCount) * e.resident;
    longestBody = std::max(longestBody, e.latencyUs - e.launchUs);
    share += e.blocks * e.blockUs / slots;  // this kernel's time if it had the device alone
    waveFraction += e.blocks / slots;
  }
  if (launches == 0) return 0;
  double body = waveFraction <= 1.0 ? longestBody : std::max(longestBody, share);
  double launch = p.launchOverheadUs * (1 + kStreamLaunchFraction * (launches - 1));
  return launch + body;
}

int cpuStepThreads(const Node& n, const DeviceProfile& p) {
  if (p.isGpu() || p.smCount <= 0) return 0;
  // Shapes known only at run time: the work is not known here, so the pool is not limited.
  for (const Value* v : n.inputs())
    if (v && v->isSymbolic()) return 0;
  for (const Value* v : n.outputs())
    if (v && v->isSymbolic()) return 0;
  const OpWork w = opWork(n);
  if (w.cls == OpWork::Class::kView) return 0;
  // A recurrence is one parallel region per dependent step: its step's work decides. A
  // bidirectional layer's two directions run side by side on two threads (f_recurrent.cpp).
  const double serial = cpuSerialUs(w, p) / static_cast<double>(std::max<int64_t>(w.serialSteps, 1));
  const double chunks = std::floor(serial / kCpuMinChunkUs);
  const int atLeast = w.serialSteps > 1 && w.gemm.batch == 2 ? 2 : 1;
  if (chunks >= kCpuMaxStepThreads) return 0;
  return std::max(atLeast, static_cast<int>(chunks));
}

}  // namespace magneto
