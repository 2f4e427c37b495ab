// Test kernels for the GPU portability layer, written in plain CUDA syntax.
//
// The same source runs on the CPU emulation in gpu_emu_test.cpp and is compiled (not run) by
// nvcc for sm_80/sm_90 and by hipcc for gfx90a in compile_with_gpu_compilers.sh, so that
// anything the emulation accepts here is also real CUDA/HIP. Each kernel exercises one part of
// the execution model: barriers, shared memory, warp intrinsics, atomics, dynamic shared memory,
// and two kernels whose barriers are broken on purpose.
#pragma once

#include "mg_gpu.h"

// ---- Elementwise, no barrier (also the mgLaunchNoSync fast path).
__global__ void vecAdd(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void addScalar(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += s;
}

// ---- C[M,N] = A[M,K] * B[K,N]: shared-memory tiles, two barriers per tile.
template <int TILE>
__global__ void matmulTiled(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// The same product without shared memory or barriers.
__global__ void matmulNaive(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// ---- Sum of x: grid-stride accumulation, warp reduction by __shfl_down_sync, per-warp sums
// through shared memory, a second warp reduction. blockDim.x must be a multiple of 32.
__global__ void blockReduceSum(const float* __restrict__ x, float* __restrict__ partial, int n) {
  __shared__ float warpSums[32];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warpSums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x + 31) / 32 ? warpSums[lane] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}

// ---- Atomics from many blocks at once.
__global__ void histogram(const int* __restrict__ x, int n, unsigned* bins, int nbins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[x[i] % nbins], 1u);
}

struct AtomicResults {
  int imax, imin;
  unsigned umax, umin;
  float fsum;
  unsigned long long usum;
  int casCount;
  float lastExchanged;
  int ixor;
};

__global__ void atomicsMix(const int* __restrict__ v, int n, AtomicResults* r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int x = v[i];
  atomicMax(&r->imax, x);
  atomicMin(&r->imin, x);
  atomicMax(&r->umax, unsigned(x) & 0xffffu);
  atomicMin(&r->umin, unsigned(x) & 0xffffu);
  atomicAdd(&r->fsum, 1.0f);
  atomicAdd(&r->usum, (unsigned long long)(x & 0xffff));
  int old = atomicAdd(&r->casCount, 0), assumed;
  do {
    assumed = old;
    old = atomicCAS(&r->casCount, assumed, assumed + 1);
  } while (old != assumed);
  atomicExch(&r->lastExchanged, float(x));
  atomicXor(&r->ixor, x);
}

// ---- Warp intrinsics in lockstep: butterfly sum, inclusive scan, segmented broadcast,
// ballot, and a shuffle over half a warp that the other half skips.
__global__ void warpOps(const int* __restrict__ x, int* sum, int* scan, int* bcast,
                        unsigned* ballot, int* halfDown) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int v = x[i];
  int s = v;
  for (int m = 16; m > 0; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);
  sum[i] = s;
  int p = v;
  for (int d = 1; d < 32; d <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, p, d);
    if (lane >= d) p += y;
  }
  scan[i] = p;
  bcast[i] = __shfl_sync(0xffffffffu, v, 3, 16);
  unsigned b = __ballot_sync(0xffffffffu, v & 1);
  if (lane == 0) ballot[i / 32] = b;
  int h = -1;
  if (lane < 16) h = __shfl_down_sync(0x0000ffffu, v, 1, 16);
  halfDown[i] = h;
}

// ---- Dynamic shared memory: reverse each block's slice of `in`.
__global__ void reverseInBlock(const int* __restrict__ in, int* __restrict__ out, int n) {
  MG_DYNAMIC_SHARED(int, buf);
  const int base = blockIdx.x * blockDim.x, t = threadIdx.x;
  const int count = min(int(blockDim.x), n - base);
  if (t < count) buf[t] = in[base + t];
  __syncthreads();
  if (t < count) out[base + t] = buf[count - 1 - t];
}

// ---- A block program with its barrier removed: each thread stores its element in shared memory
// and reads its left neighbour's without __syncthreads between. On a GPU the neighbour may not
// have stored yet; the emulation's default (forward) order always ran it first, so only a
// reverse or shuffled order (MG_EMU_ORDER) exposes the bug.
__global__ void shiftNoBarrier(const int* __restrict__ in, int* __restrict__ out, int n) {
  __shared__ int buf[256];
  const int base = blockIdx.x * blockDim.x, t = threadIdx.x;
  if (base + t >= n) return;
  buf[t] = in[base + t];
  // (the real program has __syncthreads() here)
  out[base + t] = t > 0 ? buf[t - 1] : -1;
}

// More dynamic shared memory than the default 48 KiB: needs mgFuncSetMaxDynamicSharedMemory.
__global__ void bigSharedSum(const float* __restrict__ in, float* __restrict__ out, int count) {
  MG_DYNAMIC_SHARED(float, buf);
  for (int i = threadIdx.x; i < count; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int i = 0; i < count; ++i) s += buf[i];
    out[blockIdx.x] = s;
  }
}

// ---- Broken on purpose: in block 1, lanes 0-15 of warp 0 wait at __syncthreads while lanes
// 16-31 wait in a full-warp shuffle for them. Neither can complete (a hang on a GPU).
__global__ void divergentBarrier(int* out) {
  int v = threadIdx.x;
  if (blockIdx.x == 1 && threadIdx.x < 16) {
    __syncthreads();
  } else {
    v += __shfl_xor_sync(0xffffffffu, v, 16);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Threads past n return before the barrier: tolerated (the barrier waits for live threads),
// reported under MG_EMU_STRICT_SYNC.
__global__ void earlyExitBarrier(const int* __restrict__ in, int* __restrict__ out, int n) {
  __shared__ int buf[64];
  const int t = threadIdx.x;
  if (t >= n) return;
  buf[t] = in[t];
  __syncthreads();
  out[t] = buf[n - 1 - t];
}

// ---- Built-in variables in three dimensions.
__host__ __device__ __forceinline__ unsigned packIndex(unsigned bx, unsigned by, unsigned bz,
                                                      unsigned tx, unsigned ty, unsigned tz) {
  return bx | (by << 4) | (bz << 8) | (tx << 12) | (ty << 18) | (tz << 24);
}
__global__ void writeIndices(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * (blockDim.x * blockDim.y * blockDim.z) + thread] = packIndex(blockIdx.x, blockIdx.y, blockIdx.z,
                                                                 threadIdx.x, threadIdx.y, threadIdx.z);
}

// ---- __shared__ is per block even when blocks run at the same time on several OS threads:
// counts the threads that ever see another block's value.
__global__ void sharedPerBlock(int* mismatches) {
  __shared__ int owner;
  for (int round = 0; round < 8; ++round) {
    if (threadIdx.x == 0) owner = int(blockIdx.x) * 8 + round;
    __syncthreads();
    if (owner != int(blockIdx.x) * 8 + round) atomicAdd(mismatches, 1);
    __syncthreads();
  }
}

// ---- __syncthreads_count/_and/_or.
__global__ void barrierVotes(int* out) {
  const int t = threadIdx.x;
  const int c = __syncthreads_count(t % 3 == 0);
  const int a = __syncthreads_and(t < 1000);
  const int o = __syncthreads_or(t == 7);
  const int none = __syncthreads_or(0);
  if (t == 0) {
    out[4 * blockIdx.x + 0] = c;
    out[4 * blockIdx.x + 1] = a;
    out[4 * blockIdx.x + 2] = o;
    out[4 * blockIdx.x + 3] = none;
  }
}

// ---- Half precision through the portable names.
__global__ void halfAxpb(const mg_half* __restrict__ in, mg_half* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mgFloatToHalf(mgHalfToFloat(in[i]) * 2.0f + 1.0f);
}

// ---- The portable warp helpers (full warp of 32 lanes).
__global__ void portableWarpSum(const float* __restrict__ x, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int m = 16; m > 0; m >>= 1) v += mgShflXor(v, m);
  float first = mgShfl(v, 0);
  mgSyncWarp();
  float down = mgShflDown(x[i], 1u);
  out[2 * i] = first;
  out[2 * i + 1] = down;
}

// A pipeline of blocks over progress flags (mgLaunchCoResident; the shape of the stacked
// recurrent wavefront): block k's step s reads block k-1's value of step s, which block k-1
// publishes by raising flags[k-1] to s+1 after writing it. out[k][s] = out[k-1][s] * 2 + k + s,
// each step after the block's previous one (a running value carried in shared memory).
// broken: block k waits for flags[(k+1) % blocks] instead (a later block; the last one waits for
// block 0): a cycle in which no block can ever publish, which must be reported as a deadlock.
__global__ void flagPipeline(float* out, unsigned* flags, int steps, int broken) {
  __shared__ float carry;
  const int k = blockIdx.x;
  if (threadIdx.x == 0) carry = 0.f;
  __syncthreads();
  for (int s = 0; s < steps; ++s) {
    const int src = broken ? (k + 1) % int(gridDim.x) : k - 1;
    if (src >= 0 && threadIdx.x == 0) mgFlagWait(&flags[src], unsigned(s + 1));
    __syncthreads();
    if (threadIdx.x == 0) {
      const float in = src >= 0 ? mgLoadCoherent(&out[src * steps + s]) : 1.f;
      carry = carry * 0.5f + in * 2.f + float(k + s);
      out[k * steps + s] = carry;
    }
    __syncthreads();
    if (threadIdx.x == 0) mgFlagPublish(&flags[k], unsigned(s + 1));
  }
}
