// CPU emulation of GPU kernels, layer 4: running a grid on a pool of OS threads, launch-time
// checks and the runtime's error state.
//
// A co-resident grid (mgLaunchCoResident, CUDA's cooperative launch) runs every block at once,
// each on an OS thread of its own, so that blocks can wait on progress flags that other blocks
// publish (mgFlagWait / mgFlagPublish; the wavefront of stacked recurrent layers). A wait blocks
// its OS thread, i.e. its whole block, until the flag reaches the value. Deadlocks are reported,
// never hung on: each publish starts a new epoch; a waiter whose flag is still short counts itself
// stuck once per epoch, and when every live block is stuck in the same epoch no running block is
// left to publish, so the launch fails naming the waits. A wait outside such a launch fails the
// block at once (blocks of a plain grid run one after another here, so a wait on a later block
// would never end). The launch is refused, as CUDA refuses it, when the grid does not fit on the
// device at once (coResidentCapacity: sm_90's per-SM limits times 132 SMs, the H200).
//
// The blocks of a grid are handed out in linear order (x fastest; MG_EMU_ORDER=reverse or
// random[:SEED] reverses or shuffles it, and a block's threads with it) through an atomic counter to
// a pool of OS threads: MG_EMU_THREADS of them (default: every core), the launching thread
// included. Each OS thread owns a BlockRunner (fibers, pooled stacks) and a dynamic shared
// memory buffer, and runs one block at a time to completion, so `static thread_local`
// __shared__ variables are per block. One grid runs at a time (launches from several host
// threads are serialised). The first failing block stops the grid; its error names the kernel
// (when the symbol is exported, see kernelName) and the block.
//
// Errors carry CUDA's numeric codes so that logs read the same on every backend. As in CUDA the
// last error is per host thread and cleared by mgGetLastError; mgGetErrorString of that code
// returns the detailed message.
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#if defined(__GLIBC__) || defined(__APPLE__)
#include <cxxabi.h>
#include <dlfcn.h>
#define MG_EMU_HAVE_DLADDR 1
#else
#define MG_EMU_HAVE_DLADDR 0
#endif

#include "mg_emu_block.h"
#include "mg_emu_device.h"

namespace mg_emu {

enum Error : int {
  kSuccess = 0,
  kErrorInvalidValue = 1,
  kErrorMemoryAllocation = 2,
  kErrorInvalidConfiguration = 9,
  kErrorInvalidResourceHandle = 400,
  kErrorIllegalState = 401,
  kErrorLaunchFailure = 719,
  kErrorCooperativeLaunchTooLarge = 720,
  kErrorStreamCaptureUnsupported = 900,
  kErrorStreamCaptureInvalidated = 901,
};

inline const char* errorName(Error e) {
  switch (e) {
    case kSuccess: return "no error";
    case kErrorInvalidValue: return "invalid argument";
    case kErrorMemoryAllocation: return "out of memory";
    case kErrorInvalidConfiguration: return "invalid configuration argument";
    case kErrorInvalidResourceHandle: return "invalid resource handle";
    case kErrorIllegalState: return "operation not permitted in the current state";
    case kErrorLaunchFailure: return "unspecified launch failure";
    case kErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case kErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case kErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
  }
  return "unknown error";
}

struct ErrorState {
  Error last = kSuccess;    // cleared by getLastError
  Error detailed = kSuccess;  // code of `detail`
  std::string detail;
};
inline ErrorState& errorState() {
  static thread_local ErrorState s;
  return s;
}
// Records an error of this host thread with its detailed message; returns e.
inline Error setError(Error e, const std::string& detail) {
  if (e == kSuccess) return e;
  ErrorState& s = errorState();
  s.last = e;
  s.detailed = e;
  s.detail = std::string(errorName(e)) + ": " + detail;
  return e;
}
inline Error getLastError() {
  ErrorState& s = errorState();
  Error e = s.last;
  s.last = kSuccess;
  return e;
}
inline const char* errorString(Error e) {
  const ErrorState& s = errorState();
  if (e != kSuccess && e == s.detailed) return s.detail.c_str();
  return errorName(e);
}

// A readable name for a kernel: the demangled symbol when the dynamic linker knows it (shared
// libraries; executables linked with -rdynamic), else its address.
inline std::string kernelName(const void* fn) {
#if MG_EMU_HAVE_DLADDR
  Dl_info info;
  if (dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn) {
    int status = 0;
    char* d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    std::string name = status == 0 && d ? d : info.dli_sname;
    std::free(d);
    return name;
  }
#endif
  char buf[32];
  std::snprintf(buf, sizeof buf, "at %p", fn);
  return buf;
}

// ---- Launch limits (those of sm_90).
constexpr size_t kDefaultDynamicShared = 48 << 10;  // without mgFuncSetMaxDynamicSharedMemory
constexpr size_t kMaxDynamicShared = 227 << 10;     // opt-in maximum per block (228 KiB per SM)

inline std::mutex& sharedLimitMutex() {
  static std::mutex m;
  return m;
}
inline std::map<const void*, size_t>& sharedLimits() {
  static std::map<const void*, size_t> m;
  return m;
}
// An entry point (MG_EMU_API, mg_gpu_emu.h).
#if MG_EMU_ENTRY_BODIES
MG_EMU_API Error setMaxDynamicShared(const void* kernel, size_t bytes) {
  if (!kernel || bytes > kMaxDynamicShared)
    return setError(kErrorInvalidValue, "max dynamic shared memory " + std::to_string(bytes) +
                                             " bytes exceeds the limit of " +
                                             std::to_string(kMaxDynamicShared));
  std::lock_guard<std::mutex> g(sharedLimitMutex());
  sharedLimits()[kernel] = bytes;
  return kSuccess;
}
#else
Error setMaxDynamicShared(const void* kernel, size_t bytes);
#endif

inline Error validateLaunch(const void* kernel, dim3 grid, dim3 block, size_t shared,
                            std::string* why) {
  auto d = [](dim3 v) {
    return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")";
  };
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || threads > 1024) {
    *why = "block " + d(block) + ": each extent >= 1, x,y <= 1024, z <= 64, at most 1024 threads";
    return kErrorInvalidConfiguration;
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
      grid.z > 65535) {
    *why = "grid " + d(grid) + ": each extent >= 1, x < 2^31, y,z <= 65535";
    return kErrorInvalidConfiguration;
  }
  size_t limit = kDefaultDynamicShared;
  {
    std::lock_guard<std::mutex> g(sharedLimitMutex());
    auto it = sharedLimits().find(kernel);
    if (it != sharedLimits().end()) limit = std::max(limit, it->second);
  }
  if (shared > limit) {
    *why = std::to_string(shared) + " bytes of dynamic shared memory exceed the kernel's limit of " +
           std::to_string(limit) + " (raise it with mgFuncSetMaxDynamicSharedMemory, up to " +
           std::to_string(kMaxDynamicShared) + ")";
    return kErrorInvalidValue;
  }
  return kSuccess;
}

// ---- The pool of OS threads that run blocks.
class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool pool;
    return pool;
  }
  ~ThreadPool() { stopWorkers(); }

  // OS threads that run blocks, the launching thread included.
  int threads() {
    std::lock_guard<std::mutex> g(runMutex_);
    return int(workers_.size()) + 1;
  }
  void resize(int threads) {
    std::lock_guard<std::mutex> g(runMutex_);
    stopWorkers();
    startWorkers(std::max(threads, 1) - 1);
  }

  // Calls body(i) for every i in [0, count) on all threads until one call returns false.
  void run(uint64_t count, const std::function<bool(uint64_t)>& body) {
    std::lock_guard<std::mutex> g(runMutex_);
    if (workers_.empty() || count == 1) {
      for (uint64_t i = 0; i < count; ++i)
        if (!body(i)) break;
      return;
    }
    {
      std::lock_guard<std::mutex> l(m_);
      body_ = &body;
      count_ = count;
      next_.store(0, std::memory_order_relaxed);
      stop_.store(false, std::memory_order_relaxed);
      busy_ = int(workers_.size());
      ++job_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> l(m_);
    done_.wait(l, [this] { return busy_ == 0; });
    body_ = nullptr;
  }

 private:
  ThreadPool() {
    int n = config().threads;
    if (n <= 0) n = int(std::max(1u, std::thread::hardware_concurrency()));
    startWorkers(n - 1);
  }

  void drain() {
    while (!stop_.load(std::memory_order_relaxed)) {
      uint64_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count_) break;
      if (!(*body_)(i)) stop_.store(true, std::memory_order_relaxed);
    }
  }

  // `seen`: the job counter when the worker was created. Read by the creator, not by the new
  // thread, which may only start after the next run() has already published its job.
  void workerLoop(uint64_t seen) {
    for (;;) {
      {
        std::unique_lock<std::mutex> l(m_);
        wake_.wait(l, [&] { return shutdown_ || job_ != seen; });
        if (shutdown_) return;
        seen = job_;
      }
      drain();
      std::lock_guard<std::mutex> l(m_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  void startWorkers(int n) {
    std::lock_guard<std::mutex> l(m_);
    shutdown_ = false;
    const uint64_t job = job_;
    for (int i = 0; i < n; ++i) workers_.emplace_back([this, job] { workerLoop(job); });
  }
  void stopWorkers() {
    {
      std::lock_guard<std::mutex> l(m_);
      shutdown_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  std::mutex runMutex_;  // one grid at a time
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<bool(uint64_t)>* body_ = nullptr;
  uint64_t count_ = 0, job_ = 0;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> stop_{false};
  int busy_ = 0;
  bool shutdown_ = false;
};

// What each OS thread keeps between blocks.
struct WorkerState {
  BlockRunner runner;
  unsigned char* shared = nullptr;
  size_t sharedBytes = 0;

  WorkerState() = default;
  WorkerState(const WorkerState&) = delete;
  WorkerState& operator=(const WorkerState&) = delete;
  ~WorkerState() { ::operator delete(shared, std::align_val_t(kAlign)); }

  unsigned char* dynamicShared(size_t bytes) {
    if (bytes > sharedBytes || !shared) {
      ::operator delete(shared, std::align_val_t(kAlign));
      sharedBytes = std::max<size_t>(bytes, 1024);
      shared = static_cast<unsigned char*>(::operator new(sharedBytes, std::align_val_t(kAlign)));
    }
    return shared;
  }
  static constexpr size_t kAlign = 128;
};
inline WorkerState& workerState() {
  static thread_local WorkerState s;
  return s;
}

// ---- Co-resident grids.
constexpr unsigned kCoResidentSms = 132;           // H200 (sm_90)
constexpr unsigned kSmThreads = 2048, kSmBlocks = 32;
constexpr size_t kSmShared = 228 << 10, kBlockSharedReserve = 1 << 10;

// Blocks of `threads` threads and `shared` bytes of dynamic shared memory the device holds at once.
inline uint64_t coResidentCapacity(unsigned threads, size_t shared) {
  const unsigned warps = (threads + 31) / 32;
  uint64_t perSm = std::min<uint64_t>(kSmBlocks, kSmThreads / (warps * 32));
  perSm = std::min<uint64_t>(perSm, kSmShared / (shared + kBlockSharedReserve));
  return perSm * kCoResidentSms;
}

struct CoGrid {
  struct Waiter {
    const unsigned* flag = nullptr;
    unsigned target = 0;
    uint64_t seenEpoch = 0;
    bool waiting = false;
    uint3 block{0, 0, 0};
  };
  std::mutex m;
  std::condition_variable cv;
  uint64_t epoch = 0;
  uint64_t live = 0, stuck = 0;
  bool failed = false;
  std::vector<Waiter> waits;  // by linear block index
};
inline thread_local CoGrid* tlsCoGrid = nullptr;
inline thread_local uint64_t tlsCoBlock = 0;

inline std::string coDeadlockMessage(const CoGrid& g) {
  std::string s = "deadlock: every live block of the co-resident grid waits on a progress flag that "
                  "no running block can publish:";
  int shown = 0, waiting = 0;
  for (const CoGrid::Waiter& w : g.waits) {
    if (!w.waiting) continue;
    ++waiting;
    if (shown++ >= 4) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, " block (%u,%u,%u) waits for the flag at %p to reach %u (it holds %u);",
                  w.block.x, w.block.y, w.block.z, static_cast<const void*>(w.flag), w.target,
                  __atomic_load_n(w.flag, __ATOMIC_ACQUIRE));
    s += buf;
  }
  s += " " + std::to_string(waiting) + " block(s) waiting";
  return s;
}

// The device side of progress flags: entry points (MG_EMU_API, mg_gpu_emu.h).
#if MG_EMU_ENTRY_BODIES
MG_EMU_API void flagPublish(unsigned* flag, unsigned value) {
  __atomic_store_n(flag, value, __ATOMIC_SEQ_CST);
  CoGrid* g = tlsCoGrid;
  if (!g) return;
  std::lock_guard<std::mutex> l(g->m);
  ++g->epoch;
  g->stuck = 0;
  g->cv.notify_all();
}
MG_EMU_API void flagWait(const unsigned* flag, unsigned value) {
  Fiber* me = tlsFiber;
  if (!me || tlsPlainOnFibers) {
    if (!tlsPlainMisuse) tlsPlainMisuse = "mgFlagWait";
    if (!me) return;
  }
  CoGrid* g = tlsCoGrid;
  if (!g)
    me->runner->abandon(me, "mgFlagWait outside a co-resident launch (mgLaunchCoResident): the blocks "
                            "of a plain grid are not all resident at once, so the wait may never end");
  std::string why;
  {
    std::unique_lock<std::mutex> l(g->m);
    CoGrid::Waiter& w = g->waits[tlsCoBlock];
    w.flag = flag;
    w.target = value;
    w.block = blockIdx;
    for (;;) {
      if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) >= value) {
        // Counted stuck in this epoch (the publisher stored the flag but has not yet started the
        // next epoch): no longer.
        if (w.waiting && w.seenEpoch == g->epoch) --g->stuck;
        w.waiting = false;
        return;
      }
      if (g->failed) {
        why = "stopped: another block of the co-resident grid failed";
        break;
      }
      if (!w.waiting || w.seenEpoch != g->epoch) {
        w.waiting = true;
        w.seenEpoch = g->epoch;
        ++g->stuck;
      }
      if (g->stuck >= g->live) {
        g->failed = true;
        why = coDeadlockMessage(*g);
        g->cv.notify_all();
        break;
      }
      g->cv.wait(l);
    }
  }
  me->runner->abandon(me, why);
}
#else
void flagPublish(unsigned* flag, unsigned value);
void flagWait(const unsigned* flag, unsigned value);
#endif

// What both grid runners do before a block runs: its built-in variables and its dynamic shared
// memory on this OS thread.
inline void enterBlock(WorkerState& ws, uint64_t b, dim3 grid, dim3 block, size_t shared) {
  blockIdx = uint3{unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (uint64_t(grid.x) * grid.y))};
  blockDim = block;
  gridDim = grid;
  tlsDynamicShared = ws.dynamicShared(shared);
}

// The launch error naming the kernel and the block this thread ran (blockIdx), and why.
inline std::string blockFailure(const void* kernel, const std::string& why) {
  return "kernel " + kernelName(kernel) + ", block (" + std::to_string(blockIdx.x) + "," +
         std::to_string(blockIdx.y) + "," + std::to_string(blockIdx.z) + "): " + why;
}

// Runs every block of a co-resident grid at once, one OS thread each (the calling one included),
// started in the configured order. Same contract as runGrid.
inline Error runGridCoResident(const KernelCall& call, const void* kernel, dim3 grid, dim3 block,
                               size_t shared, std::string* message) {
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  const Config& cfg = config();
  if (!cfg.orderError.empty()) {
    *message = cfg.orderError;
    return kErrorLaunchFailure;
  }
  std::vector<unsigned> blockOrder;
  orderPermutation(cfg, static_cast<unsigned>(blocks), ~uint64_t{0}, blockOrder);
  CoGrid g;
  g.live = blocks;
  g.waits.resize(blocks);
  std::string error;
  auto body = [&](uint64_t b) {
    WorkerState& ws = workerState();
    tlsCoGrid = &g;
    tlsCoBlock = b;
    enterBlock(ws, b, grid, block, shared);
    std::string why;
    tlsPlainMisuse = nullptr;
    const bool ok = ws.runner.run(call, block, &why, b);
    tlsDynamicShared = nullptr;
    tlsCoGrid = nullptr;
    std::lock_guard<std::mutex> l(g.m);
    --g.live;
    if (g.waits[b].waiting && g.waits[b].seenEpoch == g.epoch) --g.stuck;
    g.waits[b].waiting = false;
    if (!ok) {
      g.failed = true;
      // The block that found the deadlock names it; the others only stopped.
      const bool stopped = why.rfind("stopped:", 0) == 0;
      if (error.empty() || (!stopped && error.find("stopped:") != std::string::npos))
        error = blockFailure(kernel, why);
    }
    g.cv.notify_all();  // a waiter may now be the last live block, or see the failure
  };
  std::vector<std::thread> threads;
  threads.reserve(blocks - 1);
  for (uint64_t k = 1; k < blocks; ++k) threads.emplace_back(body, uint64_t(blockOrder[k]));
  body(blockOrder[0]);
  for (std::thread& t : threads) t.join();
  if (error.empty()) return kSuccess;
  *message = error;
  return kErrorLaunchFailure;
}

// Runs every block of a grid; plain: threads as loops (mgLaunchNoSync). On failure returns
// kErrorLaunchFailure and the message naming kernel and block.
inline Error runGrid(const KernelCall& call, const void* kernel, dim3 grid, dim3 block,
                     size_t shared, bool plain, std::string* message) {
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  const Config& cfg = config();
  if (!cfg.orderError.empty()) {
    *message = cfg.orderError;
    return kErrorLaunchFailure;
  }
  // Blocks are handed out in the configured order too (Config::order).
  std::vector<unsigned> blockOrder;
  if (cfg.order != Order::kForward && blocks <= 0xffffffffu)
    orderPermutation(cfg, static_cast<unsigned>(blocks), ~uint64_t{0}, blockOrder);
  std::mutex errorMutex;
  std::string error;
  ThreadPool::instance().run(blocks, [&](uint64_t k) {
    const uint64_t b = blockOrder.empty() ? k : blockOrder[k];
    WorkerState& ws = workerState();
    enterBlock(ws, b, grid, block, shared);
    std::string why;
    // The race check runs barrier-free launches on fibers too: a plain loop runs every thread on
    // one stack, whose reused frames would look like races between the threads.
    bool ok;
    if (plain && !race::kOn) {
      ok = runBlockPlain(call, block, &why, b);
    } else {
      tlsPlainMisuse = nullptr;
      tlsPlainOnFibers = plain;
      ok = ws.runner.run(call, block, &why, b);
      tlsPlainOnFibers = false;
      if (ok && plain && tlsPlainMisuse) {
        why = plainMisuseMessage();
        ok = false;
      }
    }
    tlsDynamicShared = nullptr;
    if (ok) return true;
    std::lock_guard<std::mutex> g(errorMutex);
    if (error.empty()) error = blockFailure(kernel, why);
    return false;
  });
  if (error.empty()) return kSuccess;
  *message = error;
  return kErrorLaunchFailure;
}

}  // namespace mg_emu
