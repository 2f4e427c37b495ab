// Compile-only check: the emulation's test kernels and host drivers (gpu_test_host.cuh) through
// nvcc or hipcc. Taking every driver's address makes the compiler emit it, and with it each
// mgLaunch instantiation and each kernel's device code. Used by compile_with_gpu_compilers.sh.
#include <tuple>

#include "gpu_test_host.cuh"

// A host function (not a global variable, which hipcc's device pass would also see).
auto gpuTestDrivers() {
  return std::make_tuple(
      &runVecAdd, &runMatmul, &runBlockReduce, &runHistogram, &runAtomicsMix, &runWarpOps,
      &runReverse, &runBigShared, &runDivergentBarrier, &runEarlyExit, &runIndices,
      &runSharedPerBlock, &runBarrierVotes, &runHalfAxpb, &runPortableWarpSum, &runGraph);
}
const void* gpuTestDriverTable() {
  static const auto drivers = gpuTestDrivers();
  return &drivers;
}
