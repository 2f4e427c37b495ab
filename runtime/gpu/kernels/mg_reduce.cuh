// reduce: y[o] = R over the reduced index space of x (mg_kparams.h, ReduceParams), float32, every
// ReduceOp with ONNX semantics:
//   sum, mean (sum / redN), max, min (NaN propagates), prod, l1 (sum |x|), l2 (sqrt sum x^2),
//   logsum (log sum x), logsumexp (max + log sum e^(x - max): stable, one pass, see RedAcc),
//   sumsquare (sum x^2). An empty reduction (redN = 0) gives the op's identity: 0 for the sums,
//   1 for prod, -inf for max and logsumexp, +inf for min, log 0 = -inf for logsum, NaN for mean.
//
// Two variants, one template, chosen by the code generator from redN (cost model):
//   reduceBlock<kReducePerThread, ITEMS, THREADS>  one output per (thread, item), for small redN:
//     block b covers outputs [b*ITEMS*THREADS, ...); the thread walks the reduced space with an
//     odometer (no division per element). No barrier, no shared memory (mgLaunchNoSync allowed).
//   reduceBlock<kReducePerBlock, ITEMS, THREADS>   one output per block, for large redN:
//     thread t folds elements t, t + THREADS, ... into ITEMS independent partials (ITEMS loads in
//     flight), then the block combines its THREADS partials in a shared-memory tree
//     (2*THREADS floats: a partial is a (value, scale) pair for logsumexp).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

enum ReduceVariant : int { kReducePerThread = 0, kReducePerBlock = 1 };

// A partial result. For logsumexp, (v, s) stands for v + log(s): v the largest element seen and
// s = sum e^(x - v); a new maximum rescales s instead of overflowing. Other ops use v only.
struct RedAcc {
  float v, s;

  MG_DEVICE static RedAcc init(int op) {
    switch (op) {
      case kRedProd: return {1.f, 0.f};
      case kRedMax:
      case kRedLogSumExp: return {-INFINITY, 0.f};
      case kRedMin: return {INFINITY, 0.f};
      default: return {0.f, 0.f};
    }
  }
  MG_DEVICE void add(int op, float x) {
    switch (op) {
      case kRedProd: v *= x; break;
      case kRedMax: v = (x > v || x != x) ? x : v; break;
      case kRedMin: v = (x < v || x != x) ? x : v; break;
      case kRedL1: v += fabsf(x); break;
      case kRedL2:
      case kRedSumSquare: v += x * x; break;
      case kRedLogSumExp:
        if (x > v) {
          s = s * expf(v - x) + 1.f;
          v = x;
        } else {
          s += x == v ? 1.f : expf(x - v);  // x == v also covers -inf == -inf
        }
        break;
      default: v += x; break;  // sum, mean, logsum
    }
  }
  MG_DEVICE void merge(int op, const RedAcc& o) {
    switch (op) {
      case kRedProd: v *= o.v; break;
      case kRedMax: v = (o.v > v || o.v != o.v) ? o.v : v; break;
      case kRedMin: v = (o.v < v || o.v != o.v) ? o.v : v; break;
      case kRedLogSumExp:
        if (o.v > v) {
          s = s * expf(v - o.v) + o.s;
          v = o.v;
        } else {
          s += o.v == v ? o.s : o.s * expf(o.v - v);
        }
        break;
      default: v += o.v; break;
    }
  }
  MG_DEVICE float finish(int op, int64_t n) const {
    switch (op) {
      case kRedMean: return v / float(n);
      case kRedL2: return sqrtf(v);
      case kRedLogSum: return logf(v);
      case kRedLogSumExp: return s > 0.f ? v + logf(s) : v;  // s == 0: empty, -inf
      default: return v;
    }
  }
};

template <int VARIANT, int ITEMS, int THREADS, typename S = float>
__host__ __device__ int64_t reduceBlocks(const ReduceParams& p) {
  return VARIANT == kReducePerBlock ? p.outN : ceilDiv(p.outN, int64_t(ITEMS) * THREADS);
}

template <int VARIANT, int ITEMS, int THREADS, typename S = float>
__host__ __device__ constexpr int reduceSmemBytes() {
  return VARIANT == kReducePerBlock ? 2 * THREADS * int(sizeof(float)) : 0;
}

namespace detail {

template <int ITEMS, int THREADS, typename S>
MG_DEVICE void reducePerThread(const ReduceParams& p, int64_t block) {
  const int t = int(threadIdx.x);
  if (t >= THREADS) return;  // no barrier in this variant
  const int op = p.op, redRank = p.redRank;
  const int64_t first = block * (int64_t(ITEMS) * THREADS) + t;
  MGK_NO_UNROLL
  for (int it = 0; it < ITEMS; ++it) {
    const int64_t o = first + int64_t(it) * THREADS;
    if (o >= p.outN) return;
    int64_t off = unravelOffset(o, p.outRank, p.outDims, p.outInStrides);
    RedAcc acc = RedAcc::init(op);
    int64_t cnt[kMaxRank];
    MGK_UNROLL
    for (int d = 0; d < kMaxRank; ++d) cnt[d] = 0;
    for (int64_t r = 0; r < p.redN; ++r) {
      acc.add(op, ldF(asS<S>(p.x)[off]));
      // Odometer step over redDims, innermost first.
      for (int d = redRank - 1; d >= 0; --d) {
        off += p.redStrides[d];
        if (++cnt[d] < p.redDims[d]) break;
        off -= p.redStrides[d] * p.redDims[d];
        cnt[d] = 0;
      }
    }
    asS<S>(p.y)[o] = stF<S>(acc.finish(op, p.redN));
  }
}

template <int ITEMS, int THREADS, typename S>
MG_DEVICE void reducePerBlock(const ReduceParams& p, int64_t block, char* smem) {
  static_assert(isPow2(THREADS), "the block tree needs a power-of-two thread count");
  const int t = int(threadIdx.x);
  const int op = p.op;
  RedAcc acc = RedAcc::init(op);
  if (t < THREADS) {
    const S* xo = asS<S>(p.x) + unravelOffset(block, p.outRank, p.outDims, p.outInStrides);
    RedAcc part[ITEMS];
    MGK_UNROLL
    for (int i = 0; i < ITEMS; ++i) part[i] = RedAcc::init(op);
    const int64_t step = int64_t(ITEMS) * THREADS;
    for (int64_t r0 = t; r0 < p.redN; r0 += step) {
      MGK_UNROLL
      for (int i = 0; i < ITEMS; ++i) {
        const int64_t r = r0 + int64_t(i) * THREADS;
        if (r < p.redN) part[i].add(op, ldF(xo[unravelOffset(r, p.redRank, p.redDims, p.redStrides)]));
      }
    }
    MGK_UNROLL
    for (int i = 0; i < ITEMS; ++i) acc.merge(op, part[i]);
  }
  // Tree over (v, s) pairs; every thread of the block reaches every barrier.
  float* rv = reinterpret_cast<float*>(smem);
  float* rs = rv + THREADS;
  if (t < THREADS) {
    rv[t] = acc.v;
    rs[t] = acc.s;
  }
  __syncthreads();
  MGK_NO_UNROLL
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) {
      RedAcc a{rv[t], rs[t]};
      a.merge(op, RedAcc{rv[t + s], rs[t + s]});
      rv[t] = a.v;
      rs[t] = a.s;
    }
    __syncthreads();
  }
  if (t == 0) asS<S>(p.y)[block] = stF<S>(RedAcc{rv[0], rs[0]}.finish(op, p.redN));
}

}  // namespace detail

template <int VARIANT, int ITEMS, int THREADS, typename S = float>
MGK_PROGRAM void reduceBlock(const ReduceParams& p, int64_t block, char* smem) {
  static_assert(VARIANT == kReducePerThread || VARIANT == kReducePerBlock, "unknown variant");
  static_assert(ITEMS == 1 || ITEMS == 4 || ITEMS == 16, "memory tiles have 1, 4 or 16 items");
  if (VARIANT == kReducePerThread)
    detail::reducePerThread<ITEMS, THREADS, S>(p, block);
  else
    detail::reducePerBlock<ITEMS, THREADS, S>(p, block, smem);
}

}  // namespace mgk
