// Runtime core: attribute parsing, the thread pool, kernel lookup.
#include "mg_runtime.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "mg_kernels.h"
#include "mg_threadpool.h"

namespace mgrt {

size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
    case kF32: case kI32: case kU32: return 4;
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: case kF16: case kBF16: return 2;
    case kI64: case kF64: case kU64: return 8;
    default: return 0;
  }
}

Attrs::Attrs(const char* spec) {
  std::string s = spec ? spec : "";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(';', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos || item.size() < eq + 3 || item[eq + 2] != ':') continue;
    Entry e;
    e.name = item.substr(0, eq);
    e.type = item[eq + 1];
    std::string v = item.substr(eq + 3);
    if (e.type == 's') {
      e.sv.push_back(v);
    } else {
      char sep = e.type == 'S' ? '|' : ',';
      size_t p = 0;
      while (p <= v.size() && !v.empty()) {
        size_t q = v.find(sep, p);
        if (q == std::string::npos) q = v.size();
        std::string tok = v.substr(p, q - p);
        if (e.type == 'i') e.iv.push_back(std::strtoll(tok.c_str(), nullptr, 10));
        else if (e.type == 'f') e.fv.push_back(std::strtof(tok.c_str(), nullptr));
        else e.sv.push_back(tok);
        p = q + 1;
      }
    }
    entries_.push_back(std::move(e));
  }
}

const Attrs::Entry* Attrs::find(const char* name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}
bool Attrs::has(const char* name) const { return find(name) != nullptr; }
int64_t Attrs::i(const char* name, int64_t def) const {
  const Entry* e = find(name);
  if (!e) return def;
  if (!e->iv.empty()) return e->iv[0];
  if (!e->fv.empty()) return static_cast<int64_t>(e->fv[0]);
  return def;
}
float Attrs::f(const char* name, float def) const {
  const Entry* e = find(name);
  if (!e) return def;
  if (!e->fv.empty()) return e->fv[0];
  if (!e->iv.empty()) return static_cast<float>(e->iv[0]);
  return def;
}
std::string Attrs::s(const char* name, const char* def) const {
  const Entry* e = find(name);
  return e && !e->sv.empty() ? e->sv[0] : std::string(def);
}
std::vector<int64_t> Attrs::ints(const char* name) const {
  const Entry* e = find(name);
  return e ? e->iv : std::vector<int64_t>{};
}
std::vector<float> Attrs::floats(const char* name) const {
  const Entry* e = find(name);
  if (!e) return {};
  if (!e->fv.empty() || e->iv.empty()) return e->fv;
  return std::vector<float>(e->iv.begin(), e->iv.end());
}
std::vector<std::string> Attrs::strings(const char* name) const {
  const Entry* e = find(name);
  return e ? e->sv : std::vector<std::string>{};
}

int Ctx::fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(error, sizeof(error), fmt, ap);
  va_end(ap);
  return 1;
}

// ---- thread pool ----------------------------------------------------------------------------

ThreadPool::ThreadPool(int threads) : nthreads_(std::max(1, threads)), ranges_(new Range[nthreads_]) {
  for (int i = 1; i < nthreads_; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

// Workers spin for a short while before sleeping: a model runs hundreds of parallel regions per
// inference, and waking a sleeping thread costs tens of microseconds each time, which was most of
// what a second thread gained on small layers.
void ThreadPool::workerLoop(int self) {
  uint64_t seen = 0;
  for (;;) {
    bool ready = false;
    for (int spin = 0; spin < kSpinIterations && !ready; ++spin) {
      ready = generation_.load(std::memory_order_acquire) != seen;
      if (!ready) cpuRelax();
    }
    if (!ready) {
      std::unique_lock<std::mutex> lk(mu_);
      ++sleepers_;
      cv_.wait(lk, [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      --sleepers_;
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    runChunks(self);
    active_.fetch_sub(1, std::memory_order_acq_rel);
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
  if (pinned_) {
    (*pinned_)(self);
    return;
  }
  auto runUnits = [this](int64_t b, int64_t e) { (*fn_)(b * unit_, std::min(n_, e * unit_)); };
  int64_t b, e;
  if (inOrder_) {
    while (take(0, false, &b, &e)) runUnits(b, e);
    return;
  }
  while (take(self, false, &b, &e)) runUnits(b, e);
  for (int k = 1; k < nthreads_; ++k) {
    const int victim = (self + k) % nthreads_;
    while (take(victim, true, &b, &e)) runUnits(b, e);
  }
}

void ThreadPool::run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (nthreads_ == 1 || n <= grain) {
    fn(0, n);
    return;
  }
  runRegion(n, grain, false, fn);
}

void ThreadPool::runInOrder(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (nthreads_ == 1 || n == 1) {
    fn(0, n);
    return;
  }
  runRegion(n, 1, true, fn);
}

void ThreadPool::runRegion(int64_t n, int64_t grain, bool inOrder,
                           const std::function<void(int64_t, int64_t)>& fn) {
  std::lock_guard<std::mutex> serial(runMu_);  // one parallel region at a time per pool
  unit_ = n < (int64_t{1} << 31) ? 1 : (n >> 31) + 1;
  const int64_t units = (n + unit_ - 1) / unit_;
  // Shares: thread t owns units [units * t / T, units * (t + 1) / T), taken about a quarter at a
  // time (at least `grain` items) so that a thread that finishes early has some left to steal.
  // In order: one unit at a time.
  const int64_t share = (units + nthreads_ - 1) / nthreads_;
  chunkUnits_ = inOrder ? 1 : std::max((grain + unit_ - 1) / unit_, (share + 3) / 4);
  inOrder_ = inOrder;
  n_ = n;
  fn_ = &fn;
  // The stores are published to the workers by startWorkers (the generation's release, their
  // acquire). In order: all units in range 0, which every thread takes from the front.
  for (int t = 0; t < nthreads_; ++t) {
    const uint64_t b = inOrder ? 0 : static_cast<uint64_t>(units * t / nthreads_);
    const uint64_t e = inOrder ? (t == 0 ? static_cast<uint64_t>(units) : 0)
                               : static_cast<uint64_t>(units * (t + 1) / nthreads_);
    ranges_[t].frontBack.store(b | (e << 32), std::memory_order_relaxed);
  }
  startWorkers();
  runChunks(0);
  while (active_.load(std::memory_order_acquire) != 0) cpuRelax();
}

void ThreadPool::startWorkers() {
  active_.store(nthreads_ - 1, std::memory_order_relaxed);
  // Publishing the generation under the mutex orders it with a worker going to sleep, so no
  // wake-up is lost; sleeping workers are notified, spinning ones see the new generation.
  std::lock_guard<std::mutex> lk(mu_);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  if (sleepers_ > 0) cv_.notify_all();
}

void ThreadPool::runPinned(const std::function<void(int)>& fn) {
  if (nthreads_ == 1) {
    fn(0);
    return;
  }
  std::lock_guard<std::mutex> serial(runMu_);
  pinned_ = &fn;
  startWorkers();
  fn(0);
  while (active_.load(std::memory_order_acquire) != 0) cpuRelax();
  pinned_ = nullptr;
}

void parallelForStatic(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int t = pool ? pool->threads() : 1;
  if (t == 1 || n == 1) {
    fn(0, n);
    return;
  }
  pool->runPinned([&](int self) {
    const int64_t b = n * self / t, e = n * (self + 1) / t;
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

// ---- kernel lookup ----------------------------------------------------------------------------

namespace {
const KernelEntry* const* familyTables() {
  static const KernelEntry* tables[] = {elementwiseKernels(), reductionKernels(), tensorKernels(),
                                        nnKernels(), recurrentKernels(), lossKernels(),
                                        selectKernels(), visionKernels(), quantizeKernels(),
                                        signalKernels(), randomKernels(), fusedKernels(), nullptr};
  return tables;
}
KernelFn lookup(const KernelEntry* t, const char* op) {
  for (; t && t->op; ++t)
    if (std::strcmp(t->op, op) == 0) return t->fn;
  return nullptr;
}
}  // namespace

KernelFn findKernel(const char* op) {
  for (const KernelEntry* const* t = familyTables(); *t; ++t)
    if (KernelFn f = lookup(*t, op)) return f;
  return nullptr;
}

KernelFn findFastKernel(const char* op) { return lookup(fastKernels(), op); }

Act parseAct(const std::string& n) {
  const acts::ActInfo* a = acts::find(n.c_str());
  return a ? static_cast<Act>(a->code) : Act::kNone;
}

Epilogue Epilogue::fromAttrs(const Attrs& a) {
  Epilogue e;
  e.act = parseAct(a.s("mg_act", ""));
  e.alpha = a.f("mg_alpha", 0.f);
  e.beta = a.f("mg_beta", 0.f);
  return e;
}

}  // namespace mgrt
