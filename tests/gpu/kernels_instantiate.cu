// Every block program of runtime/gpu/kernels/ in every tile configuration the cost model can
// choose, wrapped in __global__ kernels the way codegen/gpu wraps them (one program per kernel,
// and joint kernels running several programs over block ranges), with __launch_bounds__ of the
// block size as the generator emits them (without, hipcc must assume 1024 threads per block and
// caps a thread at 128 VGPRs, which makes the large GEMM tiles spill). Compiled by
// tests/gpu/kernels_nvcc.sh with nvcc (sm_80, sm_90) and hipcc (gfx90a), warnings as errors:
// a template that only the emulation instantiates would otherwise break on the first real GPU.
#include "../../runtime/gpu/kernels/mg_kernels.cuh"

namespace {

template <int BM, int BN, int T>
__global__ void __launch_bounds__(T) gemmK(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemmBlock<BM, BN, T>(p, blockIdx.x, smem);
}
template <int BM, int BN, int T>
__global__ void __launch_bounds__(T) convK(mgk::ConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::convBlock<BM, BN, T>(p, blockIdx.x, smem);
}
template <int I, int T>
__global__ void __launch_bounds__(T) depthwiseK(mgk::ConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::depthwiseBlock<I, T>(p, blockIdx.x, smem);
}
template <int I, int T>
__global__ void __launch_bounds__(T) poolK(mgk::PoolParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::poolBlock<I, T>(p, blockIdx.x, smem);
}
template <int V, int I, int T>
__global__ void __launch_bounds__(T) reduceK(mgk::ReduceParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::reduceBlock<V, I, T>(p, blockIdx.x, smem);
}
template <int I, int T>
__global__ void __launch_bounds__(T) rowK(mgk::RowParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::rowBlock<I, T>(p, blockIdx.x, smem);
}
template <typename F, int I, int T>
__global__ void __launch_bounds__(T) mapK(mgk::MapParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::mapBlock<F, I, T>(p, blockIdx.x, smem);
}
// A functor with parameters, passed as an object.
__global__ void __launch_bounds__(256) mapLeakyK(mgk::MapParams p, float alpha) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::mapBlock<mgk::Unary<mgk::OpLeakyRelu>, 4, 256>(p, blockIdx.x, smem,
                                                        mgk::Unary<mgk::OpLeakyRelu>{{alpha}});
}
// A joint kernel as codegen/gpu emits it: blocks [0, b1) conv, [b1, b2) pool, [b2, ...) GEMM.
__global__ void __launch_bounds__(256)
    jointK(mgk::ConvParams c, mgk::PoolParams pl, mgk::GemmParams g, int64_t b1, int64_t b2) {
  MG_DYNAMIC_SHARED(char, smem);
  const int64_t b = blockIdx.x;
  if (b < b1)
    mgk::convBlock<64, 64, 128>(c, b, smem);
  else if (b < b2)
    mgk::poolBlock<4, 256>(pl, b - b1, smem);
  else
    mgk::gemmBlock<128, 64, 256>(g, b - b2, smem);
}

using CastF2I = mgk::Cast<float, int64_t>;
using CastI2F = mgk::Cast<int64_t, float>;
using CastF2B = mgk::Cast<float, bool>;

#define MG_GEMM_TILES(X) \
  X(32, 32, 128) X(64, 32, 128) X(32, 64, 128) X(64, 64, 128) X(128, 64, 256) X(64, 128, 256) \
  X(128, 128, 256) X(128, 16, 128) X(16, 128, 128)
#define MG_MEMORY_TILES(X) X(1, 256) X(4, 256) X(16, 256)

#define MG_GEMM(BM, BN, T) (void*)&gemmK<BM, BN, T>, (void*)&convK<BM, BN, T>,
#define MG_MEM(I, T)                                                                         \
  (void*)&depthwiseK<I, T>, (void*)&poolK<I, T>, (void*)&reduceK<mgk::kReducePerThread, I, T>, \
      (void*)&reduceK<mgk::kReducePerBlock, I, T>, (void*)&rowK<I, T>,                        \
      (void*)&mapK<mgk::Copy<float>, I, T>,
#define MG_MAP(F) (void*)&mapK<F, 4, 256>,

}  // namespace

// Taking each kernel's address instantiates it for the device.
extern void* const kAllKernels[];
void* const kAllKernels[] = {
    MG_GEMM_TILES(MG_GEMM) MG_MEMORY_TILES(MG_MEM)
    MG_MAP(mgk::CopyBytes<1>) MG_MAP(mgk::CopyBytes<2>) MG_MAP(mgk::CopyBytes<4>)
    MG_MAP(mgk::CopyBytes<8>)
    MG_MAP(mgk::Unary<mgk::OpIdentity>) MG_MAP(mgk::Unary<mgk::OpRelu>)
    MG_MAP(mgk::Unary<mgk::OpSigmoid>) MG_MAP(mgk::Unary<mgk::OpTanh>)
    MG_MAP(mgk::Unary<mgk::OpExp>) MG_MAP(mgk::Unary<mgk::OpLog>) MG_MAP(mgk::Unary<mgk::OpSqrt>)
    MG_MAP(mgk::Unary<mgk::OpReciprocal>) MG_MAP(mgk::Unary<mgk::OpNeg>)
    MG_MAP(mgk::Unary<mgk::OpAbs>) MG_MAP(mgk::Unary<mgk::OpFloor>)
    MG_MAP(mgk::Unary<mgk::OpCeil>) MG_MAP(mgk::Unary<mgk::OpRound>)
    MG_MAP(mgk::Unary<mgk::OpSign>) MG_MAP(mgk::Unary<mgk::OpSin>) MG_MAP(mgk::Unary<mgk::OpCos>)
    MG_MAP(mgk::Unary<mgk::OpErf>) MG_MAP(mgk::Unary<mgk::OpGelu>)
    MG_MAP(mgk::Unary<mgk::OpGeluTanh>) MG_MAP(mgk::Unary<mgk::OpSilu>)
    MG_MAP(mgk::Unary<mgk::OpSoftsign>) MG_MAP(mgk::Unary<mgk::OpSoftplus>)
    MG_MAP(mgk::Unary<mgk::OpLeakyRelu>) MG_MAP(mgk::Unary<mgk::OpClip>)
    MG_MAP(mgk::Unary<mgk::OpHardSigmoid>) MG_MAP(mgk::Unary<mgk::OpHardSwish>)
    MG_MAP(mgk::Unary<mgk::OpElu>) MG_MAP(mgk::Unary<mgk::OpSelu>)
    MG_MAP(mgk::Binary<mgk::OpAdd>) MG_MAP(mgk::Binary<mgk::OpSub>)
    MG_MAP(mgk::Binary<mgk::OpMul>) MG_MAP(mgk::Binary<mgk::OpDiv>)
    MG_MAP(mgk::Binary<mgk::OpPow>) MG_MAP(mgk::Binary<mgk::OpMax>)
    MG_MAP(mgk::Binary<mgk::OpMin>) MG_MAP(mgk::Binary<mgk::OpFmod>)
    MG_MAP(mgk::Binary<mgk::OpPRelu>)
    MG_MAP(mgk::Compare<mgk::OpEqual>) MG_MAP(mgk::Compare<mgk::OpLess>)
    MG_MAP(mgk::Compare<mgk::OpLessOrEqual>) MG_MAP(mgk::Compare<mgk::OpGreater>)
    MG_MAP(mgk::Compare<mgk::OpGreaterOrEqual>)
    MG_MAP(mgk::Where<float>) MG_MAP(mgk::Where<int64_t>) MG_MAP(mgk::Where<uint8_t>)
    MG_MAP(CastF2I) MG_MAP(CastI2F) MG_MAP(CastF2B)
    MG_MAP(mgk::BatchNormInference) MG_MAP(mgk::ActF)
    (void*)&mapLeakyK, (void*)&jointK};

// Host-side use of the Blocks / SmemBytes functions (the generator's package calls them when a
// handle is created). External, so that it is compiled and kept.
int64_t kernelsHostCounts(const mgk::GemmParams& g, const mgk::ConvParams& c) {
  return mgk::gemmBlocks<128, 128, 256>(g) + mgk::convBlocks<32, 32, 128>(c) +
         mgk::depthwiseBlocks<4, 256>(c) + mgk::gemmSmemBytes<128, 128, 256>() +
         mgk::convSmemBytes<16, 128, 128>();
}
