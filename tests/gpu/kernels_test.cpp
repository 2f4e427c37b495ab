// The GEMM and convolution block programs of runtime/gpu/kernels/ (mg_gemm.cuh, mg_conv.cuh)
// on the CPU emulation of CUDA, against plain loops written here (double accumulation): every
// GEMM tile of the cost model on sizes that are not multiples of it, transposed and broadcast
// operands, alpha/beta/C, residual and every epilogue activation; the split-K GEMV program
// (mg_gemv.cuh) in every instantiation the lowering emits, on M = 1, 3, 16; convolutions with groups,
// strides, dilations, asymmetric pads, 1-D, into a channel range of a wider tensor; depthwise
// convolutions; blockDim larger than the program's thread count; a joint kernel running a conv,
// a pool and a reduction over block ranges of one launch; and the emulation's speed.
// Map, pool, reduce and rows: kernels_memory_test.cpp.
#include <chrono>
#include <cstdio>

#include "kernels_test_util.h"
#include "mg_acts.h"

namespace {

using kt::Dev;

// ---- The __global__ wrappers, as codegen/gpu emits them ----------------------------------------
template <int BM, int BN, int T>
__global__ void gemmKernel(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemmBlock<BM, BN, T>(p, blockIdx.x, smem);
}
template <int R, int C, int T>
__global__ void gemvKernel(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemvBlock<R, C, T>(p, blockIdx.x, smem);
}
template <int BM, int BN, int T>
__global__ void convKernel(mgk::ConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::convBlock<BM, BN, T>(p, blockIdx.x, smem);
}
template <int I, int T>
__global__ void depthwiseKernel(mgk::ConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::depthwiseBlock<I, T>(p, blockIdx.x, smem);
}

// ---- GEMM ---------------------------------------------------------------------------------------
// A problem and its host data; Y is checked against a double-precision loop.
struct GemmCase {
  int64_t batch = 2, M = 77, N = 53, K = 45;
  bool transA = false, transB = false;
  bool shareA = false;  // aBatch = 0: one A for every batch (broadcast MatMul)
  int cKind = 1;  // 0 none, 1 bias row (cM = 0), 2 bias column (cN = 0), 3 full per batch
  bool residual = false;
  bool transY = false;  // Y stored column-major (yM = 1)
  float alpha = 1.25f, beta = 0.5f;
  int act = mgk::kActNone;
  float actAlpha = 0.1f, actBeta = 0.7f;
};

// GEMV: the split-K program gemvBlock<BM = rows, BN = columns, T> (mg_gemv.cuh) instead.
template <int BM, int BN, int T, bool GEMV = false>
void runGemm(const GemmCase& c, int blockThreads = T, uint32_t seed = 1) {
  SCOPED_TRACE(testing::Message() << (GEMV ? "gemv " : "") << "tile " << BM << "x" << BN << "/" << T << " blockDim "
                                  << blockThreads << " M,N,K " << c.M << "," << c.N << ","
                                  << c.K << " transA " << c.transA << " transB " << c.transB
                                  << " act " << c.act);
  std::mt19937 rng(seed);
  const int64_t aBatches = c.shareA ? 1 : c.batch;
  std::vector<float> a = kt::randomVec(aBatches * c.M * c.K, rng);
  std::vector<float> b = kt::randomVec(c.batch * c.K * c.N, rng);
  std::vector<float> cm = kt::randomVec(c.batch * c.M * c.N, rng);
  std::vector<float> res = kt::randomVec(c.batch * c.M * c.N, rng);
  mgk::GemmParams p{};
  p.batch = c.batch;
  p.M = c.M;
  p.N = c.N;
  p.K = c.K;
  p.aBatch = c.shareA ? 0 : c.M * c.K;
  p.aM = c.transA ? 1 : c.K;  // A stored K x M when transposed
  p.aK = c.transA ? c.M : 1;
  p.bBatch = c.K * c.N;
  p.bK = c.transB ? 1 : c.N;  // B stored N x K when transposed
  p.bN = c.transB ? c.K : 1;
  switch (c.cKind) {
    case 1: p.cBatch = 0, p.cM = 0, p.cN = 1; break;
    case 2: p.cBatch = 0, p.cM = 1, p.cN = 0; break;
    case 3: p.cBatch = c.M * c.N, p.cM = c.N, p.cN = 1; break;
    default: break;
  }
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.yBatch = c.M * c.N;
  p.yM = c.transY ? 1 : c.N;
  p.yN = c.transY ? c.M : 1;
  p.act = c.act;
  p.actAlpha = c.actAlpha;
  p.actBeta = c.actBeta;

  std::vector<double> ref(c.batch * c.M * c.N);
  for (int64_t bi = 0; bi < c.batch; ++bi)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t n = 0; n < c.N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < c.K; ++k)
          s += double(a[bi * p.aBatch + m * p.aM + k * p.aK]) *
               b[bi * p.bBatch + k * p.bK + n * p.bN];
        double v = c.alpha * s;
        if (c.cKind) v += c.beta * double(cm[bi * p.cBatch + m * p.cM + n * p.cN]);
        const int64_t yo = bi * p.yBatch + m * p.yM + n * p.yN;
        if (c.residual) v += res[yo];
        ref[yo] = kt::act(c.act, v, c.actAlpha, c.actBeta);
      }

  Dev<float> da(a), db(b), dc(cm), dres(res), dy(size_t(c.batch * c.M * c.N));
  p.A = da.get();
  p.B = db.get();
  p.C = c.cKind ? dc.get() : nullptr;
  p.residual = c.residual ? dres.get() : nullptr;
  p.Y = dy.get();
  if constexpr (GEMV)
    kt::launch(gemvKernel<BM, BN, T>, mgk::gemvBlocks<BM, BN, T>(p), blockThreads,
               mgk::gemvSmemBytes<BM, BN, T>(), p);
  else
    kt::launch(gemmKernel<BM, BN, T>, mgk::gemmBlocks<BM, BN, T>(p), blockThreads,
               mgk::gemmSmemBytes<BM, BN, T>(), p);
  EXPECT_TRUE(kt::near(dy.host(), ref, 2e-5 * double(c.K + 8)));
}

// Every tile on the same odd problem, plain and with both operands transposed.
template <int BM, int BN, int T>
void gemmTileSuite() {
  GemmCase c;
  runGemm<BM, BN, T>(c);
  c.transA = c.transB = true;
  c.cKind = 3;
  c.residual = true;
  c.act = mgk::kActRelu;
  runGemm<BM, BN, T>(c, T, 2);
  // Larger than the tile in every direction, K over several k-tiles with a ragged last one.
  GemmCase big;
  big.batch = 1;
  big.M = 2 * BM + 3;
  big.N = 2 * BN + 5;
  big.K = 97;
  big.transB = true;
  runGemm<BM, BN, T>(big, T, 3);
}

TEST(GemmKernel, Tile32x32) { gemmTileSuite<32, 32, 128>(); }
TEST(GemmKernel, Tile64x32) { gemmTileSuite<64, 32, 128>(); }
TEST(GemmKernel, Tile32x64) { gemmTileSuite<32, 64, 128>(); }
TEST(GemmKernel, Tile64x64) { gemmTileSuite<64, 64, 128>(); }
TEST(GemmKernel, Tile128x64) { gemmTileSuite<128, 64, 256>(); }
TEST(GemmKernel, Tile64x128) { gemmTileSuite<64, 128, 256>(); }
TEST(GemmKernel, Tile128x128) { gemmTileSuite<128, 128, 256>(); }
TEST(GemmKernel, Tile128x16) { gemmTileSuite<128, 16, 128>(); }
TEST(GemmKernel, Tile16x128) { gemmTileSuite<16, 128, 128>(); }

TEST(GemmKernel, TransposeCombinationsAndStridedY) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int ty = 0; ty < 2; ++ty) {
        GemmCase c;
        c.transA = ta;
        c.transB = tb;
        c.transY = ty;
        runGemm<32, 64, 128>(c, 128, 10 + ta * 4 + tb * 2 + ty);
      }
}

TEST(GemmKernel, BroadcastOperandsAndBias) {
  GemmCase c;
  c.shareA = true;  // MatMul of a [M,K] by a [batch,K,N]
  c.cKind = 2;      // bias per row m
  runGemm<64, 32, 128>(c);
  c.cKind = 0;      // no C at all
  c.alpha = 1.f;
  runGemm<64, 32, 128>(c, 128, 4);
}

TEST(GemmKernel, DegenerateSizes) {
  for (int64_t k : {0, 1, 31, 32, 33}) {  // K = 0: Y = beta*C
    GemmCase c;
    c.K = k;
    runGemm<32, 32, 128>(c, 128, uint32_t(k + 20));
  }
  GemmCase gemv;  // M = 1 (a batch-1 linear layer) and N = 1
  gemv.M = 1;
  gemv.N = 300;
  gemv.K = 70;
  gemv.transB = true;
  runGemm<16, 128, 128>(gemv);
  gemv.M = 300;
  gemv.N = 1;
  runGemm<128, 16, 128>(gemv);
}

TEST(GemmKernel, EveryEpilogueActivation) {
  for (int a : kt::epilogueActs()) {
    GemmCase c;
    c.act = a;
    c.residual = true;
    c.actAlpha = a == mgk::kActClip ? -0.3f : 0.2f;
    c.actBeta = a == mgk::kActClip ? 0.4f : 0.5f;
    runGemm<32, 32, 128>(c, 128, uint32_t(30 + a));
  }
}

// A joint kernel's block has the max thread count over its members: the extra threads must
// idle through the program's barriers. Non-multiples of the warp size included.
TEST(GemmKernel, BlockDimLargerThanProgram) {
  GemmCase c;
  runGemm<64, 64, 128>(c, 256);
  runGemm<32, 32, 128>(c, 200);
  c.transA = true;
  runGemm<128, 128, 256>(c, 384);
}

// ---- GEMV (split K) --------------------------------------------------------------------------
// Every (rows, columns) instantiation the lowering emits, on M = 1, 3 and 16 (one row group of 1,
// 4 and 16 rows), odd N and K (ragged column groups, K not a multiple of lanes x unroll), both
// weight layouts (k-contiguous as Gemm transB = 1, n-contiguous as MatMul), C, the residual, an
// activation; more rows than the tile (several row groups) and a column-major Y (the lowering's
// transposed role writes Y with yM = 1).
template <int R, int C>
void gemvTileSuite() {
  for (int64_t m : {int64_t(1), int64_t(3), int64_t(16)}) {
    for (int tb = 0; tb < 2; ++tb) {
      GemmCase g;
      g.batch = 1;
      g.M = m;
      g.N = 53;
      g.K = 97;
      g.transB = tb;
      g.cKind = tb ? 1 : 3;
      g.residual = tb;
      g.act = tb ? mgk::kActRelu : mgk::kActNone;
      runGemm<R, C, 256, true>(g, 256, uint32_t(40 + m + tb));
    }
  }
  GemmCase more;  // several row groups and batches, transposed A, column-major Y
  more.M = 2 * R + 1;
  more.N = 37;
  more.K = 45;
  more.transA = true;
  more.transY = true;
  more.cKind = 2;
  runGemm<R, C, 256, true>(more, 256, 50);
}
TEST(GemvKernel, Rows1Cols8) { gemvTileSuite<1, 8>(); }
TEST(GemvKernel, Rows4Cols8) { gemvTileSuite<4, 8>(); }
TEST(GemvKernel, Rows16Cols8) { gemvTileSuite<16, 8>(); }
TEST(GemvKernel, Rows1Cols32) { gemvTileSuite<1, 32>(); }
TEST(GemvKernel, Rows4Cols32) { gemvTileSuite<4, 32>(); }
TEST(GemvKernel, Rows16Cols32) { gemvTileSuite<16, 32>(); }

TEST(GemvKernel, DegenerateKAndEpilogues) {
  for (int64_t k : {0, 1, 7, 31, 33, 129}) {  // K = 0: Y = beta*C; K below the lanes
    GemmCase c;
    c.batch = 1;
    c.M = 1;
    c.N = 9;
    c.K = k;
    c.transB = true;
    runGemm<1, 8, 256, true>(c, 256, uint32_t(k + 60));
  }
  for (int a : kt::epilogueActs()) {
    GemmCase c;
    c.M = 3;
    c.N = 19;
    c.K = 41;
    c.act = a;
    c.residual = true;
    c.actAlpha = a == mgk::kActClip ? -0.3f : 0.2f;
    c.actBeta = a == mgk::kActClip ? 0.4f : 0.5f;
    runGemm<4, 8, 256, true>(c, 256, uint32_t(70 + a));
  }
}

// In a joint kernel the block may be wider than 256 threads (idle threads reach the barrier).
TEST(GemvKernel, BlockDimLargerThanProgram) {
  GemmCase c;
  c.M = 1;
  c.N = 45;
  c.K = 77;
  c.transB = true;
  runGemm<1, 8, 256, true>(c, 320, 80);
  c.M = 16;
  c.transB = false;
  runGemm<16, 32, 256, true>(c, 512, 81);
}

// ---- Convolution --------------------------------------------------------------------------------
struct ConvCase {
  int64_t N = 2, C = 5, H = 11, W = 13, K = 7, R = 3, S = 3, group = 1;
  int64_t strideH = 1, strideW = 1, padTop = 1, padLeft = 1, padBottom = 1, padRight = 1;
  int64_t dilationH = 1, dilationW = 1;
  bool bias = true, residual = false;
  int64_t yChannels = 0, yChannelOffset = 0;  // 0: y has exactly K channels
  int act = mgk::kActNone;
  float actAlpha = 0.1f, actBeta = 0.6f;

  int64_t OH() const { return (H + padTop + padBottom - dilationH * (R - 1) - 1) / strideH + 1; }
  int64_t OW() const { return (W + padLeft + padRight - dilationW * (S - 1) - 1) / strideW + 1; }
};

struct ConvData {
  std::vector<float> x, w, bias, residual;
  std::vector<double> ref;  // y over all yChannels; channels outside the range keep the sentinel
};

constexpr float kSentinel = 12345.f;

ConvData convReference(const ConvCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  ConvData d;
  const int64_t Cg = c.C / c.group, Kg = c.K / c.group, OH = c.OH(), OW = c.OW();
  const int64_t yc = c.yChannels ? c.yChannels : c.K;
  d.x = kt::randomVec(c.N * c.C * c.H * c.W, rng);
  d.w = kt::randomVec(c.K * Cg * c.R * c.S, rng);
  d.bias = kt::randomVec(c.K, rng);
  d.residual = kt::randomVec(c.N * c.K * OH * OW, rng);
  d.ref.assign(c.N * yc * OH * OW, kSentinel);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t g = k / Kg;
          double s = c.bias ? d.bias[k] : 0.0;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t r = 0; r < c.R; ++r)
              for (int64_t q = 0; q < c.S; ++q) {
                const int64_t ih = oh * c.strideH - c.padTop + r * c.dilationH;
                const int64_t iw = ow * c.strideW - c.padLeft + q * c.dilationW;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                s += double(d.x[((n * c.C + g * Cg + ci) * c.H + ih) * c.W + iw]) *
                     d.w[((k * Cg + ci) * c.R + r) * c.S + q];
              }
          if (c.residual) s += d.residual[((n * c.K + k) * OH + oh) * OW + ow];
          d.ref[((n * yc + c.yChannelOffset + k) * OH + oh) * OW + ow] =
              kt::act(c.act, s, c.actAlpha, c.actBeta);
        }
  return d;
}

// Device buffers of one convolution and its filled parameters.
struct ConvRun {
  Dev<float> x, w, bias, residual, y;
  mgk::ConvParams p{};
  ConvRun(const ConvCase& c, const ConvData& d)
      : x(d.x), w(d.w), bias(d.bias), residual(d.residual),
        y(std::vector<float>(d.ref.size(), kSentinel)) {
    p.N = c.N, p.C = c.C, p.H = c.H, p.W = c.W, p.K = c.K, p.R = c.R, p.S = c.S;
    p.group = c.group;
    p.strideH = c.strideH, p.strideW = c.strideW, p.padTop = c.padTop, p.padLeft = c.padLeft;
    p.dilationH = c.dilationH, p.dilationW = c.dilationW;
    p.OH = c.OH(), p.OW = c.OW();
    p.x = x.get(), p.w = w.get();
    p.bias = c.bias ? bias.get() : nullptr;
    p.residual = c.residual ? residual.get() : nullptr;
    p.y = y.get();
    p.yChannels = c.yChannels ? c.yChannels : c.K;
    p.yChannelOffset = c.yChannelOffset;
    p.act = c.act, p.actAlpha = c.actAlpha, p.actBeta = c.actBeta;
  }
};

std::string describe(const ConvCase& c) {
  char b[256];
  std::snprintf(b, sizeof b,
                "N%lld C%lld %lldx%lld K%lld %lldx%lld g%lld s%lld,%lld pad%lld,%lld,%lld,%lld "
                "d%lld,%lld -> %lldx%lld",
                (long long)c.N, (long long)c.C, (long long)c.H, (long long)c.W, (long long)c.K,
                (long long)c.R, (long long)c.S, (long long)c.group, (long long)c.strideH,
                (long long)c.strideW, (long long)c.padTop, (long long)c.padLeft,
                (long long)c.padBottom, (long long)c.padRight, (long long)c.dilationH,
                (long long)c.dilationW, (long long)c.OH(), (long long)c.OW());
  return b;
}

template <int BM, int BN, int T>
void runConv(const ConvCase& c, int blockThreads = T, uint32_t seed = 1) {
  SCOPED_TRACE(testing::Message() << "conv tile " << BM << "x" << BN << "/" << T << " blockDim "
                                  << blockThreads << " " << describe(c));
  ConvData d = convReference(c, seed);
  ConvRun run(c, d);
  kt::launch(convKernel<BM, BN, T>, mgk::convBlocks<BM, BN, T>(run.p), blockThreads,
             mgk::convSmemBytes<BM, BN, T>(), run.p);
  const double k = double(c.C / c.group * c.R * c.S);
  EXPECT_TRUE(kt::near(run.y.host(), d.ref, 2e-5 * (k + 8)));
}

template <int I, int T>
void runDepthwise(const ConvCase& c, int blockThreads = T, uint32_t seed = 1, bool noSync = false) {
  SCOPED_TRACE(testing::Message() << "depthwise " << I << "/" << T << " blockDim "
                                  << blockThreads << " " << describe(c));
  ConvData d = convReference(c, seed);
  ConvRun run(c, d);
  if (noSync)
    kt::launchNoSync(depthwiseKernel<I, T>, mgk::depthwiseBlocks<I, T>(run.p), blockThreads,
                     mgk::depthwiseSmemBytes<I, T>(), run.p);
  else
    kt::launch(depthwiseKernel<I, T>, mgk::depthwiseBlocks<I, T>(run.p), blockThreads,
               mgk::depthwiseSmemBytes<I, T>(), run.p);
  const double k = double(c.C / c.group * c.R * c.S);
  EXPECT_TRUE(kt::near(run.y.host(), d.ref, 2e-5 * (k + 8)));
}

// One case per GEMM tile (the generator may pick any of them for a convolution).
template <int BM, int BN, int T>
void convTileSuite() {
  ConvCase c;  // 3x3 pad 1 on an odd image, K and N*OH*OW not multiples of the tile
  runConv<BM, BN, T>(c);
  ConvCase g;  // groups, stride 2, dilation 2, asymmetric pads, residual, activation, range out
  g.N = 3, g.C = 6, g.H = 9, g.W = 10, g.K = 10, g.group = 2, g.R = 3, g.S = 2;
  g.strideH = 2, g.strideW = 1, g.dilationH = 2, g.dilationW = 3;
  g.padTop = 2, g.padLeft = 0, g.padBottom = 1, g.padRight = 2;
  g.residual = true, g.act = mgk::kActLeakyRelu;
  g.yChannels = 16, g.yChannelOffset = 4;
  runConv<BM, BN, T>(g, T, 2);
}

TEST(ConvKernel, Tile32x32) { convTileSuite<32, 32, 128>(); }
TEST(ConvKernel, Tile64x32) { convTileSuite<64, 32, 128>(); }
TEST(ConvKernel, Tile32x64) { convTileSuite<32, 64, 128>(); }
TEST(ConvKernel, Tile64x64) { convTileSuite<64, 64, 128>(); }
TEST(ConvKernel, Tile128x64) { convTileSuite<128, 64, 256>(); }
TEST(ConvKernel, Tile64x128) { convTileSuite<64, 128, 256>(); }
TEST(ConvKernel, Tile128x128) { convTileSuite<128, 128, 256>(); }
TEST(ConvKernel, Tile128x16) { convTileSuite<128, 16, 128>(); }
TEST(ConvKernel, Tile16x128) { convTileSuite<16, 128, 128>(); }

TEST(ConvKernel, Geometries) {
  ConvCase pw;  // 1x1, no padding: K = C exactly
  pw.R = pw.S = 1, pw.padTop = pw.padLeft = pw.padBottom = pw.padRight = 0;
  pw.C = 37, pw.K = 19;
  runConv<32, 32, 128>(pw);
  ConvCase one;  // 1-D: H = 1, kernel 1 x 5, stride 3
  one.H = 1, one.W = 50, one.R = 1, one.S = 5, one.padTop = one.padBottom = 0;
  one.padLeft = 2, one.padRight = 1, one.strideW = 3;
  runConv<64, 32, 128>(one, 128, 2);
  ConvCase big;  // 7x7 stride 2 pad 3 (a ResNet stem), K over several k-tiles
  big.N = 1, big.C = 3, big.H = 23, big.W = 19, big.K = 9, big.R = big.S = 7;
  big.strideH = big.strideW = 2, big.padTop = big.padLeft = big.padBottom = big.padRight = 3;
  runConv<32, 64, 128>(big, 128, 3);
  ConvCase wide;  // kernel wider than the padded input in one direction: OH = 1
  wide.H = 4, wide.W = 6, wide.R = 5, wide.S = 2, wide.padTop = 1, wide.padBottom = 0;
  wide.bias = false;
  runConv<32, 32, 128>(wide, 128, 4);
  ConvCase many;  // many groups of several channels (ResNeXt)
  many.C = 32, many.K = 64, many.group = 8, many.H = many.W = 7;
  runConv<16, 128, 128>(many, 128, 5);
}

TEST(ConvKernel, EveryEpilogueActivation) {
  for (int a : kt::epilogueActs()) {
    ConvCase c;
    c.act = a;
    c.residual = true;
    c.actAlpha = a == mgk::kActClip ? -0.3f : 0.2f;
    c.actBeta = a == mgk::kActClip ? 0.4f : 0.5f;
    runConv<32, 32, 128>(c, 128, uint32_t(40 + a));
  }
}

TEST(ConvKernel, BlockDimLargerThanProgram) {
  ConvCase c;
  c.residual = true;
  c.yChannels = 9, c.yChannelOffset = 2;
  runConv<64, 64, 128>(c, 256);
  runConv<128, 64, 256>(c, 320, 2);
}

TEST(DepthwiseKernel, Geometries) {
  ConvCase c;  // depthwise 3x3 stride 2 pad 1
  c.C = c.K = c.group = 6, c.strideH = c.strideW = 2;
  runDepthwise<1, 256>(c);
  runDepthwise<4, 256>(c, 256, 2);
  runDepthwise<16, 256>(c, 256, 3);
  ConvCase m;  // channel multiplier 2, 5x5 dilation 2, residual, activation, channel range out
  m.C = m.group = 5, m.K = 10, m.R = m.S = 5, m.dilationH = m.dilationW = 2;
  m.padTop = m.padLeft = m.padBottom = m.padRight = 4;
  m.residual = true, m.act = mgk::kActClip, m.actAlpha = -0.5f, m.actBeta = 0.5f;
  m.yChannels = 13, m.yChannelOffset = 1;
  runDepthwise<4, 256>(m, 256, 4);
  ConvCase g;  // the direct program is correct for any group, not only depthwise
  g.C = 6, g.K = 4, g.group = 2, g.padTop = 0, g.padLeft = 2, g.strideW = 2;
  runDepthwise<4, 256>(g, 256, 5);
  // Larger blockDim, and as plain loops over threads (no barrier: mgLaunchNoSync allowed).
  runDepthwise<4, 128>(c, 256, 6);
  runDepthwise<4, 256>(m, 256, 7, /*noSync=*/true);
}

// ---- A joint kernel: a conv, a pool and a block reduction over block ranges of one launch -----
__global__ void jointKernel(mgk::ConvParams conv, mgk::PoolParams pool, mgk::ReduceParams red,
                            int64_t b1, int64_t b2) {
  MG_DYNAMIC_SHARED(char, smem);
  const int64_t b = blockIdx.x;
  if (b < b1)
    mgk::convBlock<64, 32, 128>(conv, b, smem);
  else if (b < b2)
    mgk::poolBlock<4, 256>(pool, b - b1, smem);
  else
    mgk::reduceBlock<mgk::kReducePerBlock, 4, 256>(red, b - b2, smem);
}

TEST(JointKernel, ConvPoolReduceInOneLaunch) {
  // An Inception-like join: a 3x3 conv branch and a 3x3 max-pool branch writing their channel
  // ranges of one concat output, beside an unrelated global average pool.
  ConvCase c;
  c.N = 2, c.C = 6, c.H = c.W = 9, c.K = 5;
  c.yChannels = 11, c.yChannelOffset = 0;
  ConvData cd = convReference(c, 7);
  ConvRun run(c, cd);

  mgk::PoolParams pp{};
  pp.N = c.N, pp.C = c.C, pp.H = c.H, pp.W = c.W, pp.OH = c.H, pp.OW = c.W;
  pp.kernelH = pp.kernelW = 3, pp.strideH = pp.strideW = 1, pp.padTop = pp.padLeft = 1;
  pp.dilationH = pp.dilationW = 1, pp.isMax = 1;
  pp.x = run.p.x, pp.y = run.p.y, pp.yChannels = 11, pp.yChannelOffset = 5;
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t ch = 0; ch < c.C; ++ch)
      for (int64_t oh = 0; oh < c.H; ++oh)
        for (int64_t ow = 0; ow < c.W; ++ow) {
          double m = -INFINITY;
          for (int64_t r = -1; r <= 1; ++r)
            for (int64_t q = -1; q <= 1; ++q) {
              int64_t ih = oh + r, iw = ow + q;
              if (ih >= 0 && ih < c.H && iw >= 0 && iw < c.W)
                m = std::fmax(m, cd.x[((n * c.C + ch) * c.H + ih) * c.W + iw]);
            }
          cd.ref[((n * 11 + 5 + ch) * c.H + oh) * c.W + ow] = m;
        }

  std::mt19937 rng(8);
  const int64_t rows = 37, len = 3001;
  std::vector<float> rx = kt::randomVec(rows * len, rng);
  std::vector<double> rref(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t i = 0; i < len; ++i) s += rx[r * len + i];
    rref[r] = s / double(len);
  }
  Dev<float> drx(rx), dry(static_cast<size_t>(rows));
  mgk::ReduceParams rp{};
  rp.outN = rows, rp.redN = len, rp.outRank = 1, rp.redRank = 1;
  rp.outDims[0] = rows, rp.outInStrides[0] = len, rp.redDims[0] = len, rp.redStrides[0] = 1;
  rp.op = mgk::kRedMean, rp.x = drx.get(), rp.y = dry.get();

  const int64_t b1 = mgk::convBlocks<64, 32, 128>(run.p);
  const int64_t b2 = b1 + mgk::poolBlocks<4, 256>(pp);
  const int64_t total = b2 + mgk::reduceBlocks<mgk::kReducePerBlock, 4, 256>(rp);
  const int smem = std::max({mgk::convSmemBytes<64, 32, 128>(), mgk::poolSmemBytes<4, 256>(),
                             mgk::reduceSmemBytes<mgk::kReducePerBlock, 4, 256>()});
  kt::launch(jointKernel, total, 256, smem, run.p, pp, rp, b1, b2);
  EXPECT_TRUE(kt::near(run.y.host(), cd.ref, 1e-3));
  EXPECT_TRUE(kt::near(dry.host(), rref, 1e-5));
}

// ---- Speed of the emulation (what CI pays to check a model through these kernels) -------------
template <typename F>
double bestMs(F f, int reps = 3) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  return best;
}

TEST(EmulationSpeed, Gemm256AndConv3x3) {
  std::mt19937 rng(9);
  const int64_t n = 256;
  std::vector<float> a = kt::randomVec(n * n, rng), b = kt::randomVec(n * n, rng);
  Dev<float> da(a), db(b), dy(size_t(n * n));
  mgk::GemmParams p{};
  p.batch = 1, p.M = p.N = p.K = n;
  p.A = da.get(), p.aM = n, p.aK = 1, p.B = db.get(), p.bK = n, p.bN = 1;
  p.alpha = 1.f, p.Y = dy.get(), p.yM = n, p.yN = 1;
  double g64 = bestMs([&] {
    kt::launch(gemmKernel<64, 64, 128>, mgk::gemmBlocks<64, 64, 128>(p), 128,
               mgk::gemmSmemBytes<64, 64, 128>(), p);
  });
  double g128 = bestMs([&] {
    kt::launch(gemmKernel<128, 128, 256>, mgk::gemmBlocks<128, 128, 256>(p), 256,
               mgk::gemmSmemBytes<128, 128, 256>(), p);
  });
  std::vector<float> y = dy.host();
  double s = 0;  // spot check one element
  for (int64_t k = 0; k < n; ++k) s += double(a[5 * n + k]) * b[k * n + 7];
  EXPECT_NEAR(y[5 * n + 7], s, 1e-3);

  ConvCase c;  // 3x3 pad 1, 64 -> 64 channels on 56x56 (a ResNet-18 layer1 conv)
  c.N = 1, c.C = c.K = 64, c.H = c.W = 56, c.bias = true;
  std::vector<float> x = kt::randomVec(c.N * c.C * c.H * c.W, rng);
  std::vector<float> w = kt::randomVec(c.K * c.C * 9, rng), bias = kt::randomVec(c.K, rng);
  Dev<float> dx(x), dw(w), dbias(bias), dcy(size_t(c.N * c.K * 56 * 56));
  mgk::ConvParams cp{};
  cp.N = 1, cp.C = cp.K = 64, cp.H = cp.W = 56, cp.R = cp.S = 3, cp.group = 1;
  cp.strideH = cp.strideW = 1, cp.padTop = cp.padLeft = 1, cp.dilationH = cp.dilationW = 1;
  cp.OH = cp.OW = 56, cp.x = dx.get(), cp.w = dw.get(), cp.bias = dbias.get(), cp.y = dcy.get();
  cp.yChannels = 64;
  double c64 = bestMs([&] {
    kt::launch(convKernel<64, 64, 128>, mgk::convBlocks<64, 64, 128>(cp), 128,
               mgk::convSmemBytes<64, 64, 128>(), cp);
  });
  double c128 = bestMs([&] {
    kt::launch(convKernel<64, 128, 256>, mgk::convBlocks<64, 128, 256>(cp), 256,
               mgk::convSmemBytes<64, 128, 256>(), cp);
  });
  std::vector<float> cy = dcy.host();
  double cs = bias[3];  // spot check y[0, 3, 10, 20]
  for (int64_t ci = 0; ci < 64; ++ci)
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q)
        cs += double(x[(ci * 56 + 9 + r) * 56 + 19 + q]) * w[((3 * 64 + ci) * 3 + r) * 3 + q];
  EXPECT_NEAR(cy[(3 * 56 + 10) * 56 + 20], cs, 1e-3);

  const double gflop = 2.0 * n * n * n / 1e9, cflop = 2.0 * 64 * 64 * 9 * 56 * 56 / 1e9;
  std::printf("emulation (%d OS threads): gemm 256^3 %.1f ms (64x64/128, %.2f GFLOP/s), "
              "%.1f ms (128x128/256); conv 3x3 64->64 on 56x56 %.1f ms (64x64/128, %.2f GFLOP/s), "
              "%.1f ms (64x128/256)\n",
              mg_emu::threadCount(), g64, gflop / (g64 / 1e3), g128, c64, cflop / (c64 / 1e3),
              c128);
}

}  // namespace
