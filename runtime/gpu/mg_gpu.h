// Magneto's GPU portability layer: the one header that generated kernel sources and the host
// code of generated GPU packages include.
//
// It picks a backend and gives the same names on all three:
//   - nvcc (__CUDACC__), or a host compiler with MG_GPU_CUDA defined: CUDA runtime;
//   - hipcc (__HIPCC__/__HIP__/__HIP_PLATFORM_AMD__), or MG_GPU_HIP: HIP runtime;
//   - anything else, or MG_GPU_EMULATE defined: the CPU emulation in mg_gpu_emu.h, which runs
//     the same kernels on the host (docs/GPU_EMULATION.md).
// MG_GPU_CUDA/MG_GPU_HIP serve host-only translation units of a GPU package compiled by the
// host compiler: they see the runtime API, and mgLaunch goes through cudaLaunchKernel /
// hipLaunchKernel instead of the <<<>>> syntax those compilers do not parse.
//
// Host API (generated code calls only these): mgError_t, mgSuccess, mgStream_t, mgEvent_t,
// mgGraph_t, mgGraphExec_t; mgMalloc, mgFree, mgMemcpyHtoD/DtoH/DtoD (async on a stream),
// mgMemsetAsync, mgStreamCreate/Destroy/Synchronize, mgEventCreate/Record/Synchronize/
// ElapsedTime/Destroy, mgStreamWaitEvent, mgDeviceSynchronize, mgGetLastError, mgGetErrorString,
// mgStreamBeginCapture/EndCapture, mgGraphInstantiate/Launch/ExecDestroy, mgGraphDestroy,
// mgFuncSetMaxDynamicSharedMemory, and the launches
//   mgLaunch(kernel, grid, block, dynamicSharedBytes, stream, args...)
//   mgLaunchNoSync(...)  same, plus the code generator's promise that the kernel uses no
//                        __syncthreads and no warp intrinsic: the emulation then runs a block's
//                        threads as a plain loop, without fibers (a broken promise is an error).
//   mgLaunchCoResident(...)  every block resident at once (CUDA/HIP cooperative launch), or
//                        mgErrorCooperativeLaunchTooLarge: blocks may wait on each other.
// Device names: MG_WARP_SIZE, MG_DEVICE, MG_HOST_DEVICE, MG_DYNAMIC_SHARED(type, name),
// mgShfl/mgShflDown/mgShflXor (full-warp shuffles), mgSyncWarp, mg_half with mgHalfToFloat and
// mgFloatToHalf, mgFlagPublish/mgFlagWait/mgLoadCoherent (progress flags between the blocks of
// a co-resident launch), and (CUDA and the emulation: MG_HAS_WMMA) the tensor-core fragments as
// namespace mg_wmma (nvcuda::wmma's fragment, fill_fragment, load/store_matrix_sync, mma_sync;
// emulated in mg_emu_wmma.h). On HIP, CUDA's *_sync warp intrinsics are provided with 32-lane semantics so
// that kernels written in CUDA syntax compile unchanged.
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(MG_GPU_EMULATE)
#define MG_GPU_BACKEND_EMU 1
#elif defined(MG_GPU_HIP) || defined(__HIPCC__) || defined(__HIP__) || \
    defined(__HIP_PLATFORM_AMD__)
#define MG_GPU_BACKEND_HIP 1
#elif defined(MG_GPU_CUDA) || defined(__CUDACC__)
#define MG_GPU_BACKEND_CUDA 1
#else
#define MG_GPU_BACKEND_EMU 1
#endif

// ================================================================ CUDA and HIP
#if defined(MG_GPU_BACKEND_CUDA) || defined(MG_GPU_BACKEND_HIP)

#if defined(MG_GPU_BACKEND_CUDA)
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define MG_RT(name) cuda##name
#define MG_WARP_SIZE 32
#else
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#define MG_RT(name) hip##name
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define MG_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define MG_WARP_SIZE 64  // CDNA (gfx9): the targets Magneto's HIP packages are built for
#endif
#endif

using mgError_t = MG_RT(Error_t);
using mgStream_t = MG_RT(Stream_t);
using mgEvent_t = MG_RT(Event_t);
using mgGraph_t = MG_RT(Graph_t);
using mgGraphExec_t = MG_RT(GraphExec_t);
constexpr mgError_t mgSuccess = MG_RT(Success);
constexpr mgError_t mgErrorInvalidValue = MG_RT(ErrorInvalidValue);
constexpr mgError_t mgErrorInvalidConfiguration = MG_RT(ErrorInvalidConfiguration);
constexpr mgError_t mgErrorLaunchFailure = MG_RT(ErrorLaunchFailure);
#if defined(MG_GPU_BACKEND_CUDA)
constexpr mgError_t mgErrorMemoryAllocation = cudaErrorMemoryAllocation;
constexpr mgError_t mgErrorCooperativeLaunchTooLarge = cudaErrorCooperativeLaunchTooLarge;
#else
constexpr mgError_t mgErrorMemoryAllocation = hipErrorOutOfMemory;
constexpr mgError_t mgErrorCooperativeLaunchTooLarge = hipErrorCooperativeLaunchTooLarge;
#endif

inline mgError_t mgMalloc(void** p, size_t bytes) { return MG_RT(Malloc)(p, bytes); }
inline mgError_t mgFree(void* p) { return MG_RT(Free)(p); }
inline mgError_t mgMemcpyHtoD(void* dst, const void* src, size_t bytes, mgStream_t s) {
  return MG_RT(MemcpyAsync)(dst, src, bytes, MG_RT(MemcpyHostToDevice), s);
}
inline mgError_t mgMemcpyDtoH(void* dst, const void* src, size_t bytes, mgStream_t s) {
  return MG_RT(MemcpyAsync)(dst, src, bytes, MG_RT(MemcpyDeviceToHost), s);
}
inline mgError_t mgMemcpyDtoD(void* dst, const void* src, size_t bytes, mgStream_t s) {
  return MG_RT(MemcpyAsync)(dst, src, bytes, MG_RT(MemcpyDeviceToDevice), s);
}
inline mgError_t mgMemsetAsync(void* p, int value, size_t bytes, mgStream_t s) {
  return MG_RT(MemsetAsync)(p, value, bytes, s);
}
inline mgError_t mgStreamCreate(mgStream_t* s) {
  return MG_RT(StreamCreateWithFlags)(s, MG_RT(StreamNonBlocking));
}
inline mgError_t mgStreamDestroy(mgStream_t s) { return MG_RT(StreamDestroy)(s); }
inline mgError_t mgStreamSynchronize(mgStream_t s) { return MG_RT(StreamSynchronize)(s); }
inline mgError_t mgEventCreate(mgEvent_t* e) { return MG_RT(EventCreate)(e); }
inline mgError_t mgEventRecord(mgEvent_t e, mgStream_t s) { return MG_RT(EventRecord)(e, s); }
inline mgError_t mgEventSynchronize(mgEvent_t e) { return MG_RT(EventSynchronize)(e); }
inline mgError_t mgEventElapsedTime(float* ms, mgEvent_t start, mgEvent_t end) {
  return MG_RT(EventElapsedTime)(ms, start, end);
}
inline mgError_t mgEventDestroy(mgEvent_t e) { return MG_RT(EventDestroy)(e); }
inline mgError_t mgStreamWaitEvent(mgStream_t s, mgEvent_t e) {
  return MG_RT(StreamWaitEvent)(s, e, 0);
}
inline mgError_t mgDeviceSynchronize() { return MG_RT(DeviceSynchronize)(); }
inline mgError_t mgGetLastError() { return MG_RT(GetLastError)(); }
inline const char* mgGetErrorString(mgError_t e) { return MG_RT(GetErrorString)(e); }
inline mgError_t mgStreamBeginCapture(mgStream_t s) {
  return MG_RT(StreamBeginCapture)(s, MG_RT(StreamCaptureModeThreadLocal));
}
inline mgError_t mgStreamEndCapture(mgStream_t s, mgGraph_t* g) {
  return MG_RT(StreamEndCapture)(s, g);
}
inline mgError_t mgGraphInstantiate(mgGraphExec_t* exec, mgGraph_t g) {
#if defined(MG_GPU_BACKEND_CUDA) && CUDART_VERSION >= 12000
  return cudaGraphInstantiate(exec, g, 0ULL);
#else
  return MG_RT(GraphInstantiate)(exec, g, nullptr, nullptr, 0);
#endif
}
inline mgError_t mgGraphLaunch(mgGraphExec_t exec, mgStream_t s) {
  return MG_RT(GraphLaunch)(exec, s);
}
inline mgError_t mgGraphExecDestroy(mgGraphExec_t exec) { return MG_RT(GraphExecDestroy)(exec); }
inline mgError_t mgGraphDestroy(mgGraph_t g) { return MG_RT(GraphDestroy)(g); }

template <typename... P>
inline mgError_t mgFuncSetMaxDynamicSharedMemory(void (*kernel)(P...), size_t bytes) {
  return MG_RT(FuncSetAttribute)(reinterpret_cast<const void*>(kernel),
                                 MG_RT(FuncAttributeMaxDynamicSharedMemorySize), int(bytes));
}

template <typename... P, typename... A>
inline mgError_t mgLaunch(void (*kernel)(P...), dim3 grid, dim3 block, size_t dynamicSharedBytes,
                          mgStream_t stream, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "mgLaunch: the number of arguments differs from the kernel's parameters");
#if defined(__CUDACC__) || defined(__HIP__)
  kernel<<<grid, block, dynamicSharedBytes, stream>>>(std::forward<A>(args)...);
  return MG_RT(GetLastError)();
#else
  std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
  return std::apply(
      [&](auto&... p) {
        void* argv[] = {static_cast<void*>(&p)..., nullptr};
        return MG_RT(LaunchKernel)(reinterpret_cast<const void*>(kernel), grid, block, argv,
                                   dynamicSharedBytes, stream);
      },
      params);
#endif
}
template <typename... P, typename... A>
inline mgError_t mgLaunchNoSync(void (*kernel)(P...), dim3 grid, dim3 block,
                                size_t dynamicSharedBytes, mgStream_t stream, A&&... args) {
  return mgLaunch(kernel, grid, block, dynamicSharedBytes, stream, std::forward<A>(args)...);
}
// Every block resident at once (a cooperative launch), or an error when the grid does not fit:
// blocks may wait on each other's progress flags (mgFlagWait).
template <typename... P, typename... A>
inline mgError_t mgLaunchCoResident(void (*kernel)(P...), dim3 grid, dim3 block,
                                    size_t dynamicSharedBytes, mgStream_t stream, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "mgLaunchCoResident: the number of arguments differs from the kernel's parameters");
  std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
  return std::apply(
      [&](auto&... p) {
        void* argv[] = {static_cast<void*>(&p)..., nullptr};
        return MG_RT(LaunchCooperativeKernel)(reinterpret_cast<const void*>(kernel), grid, block,
                                              argv, (unsigned)dynamicSharedBytes, stream);
      },
      params);
}

#define MG_DEVICE __device__ __forceinline__
#define MG_HOST_DEVICE __host__ __device__ __forceinline__
#if defined(MG_GPU_BACKEND_CUDA)
#define MG_DYNAMIC_SHARED(type, name)                                 \
  extern __shared__ __align__(16) unsigned char mg_dynamic_shared_[]; \
  type* name = reinterpret_cast<type*>(mg_dynamic_shared_)
#else
#define MG_DYNAMIC_SHARED(type, name)                                                \
  extern __shared__ __attribute__((aligned(16))) unsigned char mg_dynamic_shared_[]; \
  type* name = reinterpret_cast<type*>(mg_dynamic_shared_)
#endif

using mg_half = __half;
MG_HOST_DEVICE float mgHalfToFloat(mg_half h) { return __half2float(h); }
MG_HOST_DEVICE mg_half mgFloatToHalf(float f) { return __float2half(f); }

// Tensor-core fragments (the fp16 GEMM programs): CUDA's nvcuda::wmma as mg_wmma, where nvcc
// compiles device code. HIP has no wmma here (its matrix cores are not used yet): no
// MG_HAS_WMMA, and the fp16 programs are left out.
#if defined(MG_GPU_BACKEND_CUDA) && defined(__CUDACC__)
#include <mma.h>
namespace mg_wmma = nvcuda::wmma;
#define MG_HAS_WMMA 1
#endif

// Warp intrinsics exist only where a device compiler is at work.
#if defined(__CUDACC__) || defined(__HIP__)
// Progress flags between the blocks of a co-resident launch (mgLaunchCoResident). The publisher's
// writes are made visible device-wide before the flag (the fence), the waiter's reads come after
// it; data another block wrote is read with mgLoadCoherent (volatile: past the incoherent L1).
MG_DEVICE void mgFlagPublish(unsigned* flag, unsigned value) {
  __threadfence();
  atomicExch(flag, value);
}
MG_DEVICE void mgFlagWait(const unsigned* flag, unsigned value) {
  while (*reinterpret_cast<const volatile unsigned*>(flag) < value) {
  }
  __threadfence();
}
MG_DEVICE float mgLoadCoherent(const float* p) { return *reinterpret_cast<const volatile float*>(p); }
#if defined(MG_GPU_BACKEND_CUDA)
template <typename T>
MG_DEVICE T mgShfl(T v, int srcLane) { return __shfl_sync(0xffffffffu, v, srcLane); }
template <typename T>
MG_DEVICE T mgShflDown(T v, unsigned delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
template <typename T>
MG_DEVICE T mgShflXor(T v, int laneMask) { return __shfl_xor_sync(0xffffffffu, v, laneMask); }
MG_DEVICE void mgSyncWarp() { __syncwarp(); }
#else
template <typename T>
MG_DEVICE T mgShfl(T v, int srcLane) { return __shfl(v, srcLane); }
template <typename T>
MG_DEVICE T mgShflDown(T v, unsigned delta) { return __shfl_down(v, delta); }
template <typename T>
MG_DEVICE T mgShflXor(T v, int laneMask) { return __shfl_xor(v, laneMask); }
// A wavefront runs in lockstep on AMD; this keeps the compiler from moving memory accesses.
MG_DEVICE void mgSyncWarp() { __builtin_amdgcn_wave_barrier(); }
#if !defined(HIP_ENABLE_WARP_SYNC_BUILTINS)
// CUDA's *_sync warp intrinsics for kernels written in CUDA syntax, which HIP (before 6.2, or
// without HIP_ENABLE_WARP_SYNC_BUILTINS) lacks. They keep CUDA's 32-lane semantics on a 64-lane
// wavefront: width defaults to 32, so each half of the wavefront acts as one CUDA warp, and the
// ballot is that half's. The mask is not checked (a wavefront runs in lockstep).
template <typename T>
MG_DEVICE T __shfl_sync(unsigned, T v, int srcLane, int width = 32) {
  return __shfl(v, srcLane, width);
}
template <typename T>
MG_DEVICE T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  return __shfl_up(v, delta, width);
}
template <typename T>
MG_DEVICE T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  return __shfl_down(v, delta, width);
}
template <typename T>
MG_DEVICE T __shfl_xor_sync(unsigned, T v, int laneMask, int width = 32) {
  return __shfl_xor(v, laneMask, width);
}
MG_DEVICE unsigned __ballot_sync(unsigned, int pred) {
  return unsigned(__ballot(pred) >> (__lane_id() & 32));
}
MG_DEVICE void __syncwarp(unsigned = 0xffffffffu) { __builtin_amdgcn_wave_barrier(); }
#endif
#endif
#endif

// ================================================================ CPU emulation
#else

#include "mg_gpu_emu.h"

#define MG_WARP_SIZE 32

using mgError_t = mg_emu::Error;
using mgStream_t = mg_emu::StreamState*;
using mgEvent_t = mg_emu::EventState*;
using mgGraph_t = mg_emu::GraphState*;
using mgGraphExec_t = mg_emu::GraphExecState*;
constexpr mgError_t mgSuccess = mg_emu::kSuccess;
constexpr mgError_t mgErrorInvalidValue = mg_emu::kErrorInvalidValue;
constexpr mgError_t mgErrorInvalidConfiguration = mg_emu::kErrorInvalidConfiguration;
constexpr mgError_t mgErrorLaunchFailure = mg_emu::kErrorLaunchFailure;
constexpr mgError_t mgErrorMemoryAllocation = mg_emu::kErrorMemoryAllocation;

// The host API: X(return type, name, parameters, the emulator's call). Entry points
// (MG_EMU_API, mg_gpu_emu.h): inline here, or only declared here and compiled in
// mg_emu_core.cpp when MG_EMU_CORE_OBJECT is defined.
#define MG_EMU_HOST_API(X)                                                                          \
  X(mgError_t, mgMalloc, (void** p, size_t bytes), (mg_emu::deviceMalloc(p, bytes)))                \
  X(mgError_t, mgFree, (void* p), (mg_emu::deviceFree(p)))                                          \
  X(mgError_t, mgMemcpyHtoD, (void* dst, const void* src, size_t bytes, mgStream_t s),              \
    (mg_emu::copyAsync(dst, src, bytes, s, "mgMemcpyHtoD")))                                        \
  X(mgError_t, mgMemcpyDtoH, (void* dst, const void* src, size_t bytes, mgStream_t s),              \
    (mg_emu::copyAsync(dst, src, bytes, s, "mgMemcpyDtoH")))                                        \
  X(mgError_t, mgMemcpyDtoD, (void* dst, const void* src, size_t bytes, mgStream_t s),              \
    (mg_emu::copyAsync(dst, src, bytes, s, "mgMemcpyDtoD")))                                        \
  X(mgError_t, mgMemsetAsync, (void* p, int value, size_t bytes, mgStream_t s),                     \
    (mg_emu::memsetAsync(p, value, bytes, s)))                                                      \
  X(mgError_t, mgStreamCreate, (mgStream_t* s), (mg_emu::streamCreate(s)))                          \
  X(mgError_t, mgStreamDestroy, (mgStream_t s), (mg_emu::streamDestroy(s)))                         \
  X(mgError_t, mgStreamSynchronize, (mgStream_t s), (mg_emu::streamSynchronize(s)))                 \
  X(mgError_t, mgEventCreate, (mgEvent_t* e), (mg_emu::eventCreate(e)))                             \
  X(mgError_t, mgEventRecord, (mgEvent_t e, mgStream_t s), (mg_emu::eventRecord(e, s)))             \
  X(mgError_t, mgEventSynchronize, (mgEvent_t e), (mg_emu::eventSynchronize(e)))                    \
  X(mgError_t, mgEventElapsedTime, (float* ms, mgEvent_t start, mgEvent_t end),                     \
    (mg_emu::eventElapsedTime(ms, start, end)))                                                     \
  X(mgError_t, mgEventDestroy, (mgEvent_t e), (mg_emu::eventDestroy(e)))                            \
  X(mgError_t, mgStreamWaitEvent, (mgStream_t s, mgEvent_t e), (mg_emu::streamWaitEvent(s, e)))     \
  X(mgError_t, mgDeviceSynchronize, (), (mg_emu::deviceSynchronize()))                              \
  X(mgError_t, mgGetLastError, (), (mg_emu::getLastError()))                                        \
  X(const char*, mgGetErrorString, (mgError_t e), (mg_emu::errorString(e)))                         \
  X(mgError_t, mgStreamBeginCapture, (mgStream_t s), (mg_emu::beginCapture(s)))                     \
  X(mgError_t, mgStreamEndCapture, (mgStream_t s, mgGraph_t* g), (mg_emu::endCapture(s, g)))        \
  X(mgError_t, mgGraphInstantiate, (mgGraphExec_t* exec, mgGraph_t g),                              \
    (mg_emu::graphInstantiate(exec, g)))                                                            \
  X(mgError_t, mgGraphLaunch, (mgGraphExec_t exec, mgStream_t s), (mg_emu::graphLaunch(exec, s)))   \
  X(mgError_t, mgGraphExecDestroy, (mgGraphExec_t exec), (mg_emu::graphExecDestroy(exec)))          \
  X(mgError_t, mgGraphDestroy, (mgGraph_t g), (mg_emu::graphDestroy(g)))
#if MG_EMU_ENTRY_BODIES
#define MG_EMU_HOST_FN(ret, name, params, call) \
  MG_EMU_API ret name params { return call; }
#else
#define MG_EMU_HOST_FN(ret, name, params, call) ret name params;
#endif
MG_EMU_HOST_API(MG_EMU_HOST_FN)
#undef MG_EMU_HOST_FN

template <typename... P>
inline mgError_t mgFuncSetMaxDynamicSharedMemory(void (*kernel)(P...), size_t bytes) {
  return mg_emu::setMaxDynamicShared(reinterpret_cast<const void*>(kernel), bytes);
}

template <typename... P, typename... A>
inline mgError_t mgLaunch(void (*kernel)(P...), dim3 grid, dim3 block, size_t dynamicSharedBytes,
                          mgStream_t stream, A&&... args) {
  return mg_emu::launch(false, kernel, grid, block, dynamicSharedBytes, stream,
                        std::forward<A>(args)...);
}
template <typename... P, typename... A>
inline mgError_t mgLaunchNoSync(void (*kernel)(P...), dim3 grid, dim3 block,
                                size_t dynamicSharedBytes, mgStream_t stream, A&&... args) {
  return mg_emu::launch(true, kernel, grid, block, dynamicSharedBytes, stream,
                        std::forward<A>(args)...);
}
template <typename... P, typename... A>
inline mgError_t mgLaunchCoResident(void (*kernel)(P...), dim3 grid, dim3 block,
                                    size_t dynamicSharedBytes, mgStream_t stream, A&&... args) {
  return mg_emu::launchCoResident(kernel, grid, block, dynamicSharedBytes, stream,
                                  std::forward<A>(args)...);
}
constexpr mgError_t mgErrorCooperativeLaunchTooLarge = mg_emu::kErrorCooperativeLaunchTooLarge;

#define MG_DEVICE __device__ __forceinline__
#define MG_HOST_DEVICE __host__ __device__ __forceinline__
#define MG_DYNAMIC_SHARED(type, name) \
  type* name = reinterpret_cast<type*>(::mg_emu::dynamicSharedMemory())

using mg_half = __half;
MG_HOST_DEVICE float mgHalfToFloat(mg_half h) { return __half2float(h); }
MG_HOST_DEVICE mg_half mgFloatToHalf(float f) { return __float2half(f); }

// Tensor-core fragments, emulated per thread (mg_emu_wmma.h): the same names as nvcuda::wmma.
namespace mg_wmma = mg_emu::wmma;
#define MG_HAS_WMMA 1

template <typename T>
MG_DEVICE T mgShfl(T v, int srcLane) { return __shfl_sync(0xffffffffu, v, srcLane); }
template <typename T>
MG_DEVICE T mgShflDown(T v, unsigned delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
template <typename T>
MG_DEVICE T mgShflXor(T v, int laneMask) { return __shfl_xor_sync(0xffffffffu, v, laneMask); }
MG_DEVICE void mgSyncWarp() { __syncwarp(); }
MG_DEVICE void mgFlagPublish(unsigned* flag, unsigned value) {
  __threadfence();
  mg_emu::flagPublish(flag, value);
}
MG_DEVICE void mgFlagWait(const unsigned* flag, unsigned value) {
  mg_emu::flagWait(flag, value);
  __threadfence();
}
MG_DEVICE float mgLoadCoherent(const float* p) { return *reinterpret_cast<const volatile float*>(p); }

#endif

// Typed convenience overload (as cuda_runtime.h offers for cudaMalloc).
template <typename T>
inline mgError_t mgMalloc(T** p, size_t bytes) {
  return mgMalloc(reinterpret_cast<void**>(p), bytes);
}
