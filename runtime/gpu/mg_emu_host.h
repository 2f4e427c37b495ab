// CPU emulation of GPU kernels, layer 5: the host runtime behind mg_gpu.h's portable API:
// device memory, streams, events, graph capture and kernel launch.
//
// Work runs eagerly: enqueueing a copy or a launch on a stream executes it before the call
// returns, so every stream is trivially in order and events are complete once recorded. A
// capturing stream records closures instead (launch arguments are copied at capture time, as
// CUDA graphs do), and a graph replays them in order. A stream that waits on an event recorded
// in a capturing stream joins that capture (CUDA's fork/join pattern); its work lands in the
// same graph in program order, a valid linearisation of the fork.
//
// Device memory is host memory, aligned to 256 bytes like cudaMalloc's, and filled with 0xff
// bytes (NaN as float, -1 as int) so that reads of never-written memory show up in results.
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "mg_emu_grid.h"

namespace mg_emu {

using Op = std::function<Error()>;

struct Capture {
  std::vector<Op> ops;
  bool open = true;
  Error invalidated = kSuccess;  // first error made while capturing
};

struct StreamState {
  std::shared_ptr<Capture> capture;  // set while capturing (began here or joined via an event)
  bool captureOrigin = false;
};

struct EventState {
  std::chrono::steady_clock::time_point time{};
  bool recorded = false;
  std::shared_ptr<Capture> capture;  // recorded into a capture: waiting on it joins the capture
};

struct GraphState {
  std::shared_ptr<const std::vector<Op>> ops;
};
struct GraphExecState {
  std::shared_ptr<const std::vector<Op>> ops;
};

inline StreamState& streamOf(StreamState* s) {
  static StreamState defaultStream;
  return s ? *s : defaultStream;
}
// An execution error (a kernel that failed while running) not yet returned by a synchronize.
// Like CUDA's errors from running kernels it is not tied to a stream: the next
// mgStreamSynchronize or mgDeviceSynchronize, whichever comes first, returns it once.
inline std::atomic<int>& devicePending() {
  static std::atomic<int> e{kSuccess};
  return e;
}
inline bool capturing(StreamState& st) {
  if (st.capture && !st.capture->open) st.capture.reset();  // the capture it joined has ended
  return st.capture != nullptr;
}

// Runs op now, or records it when the stream is capturing.
inline Error enqueue(StreamState* s, Op op) {
  StreamState& st = streamOf(s);
  if (capturing(st)) {
    st.capture->ops.push_back(std::move(op));
    return kSuccess;
  }
  Error e = op();
  if (e != kSuccess) devicePending() = e;
  return e;
}

// A failed enqueue-time check: reported now, and it spoils an ongoing capture as in CUDA.
inline Error rejectOn(StreamState* s, Error e, const std::string& detail) {
  StreamState& st = streamOf(s);
  if (capturing(st) && st.capture->invalidated == kSuccess) st.capture->invalidated = e;
  return setError(e, detail);
}

// ---- Memory.
inline Error deviceMalloc(void** p, size_t bytes) {
  if (!p) return setError(kErrorInvalidValue, "mgMalloc: null result pointer");
  *p = nullptr;
  if (bytes == 0) return kSuccess;
  size_t rounded = (bytes + 255) / 256 * 256;
  void* m = std::aligned_alloc(256, rounded);
  if (!m) return setError(kErrorMemoryAllocation, "mgMalloc of " + std::to_string(bytes) + " bytes");
  std::memset(m, 0xff, rounded);
  *p = m;
  return kSuccess;
}
inline Error deviceFree(void* p) {
  std::free(p);
  return kSuccess;
}
inline Error copyAsync(void* dst, const void* src, size_t bytes, StreamState* s, const char* what) {
  if (bytes && (!dst || !src))
    return rejectOn(s, kErrorInvalidValue, std::string(what) + ": null pointer");
  return enqueue(s, [=]() {
    if (bytes) std::memmove(dst, src, bytes);
    return kSuccess;
  });
}
inline Error memsetAsync(void* dst, int value, size_t bytes, StreamState* s) {
  if (bytes && !dst) return rejectOn(s, kErrorInvalidValue, "mgMemsetAsync: null pointer");
  return enqueue(s, [=]() {
    if (bytes) std::memset(dst, value, bytes);
    return kSuccess;
  });
}

// ---- Streams.
inline Error streamCreate(StreamState** s) {
  if (!s) return setError(kErrorInvalidValue, "mgStreamCreate: null result pointer");
  *s = new StreamState;
  return kSuccess;
}
inline Error streamDestroy(StreamState* s) {
  delete s;
  return kSuccess;
}
inline Error streamSynchronize(StreamState* s) {
  StreamState& st = streamOf(s);
  if (capturing(st)) {
    if (st.capture->invalidated == kSuccess)
      st.capture->invalidated = kErrorStreamCaptureUnsupported;
    return setError(kErrorStreamCaptureUnsupported, "mgStreamSynchronize on a capturing stream");
  }
  return Error(devicePending().exchange(kSuccess));
}
inline Error deviceSynchronize() { return Error(devicePending().exchange(kSuccess)); }

// ---- Events.
inline Error eventCreate(EventState** e) {
  if (!e) return setError(kErrorInvalidValue, "mgEventCreate: null result pointer");
  *e = new EventState;
  return kSuccess;
}
inline Error eventDestroy(EventState* e) {
  delete e;
  return kSuccess;
}
inline Error eventRecord(EventState* e, StreamState* s) {
  if (!e) return setError(kErrorInvalidResourceHandle, "mgEventRecord: null event");
  StreamState& st = streamOf(s);
  if (capturing(st)) {
    e->capture = st.capture;
    return kSuccess;
  }
  e->capture.reset();
  e->time = std::chrono::steady_clock::now();  // all earlier work has run: eager streams
  e->recorded = true;
  return kSuccess;
}
inline Error streamWaitEvent(StreamState* s, EventState* e) {
  if (!e) return setError(kErrorInvalidResourceHandle, "mgStreamWaitEvent: null event");
  StreamState& st = streamOf(s);
  if (e->capture && e->capture->open && !capturing(st)) st.capture = e->capture;
  return kSuccess;
}
inline Error eventSynchronize(EventState* e) {
  return e ? kSuccess : setError(kErrorInvalidResourceHandle, "mgEventSynchronize: null event");
}
inline Error eventElapsedTime(float* ms, EventState* start, EventState* end) {
  if (!ms || !start || !end || !start->recorded || !end->recorded)
    return setError(kErrorInvalidResourceHandle, "mgEventElapsedTime: event not recorded");
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return kSuccess;
}

// ---- Graphs.
inline Error beginCapture(StreamState* s) {
  if (!s) return setError(kErrorStreamCaptureUnsupported, "the default stream cannot be captured");
  if (capturing(*s)) return setError(kErrorIllegalState, "mgStreamBeginCapture: already capturing");
  s->capture = std::make_shared<Capture>();
  s->captureOrigin = true;
  return kSuccess;
}
inline Error endCapture(StreamState* s, GraphState** graph) {
  if (!graph) return setError(kErrorInvalidValue, "mgStreamEndCapture: null result pointer");
  *graph = nullptr;
  if (!s || !capturing(*s) || !s->captureOrigin)
    return setError(kErrorIllegalState, "mgStreamEndCapture: the stream did not begin a capture");
  std::shared_ptr<Capture> c = std::move(s->capture);
  s->captureOrigin = false;
  c->open = false;
  if (c->invalidated != kSuccess)
    return setError(kErrorStreamCaptureInvalidated,
                    std::string("capture failed: ") + errorName(c->invalidated));
  *graph = new GraphState{std::make_shared<const std::vector<Op>>(std::move(c->ops))};
  return kSuccess;
}
inline Error graphInstantiate(GraphExecState** exec, GraphState* graph) {
  if (!exec || !graph) return setError(kErrorInvalidValue, "mgGraphInstantiate: null argument");
  *exec = new GraphExecState{graph->ops};
  return kSuccess;
}
inline Error graphLaunch(GraphExecState* exec, StreamState* s) {
  if (!exec) return setError(kErrorInvalidResourceHandle, "mgGraphLaunch: null graph");
  std::shared_ptr<const std::vector<Op>> ops = exec->ops;
  return enqueue(s, [ops]() {
    for (const Op& op : *ops)
      if (Error e = op()) return e;
    return kSuccess;
  });
}
inline Error graphExecDestroy(GraphExecState* exec) {
  delete exec;
  return kSuccess;
}
inline Error graphDestroy(GraphState* graph) {
  delete graph;
  return kSuccess;
}

// ---- Kernel launch.
template <typename... P>
struct BoundKernel {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> args;  // each thread's by-value parameters are copied from here

  static void invoke(const void* self) {
    const BoundKernel* b = static_cast<const BoundKernel*>(self);
    std::apply(b->kernel, b->args);
  }
};

// A launch of `kernel` (its address `addr`) whose arguments are bound in `bound`, run by
// `invoke(bound.get())` on every emulated thread: checked, then run (or captured) on stream `s`.
// The entry point (MG_EMU_API, mg_gpu_emu.h) behind which the grid and block runners lie; the
// template below only binds the arguments.
#if MG_EMU_ENTRY_BODIES
MG_EMU_API Error launchBound(bool plain, const void* addr, dim3 grid, dim3 block, size_t shared,
                             StreamState* s, void (*invoke)(const void*),
                             std::shared_ptr<const void> bound) {
  std::string why;
  if (Error e = validateLaunch(addr, grid, block, shared, &why))
    return rejectOn(s, e, "kernel " + kernelName(addr) + ": " + why);
  return enqueue(s, [bound, invoke, addr, grid, block, shared, plain]() {
    KernelCall call{invoke, bound.get()};
    std::string message;
    Error e = runGrid(call, addr, grid, block, shared, plain, &message);
    return e == kSuccess ? e : setError(e, message);
  });
}
#else
Error launchBound(bool plain, const void* addr, dim3 grid, dim3 block, size_t shared,
                  StreamState* s, void (*invoke)(const void*), std::shared_ptr<const void> bound);
#endif

// A co-resident launch (mgLaunchCoResident): refused when the grid does not fit on the device at
// once, else every block runs at the same time (runGridCoResident).
#if MG_EMU_ENTRY_BODIES
MG_EMU_API Error launchCoResidentBound(const void* addr, dim3 grid, dim3 block, size_t shared,
                                       StreamState* s, void (*invoke)(const void*),
                                       std::shared_ptr<const void> bound) {
  std::string why;
  if (Error e = validateLaunch(addr, grid, block, shared, &why))
    return rejectOn(s, e, "kernel " + kernelName(addr) + ": " + why);
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  const unsigned threads = block.x * block.y * block.z;
  const uint64_t capacity = coResidentCapacity(threads, shared);
  if (blocks > capacity)
    return rejectOn(s, kErrorCooperativeLaunchTooLarge,
                    "kernel " + kernelName(addr) + ": co-resident launch of " + std::to_string(blocks) +
                        " blocks of " + std::to_string(threads) + " threads and " + std::to_string(shared) +
                        " bytes of shared memory; the device holds " + std::to_string(capacity) +
                        " such blocks at once");
  return enqueue(s, [bound, invoke, addr, grid, block, shared]() {
    KernelCall call{invoke, bound.get()};
    std::string message;
    Error e = runGridCoResident(call, addr, grid, block, shared, &message);
    return e == kSuccess ? e : setError(e, message);
  });
}
#else
Error launchCoResidentBound(const void* addr, dim3 grid, dim3 block, size_t shared, StreamState* s,
                            void (*invoke)(const void*), std::shared_ptr<const void> bound);
#endif

template <typename... P, typename... A>
inline Error launchCoResident(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                              StreamState* s, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "mgLaunchCoResident: the number of arguments differs from the kernel's parameters");
  auto bound = std::make_shared<const BoundKernel<P...>>(
      BoundKernel<P...>{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)});
  return launchCoResidentBound(reinterpret_cast<const void*>(kernel), grid, block, shared, s,
                               &BoundKernel<P...>::invoke, std::move(bound));
}

template <typename... P, typename... A>
inline Error launch(bool plain, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                    StreamState* s, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "mgLaunch: the number of arguments differs from the kernel's parameters");
  auto bound = std::make_shared<const BoundKernel<P...>>(
      BoundKernel<P...>{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)});
  return launchBound(plain, reinterpret_cast<const void*>(kernel), grid, block, shared, s,
                     &BoundKernel<P...>::invoke, std::move(bound));
}

// Resizes the pool of OS threads that run blocks (tools and tests; MG_EMU_THREADS otherwise).
inline void setThreadCount(int threads) { ThreadPool::instance().resize(threads); }
inline int threadCount() { return ThreadPool::instance().threads(); }

}  // namespace mg_emu
