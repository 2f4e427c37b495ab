// The thread pool (mg_threadpool.h says how regions are shared out and why a region is a gate
// that workers join) and the parallelFor helpers of mg_runtime.h built on it.
#include "mg_threadpool.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>

#include "mg_runtime.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace mgrt {

namespace {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or `micros` have passed (checking the clock every 64 pauses); true if done.
template <typename Done>
bool spinFor(int micros, Done done) {
  if (done()) return true;
  if (micros <= 0) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

int spinMicrosFromEnv() {
  const char* s = std::getenv("MAGNETO_SPIN_US");
  if (!s || !*s) return ThreadPool::kDefaultSpinMicros;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0) return ThreadPool::kDefaultSpinMicros;
  return static_cast<int>(std::min<long>(v, 100000));  // at most 0.1 s
}

// How long the caller spins on a joined worker before it sleeps: the worker is finishing a chunk,
// usually within microseconds; past this it was most likely preempted.
constexpr int kCallerSpinMicros = 20;

}  // namespace

// ---- WaitWord --------------------------------------------------------------------------------

#if defined(__linux__)
void WaitWord::wait(uint32_t expected) {
  // The kernel compares the word with `expected` atomically before sleeping: a change (and its
  // wake-up) between the caller's check and this call is never lost.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&value), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void WaitWord::wakeAll() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&value), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}
#else
void WaitWord::wait(uint32_t expected) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return value.load(std::memory_order_acquire) != expected; });
}
void WaitWord::wakeAll() {
  { std::lock_guard<std::mutex> lk(mu_); }  // a waiter between its check and its sleep holds mu_
  cv_.notify_all();
}
#endif

// ---- ThreadPool ------------------------------------------------------------------------------

ThreadPool::ThreadPool(int threads)
    : nthreads_(std::max(1, threads)), spinMicros_(spinMicrosFromEnv()), ranges_(new Range[nthreads_]) {
  for (int i = 1; i < nthreads_; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  generation_.value.fetch_add(1, std::memory_order_seq_cst);
  generation_.wakeAll();
  for (auto& t : workers_) t.join();
}

// An idle worker spins a short while before sleeping: a model runs hundreds of parallel regions
// per inference, and waking a sleeping thread costs tens of microseconds each time. A worker that
// wakes too late for its region finds the gate closed and simply waits for the next one.
void ThreadPool::workerLoop(int self) {
  // Generation 0 is the pool's before its first region (workers start in the constructor): a
  // worker that starts after the first region opened still joins it.
  uint32_t seen = 0;
  for (;;) {
    auto moved = [&] { return generation_.value.load(std::memory_order_acquire) != seen; };
    if (!spinFor(spinMicros_, moved)) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      while (!moved()) generation_.wait(seen);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
    // The generation first, then stop_: the destructor sets stop_ before it bumps the generation,
    // so a generation read that includes that bump also sees stop_ (else this worker would sleep
    // on the destructor's generation for ever).
    seen = generation_.value.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    // Join the region of generation `seen` if its gate is still open.
    uint64_t v = gate_.load(std::memory_order_acquire);
    bool joined = false;
    // A region limited to fewer threads (setRunLimit) is not this worker's to join; active_ was
    // written before the gate of generation `seen` opened, which the acquire above saw.
    if ((v >> 32) == seen && self >= active_.load(std::memory_order_relaxed)) continue;
    while ((v >> 32) == seen && !(v & kClosed)) {
      if (gate_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;
    runChunks(self);
    finished_.value.fetch_add(1, std::memory_order_seq_cst);
    if (callerSleeps_.load(std::memory_order_seq_cst)) finished_.wakeAll();
  }
}

// A range's positions count units of unit_ items (1 but for regions of 2^31 items or more).
// The owner takes up to chunkUnits_ units from the front, a thief as many from the back.
bool ThreadPool::take(int owner, bool fromBack, int64_t* begin, int64_t* end) {
  std::atomic<uint64_t>& r = ranges_[owner].frontBack;
  uint64_t v = r.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = v & 0xffffffffu, back = v >> 32;
    if (front >= back) return false;
    const uint64_t n = std::min<uint64_t>(chunkUnits_, back - front);
    if (r.compare_exchange_weak(v, fromBack ? v - (n << 32) : v + n, std::memory_order_relaxed)) {
      *begin = static_cast<int64_t>(fromBack ? back - n : front);
      *end = *begin + static_cast<int64_t>(n);
      return true;
    }
  }
}

void ThreadPool::runChunks(int self) {
  auto runUnits = [this](int64_t b, int64_t e) {
    if (pinned_) {
      for (int64_t t = b; t < e; ++t) (*pinned_)(static_cast<int>(t));
    } else {
      (*fn_)(b * unit_, std::min(n_, e * unit_));
    }
  };
  int64_t b, e;
  if (inOrder_) {
    while (take(0, false, &b, &e)) runUnits(b, e);
    return;
  }
  const int active = active_.load(std::memory_order_relaxed);
  while (take(self, false, &b, &e)) runUnits(b, e);
  for (int k = 1; k < active; ++k) {
    const int victim = (self + k) % active;
    while (take(victim, true, &b, &e)) runUnits(b, e);
  }
}

void ThreadPool::run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int T = runLimit_ > 0 ? std::min(runLimit_, nthreads_) : nthreads_;
  if (T == 1 || n <= grain) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> serial(runMu_);
  unit_ = n < (int64_t{1} << 31) ? 1 : (n >> 31) + 1;
  const int64_t units = (n + unit_ - 1) / unit_;
  // Shares: thread t owns units [units * t / T, units * (t + 1) / T), taken about a quarter at a
  // time (at least `grain` items) so that a thread that finishes early has some left to steal,
  // and a thread that never came leaves four chunks to the others, not one.
  const int64_t share = (units + T - 1) / T;
  chunkUnits_ = std::max((grain + unit_ - 1) / unit_, (share + 3) / 4);
  inOrder_ = false;
  n_ = n;
  fn_ = &fn;
  pinned_ = nullptr;
  for (int t = 0; t < nthreads_; ++t) {
    const uint64_t b = t < T ? static_cast<uint64_t>(units * t / T) : 0;
    const uint64_t e = t < T ? static_cast<uint64_t>(units * (t + 1) / T) : 0;
    ranges_[t].frontBack.store(b | (e << 32), std::memory_order_relaxed);
  }
  active_.store(T, std::memory_order_relaxed);
  runOpenRegion();
}

void ThreadPool::runInOrder(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (nthreads_ == 1 || n == 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> serial(runMu_);
  unit_ = n < (int64_t{1} << 31) ? 1 : (n >> 31) + 1;
  const int64_t units = (n + unit_ - 1) / unit_;
  chunkUnits_ = 1;
  inOrder_ = true;
  n_ = n;
  fn_ = &fn;
  pinned_ = nullptr;
  // All units in range 0, which every thread takes from the front.
  for (int t = 0; t < nthreads_; ++t)
    ranges_[t].frontBack.store(t == 0 ? static_cast<uint64_t>(units) << 32 : 0, std::memory_order_relaxed);
  active_.store(nthreads_, std::memory_order_relaxed);
  runOpenRegion();
}

void ThreadPool::runPinned(const std::function<void(int)>& fn) {
  if (nthreads_ == 1) {
    fn(0);
    return;
  }
  std::lock_guard<std::mutex> serial(runMu_);
  // One unit per share, in its thread's range: the owner takes it from the front, a thief (a
  // thread whose own share is done) from the back of a range whose owner has not come.
  unit_ = 1;
  chunkUnits_ = 1;
  inOrder_ = false;
  n_ = nthreads_;
  fn_ = nullptr;
  pinned_ = &fn;
  for (int t = 0; t < nthreads_; ++t)
    ranges_[t].frontBack.store(static_cast<uint64_t>(t) | (static_cast<uint64_t>(t + 1) << 32),
                               std::memory_order_relaxed);
  active_.store(nthreads_, std::memory_order_relaxed);
  runOpenRegion();
  pinned_ = nullptr;
}

void ThreadPool::runOpenRegion() {
  finished_.value.store(0, std::memory_order_relaxed);
  // Open the gate of the next generation (the region's fields above are published by this
  // release and acquired by a worker's join), then tell the workers.
  const uint32_t gen = generation_.value.load(std::memory_order_relaxed) + 1;
  gate_.store(static_cast<uint64_t>(gen) << 32, std::memory_order_release);
  generation_.value.store(gen, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) generation_.wakeAll();
  runChunks(0);
  // Nothing is left to take: close the gate, then wait for the workers that joined (each is
  // finishing a chunk it took). Those that did not join will not.
  const uint64_t closed = gate_.fetch_or(kClosed, std::memory_order_acq_rel);
  lastJoined_ = static_cast<int>(closed & (kClosed - 1));
  waitForJoined(static_cast<uint32_t>(lastJoined_));
}

void ThreadPool::waitForJoined(uint32_t joined) {
  auto done = [&] { return finished_.value.load(std::memory_order_acquire) == joined; };
  if (spinFor(kCallerSpinMicros, done)) return;
  // Sleep until the last joined worker is done. callerSleeps_ is set before the re-check and the
  // worker increments before it reads the flag (both sequentially consistent), so either the
  // re-check sees the increment or the worker sees the flag and wakes us.
  callerSleeps_.store(true, std::memory_order_seq_cst);
  for (;;) {
    const uint32_t f = finished_.value.load(std::memory_order_seq_cst);
    if (f == joined) break;
    finished_.wait(f);
  }
  callerSleeps_.store(false, std::memory_order_relaxed);
}

// ---- parallelFor -----------------------------------------------------------------------------

void parallelForStatic(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int t = pool ? pool->threads() : 1;
  if (t == 1 || n == 1) {
    fn(0, n);
    return;
  }
  pool->runPinned([&](int share) {
    const int64_t b = n * share / t, e = n * (share + 1) / t;
    if (b < e) fn(b, e);
  });
}

void parallelFor(ThreadPool* pool, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (!pool) {
    if (n > 0) fn(0, n);
    return;
  }
  pool->run(n, grain, fn);
}

}  // namespace mgrt
