// CPU emulation of GPU kernels, layer 1: fiber contexts, pooled fiber stacks and the
// emulator's settings.
//
// Every CUDA thread of a block runs as a fiber on one OS thread, so that __syncthreads can park
// a thread and run its siblings. The switch is our own x86-64 routine (it saves the six
// callee-saved registers and the stack pointer, nothing else, and makes no system call):
// docs/DESIGN.md measured ucontext at 4x slower than Boost.Context because swapcontext saves and
// restores the signal mask with a system call on every switch. Other architectures fall back to
// ucontext. The FPU control words (MXCSR, x87) are not switched: all fibers of a block share the
// OS thread's floating-point environment, as kernels cannot change it anyway.
//
// Stacks are pooled per OS thread and reused by every block that thread runs; each has a guard
// page below it so that an overflow faults instead of corrupting a neighbour. Stack tops are
// staggered by a few cache lines so that 256 fibers' hot frames do not all map to the same L1
// sets (stacks are page aligned).
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) && !defined(MG_EMU_USE_UCONTEXT)
#define MG_EMU_ASM_SWITCH 1
#else
#define MG_EMU_ASM_SWITCH 0
#include <ucontext.h>
#endif

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define MG_EMU_HAVE_MMAP 1
#else
#define MG_EMU_HAVE_MMAP 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define MG_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MG_EMU_ASAN 1
#endif
#endif
#ifndef MG_EMU_ASAN
#define MG_EMU_ASAN 0
#endif
#if MG_EMU_ASAN
extern "C" void __sanitizer_start_switch_fiber(void** fakeStackSave, const void* bottom,
                                               size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fakeStackSave, const void** bottomOld,
                                                size_t* sizeOld);
extern "C" void __asan_unpoison_memory_region(void const volatile* addr, size_t size);
#endif

// Race check (magnetoc check --emulate --racecheck): the package is built with clang's
// ThreadSanitizer, and every emulated GPU thread becomes a TSan fiber (race:: below), so that TSan
// tells the threads of a block apart although they share one OS thread. Fibers switch without
// synchronizing; the only happens-before edges between a block's threads are the ones a GPU
// gives: a __syncthreads generation (every arrival releases, every departure acquires), a
// warp-synchronous step (the warp's lanes, conservatively: a step orders all of them), atomics
// (TSan sees the __atomic builtins), and the start and end of the block. A plain write and another
// thread's read or write of the same address with no such edge between them is reported by TSan
// with both threads' names (block and thread index) and source lines. The emulator's own
// bookkeeping is not instrumented (MG_EMU_NO_TSAN): its counters are shared by the fibers of one
// OS thread on purpose.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MG_EMU_RACECHECK 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(MG_EMU_RACECHECK)
#error "the emulation's race check needs clang (its disable_sanitizer_instrumentation attribute)"
#endif
#ifndef MG_EMU_RACECHECK
#define MG_EMU_RACECHECK 0
#endif
#if MG_EMU_RACECHECK
#include <sanitizer/tsan_interface.h>
#define MG_EMU_NO_TSAN __attribute__((disable_sanitizer_instrumentation, noinline))  // (inlined, it would be)
#else
#define MG_EMU_NO_TSAN
#endif

namespace mg_emu {

namespace race {
#if MG_EMU_RACECHECK
inline constexpr bool kOn = true;
MG_EMU_NO_TSAN inline void* current() { return __tsan_get_current_fiber(); }
MG_EMU_NO_TSAN inline void* create() { return __tsan_create_fiber(0); }
MG_EMU_NO_TSAN inline void destroy(void* f) { __tsan_destroy_fiber(f); }
MG_EMU_NO_TSAN inline void enter(void* f) { __tsan_switch_to_fiber(f, __tsan_switch_to_fiber_no_sync); }
MG_EMU_NO_TSAN inline void name(void* f, const char* n) { __tsan_set_fiber_name(f, n); }
MG_EMU_NO_TSAN inline void release(void* sync) { __tsan_release(sync); }
MG_EMU_NO_TSAN inline void acquire(void* sync) { __tsan_acquire(sync); }
#else
inline constexpr bool kOn = false;
inline void* current() { return nullptr; }
inline void* create() { return nullptr; }
inline void destroy(void*) {}
inline void enter(void*) {}
inline void name(void*, const char*) {}
inline void release(void*) {}
inline void acquire(void*) {}
#endif
}  // namespace race

// The order in which a block's threads run between barriers (and a grid's blocks are handed
// out). A GPU promises no order, so a result that changes with it has a missing __syncthreads,
// a read of shared memory before its writer ran, or a race: MG_EMU_ORDER=reverse or
// random[:SEED] runs the same package so (magnetoc check --emulate-order).
enum class Order : uint8_t { kForward, kReverse, kRandom };

// Settings read once from the environment; tests and tools may change them before a launch.
struct Config {
  int threads = 0;             // MG_EMU_THREADS: OS threads running blocks (0: all cores)
  size_t stackBytes = 64 << 10;  // MG_EMU_STACK_KB: stack of each emulated GPU thread
  bool strictSync = false;     // MG_EMU_STRICT_SYNC=1: a thread that exits while others wait at
                               // __syncthreads is an error (divergent barrier), not ignored
  Order order = Order::kForward;  // MG_EMU_ORDER=forward|reverse|random[:SEED]
  uint64_t seed = 1;              // of random: each block shuffles with seed and its index
  std::string orderError;         // an MG_EMU_ORDER that does not parse; every launch fails with it
};

// Parses MG_EMU_ORDER's value into c (orderError says what is wrong).
inline void parseOrder(const char* s, Config& c) {
  std::string v(s);
  c.orderError.clear();
  c.seed = 1;
  if (v == "forward" || v.empty()) {
    c.order = Order::kForward;
  } else if (v == "reverse") {
    c.order = Order::kReverse;
  } else if (v.rfind("random", 0) == 0 && (v.size() == 6 || v[6] == ':')) {
    c.order = Order::kRandom;
    if (v.size() > 7) {
      char* end = nullptr;
      c.seed = std::strtoull(v.c_str() + 7, &end, 10);
      if (!end || *end != '\0') c.orderError = "MG_EMU_ORDER: bad seed in '" + v + "'";
    } else if (v.size() == 7) {
      c.orderError = "MG_EMU_ORDER: no seed after 'random:'";
    }
  } else {
    c.orderError = "MG_EMU_ORDER: unknown order '" + v + "' (forward, reverse or random[:SEED])";
  }
}

// Position k of `n` -> the index run k-th under the configured order, salted per block (random).
inline void orderPermutation(const Config& c, unsigned n, uint64_t salt, std::vector<unsigned>& perm) {
  perm.resize(n);
  for (unsigned i = 0; i < n; ++i) perm[i] = c.order == Order::kReverse ? n - 1 - i : i;
  if (c.order != Order::kRandom) return;
  uint64_t s = (c.seed + 1) * 0x9e3779b97f4a7c15ull ^ (salt + 1) * 0xbf58476d1ce4e5b9ull;
  for (unsigned i = n; i > 1; --i) {  // Fisher-Yates with xorshift64*
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    uint64_t r = s * 0x2545f4914f6cdd1dull;
    unsigned j = static_cast<unsigned>(r % i);
    std::swap(perm[i - 1], perm[j]);
  }
}

inline Config& config() {
  static Config c = [] {
    Config r;
    if (const char* s = std::getenv("MG_EMU_THREADS")) r.threads = std::atoi(s);
    if (const char* s = std::getenv("MG_EMU_STACK_KB")) {
      long kb = std::atol(s);
      if (kb >= 16) r.stackBytes = size_t(kb) << 10;
    }
    if (const char* s = std::getenv("MG_EMU_STRICT_SYNC")) r.strictSync = s[0] == '1';
    if (const char* s = std::getenv("MG_EMU_ORDER")) parseOrder(s, r);
    return r;
  }();
  return c;
}

#if MG_EMU_ASM_SWITCH
// mg_emu_ctx_switch(saveSp, loadSp): pushes the callee-saved registers, stores the stack pointer
// in *saveSp, loads loadSp and pops the registers saved there; `ret` then resumes that context.
// Emitted in a COMDAT group (as the compiler does for inline functions) so that every
// translation unit that includes this header can carry it and the linker keeps one copy.
extern "C" void mg_emu_ctx_switch(void** saveSp, void* loadSp);
asm(R"(
  .pushsection .text.mg_emu_ctx_switch,"axG",@progbits,mg_emu_ctx_switch,comdat
  .weak mg_emu_ctx_switch
  .hidden mg_emu_ctx_switch
  .type mg_emu_ctx_switch,@function
  .p2align 4
mg_emu_ctx_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size mg_emu_ctx_switch, .-mg_emu_ctx_switch
  .popsection
)");
#endif

// A suspended execution context: a fiber, or the OS thread's own stack while fibers run.
struct Context {
#if MG_EMU_ASM_SWITCH
  void* sp = nullptr;
#else
  ucontext_t uc;
#endif
#if MG_EMU_ASAN
  const void* stackBottom = nullptr;
  size_t stackSize = 0;
  void* fakeStack = nullptr;
#endif
};

// Prepares `c` so that switching to it calls entry() on the given stack. entry must never
// return: a finished fiber switches away for good.
inline void contextInit(Context& c, char* stackLo, size_t size, void (*entry)()) {
#if MG_EMU_ASAN
  c.stackBottom = stackLo;
  c.stackSize = size;
  // A reused stack still carries the redzones of frames that never returned (a finished
  // fiber's last frames, an abandoned block's): clear them.
  __asan_unpoison_memory_region(stackLo, size);
#endif
#if MG_EMU_ASM_SWITCH
  auto top = reinterpret_cast<uintptr_t>(stackLo + size) & ~uintptr_t(15);
  void** sp = reinterpret_cast<void**>(top);
  *--sp = nullptr;                             // entry's return address: it never returns
  *--sp = reinterpret_cast<void*>(entry);      // popped by `ret`; entry sees rsp % 16 == 8
  for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp rbx r12 r13 r14 r15
  c.sp = sp;
#else
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stackLo;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
#endif
}

// Suspends the running context into `from` and resumes `to`. `fromDies`: `from` will never be
// resumed (a finished fiber), which AddressSanitizer needs to know to drop its fake stack.
MG_EMU_NO_TSAN inline void contextSwitch(Context& from, Context& to, bool fromDies = false) {
#if MG_EMU_ASAN
  __sanitizer_start_switch_fiber(fromDies ? nullptr : &from.fakeStack, to.stackBottom,
                                 to.stackSize);
#else
  (void)fromDies;
#endif
#if MG_EMU_ASM_SWITCH
  mg_emu_ctx_switch(&from.sp, to.sp);
#else
  swapcontext(&from.uc, &to.uc);
#endif
#if MG_EMU_ASAN
  __sanitizer_finish_switch_fiber(from.fakeStack, nullptr, nullptr);
#endif
}

// First thing a new fiber does (AddressSanitizer bookkeeping of the switch that started it).
// Records the bounds of the stack it came from into `cameFrom` when given.
MG_EMU_NO_TSAN inline void contextStarted(Context* cameFrom) {
#if MG_EMU_ASAN
  const void* bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
  if (cameFrom) {
    cameFrom->stackBottom = bottom;
    cameFrom->stackSize = size;
  }
#else
  (void)cameFrom;
#endif
}

// Fiber stacks of one OS thread, kept for the thread's lifetime and handed out by index.
class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool() { release(); }

  struct Stack {
    char* lo = nullptr;  // lowest usable address (the guard page is below it)
    size_t bytes = 0;    // usable bytes above lo; the top is staggered by i cache lines
  };

  // Stack i of this pool (allocated on first use). lo is nullptr when memory is exhausted.
  Stack stack(size_t i) {
    if (bytes_ != wantedBytes()) release();
    while (stacks_.size() <= i) {
      char* s = allocate();
      if (!s) return {};
      stacks_.push_back(s);
    }
    size_t stagger = (i % (kStagger / kLine)) * kLine;
    return {stacks_[i], bytes_ - stagger};
  }

 private:
  static constexpr size_t kLine = 64;
  static constexpr size_t kStagger = 4096;  // up to 64 cache lines of offset between tops

  static size_t pageBytes() {
#if MG_EMU_HAVE_MMAP
    static const size_t p = size_t(sysconf(_SC_PAGESIZE));
    return p;
#else
    return 4096;
#endif
  }
  static size_t wantedBytes() {
    size_t p = pageBytes();
    return (config().stackBytes + kStagger + p - 1) / p * p;
  }

  char* allocate() {
    bytes_ = wantedBytes();
#if MG_EMU_HAVE_MMAP
    size_t guard = pageBytes();
    void* m = mmap(nullptr, bytes_ + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED) return nullptr;
    mprotect(m, guard, PROT_NONE);  // overflow faults here
    return static_cast<char*>(m) + guard;
#else
    return static_cast<char*>(::operator new(bytes_, std::nothrow));
#endif
  }

  void release() {
    for (char* s : stacks_) {
#if MG_EMU_HAVE_MMAP
      munmap(s - pageBytes(), bytes_ + pageBytes());
#else
      ::operator delete(s);
#endif
    }
    stacks_.clear();
  }

  std::vector<char*> stacks_;
  size_t bytes_ = 0;  // each stack, without the guard page
};

}  // namespace mg_emu
