// The machine probes of the profile's roofline columns (mg_roofline.h says what they measure).
#include "mg_roofline.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include "mg_runtime.h"

namespace mgrt {
namespace {

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// kAcc independent accumulators hide the FMA latency (4 cycles, 2 ports: 8 in flight at least).
constexpr int kAcc = 12;

#if defined(__AVX512F__)
constexpr int kLanes = 16;
__attribute__((noinline)) float fmaLoop(int64_t iters, float seed) {
  __m512 acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_set1_ps(seed + 0.001f * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  __m512 s = acc[0];
  for (int k = 1; k < kAcc; ++k) s = _mm512_add_ps(s, acc[k]);
  return _mm512_reduce_add_ps(s);
}
#elif defined(__FMA__)
constexpr int kLanes = 8;
__attribute__((noinline)) float fmaLoop(int64_t iters, float seed) {
  __m256 acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = _mm256_set1_ps(seed + 0.001f * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  float out[8];
  __m256 s = acc[0];
  for (int k = 1; k < kAcc; ++k) s = _mm256_add_ps(s, acc[k]);
  _mm256_storeu_ps(out, s);
  float t = 0;
  for (float v : out) t += v;
  return t;
}
#else
// No FMA instructions known to this build: plain 4-lane vectors, multiply then add (what the
// compiler makes of them is this build's roof).
constexpr int kLanes = 4;
typedef float V4 __attribute__((vector_size(16)));
__attribute__((noinline)) float fmaLoop(int64_t iters, float seed) {
  V4 acc[kAcc];
  for (int k = 0; k < kAcc; ++k) acc[k] = V4{} + (seed + 0.001f * static_cast<float>(k));
  const V4 a = V4{} + 0.9999f, b = V4{} + 1e-7f;
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kAcc; ++k) acc[k] = acc[k] * a + b;
  float t = 0;
  for (int k = 0; k < kAcc; ++k)
    for (int l = 0; l < 4; ++l) t += acc[k][l];
  return t;
}
#endif

volatile float gSink;
// The loop's count through a volatile: a count the compiler knows lets it fold the loop away.
volatile int64_t gIters;

double probeFma() {
  // Grow the loop until one run takes >= 2 ms, then take the best of three.
  int64_t iters = 1 << 14;
  double best = 0;
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto t0 = std::chrono::steady_clock::now();
    gIters = iters;
    gSink = fmaLoop(gIters, 1.0f);
    const double s = seconds(t0);
    if (s >= 2e-3) {
      best = s;
      for (int r = 0; r < 2; ++r) {
        t0 = std::chrono::steady_clock::now();
        gSink = fmaLoop(gIters, 1.0f + 0.5f * static_cast<float>(r));
        best = std::min(best, seconds(t0));
      }
      break;
    }
    iters *= 2;
  }
  if (best <= 0) return 0;
  const double flops = 2.0 * kLanes * kAcc * static_cast<double>(iters);
  return flops / best * 1e-9;
}

double probeBandwidth(ThreadPool* pool) {
  constexpr int64_t kFloats = int64_t{8} << 20;  // 32 MB per array
  std::unique_ptr<float[]> a(new (std::nothrow) float[kFloats]), b(new (std::nothrow) float[kFloats]),
      c(new (std::nothrow) float[kFloats]);
  if (!a || !b || !c) return 0;
  float* pa = a.get();
  const float* pb = b.get();
  const float* pc = c.get();
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = kFloats / kChunk;
  // First touch by the threads that will stream them (pages mapped, caches warm on the TLB side).
  parallelFor(pool, chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t i = cb * kChunk; i < ce * kChunk; ++i) a[i] = 0.0f, b[i] = 1.0f, c[i] = 2.0f;
  });
  double best = 0;
  for (int pass = 0; pass < 4; ++pass) {
    const float s = 0.5f + static_cast<float>(pass);
    auto t0 = std::chrono::steady_clock::now();
    parallelFor(pool, chunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t i = cb * kChunk; i < ce * kChunk; ++i) pa[i] = pb[i] + s * pc[i];
    });
    const double t = seconds(t0);
    if (pass > 0 && (best == 0 || t < best)) best = t;
  }
  gSink = pa[kFloats / 3];
  return best > 0 ? 3.0 * 4.0 * static_cast<double>(kFloats) / best * 1e-9 : 0;
}

}  // namespace

MachinePeaks probeMachinePeaks(ThreadPool* pool) {
  MachinePeaks m;
  m.vectorFloats = kLanes;
  m.fmaGflopsPerThread = probeFma();
  m.bandwidthGbs = probeBandwidth(pool);
  return m;
}

}  // namespace mgrt
