// SGEMM core (see f_gemm.h) and the fast Gemm / MatMul kernels built on it.
//
// Blocking: items of (MC x NC) output are the unit of threading; inside an item, K is walked in
// KC slices; for each slice the item's B block (KC x NC, NR-wide panels) and A block (MC x KC,
// MR-high panels) are packed into thread-local buffers, then the micro-kernel sweeps NR-wide B
// panels (kept in L1) against every MR-high A panel (streamed from L2). Partial sums of earlier K
// slices live in C itself; the epilogue (alpha, bias, residual, activation) runs in the write-back
// of the last slice. Small M or N (matrix-vector shapes) skip packing and use dot/axpy loops.
#include "f_gemm.h"
#include "f_vmath.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "mg_threadpool.h"

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#endif

namespace mgrt {
namespace fast {
namespace {

// ---- ISA-dependent register tile ----------------------------------------------------------------
#if defined(__AVX512F__)
constexpr int kW = 16;  // floats per vector
#ifndef MG_FAST_MR
#define MG_FAST_MR 8  // 8x32 measured faster than 12x32 and 14x32 on Sapphire Rapids (kernel_bench)
#endif
#elif defined(__AVX__)
constexpr int kW = 8;
#ifndef MG_FAST_MR
#define MG_FAST_MR 6
#endif
#else
constexpr int kW = 4;
#ifndef MG_FAST_MR
#define MG_FAST_MR 4
#endif
#endif
constexpr int kMR = MG_FAST_MR;
constexpr int kNV = 2;  // vectors per tile row
constexpr int kNR = kNV * kW;
#ifndef MG_FAST_KC
#define MG_FAST_KC 256  // K slice: a B panel of KC x NR floats stays in L1 across the A panels
#endif
constexpr int64_t kKC = MG_FAST_KC;
#ifndef MG_FAST_ROW_ORDER_MAX_K
#define MG_FAST_ROW_ORDER_MAX_K 128
#endif
constexpr int64_t kRowOrderMaxK = MG_FAST_ROW_ORDER_MAX_K;  // see runItem
constexpr int64_t kMC = 480;  // upper bound; blocks are re-rounded to a multiple of kMR
constexpr int64_t kNC = 1024;

typedef float VF __attribute__((vector_size(kW * 4)));
typedef float VFU __attribute__((vector_size(kW * 4), aligned(4), may_alias));

inline VF loadu(const float* p) { return *reinterpret_cast<const VFU*>(p); }
inline void storeu(float* p, VF v) { *reinterpret_cast<VFU*>(p) = v; }
inline VF splat(float x) {
#if defined(__AVX512F__)
  return (VF)_mm512_set1_ps(x);
#elif defined(__AVX__)
  return (VF)_mm256_set1_ps(x);
#else
  VF v;
  for (int l = 0; l < kW; ++l) v[l] = x;
  return v;
#endif
}
inline VF fmadd(VF a, VF b, VF c) {
#if defined(__AVX512F__)
  return (VF)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__AVX__) && defined(__FMA__)
  return (VF)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

Scratch& scratchA() {
  static thread_local Scratch s;
  return s;
}
Scratch& scratchB() {
  static thread_local Scratch s;
  return s;
}

struct TileCtx {
  const GemmSpec* s;
  bool first, last;
  bool accumulate;  // C holds an in-place residual: every K slice adds onto C (see sgemm)
};

// The first n (1..kW) lanes of p, zero beyond: nothing past p[n - 1] is read.
inline VF loadN(const float* p, int n) {
  if (n == kW) return loadu(p);
#if defined(__AVX512F__)
  return (VF)_mm512_maskz_loadu_ps(vm::tailMask(n), p);
#else
  VF v = VF{};
  for (int l = 0; l < n; ++l) v[l] = p[l];
  return v;
#endif
}

// The epilogue's operands as locals, read once per tile write-back: the stores to C could alias
// the spec's floats, and the compiler would reload them after every store.
struct EpiLocal {
  float alpha = 1.f, biasScale = 1.f;
  const float* bias = nullptr;
  int64_t brs = 0, bcs = 0;
  const float* res = nullptr;
  int64_t ldres = 0;
  float actAlpha = 0.f, actBeta = 0.f;
};

inline EpiLocal epiLocal(const GemmSpec& s) {
  EpiLocal e;
  e.alpha = s.alpha, e.biasScale = s.biasScale;
  e.bias = s.bias.p, e.brs = s.bias.rs, e.bcs = s.bias.cs;
  e.res = s.res, e.ldres = s.ldres;
  e.actAlpha = s.ep.alpha, e.actBeta = s.ep.beta;
  return e;
}

// alpha * x + biasScale * bias + residual for n (1..kW) consecutive outputs of one row (lanes past
// n are computed on zeros and never stored): epilogueAt's order, without the activation.
inline __attribute__((always_inline)) VF affineVec(const EpiLocal& e, VF x, int64_t row, int64_t col, int n) {
  if (e.alpha != 1.f) x *= e.alpha;
  if (e.bias) {
    const float* bp = e.bias + row * e.brs + col * e.bcs;
    if (e.bcs == 0) {
      x += splat(e.biasScale * bp[0]);
    } else if (e.bcs == 1) {
      x += e.biasScale * loadN(bp, n);
    } else {
      for (int l = 0; l < n; ++l) x[l] += e.biasScale * bp[l * e.bcs];
    }
  }
  if (e.res) x += loadN(e.res + row * e.ldres + col, n);
  return x;
}

// An activation applied in registers during the write-back (None, Relu, LeakyRelu, Clip; with
// AVX-512 also HardSigmoid and HardSwish: see writeBack); K is a constant, so vm::vecAct's switch
// folds away. The others run as one vector pass over each stored tile row (vm::actRow, the same
// vector formulas).
template <Act K>
inline __attribute__((always_inline)) VF actVec(const EpiLocal& e, VF x) {
  if constexpr (K == Act::kNone) {
    return x;
  } else {
    Epilogue ep;
    ep.act = K, ep.alpha = e.actAlpha, ep.beta = e.actBeta;
    vm::vecAct(ep, x);
    return x;
  }
}

// Stores an R x NR register tile (its valid mr x nr part) at c (row stride ldc), global position
// (i0, j0): adds the partial sums already in C unless t.first; with kLast, the epilogue (affine
// part and, in registers, activation K).
template <int R, bool kLast, Act K>
inline __attribute__((always_inline)) void storeTile(VF (&acc)[R][kNV], float* c, int64_t ldc, int64_t i0,
                                                     int64_t j0, int mr, int nr, const TileCtx& t,
                                                     const EpiLocal& e) {
  if (mr == R && nr == kNR) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      float* cr = c + i * ldc;
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) {
        VF x = acc[i][v];
        if (!t.first) x += loadu(cr + v * kW);
        if constexpr (kLast) x = actVec<K>(e, affineVec(e, x, i0 + i, j0 + v * kW, kW));
        storeu(cr + v * kW, x);
      }
    }
    return;
  }
#if defined(__AVX512F__)
  // A partial tile (the right or bottom edge of C): the same vector write-back under masks.
  for (int i = 0; i < mr; ++i) {
    float* cr = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) {
      const __mmask16 m = vm::tailMask(nr - v * kW);
      if (!m) break;
      VF x = acc[i][v];
      if (!t.first) x += (VF)_mm512_maskz_loadu_ps(m, cr + v * kW);
      if constexpr (kLast) x = actVec<K>(e, affineVec(e, x, i0 + i, j0 + v * kW, std::min(nr - v * kW, kW)));
      _mm512_mask_storeu_ps(cr + v * kW, m, (__m512)x);
    }
  }
#else
  alignas(64) float tile[R * kNR];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < kNV; ++v) storeu(tile + i * kNR + v * kW, acc[i][v]);
  for (int i = 0; i < mr; ++i) {
    float* cr = c + i * ldc;
    for (int v = 0; v * kW < nr; ++v) {
      const int n = std::min(nr - v * kW, kW);
      VF x = loadu(tile + i * kNR + v * kW);
      if (!t.first)
        for (int l = 0; l < n; ++l) x[l] += cr[v * kW + l];
      if constexpr (kLast) x = actVec<K>(e, affineVec(e, x, i0 + i, j0 + v * kW, n));
      for (int l = 0; l < n; ++l) cr[v * kW + l] = x[l];
    }
  }
#endif
}

// Write-back of an R x NR register tile (the valid mr x nr part) at c (row stride ldc), global
// position (i0, j0): adds the partial sums already in C unless t.first, applies the epilogue on
// t.last. Shared by the micro-kernel (R = MR) and the few-rows panel kernel (R = 1..4). The
// epilogue's operands are read once per tile and the activation is chosen once per tile (it was a
// call per vector, which also spilled the 16 accumulators around each call: a third of a 1x1
// 24->72 convolution's time).
template <int R>
inline __attribute__((always_inline)) void writeBack(VF (&acc)[R][kNV], float* c, int64_t ldc, int64_t i0,
                                                     int64_t j0, int mr, int nr, const TileCtx& t) {
  if (!t.last) return storeTile<R, false, Act::kNone>(acc, c, ldc, i0, j0, mr, nr, t, EpiLocal{});
  const EpiLocal e = epiLocal(*t.s);
  switch (t.s->ep.act) {
    case Act::kNone: return storeTile<R, true, Act::kNone>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kRelu: return storeTile<R, true, Act::kRelu>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kLeakyRelu: return storeTile<R, true, Act::kLeakyRelu>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kClip: return storeTile<R, true, Act::kClip>(acc, c, ldc, i0, j0, mr, nr, t, e);
#if defined(__AVX512F__)
    case Act::kHardSigmoid: return storeTile<R, true, Act::kHardSigmoid>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kHardSwish: return storeTile<R, true, Act::kHardSwish>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kSigmoid: return storeTile<R, true, Act::kSigmoid>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kSwish: return storeTile<R, true, Act::kSwish>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kTanh: return storeTile<R, true, Act::kTanh>(acc, c, ldc, i0, j0, mr, nr, t, e);
    case Act::kGelu: return storeTile<R, true, Act::kGelu>(acc, c, ldc, i0, j0, mr, nr, t, e);
#endif
    default:
      storeTile<R, true, Act::kNone>(acc, c, ldc, i0, j0, mr, nr, t, e);
      for (int i = 0; i < mr; ++i) vm::actRow(t.s->ep, c + i * ldc, c + i * ldc, nr);
  }
}

// The micro-kernel: acc[MR x NR] = sum over kc of a-panel column x b-panel row, then write-back of
// the valid mr x nr part at c (row stride ldc), global position (i0, j0).
void microKernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                 float* c, int64_t ldc, int64_t i0, int64_t j0, int mr, int nr, const TileCtx& t) {
  VF acc[kMR][kNV];
#pragma GCC unroll 16
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) acc[i][v] = VF{};
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    // A's panels may come from memory (a layer's pre-packed weights, on the first B panel) and
    // the hardware prefetchers stop at 4 KB pages: ask for the line 4 KB ahead, running into the
    // next panels (contiguous). Measured at 1 and 2 threads, A/B in alternating runs: mnasnet
    // 9.0 -> 8.5 ms, inception_v3 123 -> 113 ms and 73.4 -> 67.4 ms, light ResNet-50 98 -> 88 ms
    // and 54 -> 48 ms, VGG-19 within noise (256 or 512 floats ahead gained less).
    __builtin_prefetch(a + 1024);
    VF bv[kNV];
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) bv[v] = *reinterpret_cast<const VF*>(b + v * kW);
#pragma GCC unroll 16
    for (int i = 0; i < kMR; ++i) {
      VF ai = splat(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) acc[i][v] = fmadd(ai, bv[v], acc[i][v]);
    }
    a += kMR;
    b += kNR;
  }
  writeBack<kMR>(acc, c, ldc, i0, j0, mr, nr, t);
}

// Packs rows [i0, i0+mc) x columns [k0, k0+kc) of A into MR-high panels (zero padded).
void packA(const MatRef& A, int64_t i0, int64_t mc, int64_t k0, int64_t kc, float* dst) {
  for (int64_t ip = 0; ip < mc; ip += kMR, dst += kMR * kc) {
    int mr = static_cast<int>(std::min<int64_t>(kMR, mc - ip));
    const float* base = A.p + (i0 + ip) * A.rs + k0 * A.cs;
    if (A.rs == 1) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = base + k * A.cs;
        float* d = dst + k * kMR;
        int i = 0;
        for (; i < mr; ++i) d[i] = src[i];
        for (; i < kMR; ++i) d[i] = 0.f;
      }
    } else if (A.cs == 1) {
      // Row-major A (weights): walk all mr rows a cache line at a time, so mr streams are in
      // flight at once, and prefetch a few lines ahead (weights usually come from L3 or memory).
      for (int64_t k = 0; k < kc; k += 16) {
        int64_t kn = std::min<int64_t>(16, kc - k);
        for (int i = 0; i < mr; ++i) {
          const float* src = base + i * A.rs + k;
          __builtin_prefetch(src + 64);
          for (int64_t kk = 0; kk < kn; ++kk) dst[(k + kk) * kMR + i] = src[kk];
        }
      }
      for (int i = mr; i < kMR; ++i)
        for (int64_t k = 0; k < kc; ++k) dst[k * kMR + i] = 0.f;
    } else {
      for (int i = 0; i < mr; ++i) {
        const float* src = base + i * A.rs;
        for (int64_t k = 0; k < kc; ++k) dst[k * kMR + i] = src[k * A.cs];
      }
      for (int i = mr; i < kMR; ++i)
        for (int64_t k = 0; k < kc; ++k) dst[k * kMR + i] = 0.f;
    }
  }
}

// Packs rows [k0, k0+kc) x columns [j0, j0+nc) of B into NR-wide panels (zero padded).
void packB(const MatRef& B, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  for (int64_t jp = 0; jp < nc; jp += kNR, dst += kNR * kc) {
    int nr = static_cast<int>(std::min<int64_t>(kNR, nc - jp));
    const float* base = B.p + k0 * B.rs + (j0 + jp) * B.cs;
    if (B.cs == 1) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = base + k * B.rs;
        float* d = dst + k * kNR;
        if (nr == kNR) {
          std::memcpy(d, src, sizeof(float) * kNR);
        } else {
          int j = 0;
          for (; j < nr; ++j) d[j] = src[j];
          for (; j < kNR; ++j) d[j] = 0.f;
        }
      }
    } else {
      for (int j = 0; j < nr; ++j) {
        const float* src = base + j * B.cs;
        if (B.rs == 1)
          for (int64_t k = 0; k < kc; ++k) dst[k * kNR + j] = src[k];
        else
          for (int64_t k = 0; k < kc; ++k) dst[k * kNR + j] = src[k * B.rs];
      }
      for (int j = nr; j < kNR; ++j)
        for (int64_t k = 0; k < kc; ++k) dst[k * kNR + j] = 0.f;
    }
  }
}

// i0 is a multiple of kMR and j0 of kNR (sgemm rounds its blocks), so a pre-packed operand's
// panels line up with the item's: slice pc's block starts at pc * (rows rounded up to R), and
// panel p inside it at p * R * kc, as in the scratch buffer.
void runItem(const GemmSpec& s, const TileCtx& tproto, int64_t i0, int64_t mc, int64_t j0, int64_t nc) {
  float* ap = s.aPacked ? nullptr : scratchA().get(roundUp(mc, kMR) * kKC);
  float* bp = s.bPacked ? nullptr : scratchB().get(roundUp(nc, kNR) * kKC);
  for (int64_t pc = 0; pc < s.k; pc += kKC) {
    int64_t kc = std::min(kKC, s.k - pc);
    const float* a0;
    const float* b0;
    int64_t aStride, bStride;  // floats from one panel to the next
    if (s.bPacked) {
      b0 = s.bPacked + pc * roundUp(s.n, kNR) + (j0 / kNR) * kNR * kc;
      bStride = kNR * kc;
    } else {
      if (s.packB)
        s.packB(s.packBSelf, bp, pc, kc, j0, nc);
      else
        packB(s.b, pc, kc, j0, nc, bp);
      b0 = bp;
      bStride = kNR * kc;
    }
    if (s.aPacked) {
      a0 = s.aPacked + pc * roundUp(s.m, kMR) + (i0 / kMR) * kMR * kc;
      aStride = kMR * kc;
    } else {
      packA(s.a, i0, mc, pc, kc, ap);
      a0 = ap;
      aStride = kMR * kc;
    }
    TileCtx t = tproto;
    t.first = pc == 0 && !t.accumulate;
    t.last = pc + kc >= s.k;
    if (kc <= kRowOrderMaxK) {
      // Short K: writing C (and reading its residual or partial sums) costs more than the
      // products, so sweep C row-panel by row-panel: each A panel (in L1) against every B panel
      // (from L2), the tiles of MR rows written left to right as MR sequential streams. The
      // column order below would touch every row of the block 2 cache lines at a time.
      for (int64_t ir = 0; ir < mc; ir += kMR) {
        int mr = static_cast<int>(std::min<int64_t>(kMR, mc - ir));
        const float* apan = a0 + (ir / kMR) * aStride;
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          int nr = static_cast<int>(std::min<int64_t>(kNR, nc - jr));
          float* ct = s.c + (i0 + ir) * s.ldc + j0 + jr;
          microKernel(kc, apan, b0 + (jr / kNR) * bStride, ct, s.ldc, i0 + ir, j0 + jr, mr, nr, t);
        }
      }
      continue;
    }
    for (int64_t jr = 0; jr < nc; jr += kNR) {
      int nr = static_cast<int>(std::min<int64_t>(kNR, nc - jr));
      const float* bpan = b0 + (jr / kNR) * bStride;
      for (int64_t ir = 0; ir < mc; ir += kMR) {
        int mr = static_cast<int>(std::min<int64_t>(kMR, mc - ir));
        float* ct = s.c + (i0 + ir) * s.ldc + j0 + jr;
        microKernel(kc, a0 + (ir / kMR) * aStride, bpan, ct, s.ldc, i0 + ir, j0 + jr, mr, nr, t);
      }
    }
  }
}

// The lanes of v summed as a tree (halves added, then quarters, ...): 4 dependent levels for 16
// lanes instead of a chain of 16 (the chain cost the matrix-vector path a quarter of its time).
// Every matrix-vector path sums its lanes with this, so they round alike whichever runs.
inline float hsum(VF v) {
  alignas(64) float t[kW];
  storeu(t, v);
#pragma GCC unroll 4
  for (int w = kW / 2; w >= 1; w /= 2)
#pragma GCC unroll 8
    for (int l = 0; l < w; ++l) t[l] += t[l + w];
  return t[0];
}

// The last n % kW floats of a dot product as one more vector step (lanes past the end read as
// zero, add nothing); the scalar loop where there are no masked loads.
inline VF tailFma(const float* x, const float* y, int64_t n, VF acc) {
  if (n <= 0) return acc;
#if defined(__AVX512F__)
  const __mmask16 m = vm::tailMask(n);
  return fmadd((VF)_mm512_maskz_loadu_ps(m, x), (VF)_mm512_maskz_loadu_ps(m, y), acc);
#else
  VF xv = VF{}, yv = VF{};
  for (int64_t l = 0; l < n; ++l) xv[l] = x[l], yv[l] = y[l];
  return fmadd(xv, yv, acc);
#endif
}

float dot(const float* x, const float* y, int64_t n) {
  VF a0 = VF{}, a1 = VF{};
  int64_t i = 0;
  for (; i + 2 * kW <= n; i += 2 * kW) {
    a0 = fmadd(loadu(x + i), loadu(y + i), a0);
    a1 = fmadd(loadu(x + i + kW), loadu(y + i + kW), a1);
  }
  for (; i + kW <= n; i += kW) a0 = fmadd(loadu(x + i), loadu(y + i), a0);
  a0 = tailFma(x + i, y + i, n - i, a0);
  return hsum(a0 + a1);
}

// out0[i] = dot(x[i], y0), out1[i] = dot(x[i], y1) for the M (1..4) vectors x[i] of n floats:
// each vector of y0 and y1 is loaded once for all of them (a recurrent step's R rows times every
// batch row's state: R streams from memory once per step instead of once per batch row), two
// columns at a time for twice the loads in flight per x load. Lanes are summed as dot() sums them.
template <int M>
void dotsM2(const float* const* x, const float* y0, const float* y1, int64_t n, float* out0, float* out1) {
  VF a0[M], a1[M], b0[M], b1[M];
  for (int i = 0; i < M; ++i) a0[i] = a1[i] = b0[i] = b1[i] = VF{};
  int64_t k = 0;
  for (; k + 2 * kW <= n; k += 2 * kW) {
    const VF u0 = loadu(y0 + k), u1 = loadu(y0 + k + kW), v0 = loadu(y1 + k), v1 = loadu(y1 + k + kW);
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i) {
      const VF x0 = loadu(x[i] + k), x1 = loadu(x[i] + k + kW);
      a0[i] = fmadd(x0, u0, a0[i]);
      a1[i] = fmadd(x1, u1, a1[i]);
      b0[i] = fmadd(x0, v0, b0[i]);
      b1[i] = fmadd(x1, v1, b1[i]);
    }
  }
  for (; k + kW <= n; k += kW) {
    const VF u0 = loadu(y0 + k), v0 = loadu(y1 + k);
#pragma GCC unroll 4
    for (int i = 0; i < M; ++i) {
      const VF x0 = loadu(x[i] + k);
      a0[i] = fmadd(x0, u0, a0[i]);
      b0[i] = fmadd(x0, v0, b0[i]);
    }
  }
  for (int i = 0; i < M; ++i) {
    out0[i] = hsum(tailFma(x[i] + k, y0 + k, n - k, a0[i]) + a1[i]);
    out1[i] = hsum(tailFma(x[i] + k, y1 + k, n - k, b0[i]) + b1[i]);
  }
}

// Matrix-vector shapes: few rows (axpy over B rows or dots with B columns) or few columns (dots).
void gemvSmallM(const GemmSpec& s, ThreadPool* pool) {
  constexpr int64_t kChunk = 16 * kW;
  int64_t chunks = ceilDiv(s.n, kChunk);
  // Static ranges: in a recurrent step the same weight columns land on the same core each time.
  parallelForStatic(pool, chunks, [&](int64_t cb, int64_t ce) {
    alignas(64) float acc[kChunk];
    for (int64_t ch = cb; ch < ce; ++ch) {
      int64_t j0 = ch * kChunk, nj = std::min(kChunk, s.n - j0);
      if (s.b.rs == 1 && s.a.cs == 1 && s.b.cs != 1) {
        // Dots with B's contiguous columns, every row of A at once (B read once per chunk).
        const float* rows[4];
        for (int64_t i = 0; i < s.m; ++i) rows[i] = s.a.p + i * s.a.rs;
        float d[4], e[4];
        for (int64_t j = 0; j < nj; j += 2) {
          // An odd last column is taken twice (its second copy discarded).
          const float* bcol = s.b.p + (j0 + j) * s.b.cs;
          const float* bnext = j + 1 < nj ? bcol + s.b.cs : bcol;
          switch (s.m) {
            case 1: dotsM2<1>(rows, bcol, bnext, s.k, d, e); break;
            case 2: dotsM2<2>(rows, bcol, bnext, s.k, d, e); break;
            case 3: dotsM2<3>(rows, bcol, bnext, s.k, d, e); break;
            default: dotsM2<4>(rows, bcol, bnext, s.k, d, e); break;
          }
          for (int64_t i = 0; i < s.m; ++i) {
            s.c[i * s.ldc + j0 + j] = epilogueAt(s, i, j0 + j, d[i]);
            if (j + 1 < nj) s.c[i * s.ldc + j0 + j + 1] = epilogueAt(s, i, j0 + j + 1, e[i]);
          }
        }
        continue;
      }
      for (int64_t i = 0; i < s.m; ++i) {
        const float* arow = s.a.p + i * s.a.rs;
        if (s.b.cs == 1) {
          std::memset(acc, 0, sizeof(acc));
          for (int64_t k = 0; k < s.k; ++k) {
            const VF av = splat(arow[k * s.a.cs]);
            const float* br = s.b.p + k * s.b.rs + j0;
            int64_t j = 0;
            for (; j + kW <= nj; j += kW)
              storeu(acc + j, fmadd(av, loadu(br + j), loadu(acc + j)));
            for (; j < nj; ++j) acc[j] += arow[k * s.a.cs] * br[j];
          }
        } else {
          for (int64_t j = 0; j < nj; ++j) {
            float r = 0.f;
            for (int64_t k = 0; k < s.k; ++k) r += arow[k * s.a.cs] * s.b.p[k * s.b.rs + (j0 + j) * s.b.cs];
            acc[j] = r;
          }
        }
        float* cr = s.c + i * s.ldc + j0;
        for (int64_t j = 0; j < nj; ++j) cr[j] = epilogueAt(s, i, j0 + j, acc[j]);
      }
    }
  });
}

// Few rows (1..4) of A times pre-packed B panels: each NR-wide panel streams through registers
// once, every row of A at once (M x NV accumulators), over the whole of K (the packed layout's
// KC slices one after another), then the micro-kernel's write-back. The dot-product path
// (gemvSmallM) reads B's columns instead and ends every output with a horizontal sum; here each
// loaded B vector feeds M FMAs and nothing is summed across lanes. A recurrent step of 4 batch
// rows on a 2600 x 650 R held in L3 (lstm_lm's): 0.15 ms by dots, 0.09 ms by panels (AMD EPYC,
// standalone probe). Threads take fixed ranges of panels, so in a recurrent loop each core keeps
// reading the same part of the weights.
template <int M>
void smallMPanels(const GemmSpec& s, const TileCtx& t, int64_t pb, int64_t pe) {
  const int64_t npad = roundUp(s.n, kNR);
  for (int64_t p = pb; p < pe; ++p) {
    const int64_t j0 = p * kNR;
    VF acc[M][kNV];
    for (int i = 0; i < M; ++i)
      for (int v = 0; v < kNV; ++v) acc[i][v] = VF{};
    for (int64_t pc = 0; pc < s.k; pc += kKC) {
      const int64_t kc = std::min(kKC, s.k - pc);
      const float* __restrict b = s.bPacked + pc * npad + j0 * kc;  // panel p of slice pc
      const float* a = s.a.p + pc * s.a.cs;
#pragma GCC unroll 2
      for (int64_t k = 0; k < kc; ++k) {
        __builtin_prefetch(b + 1024);
        VF bv[kNV];
#pragma GCC unroll 4
        for (int v = 0; v < kNV; ++v) bv[v] = *reinterpret_cast<const VF*>(b + v * kW);
#pragma GCC unroll 4
        for (int i = 0; i < M; ++i) {
          const VF ai = splat(a[i * s.a.rs + k * s.a.cs]);
#pragma GCC unroll 4
          for (int v = 0; v < kNV; ++v) acc[i][v] = fmadd(ai, bv[v], acc[i][v]);
        }
        b += kNR;
      }
    }
    const int nr = static_cast<int>(std::min<int64_t>(kNR, s.n - j0));
    writeBack<M>(acc, s.c + j0, s.ldc, 0, j0, M, nr, t);
  }
}

void gemvPanels(const GemmSpec& s, ThreadPool* pool) {
  TileCtx t{&s, true, true, false};
  parallelForStatic(pool, ceilDiv(s.n, kNR), [&](int64_t pb, int64_t pe) {
    switch (s.m) {
      case 1: smallMPanels<1>(s, t, pb, pe); break;
      case 2: smallMPanels<2>(s, t, pb, pe); break;
      case 3: smallMPanels<3>(s, t, pb, pe); break;
      default: smallMPanels<4>(s, t, pb, pe); break;
    }
  });
}

void gemvSmallN(const GemmSpec& s, ThreadPool* pool) {
  parallelFor(pool, s.m, 16, [&](int64_t ib, int64_t ie) {
    for (int64_t i = ib; i < ie; ++i) {
      const float* arow = s.a.p + i * s.a.rs;
      for (int64_t j = 0; j < s.n; ++j) {
        const float* bcol = s.b.p + j * s.b.cs;
        float r;
        if (s.a.cs == 1 && s.b.rs == 1) {
          r = dot(arow, bcol, s.k);
        } else {
          r = 0.f;
          for (int64_t k = 0; k < s.k; ++k) r += arow[k * s.a.cs] * bcol[k * s.b.rs];
        }
        s.c[i * s.ldc + j] = epilogueAt(s, i, j, r);
      }
    }
  });
}

// How sgemm cuts C into items (the unit of threading): blocks of mc x nc.
struct Blocking {
  int64_t mc = 0, nc = 0;
};

// One thread: blocks of at most kMC x kNC, evened out so that the last one is not a sliver.
// Several threads: the cut whose items finish soonest when the pool hands them out one at a time
// (longest first, as its dynamic chunks roughly do), counting each item's micro-kernel tiles
// (tail tiles cost a whole tile) and its packing (B per item unless pre-packed, A likewise). Equal
// item counts are not equal work: a 14x14 layer (N = 196) in 4 column blocks of 64, 64, 64 and 4
// keeps one thread busy for 128 columns out of 196, and 5 equal items on 2 threads take as long
// as 6. Cuts are searched up to 16 x 16 blocks; decisions are memoized per shape.
Blocking chooseBlocking(const GemmSpec& s, int threads) {
  auto even = [](int64_t total, int64_t blocks, int64_t unit) {
    return roundUp(ceilDiv(total, blocks), unit);
  };
  if (threads <= 1) {
    return Blocking{even(s.m, ceilDiv(s.m, kMC), kMR), even(s.n, ceilDiv(s.n, kNC), kNR)};
  }
  struct Key {
    int64_t m, n, k;
    int threads, flags;
    bool operator==(const Key& o) const {
      return m == o.m && n == o.n && k == o.k && threads == o.threads && flags == o.flags;
    }
  };
  const Key key{s.m, s.n, s.k, threads, (s.aPacked ? 1 : 0) | (s.bPacked ? 2 : 0) | (s.packB ? 4 : 0)};
  static thread_local std::vector<std::pair<Key, Blocking>> memo;
  for (const auto& e : memo)
    if (e.first == key) return e.second;

  const double tileCost = 8.0 * static_cast<double>(s.k);  // cycles of one MR x NR tile, ~2 FMA/cycle
  const double packBPerFloat = s.bPacked ? 0.0 : (s.packB ? 0.5 : 0.25);
  const double packAPerFloat = s.aPacked ? 0.0 : 0.5;
  const int64_t maxM = std::min<int64_t>(16, ceilDiv(s.m, kMR)), maxN = std::min<int64_t>(16, ceilDiv(s.n, kNR));
  Blocking best;
  double bestTime = 0;
  int64_t bestItems = 0;
  std::vector<double> cost, load(static_cast<size_t>(threads));
  for (int64_t mb = std::max<int64_t>(1, ceilDiv(s.m, kMC)); mb <= std::max(maxM, ceilDiv(s.m, kMC)); ++mb)
    for (int64_t nb = std::max<int64_t>(1, ceilDiv(s.n, kNC)); nb <= std::max(maxN, ceilDiv(s.n, kNC)); ++nb) {
      const int64_t mc = even(s.m, mb, kMR), nc = even(s.n, nb, kNR);
      const int64_t am = ceilDiv(s.m, mc), an = ceilDiv(s.n, nc);
      if (am != mb || an != nb) continue;  // the same cut as a smaller count
      cost.clear();
      for (int64_t i = 0; i < am; ++i) {
        const int64_t rows = std::min(mc, s.m - i * mc);
        for (int64_t j = 0; j < an; ++j) {
          const int64_t cols = std::min(nc, s.n - j * nc);
          cost.push_back(tileCost * static_cast<double>(ceilDiv(rows, kMR) * ceilDiv(cols, kNR)) +
                         packBPerFloat * static_cast<double>(cols * s.k) +
                         packAPerFloat * static_cast<double>(rows * s.k));
        }
      }
      std::sort(cost.begin(), cost.end(), std::greater<double>());
      std::fill(load.begin(), load.end(), 0.0);
      for (double c : cost) *std::min_element(load.begin(), load.end()) += c;
      const double t = *std::max_element(load.begin(), load.end());
      const int64_t items = am * an;
      if (bestItems == 0 || t < bestTime * 0.999 || (t <= bestTime * 1.001 && items < bestItems)) {
        best = Blocking{mc, nc};
        bestTime = t;
        bestItems = items;
      }
    }
  if (memo.size() > 256) memo.clear();
  memo.emplace_back(key, best);
  return best;
}

}  // namespace

int64_t prepackedASize(int64_t m, int64_t k) { return roundUp(m, kMR) * k; }
int64_t prepackedBSize(int64_t k, int64_t n) { return roundUp(n, kNR) * k; }
// Slice-major, exactly what runItem would pack: for each KC slice pc (all full but the last), the
// whole operand's panels over that slice, at offset pc * (M or N rounded up to the panel).
void prepackA(const MatRef& A, int64_t m, int64_t k, float* dst) {
  for (int64_t pc = 0; pc < k; pc += kKC) packA(A, 0, m, pc, std::min(kKC, k - pc), dst + pc * roundUp(m, kMR));
}
void prepackB(const MatRef& B, int64_t k, int64_t n, float* dst) {
  for (int64_t pc = 0; pc < k; pc += kKC) packB(B, pc, std::min(kKC, k - pc), 0, n, dst + pc * roundUp(n, kNR));
}

int gemmMR() { return kMR; }
int gemmNR() { return kNR; }

void sgemm(const GemmSpec& s, ThreadPool* pool) {
  if (s.m <= 0 || s.n <= 0) return;
  if (s.k <= 0) {
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) s.c[i * s.ldc + j] = epilogueAt(s, i, j, 0.f);
    return;
  }
  if (!s.packB && s.m <= 4 && s.bPacked && s.n > 4) return gemvPanels(s, pool);
  if (!s.packB && s.m <= 4) return gemvSmallM(s, pool);
  if (!s.packB && s.n <= 4) return gemvSmallN(s, pool);

  int threads = pool ? pool->threads() : 1;
  const Blocking bl = chooseBlocking(s, threads);
  const int64_t mc = bl.mc, nc = bl.nc;
  const int64_t mBlocks = ceilDiv(s.m, mc), nBlocks = ceilDiv(s.n, nc);
  // A residual placed in C itself (an in-place residual, alpha 1): C already holds it, so every
  // K slice adds onto C and the write-back adds no residual. (Partial sums are stored in C
  // between slices, which would overwrite a residual read only at the end.)
  GemmSpec sp = s;
  const bool inPlace = s.res && s.res == s.c && s.ldres == s.ldc && s.alpha == 1.f;
  if (inPlace) sp.res = nullptr;
  TileCtx t{&sp, true, true, inPlace};
  parallelFor(pool, mBlocks * nBlocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t ib = it % mBlocks, jb = it / mBlocks;
      int64_t i0 = ib * mc, j0 = jb * nc;
      runItem(sp, t, i0, std::min(mc, s.m - i0), j0, std::min(nc, s.n - j0));
    }
  });
}

int fallbackKernel(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                   Ctx& ctx) {
  KernelFn f = findKernel(op);
  if (!f) return ctx.fail("%s: case not covered by the fast kernel and no reference kernel", op);
  return f(a, in, nin, out, nout, ctx);
}

}  // namespace fast

// ---- Gemm ---------------------------------------------------------------------------------------

namespace {
// When B is operand 1 and a weight, it is packed once per model handle into the step's state and
// the GEMM reads the panels from there.
void usePackedWeightsB(fast::GemmSpec& s, Ctx& ctx) {
  if (!fast::usesPanels(s) || !ctx.constant(1)) return;
  const fast::Prepacked* pk = ctx.state->getOr<fast::Prepacked>([&] {
    return fast::Prepacked::make(fast::prepackedBSize(s.k, s.n),
                                 [&](float* d) { fast::prepackB(s.b, s.k, s.n, d); });
  });
  if (pk) s.bPacked = pk->data();
}
}  // namespace

int fGemm(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  using fast::MatRef;
  if (nin < 2 || nout < 1) return fast::fallbackKernel("Gemm", a, in, nin, out, nout, ctx);
  const Tensor& A = in[0];
  const Tensor& B = in[1];
  const Tensor* C = nin > 2 && in[2].present() ? &in[2] : nullptr;
  const Tensor* R = nin > 3 && in[3].present() ? &in[3] : nullptr;
  bool ok = A.dtype == kF32 && B.dtype == kF32 && out[0].dtype == kF32 && A.rank == 2 && B.rank == 2 &&
            (!C || (C->dtype == kF32 && C->rank <= 2)) && (!R || R->dtype == kF32);
  if (!ok) return fast::fallbackKernel("Gemm", a, in, nin, out, nout, ctx);
  bool ta = a.i("transA", 0) != 0, tb = a.i("transB", 0) != 0;
  int64_t M = ta ? A.dims[1] : A.dims[0], K = ta ? A.dims[0] : A.dims[1];
  int64_t N = tb ? B.dims[0] : B.dims[1];
  if (out[0].numel() != M * N || (R && R->numel() != M * N))
    return fast::fallbackKernel("Gemm", a, in, nin, out, nout, ctx);
  fast::GemmSpec s;
  s.m = M;
  s.n = N;
  s.k = K;
  s.a = ta ? MatRef{A.as<float>(), 1, M} : MatRef{A.as<float>(), K, 1};
  s.b = tb ? MatRef{B.as<float>(), 1, K} : MatRef{B.as<float>(), N, 1};
  s.c = out[0].as<float>();
  s.ldc = N;
  s.alpha = a.f("alpha", 1.f);
  float beta = a.f("beta", 1.f);
  std::vector<float> cCopy, rCopy;  // addends that alias the output are read from copies
  if (C && fast::overlaps(*C, out[0])) cCopy.assign(C->as<float>(), C->as<float>() + C->numel());
  if (R && fast::overlaps(*R, out[0])) rCopy.assign(R->as<float>(), R->as<float>() + R->numel());
  if (C && beta != 0.f) {
    int64_t dm = 1, dn = 1;
    if (C->rank == 1) dn = C->dims[0];
    if (C->rank == 2) dm = C->dims[0], dn = C->dims[1];
    if ((dm != 1 && dm != M) || (dn != 1 && dn != N))
      return fast::fallbackKernel("Gemm", a, in, nin, out, nout, ctx);
    s.bias = MatRef{cCopy.empty() ? C->as<float>() : cCopy.data(), dm == 1 ? 0 : dn, dn == 1 ? 0 : 1};
    s.biasScale = beta;
  }
  if (R) {
    s.res = rCopy.empty() ? R->as<float>() : rCopy.data();
    s.ldres = N;
  }
  s.ep = Epilogue::fromAttrs(a);
  usePackedWeightsB(s, ctx);
  fast::sgemm(s, ctx.pool);
  return 0;
}

// ---- MatMul -------------------------------------------------------------------------------------

namespace {
// MatMul's reference kernel (and its fallbacks) read packed operands: a pitched one (a bound
// KV-cache buffer, readsPitched) is copied densely first.
int matMulFallback(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 2 || (!in[0].pitched() && !in[1].pitched()))
    return fast::fallbackKernel("MatMul", a, in, nin, out, nout, ctx);
  std::vector<Tensor> dense(in, in + nin);
  std::vector<unsigned char> b0, b1;
  dense[0] = densify(in[0], b0);
  dense[1] = densify(in[1], b1);
  return fast::fallbackKernel("MatMul", a, dense.data(), nin, out, nout, ctx);
}
}  // namespace

int fMatMul(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  using fast::MatRef;
  if (nin < 2 || nout < 1 || (nin > 2 && in[2].present()))
    return matMulFallback(a, in, nin, out, nout, ctx);
  const Tensor& A = in[0];
  const Tensor& B = in[1];
  if (A.dtype != kF32 || B.dtype != kF32 || out[0].dtype != kF32 || A.rank < 1 || B.rank < 1)
    return matMulFallback(a, in, nin, out, nout, ctx);
  // Pitched operands (readsPitched: rank >= 3, pitched along the matrix rows): each batch's
  // matrix is packed, the batches `pitch` rows apart instead of `rows`.
  if ((A.pitched() && (A.rank < 3 || A.pitchAxis != A.rank - 2)) ||
      (B.pitched() && (B.rank < 3 || B.pitchAxis != B.rank - 2)))
    return matMulFallback(a, in, nin, out, nout, ctx);
  int64_t M = A.rank == 1 ? 1 : A.dims[A.rank - 2];
  int64_t K = A.dims[A.rank - 1];
  int64_t N = B.rank == 1 ? 1 : B.dims[B.rank - 1];
  int64_t KB = B.rank == 1 ? B.dims[0] : B.dims[B.rank - 2];
  if (K != KB) return matMulFallback(a, in, nin, out, nout, ctx);
  // Batch dims, right aligned and broadcast.
  int ba = std::max(0, A.rank - 2), bb = std::max(0, B.rank - 2);
  int br = std::max(ba, bb);
  int64_t bdA[kMaxRank], bdB[kMaxRank], bdO[kMaxRank];
  int64_t nbatch = 1, nbatchA = 1, nbatchB = 1;
  for (int d = 0; d < br; ++d) {
    int da = d - (br - ba), db = d - (br - bb);
    bdA[d] = da >= 0 ? A.dims[da] : 1;
    bdB[d] = db >= 0 ? B.dims[db] : 1;
    if (bdA[d] != bdB[d] && bdA[d] != 1 && bdB[d] != 1)
      return matMulFallback(a, in, nin, out, nout, ctx);
    bdO[d] = std::max(bdA[d], bdB[d]);
    if (bdA[d] == 0 || bdB[d] == 0) bdO[d] = 0;
    nbatch *= bdO[d];
    nbatchA *= bdA[d];
    nbatchB *= bdB[d];
  }
  if (out[0].numel() != nbatch * M * N) return matMulFallback(a, in, nin, out, nout, ctx);
  if (nbatch == 0 || M == 0 || N == 0) return 0;
  Epilogue ep = Epilogue::fromAttrs(a);
  const float* pa = A.as<float>();
  const float* pb = B.as<float>();
  float* pc = out[0].as<float>();
  auto spec = [&](const float* x, const float* y, float* z, int64_t m) {
    fast::GemmSpec s;
    s.m = m;
    s.n = N;
    s.k = K;
    s.a = MatRef{x, K, 1};
    s.b = MatRef{y, N, 1};
    s.c = z;
    s.ldc = N;
    s.ep = ep;
    return s;
  };
  // B shared by every batch: fold A's batch into M (a pitched B has one matrix here: packed)
  if (nbatchB == 1 && !A.pitched()) {
    fast::GemmSpec s = spec(pa, pb, pc, nbatch * M);
    usePackedWeightsB(s, ctx);
    fast::sgemm(s, ctx.pool);
    return 0;
  }
  // Element strides of each batch dim in A and B (0 where broadcast).
  int64_t stA[kMaxRank], stB[kMaxRank];
  {
    int64_t sa = (A.pitched() ? A.pitch : M) * K, sb = (B.pitched() ? B.pitch : K) * N;
    for (int d = br - 1; d >= 0; --d) {
      stA[d] = bdA[d] == 1 ? 0 : sa;
      stB[d] = bdB[d] == 1 ? 0 : sb;
      sa *= bdA[d];
      sb *= bdB[d];
    }
  }
  auto one = [&](int64_t bi, ThreadPool* pool) {
    int64_t offA = 0, offB = 0, r = bi;
    for (int d = br - 1; d >= 0; --d) {
      int64_t idx = r % bdO[d];
      r /= bdO[d];
      offA += idx * stA[d];
      offB += idx * stB[d];
    }
    fast::sgemm(spec(pa + offA, pb + offB, pc + bi * M * N, M), pool);
  };
  int threads = ctx.pool ? ctx.pool->threads() : 1;
  if (threads > 1 && nbatch >= 2 * threads) {
    parallelFor(ctx.pool, nbatch, 1, [&](int64_t b, int64_t e) {
      for (int64_t bi = b; bi < e; ++bi) one(bi, nullptr);
    });
  } else {
    for (int64_t bi = 0; bi < nbatch; ++bi) one(bi, ctx.pool);
  }
  return 0;
}

}  // namespace mgrt
