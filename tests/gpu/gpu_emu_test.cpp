// Tests of the CPU emulation of CUDA/HIP kernels (runtime/gpu/): runs the CUDA-syntax kernels
// of gpu_test_kernels.cuh through the portable host API and checks their results against plain
// loops, and checks what the emulation must report instead of computing: broken barriers,
// invalid launches, misuse of mgLaunchNoSync. Built with MG_GPU_EMULATE and -rdynamic (so that
// errors can name kernels).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_host.cuh"

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::string lastErrorText(mgError_t e) { return mgGetErrorString(e); }

TEST(GpuEmu, ThreadPoolHonoursEnvironment) {
  const char* env = std::getenv("MG_EMU_THREADS");
  if (!env) GTEST_SKIP() << "MG_EMU_THREADS not set";
  EXPECT_EQ(mg_emu::threadCount(), std::atoi(env));
}

TEST(GpuEmu, VecAdd) {
  const int n = 1000;  // not a multiple of the block size
  std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2), c;
  ASSERT_EQ(runVecAdd(a, b, c, false), mgSuccess);
  ASSERT_EQ(c.size(), size_t(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST(GpuEmu, TiledMatmulMatchesNaiveLoop) {
  const int M = 70, N = 45, K = 37;  // none a multiple of the 16x16 tile
  std::vector<float> A = randomFloats(size_t(M) * K, 3), B = randomFloats(size_t(K) * N, 4), C;
  ASSERT_EQ(runMatmul(A, B, C, M, N, K, true, false), mgSuccess);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(A[i * K + k]) * B[k * N + j];
      ASSERT_NEAR(C[i * N + j], ref, 1e-4) << i << "," << j;
    }
}

TEST(GpuEmu, BlockReduceWithShuffleAndSharedMemory) {
  std::vector<float> x(100003);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 7) - 3);  // exact in float
  double ref = 0;
  for (float v : x) ref += v;
  std::vector<float> partial;
  ASSERT_EQ(runBlockReduce(x, 13, 256, partial, false), mgSuccess);
  double total = 0;
  for (float p : partial) total += p;
  EXPECT_EQ(total, ref);
  // 96 threads: three warps, the second reduction reads warpSums[0..2] only.
  ASSERT_EQ(runBlockReduce(x, 5, 96, partial, false), mgSuccess);
  total = 0;
  for (float p : partial) total += p;
  EXPECT_EQ(total, ref);
}

TEST(GpuEmu, AtomicHistogramFromManyBlocks) {
  std::mt19937 rng(5);
  std::vector<int> x(1 << 18);
  for (int& v : x) v = int(rng() % 1000);
  const int nbins = 37;
  std::vector<unsigned> ref(nbins, 0), bins;
  for (int v : x) ++ref[v % nbins];
  ASSERT_EQ(runHistogram(x, nbins, bins), mgSuccess);
  EXPECT_EQ(bins, ref);
}

TEST(GpuEmu, AtomicOperations) {
  std::mt19937 rng(6);
  std::vector<int> v(5000);
  for (int& x : v) x = int(rng() % 200001) - 100000;
  AtomicResults init{};
  init.imax = INT32_MIN;
  init.imin = INT32_MAX;
  init.umax = 0;
  init.umin = 0xffffffffu;
  AtomicResults r{};
  ASSERT_EQ(runAtomicsMix(v, init, &r), mgSuccess);
  int imax = INT32_MIN, imin = INT32_MAX, ixor = 0;
  unsigned umax = 0, umin = 0xffffffffu;
  unsigned long long usum = 0;
  for (int x : v) {
    imax = std::max(imax, x);
    imin = std::min(imin, x);
    umax = std::max(umax, unsigned(x) & 0xffffu);
    umin = std::min(umin, unsigned(x) & 0xffffu);
    usum += unsigned(x & 0xffff);
    ixor ^= x;
  }
  EXPECT_EQ(r.imax, imax);
  EXPECT_EQ(r.imin, imin);
  EXPECT_EQ(r.umax, umax);
  EXPECT_EQ(r.umin, umin);
  EXPECT_EQ(r.usum, usum);
  EXPECT_EQ(r.ixor, ixor);
  EXPECT_EQ(r.fsum, float(v.size()));  // integers below 2^24: exact whatever the order
  EXPECT_EQ(r.casCount, int(v.size()));
  bool found = false;
  for (int x : v) found |= float(x) == r.lastExchanged;
  EXPECT_TRUE(found) << r.lastExchanged;
}

TEST(GpuEmu, WarpShufflesInLockstep) {
  const unsigned threads = 128, n = 512;
  std::vector<int> x(n);
  for (unsigned i = 0; i < n; ++i) x[i] = int((i * 7919u) % 101);
  WarpOpsOut o;
  ASSERT_EQ(runWarpOps(x, threads, &o), mgSuccess);
  for (unsigned w = 0; w < n / 32; ++w) {
    int sum = 0, scan = 0;
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; ++l) sum += x[w * 32 + l];
    for (unsigned l = 0; l < 32; ++l) {
      const unsigned i = w * 32 + l;
      scan += x[i];
      EXPECT_EQ(o.sum[i], sum) << i;  // butterfly: every lane holds the warp's sum
      EXPECT_EQ(o.scan[i], scan) << i;
      EXPECT_EQ(o.bcast[i], x[w * 32 + (l & 16) + 3]) << i;
      int half = l < 16 ? (l < 15 ? x[i + 1] : x[i]) : -1;  // lane 15 is its segment's end
      EXPECT_EQ(o.halfDown[i], half) << i;
      if (x[i] & 1) ballot |= 1u << l;
    }
    EXPECT_EQ(o.ballot[w], ballot) << w;
  }
}

TEST(GpuEmu, PortableWarpHelpers) {
  std::vector<float> x(128), out;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13);
  ASSERT_EQ(runPortableWarpSum(x, out), mgSuccess);
  for (size_t w = 0; w < x.size() / 32; ++w) {
    float sum = 0;
    for (size_t l = 0; l < 32; ++l) sum += x[w * 32 + l];
    for (size_t l = 0; l < 32; ++l) {
      size_t i = w * 32 + l;
      EXPECT_EQ(out[2 * i], sum) << i;
      EXPECT_EQ(out[2 * i + 1], l < 31 ? x[i + 1] : x[i]) << i;
    }
  }
}

TEST(GpuEmu, DynamicSharedMemory) {
  std::vector<int> in(1000), out;
  for (size_t i = 0; i < in.size(); ++i) in[i] = int(i);
  const unsigned threads = 128;
  ASSERT_EQ(runReverse(in, threads, out), mgSuccess);
  for (size_t base = 0; base < in.size(); base += threads) {
    size_t count = std::min<size_t>(threads, in.size() - base);
    for (size_t t = 0; t < count; ++t) ASSERT_EQ(out[base + t], in[base + count - 1 - t]);
  }
}

TEST(GpuEmu, DynamicSharedMemoryAboveDefaultLimitNeedsOptIn) {
  std::vector<float> in(24 * 1024);  // 96 KiB
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 5);
  float ref = 0;
  for (float v : in) ref += v;
  float sum = 0;
  // The limit is per kernel and outlives a test (as on a GPU): start from the default.
  ASSERT_EQ(mgFuncSetMaxDynamicSharedMemory(bigSharedSum, 48 << 10), mgSuccess);
  mgError_t e = runBigShared(in, false, &sum);
  EXPECT_EQ(e, mgErrorInvalidValue);
  EXPECT_NE(lastErrorText(e).find("mgFuncSetMaxDynamicSharedMemory"), std::string::npos)
      << lastErrorText(e);
  EXPECT_EQ(mgGetLastError(), mgErrorInvalidValue);
  EXPECT_EQ(mgGetLastError(), mgSuccess);  // cleared by the previous call
  ASSERT_EQ(runBigShared(in, true, &sum), mgSuccess);
  EXPECT_EQ(sum, 2 * ref);
}

TEST(GpuEmu, DivergentBarrierIsReportedNotHung) {
  std::vector<int> out;
  mgError_t e = runDivergentBarrier(out);
  ASSERT_EQ(e, mgErrorLaunchFailure);
  const std::string msg = lastErrorText(e);
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("divergentBarrier"), std::string::npos) << msg;
  EXPECT_NE(msg.find("block (1,0,0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("16 thread(s) wait at __syncthreads"), std::string::npos) << msg;
  EXPECT_EQ(mgGetLastError(), mgErrorLaunchFailure);
  EXPECT_EQ(mgDeviceSynchronize(), mgErrorLaunchFailure);  // reported once more at the sync
  EXPECT_EQ(mgDeviceSynchronize(), mgSuccess);
  // The runtime is usable afterwards (the abandoned fibers' stacks are reused).
  std::vector<float> a = randomFloats(300, 7), b = randomFloats(300, 8), c;
  ASSERT_EQ(runVecAdd(a, b, c, false), mgSuccess);
  EXPECT_EQ(c[299], a[299] + b[299]);
  std::vector<float> x(4096, 1.0f), partial;
  ASSERT_EQ(runBlockReduce(x, 4, 64, partial, false), mgSuccess);
  EXPECT_EQ(partial[0] + partial[1] + partial[2] + partial[3], 4096.0f);
}

TEST(GpuEmu, EarlyExitBeforeBarrierStrictModeReportsIt) {
  std::vector<int> in(64), out;
  for (int i = 0; i < 64; ++i) in[i] = i * 3;
  const int n = 40;
  ASSERT_EQ(runEarlyExit(in, n, out), mgSuccess);  // default: waits for live threads only
  for (int t = 0; t < n; ++t) EXPECT_EQ(out[t], in[n - 1 - t]);
  mg_emu::config().strictSync = true;
  mgError_t e = runEarlyExit(in, n, out);
  mg_emu::config().strictSync = false;
  ASSERT_EQ(e, mgErrorLaunchFailure);
  // Forward order: the exits come after 40 arrivals; reverse or random (MG_EMU_ORDER): some or
  // all come first, and the next arrival reports them.
  const std::string text = lastErrorText(e);
  if (mg_emu::config().order == mg_emu::Order::kForward)
    EXPECT_NE(text.find("exited while 40 thread(s) wait at __syncthreads"), std::string::npos) << text;
  else
    EXPECT_NE(text.find("(divergent barrier; MG_EMU_STRICT_SYNC is on)"), std::string::npos) << text;
  mgGetLastError();
  mgDeviceSynchronize();
}

// MG_EMU_ORDER: the order of a block's threads must not matter to a correct kernel. A copy of a
// real pattern with its barrier removed passes in the default order (the blind spot this
// setting exists for) and fails under reverse and shuffled orders; a correct kernel with
// barriers (the tiled matmul, the in-block reverse) passes under all three.
TEST(GpuEmu, ThreadOrderExposesAMissingBarrier) {
  const int n = 1000;
  std::vector<int> in(n), out;
  for (int i = 0; i < n; ++i) in[i] = i + 1;
  auto mismatches = [&](const std::vector<int>& o) {
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += o[i] != (i % 128 == 0 ? -1 : in[i - 1]);
    return bad;
  };
  mg_emu::Config saved = mg_emu::config();
  mg_emu::parseOrder("forward", mg_emu::config());
  ASSERT_EQ(runShiftNoBarrier(in, 128, out), mgSuccess);
  EXPECT_EQ(mismatches(out), 0) << "forward order: the missing barrier goes unnoticed";
  for (const char* order : {"reverse", "random:5"}) {
    mg_emu::parseOrder(order, mg_emu::config());
    ASSERT_TRUE(mg_emu::config().orderError.empty()) << mg_emu::config().orderError;
    ASSERT_EQ(runShiftNoBarrier(in, 128, out), mgSuccess);
    EXPECT_GT(mismatches(out), n / 4) << order << ": the missing barrier must change the result";
    // Kernels with their barriers give the same results in every order.
    std::vector<int> rin(777), rout;
    for (int i = 0; i < 777; ++i) rin[i] = i * 5;
    ASSERT_EQ(runReverse(rin, 64, rout), mgSuccess);
    for (int b = 0; b * 64 < 777; ++b) {
      int count = std::min(64, 777 - b * 64);
      for (int t = 0; t < count; ++t) ASSERT_EQ(rout[b * 64 + t], rin[b * 64 + count - 1 - t]) << order;
    }
    const int M = 33, N = 20, K = 17;
    std::vector<float> A = randomFloats(size_t(M) * K, 9), B = randomFloats(size_t(K) * N, 10), C;
    ASSERT_EQ(runMatmul(A, B, C, M, N, K, true, false), mgSuccess);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double ref = 0;
        for (int k = 0; k < K; ++k) ref += double(A[i * K + k]) * B[k * N + j];
        ASSERT_NEAR(C[i * N + j], ref, 1e-4) << order;
      }
  }
  mg_emu::parseOrder("sideways", mg_emu::config());
  mgError_t e = runShiftNoBarrier(in, 128, out);
  EXPECT_EQ(e, mgErrorLaunchFailure);
  EXPECT_NE(lastErrorText(e).find("MG_EMU_ORDER: unknown order 'sideways'"), std::string::npos)
      << lastErrorText(e);
  mgGetLastError();
  mgDeviceSynchronize();
  mg_emu::config() = saved;
}

TEST(GpuEmu, LaunchParameterErrors) {
  struct Case {
    dim3 grid, block;
    size_t shared;
    mgError_t expected;
  } cases[] = {
      {dim3(1), dim3(1025), 0, mgErrorInvalidConfiguration},
      {dim3(1), dim3(32, 33), 0, mgErrorInvalidConfiguration},  // 1056 threads
      {dim3(1), dim3(1, 1, 65), 0, mgErrorInvalidConfiguration},
      {dim3(1), dim3(0), 0, mgErrorInvalidConfiguration},
      {dim3(0), dim3(32), 0, mgErrorInvalidConfiguration},
      {dim3(1, 65536), dim3(32), 0, mgErrorInvalidConfiguration},
      {dim3(1), dim3(32), 64 << 10, mgErrorInvalidValue},   // above 48 KiB without opt-in
      {dim3(1), dim3(32), 229 << 10, mgErrorInvalidValue},  // above any GPU's limit
  };
  DeviceBuffer<float> d(64);
  ASSERT_EQ(mgFuncSetMaxDynamicSharedMemory(addScalar, 48 << 10), mgSuccess);  // the default
  for (const Case& c : cases) {
    mgError_t e = mgLaunch(addScalar, c.grid, c.block, c.shared, nullptr, d.get(), 1.0f, 64);
    EXPECT_EQ(e, c.expected) << c.block.x << "x" << c.block.y << "x" << c.block.z;
    EXPECT_NE(lastErrorText(e).find("addScalar"), std::string::npos) << lastErrorText(e);
    EXPECT_EQ(mgGetLastError(), c.expected);
  }
  EXPECT_EQ(mgFuncSetMaxDynamicSharedMemory(addScalar, 228 << 10), mgErrorInvalidValue);
  EXPECT_EQ(mgFuncSetMaxDynamicSharedMemory(addScalar, 227 << 10), mgSuccess);
  EXPECT_EQ(mgLaunch(addScalar, dim3(1), dim3(32), 227 << 10, nullptr, d.get(), 1.0f, 64),
            mgSuccess);
  EXPECT_EQ(mgLaunch(addScalar, dim3(1), dim3(1024), 0, nullptr, d.get(), 1.0f, 64), mgSuccess);
  EXPECT_EQ(mgLaunch(addScalar, dim3(1), dim3(2, 2, 64), 0, nullptr, d.get(), 1.0f, 64),
            mgSuccess);
  mgGetLastError();
}

TEST(GpuEmu, GraphCaptureAndReplay) {
  const int n = 200, replays = 3;
  std::vector<float> x(n), out(n, -1.0f), outY(n, -1.0f);
  for (int i = 0; i < n; ++i) x[i] = float(i);
  ASSERT_EQ(runGraph(x, out, outY, replays), mgSuccess);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], float(i) + 100.0f * (replays - 1) + 1.0f) << i;  // last replay's x + 1
    EXPECT_EQ(outY[i], 10.0f * replays) << i;  // the capture itself ran nothing
  }
}

TEST(GpuEmu, CaptureRules) {
  mgStream_t s;
  ASSERT_EQ(mgStreamCreate(&s), mgSuccess);
  mgGraph_t g;
  EXPECT_NE(mgStreamBeginCapture(nullptr), mgSuccess);  // the default stream cannot capture
  EXPECT_NE(mgStreamEndCapture(s, &g), mgSuccess);      // nothing began
  ASSERT_EQ(mgStreamBeginCapture(s), mgSuccess);
  EXPECT_NE(mgStreamSynchronize(s), mgSuccess);
  EXPECT_NE(mgStreamEndCapture(s, &g), mgSuccess);  // invalidated by the synchronize
  ASSERT_EQ(mgStreamBeginCapture(s), mgSuccess);
  DeviceBuffer<float> d(8);
  EXPECT_EQ(mgLaunch(addScalar, dim3(1), dim3(2000), 0, s, d.get(), 1.0f, 8),
            mgErrorInvalidConfiguration);
  EXPECT_NE(mgStreamEndCapture(s, &g), mgSuccess);  // invalidated by the bad launch
  EXPECT_EQ(g, nullptr);
  mgGetLastError();
  EXPECT_EQ(mgStreamDestroy(s), mgSuccess);
}

TEST(GpuEmu, NoSyncLaunchMatchesFiberLaunch) {
  const int M = 33, N = 50, K = 21;
  std::vector<float> A = randomFloats(size_t(M) * K, 9), B = randomFloats(size_t(K) * N, 10);
  std::vector<float> plain, fibers, tiled;
  ASSERT_EQ(runMatmul(A, B, plain, M, N, K, false, true), mgSuccess);
  ASSERT_EQ(runMatmul(A, B, fibers, M, N, K, false, false), mgSuccess);
  ASSERT_EQ(runMatmul(A, B, tiled, M, N, K, true, false), mgSuccess);
  EXPECT_EQ(plain, fibers);  // the same kernel, bit for bit
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(plain[i], tiled[i], 1e-5) << i;
  std::vector<float> a = randomFloats(777, 11), b = randomFloats(777, 12), c1, c2;
  ASSERT_EQ(runVecAdd(a, b, c1, true), mgSuccess);
  ASSERT_EQ(runVecAdd(a, b, c2, false), mgSuccess);
  EXPECT_EQ(c1, c2);
}

TEST(GpuEmu, NoSyncLaunchOfKernelWithBarriersIsAnError) {
  std::vector<float> x(1024, 1.0f), partial;
  mgError_t e = runBlockReduce(x, 2, 64, partial, true);
  ASSERT_EQ(e, mgErrorLaunchFailure);
  EXPECT_NE(lastErrorText(e).find("__shfl_down_sync called in a kernel launched with "
                                  "mgLaunchNoSync"),
            std::string::npos)
      << lastErrorText(e);
  mgGetLastError();
  mgDeviceSynchronize();
}

TEST(GpuEmu, BuiltinIndexVariablesIn3D) {
  const dim3 grid(3, 2, 2), block(5, 3, 2);
  std::vector<unsigned> out;
  ASSERT_EQ(runIndices(grid, block, out), mgSuccess);
  size_t i = 0;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx, ++i)
              ASSERT_EQ(out[i], packIndex(bx, by, bz, tx, ty, tz)) << i;
}

TEST(GpuEmu, SharedVariablesArePerBlockAcrossOsThreads) {
  int mismatches = -1;
  ASSERT_EQ(runSharedPerBlock(400, &mismatches), mgSuccess);
  EXPECT_EQ(mismatches, 0);
}

TEST(GpuEmu, SyncthreadsCountAndOr) {
  for (unsigned threads : {96u, 100u, 1024u}) {
    std::vector<int> out;
    ASSERT_EQ(runBarrierVotes(threads, out), mgSuccess);
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(out[4 * b], int((threads + 2) / 3)) << threads;
      EXPECT_EQ(out[4 * b + 1], threads <= 1000 ? 1 : 0);  // __syncthreads_and(t < 1000)
      EXPECT_EQ(out[4 * b + 2], 1);
      EXPECT_EQ(out[4 * b + 3], 0);
    }
  }
}

TEST(GpuEmu, HalfConversionRoundsToNearestEven) {
  auto bits = [](float f) { return __half_as_ushort(__float2half(f)); };
  EXPECT_EQ(bits(1.0f), 0x3c00);
  EXPECT_EQ(bits(-2.0f), 0xc000);
  EXPECT_EQ(bits(65504.0f), 0x7bff);
  EXPECT_EQ(bits(65519.0f), 0x7bff);
  EXPECT_EQ(bits(65520.0f), 0x7c00);                    // ties to even: infinity
  EXPECT_EQ(bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie, even below
  EXPECT_EQ(bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, even above
  EXPECT_EQ(bits(std::ldexp(1.0f, -24)), 0x0001);       // smallest subnormal
  EXPECT_EQ(bits(std::ldexp(1.0f, -25)), 0x0000);       // tie to even: zero
  EXPECT_EQ(bits(3 * std::ldexp(1.0f, -25)), 0x0002);   // tie to even: 2
  EXPECT_EQ(bits(std::ldexp(1023.0f, -24)), 0x03ff);    // largest subnormal
  EXPECT_EQ(bits(std::ldexp(2047.0f, -25)), 0x0400);    // rounds up into the normals
  EXPECT_EQ(bits(INFINITY), 0x7c00);
  EXPECT_EQ(bits(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isnan(__half2float(__float2half(NAN))));
  for (unsigned u = 0; u < 0x10000; ++u) {  // every half survives the round trip
    __half h = __ushort_as_half((unsigned short)u);
    float f = __half2float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(__half_as_ushort(__float2half(f)), u) << std::hex << u;
  }
}

TEST(GpuEmu, HalfKernel) {
  std::vector<mg_half> in(300), out;
  for (size_t i = 0; i < in.size(); ++i) in[i] = mgFloatToHalf(float(i) * 0.25f - 30.0f);
  ASSERT_EQ(runHalfAxpb(in, out), mgSuccess);
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(mgHalfToFloat(out[i]), (float(i) * 0.25f - 30.0f) * 2.0f + 1.0f) << i;
}

TEST(GpuEmu, EventsTimeEagerWork) {
  mgEvent_t start, end;
  ASSERT_EQ(mgEventCreate(&start), mgSuccess);
  ASSERT_EQ(mgEventCreate(&end), mgSuccess);
  float ms = -1;
  EXPECT_NE(mgEventElapsedTime(&ms, start, end), mgSuccess);  // not recorded yet
  mgGetLastError();
  std::vector<float> a = randomFloats(1 << 16, 13), b = randomFloats(1 << 16, 14), c;
  ASSERT_EQ(mgEventRecord(start, nullptr), mgSuccess);
  ASSERT_EQ(runVecAdd(a, b, c, false), mgSuccess);
  ASSERT_EQ(mgEventRecord(end, nullptr), mgSuccess);
  ASSERT_EQ(mgEventSynchronize(end), mgSuccess);
  ASSERT_EQ(mgEventElapsedTime(&ms, start, end), mgSuccess);
  EXPECT_GT(ms, 0.0f);
  mgEventDestroy(start);
  mgEventDestroy(end);
}

TEST(GpuEmu, FreshDeviceMemoryIsPoisoned) {
  float* p = nullptr;
  ASSERT_EQ(mgMalloc(&p, 10 * sizeof(float)), mgSuccess);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_TRUE(std::isnan(p[9]));
  EXPECT_EQ(mgFree(p), mgSuccess);
}

// Progress flags between co-resident blocks (mgLaunchCoResident): a pipeline of 6 blocks over 40
// steps, each block waiting on its predecessor, matches the sequential recurrence; whatever the
// thread and block order (the MG_EMU_ORDER runs of this test) and however few OS threads the pool
// has (every block gets its own), it neither hangs nor differs.
TEST(GpuEmu, CoResidentBlocksWaitOnProgressFlags) {
  const int blocks = 6, steps = 40;
  std::vector<float> out;
  ASSERT_EQ(runFlagPipeline(blocks, steps, false, true, out), mgSuccess) << lastErrorText(mgGetLastError());
  std::vector<float> ref(blocks * steps);
  for (int k = 0; k < blocks; ++k) {
    float carry = 0.f;
    for (int s = 0; s < steps; ++s) {
      const float in = k > 0 ? ref[(k - 1) * steps + s] : 1.f;
      carry = carry * 0.5f + in * 2.f + float(k + s);
      ref[k * steps + s] = carry;
    }
  }
  EXPECT_EQ(out, ref);
  const int pool = mg_emu::threadCount();
  mg_emu::setThreadCount(1);
  std::vector<float> one;
  EXPECT_EQ(runFlagPipeline(blocks, steps, false, true, one), mgSuccess);
  mg_emu::setThreadCount(pool);
  EXPECT_EQ(one, ref);
}

// A cycle of waits (every block waits on the next one's flag) can never progress: the launch
// fails with a deadlock message naming the waits instead of hanging. A wait in a plain launch is
// refused (its blocks are not all resident), and a grid larger than the device holds is refused
// as CUDA refuses a cooperative launch.
TEST(GpuEmu, ProgressFlagDeadlockIsReportedNotHung) {
  std::vector<float> out;
  mgError_t e = runFlagPipeline(4, 5, true, true, out);
  ASSERT_EQ(e, mgErrorLaunchFailure);
  std::string msg = lastErrorText(e);
  EXPECT_NE(msg.find("deadlock: every live block of the co-resident grid waits on a progress flag"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("flagPipeline"), std::string::npos) << msg;
  EXPECT_NE(msg.find("to reach 1 (it holds 0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4 block(s) waiting"), std::string::npos) << msg;
  mgGetLastError();
  EXPECT_EQ(mgDeviceSynchronize(), mgErrorLaunchFailure);

  e = runFlagPipeline(4, 5, false, false, out);
  ASSERT_EQ(e, mgErrorLaunchFailure);
  msg = lastErrorText(e);
  EXPECT_NE(msg.find("mgFlagWait outside a co-resident launch"), std::string::npos) << msg;
  mgGetLastError();
  mgDeviceSynchronize();

  // 64-thread blocks: 32 per SM, 132 SMs.
  EXPECT_EQ(mg_emu::coResidentCapacity(64, 0), 32u * 132u);
  e = runFlagPipeline(32 * 132 + 1, 1, false, true, out);
  ASSERT_EQ(e, mgErrorCooperativeLaunchTooLarge);
  msg = lastErrorText(e);
  EXPECT_NE(msg.find("the device holds 4224 such blocks at once"), std::string::npos) << msg;
  mgGetLastError();
  mgDeviceSynchronize();
  // Usable afterwards.
  ASSERT_EQ(runFlagPipeline(3, 4, false, true, out), mgSuccess);
}

}  // namespace
