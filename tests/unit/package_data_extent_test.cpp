// Data-dependent extents in the package core (runtime/cpu/mg_package.cpp; docs/DYNAMIC_SHAPES.md,
// "Data-dependent extents"), driven with a hand-written Program as a generated NAME.cpp declares
// it: a NonZero whose count is the data symbol `nzc` feeds a Transpose, a Gather and a ReduceSum;
// the count is also shape data (an MgSymbolic element, written after the NonZero ran) returned as
// an output. Runs at counts 0, some and the bound (6) on one handle, in both orders, checking the
// values, model_output_dims and model_output_bytes of every run; the NonZero in a parallel region
// at 1 and 2 threads; a count outside the symbol's range is refused by name; a data symbol whose
// producer is no step fails create.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mg_package.h"
#include "mg_runtime.h"

namespace {

using namespace mgrt::pkg;
namespace abi = mgrt::abi;

constexpr int kF32 = 1, kI64 = 7;

// Slots: 0 x f32[6] (input 0); 1 nz i64[1,nzc] (output 2, capacity [1,6]); 2 t i64[nzc,1]
// (arena 0); 3 g f32[nzc,1] (output 0); 4 s f32[] (output 1); 5 cnt i64[1] = {nzc} (arena 64,
// output 3 by copy).
const SlotDesc kSlots[] = {
    {kF32, 1, kInput, 0, 24, {6}},     {kI64, 2, kOutput, 2, 48, {1, 6}}, {kI64, 2, kArena, 0, 48, {6, 1}},
    {kF32, 2, kOutput, 0, 24, {6, 1}}, {kF32, 0, kOutput, 1, 4, {0}},     {kI64, 1, kArena, 64, 8, {1}},
    {0, 0, 0, 0, 0, {0}},
};
const PortDesc kIn[] = {{"x", 0}, {nullptr, -1}};
const PortDesc kOut[] = {{"g", 3}, {"s", 4}, {"nz", 1}, {"cnt", 5}, {nullptr, -1}};
const int32_t kIo[] = {0, 1, /**/ 1, 2, /**/ 0, 2, 3, /**/ 3, 4, -1};
const StepDesc kSteps[] = {{"NonZero", "nonzero", "", 0, 1, 1},
                           {"Transpose", "tr", "perm=i:1,0", 2, 1, 1},
                           {"Gather", "gather", "axis=i:0", 4, 2, 1},
                           {"ReduceSum", "sum", "keepdims=i:0", 7, 1, 1},
                           {nullptr, nullptr, nullptr, 0, 0, 0}};
const RegionDesc kNoRegions[] = {{-1, 0, 0}};
const int32_t kNoOrder[] = {-1};
const CopyDesc kCopies[] = {{3, 5}, {-1, -1}};
const SymbolDesc kSymbols[] = {{"nzc", 0, 6, -1, 1, 1}, {nullptr, 0, 0, -1, -1, -1}};
const SymbolDesc kSymbolsFrom1[] = {{"nzc", 1, 6, -1, 1, 1}, {nullptr, 0, 0, -1, -1, -1}};
const SymbolDesc kSymbolsNoStep[] = {{"nzc", 0, 6, -1, 1, 4}, {nullptr, 0, 0, -1, -1, -1}};
const int64_t kCode[] = {abi::kDimSym, 0, abi::kDimEnd};
const DynEntry kDyn[] = {{1, abi::kDynDim, 1, 0}, {2, abi::kDynDim, 0, 0}, {3, abi::kDynDim, 0, 0},
                         {5, abi::kDynElement, 0, 0}, {-1, 0, 0, 0}};

Program program(const SymbolDesc* symbols) {
  return {"pdd", 128, 0, 0xcbf29ce484222325ull, nullptr, nullptr, kSlots, 6, kIn, 1, kOut, 4, kIo,
          kSteps, 4, kNoRegions, 0, kNoOrder, kCopies, 1, symbols, 1, kCode, kDyn, 4};
}

TEST(PackageDataExtent, NonZeroFeedsGatherAndSumAtEveryCount) {
  const Program p = program(kSymbols);
  Model* m = nullptr;
  ASSERT_EQ(create(p, &m, nullptr), kOk) << lastError(p, nullptr);
  // Before any run the outputs report their capacity.
  EXPECT_EQ(modelPortDims(p, m, true, 2)[1], 6);
  EXPECT_EQ(modelPortBytes(p, m, true, 0), 24u);
  const std::vector<std::vector<float>> inputs = {
      {0, 1.5f, 0, -2, 3, 0}, {0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6}, {0, 0, 7, 0, 0, 0}};
  for (const std::vector<float>& x : inputs) {
    std::vector<int64_t> want;
    float sum = 0;
    for (int64_t i = 0; i < 6; ++i)
      if (x[i] != 0) want.push_back(i), sum += x[i];
    const int64_t n = static_cast<int64_t>(want.size());
    std::vector<float> g(6, -99.f);
    float s = -99.f;
    std::vector<int64_t> nz(6, -99), cnt(1, -99);
    const void* in[] = {x.data()};
    void* out[] = {g.data(), &s, nz.data(), cnt.data()};
    ASSERT_EQ(run(p, m, in, out), kOk) << lastError(p, m);
    const int64_t* nzDims = modelPortDims(p, m, true, 2);
    EXPECT_EQ(nzDims[0], 1);
    EXPECT_EQ(nzDims[1], n);
    EXPECT_EQ(modelPortDims(p, m, true, 0)[0], n);
    EXPECT_EQ(modelPortBytes(p, m, true, 0), static_cast<size_t>(4 * n));
    EXPECT_EQ(modelPortBytes(p, m, true, 2), static_cast<size_t>(8 * n));
    for (int64_t k = 0; k < n; ++k) {
      EXPECT_EQ(nz[k], want[k]);
      EXPECT_EQ(g[k], x[want[k]]);
    }
    EXPECT_EQ(nz[n == 6 ? 5 : n], n == 6 ? want[5] : -99);  // nothing written past the count
    EXPECT_FLOAT_EQ(s, sum);
    EXPECT_EQ(cnt[0], n);  // shape data written after the NonZero ran
  }
  destroy(p, m);
}

// The same with the NonZero in a parallel region beside an independent Neg (slot 6, output 4):
// the count is bound after the region, whose members may run on two threads.
const SlotDesc kSlotsR[] = {
    {kF32, 1, kInput, 0, 24, {6}},     {kI64, 2, kOutput, 2, 48, {1, 6}}, {kI64, 2, kArena, 0, 48, {6, 1}},
    {kF32, 2, kOutput, 0, 24, {6, 1}}, {kF32, 0, kOutput, 1, 4, {0}},     {kI64, 1, kArena, 64, 8, {1}},
    {kF32, 1, kOutput, 4, 24, {6}},    {0, 0, 0, 0, 0, {0}},
};
const PortDesc kOutR[] = {{"g", 3}, {"s", 4}, {"nz", 1}, {"cnt", 5}, {"negx", 6}, {nullptr, -1}};
const int32_t kIoR[] = {0, 1, /**/ 0, 6, /**/ 1, 2, /**/ 0, 2, 3, /**/ 3, 4, -1};
const StepDesc kStepsR[] = {{"NonZero", "nonzero", "", 0, 1, 1},
                            {"Neg", "neg", "", 2, 1, 1},
                            {"Transpose", "tr", "perm=i:1,0", 4, 1, 1},
                            {"Gather", "gather", "axis=i:0", 6, 2, 1},
                            {"ReduceSum", "sum", "keepdims=i:0", 9, 1, 1},
                            {nullptr, nullptr, nullptr, 0, 0, 0}};
const RegionDesc kRegionsR[] = {{0, 2, 0}, {-1, 0, 0}};
const int32_t kOrderR[] = {0, 1, -1};

TEST(PackageDataExtent, ProducerInAParallelRegionAtOneAndTwoThreads) {
  const Program p = {"pddr", 128, 0, 0xcbf29ce484222325ull, nullptr, nullptr, kSlotsR, 7, kIn, 1, kOutR, 5, kIoR,
                     kStepsR, 5, kRegionsR, 1, kOrderR, kCopies, 1, kSymbols, 1, kCode, kDyn, 4};
  for (int threads : {1, 2}) {
    Model* m = nullptr;
    ASSERT_EQ(create(p, &m, nullptr), kOk) << lastError(p, nullptr);
    ASSERT_EQ(setNumThreads(p, m, threads), kOk);
    for (const std::vector<float>& x : {std::vector<float>{0, 2, 0, 0, 5, 1}, std::vector<float>(6, 0.f)}) {
      std::vector<float> g(6), negx(6);
      float s = 0;
      std::vector<int64_t> nz(6), cnt(1);
      const void* in[] = {x.data()};
      void* out[] = {g.data(), &s, nz.data(), cnt.data(), negx.data()};
      ASSERT_EQ(run(p, m, in, out), kOk) << lastError(p, m);
      const int64_t n = x[1] != 0 ? 3 : 0;
      EXPECT_EQ(modelPortDims(p, m, true, 0)[0], n) << threads;
      EXPECT_EQ(cnt[0], n);
      EXPECT_FLOAT_EQ(s, n ? 8.f : 0.f);
      if (n) EXPECT_EQ(std::vector<int64_t>(nz.begin(), nz.begin() + 3), (std::vector<int64_t>{1, 4, 5}));
      for (int k = 0; k < 6; ++k) EXPECT_EQ(negx[k], -x[k]);
    }
    destroy(p, m);
  }
}

TEST(PackageDataExtent, CountOutsideTheRangeIsRefusedByNodeAndCount) {
  const Program p = program(kSymbolsFrom1);
  Model* m = nullptr;
  ASSERT_EQ(create(p, &m, nullptr), kOk) << lastError(p, nullptr);
  std::vector<float> x(6, 0.f), g(6), nz(12);
  float s = 0;
  int64_t cnt = 0;
  const void* in[] = {x.data()};
  void* out[] = {g.data(), &s, nz.data(), &cnt};
  EXPECT_EQ(run(p, m, in, out), kErrRuntime);
  const std::string e = lastError(p, m);
  EXPECT_NE(e.find("step 0 (NonZero, node 'nonzero') computed extent 0 for data symbol 'nzc', "
                   "outside its range [1, 6]"),
            std::string::npos)
      << e;
  x[3] = 1.f;  // count 1: accepted on the same handle
  EXPECT_EQ(run(p, m, in, out), kOk) << lastError(p, m);
  EXPECT_EQ(modelPortDims(p, m, true, 2)[1], 1);
  destroy(p, m);
}

TEST(PackageDataExtent, KernelsCannotReportAnExtentPastTheCapacity) {
  // Ctx::setDataExtent: a data-dependent result takes any count up to its capacity; past it (a
  // kernel bug) it is refused before anything is written, and an exact result (no data symbol)
  // takes only its own extent.
  mgrt::Tensor t;
  t.rank = 2;
  t.dims[0] = 2;
  t.dims[1] = 6;
  mgrt::Ctx c;
  c.dataExtents = true;
  EXPECT_FALSE(c.setDataExtent(t, 1, 7));
  EXPECT_FALSE(c.setDataExtent(t, 1, -1));
  EXPECT_EQ(t.dims[1], 6);
  EXPECT_TRUE(c.setDataExtent(t, 1, 0));
  EXPECT_EQ(t.dims[1], 0);
  c.dataExtents = false;
  t.dims[1] = 6;
  EXPECT_FALSE(c.setDataExtent(t, 1, 5));
  EXPECT_TRUE(c.setDataExtent(t, 1, 6));
}

TEST(PackageDataExtent, DataSymbolWithoutProducingStepFailsCreate) {
  const Program p = program(kSymbolsNoStep);
  Model* m = nullptr;
  EXPECT_EQ(create(p, &m, nullptr), kErrRuntime);
  EXPECT_NE(std::string(lastError(p, nullptr)).find("data symbol 'nzc' is not dim 1 of a step's result"),
            std::string::npos)
      << lastError(p, nullptr);
}

}  // namespace
