// A small persistent thread pool: one parallel region at a time, chunks handed out by an atomic
// counter. The calling thread works too, so a pool of N threads starts N-1 workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mgrt {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int threads() const { return nthreads_; }
  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
  // fn(t) on thread t, for every t in [0, threads()): the same share of the work on the same
  // thread every time (what it reads stays in that core's cache from one call to the next).
  void runPinned(const std::function<void(int)>& fn);

 private:
  void workerLoop(int self);
  void startWorkers();  // wakes the workers for the region just set up
  void runChunks(int self);
  int nthreads_;
  std::vector<std::thread> workers_;
  std::mutex mu_, runMu_;
  static constexpr int kSpinIterations = 20000;  // ~100 us of pause before a worker sleeps
  std::condition_variable cv_;
  bool stop_ = false;
  int sleepers_ = 0;  // guarded by mu_
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_{0};
  std::atomic<int> active_{0};
  int64_t chunks_ = 0, chunkSize_ = 1, n_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  const std::function<void(int)>* pinned_ = nullptr;  // set for the length of a runPinned
};

}  // namespace mgrt
