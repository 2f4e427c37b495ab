// CPU emulation of GPU kernels, layer 2: one thread block, its threads run as fibers.
//
// A BlockRunner belongs to one OS thread and runs the blocks handed to that thread, one at a
// time, each to completion. Each CUDA thread of the block is a fiber on a pooled stack. The
// live fibers form a ring; whoever parks switches straight to its successor (no trip through a
// scheduler context), so a __syncthreads costs one switch per thread:
//
//   t0 arrives, parks -> t1 arrives, parks -> ... -> t(n-1) arrives last: releases the
//   barrier and runs on -> next barrier: parks -> t0 resumes (released) -> ...
//
// Barriers. __syncthreads completes when every live (not exited) thread of the block has
// arrived; threads that returned early are not waited for (MG_EMU_STRICT_SYNC=1 reports them
// instead). Warp-synchronous intrinsics (__shfl*_sync, __ballot_sync, __syncwarp) complete when
// every live lane named in the mask has arrived with the same mask; lanes then exchange values in
// lockstep through per-warp slots. The last lane to arrive computes every member's result, so a
// lane's result slot is only rewritten when that lane itself arrives again.
//
// Deadlock detection. A parked fiber that is resumed but still not released counts a stall; any
// arrival or exit resets the count. When live-many stalls follow one another every live fiber
// has been looked at since the last progress and none can move: the barrier can never complete
// (e.g. __syncthreads in code divergent within a warp while other lanes wait in a shuffle). The
// runner then abandons the block's fibers (their stacks are reused) and reports which threads
// wait where; it never hangs.
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mg_emu_context.h"
#include "mg_emu_types.h"

namespace mg_emu {

// What every thread of a launch runs: the kernel applied to a copy of the launch's arguments.
struct KernelCall {
  void (*invoke)(const void* data) = nullptr;
  const void* data = nullptr;
};

enum class Wait : uint8_t { kRunning, kBlockBarrier, kWarp, kDone };
enum class WarpOp : uint8_t { kSync, kShuffle, kBallot };

class BlockRunner;

struct Fiber {
  Context ctx;
  Fiber* next = nullptr;  // ring of live fibers
  Fiber* prev = nullptr;
  BlockRunner* runner = nullptr;
  uint3 tid{0, 0, 0};
  unsigned lane = 0, warp = 0;
  Wait wait = Wait::kRunning;
  bool warpReleased = false;
  unsigned barrierGen = 0;  // the block barrier generation it waits for to end
  void* race = nullptr;     // its ThreadSanitizer fiber (race check builds only)
};

// The exchange area of one warp.
struct WarpSlots {
  uint32_t live = 0;     // lanes that exist and have not exited
  uint32_t waiting = 0;  // lanes parked in a warp-synchronous intrinsic
  uint32_t mask[32];
  WarpOp op[32];
  uint8_t src[32];  // lane whose value a shuffle reads (its own lane when out of range)
  uint64_t value[32];
  uint64_t result[32];
};

// The fiber running on this OS thread; nullptr outside fiber execution (host code, or a block
// run as a plain loop by mgLaunchNoSync).
inline thread_local Fiber* tlsFiber = nullptr;
// Set when a plain-loop block calls an intrinsic that needs fibers; reported by the launch.
inline thread_local const char* tlsPlainMisuse = nullptr;
// Set while a barrier-free launch runs on fibers (the race check): its intrinsics are recorded in
// tlsPlainMisuse as in a plain loop, and run.
inline thread_local bool tlsPlainOnFibers = false;

class BlockRunner {
 public:
  // Runs every thread of one block (blockIdx, blockDim, gridDim already set) to completion.
  // Returns false with a message in *error when the block cannot finish.
  // salt: the block's linear index (it seeds a random thread order).
  MG_EMU_NO_TSAN bool run(const KernelCall& call, dim3 block, std::string* error, uint64_t salt = 0) {
    const unsigned n = block.x * block.y * block.z;
    if (fibers_.size() < n) fibers_.resize(n);
    call_ = &call;
    size_ = n;
    live_ = n;
    arrived_ = 0;
    stalls_ = 0;
    gen_ = 0;
    predCount_ = 0;
    failed_ = false;
    mainBoundsPending_ = true;
    const unsigned warps = (n + 31) / 32;
    for (unsigned w = 0; w < warps; ++w) {
      unsigned lanes = n - w * 32 >= 32 ? 32 : n - w * 32;
      warps_[w].live = lanes == 32 ? ~0u : (1u << lanes) - 1;
      warps_[w].waiting = 0;
    }
    for (unsigned i = 0; i < n; ++i) {
      Fiber& f = fibers_[i];
      StackPool::Stack s = stacks_.stack(i);
      if (!s.lo) {
        *error = "out of memory for " + std::to_string(n) + " fiber stacks";
        return false;
      }
      contextInit(f.ctx, s.lo, s.bytes, &fiberMain);
      f.runner = this;
      f.tid = uint3{i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
      f.lane = i & 31;
      f.warp = i >> 5;
      f.wait = Wait::kRunning;
      f.warpReleased = false;
      if (race::kOn) {
        if (!f.race) f.race = race::create();
        char label[96];
        snprintf(label, sizeof label, "block (%u,%u,%u) thread (%u,%u,%u)", blockIdx.x, blockIdx.y,
                 blockIdx.z, f.tid.x, f.tid.y, f.tid.z);
        race::name(f.race, label);
      }
    }
    // The ring in the configured order (Config::order): who runs first, and who runs next when a
    // thread parks at a barrier.
    orderPermutation(config(), n, salt, order_);
    for (unsigned k = 0; k < n; ++k) {
      Fiber& f = fibers_[order_[k]];
      f.next = &fibers_[order_[k + 1 == n ? 0 : k + 1]];
      f.prev = &fibers_[order_[k == 0 ? n - 1 : k - 1]];
    }
    Fiber* first = &fibers_[order_[0]];
    tlsFiber = first;
    threadIdx = first->tid;
    raceMain_ = race::current();
    race::release(&startSync_);  // what the launch set up happens before every thread
    race::enter(first->race);
    contextSwitch(main_, first->ctx);
    race::acquire(&endSync_);  // and every thread happens before what follows the block
    tlsFiber = nullptr;
    if (!failed_) return true;
    // Threads abandoned mid-kernel (a deadlock, a divergent barrier): they happen before what
    // follows too (the error message, the launch's clean-up), and their TSan fibers still hold
    // the abandoned frames, so they are replaced.
    for (unsigned i = 0; race::kOn && i < n; ++i)
      if (fibers_[i].race && fibers_[i].wait != Wait::kDone) {
        race::enter(fibers_[i].race);
        race::release(&endSync_);
        race::enter(raceMain_);
        race::acquire(&endSync_);
        race::destroy(fibers_[i].race);
        fibers_[i].race = nullptr;
      }
    *error = message_;
    return false;
  }

  // __syncthreads and its _count/_and/_or forms. Returns the number of threads that took part
  // in this barrier (high 32 bits) and how many of them passed pred != 0 (low 32 bits).
  MG_EMU_NO_TSAN uint64_t barrier(Fiber* me, int pred) {
    // Under MG_EMU_STRICT_SYNC a thread that exited before this barrier is divergence too, in
    // whatever order the threads run (exitFiber catches the other order: exits after arrivals).
    if (live_ < size_ && config().strictSync) {
      fail("thread " + str(me->tid) + " reached __syncthreads after " + std::to_string(size_ - live_) +
           " thread(s) exited (divergent barrier; MG_EMU_STRICT_SYNC is on)");
      leave(me);
    }
    predCount_ += pred != 0;
    const unsigned g = gen_;
    stalls_ = 0;
    // Race check: one sync object per generation parity (nobody arrives at g + 2 before every
    // thread has left g), so that leaving g orders after the arrivals at g and nothing later.
    race::release(&barrierSync_[g & 1]);
    if (++arrived_ == live_) {
      release();
    } else {
      me->wait = Wait::kBlockBarrier;
      me->barrierGen = g;
      park(me);
    }
    race::acquire(&barrierSync_[g & 1]);
    return barrierResult_[g & 1];
  }

  // One warp-synchronous step: publishes `value`, waits for the lanes named in `mask`, returns
  // this lane's result (the value of lane srcLane for a shuffle, the ballot for a ballot).
  MG_EMU_NO_TSAN uint64_t warpExchange(Fiber* me, WarpOp op, unsigned mask, uint64_t value, unsigned srcLane) {
    WarpSlots& w = warps_[me->warp];
    const unsigned lane = me->lane;
    const uint32_t m = mask | (1u << lane);
    w.mask[lane] = m;
    w.op[lane] = op;
    w.src[lane] = uint8_t(srcLane);
    w.value[lane] = value;
    w.waiting |= 1u << lane;
    me->warpReleased = false;
    stalls_ = 0;
    race::release(&warpSync_[me->warp]);
    if (!tryComplete(me->warp, m)) {
      me->wait = Wait::kWarp;
      park(me);
    }
    race::acquire(&warpSync_[me->warp]);
    return w.result[lane];
  }

  // Ends the block from inside one of its threads with an error (a co-resident grid's flag wait
  // that can never end, mg_emu_grid.h): the block's fibers are abandoned as on a deadlock.
  [[noreturn]] MG_EMU_NO_TSAN void abandon(Fiber* me, std::string message) {
    fail(std::move(message));
    leave(me);
  }

  // Lanes of the caller's warp that exist and have not exited.
  MG_EMU_NO_TSAN uint32_t liveLanes(const Fiber* me) const { return warps_[me->warp].live; }

 private:
  MG_EMU_NO_TSAN static void fiberMain() {
    Fiber* me = tlsFiber;
    BlockRunner* r = me->runner;
    race::acquire(&r->startSync_);
    contextStarted(r->mainBoundsPending_ ? &r->main_ : nullptr);
    r->mainBoundsPending_ = false;
    r->call_->invoke(r->call_->data);
    r->exitFiber(me);
  }

  MG_EMU_NO_TSAN void switchTo(Fiber* me, Fiber* to, bool meDies = false) {
    tlsFiber = to;
    threadIdx = to->tid;
    race::enter(to->race);
    contextSwitch(me->ctx, to->ctx, meDies);
  }

  // Back to the OS thread's own stack for good (block finished or failed).
  [[noreturn]] MG_EMU_NO_TSAN void leave(Fiber* me) {
    tlsFiber = nullptr;
    race::release(&endSync_);
    race::enter(raceMain_);
    contextSwitch(me->ctx, main_, true);
    __builtin_unreachable();
  }

  // Ends the current barrier generation. The result slot is double-buffered by generation
  // parity: nobody can finish generation g+1 (and rewrite the slot of g-1) before every thread
  // released from g has run again, read its result and arrived at g+1.
  MG_EMU_NO_TSAN void release() {
    barrierResult_[gen_ & 1] = (uint64_t(arrived_) << 32) | predCount_;
    predCount_ = 0;
    arrived_ = 0;
    ++gen_;
  }

  // Runs the other fibers until `me` is released; bails out of the block on deadlock.
  MG_EMU_NO_TSAN void park(Fiber* me) {
    for (;;) {
      switchTo(me, me->next);
      bool released =
          me->wait == Wait::kBlockBarrier ? me->barrierGen != gen_ : me->warpReleased;
      if (released) {
        me->wait = Wait::kRunning;
        return;
      }
      if (++stalls_ >= live_) {
        fail(deadlockMessage());
        leave(me);
      }
    }
  }

  [[noreturn]] MG_EMU_NO_TSAN void exitFiber(Fiber* me) {
    race::release(&endSync_);
    me->wait = Wait::kDone;
    --live_;
    stalls_ = 0;
    me->prev->next = me->next;
    me->next->prev = me->prev;
    WarpSlots& w = warps_[me->warp];
    w.live &= ~(1u << me->lane);
    if (live_ == 0) leave(me);
    if (arrived_ > 0 && config().strictSync) {
      fail("thread " + str(me->tid) + " exited while " + std::to_string(arrived_) +
           " thread(s) wait at __syncthreads (divergent barrier; MG_EMU_STRICT_SYNC is on)");
      leave(me);
    }
    if (arrived_ > 0 && arrived_ == live_) release();
    // This lane may have been the last one a warp intrinsic waited for.
    for (uint32_t r = w.waiting; r;) {
      uint32_t m = w.mask[__builtin_ctz(r)];
      tryComplete(me->warp, m);
      r &= ~m & w.waiting;
    }
    switchTo(me, me->next, true);
    __builtin_unreachable();
  }

  // Completes the warp step of the lanes waiting with mask m if all of them have arrived.
  MG_EMU_NO_TSAN bool tryComplete(unsigned warp, uint32_t m) {
    WarpSlots& w = warps_[warp];
    const uint32_t members = m & w.live;
    if ((w.waiting & members) != members) return false;
    uint32_t ballot = 0;
    for (uint32_t r = members; r; r &= r - 1) {
      unsigned j = __builtin_ctz(r);
      if (w.mask[j] != m) return false;
      if (w.op[j] == WarpOp::kBallot && w.value[j] != 0) ballot |= 1u << j;
    }
    for (uint32_t r = members; r; r &= r - 1) {
      unsigned j = __builtin_ctz(r);
      w.result[j] = w.op[j] == WarpOp::kShuffle ? w.value[w.src[j]]
                    : w.op[j] == WarpOp::kBallot ? ballot
                                                 : 0;
      fibers_[warp * 32 + j].warpReleased = true;
    }
    w.waiting &= ~members;
    return true;
  }

  MG_EMU_NO_TSAN void fail(std::string message) {
    if (failed_) return;
    failed_ = true;
    message_ = std::move(message);
  }

  static std::string str(uint3 t) {
    return "(" + std::to_string(t.x) + "," + std::to_string(t.y) + "," + std::to_string(t.z) +
           ")";
  }

  MG_EMU_NO_TSAN std::string deadlockMessage() const {
    unsigned atBarrier = 0, atWarp = 0;
    const Fiber* firstBarrier = nullptr;
    const Fiber* firstWarp = nullptr;
    for (unsigned i = 0; i < size_; ++i) {
      const Fiber& f = fibers_[i];
      if (f.wait == Wait::kBlockBarrier) {
        if (!atBarrier++) firstBarrier = &f;
      } else if (f.wait == Wait::kWarp) {
        if (!atWarp++) firstWarp = &f;
      }
    }
    std::string s = "deadlock: a barrier can never complete (barrier in divergent code?): ";
    s += std::to_string(atBarrier) + " thread(s) wait at __syncthreads";
    if (firstBarrier) s += " (first " + str(firstBarrier->tid) + ")";
    s += ", " + std::to_string(atWarp) + " in a warp-synchronous intrinsic";
    if (firstWarp) {
      char mask[16];
      snprintf(mask, sizeof mask, "0x%08x", warps_[firstWarp->warp].mask[firstWarp->lane]);
      s += std::string(" (first ") + str(firstWarp->tid) + ", mask " + mask + ")";
    }
    s += ", " + std::to_string(size_ - live_) + " exited";
    return s;
  }

  std::vector<Fiber> fibers_;
  std::vector<unsigned> order_;
  WarpSlots warps_[32];
  StackPool stacks_;
  Context main_;
  const KernelCall* call_ = nullptr;
  unsigned size_ = 0, live_ = 0, arrived_ = 0, stalls_ = 0, gen_ = 0;
  uint32_t predCount_ = 0;
  uint64_t barrierResult_[2] = {0, 0};
  bool failed_ = false;
  bool mainBoundsPending_ = false;
  std::string message_;
  // Race check: the ThreadSanitizer fiber of the OS thread's own stack, and the sync objects
  // (only their addresses matter) of the block's start and end, each barrier generation parity
  // and each warp.
  void* raceMain_ = nullptr;
  char startSync_ = 0, endSync_ = 0, barrierSync_[2] = {0, 0}, warpSync_[32] = {};
};

// The error of a barrier-free launch whose kernel called a barrier or warp intrinsic.
inline std::string plainMisuseMessage() {
  return std::string(tlsPlainMisuse) +
         " called in a kernel launched with mgLaunchNoSync (threads run as a plain loop)";
}

// Runs a block as a plain loop over its threads (mgLaunchNoSync: the code generator promised
// no barrier and no warp intrinsic). Returns false when the kernel broke that promise.
inline bool runBlockPlain(const KernelCall& call, dim3 block, std::string* error, uint64_t salt = 0) {
  tlsPlainMisuse = nullptr;
  const unsigned n = block.x * block.y * block.z;
  if (config().order == Order::kForward) {
    for (unsigned z = 0; z < block.z; ++z)
      for (unsigned y = 0; y < block.y; ++y)
        for (unsigned x = 0; x < block.x; ++x) {
          threadIdx = uint3{x, y, z};
          call.invoke(call.data);
        }
  } else {  // the configured order (Config::order)
    static thread_local std::vector<unsigned> order;
    orderPermutation(config(), n, salt, order);
    for (unsigned i : order) {
      threadIdx = uint3{i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
      call.invoke(call.data);
    }
  }
  if (!tlsPlainMisuse) return true;
  *error = plainMisuseMessage();
  return false;
}

}  // namespace mg_emu
