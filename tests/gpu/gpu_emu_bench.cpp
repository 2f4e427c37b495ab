// Micro-benchmark of the CPU emulation of GPU kernels: the 256^3 tiled matmul of docs/DESIGN.md
// ("Testing without a GPU": 16x16 blocks, two barriers per tile, 28 MFLOP/s on ucontext fibers,
// 119 MFLOP/s on Boost.Context), in MFLOP/s, on one OS thread and on all of them. Also the same
// product without barriers through mgLaunchNoSync (plain loops, no fibers) for comparison.
// Prints figures, asserts no time; fails only when a result is wrong.
//   usage: gpu_emu_bench [size=256] [repeats=5]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "gpu_test_host.cuh"

namespace {

bool matches(const std::vector<float>& got, const std::vector<float>& ref) {
  for (size_t i = 0; i < ref.size(); ++i)
    if (std::fabs(got[i] - ref[i]) > 1e-3f * (1.0f + std::fabs(ref[i]))) {
      std::fprintf(stderr, "mismatch at %zu: %g vs %g\n", i, double(got[i]), double(ref[i]));
      return false;
    }
  return true;
}

// Best of `repeats` runs of the kernel alone (the data stay on the "device").
template <typename Launch>
double bestSeconds(int repeats, Launch launch) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (launch() != mgSuccess) return -1;
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> A(size_t(n) * n), B(size_t(n) * n), ref(size_t(n) * n, 0.0f), C;
  for (float& v : A) v = d(rng);
  for (float& v : B) v = d(rng);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) ref[size_t(i) * n + j] += A[size_t(i) * n + k] * B[size_t(k) * n + j];

  DeviceBuffer<float> dA(A.size()), dB(B.size()), dC(A.size());
  if (dA.upload(A, nullptr) != mgSuccess || dB.upload(B, nullptr) != mgSuccess) return 1;
  const dim3 block(16, 16), grid(ceilDiv(n, 16), ceilDiv(n, 16));
  const double flops = 2.0 * n * n * n;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("GPU emulation, %dx%dx%d matmul, 16x16 blocks, best of %d\n", n, n, n, repeats);
  bool ok = true;
  for (int threads : {1, cores}) {
    mg_emu::setThreadCount(threads);
    double tiled = bestSeconds(repeats, [&] {
      return mgLaunch(matmulTiled<16>, grid, block, 0, nullptr, dA.get(), dB.get(), dC.get(), n,
                      n, n);
    });
    ok &= tiled > 0 && dC.download(C, nullptr) == mgSuccess && matches(C, ref);
    double plain = bestSeconds(repeats, [&] {
      return mgLaunchNoSync(matmulNaive, grid, block, 0, nullptr, dA.get(), dB.get(), dC.get(), n,
                            n, n);
    });
    ok &= plain > 0 && dC.download(C, nullptr) == mgSuccess && matches(C, ref);
    std::printf("  %d OS thread(s): tiled, fibers, 2 barriers/tile: %8.1f MFLOP/s"
                "   naive, mgLaunchNoSync: %8.1f MFLOP/s\n",
                threads, flops / tiled * 1e-6, flops / plain * 1e-6);
    if (threads == cores) break;
  }
  if (!ok) std::printf("FAILED: wrong result\n");
  return ok ? 0 : 1;
}
