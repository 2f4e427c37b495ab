// Compile-only check of mg_gpu.h in a host-only translation unit of a GPU package: the host C++
// compiler with MG_GPU_CUDA (or MG_GPU_HIP) sees the runtime API, and mgLaunch goes through
// cudaLaunchKernel/hipLaunchKernel since the host compiler cannot parse <<<>>>. The kernel is
// defined by a .cu file compiled with nvcc/hipcc; here only its host-side declaration is seen.
// Used by compile_with_gpu_compilers.sh.
#include "mg_gpu.h"

void vecAdd(const float* a, const float* b, float* c, int n);

mgError_t launchVecAddFromHostCode(const float* a, const float* b, float* c, int n,
                                   mgStream_t s) {
  mgError_t e = mgLaunch(vecAdd, dim3((n + 127) / 128), dim3(128), 0, s, a, b, c, n);
  if (e != mgSuccess) return e;
  mg_half h = mgFloatToHalf(1.5f);
  return mgHalfToFloat(h) == 1.5f ? mgStreamSynchronize(s) : mgErrorInvalidValue;
}
