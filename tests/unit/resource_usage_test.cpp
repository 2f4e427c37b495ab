// Resource feedback: ptxas' verbose output parsed per entry (registers, spills, stack, static
// shared memory, other architectures skipped), and the occupancy formula against numbers worked
// by hand for the H200 profile (65536 registers in 4 files of 16384, allocated per warp in units
// of 256; 64 warps and 32 blocks per SM; 228 KB of shared memory, 128-byte units, 1 KB reserved
// per block).
#include "magneto/target/resource_usage.h"

#include <gtest/gtest.h>

using namespace magneto;

namespace {

const char* kPtxasSample =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_ZN8mgr_abcd8mgk_abcdEPKNS_6MgArgsE' for 'sm_90'\n"
    "ptxas info    : Function properties for _ZN8mgr_abcd8mgk_abcdEPKNS_6MgArgsE\n"
    "    16 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads\n"
    "ptxas info    : Used 168 registers, used 1 barriers, 512 bytes smem, 384 bytes cmem[0]\n"
    "ptxas info    : Compile time = 63.941 ms\n"
    "ptxas info    : Compiling entry function '_Z5probeILm36864EEvv' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z5probeILm36864EEvv\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 4 registers, used 0 barriers\n"
    "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\n"
    "ptxas info    : Function properties for _Z1kPf\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 12 registers, used 1 barriers, 256 bytes smem\n";

DeviceProfile h200() {
  auto p = loadDeviceProfile("h200");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p.value() : DeviceProfile{};
}

}  // namespace

TEST(PtxasParse, ReadsEveryEntryOfTheArchitecture) {
  auto all = parsePtxasVerbose(kPtxasSample);
  ASSERT_EQ(all.size(), 3u);
  auto sm90 = parsePtxasVerbose(kPtxasSample, "sm_90");
  ASSERT_EQ(sm90.size(), 2u);
  const PtxasKernelUsage& k = sm90.at("_ZN8mgr_abcd8mgk_abcdEPKNS_6MgArgsE");
  EXPECT_EQ(k.registers, 168);
  EXPECT_EQ(k.stackBytes, 16);
  EXPECT_EQ(k.spillStoreBytes, 24);
  EXPECT_EQ(k.spillLoadBytes, 20);
  EXPECT_EQ(k.staticSmemBytes, 512);  // not the 384 bytes of cmem
  EXPECT_EQ(k.barriers, 1);
  const PtxasKernelUsage& probe = sm90.at("_Z5probeILm36864EEvv");
  EXPECT_EQ(probe.registers, 4);
  EXPECT_EQ(probe.staticSmemBytes, 0);
  EXPECT_EQ(all.at("_Z1kPf").registers, 12);
  EXPECT_EQ(all.at("_Z1kPf").staticSmemBytes, 256);
  EXPECT_TRUE(parsePtxasVerbose(kPtxasSample, "sm_75").empty());
}

TEST(PtxasParse, EntryWithoutUsedLineIsLeftOut) {
  auto r = parsePtxasVerbose(
      "ptxas info    : Compiling entry function 'a' for 'sm_90'\n"
      "ptxas error   : something went wrong\n");
  EXPECT_TRUE(r.empty());
}

TEST(Occupancy, H200HandComputed) {
  DeviceProfile p = h200();
  ASSERT_EQ(p.regAllocUnit, 256);
  ASSERT_EQ(p.regPartitions, 4);
  // 128 threads (4 warps), 128 registers: 4096 per warp, 16384/4096 = 4 warps per register file,
  // 16 warps per SM -> 4 blocks, 16/64 warps.
  Occupancy a = kernelOccupancy(128, 128, 16384, p);
  EXPECT_EQ(a.blocksPerSm, 4);
  EXPECT_EQ(a.limiter, "registers");
  EXPECT_DOUBLE_EQ(a.fraction, 0.25);
  // 168 registers: 5376 per warp, 3 per file, 12 warps -> 3 blocks of 4 warps = 18.75%.
  Occupancy b = kernelOccupancy(128, 168, 36864, p);
  EXPECT_EQ(b.blocksPerSm, 3);
  EXPECT_DOUBLE_EQ(b.fraction, 0.1875);
  // 40 registers round up to 1280 per warp (5 units): 12 warps per file, 48 per SM -> 12 blocks
  // of 128 threads; smem 0 + 1 KB reserved allows 228, threads 16, blocks 32.
  Occupancy c = kernelOccupancy(128, 40, 0, p);
  EXPECT_EQ(c.blocksPerSm, 12);
  EXPECT_DOUBLE_EQ(c.fraction, 0.75);
  // 33 registers: 1056 -> 1280 per warp, the same as 40 (the allocation granularity).
  EXPECT_EQ(kernelOccupancy(128, 33, 0, p).blocksPerSm, 12);
  // 32 registers: 1024 per warp, 16 per file, 64 warps: the thread limit (16 blocks of 4 warps).
  Occupancy d = kernelOccupancy(128, 32, 0, p);
  EXPECT_EQ(d.blocksPerSm, 16);
  EXPECT_EQ(d.limiter, "threads");
  EXPECT_DOUBLE_EQ(d.fraction, 1.0);
  // Shared memory: 64 KB + 1 KB reserved = 66560 bytes; 233472 / 66560 = 3 blocks of 8 warps.
  Occupancy e = kernelOccupancy(256, 32, 65536, p);
  EXPECT_EQ(e.blocksPerSm, 3);
  EXPECT_EQ(e.limiter, "smem");
  EXPECT_DOUBLE_EQ(e.fraction, 24.0 / 64.0);
  // 1000 bytes + 1024 round up to 2048: 114 blocks by smem, so 32 threads-per-block blocks hit
  // the 32-block limit: 32 blocks of 1 warp = 50%.
  Occupancy f = kernelOccupancy(32, 16, 1000, p);
  EXPECT_EQ(f.blocksPerSm, 32);
  EXPECT_EQ(f.limiter, "blocks");
  EXPECT_DOUBLE_EQ(f.fraction, 0.5);
  // 255 registers: 8160 -> 8192 per warp, 2 per file, 8 warps: one block of 256 threads.
  EXPECT_DOUBLE_EQ(kernelOccupancy(256, 255, 0, p).fraction, 8.0 / 64.0);
  // Nothing fits: too many registers or too much shared memory for one block.
  EXPECT_EQ(kernelOccupancy(128, 256, 0, p).blocksPerSm, 0);
  EXPECT_EQ(kernelOccupancy(128, 32, 228 * 1024, p).blocksPerSm, 0);
  // 1024 threads (32 warps) of 64 registers: 2048 per warp, 8 per file, 32 warps: one block.
  EXPECT_EQ(kernelOccupancy(1024, 64, 0, p).blocksPerSm, 1);
  EXPECT_EQ(kernelOccupancy(1024, 65, 0, p).blocksPerSm, 0);  // 2304 per warp: 7 per file, 28 < 32
}

TEST(Occupancy, WithoutGranularityKeysAllocatesExactly) {
  DeviceProfile p = h200();
  p.regAllocUnit = 1;
  p.regPartitions = 1;
  p.smemAllocUnit = 1;
  p.smemReservedPerBlock = 0;
  // 40 registers x 32 = 1280 per warp: 65536 / 1280 = 51 warps -> 12 blocks of 4 warps.
  EXPECT_EQ(kernelOccupancy(128, 40, 0, p).blocksPerSm, 12);
  // 36 registers: 1152 per warp, 56 warps -> 14 blocks (with the granularity: 1280, 12 blocks).
  EXPECT_EQ(kernelOccupancy(128, 36, 0, p).blocksPerSm, 14);
  EXPECT_EQ(kernelOccupancy(128, 36, 0, h200()).blocksPerSm, 12);
}

// hipcc -Rpass-analysis=kernel-resource-usage (clang's AMDGPU back end), with the source lines
// clang echoes between remarks and a function without a VGPRs line (left out).
TEST(AmdgpuRemarks, ReadsEveryFunction) {
  const char* text =
      "k.hip:2:1: remark: Function Name: _Z5probeILm1024EEvv [-Rpass-analysis=kernel-resource-usage]\n"
      "template <size_t B> __global__ void probe() {}\n"
      "^\n"
      "k.hip:2:1: remark:     SGPRs: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     VGPRs: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark: Function Name: _ZN8mgr_abcd8mgk_abcdEPKNS_6MgArgsE [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     SGPRs: 104 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     VGPRs: 253 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     AGPRs: 6 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     ScratchSize [bytes/lane]: 16 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     Occupancy [waves/SIMD]: 1 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     SGPRs Spill: 2 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     VGPRs Spill: 6 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:4:1: remark:     LDS Size [bytes/block]: 1024 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:9:1: remark: Function Name: _Z4halfv [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:9:1: remark:     SGPRs: 4 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:9:1: warning: something else\n";
  auto r = parseAmdgpuResourceRemarks(text);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r.count("_Z5probeILm1024EEvv"));
  const AmdgpuKernelUsage& k = r.at("_ZN8mgr_abcd8mgk_abcdEPKNS_6MgArgsE");
  EXPECT_EQ(k.sgprs, 104);
  EXPECT_EQ(k.vgprs, 253);
  EXPECT_EQ(k.agprs, 6);
  EXPECT_EQ(k.scratchBytesPerLane, 16);
  EXPECT_EQ(k.wavesPerSimd, 1);
  EXPECT_EQ(k.sgprSpills, 2);
  EXPECT_EQ(k.vgprSpills, 6);
  EXPECT_EQ(k.ldsBytes, 1024);
  EXPECT_EQ(k.unifiedVgprs(), 256 + 6);  // the VGPRs rounded up to 4, then the AGPRs
}

// MI250X (one GCD): 512 VGPRs x 64 lanes per SIMD, 4 SIMDs, allocated per wave in blocks of 8
// registers (512 per wave), 8 waves per SIMD; 64 KB of LDS in 512-byte blocks. The figures are
// what hipcc's own "Occupancy [waves/SIMD]" remark gives for the same registers.
TEST(Occupancy, Mi250xHandComputed) {
  auto loaded = loadDeviceProfile("mi250x");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const DeviceProfile& p = loaded.value();
  // 256 VGPRs: 2 waves per SIMD, 8 per CU; a block of 128 threads is 2 waves -> 4 blocks by
  // registers, but 36864 bytes of LDS allow one: 2 of 32 waves.
  Occupancy a = kernelOccupancy(128, 256, 36864, p);
  EXPECT_EQ(a.blocksPerSm, 1);
  EXPECT_EQ(a.limiter, "smem");
  EXPECT_DOUBLE_EQ(a.fraction, 2.0 / 32.0);
  // 184 VGPRs (of 183 used, blocks of 8): 512 / 184 = 2 waves per SIMD -> 4 blocks of 2 waves.
  Occupancy b = kernelOccupancy(128, 184, 0, p);
  EXPECT_EQ(b.blocksPerSm, 4);
  EXPECT_EQ(b.limiter, "registers");
  // 24 VGPRs: 21 waves per SIMD by registers, so the 8-wave limit (2048 threads): 8 blocks of 4.
  Occupancy c = kernelOccupancy(256, 24, 0, p);
  EXPECT_EQ(c.blocksPerSm, 8);
  EXPECT_DOUBLE_EQ(c.fraction, 1.0);
  // 1000 bytes of LDS take two 512-byte blocks: 64 blocks by LDS, 32 by the block limit.
  EXPECT_EQ(kernelOccupancy(64, 16, 1000, p).blocksPerSm, 32);
}
