// kernel_bench: measures the optimized CPU kernels (runtime/cpu/f_*.cpp) the way generated packages
// build them (-O3 -march=native): this core's FMA peak, SGEMM GFLOP/s on 1 and 2 threads, and
// ResNet-50 / Inception / MobileNet conv layers and pools against the reference kernels (when the
// reference table has them), with the max difference between the two as a sanity check.
//   kernel_bench [--threads N] [--reps N] [--no-ref] [--only SUBSTRING] [--cpu-time] [--cold] [--residual]
// --threads 1 --cpu-time times by thread CPU time (meaningful on a shared, loaded machine).
//   kernel_bench --gemm M N K [--reps N]   (one single-thread SGEMM, for perf stat -e cycles)
//   kernel_bench --qconv [--threads N] [--only SUBSTRING]   (the int8 QLinearConv kernel on
//                ResNet-18's layers, against the core's measured vpdpbusd peak)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#include "f_gemm.h"
#include "k_nn_shapes.h"
#include "mg_kernels.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the calling thread: on a loaded machine, single-thread timings by this clock leave
// out the time the thread was preempted (wall-clock best-of-N cannot for runs longer than a slice).
double threadCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
bool gCpuClock = false;  // --cpu-time: single-thread runs timed by threadCpuNow
bool gResidual = false;  // --residual: convolutions add an in-place residual (the output buffer)
double gPeak = 0;         // this core's measured FMA peak, GFLOP/s (main, before the benchmarks)
bool gCold = false;      // --cold: caches flushed before every timed run (weights from memory, as in a model)

// Reads and writes 64 MB (past this machine's caches) so the next run starts with cold caches.
void flushCaches() {
  static std::vector<char> junk(64 << 20);
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + 1);
}

// Best-of-reps seconds of fn (wall clock, or thread CPU time when single-threaded and gCpuClock).
double timeIt(int reps, const std::function<void()>& fn, bool singleThread = false) {
  fn();  // warm up
  double (*clock)() = gCpuClock && singleThread ? threadCpuNow : now;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    if (gCold) flushCaches();
    double t = clock();
    fn();
    best = std::min(best, clock() - t);
  }
  return best;
}

// FMA throughput of one core: 16 independent accumulator chains.
double peakGflops() {
#if defined(__AVX512F__)
  typedef __m512 V;
  const int lanes = 16;
#define MG_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define MG_SET(x) _mm512_set1_ps(x)
#elif defined(__AVX__) && defined(__FMA__)
  typedef __m256 V;
  const int lanes = 8;
#define MG_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define MG_SET(x) _mm256_set1_ps(x)
#else
  return 0.0;
#endif
#if defined(__AVX512F__) || (defined(__AVX__) && defined(__FMA__))
  V m = MG_SET(0.9999f), c = MG_SET(1e-7f);
  V a0 = MG_SET(0.f), a1 = MG_SET(.1f), a2 = MG_SET(.2f), a3 = MG_SET(.3f), a4 = MG_SET(.4f), a5 = MG_SET(.5f);
  V a6 = MG_SET(.6f), a7 = MG_SET(.7f), a8 = MG_SET(.8f), a9 = MG_SET(.9f), a10 = MG_SET(1.f), a11 = MG_SET(1.1f);
  const int64_t iters = 1000000;
  double t = 1e30;
  for (int rep = 0; rep < 30; ++rep) {  // best of 30 short runs: robust to other load on the core
    double t0 = gCpuClock ? threadCpuNow() : now();
    for (int64_t it = 0; it < iters; ++it) {
      a0 = MG_FMA(a0, m, c); a1 = MG_FMA(a1, m, c); a2 = MG_FMA(a2, m, c); a3 = MG_FMA(a3, m, c);
      a4 = MG_FMA(a4, m, c); a5 = MG_FMA(a5, m, c); a6 = MG_FMA(a6, m, c); a7 = MG_FMA(a7, m, c);
      a8 = MG_FMA(a8, m, c); a9 = MG_FMA(a9, m, c); a10 = MG_FMA(a10, m, c); a11 = MG_FMA(a11, m, c);
    }
    t = std::min(t, (gCpuClock ? threadCpuNow() : now()) - t0);
  }
  V sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  float tmp[16];
  std::memcpy(tmp, &sum, sizeof(float) * lanes);
  if (tmp[0] == 12345.f) std::printf(" ");
  return 2.0 * lanes * 12 * iters / t / 1e9;
#endif
}

// vpdpbusd throughput of one core (12 independent chains), in int8 multiply-adds per second.
double vnniPeakGmacs() {
#if defined(__AVX512VNNI__)
  __m512i a0 = _mm512_set1_epi32(0), a1 = _mm512_set1_epi32(1), a2 = _mm512_set1_epi32(2), a3 = _mm512_set1_epi32(3);
  __m512i a4 = _mm512_set1_epi32(4), a5 = _mm512_set1_epi32(5), a6 = _mm512_set1_epi32(6), a7 = _mm512_set1_epi32(7);
  __m512i a8 = _mm512_set1_epi32(8), a9 = _mm512_set1_epi32(9), a10 = _mm512_set1_epi32(10), a11 = _mm512_set1_epi32(11);
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  const int64_t iters = 1000000;
  double t = 1e30;
  for (int rep = 0; rep < 20; ++rep) {
    double t0 = gCpuClock ? threadCpuNow() : now();
    for (int64_t it = 0; it < iters; ++it) {
#define MG_DP(v) v = _mm512_dpbusd_epi32(v, x, y)
      MG_DP(a0); MG_DP(a1); MG_DP(a2); MG_DP(a3); MG_DP(a4); MG_DP(a5);
      MG_DP(a6); MG_DP(a7); MG_DP(a8); MG_DP(a9); MG_DP(a10); MG_DP(a11);
#undef MG_DP
    }
    t = std::min(t, (gCpuClock ? threadCpuNow() : now()) - t0);
  }
  __m512i sumv = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                                  _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
  sumv = _mm512_add_epi32(sumv, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)));
  if (_mm512_reduce_add_epi32(sumv) == 12345) std::printf(" ");
  return 64.0 * 12 * iters / t / 1e9;
#else
  return 0.0;
#endif
}

// One QLinearConv layer (uint8 x int8, per-channel scales, int32 bias) through the fast kernel,
// weights packed once (a step state), as in a model. depthwise: group = c = m (f_qconv_dw.cpp, float
// FMAs, not vpdpbusd: its rate is given as bytes in and out per second).
void benchQConv(const char* name, int64_t c, int64_t hw, int64_t m, int64_t k, int64_t stride, bool depthwise,
                mgrt::ThreadPool* pool, int reps, double peak) {
  const int64_t cg = depthwise ? 1 : c;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t pad = k / 2, ohw = (hw + 2 * pad - k) / stride + 1;
  std::vector<uint8_t> x(c * hw * hw), w(m * cg * k * k), y(m * ohw * ohw);
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng) / 2 - 64);
  std::vector<float> xs = {0.02f}, ws(m, 0.003f), ys = {0.5f};
  std::vector<uint8_t> xz = {120}, wz(m, 0), yz = {3};
  std::vector<int32_t> bias(m, 77);
  auto T = [](void* d, std::vector<int64_t> dims, int32_t dt) {
    mgrt::Tensor t;
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
    t.data = d;
    t.dtype = dt;
    return t;
  };
  mgrt::Tensor in[9] = {T(x.data(), {1, c, hw, hw}, mgrt::kU8), T(xs.data(), {}, mgrt::kF32), T(xz.data(), {}, mgrt::kU8),
                        T(w.data(), {m, cg, k, k}, mgrt::kI8), T(ws.data(), {m}, mgrt::kF32), T(wz.data(), {m}, mgrt::kI8),
                        T(ys.data(), {}, mgrt::kF32), T(yz.data(), {}, mgrt::kU8), T(bias.data(), {m}, mgrt::kI32)};
  mgrt::Tensor out = T(y.data(), {1, m, ohw, ohw}, mgrt::kU8);
  const std::string at = "strides=i:" + std::to_string(stride) + "," + std::to_string(stride) + ";pads=i:" +
                         std::to_string(pad) + "," + std::to_string(pad) + "," + std::to_string(pad) + "," +
                         std::to_string(pad) + ";group=i:" + std::to_string(depthwise ? c : 1);
  mgrt::Attrs a(at.c_str());
  mgrt::StepState state;
  mgrt::Ctx ctx;
  ctx.pool = pool;
  ctx.state = &state;
  ctx.constInputs = 1u << 3;
  const mgrt::KernelFn f = mgrt::findFastKernel("QLinearConv");
  const double t = timeIt(reps, [&] { f(a, in, 9, &out, 1, ctx); }, pool == nullptr);
  const double macs = double(m) * cg * k * k * ohw * ohw;
  if (depthwise) {
    std::printf("qconv %-28s %8.3f ms %7.1f GMAC/s  %5.1f GB/s in and out\n", name, t * 1e3, macs / t / 1e9,
                double(x.size() + y.size()) / t / 1e9);
    return;
  }
  std::printf("qconv %-28s %8.3f ms %7.1f GMAC/s  %3.0f%% of the vpdpbusd peak\n", name, t * 1e3, macs / t / 1e9,
              peak > 0 ? 100.0 * macs / t / 1e9 / peak : 0.0);
}

struct Buf {
  std::vector<float> v;
  mgrt::Tensor t;
  explicit Buf(std::vector<int64_t> dims, std::mt19937& rng) {
    t.rank = static_cast<int>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    v.resize(n);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    for (auto& x : v) x = d(rng);
    t.data = v.data();
    t.dtype = mgrt::kF32;
  }
};

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(b[i])));
  return m;
}

void benchGemm(int64_t M, int64_t N, int64_t K, mgrt::ThreadPool* p1, mgrt::ThreadPool* p2, int reps) {
  std::mt19937 rng(7);
  Buf A({M, K}, rng), B({K, N}, rng), C({M, N}, rng);
  mgrt::fast::GemmSpec s;
  s.m = M, s.n = N, s.k = K;
  s.a = {A.v.data(), K, 1};
  s.b = {B.v.data(), N, 1};
  s.c = C.v.data();
  s.ldc = N;
  double flops = 2.0 * M * N * K;
  double t1 = timeIt(reps, [&] { mgrt::fast::sgemm(s, p1); }, true);
  double t2 = timeIt(reps, [&] { mgrt::fast::sgemm(s, p2); });
  std::printf("sgemm %5lldx%5lldx%5lld   1 thread %7.1f GFLOP/s   %d threads %7.1f GFLOP/s\n",
              (long long)M, (long long)N, (long long)K, flops / t1 / 1e9, p2 ? p2->threads() : 1,
              flops / t2 / 1e9);
}

struct ConvLayer {
  const char* name;
  int64_t n, c, h, w, m, kh, kw, group, s, pt, pl;
};

void benchConv(const ConvLayer& L, mgrt::ThreadPool* pool, int reps, bool ref) {
  std::mt19937 rng(8);
  int64_t oh = (L.h + 2 * L.pt - L.kh) / L.s + 1, ow = (L.w + 2 * L.pl - L.kw) / L.s + 1;
  Buf X({L.n, L.c, L.h, L.w}, rng), W({L.m, L.c / L.group, L.kh, L.kw}, rng), B({L.m}, rng);
  Buf Y({L.n, L.m, oh, ow}, rng), Yr({L.n, L.m, oh, ow}, rng);
  char spec[256];
  std::snprintf(spec, sizeof(spec), "group=i:%lld;strides=i:%lld,%lld;pads=i:%lld,%lld,%lld,%lld;mg_act=s:Relu",
                (long long)L.group, (long long)L.s, (long long)L.s, (long long)L.pt, (long long)L.pl,
                (long long)L.pt, (long long)L.pl);
  mgrt::Attrs a(spec);
  mgrt::Tensor in[4] = {X.t, W.t, B.t, Y.t};
  const int nin = gResidual ? 4 : 3;
  mgrt::Ctx ctx;
  ctx.pool = pool;
  // As in a compiled model: the weights and bias are constants, packed once into the step's state
  // on the first (warm-up) call.
  mgrt::StepState state;
  ctx.state = &state;
  ctx.constInputs = 0x6;
  double flops = 2.0 * L.n * L.m * oh * ow * (L.c / L.group) * L.kh * L.kw;
  double tf = timeIt(reps, [&] { mgrt::fConv(a, in, nin, &Y.t, 1, ctx); }, !pool);
  // % of the FMA peak of the threads the conv ran on (the pool's, or this one).
  const int used = pool ? pool->threads() : 1;
  std::printf("conv %-28s fast %8.3f ms %7.1f GFLOP/s %3.0f%% of peak", L.name, tf * 1e3, flops / tf / 1e9,
              gPeak > 0 ? 100.0 * flops / tf / 1e9 / (gPeak * used) : 0.0);
  mgrt::KernelFn rk = ref && !gResidual ? mgrt::findKernel("Conv") : nullptr;  // (ref: no residual)
  if (rk) {
    mgrt::Ctx rctx;
    rctx.pool = nullptr;
    double (*clock)() = gCpuClock ? threadCpuNow : now;
    double t = clock();
    int rc = rk(a, in, 3, &Yr.t, 1, rctx);
    double tr = clock() - t;
    if (rc == 0)
      std::printf("   ref %9.2f ms  speedup %6.1fx  maxdiff %.1e", tr * 1e3, tr / tf, maxDiff(Y.v, Yr.v));
    else
      std::printf("   ref failed: %s", rctx.error);
  }
  std::printf("\n");
}

void benchPool(const char* op, int64_t c, int64_t hw, int64_t k, int64_t s, int64_t pad,
               mgrt::ThreadPool* pool, int reps, bool ref) {
  std::mt19937 rng(9);
  int64_t o = (hw + 2 * pad - k) / s + 1;
  Buf X({1, c, hw, hw}, rng), Y({1, c, o, o}, rng), Yr({1, c, o, o}, rng);
  char spec[200];
  std::snprintf(spec, sizeof(spec), "kernel_shape=i:%lld,%lld;strides=i:%lld,%lld;pads=i:%lld,%lld,%lld,%lld",
                (long long)k, (long long)k, (long long)s, (long long)s, (long long)pad, (long long)pad,
                (long long)pad, (long long)pad);
  mgrt::Attrs a(spec);
  mgrt::Ctx ctx;
  ctx.pool = pool;
  mgrt::KernelFn f = mgrt::findFastKernel(op);
  double tf = timeIt(reps, [&] { f(a, &X.t, 1, &Y.t, 1, ctx); }, !pool);
  std::printf("%-12s %lldx%lldx%lld k%lld s%lld    fast %8.3f ms", op, (long long)c, (long long)hw,
              (long long)hw, (long long)k, (long long)s, tf * 1e3);
  mgrt::KernelFn rk = ref ? mgrt::findKernel(op) : nullptr;
  if (rk) {
    mgrt::Ctx rctx;
    double (*clock)() = gCpuClock ? threadCpuNow : now;
    double t = clock();
    int rc = rk(a, &X.t, 1, &Yr.t, 1, rctx);
    double tr = clock() - t;
    if (rc == 0) std::printf("   ref %8.2f ms  speedup %5.1fx  maxdiff %.1e", tr * 1e3, tr / tf, maxDiff(Y.v, Yr.v));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 5;
  bool ref = true;
  std::string only;
  int gemm = 0;
  bool qconv = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-ref")) ref = false;
    else if (!std::strcmp(argv[i], "--cpu-time")) gCpuClock = true;
    else if (!std::strcmp(argv[i], "--cold")) gCold = true;
    else if (!std::strcmp(argv[i], "--residual")) gResidual = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--gemm") && i + 3 < argc) gemm = i, i += 3;
    else if (!std::strcmp(argv[i], "--qconv")) qconv = true;
  }
  if (qconv) {
    const double peak = vnniPeakGmacs() * (threads > 1 ? threads : 1);
    std::printf("measured vpdpbusd peak %.1f GMAC/s on %d thread(s)\n", peak, threads);
    std::unique_ptr<mgrt::ThreadPool> pool;
    if (threads > 1) pool = std::make_unique<mgrt::ThreadPool>(threads);
    struct Q { const char* name; int64_t c, hw, m, k, stride; bool dw = false; };
    const Q layers[] = {{"resnet18 conv1 7x7/2 3->64", 3, 224, 64, 7, 2},   {"resnet18 3x3 64 @56", 64, 56, 64, 3, 1},
                        {"resnet18 3x3/2 64->128 @56", 64, 56, 128, 3, 2}, {"resnet18 3x3 128 @28", 128, 28, 128, 3, 1},
                        {"resnet18 3x3 256 @14", 256, 14, 256, 3, 1},      {"resnet18 3x3 512 @7", 512, 7, 512, 3, 1},
                        {"resnet18 1x1/2 256->512 @14", 256, 14, 512, 1, 2},
                        {"mobilenet_v2 1x1 96->576 @14", 96, 14, 576, 1, 1},
                        {"mobilenet_v2 1x1 576->96 @14", 576, 14, 96, 1, 1},
                        {"mobilenet_v2 1x1 960->160 @7", 960, 7, 160, 1, 1},
                        {"mobilenet_v2 1x1 16->96 @112", 16, 112, 96, 1, 1},
                        {"mobilenet_v2 1x1 144->24 @56", 144, 56, 24, 1, 1},
                        {"mobilenet_v2 dw3x3 32 @112", 32, 112, 32, 3, 1, true},
                        {"mobilenet_v2 dw3x3/2 96 @112", 96, 112, 96, 3, 2, true},
                        {"mobilenet_v2 dw3x3 144 @56", 144, 56, 144, 3, 1, true},
                        {"mobilenet_v2 dw3x3 384 @14", 384, 14, 384, 3, 1, true},
                        {"mobilenet_v2 dw3x3 960 @7", 960, 7, 960, 3, 1, true},
                        {"efficientnet dw5x5/2 144 @56", 144, 56, 144, 5, 2, true}};
    for (const Q& l : layers)
      if (only.empty() || std::string(l.name).find(only) != std::string::npos)
        benchQConv(l.name, l.c, l.hw, l.m, l.k, l.stride, l.dw, pool.get(), reps, peak);
    return 0;
  }
  if (gemm) {
    int64_t M = std::atoll(argv[gemm + 1]), N = std::atoll(argv[gemm + 2]), K = std::atoll(argv[gemm + 3]);
    std::mt19937 rng(7);
    Buf A({M, K}, rng), B({K, N}, rng), C({M, N}, rng);
    mgrt::fast::GemmSpec s;
    s.m = M, s.n = N, s.k = K;
    s.a = {A.v.data(), K, 1};
    s.b = {B.v.data(), N, 1};
    s.c = C.v.data();
    s.ldc = N;
    double t = timeIt(reps, [&] { mgrt::fast::sgemm(s, nullptr); }, true);
    std::printf("sgemm %lldx%lldx%lld: %.1f GFLOP/s (best of %d), %.3g flop per run\n", (long long)M,
                (long long)N, (long long)K, 2.0 * M * N * K / t / 1e9, reps, 2.0 * M * N * K);
    return 0;
  }
  gPeak = peakGflops();
  std::printf("micro-kernel %dx%d; measured single-core FMA peak %.1f GFLOP/s\n", mgrt::fast::gemmMR(),
              mgrt::fast::gemmNR(), gPeak);
  std::unique_ptr<mgrt::ThreadPool> p2;
  if (threads > 1) p2 = std::make_unique<mgrt::ThreadPool>(threads);
  if (only.empty() || only == "sgemm") {
    benchGemm(512, 512, 512, nullptr, p2.get(), reps);
    benchGemm(1024, 1024, 1024, nullptr, p2.get(), reps);
    benchGemm(256, 3136, 64, nullptr, p2.get(), reps);
    benchGemm(1, 1000, 2048, nullptr, p2.get(), reps);
  }
  const ConvLayer layers[] = {
      {"resnet conv1 7x7/2 3->64", 1, 3, 224, 224, 64, 7, 7, 1, 2, 3, 3},
      {"resnet 1x1 64->64 @56", 1, 64, 56, 56, 64, 1, 1, 1, 1, 0, 0},
      {"resnet 3x3 64->64 @56", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1},
      {"resnet 1x1 64->256 @56", 1, 64, 56, 56, 256, 1, 1, 1, 1, 0, 0},
      {"resnet 3x3/2 128 @56", 1, 128, 56, 56, 128, 3, 3, 1, 2, 1, 1},
      {"resnet 1x1/2 256->512 @56", 1, 256, 56, 56, 512, 1, 1, 1, 2, 0, 0},
      {"resnet 1x1/2 1024->2048 @14", 1, 1024, 14, 14, 2048, 1, 1, 1, 2, 0, 0},
      {"resnet 3x3 256->256 @14", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1},
      {"resnet 1x1 1024->256 @14", 1, 1024, 14, 14, 256, 1, 1, 1, 1, 0, 0},
      {"resnet 3x3 512->512 @7", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1},
      {"inception 5x5 48->64 @35", 1, 48, 35, 35, 64, 5, 5, 1, 1, 2, 2},
      {"densenet 3x3 128->32 @56", 1, 128, 56, 56, 32, 3, 3, 1, 1, 1, 1},
      {"densenet 3x3 128->32 @14", 1, 128, 14, 14, 32, 3, 3, 1, 1, 1, 1},
      {"densenet 1x1 512->128 @28", 1, 512, 28, 28, 128, 1, 1, 1, 1, 0, 0},
      {"squeezenet 3x3 16->64 @55", 1, 16, 55, 55, 64, 3, 3, 1, 1, 1, 1},
      {"squeezenet 3x3 32->128 @27", 1, 32, 27, 27, 128, 3, 3, 1, 1, 1, 1},
      {"squeezenet 3x3 64->256 @13", 1, 64, 13, 13, 256, 3, 3, 1, 1, 1, 1},
      {"squeezenet 1x1 512->1000 @13", 1, 512, 13, 13, 1000, 1, 1, 1, 1, 0, 0},
      {"inception 3x3 64->96 @35", 1, 64, 35, 35, 96, 3, 3, 1, 1, 1, 1},
      {"inception 3x3 32->32 @147", 1, 32, 149, 149, 32, 3, 3, 1, 1, 0, 0},
      {"inception 1x7 128->128 @17", 1, 128, 17, 17, 128, 1, 7, 1, 1, 0, 3},
      {"resnext 3x3 g32 256 @28", 1, 256, 28, 28, 256, 3, 3, 32, 1, 1, 1},
      {"resnext 3x3 g32 128 @56", 1, 128, 56, 56, 128, 3, 3, 32, 1, 1, 1},
      {"resnext 3x3 g32 512 @14", 1, 512, 14, 14, 512, 3, 3, 32, 1, 1, 1},
      {"resnext 3x3 g32 1024 @7", 1, 1024, 7, 7, 1024, 3, 3, 32, 1, 1, 1},
      {"regnet 3x3/2 g2 32 @112", 1, 32, 112, 112, 32, 3, 3, 2, 2, 1, 1},
      {"regnet 3x3/2 g25 400 @14", 1, 400, 14, 14, 400, 3, 3, 25, 2, 1, 1},
      {"regnet 3x3 g25 400 @7", 1, 400, 7, 7, 400, 3, 3, 25, 1, 1, 1},
      {"mobilenet dw3x3 32 @112", 1, 32, 112, 112, 32, 3, 3, 32, 1, 1, 1},
      {"mobilenet dw3x3/2 64 @112", 1, 64, 112, 112, 64, 3, 3, 64, 2, 1, 1},
      {"vgg 3x3 128->128 @112", 1, 128, 112, 112, 128, 3, 3, 1, 1, 1, 1},
      {"vgg 3x3 256->256 @56", 1, 256, 56, 56, 256, 3, 3, 1, 1, 1, 1},
      {"mnasnet 1x1 320->1280 @7", 1, 320, 7, 7, 1280, 1, 1, 1, 1, 0, 0},
      {"densenet 3x3 128->32 @56", 1, 128, 56, 56, 32, 3, 3, 1, 1, 1, 1},
      {"densenet 3x3 128->32 @14", 1, 128, 14, 14, 32, 3, 3, 1, 1, 1, 1},
      {"inception 3x3 64->96 @35", 1, 64, 35, 35, 96, 3, 3, 1, 1, 1, 1},
      {"deepspeech2 41x11/2 1->32", 1, 1, 161, 200, 32, 41, 11, 1, 2, 20, 5},
      {"stft 1x512/160 1->257 @48512", 1, 1, 1, 48512, 257, 1, 512, 1, 160, 0, 0},  // issue #41
      {"stft 1x2048/512 1->1025 @50048", 1, 1, 1, 50048, 1025, 1, 2048, 1, 512, 0, 0},
      {"deepspeech2 21x11/2x1 32->32", 1, 32, 81, 100, 32, 21, 11, 1, 1, 10, 5},
      {"mnasnet 1x1 96->576 @14", 1, 96, 14, 14, 576, 1, 1, 1, 1, 0, 0},
      {"mnasnet dw5x5 576 @14", 1, 576, 14, 14, 576, 5, 5, 576, 1, 2, 2},
      {"mnasnet dw5x5/2 240 @28", 1, 240, 28, 28, 240, 5, 5, 240, 2, 2, 2},
      {"mnasnet dw3x3/2 144 @56", 1, 144, 56, 56, 144, 3, 3, 144, 2, 1, 1},
      {"mnasnet dw3x3 1152 @7", 1, 1152, 7, 7, 1152, 3, 3, 1152, 1, 1, 1},
      {"mnasnet dw5x5 1152 @7", 1, 1152, 7, 7, 1152, 5, 5, 1152, 1, 2, 2},
      {"mnasnet stem 3x3/2 3->32 @224", 1, 3, 224, 224, 32, 3, 3, 1, 2, 1, 1},
      {"squeezenet1_1 stem 3x3/2 3->64 @224", 1, 3, 224, 224, 64, 3, 3, 1, 2, 0, 0},
      {"mnasnet 1x1 24->72 @56", 1, 24, 56, 56, 72, 1, 1, 1, 1, 0, 0},
      {"mnasnet dw3x3 72 @56", 1, 72, 56, 56, 72, 3, 3, 72, 1, 1, 1},
      {"mnasnet 1x1 72->24 @56", 1, 72, 56, 56, 24, 1, 1, 1, 1, 0, 0},
      {"squeezenet stem 7x7/2 3->96 @224", 1, 3, 224, 224, 96, 7, 7, 1, 2, 0, 0},
      {"mobilenet_v3 stem 3x3/2 3->16 @224", 1, 3, 224, 224, 16, 3, 3, 1, 2, 1, 1},
      {"inception_v3 stem 3x3/2 3->32 @299", 1, 3, 299, 299, 32, 3, 3, 1, 2, 0, 0},
      {"vgg stem 3x3 3->64 @224", 1, 3, 224, 224, 64, 3, 3, 1, 1, 1, 1},
      {"alexnet stem 11x11/4 3->64 @224", 1, 3, 224, 224, 64, 11, 11, 1, 4, 2, 2},
      {"shufflenet stem 3x3/2 3->24 @224", 1, 3, 224, 224, 24, 3, 3, 1, 2, 1, 1},
      {"mnasnet 1x1 16->48 @112", 1, 16, 112, 112, 48, 1, 1, 1, 1, 0, 0},
      {"effnet 1x1 16->96 @112", 1, 16, 112, 112, 96, 1, 1, 1, 1, 0, 0},
      {"effnet 1x1 24->144 @56", 1, 24, 56, 56, 144, 1, 1, 1, 1, 0, 0},
      {"mnasnet 1x1 32->16 @112", 1, 32, 112, 112, 16, 1, 1, 1, 1, 0, 0},
      {"mnasnet 1x1 24->72 @56", 1, 24, 56, 56, 72, 1, 1, 1, 1, 0, 0},
      {"mnasnet 1x1 40->120 @28", 1, 40, 28, 28, 120, 1, 1, 1, 1, 0, 0},
      {"squeeze 1x1 128->16 @55", 1, 128, 55, 55, 16, 1, 1, 1, 1, 0, 0},
      {"squeeze 1x1 64->16 @55", 1, 64, 55, 55, 16, 1, 1, 1, 1, 0, 0},
      {"squeeze 1x1 256->32 @27", 1, 256, 27, 27, 32, 1, 1, 1, 1, 0, 0},
      {"squeeze 1x1 512->64 @13", 1, 512, 13, 13, 64, 1, 1, 1, 1, 0, 0},
      {"incv2 3x3 64->192 @56", 1, 64, 56, 56, 192, 3, 3, 1, 1, 1, 1},
      {"incv2 3x3 64->96 @28", 1, 64, 28, 28, 96, 3, 3, 1, 1, 1, 1},
      {"incv2 3x3 160->192 @14", 1, 160, 14, 14, 192, 3, 3, 1, 1, 1, 1},
      {"incv2 3x3 192->320 @7", 1, 192, 7, 7, 320, 3, 3, 1, 1, 1, 1},
      {"incv2 1x1 1024->352 @7", 1, 1024, 7, 7, 352, 1, 1, 1, 1, 0, 0},
      {"incv2 1x1 320->128 @28", 1, 320, 28, 28, 128, 1, 1, 1, 1, 0, 0},
  };
  for (const auto& L : layers)
    if (only.empty() || std::strstr(L.name, only.c_str())) benchConv(L, p2.get(), reps, ref);
  if (!only.empty() && only.find("pool") == std::string::npos) return 0;
  benchPool("MaxPool", 64, 112, 3, 2, 1, p2.get(), reps, ref);    // ResNet
  benchPool("MaxPool", 64, 111, 3, 2, 0, p2.get(), reps, ref);    // SqueezeNet 1.1
  benchPool("MaxPool", 64, 147, 3, 2, 0, p2.get(), reps, ref);    // Inception v3
  benchPool("AveragePool", 256, 35, 3, 1, 1, p2.get(), reps, ref);
  return 0;
}
