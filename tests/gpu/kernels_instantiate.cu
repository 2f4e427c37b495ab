// Every block program of runtime/gpu/kernels/ in every tile configuration the cost model can
// choose, wrapped in __global__ kernels the way codegen/gpu wraps them (one program per kernel,
// and joint kernels running several programs over block ranges), with __launch_bounds__ of the
// block size as the generator emits them (without, hipcc must assume 1024 threads per block and
// caps a thread at 128 VGPRs, which makes the large GEMM tiles spill). Compiled by
// tests/gpu/kernels_nvcc.sh with nvcc (all of it to PTX; the MG_PTXAS_SET part through ptxas
// for sm_90) and hipcc (gfx90a), warnings as errors:
// a template that only the emulation instantiates would otherwise break on the first real GPU.
#include "../../runtime/gpu/kernels/mg_kernels.cuh"

namespace {

template <int BM, int BN, int T>
__global__ void __launch_bounds__(T) gemmK(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemmBlock<BM, BN, T>(p, blockIdx.x, smem);
}
template <int R, int C, int T>
__global__ void __launch_bounds__(T) gemvK(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemvBlock<R, C, T>(p, blockIdx.x, smem);
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
template <int HM, int T>
__global__ void __launch_bounds__(T) recurrentK(mgk::RecurrentParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::recurrentBlock<HM, T>(p, blockIdx.x, smem);
}
// The time loops of two recurrent nodes of one joint group (their second phase), as emitted.
__global__ void __launch_bounds__(256) jointRecurrentK(mgk::RecurrentParams a, mgk::RecurrentParams c, int64_t b1) {
  MG_DYNAMIC_SHARED(char, smem);
  const int64_t b = blockIdx.x;
  if (b < b1)
    mgk::recurrentBlock<64, 64>(a, b, smem);
  else
    mgk::recurrentBlock<512, 256>(c, b - b1, smem);
}
// The wavefront of stacked recurrent layers (a co-resident launch with progress flags) and its
// flag reset, as codegen/gpu/lower_recurrent.cpp emits them.
template <int HM, int T>
__global__ void __launch_bounds__(T) wavefrontK(mgk::RecurrentWavefrontParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::recurrentWavefrontBlock<HM, T>(p, blockIdx.x, smem);
}
__global__ void __launch_bounds__(256) wavefrontResetK(mgk::RecurrentWavefrontParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::wavefrontResetBlock<1024, 256>(p, blockIdx.x, smem);
}
// A functor with parameters, passed as an object.
__global__ void __launch_bounds__(256) mapLeakyK(mgk::MapParams p, float alpha) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::mapBlock<mgk::Unary<mgk::OpAct>, 4, 256>(p, blockIdx.x, smem,
                                                  mgk::Unary<mgk::OpAct>{{mgk::kActLeakyRelu, alpha}});
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
// gemvBlock<rows, columns, 256> (cost_model.cpp kGemvRows x kGemvCols).
#define MG_GEMV_TILES(X) X(1, 8) X(4, 8) X(16, 8) X(1, 32) X(4, 32) X(16, 32)
#define MG_MEMORY_TILES(X) X(1, 256) X(4, 256) X(16, 256)
// recurrentBlock<HMAX, THREADS> as codegen/gpu/lower_recurrent.cpp picks them.
#define MG_RECURRENT_TILES(X) \
  X(64, 64) X(128, 128) X(256, 256) X(512, 256) X(1024, 256) X(2048, 256) X(4096, 256)

#define MG_GEMM(BM, BN, T) (void*)&gemmK<BM, BN, T>, (void*)&convK<BM, BN, T>,
#define MG_GEMV(R, C) (void*)&gemvK<R, C, 256>,
#define MG_MEM(I, T)                                                                         \
  (void*)&depthwiseK<I, T>, (void*)&poolK<I, T>, (void*)&reduceK<mgk::kReducePerThread, I, T>, \
      (void*)&reduceK<mgk::kReducePerBlock, I, T>, (void*)&rowK<I, T>,                        \
      (void*)&mapK<mgk::Copy<float>, I, T>,
#define MG_MAP(F) (void*)&mapK<F, 4, 256>,
#define MG_REC(HM, T) (void*)&recurrentK<HM, T>,

}  // namespace

// Taking each kernel's address instantiates it for the device.
extern void* const kAllKernels[];
#ifdef MG_PTXAS_SET
// What tests/gpu/kernels_nvcc.sh compiles optimized and through ptxas for its register and spill
// figures: the smallest and the skinny GEMM and conv tiles, the smallest and the largest GEMV
// (1 and 16 rows), the smallest and the largest recurrent programs, and the joint kernels (a
// conv, a pool and a 128x64 GEMM member; two recurrent ones).
void* const kAllKernels[] = {MG_GEMM(32, 32, 128) MG_GEMM(128, 16, 128) MG_GEMV(1, 8) MG_GEMV(16, 8)
                             MG_REC(64, 64) MG_REC(4096, 256)
                             (void*)&mapLeakyK, (void*)&jointK, (void*)&jointRecurrentK,
                             (void*)&wavefrontResetK};  // defined above: referenced in both parts
#else
void* const kAllKernels[] = {
    MG_GEMM_TILES(MG_GEMM) MG_GEMV_TILES(MG_GEMV) MG_MEMORY_TILES(MG_MEM) MG_RECURRENT_TILES(MG_REC)
    MG_MAP(mgk::CopyBytes<1>) MG_MAP(mgk::CopyBytes<2>) MG_MAP(mgk::CopyBytes<4>)
    MG_MAP(mgk::CopyBytes<8>)
    MG_MAP(mgk::Unary<mgk::OpIdentity>) MG_MAP(mgk::Unary<mgk::OpAct>)
    MG_MAP(mgk::Unary<mgk::OpExp>) MG_MAP(mgk::Unary<mgk::OpLog>) MG_MAP(mgk::Unary<mgk::OpSqrt>)
    MG_MAP(mgk::Unary<mgk::OpReciprocal>) MG_MAP(mgk::Unary<mgk::OpNeg>)
    MG_MAP(mgk::Unary<mgk::OpAbs>) MG_MAP(mgk::Unary<mgk::OpFloor>)
    MG_MAP(mgk::Unary<mgk::OpCeil>) MG_MAP(mgk::Unary<mgk::OpRound>)
    MG_MAP(mgk::Unary<mgk::OpSign>) MG_MAP(mgk::Unary<mgk::OpSin>) MG_MAP(mgk::Unary<mgk::OpCos>)
    MG_MAP(mgk::Unary<mgk::OpErf>)
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
    (void*)&mapLeakyK, (void*)&jointK, (void*)&jointRecurrentK,
    (void*)&wavefrontK<64, 64>, (void*)&wavefrontK<1024, 256>, (void*)&wavefrontResetK};
#endif

// Host-side use of the Blocks / SmemBytes functions (the generator's package calls them when a
// handle is created). External, so that it is compiled and kept.
int64_t kernelsHostCounts(const mgk::GemmParams& g, const mgk::ConvParams& c) {
  return mgk::gemmBlocks<128, 128, 256>(g) + mgk::gemvBlocks<1, 8, 256>(g) +
         mgk::gemvSmemBytes<16, 32, 256>() + mgk::convBlocks<32, 32, 128>(c) +
         mgk::depthwiseBlocks<4, 256>(c) + mgk::gemmSmemBytes<128, 128, 256>() +
         mgk::convSmemBytes<16, 128, 128>();
}
int64_t recurrentHostCounts(const mgk::RecurrentParams& p) {
  return mgk::recurrentBlocks<4096, 256>(p) + mgk::recurrentSmemBytes<4096, 256>();
}

#ifndef MG_PTXAS_SET  // the rest: PTX only
// ---- The opset 18-21 programs and helpers (mg_opset.cuh), for every element type the generator
// (codegen/gpu/lower_opset*.cpp) instantiates them with, and the generated functors' shapes.
namespace {

template <typename T>
__global__ void __launch_bounds__(256) scatterNDK(mgk::ScatterNDParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::scatterNDBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) scatterElementsK(mgk::ScatterElementsParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::scatterElementsBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) groupNormK(mgk::GroupNormParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::groupNormBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) col2imK(mgk::Col2ImParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::col2imBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) lpPoolK(mgk::LpPoolParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::lpPoolBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) deformConvK(mgk::DeformConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::deformConvBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) convNdK(mgk::ConvNdParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::convNdBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) poolNdK(mgk::PoolNdParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::poolNdBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(256) nonzeroK(mgk::NonZeroParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::nonzeroBlock<T, 256>(p, blockIdx.x, smem);
}
template <typename W>
__global__ void __launch_bounds__(256) compressK(mgk::CompressParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::compressBlock<W, 256>(p, blockIdx.x, smem);
}
template <typename T, int C>
__global__ void __launch_bounds__(128) topkK(mgk::TopKParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::topkBlock<T, C, 128>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(128) uniqueFirstK(mgk::UniqueParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::uniqueFirstBlock<T, 128>(p, blockIdx.x, smem);
}
template <typename T>
__global__ void __launch_bounds__(128) uniqueWriteK(mgk::UniqueParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::uniqueWriteBlock<T, 128>(p, blockIdx.x, smem);
}
__global__ void __launch_bounds__(128) nmsSelectK(mgk::NmsParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::nmsSelectBlock<128>(p, blockIdx.x, smem);
}
__global__ void __launch_bounds__(128) nmsWriteK(mgk::NmsParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::nmsWriteBlock<128>(p, blockIdx.x, smem);
}

// Functors shaped as lower_opset.cpp generates them.
template <typename S, typename D>
struct CastTo {  // Cast / CastLike
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out, int64_t o) const {
    const S a0 = static_cast<const S*>(in[0])[idx[0]];
    static_cast<D*>(out)[o] = mgk::convertTo<D>(a0);
  }
};
template <typename T, int OP, bool IS_BOOL>
struct ReduceTo {  // Reduce* on bool, integer and float64 tensors
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out, int64_t o) const {
    const int64_t dims[] = {3, 4}, strides[] = {20, 1};
    const T r = mgk::reduceTyped<T, OP>(static_cast<const T*>(in[0]) + idx[0], 2, dims, strides, 12);
    static_cast<T*>(out)[o] = IS_BOOL ? T(r != 0) : r;
  }
};
struct IsInfF {
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out, int64_t o) const {
    const mgk::Half a0 = static_cast<const mgk::Half*>(in[0])[idx[0]];
    const double v = double(mgk::loadValue(a0));
    static_cast<uint8_t*>(out)[o] = fabs(v) == INFINITY && (v > 0 ? true : false);
  }
};
// Resize: tap tables as constant device arrays, as lower_opset_compute.cpp emits them.
__device__ const int32_t kRzFirst0[] = {0, 2, 4};
__device__ const int64_t kRzOffset0[] = {0, 5, 5, 10};
__device__ const double kRzWeight0[] = {0.25, 0.75, 0.5, 0.5};
__device__ const int32_t kRzFirst1[] = {0, 1, 2, 2};
__device__ const int64_t kRzOffset1[] = {0, 4};
__device__ const double kRzWeight1[] = {1, 1};
template <typename T, bool NEAREST>
struct ResizeTo {
  MG_DEVICE void operator()(const void* const* in, const int64_t* idx, void* out, int64_t o) const {
    const mgk::ResizeAxisTable ax[2] = {{kRzFirst0, kRzOffset0, NEAREST ? nullptr : kRzWeight0, 2},
                                        {kRzFirst1, kRzOffset1, NEAREST ? nullptr : kRzWeight1, 3}};
    mgk::resizeElement<T, 2, NEAREST>(static_cast<const T*>(in[0]), static_cast<T*>(out), o, ax, 0.5);
  }
};

#define MG_MAPV(...) (void*)&mapK<__VA_ARGS__, 4, 256>,
#define MG_OPSET_TYPES(X) \
  X(float) X(double) X(int8_t) X(uint8_t) X(int16_t) X(uint16_t) X(int32_t) X(uint32_t) X(int64_t) X(uint64_t)
#define MG_SCATTER(T) (void*)&scatterNDK<T>, (void*)&scatterElementsK<T>,
#define MG_NONZERO(T) (void*)&nonzeroK<T>,
#define MG_SORTED(T) (void*)&topkK<T, 64>, (void*)&uniqueFirstK<T>, (void*)&uniqueWriteK<T>,
#define MG_FLOATS(T) (void*)&groupNormK<T>, (void*)&col2imK<T>, (void*)&lpPoolK<T>, (void*)&deformConvK<T>, \
  (void*)&convNdK<T>, (void*)&poolNdK<T>,
#define MG_REDUCE_OPS(T, B)                                                                      \
  MG_MAPV(ReduceTo<T, mgk::kRedSum, B>) MG_MAPV(ReduceTo<T, mgk::kRedMean, B>)                \
  MG_MAPV(ReduceTo<T, mgk::kRedMax, B>) MG_MAPV(ReduceTo<T, mgk::kRedMin, B>)                 \
  MG_MAPV(ReduceTo<T, mgk::kRedProd, B>) MG_MAPV(ReduceTo<T, mgk::kRedL1, B>)                 \
  MG_MAPV(ReduceTo<T, mgk::kRedL2, B>) MG_MAPV(ReduceTo<T, mgk::kRedLogSum, B>)               \
  MG_MAPV(ReduceTo<T, mgk::kRedLogSumExp, B>) MG_MAPV(ReduceTo<T, mgk::kRedSumSquare, B>)

}  // namespace

extern void* const kOpsetKernels[];
void* const kOpsetKernels[] = {
    MG_OPSET_TYPES(MG_SCATTER) MG_OPSET_TYPES(MG_NONZERO) MG_NONZERO(mgk::Half)
    MG_NONZERO(mgk::BFloat16) MG_OPSET_TYPES(MG_SORTED) (void*)&topkK<mgk::Half, 64>,
    (void*)&topkK<mgk::BFloat16, 64>, (void*)&topkK<float, 1024>, (void*)&nmsSelectK, (void*)&nmsWriteK,
    (void*)&compressK<uint8_t>, (void*)&compressK<uint16_t>,
    (void*)&compressK<uint32_t>, (void*)&compressK<uint64_t>, MG_FLOATS(float) MG_FLOATS(double)
    MG_MAPV(CastTo<float, mgk::Half>) MG_MAPV(CastTo<mgk::Half, float>)
    MG_MAPV(CastTo<float, mgk::BFloat16>) MG_MAPV(CastTo<mgk::BFloat16, double>)
    MG_MAPV(CastTo<float, int32_t>) MG_MAPV(CastTo<double, uint64_t>) MG_MAPV(CastTo<float, mgk::Bool>)
    MG_MAPV(CastTo<mgk::Bool, float>) MG_MAPV(CastTo<int16_t, float>) MG_MAPV(CastTo<float, int64_t>)
    MG_REDUCE_OPS(int32_t, false) MG_REDUCE_OPS(int64_t, false) MG_REDUCE_OPS(uint64_t, false)
    MG_REDUCE_OPS(int8_t, false) MG_REDUCE_OPS(double, false)
    MG_MAPV(ReduceTo<uint8_t, mgk::kRedMax, true>) MG_MAPV(ReduceTo<uint8_t, mgk::kRedMin, true>)
    MG_MAP(IsInfF)
    MG_MAPV(ResizeTo<float, false>) MG_MAPV(ResizeTo<double, false>) MG_MAPV(ResizeTo<int32_t, false>)
    MG_MAPV(ResizeTo<uint8_t, false>) MG_MAPV(ResizeTo<uint8_t, true>) MG_MAPV(ResizeTo<mgk::Half, true>)};

int64_t opsetHostCounts(const mgk::ScatterNDParams& s, const mgk::ScatterElementsParams& e,
                        const mgk::GroupNormParams& g, const mgk::Col2ImParams& c,
                        const mgk::LpPoolParams& l, const mgk::DeformConvParams& d) {
  return mgk::scatterNDBlocks<float, 256>(s) + mgk::scatterElementsBlocks<int64_t, 256>(e) +
         mgk::groupNormBlocks<float, 256>(g) + mgk::groupNormSmemBytes<double, 256>() +
         mgk::col2imBlocks<float, 256>(c) + mgk::lpPoolBlocks<double, 256>(l) +
         mgk::deformConvBlocks<float, 256>(d) + mgk::scatterNDSmemBytes<int8_t, 256>();
}

int64_t selectHostCounts(const mgk::NonZeroParams& n, const mgk::CompressParams& c) {
  return mgk::nonzeroBlocks<float, 256>(n) + mgk::compressBlocks<uint32_t, 256>(c) +
         mgk::nonzeroSmemBytes<uint8_t, 256>() + mgk::compressSmemBytes<uint64_t, 256>();
}

int64_t sortHostCounts(const mgk::TopKParams& t, const mgk::UniqueParams& u, const mgk::NmsParams& s) {
  return mgk::topkBlocks<float, 64, 128>(t) + mgk::topkSmemBytes<double, 1024, 128>() +
         mgk::uniqueFirstBlocks<int64_t, 128>(u) + mgk::uniqueWriteBlocks<float, 128>(u) +
         mgk::uniqueWriteSmemBytes<float, 128>() + mgk::nmsSelectBlocks<128>(s) + mgk::nmsWriteBlocks<128>(s) +
         mgk::nmsSelectSmemBytes<128>();
}

int64_t convNdHostCounts(const mgk::ConvNdParams& c, const mgk::PoolNdParams& p) {
  return mgk::convNdBlocks<float, 256>(c) + mgk::poolNdBlocks<double, 256>(p) +
         mgk::convNdSmemBytes<double, 256>() + mgk::poolNdSmemBytes<float, 256>();
}
#endif  // MG_PTXAS_SET
