// --precision fp16 on the CPU emulation of CUDA: the emulated tensor-core fragments
// (runtime/gpu/mg_emu_wmma.h, as mg_wmma) against a double loop, and the fp16 block programs
// mgk::gemmF16Block / convF16Block (mg_gemm.cuh, mg_conv.cuh) against references.
//
// Two references per case: with the operands rounded to half first (what the tensor cores
// multiply; only float accumulation separates it from the kernel, so the fp32 tests' tolerance
// applies), and the plain fp32 one with an fp16-sized tolerance (what a user of --precision fp16
// sees: about 2^-11 relative per operand).
#include <cstdio>

#include "kernels_test_util.h"

namespace {

using kt::Dev;

float h(float x) { return mgHalfToFloat(mgFloatToHalf(x)); }

// ---- The emulated wmma fragments -----------------------------------------------------------
__global__ void wmmaKernel(const float* a, const float* b, const float* c, float* d, int aColMajor,
                           int bColMajor, int dColMajor) {
  // Every thread of the warp makes the same calls, as CUDA requires.
  __shared__ mg_half sa[16 * 24], sb[16 * 24];
  __shared__ float sc[16 * 20];
  if (threadIdx.x == 0) {
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        sa[aColMajor ? j * 24 + i : i * 24 + j] = mgFloatToHalf(a[i * 16 + j]);  // A (m=i, k=j)
        sb[bColMajor ? j * 24 + i : i * 24 + j] = mgFloatToHalf(b[i * 16 + j]);  // B (k=i, n=j)
        sc[i * 20 + j] = c[i * 16 + j];
      }
  }
  __syncthreads();
  using namespace mg_wmma;
  fragment<accumulator, 16, 16, 16, float> acc;
  load_matrix_sync(acc, sc, 20, mem_row_major);
  fragment<accumulator, 16, 16, 16, float> twice;
  fill_fragment(twice, 0.f);
  if (aColMajor) {
    fragment<matrix_a, 16, 16, 16, mg_half, col_major> fa;
    load_matrix_sync(fa, sa, 24);
    if (bColMajor) {
      fragment<matrix_b, 16, 16, 16, mg_half, col_major> fb;
      load_matrix_sync(fb, sb, 24);
      mma_sync(acc, fa, fb, acc);
    } else {
      fragment<matrix_b, 16, 16, 16, mg_half, row_major> fb;
      load_matrix_sync(fb, sb, 24);
      mma_sync(acc, fa, fb, acc);
    }
  } else {
    fragment<matrix_a, 16, 16, 16, mg_half, row_major> fa;
    load_matrix_sync(fa, sa, 24);
    if (bColMajor) {
      fragment<matrix_b, 16, 16, 16, mg_half, col_major> fb;
      load_matrix_sync(fb, sb, 24);
      mma_sync(acc, fa, fb, acc);
    } else {
      fragment<matrix_b, 16, 16, 16, mg_half, row_major> fb;
      load_matrix_sync(fb, sb, 24);
      mma_sync(acc, fa, fb, acc);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) store_matrix_sync(d, acc, 16, dColMajor ? mem_col_major : mem_row_major);
}

TEST(Wmma, EmulatedFragmentsMatchADoubleLoop) {
  std::mt19937 rng(7);
  std::vector<float> a = kt::randomVec(256, rng, -4.f, 4.f), b = kt::randomVec(256, rng, -4.f, 4.f);
  std::vector<float> c = kt::randomVec(256, rng);
  for (int layout = 0; layout < 8; ++layout) {
    const int aCol = layout & 1, bCol = (layout >> 1) & 1, dCol = (layout >> 2) & 1;
    SCOPED_TRACE(testing::Message() << "a col " << aCol << " b col " << bCol << " d col " << dCol);
    std::vector<double> ref(256), exact(256);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        double s = c[m * 16 + n], e = s;
        for (int k = 0; k < 16; ++k) {
          s += double(h(a[m * 16 + k])) * h(b[k * 16 + n]);
          e += double(a[m * 16 + k]) * b[k * 16 + n];
        }
        ref[dCol ? n * 16 + m : m * 16 + n] = s;
        exact[dCol ? n * 16 + m : m * 16 + n] = e;
      }
    Dev<float> da(a), db(b), dc(c), dd(size_t(256));
    kt::launch(wmmaKernel, 1, 32, 0, da.get(), db.get(), dc.get(), dd.get(), aCol, bCol, dCol);
    EXPECT_TRUE(kt::near(dd.host(), ref, 1e-4));
    // Half rounding of |x| <= 4 is at most 2^-9 absolute; 16 products of such terms.
    EXPECT_TRUE(kt::near(dd.host(), exact, 0.25, 2e-2));
  }
}

TEST(Wmma, HalfRoundsToNearestEven) {
  EXPECT_EQ(h(1.f + 1.f / 4096), 1.f);              // below half an ulp (2^-11)
  EXPECT_EQ(h(1.f + 3.f / 2048), 1.f + 2.f / 1024);  // a tie rounds to even
  EXPECT_EQ(h(65504.f), 65504.f);
  EXPECT_TRUE(std::isinf(h(70000.f)));
}

// ---- GEMM -------------------------------------------------------------------------------------
template <int BM, int BN, int T>
__global__ void gemmF16Kernel(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemmF16Block<BM, BN, T>(p, blockIdx.x, smem);
}
template <int BM, int BN, int T>
__global__ void convF16Kernel(mgk::ConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::convF16Block<BM, BN, T>(p, blockIdx.x, smem);
}

struct GemmCase {
  int64_t batch = 2, M = 45, N = 37, K = 41;
  bool transA = false, transB = false, residual = false, transY = false;
  int cKind = 1;  // 0 none, 1 bias row, 3 full per batch
  float alpha = 1.25f, beta = 0.5f;
  int act = mgk::kActNone;
};

template <int BM, int BN, int T>
void runGemm(const GemmCase& c, int blockThreads = T, uint32_t seed = 1) {
  SCOPED_TRACE(testing::Message() << "fp16 tile " << BM << "x" << BN << "/" << T << " blockDim "
                                  << blockThreads << " M,N,K " << c.M << "," << c.N << "," << c.K
                                  << " transA " << c.transA << " transB " << c.transB);
  std::mt19937 rng(seed);
  std::vector<float> a = kt::randomVec(c.batch * c.M * c.K, rng);
  std::vector<float> b = kt::randomVec(c.batch * c.K * c.N, rng);
  std::vector<float> cm = kt::randomVec(c.batch * c.M * c.N, rng);
  std::vector<float> res = kt::randomVec(c.batch * c.M * c.N, rng);
  mgk::GemmParams p{};
  p.batch = c.batch, p.M = c.M, p.N = c.N, p.K = c.K;
  p.aBatch = c.M * c.K, p.aM = c.transA ? 1 : c.K, p.aK = c.transA ? c.M : 1;
  p.bBatch = c.K * c.N, p.bK = c.transB ? 1 : c.N, p.bN = c.transB ? c.K : 1;
  if (c.cKind == 1) p.cBatch = 0, p.cM = 0, p.cN = 1;
  if (c.cKind == 3) p.cBatch = c.M * c.N, p.cM = c.N, p.cN = 1;
  p.alpha = c.alpha, p.beta = c.beta;
  p.yBatch = c.M * c.N, p.yM = c.transY ? 1 : c.N, p.yN = c.transY ? c.M : 1;
  p.act = c.act, p.actAlpha = 0.1f, p.actBeta = 0.7f;
  std::vector<double> ref(c.batch * c.M * c.N), exact(ref.size());
  for (int64_t bi = 0; bi < c.batch; ++bi)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t n = 0; n < c.N; ++n) {
        double s = 0, e = 0;
        for (int64_t k = 0; k < c.K; ++k) {
          const float x = a[bi * p.aBatch + m * p.aM + k * p.aK], y = b[bi * p.bBatch + k * p.bK + n * p.bN];
          s += double(h(x)) * h(y);
          e += double(x) * y;
        }
        const int64_t yo = bi * p.yBatch + m * p.yM + n * p.yN;
        double add = c.cKind ? c.beta * double(cm[bi * p.cBatch + m * p.cM + n * p.cN]) : 0.0;
        if (c.residual) add += res[yo];
        ref[yo] = kt::act(c.act, c.alpha * s + add, 0.1f, 0.7f);
        exact[yo] = kt::act(c.act, c.alpha * e + add, 0.1f, 0.7f);
      }
  Dev<float> da(a), db(b), dc(cm), dres(res), dy(ref.size());
  p.A = da.get(), p.B = db.get(), p.Y = dy.get();
  p.C = c.cKind ? dc.get() : nullptr;
  p.residual = c.residual ? dres.get() : nullptr;
  kt::launch(gemmF16Kernel<BM, BN, T>, mgk::gemmF16Blocks<BM, BN, T>(p), blockThreads,
             mgk::gemmF16SmemBytes<BM, BN, T>(), p);
  const std::vector<float> got = dy.host();
  EXPECT_TRUE(kt::near(got, ref, 2e-5 * double(c.K + 8)));
  // Operands in [-1, 1] rounded to half: at most 2^-11 relative each.
  EXPECT_TRUE(kt::near(got, exact, 2e-3 * std::sqrt(double(c.K)) + 2e-3, 2e-2));
}

// --precision fp16's half storage: A, B, C, the residual and Y are float16 in memory (S =
// mgk::Half), products and sums are float, and Y is rounded to nearest even once, on store.
template <int BM, int BN, int T>
__global__ void gemmF16HalfKernel(mgk::GemmParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::gemmF16Block<BM, BN, T, mgk::Half>(p, blockIdx.x, smem);
}

TEST(GemmF16Kernel, HalfStorage) {
  // Ties round to even on store, like mgFloatToHalf (the same bits as the CPU runtime).
  EXPECT_EQ(mgk::ldF(mgk::stF<mgk::Half>(1.f + 3.f / 2048)), 1.f + 2.f / 1024);
  EXPECT_EQ(mgk::ldF(mgk::stF<mgk::Half>(1.f + 1.f / 2048)), 1.f);
  EXPECT_TRUE(std::isinf(mgk::ldF(mgk::stF<mgk::Half>(65520.f))));
  const int64_t M = 37, N = 45, K = 70;
  std::mt19937 rng(7);
  auto halfVec = [&](size_t n, std::vector<float>& vals) {
    std::vector<float> r = kt::randomVec(int64_t(n), rng);
    std::vector<uint16_t> bits(n);
    vals.resize(n);
    for (size_t i = 0; i < n; ++i) bits[i] = mgk::floatToHalf(r[i]), vals[i] = mgk::halfToFloat(bits[i]);
    return bits;
  };
  std::vector<float> a, b, cm, res;
  std::vector<uint16_t> ha = halfVec(M * K, a), hb = halfVec(K * N, b), hc = halfVec(N, cm), hr = halfVec(M * N, res);
  mgk::GemmParams p{};
  p.batch = 1, p.M = M, p.N = N, p.K = K;
  p.aM = K, p.aK = 1, p.bK = 1, p.bN = K;  // B transposed: k-contiguous, like Linear weights
  p.cM = 0, p.cN = 1, p.alpha = 1.f, p.beta = 1.f, p.yM = N, p.yN = 1, p.act = mgk::kActRelu;
  std::vector<double> ref(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a[m * K + k]) * b[n * K + k];
      ref[m * N + n] = std::max(0.0, s + cm[n] + res[m * N + n]);
    }
  Dev<uint16_t> da(ha), db(hb), dc(hc), dres(hr), dy(ref.size());
  p.A = reinterpret_cast<const float*>(da.get()), p.B = reinterpret_cast<const float*>(db.get());
  p.C = reinterpret_cast<const float*>(dc.get()), p.residual = reinterpret_cast<const float*>(dres.get());
  p.Y = reinterpret_cast<float*>(dy.get());
  kt::launch(gemmF16HalfKernel<32, 32, 128>, mgk::gemmF16Blocks<32, 32, 128, mgk::Half>(p), 128,
             mgk::gemmF16SmemBytes<32, 32, 128, mgk::Half>(), p);
  const std::vector<uint16_t> bits = dy.host();
  std::vector<float> got(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) got[i] = mgk::halfToFloat(bits[i]);
  // One rounding to half (2^-11 relative) on top of float accumulation.
  EXPECT_TRUE(kt::near(got, ref, 1e-4 * double(K), 1.0 / 1024));
}

template <int BM, int BN, int T>
void gemmTileSuite() {
  GemmCase c;
  runGemm<BM, BN, T>(c);
  c.transA = c.transB = true;
  c.cKind = 3;
  c.residual = true;
  c.transY = true;
  c.act = mgk::kActRelu;
  runGemm<BM, BN, T>(c, T, 2);
  GemmCase big;  // several tiles each way, K over several k-tiles with a ragged last one
  big.batch = 1, big.M = 2 * BM + 3, big.N = 2 * BN + 5, big.K = 97, big.transB = true;
  runGemm<BM, BN, T>(big, T, 3);
}

TEST(GemmF16Kernel, Tile32x32) { gemmTileSuite<32, 32, 128>(); }
TEST(GemmF16Kernel, Tile64x64) { gemmTileSuite<64, 64, 128>(); }
TEST(GemmF16Kernel, Tile128x64) { gemmTileSuite<128, 64, 256>(); }
TEST(GemmF16Kernel, Tile128x128) { gemmTileSuite<128, 128, 256>(); }
TEST(GemmF16Kernel, Tile128x16) { gemmTileSuite<128, 16, 128>(); }
TEST(GemmF16Kernel, Tile16x128) { gemmTileSuite<16, 128, 128>(); }

TEST(GemmF16Kernel, BlockDimLargerThanProgram) {
  GemmCase c;
  runGemm<64, 64, 128>(c, 256);
  runGemm<32, 32, 128>(c, 200);
  c.transA = true;
  runGemm<128, 128, 256>(c, 384);
}

// ---- Convolution (implicit GEMM) ----------------------------------------------------------------
struct ConvCase {
  int64_t N = 2, C = 5, H = 9, W = 11, K = 7, R = 3, S = 3, group = 1;
  int64_t strideH = 1, strideW = 1, padTop = 1, padLeft = 1, padBottom = 1, padRight = 1;
  int64_t dilationH = 1, dilationW = 1;
  bool residual = false;
  int64_t yChannels = 0, yChannelOffset = 0;
  int act = mgk::kActNone;
  int64_t OH() const { return (H + padTop + padBottom - dilationH * (R - 1) - 1) / strideH + 1; }
  int64_t OW() const { return (W + padLeft + padRight - dilationW * (S - 1) - 1) / strideW + 1; }
};

constexpr float kSentinel = 12345.f;

template <int BM, int BN, int T>
void runConv(const ConvCase& c, int blockThreads = T, uint32_t seed = 1) {
  SCOPED_TRACE(testing::Message() << "fp16 conv tile " << BM << "x" << BN << "/" << T
                                  << " blockDim " << blockThreads << " group " << c.group);
  std::mt19937 rng(seed);
  const int64_t Cg = c.C / c.group, Kg = c.K / c.group, OH = c.OH(), OW = c.OW();
  const int64_t yc = c.yChannels ? c.yChannels : c.K;
  std::vector<float> x = kt::randomVec(c.N * c.C * c.H * c.W, rng);
  std::vector<float> w = kt::randomVec(c.K * Cg * c.R * c.S, rng);
  std::vector<float> bias = kt::randomVec(c.K, rng);
  std::vector<float> res = kt::randomVec(c.N * c.K * OH * OW, rng);
  std::vector<double> ref(c.N * yc * OH * OW, kSentinel), exact(ref);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t g = k / Kg;
          double s = 0, e = 0;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t r = 0; r < c.R; ++r)
              for (int64_t q = 0; q < c.S; ++q) {
                const int64_t ih = oh * c.strideH - c.padTop + r * c.dilationH;
                const int64_t iw = ow * c.strideW - c.padLeft + q * c.dilationW;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                const float xv = x[((n * c.C + g * Cg + ci) * c.H + ih) * c.W + iw];
                const float wv = w[((k * Cg + ci) * c.R + r) * c.S + q];
                s += double(h(xv)) * h(wv);
                e += double(xv) * wv;
              }
          double add = bias[k];
          if (c.residual) add += res[((n * c.K + k) * OH + oh) * OW + ow];
          const int64_t yo = ((n * yc + c.yChannelOffset + k) * OH + oh) * OW + ow;
          ref[yo] = kt::act(c.act, s + add, 0.1f, 0.6f);
          exact[yo] = kt::act(c.act, e + add, 0.1f, 0.6f);
        }
  Dev<float> dx(x), dw(w), db(bias), dres(res), dy(std::vector<float>(ref.size(), kSentinel));
  mgk::ConvParams p{};
  p.N = c.N, p.C = c.C, p.H = c.H, p.W = c.W, p.K = c.K, p.R = c.R, p.S = c.S, p.group = c.group;
  p.strideH = c.strideH, p.strideW = c.strideW, p.padTop = c.padTop, p.padLeft = c.padLeft;
  p.dilationH = c.dilationH, p.dilationW = c.dilationW, p.OH = OH, p.OW = OW;
  p.x = dx.get(), p.w = dw.get(), p.bias = db.get(), p.y = dy.get();
  p.residual = c.residual ? dres.get() : nullptr;
  p.yChannels = yc, p.yChannelOffset = c.yChannelOffset;
  p.act = c.act, p.actAlpha = 0.1f, p.actBeta = 0.6f;
  kt::launch(convF16Kernel<BM, BN, T>, mgk::convF16Blocks<BM, BN, T>(p), blockThreads,
             mgk::convF16SmemBytes<BM, BN, T>(), p);
  const double kd = double(Cg * c.R * c.S);
  const std::vector<float> got = dy.host();
  EXPECT_TRUE(kt::near(got, ref, 2e-5 * (kd + 8)));
  EXPECT_TRUE(kt::near(got, exact, 2e-3 * std::sqrt(kd) + 2e-3, 2e-2));
}

template <int BM, int BN, int T>
void convTileSuite() {
  ConvCase c;
  runConv<BM, BN, T>(c);
  ConvCase g;  // groups, strides, dilations, asymmetric pads, residual, activation, range out
  g.N = 3, g.C = 6, g.H = 9, g.W = 10, g.K = 10, g.group = 2, g.R = 3, g.S = 2;
  g.strideH = 2, g.dilationH = 2, g.dilationW = 3;
  g.padTop = 2, g.padLeft = 0, g.padBottom = 1, g.padRight = 2;
  g.residual = true, g.act = mgk::kActLeakyRelu;
  g.yChannels = 16, g.yChannelOffset = 4;
  runConv<BM, BN, T>(g, T, 2);
}

TEST(ConvF16Kernel, Tile32x32) { convTileSuite<32, 32, 128>(); }
TEST(ConvF16Kernel, Tile64x64) { convTileSuite<64, 64, 128>(); }
TEST(ConvF16Kernel, Tile128x64) { convTileSuite<128, 64, 256>(); }
TEST(ConvF16Kernel, Tile16x128) { convTileSuite<16, 128, 128>(); }
TEST(ConvF16Kernel, Tile128x16) { convTileSuite<128, 16, 128>(); }

TEST(ConvF16Kernel, BlockDimLargerThanProgram) {
  ConvCase c;
  c.residual = true;
  c.yChannels = 9, c.yChannelOffset = 2;
  runConv<64, 64, 128>(c, 256);
  runConv<128, 64, 256>(c, 320, 2);
}

}  // namespace
