// The producers of data-dependent extents (runtime/gpu/kernels/mg_select.cuh) on the CPU
// emulation: NonZero and Compress against plain loops in the CPU runtime's order, at counts 0,
// some and all; the result compact at the count (row r of NonZero at r*count) and nothing written
// past it; the count in its device buffer; idle threads (a block wider than THREADS) under the
// strict barrier check; chunks shorter than the thread count; -0.0 (zero) and NaN (nonzero).
#include <algorithm>
#include <limits>

#include "kernels_test_util.h"

namespace {

using kt::Dev;

template <typename T, int THREADS>
__global__ void nonzeroK(mgk::NonZeroParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::nonzeroBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename W, int THREADS>
__global__ void compressK(mgk::CompressParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::compressBlock<W, THREADS>(p, blockIdx.x, smem);
}

constexpr int64_t kUnwritten = -777;

// Runs NonZero on x (dims) and checks the count and the [rank, count] result against a loop.
template <typename T, int THREADS>
void nonzeroCase(const std::vector<T>& x, std::vector<int64_t> dims, bool (*nz)(T),
                 int blockThreads) {
  const int64_t numel = int64_t(x.size());
  const int rank = int(dims.size());
  std::vector<int64_t> want;  // coordinates of the selected elements, row-major
  for (int64_t i = 0; i < numel; ++i)
    if (nz(x[i])) want.push_back(i);
  const int64_t count = int64_t(want.size());
  std::vector<int64_t> ref(size_t(rank * count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = want[size_t(k)];
    for (int d = rank - 1; d >= 0; --d) {
      ref[size_t(d * count + k)] = rest % dims[size_t(d)];
      rest /= dims[size_t(d)];
    }
  }
  Dev<T> dx(x);
  Dev<int64_t> dy(std::vector<int64_t>(size_t(rank * numel), kUnwritten));
  Dev<int64_t> dc(std::vector<int64_t>{-1});
  mgk::NonZeroParams p{};
  p.numel = numel;
  p.rank = rank;
  for (int d = 0; d < rank; ++d) p.dims[d] = dims[size_t(d)];
  p.x = dx.get();
  p.y = dy.get();
  p.count = dc.get();
  kt::launch(nonzeroK<T, THREADS>, mgk::nonzeroBlocks<T, THREADS>(p), blockThreads,
             mgk::nonzeroSmemBytes<T, THREADS>(), p);
  ASSERT_EQ(dc.host()[0], count);
  std::vector<int64_t> got = dy.host();
  for (size_t i = 0; i < got.size(); ++i) {
    const int64_t w = i < ref.size() ? ref[i] : kUnwritten;
    ASSERT_EQ(got[i], w) << "at " << i << " of " << got.size() << " (count " << count << ")";
  }
}

bool nzFloat(float v) { return v != 0.f; }
bool nzInt(int32_t v) { return v != 0; }
bool nzByte(uint8_t v) { return v != 0; }
bool nzHalf(mgk::Half v) { return mgk::halfToFloat(v.bits) != 0.f; }

TEST(SelectKernel, NonZeroFloatCountsNoneSomeAll) {
  std::mt19937 rng(5);
  const std::vector<int64_t> dims = {3, 5, 7};
  std::vector<float> some = kt::randomVec(105, rng);
  for (size_t i = 0; i < some.size(); i += 3) some[i] = 0.f;
  some[4] = -0.f;                                     // zero
  some[7] = std::numeric_limits<float>::quiet_NaN();  // not zero
  for (int threads : {4, 8}) {  // 8: four idle threads at every barrier
    nonzeroCase<float, 4>(std::vector<float>(105, 0.f), dims, nzFloat, threads);
    nonzeroCase<float, 4>(some, dims, nzFloat, threads);
    nonzeroCase<float, 4>(std::vector<float>(105, 2.5f), dims, nzFloat, threads);
  }
  nonzeroCase<float, 64>(some, dims, nzFloat, 64);  // chunks of 2, the last threads empty
  nonzeroCase<float, 256>(std::vector<float>{0.f, 3.f}, {2}, nzFloat, 256);
}

TEST(SelectKernel, NonZeroIntBoolHalf) {
  std::mt19937 rng(9);
  std::vector<int32_t> xi(60);
  for (int32_t& v : xi) v = int32_t(rng() % 3) - 1;
  nonzeroCase<int32_t, 8>(xi, {60}, nzInt, 8);
  nonzeroCase<int32_t, 8>(xi, {2, 3, 2, 5}, nzInt, 16);
  std::vector<uint8_t> xb(24);
  for (uint8_t& v : xb) v = uint8_t(rng() % 2);
  nonzeroCase<uint8_t, 4>(xb, {4, 6}, nzByte, 4);
  std::vector<mgk::Half> xh(12);
  for (size_t i = 0; i < xh.size(); ++i)
    xh[i] = mgk::Half{mgk::floatToHalf(i % 4 == 0 ? 0.f : float(i) - 6.f)};
  xh[1] = mgk::Half{0x8000};  // -0
  nonzeroCase<mgk::Half, 4>(xh, {3, 4}, nzHalf, 4);
}

// Compress of x viewed as [outer, axisLen, inner] by a condition of condLen.
template <typename W, int THREADS>
void compressCase(int64_t outer, int64_t axisLen, int64_t inner, const std::vector<uint8_t>& cond,
                  int blockThreads, std::mt19937& rng) {
  std::vector<W> x(size_t(outer * axisLen * inner));
  for (W& v : x) v = W(rng());
  const int64_t n = std::min<int64_t>(int64_t(cond.size()), axisLen);
  std::vector<int64_t> kept;
  for (int64_t a = 0; a < n; ++a)
    if (cond[size_t(a)]) kept.push_back(a);
  const int64_t count = int64_t(kept.size());
  std::vector<W> ref;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a : kept)
      for (int64_t i = 0; i < inner; ++i) ref.push_back(x[size_t((o * axisLen + a) * inner + i)]);
  const W fill = W(0x5a5a5a5a5a5a5a5aull);
  Dev<W> dx(x);
  Dev<uint8_t> dcond(cond);
  Dev<W> dy(std::vector<W>(size_t(outer * n * inner), fill));
  Dev<int64_t> dc(std::vector<int64_t>{-1});
  mgk::CompressParams p{};
  p.outer = outer;
  p.axisLen = axisLen;
  p.inner = inner;
  p.condLen = int64_t(cond.size());
  p.condition = dcond.get();
  p.x = dx.get();
  p.y = dy.get();
  p.count = dc.get();
  kt::launch(compressK<W, THREADS>, mgk::compressBlocks<W, THREADS>(p), blockThreads,
             mgk::compressSmemBytes<W, THREADS>(), p);
  ASSERT_EQ(dc.host()[0], count);
  std::vector<W> got = dy.host();
  for (size_t i = 0; i < got.size(); ++i) {
    const W w = i < ref.size() ? ref[i] : fill;
    ASSERT_EQ(got[i], w) << "at " << i << " (count " << count << ")";
  }
}

TEST(SelectKernel, CompressAlongAnAxisAndFlattened) {
  std::mt19937 rng(3);
  const std::vector<uint8_t> none(7, 0), all(7, 1), some = {1, 0, 0, 1, 1, 0, 1};
  for (const auto* c : {&none, &some, &all}) {
    compressCase<uint32_t, 4>(2, 7, 3, *c, 8, rng);  // float: axis 1 of [2, 7, 3]
    compressCase<uint8_t, 2>(1, 7, 1, *c, 2, rng);   // bool, flattened
    compressCase<uint64_t, 8>(3, 7, 1, *c, 8, rng);  // int64, last axis
  }
  // A condition shorter than the axis selects among its positions only; a longer one stops at it.
  compressCase<uint16_t, 4>(2, 9, 2, some, 4, rng);
  compressCase<uint32_t, 4>(1, 4, 5, some, 4, rng);
}

}  // namespace
