// The sorting block programs on the CPU emulation: TopK (runtime/gpu/kernels/mg_topk.cuh)
// against a plain std::sort in the CPU kernel's order (NaN above every number, -0.0 equal to
// 0.0, ties by lower index, `largest` reversing the values only), on rows that are no multiple of
// the chunk (C) or the block, K = 1, K = n, K = 0, K > C (the counting path), a run-time K and
// its count, strided rows (inner > 1), idle threads, every element type; Unique and
// NonMaxSuppression (mg_select.cuh, two phases) against the CPU's own selection functions
// (runtime/common/k_select_shared.h), at counts 0, some and all.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "k_select_shared.h"
#include "kernels_test_util.h"

namespace sorttest {

using kt::Dev;

template <typename T, int C, int THREADS>
__global__ void topkK(mgk::TopKParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::topkBlock<T, C, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void uniqueFirstK(mgk::UniqueParams p) {
  mgk::uniqueFirstBlock<T, THREADS>(p, blockIdx.x, nullptr);
}
template <typename T, int THREADS>
__global__ void uniqueWriteK(mgk::UniqueParams p) {
  mgk::uniqueWriteBlock<T, THREADS>(p, blockIdx.x, nullptr);
}
template <int THREADS>
__global__ void nmsSelectK(mgk::NmsParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::nmsSelectBlock<THREADS>(p, blockIdx.x, smem);
}
template <int THREADS>
__global__ void nmsWriteK(mgk::NmsParams p) {
  mgk::nmsWriteBlock<THREADS>(p, blockIdx.x, nullptr);
}

constexpr int64_t kUnwritten = -777;

double asDouble(float v) { return v; }
double asDouble(double v) { return v; }
double asDouble(mgk::Half v) { return mgk::halfToFloat(v.bits); }
template <typename T>
double asDouble(T v) {
  return double(v);
}

// The CPU kernel's order (runtime/cpu/k_reduction.cpp, valueLess) on doubles; integers compare
// exactly as int64 / uint64 below.
bool valueLess(double a, double b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return !na && nb;
  return a < b;
}

template <typename T>
bool elemLess(T a, T b) {
  if constexpr (std::is_same<T, mgk::Half>::value || std::is_floating_point<T>::value)
    return valueLess(asDouble(a), asDouble(b));
  else
    return a < b;
}

template <typename T>
bool sameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// TopK of x ([outer, n, inner]) along n: values and indices against the sort; nothing written
// past K rows. runtimeK: K from device memory and the count checked.
template <typename T, int C, int THREADS>
void topkCase(const std::vector<T>& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
              bool runtimeK = false, int blockThreads = THREADS) {
  SCOPED_TRACE(::testing::Message() << "outer " << outer << " n " << n << " inner " << inner << " k " << k
                                    << (largest ? " largest" : " smallest") << (runtimeK ? " run-time K" : "")
                                    << " C " << C);
  std::vector<T> want(size_t(outer * k * inner));
  std::vector<int64_t> wantIdx(want.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return x[size_t((o * n + j) * inner + i)]; };
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        if (largest ? elemLess(at(q), at(p)) : elemLess(at(p), at(q))) return true;
        if (largest ? elemLess(at(p), at(q)) : elemLess(at(q), at(p))) return false;
        return p < q;
      });
      for (int64_t j = 0; j < k; ++j) {
        want[size_t((o * k + j) * inner + i)] = at(order[size_t(j)]);
        wantIdx[size_t((o * k + j) * inner + i)] = order[size_t(j)];
      }
    }
  const size_t cap = size_t(outer * n * inner);  // a run-time K's results hold the capacity
  T fill;
  std::memset(&fill, 0x5a, sizeof(T));
  Dev<T> dx(x);
  Dev<T> dv(std::vector<T>(cap, fill));
  Dev<int64_t> di(std::vector<int64_t>(cap, kUnwritten));
  Dev<int64_t> dk(std::vector<int64_t>{k});
  Dev<int64_t> dc(std::vector<int64_t>{-1});
  mgk::TopKParams p{};
  p.rows = outer * inner;
  p.inner = inner;
  p.n = n;
  p.k = runtimeK ? 0 : k;
  p.kPtr = runtimeK ? dk.get() : nullptr;
  p.largest = largest ? 1 : 0;
  p.x = dx.get();
  p.values = dv.get();
  p.indices = di.get();
  p.count = runtimeK ? dc.get() : nullptr;
  kt::launch(topkK<T, C, THREADS>, mgk::topkBlocks<T, C, THREADS>(p), blockThreads,
             mgk::topkSmemBytes<T, C, THREADS>(), p);
  if (runtimeK) {
    ASSERT_EQ(dc.host()[0], k);
  }
  std::vector<T> gv = dv.host();
  std::vector<int64_t> gi = di.host();
  for (size_t e = 0; e < cap; ++e) {
    if (e < want.size()) {
      ASSERT_EQ(gi[e], wantIdx[e]) << "index at " << e;
      ASSERT_TRUE(sameBits(gv[e], want[e])) << "value at " << e << ": " << asDouble(gv[e]) << " want "
                                            << asDouble(want[e]);
    } else {
      ASSERT_EQ(gi[e], kUnwritten) << "written past K at " << e;
      ASSERT_TRUE(sameBits(gv[e], fill)) << "value written past K at " << e;
    }
  }
}

std::vector<float> tiedFloats(size_t n, std::mt19937& rng) {
  std::vector<float> v(n);
  for (float& f : v) f = float(int(rng() % 9) - 4) * 0.5f;  // many ties
  return v;
}

TEST(SortKernel, TopKFloatOddShapesTiesNaN) {
  std::mt19937 rng(11);
  std::vector<float> x = tiedFloats(3 * 37 * 5, rng);
  x[4] = std::numeric_limits<float>::quiet_NaN();
  x[40] = -0.f;
  x[41] = 0.f;
  x[77] = std::numeric_limits<float>::infinity();
  x[78] = -std::numeric_limits<float>::infinity();
  x[200] = -std::numeric_limits<float>::quiet_NaN();
  for (bool largest : {true, false})
    for (int64_t k : {1, 2, 7, 36, 37}) {
      topkCase<float, 64, 128>(x, 3, 37, 5, k, largest);  // strided rows, 15 of them
      topkCase<float, 64, 128>(x, 15, 37, 1, k, largest);  // contiguous rows
    }
  topkCase<float, 64, 128>(x, 3, 37, 5, 0, true);  // K = 0 writes nothing
}

TEST(SortKernel, TopKLongRowsManyChunks) {
  std::mt19937 rng(12);
  // 1000 = 15 full chunks of 64 and a partial one; ascending and descending data make every
  // chunk enter the top K (no skip) for one of largest/smallest.
  std::vector<float> up(2 * 1000), rnd = kt::randomVec(2 * 1000, rng);
  for (size_t i = 0; i < up.size(); ++i) up[i] = float(i % 1000) * 0.25f;
  for (bool largest : {true, false})
    for (int64_t k : {1, 5, 64}) {
      topkCase<float, 64, 128>(up, 2, 1000, 1, k, largest);
      topkCase<float, 64, 128>(rnd, 2, 1000, 1, k, largest);
    }
  topkCase<float, 256, 128>(rnd, 1, 2000, 1, 200, true);  // C above the block
  topkCase<float, 32, 128>(rnd, 1, 2000, 1, 17, false);   // C below it: idle threads in the sort
}

TEST(SortKernel, TopKLargeKCountsRanks) {
  std::mt19937 rng(13);
  std::vector<float> x = tiedFloats(2 * 300 * 3, rng);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  for (bool largest : {true, false})
    for (int64_t k : {33, 150, 300}) topkCase<float, 32, 128>(x, 2, 300, 3, k, largest);  // K > C
}

TEST(SortKernel, TopKRunTimeK) {
  std::mt19937 rng(14);
  std::vector<float> x = tiedFloats(4 * 50, rng);
  for (int64_t k : {0, 1, 3, 50}) topkCase<float, 64, 128>(x, 4, 50, 1, k, true, true);
  topkCase<float, 32, 128>(x, 4, 50, 1, 40, false, true);  // past C at run time: counting path
  // A block wider than the program: the idle threads still reach every barrier.
  topkCase<float, 64, 128>(x, 4, 50, 1, 3, true, true, 256);
}

TEST(SortKernel, TopKOtherTypes) {
  std::mt19937 rng(15);
  std::vector<int32_t> xi(6 * 33);
  for (int32_t& v : xi) v = int32_t(rng() % 11) - 5;
  std::vector<int64_t> xl(6 * 33);
  for (int64_t& v : xl) v = int64_t(rng() % 7) * (int64_t(1) << 40) - (int64_t(3) << 40);
  xl[3] = std::numeric_limits<int64_t>::min();
  xl[4] = std::numeric_limits<int64_t>::max();
  std::vector<uint8_t> xb(6 * 33);
  for (uint8_t& v : xb) v = uint8_t(rng() % 256);
  std::vector<double> xd(6 * 33);
  for (double& v : xd) v = double(int(rng() % 9) - 4) / 3;
  xd[7] = std::nan("");
  std::vector<mgk::Half> xh(6 * 33);
  for (size_t i = 0; i < xh.size(); ++i) xh[i] = mgk::Half{mgk::floatToHalf(float(int(rng() % 9) - 4) * 0.5f)};
  xh[2] = mgk::Half{0x8000};  // -0
  xh[9] = mgk::Half{0x7e00};  // NaN
  for (bool largest : {true, false})
    for (int64_t k : {1, 4, 33}) {
      topkCase<int32_t, 64, 128>(xi, 2, 33, 3, k, largest);
      topkCase<int64_t, 64, 128>(xl, 6, 33, 1, k, largest);
      topkCase<uint8_t, 64, 128>(xb, 3, 33, 2, k, largest);
      topkCase<double, 64, 128>(xd, 6, 33, 1, k, largest);
      topkCase<mgk::Half, 64, 128>(xh, 1, 33, 6, k, largest);
    }
}

// Unique of x ([outer, n, inner]) along n against mgrt::selection::uniqueSlices.
template <typename T, int THREADS>
void uniqueCase(const std::vector<T>& x, int64_t outer, int64_t n, int64_t inner, bool sorted) {
  SCOPED_TRACE(::testing::Message() << "outer " << outer << " n " << n << " inner " << inner
                                    << (sorted ? " sorted" : " unsorted"));
  mgrt::selection::UniqueResult r = mgrt::selection::uniqueSlices(x.data(), outer, n, inner, sorted);
  const int64_t u = int64_t(r.first.size());
  std::vector<T> wantY;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < u; ++g)
      for (int64_t e = 0; e < inner; ++e) wantY.push_back(x[size_t((o * n + r.first[size_t(g)]) * inner + e)]);
  T fill;
  std::memset(&fill, 0x5a, sizeof(T));
  Dev<T> dx(x);
  Dev<T> dy(std::vector<T>(x.size(), fill));
  Dev<int64_t> dind(std::vector<int64_t>(size_t(n), kUnwritten)), dinv(std::vector<int64_t>(size_t(n), kUnwritten)),
      dcnt(std::vector<int64_t>(size_t(n), kUnwritten)), dfirst(std::vector<int64_t>(size_t(n) + 1, kUnwritten));
  Dev<int64_t> dc(std::vector<int64_t>{-1});
  mgk::UniqueParams p{};
  p.outer = outer;
  p.n = n;
  p.inner = inner;
  p.sorted = sorted ? 1 : 0;
  p.x = dx.get();
  p.y = dy.get();
  p.indices = dind.get();
  p.inverse = dinv.get();
  p.counts = dcnt.get();
  p.first = dfirst.get();
  p.count = dc.get();
  kt::launchNoSync(uniqueFirstK<T, THREADS>, mgk::uniqueFirstBlocks<T, THREADS>(p), THREADS, 0, p);
  kt::launch(uniqueWriteK<T, THREADS>, mgk::uniqueWriteBlocks<T, THREADS>(p), THREADS, 0, p);
  ASSERT_EQ(dc.host()[0], u);
  std::vector<T> gy = dy.host();
  for (size_t e = 0; e < gy.size(); ++e)
    ASSERT_TRUE(sameBits(gy[e], e < wantY.size() ? wantY[e] : fill)) << "Y at " << e;
  std::vector<int64_t> gind = dind.host(), ginv = dinv.host(), gcnt = dcnt.host();
  for (int64_t j = 0; j < n; ++j) {
    ASSERT_EQ(ginv[size_t(j)], r.inverse[size_t(j)]) << "inverse at " << j;
    ASSERT_EQ(gind[size_t(j)], j < u ? r.first[size_t(j)] : kUnwritten) << "indices at " << j;
    ASSERT_EQ(gcnt[size_t(j)], j < u ? r.counts[size_t(j)] : kUnwritten) << "counts at " << j;
  }
}

TEST(SortKernel, UniqueElementsAndSlices) {
  std::mt19937 rng(21);
  std::vector<float> f = tiedFloats(300, rng);  // 9 values over 300 positions: two blocks of 128+
  f[3] = std::numeric_limits<float>::quiet_NaN();
  f[30] = std::numeric_limits<float>::quiet_NaN();
  f[31] = -0.f;
  std::vector<int64_t> distinct(130);
  std::iota(distinct.begin(), distinct.end(), -60);
  std::shuffle(distinct.begin(), distinct.end(), rng);
  std::vector<uint8_t> b(17);
  for (uint8_t& v : b) v = uint8_t(rng() % 2);
  std::vector<int32_t> rows(4 * 9 * 2);  // [4, 9, 2] along axis 1: slices of 8 elements
  for (int32_t& v : rows) v = int32_t(rng() % 2);
  for (bool sorted : {true, false}) {
    uniqueCase<float, 128>(f, 1, 300, 1, sorted);
    uniqueCase<int64_t, 128>(distinct, 1, 130, 1, sorted);          // every element unique
    uniqueCase<int64_t, 128>(std::vector<int64_t>(40, 7), 1, 40, 1, sorted);  // one group
    uniqueCase<uint8_t, 128>(b, 1, 17, 1, sorted);
    uniqueCase<int32_t, 128>(rows, 4, 9, 2, sorted);
    uniqueCase<float, 128>(std::vector<float>{}, 1, 0, 1, sorted);   // no elements: count 0
  }
}

// NonMaxSuppression against mgrt::selection::nmsSelect.
void nmsCase(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t batches, int64_t classes,
             int64_t nb, int64_t maxOut, float iou, const float* scoreThr, bool center) {
  SCOPED_TRACE(::testing::Message() << batches << "x" << classes << "x" << nb << " max " << maxOut << " iou " << iou
                                    << (scoreThr ? " thr" : "") << (center ? " center" : ""));
  mgrt::selection::NmsParams q;
  q.batches = batches;
  q.classes = classes;
  q.boxes = nb;
  q.maxPerClass = maxOut;
  q.iouThreshold = iou;
  q.hasScoreThreshold = scoreThr != nullptr;
  q.scoreThreshold = scoreThr ? *scoreThr : 0.f;
  q.centerPointBox = center;
  std::vector<int64_t> want;
  mgrt::selection::nmsSelect(boxes.data(), scores.data(), q, &want);
  int64_t sortSize = 1;
  while (sortSize < nb) sortSize <<= 1;
  const int64_t groups = batches * classes;
  Dev<float> db(boxes), ds(scores), diou(std::vector<float>{iou}), dthr(std::vector<float>{scoreThr ? *scoreThr : 0.f});
  Dev<int64_t> dmax(std::vector<int64_t>{maxOut});
  Dev<uint64_t> dkey(std::vector<uint64_t>(size_t(groups * sortSize) + 1));
  Dev<int32_t> didx(std::vector<int32_t>(size_t(groups * sortSize) + 1)), dkept(std::vector<int32_t>(size_t(groups * nb) + 1));
  Dev<int64_t> dkc(std::vector<int64_t>(size_t(groups) + 1)), dy(std::vector<int64_t>(size_t(groups * nb * 3) + 3, kUnwritten));
  Dev<int64_t> dc(std::vector<int64_t>{-1});
  mgk::NmsParams p{};
  p.batches = batches;
  p.classes = classes;
  p.boxes = nb;
  p.sortSize = int32_t(sortSize);
  p.center = center ? 1 : 0;
  p.box = db.get();
  p.score = ds.get();
  p.maxOut = dmax.get();
  p.iou = diou.get();
  p.scoreThreshold = scoreThr ? dthr.get() : nullptr;
  p.sortKey = dkey.get();
  p.sortIdx = didx.get();
  p.kept = dkept.get();
  p.keptCount = dkc.get();
  p.y = dy.get();
  p.count = dc.get();
  kt::launch(nmsSelectK<128>, mgk::nmsSelectBlocks<128>(p), 128, mgk::nmsSelectSmemBytes<128>(), p);
  kt::launchNoSync(nmsWriteK<128>, mgk::nmsWriteBlocks<128>(p), 128, 0, p);
  ASSERT_EQ(dc.host()[0] * 3, int64_t(want.size()));
  std::vector<int64_t> got = dy.host();
  for (size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], e < want.size() ? want[e] : kUnwritten) << "at " << e;
}

// Boxes in clusters (heavy overlaps), some degenerate, corners in either order.
std::vector<float> clusteredBoxes(int64_t count, std::mt19937& rng) {
  std::vector<float> b(size_t(count * 4));
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int64_t i = 0; i < count; ++i) {
    const float cy = float(i % 5) * 2.f + u(rng) * 0.3f, cx = float(i % 3) * 2.f + u(rng) * 0.3f;
    const float h = 0.5f + u(rng), w = 0.5f + u(rng);
    float* r = &b[size_t(i * 4)];
    r[0] = cy;
    r[1] = cx;
    r[2] = cy + (i % 7 == 3 ? 0.f : h);  // i % 7 == 3: no area
    r[3] = cx + w;
    if (i % 4 == 1) std::swap(r[0], r[2]);
  }
  return b;
}

TEST(SortKernel, NonMaxSuppressionAgainstTheCpuSelection) {
  std::mt19937 rng(31);
  const int64_t B = 2, C = 3, N = 150;
  std::vector<float> boxes = clusteredBoxes(B * N, rng);
  std::vector<float> scores = kt::randomVec(size_t(B * C * N), rng, 0.f, 1.f);
  for (size_t i = 0; i < scores.size(); i += 10) scores[i] = 0.5f;  // ties: lower box first
  const float thr = 0.4f, high = 2.f;
  for (float iou : {0.f, 0.3f, 0.7f, 1.f}) {
    nmsCase(boxes, scores, B, C, N, 1000, iou, nullptr, false);
    nmsCase(boxes, scores, B, C, N, 4, iou, &thr, false);
  }
  nmsCase(boxes, scores, B, C, N, 10, 0.5f, &thr, true);    // center boxes
  nmsCase(boxes, scores, B, C, N, 0, 0.5f, nullptr, false);  // max 0: nothing
  nmsCase(boxes, scores, B, C, N, 10, 0.5f, &high, false);   // every score below the threshold
  // More boxes than shared memory sorts (2048): the block's scratch.
  const int64_t big = 2500;
  std::vector<float> bb = clusteredBoxes(big, rng), bs = kt::randomVec(size_t(big), rng, 0.f, 1.f);
  nmsCase(bb, bs, 1, 1, big, 50, 0.5f, nullptr, false);
}

}  // namespace sorttest
