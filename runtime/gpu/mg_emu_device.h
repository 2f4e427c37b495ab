// CPU emulation of GPU kernels, layer 3: the device intrinsics that need the scheduler or real
// atomics: __syncthreads and friends, __syncwarp, the warp shuffles and votes, atomics, fences,
// dynamic shared memory.
//
// Shuffles follow CUDA's rules for the source lane (width segments; up/down out of the segment
// and xor into a later segment return the caller's own value) and exchange values through the
// block runner's per-warp slots, so every lane named in the mask sees the others' values from
// the same step. Atomics are real (GCC/Clang __atomic builtins, relaxed like CUDA's): blocks run
// in parallel on several OS threads. Only the overloads CUDA declares exist (no float
// atomicMax/atomicMin/atomicCAS), so code accepted here is also accepted by nvcc.
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "mg_emu_block.h"

namespace mg_emu {

// Dynamic shared memory of the block running on this OS thread (set by the grid runner).
inline thread_local unsigned char* tlsDynamicShared = nullptr;
inline unsigned char* dynamicSharedMemory() { return tlsDynamicShared; }

// The barrier and warp steps are entry points (MG_EMU_API, mg_gpu_emu.h): the block runner's
// machinery behind them compiles where they do.
#if MG_EMU_ENTRY_BODIES
MG_EMU_NO_TSAN MG_EMU_API uint64_t blockBarrier(int pred, const char* what) {
  Fiber* f = tlsFiber;
  if (!f || tlsPlainOnFibers) {
    if (!tlsPlainMisuse) tlsPlainMisuse = what;
    if (!f) return 0;
  }
  return f->runner->barrier(f, pred);
}
#else
uint64_t blockBarrier(int pred, const char* what);
#endif

MG_EMU_NO_TSAN inline unsigned laneId() {
  Fiber* f = tlsFiber;
  if (f) return f->lane;
  return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
}

#if MG_EMU_ENTRY_BODIES
MG_EMU_NO_TSAN MG_EMU_API uint64_t warpStep(WarpOp op, unsigned mask, uint64_t value, unsigned src,
                                            const char* what) {
  Fiber* f = tlsFiber;
  if (!f || tlsPlainOnFibers) {
    if (!tlsPlainMisuse) tlsPlainMisuse = what;
    if (!f) return op == WarpOp::kShuffle ? value : 0;
  }
  return f->runner->warpExchange(f, op, mask, value, src);
}
#else
uint64_t warpStep(WarpOp op, unsigned mask, uint64_t value, unsigned src, const char* what);
#endif

template <typename T>
inline uint64_t toBits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp shuffles move values of at most 8 bytes");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
inline T fromBits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

// CAS loop for read-modify-write operations the builtins lack (float add, min/max, inc/dec).
template <typename T, typename F>
inline T atomicUpdate(T* p, F f) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  for (;;) {
    T desired = f(old);
    if (__atomic_compare_exchange(p, &old, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return old;
  }
}

}  // namespace mg_emu

// ---- Block-wide barriers.
inline void __syncthreads() { mg_emu::blockBarrier(0, "__syncthreads"); }
inline int __syncthreads_count(int pred) {
  return int(uint32_t(mg_emu::blockBarrier(pred, "__syncthreads_count")));
}
inline int __syncthreads_and(int pred) {
  uint64_t r = mg_emu::blockBarrier(pred, "__syncthreads_and");
  return uint32_t(r) == uint32_t(r >> 32);
}
inline int __syncthreads_or(int pred) {
  return uint32_t(mg_emu::blockBarrier(pred, "__syncthreads_or")) != 0;
}

// ---- Warp-synchronous intrinsics.
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  mg_emu::warpStep(mg_emu::WarpOp::kSync, mask, 0, 0, "__syncwarp");
}
template <typename T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  unsigned lane = mg_emu::laneId(), w = unsigned(width);
  unsigned src = (lane & ~(w - 1)) + (unsigned(srcLane) & (w - 1));
  return mg_emu::fromBits<T>(mg_emu::warpStep(mg_emu::WarpOp::kShuffle, mask,
                                              mg_emu::toBits(var), src, "__shfl_sync"));
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  unsigned lane = mg_emu::laneId(), w = unsigned(width);
  unsigned src = (lane & (w - 1)) >= delta ? lane - delta : lane;
  return mg_emu::fromBits<T>(mg_emu::warpStep(mg_emu::WarpOp::kShuffle, mask,
                                              mg_emu::toBits(var), src, "__shfl_up_sync"));
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  unsigned lane = mg_emu::laneId(), w = unsigned(width);
  unsigned src = (lane & (w - 1)) + delta < w ? lane + delta : lane;
  return mg_emu::fromBits<T>(mg_emu::warpStep(mg_emu::WarpOp::kShuffle, mask,
                                              mg_emu::toBits(var), src, "__shfl_down_sync"));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  unsigned lane = mg_emu::laneId(), w = unsigned(width);
  unsigned src = lane ^ unsigned(laneMask);
  if (src >= (lane & ~(w - 1)) + w) src = lane;  // later segments are out of reach
  return mg_emu::fromBits<T>(mg_emu::warpStep(mg_emu::WarpOp::kShuffle, mask,
                                              mg_emu::toBits(var), src, "__shfl_xor_sync"));
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  return unsigned(mg_emu::warpStep(mg_emu::WarpOp::kBallot, mask, pred != 0, 0, "__ballot_sync"));
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, !pred) == 0; }
// All live lanes of the warp: lanes only diverge at barriers here, so this is an upper bound.
inline unsigned __activemask() {
  mg_emu::Fiber* f = mg_emu::tlsFiber;
  return f ? f->runner->liveLanes(f) : 0xffffffffu;
}

// ---- Fences. One OS thread runs a whole block, so a block-scope fence only stops the compiler.
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- Atomics (CUDA's overload set).
#define MG_EMU_ATOMIC_BUILTIN(name, builtin, T) \
  inline T name(T* p, T v) { return builtin(p, v, __ATOMIC_RELAXED); }
MG_EMU_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, int)
MG_EMU_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, unsigned)
MG_EMU_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, unsigned long long)
MG_EMU_ATOMIC_BUILTIN(atomicSub, __atomic_fetch_sub, int)
MG_EMU_ATOMIC_BUILTIN(atomicSub, __atomic_fetch_sub, unsigned)
MG_EMU_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, int)
MG_EMU_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, unsigned)
MG_EMU_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, unsigned long long)
MG_EMU_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, int)
MG_EMU_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, unsigned)
MG_EMU_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, unsigned long long)
MG_EMU_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, int)
MG_EMU_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, unsigned)
MG_EMU_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, unsigned long long)
MG_EMU_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, int)
MG_EMU_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, unsigned)
MG_EMU_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, unsigned long long)
#undef MG_EMU_ATOMIC_BUILTIN

inline float atomicAdd(float* p, float v) {
  return mg_emu::atomicUpdate(p, [v](float o) { return o + v; });
}
inline double atomicAdd(double* p, double v) {
  return mg_emu::atomicUpdate(p, [v](double o) { return o + v; });
}
inline float atomicExch(float* p, float v) {
  float old;
  __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
  return old;
}

#define MG_EMU_ATOMIC_MINMAX(T)                                                   \
  inline T atomicMin(T* p, T v) {                                                 \
    return mg_emu::atomicUpdate(p, [v](T o) { return v < o ? v : o; });           \
  }                                                                               \
  inline T atomicMax(T* p, T v) {                                                 \
    return mg_emu::atomicUpdate(p, [v](T o) { return o < v ? v : o; });           \
  }
MG_EMU_ATOMIC_MINMAX(int)
MG_EMU_ATOMIC_MINMAX(unsigned)
MG_EMU_ATOMIC_MINMAX(long long)
MG_EMU_ATOMIC_MINMAX(unsigned long long)
#undef MG_EMU_ATOMIC_MINMAX

#define MG_EMU_ATOMIC_CAS(T)                                                            \
  inline T atomicCAS(T* p, T compare, T val) {                                          \
    __atomic_compare_exchange_n(p, &compare, val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return compare;                                                                     \
  }
MG_EMU_ATOMIC_CAS(int)
MG_EMU_ATOMIC_CAS(unsigned)
MG_EMU_ATOMIC_CAS(unsigned long long)
MG_EMU_ATOMIC_CAS(unsigned short)
#undef MG_EMU_ATOMIC_CAS

inline unsigned atomicInc(unsigned* p, unsigned v) {
  return mg_emu::atomicUpdate(p, [v](unsigned o) { return o >= v ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned* p, unsigned v) {
  return mg_emu::atomicUpdate(p, [v](unsigned o) { return (o == 0 || o > v) ? v : o - 1; });
}
