// The package core (runtime/cpu/mg_package.cpp), driven with hand-written Programs as generated
// NAME.cpp files declare them: create/run/destroy, weights from the embedded blob and from a file
// (size and checksum checked), a parallel region, misuse (null pointers, bad indexes, destroyed
// handles), and two programs in one process, whose handles are refused by the other's functions.
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

// Program W: two stacked LSTM layers (hidden 8, 12 steps, batch 2) as a wavefront region, as the
// CPU generator emits one: layer 1's X is layer 0's Y without its direction axis (a second slot on
// the same arena bytes) and its attributes carry wavefront_stage = 1, so at two or more threads it
// runs beside layer 0, waiting step by step on its published progress (f_recurrent.cpp). Its
// outputs must equal, bit for bit, those of the same steps run one after another (no region).
constexpr int kWfSeq = 12, kWfBatch = 2, kWfIn = 8, kWfHidden = 8, kWfGates = 4 * kWfHidden;
constexpr int64_t kWfWBytes = 4 * kWfGates * kWfIn, kWfRBytes = 4 * kWfGates * kWfHidden;
constexpr int64_t kWfYBytes = 4 * kWfSeq * kWfBatch * kWfHidden;
std::vector<float> wavefrontWeights() {  // W0, R0, W1, R1
  std::vector<float> w(2 * (kWfGates * kWfIn + kWfGates * kWfHidden));
  uint32_t s = 12345;
  for (float& v : w) s = s * 1664525u + 1013904223u, v = (static_cast<float>(s >> 8) / 16777216.f - 0.5f);
  return w;
}
const SlotDesc kSlotsW[] = {
    {kF32, 3, kInput, 0, 4 * kWfSeq * kWfBatch * kWfIn, {kWfSeq, kWfBatch, kWfIn}},
    {kF32, 3, kWeights, 0, kWfWBytes, {1, kWfGates, kWfIn}},
    {kF32, 3, kWeights, kWfWBytes, kWfRBytes, {1, kWfGates, kWfHidden}},
    {kF32, 3, kWeights, kWfWBytes + kWfRBytes, kWfWBytes, {1, kWfGates, kWfHidden}},
    {kF32, 3, kWeights, 2 * kWfWBytes + kWfRBytes, kWfRBytes, {1, kWfGates, kWfHidden}},
    {kF32, 4, kArena, 0, kWfYBytes, {kWfSeq, 1, kWfBatch, kWfHidden}},  // Y0
    {kF32, 3, kArena, 0, kWfYBytes, {kWfSeq, kWfBatch, kWfHidden}},     // X1: Y0 squeezed
    {kF32, 4, kOutput, 0, kWfYBytes, {kWfSeq, 1, kWfBatch, kWfHidden}}, // Y1
    {kF32, 3, kOutput, 1, 4 * kWfBatch * kWfHidden, {1, kWfBatch, kWfHidden}},  // Y_h of layer 0
    {0, 0, 0, 0, 0, {0}},
};
const PortDesc kInW[] = {{"x", 0}, {nullptr, -1}};
const PortDesc kOutW[] = {{"y", 7}, {"h0", 8}, {nullptr, -1}};
const int32_t kIoW[] = {0, 1, 2, /**/ 5, 8, /**/ 6, 3, 4, /**/ 7, -1};
const RegionDesc kRegionsW[] = {{0, 2, 0}, {-1, 0, 0}};
const int32_t kOrderW[] = {0, 1, -1};

TEST(PackageCore, WavefrontRegionEqualsLayerByLayer) {
  const std::vector<float> weights = wavefrontWeights();
  const auto* blob = reinterpret_cast<const unsigned char*>(weights.data());
  const size_t blobBytes = weights.size() * sizeof(float);
  std::vector<float> x(kWfSeq * kWfBatch * kWfIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  for (const char* dir : {"forward", "reverse"}) {
    const std::string a0 = std::string("direction=s:") + dir + ";hidden_size=i:8";
    const std::string a1 = a0 + ";wavefront_stage=i:1";
    const StepDesc steps[] = {{"LSTM", "l0", a0.c_str(), 0, 3, 2}, {"LSTM", "l1", a1.c_str(), 5, 3, 1},
                              {nullptr, nullptr, nullptr, 0, 0, 0}};
    auto program = [&](bool region) {
      return Program{"pw", kWfYBytes, blobBytes, fnv(blob, blobBytes), blob, blob + blobBytes, kSlotsW, 9,
                     kInW, 1, kOutW, 2, kIoW, steps, 2, region ? kRegionsW : kNoRegions, region ? 1 : 0,
                     region ? kOrderW : kNoOrder, kNoCopies, 0};
    };
    auto runAt = [&](bool region, int threads) {
      Program p = program(region);
      Model* m = nullptr;
      EXPECT_EQ(create(p, &m, nullptr), kOk) << lastError(p, nullptr);
      EXPECT_EQ(setNumThreads(p, m, threads), kOk);
      std::vector<float> y(kWfYBytes / 4), h(kWfBatch * kWfHidden);
      const void* in[] = {x.data()};
      void* out[] = {y.data(), h.data()};
      for (int run = 0; run < 3; ++run)  // the progress counters start again at every run
        EXPECT_EQ(mgrt::pkg::run(p, m, in, out), kOk) << lastError(p, m);
      destroy(p, m);
      y.insert(y.end(), h.begin(), h.end());
      return y;
    };
    const std::vector<float> expected = runAt(false, 1);
    float largest = 0;
    for (float v : expected) largest = std::max(largest, std::fabs(v));
    EXPECT_GT(largest, 0.05f) << dir;  // the layers computed something
    for (int threads : {1, 2, 4}) {
      const std::vector<float> got = runAt(true, threads);
      EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), expected.size() * sizeof(float)))
          << dir << ", " << threads << " threads";
    }
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
