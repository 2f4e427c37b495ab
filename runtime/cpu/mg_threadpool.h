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
//
// A shared machine: the caller never waits for a worker that has not started. A region is a
// gate that workers *join* while it is open; the caller runs chunks too, and when none is left
// it closes the gate and waits only for the workers that joined (each is then finishing a chunk
// it took). A worker the scheduler did not run in time (another process's threads hold the
// cores) finds the gate closed and goes back to waiting; its share was stolen by the threads that
// were running. Before, the caller waited for every worker to check in, and a descheduled one cost
// a whole scheduler slice per region: with a second package at 2 threads beside it, a 0.3 ms MoE
// layer took 20 ms. Waiting is bounded spinning, then sleeping (a futex on Linux): an idle worker
// spins kDefaultSpinMicros (MAGNETO_SPIN_US overrides, 0 = sleep at once) and the caller spins a
// little before it sleeps on a joined worker that was preempted mid-chunk.
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

// A 32-bit word threads can sleep on until it changes (a futex on Linux; elsewhere a mutex and a
// condition variable beside it).
class WaitWord {
 public:
  std::atomic<uint32_t> value{0};
  // Sleeps while value == expected (may return early: callers re-check).
  void wait(uint32_t expected);
  void wakeAll();

 private:
#if !defined(__linux__)
  std::mutex mu_;
  std::condition_variable cv_;
#endif
};

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
  // fn(t) once for every share t in [0, threads()), concurrently: share t runs on thread t when
  // that thread is running (what it reads stays in that core's cache from one call to the next);
  // a share whose thread did not come in time is run by one that did. fn must not rely on which
  // OS thread runs a share.
  void runPinned(const std::function<void(int)>& fn);

  // The most threads the next run() regions may use (0 or >= threads(): all of them), until set
  // again: a step whose work keeps k cores busy (the compiler's decision, StepDesc::threads) has
  // its loops shared among threads 0..k-1; the others do not join. runInOrder and runPinned
  // regions are not limited. Set by the thread that runs regions.
  void setRunLimit(int k) { runLimit_ = k; }

  // How many workers joined the last region (0: the caller ran all of it). For tests and
  // diagnostics; read by the thread that runs regions.
  int joinedLastRegion() const { return lastJoined_; }

  static constexpr int kDefaultSpinMicros = 50;

 private:
  void workerLoop(int self);
  // Runs a region whose ranges_ are set: opens the gate, works, closes it, waits for the joined.
  void runOpenRegion();
  void runChunks(int self);
  // The next chunk of owner's range: its first (the owner's own) or its last (a thief's).
  bool take(int owner, bool fromBack, int64_t* begin, int64_t* end);
  void waitForJoined(uint32_t joined);

  int nthreads_;
  int spinMicros_ = kDefaultSpinMicros;
  std::vector<std::thread> workers_;
  std::mutex runMu_;  // one parallel region at a time per pool
  std::atomic<bool> stop_{false};
  // Bumped once per region (and at stop); idle workers sleep on it.
  WaitWord generation_;
  std::atomic<int> sleepers_{0};
  // The open region: its generation in the high 32 bits, kClosed, and the number of workers that
  // joined it in the low bits. A worker joins with compare-exchange only while the generation is
  // the one it woke for and the gate is open.
  static constexpr uint64_t kClosed = uint64_t{1} << 31;
  std::atomic<uint64_t> gate_{0};
  // Joined workers that finished the region; the caller sleeps on it past its spin.
  WaitWord finished_;
  std::atomic<bool> callerSleeps_{false};
  int lastJoined_ = 0;
  // Per thread, its range of items still to run (in units of unit_ items): front in the low 32
  // bits, end (one past the last) in the high 32 bits, both moved with compare-exchange.
  struct alignas(64) Range {
    std::atomic<uint64_t> frontBack{0};
  };
  std::unique_ptr<Range[]> ranges_;
  int64_t unit_ = 1, chunkUnits_ = 1, n_ = 0;
  int runLimit_ = 0;
  // The threads that share the open region: workers 1..active_-1 join it, the others stay out.
  // Written before the gate opens (published with it).
  std::atomic<int> active_{0};
  bool inOrder_ = false;  // runInOrder: every thread takes from the front of range 0
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  const std::function<void(int)>* pinned_ = nullptr;  // set for the length of a runPinned
};

}  // namespace mgrt
