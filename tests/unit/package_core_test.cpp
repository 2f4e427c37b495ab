// The package core (runtime/cpu/mg_package.cpp), driven with hand-written Programs as generated
// NAME.cpp files declare them: create/run/destroy, weights from the embedded blob and from a file
// (size and checksum checked), a parallel region, misuse (null pointers, bad indexes, destroyed
// handles), and two programs in one process, whose handles are refused by the other's functions.
#include <gtest/gtest.h>

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

}  // namespace
