// The fp16 (tensor-core, wmma) block programs of --precision fp16, gemmF16Block and
// convF16Block, in every tile of the cost model, plus a joint kernel mixing them with a float
// program, wrapped as codegen/gpu wraps them. Compiled by tests/gpu/kernels_nvcc.sh with nvcc for
// sm_80, warnings as errors (all of it to PTX, the MG_PTXAS_SET part through ptxas). CUDA only: the hip target has no fp16 path (MG_HAS_WMMA is
// not defined there), so hipcc does not compile this file.
#include "../../runtime/gpu/kernels/mg_kernels.cuh"

#if !defined(MG_HAS_WMMA)
#error "kernels_fp16_instantiate.cu needs the tensor-core fragments (nvcc, or the emulation)"
#endif

namespace {

template <int BM, int BN, int T>
__global__ void __launch_bounds__(T) gemmF16K(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemmF16Block<BM, BN, T>(p, blockIdx.x, smem);
}
template <int BM, int BN, int T>
__global__ void __launch_bounds__(T) convF16K(mgk::ConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::convF16Block<BM, BN, T>(p, blockIdx.x, smem);
}
// A joint kernel as codegen/gpu emits it under fp16: blocks [0, b1) conv, [b1, b2) pool (float),
// [b2, ...) GEMM; blockDim 256 is larger than the conv's 128 threads.
__global__ void __launch_bounds__(256)
    jointF16K(mgk::ConvParams c, mgk::PoolParams pl, mgk::GemmParams g, int64_t b1, int64_t b2) {
  MG_DYNAMIC_SHARED(char, smem);
  const int64_t b = blockIdx.x;
  if (b < b1)
    mgk::convF16Block<64, 64, 128>(c, b, smem);
  else if (b < b2)
    mgk::poolBlock<4, 256>(pl, b - b1, smem);
  else
    mgk::gemmF16Block<128, 64, 256>(g, b - b2, smem);
}

// --precision fp16's half storage (S = mgk::Half): one joint kernel with every program that
// takes the storage type, so that each family's half loads and stores go through nvcc's front end
// and to PTX (one instantiation per family: the tiles only change the loops, which the float
// tiles above cover). Not in the MG_PTXAS_SET part: through ptxas it cost 42 CPU-s more; whole
// fp16 packages reach ptxas in tests/e2e/run_gpu_targets.sh part 2.
#ifndef MG_PTXAS_SET
__global__ void __launch_bounds__(256)
    jointHalfK(mgk::ConvParams c, mgk::PoolParams pl, mgk::GemmParams g, mgk::ReduceParams r,
               mgk::RowParams rw, int64_t kind) {
  MG_DYNAMIC_SHARED(char, smem);
  const int64_t b = blockIdx.x;
  using H = mgk::Half;
  switch (kind) {
    case 0: mgk::convF16Block<64, 64, 128, H>(c, b, smem); break;
    case 1: mgk::gemmF16Block<128, 64, 256, H>(g, b, smem); break;
    case 2: mgk::convBlock<32, 32, 128, H>(c, b, smem); break;
    case 3: mgk::gemmBlock<64, 64, 128, H>(g, b, smem); break;
    case 4: mgk::gemvBlock<4, 32, 256, H>(g, b, smem); break;
    case 5: mgk::depthwiseBlock<1, 256, H>(c, b, smem); break;
    case 6: mgk::poolBlock<4, 256, H>(pl, b, smem); break;
    case 7: mgk::reduceBlock<mgk::kReducePerThread, 1, 256, H>(r, b, smem); break;
    case 8: mgk::reduceBlock<mgk::kReducePerBlock, 1, 256, H>(r, b, smem); break;
    default: mgk::rowBlock<1, 256, H>(rw, b, smem); break;
  }
}
#endif

#define MG_GEMM_TILES(X) \
  X(32, 32, 128) X(64, 32, 128) X(32, 64, 128) X(64, 64, 128) X(128, 64, 256) X(64, 128, 256) \
  X(128, 128, 256) X(128, 16, 128) X(16, 128, 128)
#define MG_GEMM_F16(BM, BN, T) (void*)&gemmF16K<BM, BN, T>, (void*)&convF16K<BM, BN, T>,

}  // namespace

extern void* const kAllF16Kernels[];
#ifdef MG_PTXAS_SET
// What tests/gpu/kernels_nvcc.sh takes through cicc's optimizer and ptxas for sm_80: the smallest
// tile of both programs and the joint kernel (its conv member is 64x64, its GEMM 128x64). Every
// tile goes to PTX with the optimizer off (the front end's warnings, the wmma intrinsics' lowering).
void* const kAllF16Kernels[] = {MG_GEMM_F16(32, 32, 128)(void*)&jointF16K};
#else
void* const kAllF16Kernels[] = {MG_GEMM_TILES(MG_GEMM_F16)(void*)&jointF16K, (void*)&jointHalfK};
#endif

int64_t kernelsF16HostCounts(const mgk::GemmParams& g, const mgk::ConvParams& c) {
  return mgk::gemmF16Blocks<128, 128, 256>(g) + mgk::convF16Blocks<32, 32, 128>(c) +
         mgk::gemmF16SmemBytes<128, 128, 256>() + mgk::convF16SmemBytes<16, 128, 128>();
}
