// A small persistent thread pool: one parallel region at a time. The calling thread works too, so
// a pool of N threads starts N-1 workers.
//
// Work is handed out with affinity: thread t owns the t-th of T equal contiguous ranges of a
// region's items and takes them from the front a chunk at a time; a thread that has finished its
// own range steals chunks from the back of the others'. Consecutive layers split the same way (a
// GEMM's column blocks, a convolution's output rows), so thread t keeps finding the part of a
// tensor it wrote itself in its own core's cache; with one shared counter each chunk went to
// whichever thread asked first, and half of every activation crossed between cores from one layer
// to the next. (runInOrder instead hands items out one at a time in order, for lists sorted
// biggest first.)
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
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
  // fn(i, i + 1) for every i in [0, n), items taken one at a time in order by whichever thread is
  // free (no shares): for work items listed biggest first, the longest-processing-time schedule
  // (a joint group's members, each a whole layer on one thread).
  void runInOrder(int64_t n, const std::function<void(int64_t, int64_t)>& fn);
  // fn(t) on thread t, for every t in [0, threads()): the same share of the work on the same
  // thread every time (what it reads stays in that core's cache from one call to the next).
  void runPinned(const std::function<void(int)>& fn);

 private:
  void workerLoop(int self);
  void startWorkers();  // wakes the workers for the region just set up
  void runRegion(int64_t n, int64_t grain, bool inOrder,
                 const std::function<void(int64_t, int64_t)>& fn);
  void runChunks(int self);
  // The next chunk of owner's range: its first (the owner's own) or its last (a thief's).
  bool take(int owner, bool fromBack, int64_t* begin, int64_t* end);
  int nthreads_;
  std::vector<std::thread> workers_;
  std::mutex mu_, runMu_;
  static constexpr int kSpinIterations = 20000;  // ~100 us of pause before a worker sleeps
  std::condition_variable cv_;
  bool stop_ = false;
  int sleepers_ = 0;  // guarded by mu_
  std::atomic<uint64_t> generation_{0};
  // Per thread, its range of items still to run (in units of unit_ items): front in the low 32
  // bits, end (one past the last) in the high 32 bits, both moved with compare-exchange.
  struct alignas(64) Range {
    std::atomic<uint64_t> frontBack{0};
  };
  std::unique_ptr<Range[]> ranges_;
  std::atomic<int> active_{0};
  int64_t unit_ = 1, chunkUnits_ = 1, n_ = 0;
  bool inOrder_ = false;  // runInOrder: every thread takes from the front of range 0
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  const std::function<void(int)>* pinned_ = nullptr;  // set for the length of a runPinned
};

}  // namespace mgrt
