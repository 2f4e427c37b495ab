// The package core (see mg_package.h): the C interface of every CPU package, over its Program.
// The handle is mg_package_model.h's Model; dynamic dimensions (the symbol binding, set_input_dims,
// shape data, data symbols) are in mg_package_dyn.cpp.
#include "mg_package.h"

#include "mg_abi.h"
#include "mg_package_model.h"
#include "mg_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mg_kernels.h"
#include "mg_roofline.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace pkg {

std::string fn(const Program& p, const char* what) { return std::string(p.name) + "_" + what; }

int fail(const Model* m, int s, const std::string& message) {
  return abi::report(m ? &const_cast<Model*>(m)->error : nullptr, s, message);
}

namespace {

// True when m is a handle that this program's create() returned and destroy() has not freed.
bool isLive(const Program& p, const Model* m) { return abi::Registry::isLive(m, &p); }

int loadWeights(Model* m, const char* weightsPath) {
  const Program& p = *m->program;
  if (weightsPath) {
    int s = abi::loadWeightsFile(weightsPath, p.weightsBytes, p.weightsChecksum, m->ownedWeights, &m->error);
    if (s == kOk) m->weights = m->ownedWeights.get();
    return s;
  }
  int s = abi::shareEmbeddedWeights(p.name, p.embeddedWeights, p.embeddedWeightsEnd, p.weightsBytes,
                                    p.weightsChecksum, &m->sharedWeights, &m->error);
  if (s == kOk) m->weights = m->sharedWeights ? m->sharedWeights.get() : p.embeddedWeights;
  return s;
}

int setThreads(Model* m, int n) {
  m->pool.reset();
  m->threads = n;
  if (n > 1) m->pool.reset(new (std::nothrow) mgrt::ThreadPool(n));
  if (n > 1 && !m->pool) return fail(m, kErrOutOfMemory, "out of memory creating threads");
  return kOk;
}


int init(Model* m, const char* weightsPath) {
  const Program& p = *m->program;
  int s = loadWeights(m, weightsPath);
  if (s != kOk) return s;
  m->arena = alignedAlloc(static_cast<uint64_t>(p.arenaBytes));
  if (!m->arena)
    return fail(m, kErrOutOfMemory,
                "out of memory allocating the " + std::to_string(p.arenaBytes) + "-byte arena");
  m->slots.resize(p.numSlots);
  for (int i = 0; i < p.numSlots; ++i) {
    const SlotDesc& d = p.slots[i];
    mgrt::Tensor& t = m->slots[i];
    t.dtype = d.dtype;
    t.rank = d.rank;
    for (int k = 0; k < d.rank; ++k) t.dims[k] = d.dims[k];
    if (d.storage == kArena) t.data = m->arena.get() + d.where;
    if (d.storage == kWeights) t.data = const_cast<unsigned char*>(m->weights) + d.where;
  }
  if (int ds = initDynamic(m); ds != kOk) return ds;
  m->kernels.resize(p.numSteps);
  m->attrs.reserve(p.numSteps);
  size_t widest = 1;
  for (int i = 0; i < p.numSteps; ++i) {
    const StepDesc& st = p.steps[i];
    mgrt::KernelFn k = mgrt::findFastKernel(st.op);
    if (!k) k = mgrt::findKernel(st.op);
    if (!k)
      return fail(m, kErrRuntime,
                  std::string("the runtime has no kernel for op '") + st.op + "' (node '" +
                      st.node + "'): the package's runtime/ does not match the compiler");
    m->kernels[i] = k;
    m->attrs.emplace_back(st.attrs);
    widest = std::max(widest, static_cast<size_t>(st.nin + st.nout));
  }
  m->scratch.resize(widest);
  m->widest = widest;
  m->states.reset(new (std::nothrow) mgrt::StepState[p.numSteps > 0 ? p.numSteps : 1]);
  if (!m->states) return fail(m, kErrOutOfMemory, "out of memory creating step states");
  m->constInputs.assign(p.numSteps, 0u);
  for (int i = 0; i < p.numSteps; ++i) {
    const int32_t* io = p.stepIo + p.steps[i].io;
    for (int k = 0; k < p.steps[i].nin && k < 32; ++k)
      if (io[k] >= 0 && p.slots[io[k]].storage == kWeights) m->constInputs[i] |= 1u << k;
  }
  m->regionAt.assign(p.numSteps, -1);
  size_t largest = 0;
  for (int r = 0; r < p.numRegions; ++r) {
    m->regionAt[p.regions[r].first] = r;
    largest = std::max(largest, static_cast<size_t>(p.regions[r].count));
  }
  m->regionScratch.resize(widest * largest);
  m->regionCtx.resize(largest);
  m->regionProgress.reset(new std::atomic<int64_t>[largest > 0 ? largest : 1]);
  m->kvBuffer.assign(p.numKv, nullptr);
  m->kvCapacity.assign(p.numKv, 0);
  m->kvAction.assign(p.numSteps, 0);
  for (int k = 0; k < p.numKv; ++k) {
    const KvDesc& d = p.kvs[k];
    bool ok = d.output >= 0 && d.output < p.numOutputs && d.input >= 0 && d.input < p.numInputs;
    for (int j = d.firstPiece; ok && j < d.firstPiece + d.numPieces; ++j) {
      const KvPieceDesc& pc = p.kvPieces[j];
      ok = pc.kv == k && pc.step >= 0 && pc.step < p.numSteps && pc.fresh >= 0 && pc.fresh < p.numSlots &&
           pc.full >= 0 && pc.full < p.numSlots && pc.axis >= 0 && pc.axis < p.slots[pc.full].rank &&
           p.slots[pc.fresh].rank == p.slots[pc.full].rank;
    }
    for (int j = d.firstSkip; ok && j < d.firstSkip + d.numSkips; ++j) ok = p.kvSkips[j] >= 0 && p.kvSkips[j] < p.numSteps;
    if (!ok)
      return fail(m, kErrRuntime, std::string("the KV-cache table of output '") + d.node +
                                      "' is inconsistent: the package's runtime/ does not match the compiler");
  }
  if (p.numKv > 0) {
    int pieces = 0;
    for (int k = 0; k < p.numKv; ++k) pieces = std::max(pieces, p.kvs[k].firstPiece + p.kvs[k].numPieces);
    m->kvHome.resize(pieces);
    for (int j = 0; j < pieces; ++j) m->kvHome[j] = m->slots[p.kvPieces[j].full].data;
    m->kvDense.resize(static_cast<size_t>(p.numSteps) * widest);
  }
  const char* prof = std::getenv("MAGNETO_PROFILE");
  m->profile = prof && *prof && std::strcmp(prof, "0") != 0;
  m->stepSeconds.assign(p.numSteps, 0.0);
  unsigned hw = std::thread::hardware_concurrency();
  return setThreads(m, hw == 0 ? 1 : static_cast<int>(hw));
}

// Runs step i's kernel on the operand tensors `t` (its nin operands, then its nout results, filled
// here from stepIo) with context `c` (whose pool the caller chose): the step's state and constant
// operands, the profile's timing. Returns the kernel's status; on failure c.error says why.
// A bound KV-cache piece's Concat step: the new rows go into the caller's buffer after the past
// rows already there (nothing else is copied), and the step's result becomes a view of the buffer
// through its pitch (the capacity), or, when views of it read the arena, a dense copy there too.
int kvAppend(Model* m, int piece, mgrt::Ctx& c) {
  const Program& p = *m->program;
  const KvPieceDesc& pc = p.kvPieces[piece];
  const mgrt::Tensor& fresh = m->slots[pc.fresh];
  mgrt::Tensor& full = m->slots[pc.full];
  const int ax = pc.axis;
  const int64_t cap = m->kvCapacity[pc.kv], total = full.dims[ax], rows = fresh.dims[ax], past = total - rows;
  bool same = fresh.rank == full.rank && rows >= 0 && past >= 0 && total <= cap;
  for (int k = 0; same && k < full.rank; ++k) same = k == ax || fresh.dims[k] == full.dims[k];
  if (!same) return c.fail("the new rows (%lld along axis %d) do not fit the bound KV buffer (past %lld, capacity %lld)",
                           static_cast<long long>(rows), ax, static_cast<long long>(past), static_cast<long long>(cap));
  const size_t esz = mgrt::dtypeSize(full.dtype);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < ax; ++k) outer *= full.dims[k];
  for (int k = ax + 1; k < full.rank; ++k) inner *= full.dims[k];
  unsigned char* base = static_cast<unsigned char*>(m->kvBuffer[pc.kv]) +
                        static_cast<size_t>(pc.slab * outer * cap * inner) * esz;
  const unsigned char* src = static_cast<const unsigned char*>(fresh.data);
  const size_t run = static_cast<size_t>(rows * inner) * esz;
  for (int64_t o = 0; o < outer && run > 0; ++o)
    std::memcpy(base + static_cast<size_t>((o * cap + past) * inner) * esz, src + o * run, run);
  full.data = base;
  full.pitchAxis = ax;
  full.pitch = cap;
  if (pc.dense) {
    std::vector<unsigned char> tmp;
    const mgrt::Tensor d = mgrt::densify(full, tmp);
    const size_t bytes = static_cast<size_t>(d.numel()) * esz;
    if (bytes) std::memcpy(m->kvHome[piece], d.data, bytes);
    full.data = m->kvHome[piece];
    full.pitchAxis = -1;
    full.pitch = 0;
  }
  return 0;
}

int runStep(Model* m, int i, mgrt::Tensor* t, mgrt::Ctx& c) {
  const Program& p = *m->program;
  const StepDesc& st = p.steps[i];
  const int32_t* io = p.stepIo + st.io;
  if (m->kvActive && m->kvAction[i] != 0) {
    c.error[0] = '\0';
    if (m->kvAction[i] < 0) return 0;
    return kvAppend(m, m->kvAction[i] - 1, c);
  }
  for (int a = 0; a < st.nin + st.nout; ++a) t[a] = io[a] >= 0 ? m->slots[io[a]] : mgrt::Tensor();
  // A bound KV buffer's views are pitched: a kernel that reads packed operands only gets a copy.
  if (m->kvActive)
    for (int a = 0; a < st.nin; ++a)
      if (t[a].pitched() && !mgrt::readsPitched(st.op, a, t[a]))
        t[a] = mgrt::densify(t[a], m->kvDense[static_cast<size_t>(i) * m->widest + a]);
  // A step producing data symbols gets the result dims that are those symbols at their capacity
  // (the slot's largest shape, what memory holds); its kernel sets them to the actual extents. (A
  // result dim that is another step's data symbol, like Unique's inverse_indices over a NonZero's
  // count, is already bound.)
  c.dataExtents = !m->stepSymbols.empty() && !m->stepSymbols[i].empty();
  if (c.dataExtents)
    for (int a = st.nin; a < st.nin + st.nout; ++a)
      for (int k = 0; io[a] >= 0 && k < p.slots[io[a]].rank; ++k) {
        const int row = dynDimRow(m, io[a], k);
        const int sym = row >= 0 ? dynLoneSymbol(p, p.dyn[row].code) : -1;
        if (sym >= 0 && m->producerStep[sym] == i) t[a].dims[k] = p.slots[io[a]].dims[k];
      }
  c.error[0] = '\0';
  c.state = &m->states[i];
  c.constInputs = m->constInputs[i];
  auto t0 = m->profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  int rc = m->kernels[i](m->attrs[i], t, st.nin, t + st.nin, st.nout, c);
  if (m->profile)
    m->stepSeconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0 && c.error[0] == '\0') std::snprintf(c.error, sizeof c.error, "kernel failed");
  if (rc == 0 && c.dataExtents)
    for (int k : m->stepSymbols[i]) {
      const SymbolDesc& y = p.symbols[k];
      for (int a = st.nin; a < st.nin + st.nout; ++a)
        if (io[a] == y.slot) m->dataCount[k] = t[a].dims[y.dim];
    }
  return rc;
}

int stepFailed(Model* m, int i, const mgrt::Ctx& c) {
  const StepDesc& st = m->program->steps[i];
  return fail(m, kErrRuntime,
              std::string("step ") + std::to_string(i) + " (" + st.op + ", node '" + st.node +
                  "') failed: " + c.error);
}

// One joint group's members as one parallel region: the pool's threads take members one at a
// time (biggest first; a wavefront's layers in layer order, so a member waiting on the one before
// always has it running or done) and run each whole on one thread (its kernel sees no pool). Errors are
// reported for the first failing member in step order, as a sequential run would.
int runRegion(Model* m, const RegionDesc& r) {
  const int32_t* order = m->program->regionOrder + r.order;
  std::atomic<int64_t>* progress = m->regionProgress.get();
  for (int slot = 0; slot < r.count; ++slot) progress[slot].store(0, std::memory_order_relaxed);
  m->pool->runInOrder(r.count, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int i = order[k];
      const int slot = i - r.first;
      mgrt::Ctx& c = m->regionCtx[slot];
      c.pool = nullptr;
      c.progress = &progress[slot];
      c.upstream = slot > 0 ? &progress[slot - 1] : nullptr;
      runStep(m, i, m->regionScratch.data() + static_cast<size_t>(slot) * m->widest, c);
      progress[slot].store(mgrt::Ctx::kProgressDone, std::memory_order_release);
    }
  });
  for (int slot = 0; slot < r.count; ++slot)
    if (m->regionCtx[slot].error[0] != '\0') return stepFailed(m, r.first + slot, m->regionCtx[slot]);
  return kOk;
}

// The KV binding of input i or output i (its KvDesc), -1 when that port is not bound.
int boundKv(const Model* m, bool output, int i) {
  const Program& p = *m->program;
  for (int k = 0; k < p.numKv; ++k)
    if (m->kvBuffer[k] && (output ? p.kvs[k].output : p.kvs[k].input) == i) return k;
  return -1;
}

// Sets up a run of a handle with bound KV buffers: checks each buffer's capacity against this
// step's rows, points the past input and the output at it (pitched) and says what each step does.
int kvPrepare(Model* m) {
  const Program& p = *m->program;
  m->kvActive = false;
  std::fill(m->kvAction.begin(), m->kvAction.end(), 0);
  for (int k = 0; k < p.numKv; ++k) {
    if (!m->kvBuffer[k]) continue;
    const KvDesc& d = p.kvs[k];
    mgrt::Tensor& in = m->slots[p.inputs[d.input].slot];
    mgrt::Tensor& out = m->slots[p.outputs[d.output].slot];
    const int64_t past = in.dims[d.axis], total = out.dims[d.axis], cap = m->kvCapacity[k];
    if (total > cap)
      return fail(m, kErrInvalidArgument,
                  fn(p, "run") + ": output " + std::to_string(d.output) + " ('" + p.outputs[d.output].name +
                      "', node '" + d.node + "') is bound to a KV buffer of capacity " + std::to_string(cap) +
                      " along axis " + std::to_string(d.axis) + ", too small for this step: input " +
                      std::to_string(d.input) + " ('" + p.inputs[d.input].name + "') has " + std::to_string(past) +
                      " past rows and the output needs " + std::to_string(total) +
                      " (bind a buffer of at least that capacity)");
    for (int j = 0; j < p.numKv; ++j) {  // two bindings sharing bytes would overwrite each other
      if (j == k || !m->kvBuffer[j]) continue;
      const unsigned char* a = static_cast<const unsigned char*>(m->kvBuffer[k]);
      const unsigned char* b = static_cast<const unsigned char*>(m->kvBuffer[j]);
      const size_t na = kvBufferBytes(p, m, d.output, cap), nb = kvBufferBytes(p, m, p.kvs[j].output, m->kvCapacity[j]);
      if (a < b + nb && b < a + na)
        return fail(m, kErrInvalidArgument,
                    fn(p, "run") + ": the KV buffers bound to outputs " + std::to_string(d.output) + " ('" +
                        p.outputs[d.output].name + "') and " + std::to_string(p.kvs[j].output) + " ('" +
                        p.outputs[p.kvs[j].output].name + "') overlap: each output needs its own buffer");
    }
    in.data = m->kvBuffer[k];
    in.pitchAxis = d.axis;
    in.pitch = cap;
    out.data = m->kvBuffer[k];
    out.pitchAxis = d.axis;
    out.pitch = cap;
    for (int j = d.firstPiece; j < d.firstPiece + d.numPieces; ++j) m->kvAction[p.kvPieces[j].step] = j + 1;
    for (int j = d.firstSkip; j < d.firstSkip + d.numSkips; ++j) m->kvAction[p.kvSkips[j]] = -1;
    m->kvActive = true;
  }
  return kOk;
}

// After a run (or a refused one): every slot a binding touched is the package's own again.
void kvRestore(Model* m) {
  const Program& p = *m->program;
  if (p.numKv == 0) return;
  for (int k = 0; k < p.numKv; ++k) {
    for (mgrt::Tensor* t : {&m->slots[p.inputs[p.kvs[k].input].slot], &m->slots[p.outputs[p.kvs[k].output].slot]})
      t->pitchAxis = -1, t->pitch = 0;
    const KvDesc& d = p.kvs[k];
    for (int j = d.firstPiece; j < d.firstPiece + d.numPieces; ++j) {
      mgrt::Tensor& t = m->slots[p.kvPieces[j].full];
      t.data = m->kvHome[j];
      t.pitchAxis = -1;
      t.pitch = 0;
    }
  }
  m->kvActive = false;
}

int executeSteps(Model* m, const void* const* inputs, void* const* outputs);

int execute(Model* m, const void* const* inputs, void* const* outputs) {
  struct Restore {
    Model* m;
    ~Restore() { kvRestore(m); }
  } restore{m};
  return executeSteps(m, inputs, outputs);
}

int executeSteps(Model* m, const void* const* inputs, void* const* outputs) {
  const Program& p = *m->program;
  static unsigned char empty[64];
  std::fill(m->inputSetSinceRun.begin(), m->inputSetSinceRun.end(), 0);
  for (int i = 0; i < p.numInputs; ++i) {
    if (p.numKv > 0 && boundKv(m, false, i) >= 0) continue;  // the bound buffer (kvPrepare)
    const void* ptr = inputs[i] ? inputs[i] : (m->slotBytes[p.inputs[i].slot] == 0 ? empty : nullptr);
    if (!ptr)
      return fail(m, kErrInvalidArgument,
                  std::string("input ") + std::to_string(i) + " ('" + p.inputs[i].name +
                      "') is a null pointer");
    m->slots[p.inputs[i].slot].data = const_cast<void*>(ptr);
  }
  for (int i = 0; i < p.numOutputs; ++i) {
    const SlotDesc& d = p.slots[p.outputs[i].slot];
    if (p.numKv > 0 && boundKv(m, true, i) >= 0) continue;  // the bound buffer (kvPrepare)
    void* ptr = outputs[i] ? outputs[i] : (m->slotBytes[p.outputs[i].slot] == 0 ? empty : nullptr);
    if (!ptr)
      return fail(m, kErrInvalidArgument,
                  std::string("output ") + std::to_string(i) + " ('" + p.outputs[i].name +
                      "') is a null pointer");
    if (d.storage == kOutput && d.where == i) m->slots[p.outputs[i].slot].data = ptr;
  }
  if (p.numKv > 0)
    if (int s = kvPrepare(m); s != kOk) return s;
  mgrt::Ctx ctx;
  ctx.pool = m->pool.get();
  const bool fills = !m->fillRows.empty();
  bool hasData = false;
  for (int32_t k : m->producerStep) hasData |= k >= 0;
  for (int i = 0; i < p.numSteps; ++i) {
    if (fills) dynFill(m, i);
    if (m->regionAt[i] >= 0 && m->pool) {
      const RegionDesc& r = p.regions[m->regionAt[i]];
      int s = runRegion(m, r);
      if (s != kOk) return s;
      if (hasData && (s = dynBindData(m, r.first, r.first + r.count)) != kOk) return s;
      i += r.count - 1;
      continue;
    }
    // The compiler's thread count for the step: 1 runs it on this thread, k limits the pool.
    const int want = p.steps[i].threads;
    ctx.pool = want == 1 ? nullptr : m->pool.get();
    if (ctx.pool) ctx.pool->setRunLimit(want);
    if (runStep(m, i, m->scratch.data(), ctx) != 0) return stepFailed(m, i, ctx);
    if (hasData && !m->stepSymbols[i].empty())
      if (int s = dynBindData(m, i, i + 1); s != kOk) return s;
  }
  if (m->pool) m->pool->setRunLimit(0);
  if (m->profile) {
    // The first run of a handle also packs each layer's weights into its kernel's panels (done
    // once per handle, on first use): kept apart, so the averages show the steady state.
    if (m->runsSeen == 0) {
      for (double& s : m->stepSeconds) m->firstRunSeconds += s, s = 0.0;
    } else {
      ++m->profiledRuns;
    }
  }
  ++m->runsSeen;
  if (fills) dynFill(m, p.numSteps);
  for (int i = 0; i < p.numCopies; ++i) {
    const CopyDesc& c = p.copies[i];
    if (m->slotBytes[c.slot] > 0)
      std::memcpy(outputs[c.output], m->slots[c.slot].data, static_cast<size_t>(m->slotBytes[c.slot]));
  }
  return kOk;
}

void printProfile(const Model* m) {
  if (!m->profile || m->profiledRuns == 0) return;
  const Program& p = *m->program;
  std::vector<int> order(p.numSteps);
  double total = 0;
  for (int i = 0; i < p.numSteps; ++i) order[i] = i, total += m->stepSeconds[i];
  std::stable_sort(order.begin(), order.end(),
                   [m](int a, int b) { return m->stepSeconds[a] > m->stepSeconds[b]; });
  std::fprintf(stderr, "%s profile: %lld runs, %.3f ms per run in %d steps (slowest first)\n", p.name,
               static_cast<long long>(m->profiledRuns), 1e3 * total / m->profiledRuns, p.numSteps);
  std::fprintf(stderr, "  (the first run, %.3f ms, packs weights on first use and is left out)\n",
               1e3 * m->firstRunSeconds);
  if (p.numRegions > 0 && m->threads > 1)
    std::fprintf(stderr, "  (%d parallel regions: their members' times overlap, so the sum exceeds the run time)\n",
                 p.numRegions);
  // The roofline: this machine's FMA peak per thread and memory bandwidth, probed now. A step's
  // peak is the per-thread peak times the threads it ran on (its StepDesc::threads within the
  // pool; a parallel region's member runs on one).
  const mgrt::MachinePeaks peaks = mgrt::probeMachinePeaks(m->pool.get());
  std::fprintf(stderr,
               "  roofline (probed now): FMA peak %.1f GFLOP/s per thread (%d-lane FP32 FMAs), memory "
               "bandwidth %.1f GB/s (%d thread(s), triad)\n",
               peaks.fmaGflopsPerThread, peaks.vectorFloats, peaks.bandwidthGbs, m->threads);
  auto stepThreads = [&](int i) {
    if (m->regionAt[i] >= 0 && m->pool) return 1;
    const int t = p.steps[i].threads;
    return t > 0 ? std::min(t, m->threads) : m->threads;
  };
  // Per op kind (the step's op: fused chains are MgElementwise), most time first.
  struct Kind {
    std::string op;
    double seconds = 0, flops = 0, bytes = 0, roofSeconds = 0;  // per profiled run: work
    int steps = 0;
    bool counted = true;  // every step's work known at compile time
  };
  std::vector<Kind> kinds;
  for (int i = 0; i < p.numSteps; ++i) {
    size_t k = 0;
    while (k < kinds.size() && kinds[k].op != p.steps[i].op) ++k;
    if (k == kinds.size()) kinds.push_back(Kind{p.steps[i].op});
    Kind& kd = kinds[k];
    kd.seconds += m->stepSeconds[i];
    ++kd.steps;
    const StepDesc& st = p.steps[i];
    if (st.flops < 0 || st.bytes < 0) {
      kd.counted = false;
      continue;
    }
    kd.flops += st.flops;
    kd.bytes += st.bytes;
    if (peaks.fmaGflopsPerThread > 0) kd.roofSeconds += st.flops / (peaks.fmaGflopsPerThread * 1e9 * stepThreads(i));
  }
  std::stable_sort(kinds.begin(), kinds.end(), [](const Kind& a, const Kind& b) { return a.seconds > b.seconds; });
  std::fprintf(stderr, "  by op kind:%*s GFLOP/s   %%peak     GB/s   %%bw\n", 44, "");
  for (const Kind& kd : kinds) {
    std::fprintf(stderr, "  %8.3f ms  %5.1f%%  %-20s %3d step(s)", 1e3 * kd.seconds / m->profiledRuns,
                 total > 0 ? 100.0 * kd.seconds / total : 0.0, kd.op.c_str(), kd.steps);
    if (!kd.counted || kd.seconds <= 0) {
      std::fprintf(stderr, "  (work known at run time only)\n");
      continue;
    }
    const double perRun = kd.seconds / m->profiledRuns;
    const double gbs = kd.bytes / perRun * 1e-9;
    std::fprintf(stderr, "  %8.1f  %5.1f%%  %7.1f %4.0f%%\n", kd.flops / perRun * 1e-9,
                 100.0 * kd.roofSeconds / perRun, gbs,
                 peaks.bandwidthGbs > 0 ? 100.0 * gbs / peaks.bandwidthGbs : 0.0);
  }
  // The 25 slowest steps, or MAGNETO_PROFILE_STEPS of them (0: every step).
  int shown = 25;
  if (const char* e = std::getenv("MAGNETO_PROFILE_STEPS")) {
    const int n = std::atoi(e);
    shown = n > 0 ? n : p.numSteps;
  }
  std::fprintf(stderr, "  slowest steps:\n");
  for (int k = 0; k < p.numSteps && k < shown; ++k) {
    int i = order[k];
    const StepDesc& st = p.steps[i];
    const double perRun = m->stepSeconds[i] / m->profiledRuns;
    char roof[96] = "";
    if (st.flops >= 0 && perRun > 0 && peaks.fmaGflopsPerThread > 0)
      std::snprintf(roof, sizeof roof, "  [%.1f GFLOP/s, %.0f%% of %d-thread peak; %.1f GB/s]",
                    st.flops / perRun * 1e-9,
                    100.0 * st.flops / (peaks.fmaGflopsPerThread * 1e9 * stepThreads(i)) / perRun, stepThreads(i),
                    st.bytes / perRun * 1e-9);
    std::fprintf(stderr, "  %8.3f ms  %5.1f%%  step %3d  %-20s %s%s\n", 1e3 * perRun,
                 total > 0 ? 100.0 * m->stepSeconds[i] / total : 0.0, i, st.op, st.node, roof);
  }
}

const SlotDesc* port(const Program& p, bool output, int index) {
  return output ? abi::port(p.slots, p.outputs, p.numOutputs, index, "output")
                : abi::port(p.slots, p.inputs, p.numInputs, index, "input");
}

}  // namespace

Model::~Model() { printProfile(this); }

int create(const Program& p, Model** model, const char* weightsPath) {
  if (!model) return fail(nullptr, kErrInvalidArgument, fn(p, "create") + ": model is NULL");
  *model = nullptr;
  try {
    std::unique_ptr<Model> m(new (std::nothrow) Model(p));
    if (!m) return fail(nullptr, kErrOutOfMemory, "out of memory creating a handle");
    int s = init(m.get(), weightsPath);
    if (s != kOk) return s;
    abi::Registry::add(m.get(), &p);
    *model = m.release();
    return kOk;
  } catch (const std::bad_alloc&) {
    return fail(nullptr, kErrOutOfMemory, "out of memory creating a handle");
  } catch (...) {
    return fail(nullptr, kErrRuntime, "unexpected error creating a handle");
  }
}

int setNumThreads(const Program& p, Model* model, int n) {
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "set_num_threads") + ": not a live handle (NULL or destroyed)");
  if (n < 1)
    return fail(model, kErrInvalidArgument,
                fn(p, "set_num_threads") + ": n must be at least 1, got " + std::to_string(n));
  // Refused as busy: the message goes to this thread only. The handle's own message belongs to
  // the thread running it (writing it here would race with other refused callers).
  if (model->busy.exchange(true))
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "set_num_threads") + ": the handle is running on another thread");
  int s;
  try {
    s = setThreads(model, n);
  } catch (...) {
    s = fail(model, kErrOutOfMemory, "cannot start " + std::to_string(n) + " threads");
  }
  model->busy = false;
  return s;
}

int run(const Program& p, Model* model, const void* const* inputs, void* const* outputs) {
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument, fn(p, "run") + ": not a live handle (NULL or destroyed)");
  if ((!inputs && p.numInputs > 0) || (!outputs && p.numOutputs > 0))
    return fail(model, kErrInvalidArgument,
                fn(p, "run") + ": the " + (!outputs ? "outputs" : "inputs") + " array is NULL");
  if (model->busy.exchange(true))  // the message goes to this thread only, as above
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "run") + ": the handle is already running on another thread (use one handle "
                               "per thread)");
  int s;
  try {
    s = execute(model, inputs, outputs);
  } catch (const std::bad_alloc&) {
    s = fail(model, kErrOutOfMemory, "out of memory while running");
  } catch (...) {
    s = fail(model, kErrRuntime, "unexpected error while running");
  }
  model->busy = false;
  return s;
}

void destroy(const Program& p, Model* model) {
  if (!model) return;
  if (!abi::Registry::remove(model, &p)) {
    abi::threadError() = fn(p, "destroy") + ": not a live handle (destroyed twice?)";
    return;
  }
  delete model;
}

const char* lastError(const Program& p, const Model* model) {
  if (model && isLive(p, model)) return model->error.c_str();
  return abi::threadError().c_str();
}

const char* portName(const Program& p, bool output, int i) {
  return port(p, output, i) ? (output ? p.outputs : p.inputs)[i].name : nullptr;
}
int portRank(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? d->rank : -1;
}
const int64_t* portDims(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? d->dims : nullptr;
}
int portDtype(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? d->dtype : -1;
}
size_t portBytes(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? static_cast<size_t>(d->bytes) : 0;
}

int setInputDims(const Program& p, Model* model, int input, const int64_t* dims, int rank) {
  const std::string f = fn(p, "set_input_dims") + ": ";
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument, f + "not a live handle (NULL or destroyed)");
  if (input < 0 || input >= p.numInputs)
    return fail(model, kErrInvalidArgument,
                f + "input index " + std::to_string(input) + " is out of range [0, " + std::to_string(p.numInputs) + ")");
  if (rank < 0 || rank > abi::kMaxDims || (rank > 0 && !dims))
    return fail(model, kErrInvalidArgument,
                f + (rank > 0 && !dims ? std::string("dims is NULL") : "rank " + std::to_string(rank) + " is invalid"));
  if (model->busy.exchange(true))  // the message goes to this thread only (see setNumThreads)
    return fail(nullptr, kErrInvalidArgument, f + "the handle is running on another thread");
  int s;
  try {
    s = applyInputDims(model, input, dims, rank);
  } catch (const std::bad_alloc&) {
    s = fail(model, kErrOutOfMemory, "out of memory setting input dims");
  } catch (...) {
    s = fail(model, kErrRuntime, "unexpected error setting input dims");
  }
  model->busy = false;
  return s;
}

const int64_t* modelPortDims(const Program& p, const Model* model, bool output, int i) {
  if (!model || !isLive(p, model)) {
    abi::threadError() = fn(p, output ? "model_output_dims" : "model_input_dims") + ": not a live handle";
    return nullptr;
  }
  if (!port(p, output, i)) return nullptr;
  return model->slots[(output ? p.outputs : p.inputs)[i].slot].dims;
}

size_t modelPortBytes(const Program& p, const Model* model, bool output, int i) {
  if (!model || !isLive(p, model)) {
    abi::threadError() = fn(p, output ? "model_output_bytes" : "model_input_bytes") + ": not a live handle";
    return 0;
  }
  if (!port(p, output, i)) return 0;
  return static_cast<size_t>(model->slotBytes[(output ? p.outputs : p.inputs)[i].slot]);
}

namespace {
// The KvDesc of output `output`, or -1 with a message (for `f`) in *why.
int kvOf(const Program& p, int output, const std::string& f, std::string* why) {
  if (output < 0 || output >= p.numOutputs) {
    *why = f + "output index " + std::to_string(output) + " is out of range [0, " + std::to_string(p.numOutputs) + ")";
    return -1;
  }
  for (int k = 0; k < p.numKv; ++k)
    if (p.kvs[k].output == output) return k;
  *why = f + "output " + std::to_string(output) + " ('" + p.outputs[output].name +
         "') is not a KV-cache output: the compiler found no Concat(past input, new rows) along a dynamic axis "
         "producing it" +
         (p.numKv == 0 ? std::string(" (this model has no KV-cache output)") : std::string());
  return -1;
}
}  // namespace

int bindKv(const Program& p, Model* model, int output, int input, void* buffer, int64_t capacity) {
  const std::string f = fn(p, "bind_kv") + ": ";
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument, f + "not a live handle (NULL or destroyed)");
  std::string why;
  const int k = kvOf(p, output, f, &why);
  if (k < 0) return fail(model, kErrInvalidArgument, why);
  const KvDesc& d = p.kvs[k];
  if (input != d.input)
    return fail(model, kErrInvalidArgument,
                f + "output " + std::to_string(output) + " ('" + p.outputs[output].name + "') appends to input " +
                    std::to_string(d.input) + " ('" + p.inputs[d.input].name + "'), not to input " +
                    std::to_string(input) +
                    (input >= 0 && input < p.numInputs ? std::string(" ('") + p.inputs[input].name + "')"
                                                       : std::string(" (out of range [0, ") + std::to_string(p.numInputs) + "))"));
  if (!buffer)
    return fail(model, kErrInvalidArgument,
                f + "buffer is NULL (output " + std::to_string(output) + " ('" + p.outputs[output].name +
                    "'); " + fn(p, "unbind_kv") + " removes a binding)");
  if (capacity < 1)
    return fail(model, kErrInvalidArgument,
                f + "capacity must be at least 1 row along axis " + std::to_string(d.axis) + ", got " +
                    std::to_string(capacity));
  if (model->busy.exchange(true))
    return fail(nullptr, kErrInvalidArgument, f + "the handle is running on another thread");
  model->kvBuffer[k] = buffer;
  model->kvCapacity[k] = capacity;
  model->busy = false;
  return kOk;
}

int unbindKv(const Program& p, Model* model, int output) {
  const std::string f = fn(p, "unbind_kv") + ": ";
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument, f + "not a live handle (NULL or destroyed)");
  std::string why;
  const int k = kvOf(p, output, f, &why);
  if (k < 0) return fail(model, kErrInvalidArgument, why);
  if (model->busy.exchange(true))
    return fail(nullptr, kErrInvalidArgument, f + "the handle is running on another thread");
  model->kvBuffer[k] = nullptr;
  model->kvCapacity[k] = 0;
  model->busy = false;
  return kOk;
}

int kvInput(const Program& p, int output) {
  std::string why;
  const int k = kvOf(p, output, fn(p, "kv_input") + ": ", &why);
  if (k < 0) abi::threadError() = why;
  return k < 0 ? -1 : p.kvs[k].input;
}

int kvAxis(const Program& p, int output) {
  std::string why;
  const int k = kvOf(p, output, fn(p, "kv_axis") + ": ", &why);
  if (k < 0) abi::threadError() = why;
  return k < 0 ? -1 : p.kvs[k].axis;
}

size_t kvBufferBytes(const Program& p, const Model* model, int output, int64_t capacity) {
  const std::string f = fn(p, "kv_buffer_bytes") + ": ";
  if (!model || !isLive(p, model)) {
    abi::threadError() = f + "not a live handle (NULL or destroyed)";
    return 0;
  }
  std::string why;
  const int k = kvOf(p, output, f, &why);
  if (k < 0 || capacity < 1) {
    abi::threadError() = k < 0 ? why : f + "capacity must be at least 1, got " + std::to_string(capacity);
    return 0;
  }
  const mgrt::Tensor& in = model->slots[p.inputs[p.kvs[k].input].slot];
  uint64_t n = mgrt::dtypeSize(in.dtype);
  for (int d = 0; d < in.rank; ++d) n *= static_cast<uint64_t>(d == p.kvs[k].axis ? capacity : in.dims[d]);
  return static_cast<size_t>(n);
}

int numSymbols(const Program& p) { return p.numSymbols; }

const char* symbolName(const Program& p, int k) {
  if (k < 0 || k >= p.numSymbols) {
    abi::threadError() = fn(p, "symbol_name") + ": symbol index " + std::to_string(k) + " is out of range [0, " +
                         std::to_string(p.numSymbols) + ")";
    return nullptr;
  }
  return p.symbols[k].name;
}

int symbolRange(const Program& p, int k, int64_t* lo, int64_t* hi) {
  if (k < 0 || k >= p.numSymbols)
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "symbol_range") + ": symbol index " + std::to_string(k) + " is out of range [0, " +
                    std::to_string(p.numSymbols) + ")");
  if (lo) *lo = p.symbols[k].lo;
  if (hi) *hi = p.symbols[k].hi;
  return kOk;
}

}  // namespace pkg
}  // namespace mgrt
