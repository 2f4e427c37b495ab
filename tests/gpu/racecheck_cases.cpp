// Cases for the GPU emulation's race check (racecheck_test.sh builds this file with clang++
// -fsanitize=thread, as `magnetoc check --emulate --racecheck` builds a package, and runs each
// case on its own): `racecheck_cases CASE` runs one kernel and exits 0 when its result is right.
// Whether ThreadSanitizer reported a race is for the script to see in the output:
//   block_reduce          the runtime's own blockReduce (kernels/mg_kcommon.cuh), a real block
//                         program with its barriers: no race
//   block_reduce_broken   the same program copied with the barrier inside the halving loop
//                         removed: a race on the shared tile (a thread reads red[t + s] that
//                         another wrote in the previous step)
//   shared_no_publish     threads read a neighbour's shared slot with no barrier after the
//                         writes: a race, reported whatever order the threads run in
//   global_two_blocks     blocks store to the same global element without an atomic: a race
//                         (2048 blocks, so that some run at once on different emulator threads:
//                         blocks that one emulator thread runs one after another are ordered)
//   global_atomic         the same with atomicAdd: no race
//   warp_reduce           a shuffle reduction (warp-synchronous, no shared memory): no race
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/mg_kcommon.cuh"
#include "mg_gpu.h"

namespace {

constexpr int kThreads = 128;
constexpr int kBlocks = 2048;  // of the global-memory cases

struct Add {
  MG_DEVICE float operator()(float a, float b) const { return a + b; }
};

__global__ void blockReduceReal(const float* x, float* out) {
  __shared__ float red[kThreads];
  const float r = mgk::blockReduce<kThreads>(x[threadIdx.x], red, Add{});
  if (threadIdx.x == 0) out[0] = r;
}

// blockReduce with the loop's __syncthreads() deleted (kept: publish and final barriers).
__global__ void blockReduceBroken(const float* x, float* out) {
  __shared__ float red[kThreads];
  const int t = int(threadIdx.x);
  red[t] = x[t];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = red[t] + red[t + s];
  }
  float r = red[0];
  __syncthreads();
  if (t == 0) out[0] = r;
}

__global__ void sharedNoPublish(const float* x, float* out) {
  __shared__ float tile[kThreads];
  const int t = int(threadIdx.x);
  tile[t] = x[t];
  out[t] = tile[(t + 1) % kThreads];  // no __syncthreads between the writes and this read
}

__global__ void globalStore(float* out) {
  if (threadIdx.x == 0) out[0] = float(blockIdx.x + 1);
}

__global__ void globalAtomic(float* out) {
  if (threadIdx.x == 0) atomicAdd(out, float(blockIdx.x + 1));
}

__global__ void warpReduce(const float* x, float* out) {
  float v = x[blockIdx.x * 32 + threadIdx.x];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

int fail(const char* what) {
  std::fprintf(stderr, "racecheck_cases: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: racecheck_cases CASE");
  const std::string c = argv[1];
  std::vector<float> x(kThreads * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7);
  float *dx = nullptr, *dout = nullptr;
  if (mgMalloc(reinterpret_cast<void**>(&dx), x.size() * sizeof(float)) != mgSuccess ||
      mgMalloc(reinterpret_cast<void**>(&dout), x.size() * sizeof(float)) != mgSuccess)
    return fail("mgMalloc failed");
  if (mgMemcpyHtoD(dx, x.data(), x.size() * sizeof(float), nullptr) != mgSuccess ||
      mgMemsetAsync(dout, 0, x.size() * sizeof(float), nullptr) != mgSuccess)
    return fail("upload failed");
  mgError_t e = mgSuccess;
  if (c == "block_reduce") e = mgLaunch(blockReduceReal, dim3(1), dim3(kThreads), 0, nullptr, dx, dout);
  else if (c == "block_reduce_broken") e = mgLaunch(blockReduceBroken, dim3(1), dim3(kThreads), 0, nullptr, dx, dout);
  else if (c == "shared_no_publish") e = mgLaunch(sharedNoPublish, dim3(1), dim3(kThreads), 0, nullptr, dx, dout);
  else if (c == "global_two_blocks") e = mgLaunch(globalStore, dim3(kBlocks), dim3(32), 0, nullptr, dout);
  else if (c == "global_atomic") e = mgLaunch(globalAtomic, dim3(kBlocks), dim3(32), 0, nullptr, dout);
  else if (c == "warp_reduce") e = mgLaunch(warpReduce, dim3(4), dim3(32), 0, nullptr, dx, dout);
  else return fail(("unknown case " + c).c_str());
  if (e != mgSuccess || mgDeviceSynchronize() != mgSuccess) return fail(mgGetErrorString(mgGetLastError()));
  std::vector<float> out(x.size());
  if (mgMemcpyDtoH(out.data(), dout, out.size() * sizeof(float), nullptr) != mgSuccess ||
      mgDeviceSynchronize() != mgSuccess)
    return fail("download failed");
  float want = 0;
  if (c == "block_reduce") {
    for (int i = 0; i < kThreads; ++i) want += x[i];
    if (out[0] != want) return fail("block_reduce: wrong sum");
  } else if (c == "global_atomic") {
    if (out[0] != float(kBlocks) * (kBlocks + 1) / 2) return fail("global_atomic: wrong sum");
  } else if (c == "warp_reduce") {
    for (int b = 0; b < 4; ++b) {
      float s = 0;
      for (int i = 0; i < 32; ++i) s += x[b * 32 + i];
      if (out[b] != s) return fail("warp_reduce: wrong sum");
    }
  }
  mgFree(dx);
  mgFree(dout);
  std::printf("racecheck_cases %s: ran\n", c.c_str());
  return 0;
}
