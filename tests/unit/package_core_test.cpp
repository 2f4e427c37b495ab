// The package core (runtime/cpu/mg_package.cpp), driven with hand-written Programs as generated
// NAME.cpp files declare them: create/run/destroy, weights from the embedded blob and from a file
// (size and checksum checked), a parallel region, misuse (null pointers, bad indexes, destroyed
// handles), and two programs in one process, whose handles are refused by the other's functions.
// Dynamic dimensions: a hand-written dynamic Program (a symbol N in 1..8, a parallel region, a
// weight GEMM, shape-data elements read by a step and returned as outputs) run at several N
// against plain loops, with 1 and 2 threads, and every refusal of set_input_dims.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "mg_package.h"

namespace {

using namespace mgrt::pkg;

uint64_t fnv(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

constexpr int kF32 = 1;

// Program A: y = Relu(x + w) on 4 floats, w from the weights; two slots in the arena.
// Slots: 0 x (input 0), 1 w (weights), 2 sum (arena), 3 y (output 0).
const float kW[4] = {1.f, -2.f, 0.5f, -0.25f};
const unsigned char* wBytes() { return reinterpret_cast<const unsigned char*>(kW); }
const SlotDesc kSlotsA[] = {
    {kF32, 1, kInput, 0, 16, {4}},   {kF32, 1, kWeights, 0, 16, {4}},
    {kF32, 1, kArena, 0, 16, {4}},   {kF32, 1, kOutput, 0, 16, {4}},
    {0, 0, 0, 0, 0, {0}},
};
const PortDesc kInA[] = {{"x", 0}, {nullptr, -1}};
const PortDesc kOutA[] = {{"y", 3}, {nullptr, -1}};
const int32_t kIoA[] = {0, 1, 2, /**/ 2, 3, -1};
const StepDesc kStepsA[] = {{"Add", "add", "", 0, 2, 1}, {"Relu", "relu", "", 3, 1, 1}, {nullptr, nullptr, nullptr, 0, 0, 0}};
const RegionDesc kNoRegions[] = {{-1, 0, 0}};
const int32_t kNoOrder[] = {-1};
const CopyDesc kNoCopies[] = {{-1, -1}};

Program programA(const unsigned char* embedded) {
  return {"pa", 64, 16, fnv(wBytes(), 16), embedded, embedded ? embedded + 16 : nullptr,
          kSlotsA, 4, kInA, 1, kOutA, 1, kIoA, kStepsA, 2, kNoRegions, 0, kNoOrder, kNoCopies, 0};
}

// Program B: two independent Negs of one input in one parallel region, then their Sum.
// Slots: 0 x (input), 1 a, 2 b (arena), 3 y (output).
const SlotDesc kSlotsB[] = {
    {kF32, 1, kInput, 0, 8, {2}}, {kF32, 1, kArena, 0, 8, {2}}, {kF32, 1, kArena, 64, 8, {2}},
    {kF32, 1, kOutput, 0, 8, {2}}, {0, 0, 0, 0, 0, {0}},
};
const PortDesc kInB[] = {{"x", 0}, {nullptr, -1}};
const PortDesc kOutB[] = {{"y", 3}, {nullptr, -1}};
const int32_t kIoB[] = {0, 1, /**/ 0, 2, /**/ 1, 2, 3, -1};
const StepDesc kStepsB[] = {{"Neg", "n1", "", 0, 1, 1}, {"Neg", "n2", "", 2, 1, 1},
                            {"Sum", "s", "", 4, 2, 1}, {nullptr, nullptr, nullptr, 0, 0, 0}};
const RegionDesc kRegionsB[] = {{0, 2, 0}, {-1, 0, 0}};
const int32_t kOrderB[] = {1, 0, -1};
const Program kProgramB = {"pb", 128, 0, fnv(nullptr, 0), nullptr, nullptr, kSlotsB, 4, kInB, 1,
                           kOutB, 1, kIoB, kStepsB, 3, kRegionsB, 1, kOrderB, kNoCopies, 0};

TEST(PackageCore, RunsWithEmbeddedWeights) {
  Program a = programA(wBytes());
  Model* m = nullptr;
  ASSERT_EQ(create(a, &m, nullptr), kOk) << lastError(a, nullptr);
  float x[4] = {1, 1, 1, 1}, y[4] = {};
  const void* in[] = {x};
  void* out[] = {y};
  ASSERT_EQ(run(a, m, in, out), kOk) << lastError(a, m);
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{2.f, 0.f, 1.5f, 0.75f}));
  EXPECT_STREQ(portName(a, false, 0), "x");
  EXPECT_EQ(portBytes(a, true, 0), 16u);
  EXPECT_EQ(portDims(a, true, 0)[0], 4);
  EXPECT_EQ(portName(a, true, 1), nullptr);
  EXPECT_NE(std::string(lastError(a, nullptr)).find("output index 1 is out of range [0, 1)"), std::string::npos);
  destroy(a, m);
}

TEST(PackageCore, WeightsFileSizeAndChecksum) {
  Program a = programA(nullptr);
  Model* m = nullptr;
  EXPECT_EQ(create(a, &m, nullptr), kErrWeights);
  EXPECT_NE(std::string(lastError(a, nullptr)).find("compiled with --weights-file: pass the path of pa_weights.bin"),
            std::string::npos);
  auto dir = std::filesystem::temp_directory_path() / ("pkgcore-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const void* p, size_t n) {
    std::string path = (dir / name).string();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(p, 1, n, f);
    std::fclose(f);
    return path;
  };
  std::string good = write("good.bin", kW, 16), shortFile = write("short.bin", kW, 12);
  float bad[4] = {1.f, -2.f, 0.5f, 9.f};
  std::string corrupt = write("corrupt.bin", bad, 16);
  EXPECT_EQ(create(a, &m, shortFile.c_str()), kErrWeights);
  EXPECT_NE(std::string(lastError(a, nullptr)).find("has the wrong size (12 bytes instead of 16 bytes)"),
            std::string::npos);
  EXPECT_EQ(create(a, &m, corrupt.c_str()), kErrWeights);
  EXPECT_NE(std::string(lastError(a, nullptr)).find("fails its checksum"), std::string::npos);
  ASSERT_EQ(create(a, &m, good.c_str()), kOk) << lastError(a, nullptr);
  float x[4] = {0, 0, 0, 0}, y[4] = {};
  const void* in[] = {x};
  void* out[] = {y};
  ASSERT_EQ(run(a, m, in, out), kOk);
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{1.f, 0.f, 0.5f, 0.f}));
  destroy(a, m);
  std::filesystem::remove_all(dir);
}

TEST(PackageCore, ParallelRegionAtOneAndTwoThreads) {
  for (int threads : {1, 2}) {
    Model* m = nullptr;
    ASSERT_EQ(create(kProgramB, &m, nullptr), kOk) << lastError(kProgramB, nullptr);
    ASSERT_EQ(setNumThreads(kProgramB, m, threads), kOk);
    float x[2] = {1.5f, -2.f}, y[2] = {};
    const void* in[] = {x};
    void* out[] = {y};
    ASSERT_EQ(run(kProgramB, m, in, out), kOk) << lastError(kProgramB, m);
    EXPECT_EQ(std::vector<float>(y, y + 2), (std::vector<float>{-3.f, 4.f})) << threads << " threads";
    destroy(kProgramB, m);
  }
}

TEST(PackageCore, MisuseIsRefusedWithAMessage) {
  Program a = programA(wBytes());
  EXPECT_EQ(create(a, nullptr, nullptr), kErrInvalidArgument);
  EXPECT_STREQ(lastError(a, nullptr), "pa_create: model is NULL");
  Model* m = nullptr;
  ASSERT_EQ(create(a, &m, nullptr), kOk);
  float x[4] = {}, y[4] = {};
  const void* in[] = {nullptr};
  void* out[] = {y};
  EXPECT_EQ(run(a, m, in, out), kErrInvalidArgument);
  EXPECT_NE(std::string(lastError(a, m)).find("input 0 ('x') is a null pointer"), std::string::npos);
  EXPECT_EQ(run(a, m, nullptr, out), kErrInvalidArgument);
  EXPECT_EQ(setNumThreads(a, m, 0), kErrInvalidArgument);
  EXPECT_EQ(run(a, nullptr, in, out), kErrInvalidArgument);
  EXPECT_NE(std::string(lastError(a, nullptr)).find("pa_run: not a live handle"), std::string::npos);
  destroy(a, m);
  const void* in2[] = {x};
  EXPECT_EQ(run(a, m, in2, out), kErrInvalidArgument);  // destroyed: detected, not used
  destroy(a, m);                                        // twice: detected, not freed again
  EXPECT_NE(std::string(lastError(a, nullptr)).find("pa_destroy: not a live handle"), std::string::npos);
}

TEST(PackageCore, TwoProgramsInOneProcessKeepTheirHandlesApart) {
  Program a = programA(wBytes());
  Model* ma = nullptr;
  Model* mb = nullptr;
  ASSERT_EQ(create(a, &ma, nullptr), kOk);
  ASSERT_EQ(create(kProgramB, &mb, nullptr), kOk);
  float x[4] = {1, 1, 1, 1}, y[4] = {};
  const void* in[] = {x};
  void* out[] = {y};
  EXPECT_EQ(run(kProgramB, ma, in, out), kErrInvalidArgument);  // a's handle, b's function
  EXPECT_NE(std::string(lastError(kProgramB, nullptr)).find("pb_run: not a live handle"), std::string::npos);
  destroy(kProgramB, ma);  // refused: still live for a
  EXPECT_EQ(run(a, ma, in, out), kOk) << lastError(a, ma);
  destroy(a, ma);
  destroy(kProgramB, mb);
}

// Program D (dynamic): x f32[N,4], z f32[N,1], N in 1..8; a = Relu(x) and b = Abs(x) as one
// parallel region, c = a + b, d = c * z, y = d @ w (w f32[4,3] weights) -> f32[N,3]; the shape
// data shp = {N, 3N} (int64, written by the runtime) is read by Cast -> shpf f32[2] and returned
// as is, like n = {N} (int32).
// Slots: 0 x, 1 z (inputs), 2 w (weights), 3 a, 4 b, 5 c, 6 d (arena), 7 y, 9 shpf (outputs),
// 8 shp, 10 n (arena, elements from the dim code).
constexpr int kI32 = 6, kI64 = 7;
const float kWd[12] = {0.5f, -1.f, 2.f, 1.5f, 0.25f, -0.5f, -2.f, 1.f, 0.75f, 1.f, -0.25f, 3.f};
const SlotDesc kSlotsD[] = {
    {kF32, 2, kInput, 0, 128, {8, 4}},  {kF32, 2, kInput, 1, 32, {8, 1}},   {kF32, 2, kWeights, 0, 48, {4, 3}},
    {kF32, 2, kArena, 0, 128, {8, 4}},  {kF32, 2, kArena, 128, 128, {8, 4}}, {kF32, 2, kArena, 256, 128, {8, 4}},
    {kF32, 2, kArena, 384, 128, {8, 4}}, {kF32, 2, kOutput, 0, 96, {8, 3}},  {kI64, 1, kArena, 512, 16, {2}},
    {kF32, 1, kOutput, 1, 8, {2}},      {kI32, 1, kArena, 576, 4, {1}},     {0, 0, 0, 0, 0, {0}},
};
const PortDesc kInD[] = {{"x", 0}, {"z", 1}, {nullptr, -1}};
const PortDesc kOutD[] = {{"y", 7}, {"shpf", 9}, {"shape", 8}, {"n", 10}, {nullptr, -1}};
const int32_t kIoD[] = {0, 3, /**/ 0, 4, /**/ 3, 4, 5, /**/ 5, 1, 6, /**/ 6, 2, 7, /**/ 8, 9, -1};
const StepDesc kStepsD[] = {{"Relu", "relu", "", 0, 1, 1},    {"Abs", "abs", "", 2, 1, 1},
                            {"Add", "add", "", 4, 2, 1},      {"Mul", "mul", "", 7, 2, 1},
                            {"MatMul", "mm", "", 10, 2, 1},   {"Cast", "cast", "to=i:1", 13, 1, 1},
                            {nullptr, nullptr, nullptr, 0, 0, 0}};
const RegionDesc kRegionsD[] = {{0, 2, 0}, {-1, 0, 0}};
const int32_t kOrderD[] = {1, 0, -1};
const CopyDesc kCopiesD[] = {{2, 8}, {3, 10}, {-1, -1}};
const SymbolDesc kSymbolsD[] = {{"N", 1, 8, 0, 0}, {nullptr, 0, 0, -1, -1}};
const int64_t kCodeD[] = {mgrt::abi::kDimSym, 0, mgrt::abi::kDimEnd,
                          mgrt::abi::kDimConst, 3, mgrt::abi::kDimSym, 0, mgrt::abi::kDimMul, mgrt::abi::kDimEnd};
const DynEntry kDynD[] = {
    {0, mgrt::abi::kDynDim, 0, 0}, {1, mgrt::abi::kDynDim, 0, 0}, {3, mgrt::abi::kDynDim, 0, 0},
    {4, mgrt::abi::kDynDim, 0, 0}, {5, mgrt::abi::kDynDim, 0, 0}, {6, mgrt::abi::kDynDim, 0, 0},
    {7, mgrt::abi::kDynDim, 0, 0}, {8, mgrt::abi::kDynElement, 0, 0}, {8, mgrt::abi::kDynElement, 1, 3},
    {10, mgrt::abi::kDynElement, 0, 0}, {-1, 0, 0, 0}};
const unsigned char* wdBytes() { return reinterpret_cast<const unsigned char*>(kWd); }
const Program kProgramD = {"pd", 640, 48, fnv(wdBytes(), 48), wdBytes(), wdBytes() + 48, kSlotsD, 11, kInD, 2,
                           kOutD, 4, kIoD, kStepsD, 6, kRegionsD, 1, kOrderD, kCopiesD, 2,
                           kSymbolsD, 1, kCodeD, kDynD, 10};

std::string dynMessage(const Model* m) { return lastError(kProgramD, m); }

bool setDimsD(Model* m, int input, std::vector<int64_t> dims) {
  return setInputDims(kProgramD, m, input, dims.data(), static_cast<int>(dims.size())) == kOk;
}

TEST(PackageCore, DynamicProgramRunsAtEveryShapeAgainstPlainLoops) {
  const Program& p = kProgramD;
  EXPECT_EQ(numSymbols(p), 1);
  EXPECT_STREQ(symbolName(p, 0), "N");
  int64_t lo = 0, hi = 0;
  ASSERT_EQ(symbolRange(p, 0, &lo, &hi), kOk);
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 8);
  EXPECT_EQ(symbolName(p, 1), nullptr);
  EXPECT_EQ(symbolRange(p, -1, &lo, &hi), kErrInvalidArgument);
  for (int threads : {1, 2}) {
    Model* m = nullptr;
    ASSERT_EQ(create(p, &m, nullptr), kOk) << lastError(p, nullptr);
    ASSERT_EQ(setNumThreads(p, m, threads), kOk);
    // create binds every symbol at its maximum.
    EXPECT_EQ(modelPortDims(p, m, false, 0)[0], 8);
    EXPECT_EQ(modelPortBytes(p, m, true, 0), 96u);
    for (int64_t n : {1, 3, 8, 3}) {
      ASSERT_TRUE(setDimsD(m, 0, {n, 4})) << dynMessage(m);
      ASSERT_TRUE(setDimsD(m, 1, {n, 1})) << dynMessage(m);
      EXPECT_EQ(modelPortDims(p, m, true, 0)[0], n);
      EXPECT_EQ(modelPortDims(p, m, true, 0)[1], 3);
      EXPECT_EQ(modelPortBytes(p, m, false, 0), static_cast<size_t>(16 * n));
      EXPECT_EQ(modelPortBytes(p, m, true, 0), static_cast<size_t>(12 * n));
      EXPECT_EQ(portDims(p, false, 0)[0], 8) << "the static introspection keeps the maximum";
      // Buffers of exactly the current sizes.
      std::vector<float> x(4 * n), z(n), y(3 * n, -99.f), shpf(2);
      std::vector<int64_t> shape(2);
      std::vector<int32_t> n32(1);
      for (int64_t i = 0; i < 4 * n; ++i) x[i] = 0.25f * static_cast<float>((i * 7) % 11) - 1.f;
      for (int64_t i = 0; i < n; ++i) z[i] = 1.f + 0.5f * static_cast<float>(i);
      const void* in[] = {x.data(), z.data()};
      void* out[] = {y.data(), shpf.data(), shape.data(), n32.data()};
      ASSERT_EQ(run(p, m, in, out), kOk) << dynMessage(m);
      for (int64_t r = 0; r < n; ++r)
        for (int j = 0; j < 3; ++j) {
          float want = 0;
          for (int k = 0; k < 4; ++k) {
            const float v = x[r * 4 + k];
            want += (std::max(v, 0.f) + std::fabs(v)) * z[r] * kWd[k * 3 + j];
          }
          EXPECT_NEAR(y[r * 3 + j], want, 1e-5f) << "N=" << n << " row " << r << " col " << j << ", " << threads;
        }
      EXPECT_EQ(shape, (std::vector<int64_t>{n, 3 * n}));
      EXPECT_EQ(shpf, (std::vector<float>{static_cast<float>(n), static_cast<float>(3 * n)}));
      EXPECT_EQ(n32[0], n);
    }
    destroy(p, m);
  }
}

TEST(PackageCore, DynamicRefusalsNameInputDimSymbolAndRangeAndChangeNothing) {
  const Program& p = kProgramD;
  Model* m = nullptr;
  ASSERT_EQ(create(p, &m, nullptr), kOk) << lastError(p, nullptr);
  ASSERT_TRUE(setDimsD(m, 0, {3, 4}));
  ASSERT_TRUE(setDimsD(m, 1, {3, 1}));
  auto refused = [&](int input, std::vector<int64_t> dims, const std::string& says) {
    EXPECT_EQ(setInputDims(p, m, input, dims.data(), static_cast<int>(dims.size())), kErrInvalidArgument);
    EXPECT_NE(dynMessage(m).find(says), std::string::npos) << dynMessage(m);
    EXPECT_EQ(modelPortDims(p, m, false, 0)[0], 3) << "a refusal leaves the binding: " << says;
    EXPECT_EQ(modelPortBytes(p, m, true, 0), 36u);
  };
  refused(0, {0, 4}, "pd_set_input_dims: input 0 ('x') dim 0 (symbol 'N') must be in [1, 8], got 0");
  refused(0, {9, 4}, "input 0 ('x') dim 0 (symbol 'N') must be in [1, 8], got 9");
  refused(0, {3}, "input 0 ('x') has rank 2, got 1 dims [3]");
  refused(0, {3, 4, 1}, "has rank 2, got 3");
  refused(0, {3, 5}, "input 0 ('x') dim 1 is static: it must be 4, got 5");
  refused(1, {5, 1}, "symbol 'N' is 3 in input 0 ('x') dim 0 (set since the last run), but input 1 ('z') dim 0 "
                     "gives 5: every input must agree");
  refused(2, {3, 4}, "input index 2 is out of range [0, 2)");
  EXPECT_EQ(setInputDims(p, m, 0, nullptr, 2), kErrInvalidArgument);
  EXPECT_NE(dynMessage(m).find("dims is NULL"), std::string::npos);
  EXPECT_EQ(setInputDims(p, nullptr, 0, nullptr, 2), kErrInvalidArgument);
  EXPECT_NE(std::string(lastError(p, nullptr)).find("pd_set_input_dims: not a live handle"), std::string::npos);
  EXPECT_EQ(modelPortDims(p, nullptr, false, 0), nullptr);
  EXPECT_EQ(modelPortBytes(p, m, true, 4), 0u);
  // After a run, one input may move N alone: the other's current dims follow the binding.
  std::vector<float> x(12, 1.f), z(3, 1.f), y(9), shpf(2);
  std::vector<int64_t> shape(2);
  int32_t n32 = 0;
  const void* in[] = {x.data(), z.data()};
  void* out[] = {y.data(), shpf.data(), shape.data(), &n32};
  ASSERT_EQ(run(p, m, in, out), kOk) << dynMessage(m);
  ASSERT_TRUE(setDimsD(m, 1, {5, 1})) << dynMessage(m);
  EXPECT_EQ(modelPortDims(p, m, false, 0)[0], 5);
  destroy(p, m);
}

TEST(PackageCore, InconsistentDynamicTablesFailCreate) {
  // The symbol said to come from a static dim, then an expression that disagrees with the slot's
  // largest dims: create refuses the package instead of running it on wrong shapes.
  const SymbolDesc wrongDim[] = {{"N", 1, 8, 0, 1}, {nullptr, 0, 0, -1, -1}};
  Program p = kProgramD;
  p.symbols = wrongDim;
  Model* m = nullptr;
  EXPECT_EQ(create(p, &m, nullptr), kErrRuntime);
  EXPECT_NE(std::string(lastError(p, nullptr)).find("symbol 'N' is not input 0 dim 1"), std::string::npos)
      << lastError(p, nullptr);
  const int64_t twice[] = {mgrt::abi::kDimSym, 0, mgrt::abi::kDimEnd, mgrt::abi::kDimConst, 2, mgrt::abi::kDimSym,
                           0, mgrt::abi::kDimMul, mgrt::abi::kDimEnd};  // {N, 2N}: shp[1] is fine, any code
  p = kProgramD;
  DynEntry rows[11];
  for (int r = 0; r < 11; ++r) rows[r] = kDynD[r];
  rows[6].code = 3;  // y's dim 0 = 2N: 16 at the maximum, the slot says 8
  p.dyn = rows;
  p.dimCode = twice;
  EXPECT_EQ(create(p, &m, nullptr), kErrRuntime);
  EXPECT_NE(std::string(lastError(p, nullptr)).find("output 0 ('y') would need 192 bytes, more than the 96 planned"),
            std::string::npos)
      << lastError(p, nullptr);
  EXPECT_EQ(m, nullptr);
}

TEST(PackageCore, StaticProgramAcceptsExactlyItsDims) {
  Program a = programA(wBytes());
  Model* m = nullptr;
  ASSERT_EQ(create(a, &m, nullptr), kOk);
  EXPECT_EQ(numSymbols(a), 0);
  int64_t four[] = {4}, five[] = {5};
  EXPECT_EQ(setInputDims(a, m, 0, four, 1), kOk) << lastError(a, m);
  EXPECT_EQ(setInputDims(a, m, 0, five, 1), kErrInvalidArgument);
  EXPECT_NE(std::string(lastError(a, m)).find("pa_set_input_dims: input 0 ('x') dim 0 is static: it must be 4, got 5"),
            std::string::npos)
      << lastError(a, m);
  EXPECT_EQ(modelPortDims(a, m, true, 0)[0], 4);
  EXPECT_EQ(modelPortBytes(a, m, true, 0), 16u);
  float x[4] = {1, 1, 1, 1}, y[4] = {};
  const void* in[] = {x};
  void* out[] = {y};
  ASSERT_EQ(run(a, m, in, out), kOk) << lastError(a, m);
  EXPECT_EQ(y[0], 2.f);
  destroy(a, m);
}

}  // namespace
