// The CPU runtime's thread pool on a shared machine (runtime/cpu/mg_threadpool.h): a worker the
// scheduler does not run must not hold up a region, and the work it would have done is still done
// exactly once. (Item-level tests of the shares and stealing: fast_kernels_test.cpp.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "mg_runtime.h"
#include "mg_threadpool.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

// runPinned: every share exactly once, whatever the thread count, also when some shares are slow
// (so that a thread done with its own share takes another's).
TEST(ThreadPoolShared, PinnedEveryShareOnce) {
  for (int threads : {2, 3, 5}) {
    mgrt::ThreadPool pool(threads);
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(threads));
      for (auto& h : hits) h.store(0);
      pool.runPinned([&](int share) {
        ASSERT_GE(share, 0);
        ASSERT_LT(share, threads);
        if (share % 2 == round % 2) std::this_thread::sleep_for(std::chrono::microseconds(30));
        hits[static_cast<size_t>(share)].fetch_add(1);
      });
      for (int t = 0; t < threads; ++t)
        ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1) << "share " << t << " of " << threads;
    }
  }
}

// parallelForStatic's ranges cover [0, n) once, on a pool whose workers sleep between regions
// (MAGNETO_SPIN_US=0 is read at construction) and so often come late.
TEST(ThreadPoolShared, StaticRangesOnceWithSleepingWorkers) {
  ::setenv("MAGNETO_SPIN_US", "0", 1);
  mgrt::ThreadPool pool(2);
  ::unsetenv("MAGNETO_SPIN_US");
  for (int64_t n : {2, 3, 17, 256}) {
    for (int round = 0; round < 100; ++round) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (auto& h : hits) h.store(0);
      mgrt::parallelForStatic(&pool, n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "item " << i;
    }
  }
}

// setRunLimit(k): a region's items run on threads 0..k-1 only (k = 1: the caller alone, no worker
// joins), every item once; runPinned regions are not limited; 0 lifts the limit.
TEST(ThreadPoolShared, RunLimitKeepsARegionOnItsThreads) {
  mgrt::ThreadPool pool(4);
  for (int limit : {1, 2, 3, 0}) {
    pool.setRunLimit(limit);
    for (int round = 0; round < 100; ++round) {
      std::vector<std::atomic<int>> hits(97);
      for (auto& h : hits) h.store(0);
      std::mutex mu;
      std::set<std::thread::id> ran;
      pool.run(97, 1, [&](int64_t b, int64_t e) {
        {
          std::lock_guard<std::mutex> lk(mu);
          ran.insert(std::this_thread::get_id());
        }
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(5));  // so that workers do come
      });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "limit " << limit;
      if (limit > 0) {
        ASSERT_LE(static_cast<int>(ran.size()), limit) << "limit " << limit;
        ASSERT_LE(pool.joinedLastRegion(), limit - 1) << "limit " << limit;
      }
      if (limit == 1) ASSERT_EQ(*ran.begin(), std::this_thread::get_id());
    }
    std::vector<std::atomic<int>> shares(4);
    for (auto& s : shares) s.store(0);
    pool.runPinned([&](int s) { shares[static_cast<size_t>(s)].fetch_add(1); });
    for (auto& s : shares) ASSERT_EQ(s.load(), 1) << "runPinned under limit " << limit;
  }
}

#if defined(__linux__)
// A worker that the scheduler starves (SCHED_IDLE, on a core held by a busy thread): regions
// complete on the calling thread alone (workers joined: 0) and every item still runs once. Before
// the gate, the caller waited for every worker to check in, so each region took as long as the
// starved worker took to get a time slice.
TEST(ThreadPoolShared, AStarvedWorkerDoesNotHoldUpRegions) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "SKIPPED: needs 2 CPUs";
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0 || CPU_COUNT(&mine) < 2)
    GTEST_SKIP() << "SKIPPED: this process may run on fewer than 2 CPUs";
  int cpus[2], k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < 2; ++c)
    if (CPU_ISSET(c, &mine)) cpus[k++] = c;

  mgrt::ThreadPool pool(2);
  // Find the worker's thread id: share 1 of a pinned region runs on the worker when it comes.
  std::atomic<pid_t> workerTid{0};
  const pid_t callerTid = static_cast<pid_t>(syscall(SYS_gettid));
  for (int tries = 0; tries < 1000 && workerTid.load() == 0; ++tries)
    pool.runPinned([&](int) {
      const pid_t t = static_cast<pid_t>(syscall(SYS_gettid));
      if (t != callerTid) workerTid.store(t);
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // give the worker time to come
    });
  ASSERT_NE(workerTid.load(), 0) << "the pool's worker never ran a share";

  // Starve it: the worker and a busy thread share cpus[0]; the worker has the idle policy.
  std::atomic<bool> stopHog{false};
  std::thread hog([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    while (!stopHog.load(std::memory_order_relaxed)) {
    }
  });
  cpu_set_t zero, onePin;
  CPU_ZERO(&zero);
  CPU_SET(cpus[0], &zero);
  CPU_ZERO(&onePin);
  CPU_SET(cpus[1], &onePin);
  sched_param idle{};
  const bool starved = sched_setaffinity(workerTid.load(), sizeof(zero), &zero) == 0 &&
                       sched_setscheduler(workerTid.load(), SCHED_IDLE, &idle) == 0;
  cpu_set_t callerWas;
  sched_getaffinity(0, sizeof(callerWas), &callerWas);
  sched_setaffinity(0, sizeof(onePin), &onePin);
  int alone = 0;
  bool allOnce = true;
  if (starved) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the hog takes its core
    for (int round = 0; round < 300; ++round) {
      std::vector<std::atomic<int>> hits(64);
      for (auto& h : hits) h.store(0);
      mgrt::parallelFor(&pool, 64, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      alone += pool.joinedLastRegion() == 0;
      for (auto& h : hits) allOnce &= h.load() == 1;
      std::vector<std::atomic<int>> shares(2);
      pool.runPinned([&](int s) { shares[static_cast<size_t>(s)].fetch_add(1); });
      allOnce &= shares[0].load() == 1 && shares[1].load() == 1;
    }
  }
  stopHog.store(true);
  hog.join();
  sched_setaffinity(0, sizeof(callerWas), &callerWas);
  if (!starved) GTEST_SKIP() << "SKIPPED: could not set the worker's affinity and idle policy";
  EXPECT_TRUE(allOnce) << "an item or a share did not run exactly once";
  // The caller finished regions without the worker; under the old pool every region waited for it.
  EXPECT_GT(alone, 0) << "every region waited for the starved worker";
}
#endif

}  // namespace
