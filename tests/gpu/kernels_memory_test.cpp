// The memory-bound block programs of runtime/gpu/kernels/ (mg_map.cuh, mg_pool.cuh,
// mg_reduce.cuh, mg_rows.cuh) on the CPU emulation of CUDA, against plain loops written here:
// maps over permuted, broadcast, reversed and strided views of every rank up to 8 with every
// ready functor; pools with pads, strides, dilations, ceil-mode shapes and both average
// divisors into a channel range; every reduction op in both variants over several axis sets;
// softmax, log-softmax and layer normalization on rows that fit the block's registers and rows
// that do not. Each also with a blockDim larger than the program's, and the barrier-free ones
// as plain loops over threads (mgLaunchNoSync).
#include <functional>

#include "kernels_test_util.h"

namespace {

using kt::Dev;

template <typename F, int I, int T>
__global__ void mapKernel(mgk::MapParams p, F f) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::mapBlock<F, I, T>(p, blockIdx.x, smem, f);
}
template <int I, int T>
__global__ void poolKernel(mgk::PoolParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::poolBlock<I, T>(p, blockIdx.x, smem);
}
template <int V, int I, int T>
__global__ void reduceKernel(mgk::ReduceParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::reduceBlock<V, I, T>(p, blockIdx.x, smem);
}
template <int I, int T>
__global__ void rowKernel(mgk::RowParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::rowBlock<I, T>(p, blockIdx.x, smem);
}

int64_t product(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}
std::vector<int64_t> rowMajor(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size());
  int64_t v = 1;
  for (size_t i = d.size(); i-- > 0;) s[i] = v, v *= d[i];
  return s;
}

// ---- map ----------------------------------------------------------------------------------------
// One input view for a map test: strides per output dim, an offset, and the host data.
struct View {
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// Output element o of `dims` -> offset in a view.
int64_t viewOffset(int64_t o, const std::vector<int64_t>& dims, const View& v) {
  int64_t off = v.offset;
  for (size_t d = dims.size(); d-- > 0;) {
    off += (o % dims[d]) * v.strides[d];
    o /= dims[d];
  }
  return off;
}

mgk::MapParams mapParams(const std::vector<int64_t>& dims, const std::vector<View>& in,
                         const std::vector<const void*>& ptrs, void* out, const View& outView) {
  mgk::MapParams p{};
  p.n = product(dims);
  p.rank = int32_t(dims.size());
  p.nin = int32_t(in.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    p.dims[d] = dims[d];
    p.outStrides[d] = outView.strides[d];
    for (size_t k = 0; k < in.size(); ++k) p.inStrides[k][d] = in[k].strides[d];
  }
  for (size_t k = 0; k < in.size(); ++k) p.in[k] = ptrs[k], p.inOffset[k] = in[k].offset;
  p.out = out;
  p.outOffset = outView.offset;
  return p;
}

template <typename F, int I, int T>
void launchMap(const mgk::MapParams& p, const F& f, int blockThreads = T, bool noSync = false) {
  if (noSync)
    kt::launchNoSync(mapKernel<F, I, T>, mgk::mapBlocks<F, I, T>(p), blockThreads,
                     mgk::mapSmemBytes<F, I, T>(), p, f);
  else
    kt::launch(mapKernel<F, I, T>, mgk::mapBlocks<F, I, T>(p), blockThreads,
               mgk::mapSmemBytes<F, I, T>(), p, f);
}

// A Transpose (permutation {2, 0, 3, 1}) of a 5x3x7x4 tensor with elements of type E.
template <typename E, int I>
void transposeCopy(bool noSync) {
  SCOPED_TRACE(testing::Message() << "copy of " << sizeof(E) << "-byte elements, ITEMS " << I);
  const std::vector<int64_t> src = {5, 3, 7, 4}, perm = {2, 0, 3, 1};
  std::vector<int64_t> dims(4), srcStrides = rowMajor(src);
  View in;
  for (int d = 0; d < 4; ++d) dims[d] = src[perm[d]], in.strides.push_back(srcStrides[perm[d]]);
  std::vector<E> x(product(src));
  for (size_t i = 0; i < x.size(); ++i) x[i] = E(i * 2654435761u + 7);
  View out{rowMajor(dims), 0};
  Dev<E> dx(x), dy(x.size());
  mgk::MapParams p = mapParams(dims, {in}, {dx.get()}, dy.get(), out);
  launchMap<mgk::CopyBytes<sizeof(E)>, I, 256>(p, {}, 256, noSync);
  std::vector<E> y = dy.host();
  int64_t bad = 0;
  for (int64_t o = 0; o < p.n; ++o) bad += y[o] != x[viewOffset(o, dims, in)];
  EXPECT_EQ(bad, 0);
}

TEST(MapKernel, TransposeCopiesOfEveryElementSize) {
  transposeCopy<uint8_t, 1>(false);
  transposeCopy<uint16_t, 4>(false);
  transposeCopy<uint32_t, 16>(false);
  transposeCopy<uint64_t, 4>(true);
}

// y = op(x) for a unary float functor, over a reversed, offset 1-D slice (Slice with step -2).
template <typename Op>
void unaryCase(const char* name, Op op, std::function<double(double)> ref, float lo, float hi) {
  SCOPED_TRACE(name);
  std::mt19937 rng(11);
  std::vector<float> x = kt::randomVec(1001, rng, lo, hi);
  x[0] = 0.f;
  x[2] = -0.f;
  const std::vector<int64_t> dims = {500};
  View in{{-2}, 1000};  // x[1000], x[998], ...
  View out{{1}, 0};
  Dev<float> dx(x), dy(size_t(500));
  mgk::MapParams p = mapParams(dims, {in}, {dx.get()}, dy.get(), out);
  launchMap<mgk::Unary<Op>, 4, 256>(p, mgk::Unary<Op>{op});
  std::vector<double> r(500);
  for (int64_t o = 0; o < 500; ++o) r[o] = ref(x[1000 - 2 * o]);
  EXPECT_TRUE(kt::near(dy.host(), r, 1e-6, 1e-5));
}

TEST(MapKernel, UnaryFunctors) {
  using std::exp;
  unaryCase("relu", mgk::OpAct{mgk::kActRelu}, [](double x) { return x > 0 ? x : 0; }, -2, 2);
  unaryCase("sigmoid", mgk::OpAct{mgk::kActSigmoid}, [](double x) { return 1 / (1 + exp(-x)); }, -9, 9);
  unaryCase("tanh", mgk::OpAct{mgk::kActTanh}, [](double x) { return std::tanh(x); }, -4, 4);
  unaryCase("exp", mgk::OpExp{}, [](double x) { return exp(x); }, -5, 5);
  unaryCase("log", mgk::OpLog{}, [](double x) { return std::log(x); }, 0.01f, 50);
  unaryCase("sqrt", mgk::OpSqrt{}, [](double x) { return std::sqrt(x); }, 0, 9);
  unaryCase("reciprocal", mgk::OpReciprocal{}, [](double x) { return 1 / x; }, 0.5f, 3);
  unaryCase("neg", mgk::OpNeg{}, [](double x) { return -x; }, -2, 2);
  unaryCase("abs", mgk::OpAbs{}, [](double x) { return std::fabs(x); }, -2, 2);
  unaryCase("floor", mgk::OpFloor{}, [](double x) { return std::floor(x); }, -9, 9);
  unaryCase("ceil", mgk::OpCeil{}, [](double x) { return std::ceil(x); }, -9, 9);
  unaryCase("round", mgk::OpRound{}, [](double x) { return std::nearbyint(x); }, -9, 9);
  unaryCase("sign", mgk::OpSign{}, [](double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }, -2, 2);
  unaryCase("sin", mgk::OpSin{}, [](double x) { return std::sin(x); }, -4, 4);
  unaryCase("cos", mgk::OpCos{}, [](double x) { return std::cos(x); }, -4, 4);
  unaryCase("erf", mgk::OpErf{}, [](double x) { return std::erf(x); }, -3, 3);
  unaryCase("gelu", mgk::OpAct{mgk::kActGelu},
            [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -4, 4);
  unaryCase("gelu-tanh", mgk::OpAct{mgk::kActGeluTanh}, [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }, -4, 4);
  unaryCase("silu", mgk::OpAct{mgk::kActSwish}, [](double x) { return x / (1 + exp(-x)); }, -6, 6);
  unaryCase("softsign", mgk::OpAct{mgk::kActSoftsign}, [](double x) { return x / (1 + std::fabs(x)); }, -4, 4);
  unaryCase("softplus", mgk::OpAct{mgk::kActSoftplus}, [](double x) { return std::log1p(exp(x)); }, -30, 30);
  unaryCase("leakyrelu", mgk::OpAct{mgk::kActLeakyRelu, 0.3f}, [](double x) { return x >= 0 ? x : 0.3 * x; },
            -2, 2);
  unaryCase("clip", mgk::OpAct{mgk::kActClip, -0.5f, 0.25f},
            [](double x) { return std::fmin(0.25, std::fmax(-0.5, x)); }, -2, 2);
  unaryCase("hardsigmoid", mgk::OpAct{mgk::kActHardSigmoid, 0.2f, 0.5f},
            [](double x) { return std::fmin(1.0, std::fmax(0.0, 0.2 * x + 0.5)); }, -4, 4);
  unaryCase("hardswish", mgk::OpAct{mgk::kActHardSwish},
            [](double x) { return x * std::fmin(1.0, std::fmax(0.0, x / 6 + 0.5)); }, -5, 5);
  unaryCase("elu", mgk::OpAct{mgk::kActElu, 0.7f}, [](double x) { return x >= 0 ? x : 0.7 * (exp(x) - 1); },
            -3, 3);
  unaryCase("selu", mgk::OpAct{mgk::kActSelu, float(mgrt::acts::kTable[mgk::kActSelu].alphaDefault),
                                      float(mgrt::acts::kTable[mgk::kActSelu].betaDefault)}, [](double x) {
    const double a = 1.6732632423543772, g = 1.0507009873554805;
    return x > 0 ? g * x : g * (a * exp(x) - a);
  }, -3, 3);
  unaryCase("identity", mgk::OpIdentity{}, [](double x) { return x; }, -3, 3);
}

// z = op(x, y) with numpy broadcasting: x [3, 1, 5] and y [4, 1] -> z [3, 4, 5], written into
// the channel slice [2, 6) of a [3, 9, 5] tensor (a Concat input written in place).
template <typename Op>
void binaryCase(const char* name, Op op, std::function<double(double, double)> ref, float lo,
                float hi) {
  SCOPED_TRACE(name);
  std::mt19937 rng(12);
  std::vector<float> x = kt::randomVec(15, rng, lo, hi), y = kt::randomVec(4, rng, lo, hi);
  const std::vector<int64_t> dims = {3, 4, 5};
  View vx{{5, 0, 1}, 0}, vy{{0, 1, 0}, 0}, out{{45, 5, 1}, 2 * 5};
  std::vector<float> init(3 * 9 * 5, 777.f);
  Dev<float> dx(x), dy(y), dz(init);
  mgk::MapParams p = mapParams(dims, {vx, vy}, {dx.get(), dy.get()}, dz.get(), out);
  launchMap<mgk::Binary<Op>, 1, 256>(p, mgk::Binary<Op>{op}, 320);
  std::vector<double> r(init.begin(), init.end());
  for (int64_t o = 0; o < 60; ++o)
    r[viewOffset(o, dims, out)] = ref(x[viewOffset(o, dims, vx)], y[viewOffset(o, dims, vy)]);
  EXPECT_TRUE(kt::near(dz.host(), r, 1e-6, 1e-5));
}

TEST(MapKernel, BinaryFunctorsWithBroadcastingIntoAStridedView) {
  binaryCase("add", mgk::OpAdd{}, [](double a, double b) { return a + b; }, -2, 2);
  binaryCase("sub", mgk::OpSub{}, [](double a, double b) { return a - b; }, -2, 2);
  binaryCase("mul", mgk::OpMul{}, [](double a, double b) { return a * b; }, -2, 2);
  binaryCase("div", mgk::OpDiv{}, [](double a, double b) { return a / b; }, 0.5f, 2);
  binaryCase("pow", mgk::OpPow{}, [](double a, double b) { return std::pow(a, b); }, 0.1f, 3);
  binaryCase("max", mgk::OpMax{}, [](double a, double b) { return std::fmax(a, b); }, -2, 2);
  binaryCase("min", mgk::OpMin{}, [](double a, double b) { return std::fmin(a, b); }, -2, 2);
  binaryCase("fmod", mgk::OpFmod{}, [](double a, double b) { return std::fmod(a, b); }, -3, 3);
  binaryCase("prelu", mgk::OpPRelu{}, [](double a, double b) { return a >= 0 ? a : a * b; }, -2,
             2);
}

TEST(MapKernel, CompareWhereCastBatchNormAct) {
  std::mt19937 rng(13);
  const int64_t n = 777;
  const std::vector<int64_t> dims = {n};
  View flat{{1}, 0};
  std::vector<float> a = kt::randomVec(n, rng), b = kt::randomVec(n, rng);
  for (int64_t i = 0; i < n; i += 5) b[i] = a[i];  // some ties
  Dev<float> da(a), db(b);
  {  // Less -> bool, then Where(bool, a, b)
    Dev<uint8_t> dc(static_cast<size_t>(n));
    mgk::MapParams p = mapParams(dims, {flat, flat}, {da.get(), db.get()}, dc.get(), flat);
    launchMap<mgk::Compare<mgk::OpLessOrEqual>, 16, 256>(p, {});
    std::vector<uint8_t> c = dc.host();
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += c[i] != (a[i] <= b[i] ? 1 : 0);
    EXPECT_EQ(bad, 0);
    Dev<float> dw(static_cast<size_t>(n));
    mgk::MapParams pw =
        mapParams(dims, {flat, flat, flat}, {dc.get(), db.get(), da.get()}, dw.get(), flat);
    launchMap<mgk::Where<float>, 4, 256>(pw, {});
    std::vector<double> r(n);
    for (int64_t i = 0; i < n; ++i) r[i] = a[i] <= b[i] ? b[i] : a[i];  // = max(a, b)
    EXPECT_TRUE(kt::near(dw.host(), r, 0));
  }
  {  // Cast float -> int64 (truncation toward zero) and back
    Dev<int64_t> di(static_cast<size_t>(n));
    std::vector<float> big(a);
    for (float& v : big) v *= 1000.f;
    Dev<float> dbig(big), dback(static_cast<size_t>(n));
    mgk::MapParams p = mapParams(dims, {flat}, {dbig.get()}, di.get(), flat);
    launchMap<mgk::Cast<float, int64_t>, 4, 256>(p, {});
    mgk::MapParams q = mapParams(dims, {flat}, {di.get()}, dback.get(), flat);
    launchMap<mgk::Cast<int64_t, float>, 4, 256>(q, {});
    std::vector<double> r(n);
    for (int64_t i = 0; i < n; ++i) r[i] = std::trunc(double(big[i]));
    EXPECT_TRUE(kt::near(dback.host(), r, 0));
  }
  {  // BatchNormalization over [2, 3, 5, 7]: per-channel parameters broadcast by strides
    const std::vector<int64_t> d4 = {2, 3, 5, 7};
    std::vector<float> x = kt::randomVec(product(d4), rng), sc = kt::randomVec(3, rng),
                       bi = kt::randomVec(3, rng), mean = kt::randomVec(3, rng),
                       var = kt::randomVec(3, rng, 0.1f, 2.f);
    Dev<float> dx(x), dsc(sc), dbi(bi), dm(mean), dv(var), dy(x.size());
    View vx{rowMajor(d4), 0}, vc{{0, 1, 0, 0}, 0};
    mgk::MapParams p = mapParams(d4, {vx, vc, vc, vc, vc},
                                 {dx.get(), dsc.get(), dbi.get(), dm.get(), dv.get()}, dy.get(),
                                 vx);
    launchMap<mgk::BatchNormInference, 4, 256>(p, mgk::BatchNormInference{1e-3f}, 256, true);
    std::vector<double> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      int64_t ch = (int64_t(i) / 35) % 3;
      r[i] = (x[i] - mean[ch]) / std::sqrt(double(var[ch]) + 1e-3) * sc[ch] + bi[ch];
    }
    EXPECT_TRUE(kt::near(dy.host(), r, 1e-5));
  }
  {  // An activation the generator could not fuse, as a map
    Dev<float> dy(static_cast<size_t>(n));
    mgk::MapParams p = mapParams(dims, {flat}, {da.get()}, dy.get(), flat);
    launchMap<mgk::ActF, 1, 256>(p, mgk::ActF{mgk::kActElu, 0.5f, 0.f});
    std::vector<double> r(n);
    for (int64_t i = 0; i < n; ++i) r[i] = kt::act(mgk::kActElu, a[i], 0.5, 0);
    EXPECT_TRUE(kt::near(dy.host(), r, 1e-6, 1e-5));
  }
}

// Rank 8 (kMaxRank), a Tile-like view (stride 0 on doubled dims) and an Expand, with a larger
// blockDim and as plain loops.
TEST(MapKernel, RankEightWithZeroStrides) {
  const std::vector<int64_t> dims = {2, 3, 1, 2, 3, 2, 2, 5};
  std::vector<int64_t> xs = rowMajor({2, 3, 1, 2, 3, 1, 2, 5});
  xs[5] = 0;  // broadcast along dim 5
  View in{xs, 3};
  std::mt19937 rng(14);
  std::vector<float> x = kt::randomVec(3 + 2 * 3 * 2 * 3 * 2 * 5, rng);
  for (int noSync = 0; noSync < 2; ++noSync) {
    Dev<float> dx(x), dy(size_t(product(dims)));
    mgk::MapParams p = mapParams(dims, {in}, {dx.get()}, dy.get(), View{rowMajor(dims), 0});
    launchMap<mgk::Copy<float>, 16, 64>(p, {}, 96, noSync);
    std::vector<double> r(p.n);
    for (int64_t o = 0; o < p.n; ++o) r[o] = x[viewOffset(o, dims, in)];
    EXPECT_TRUE(kt::near(dy.host(), r, 0));
  }
}

// ---- pool ---------------------------------------------------------------------------------------
struct PoolCase {
  int64_t N = 2, C = 3, H = 13, W = 11, kH = 3, kW = 3, sH = 2, sW = 2;
  int64_t padTop = 1, padLeft = 1, padBottom = 1, padRight = 1, dH = 1, dW = 1;
  bool isMax = true, includePad = false, ceil = false;
  int64_t yChannels = 0, yOffset = 0;
  int64_t out(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t d, int64_t s) const {
    int64_t span = in + pa + pb - d * (k - 1) - 1;
    int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
    if (ceil && (o - 1) * s >= in + pa) --o;  // the last window must start inside input + pad
    return o;
  }
  int64_t OH() const { return out(H, padTop, padBottom, kH, dH, sH); }
  int64_t OW() const { return out(W, padLeft, padRight, kW, dW, sW); }
};

template <int I, int T>
void runPool(const PoolCase& c, int blockThreads = T, bool noSync = false, uint32_t seed = 1) {
  SCOPED_TRACE(testing::Message() << "pool " << (c.isMax ? "max" : "avg") << " incl "
                                  << c.includePad << " ceil " << c.ceil << " k" << c.kH << "x"
                                  << c.kW << " s" << c.sH << "," << c.sW << " d" << c.dH << ","
                                  << c.dW << " ITEMS " << I << " blockDim " << blockThreads);
  std::mt19937 rng(seed);
  const int64_t OH = c.OH(), OW = c.OW(), yc = c.yChannels ? c.yChannels : c.C;
  std::vector<float> x = kt::randomVec(c.N * c.C * c.H * c.W, rng);
  std::vector<float> init(c.N * yc * OH * OW, 555.f);
  std::vector<double> ref(init.begin(), init.end());
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t ch = 0; ch < c.C; ++ch)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = c.isMax ? -INFINITY : 0.0;
          int64_t cnt = 0;
          for (int64_t r = 0; r < c.kH; ++r)
            for (int64_t q = 0; q < c.kW; ++q) {
              int64_t ih = oh * c.sH - c.padTop + r * c.dH, iw = ow * c.sW - c.padLeft + q * c.dW;
              if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
              double v = x[((n * c.C + ch) * c.H + ih) * c.W + iw];
              acc = c.isMax ? std::fmax(acc, v) : acc + v;
              ++cnt;
            }
          if (!c.isMax) acc /= double(c.includePad ? c.kH * c.kW : cnt);
          ref[((n * yc + c.yOffset + ch) * OH + oh) * OW + ow] = acc;
        }
  Dev<float> dx(x), dy(init);
  mgk::PoolParams p{};
  p.N = c.N, p.C = c.C, p.H = c.H, p.W = c.W, p.OH = OH, p.OW = OW;
  p.kernelH = c.kH, p.kernelW = c.kW, p.strideH = c.sH, p.strideW = c.sW;
  p.padTop = c.padTop, p.padLeft = c.padLeft, p.dilationH = c.dH, p.dilationW = c.dW;
  p.isMax = c.isMax, p.countIncludePad = c.includePad;
  p.x = dx.get(), p.y = dy.get(), p.yChannels = yc, p.yChannelOffset = c.yOffset;
  if (noSync)
    kt::launchNoSync(poolKernel<I, T>, mgk::poolBlocks<I, T>(p), blockThreads,
                     mgk::poolSmemBytes<I, T>(), p);
  else
    kt::launch(poolKernel<I, T>, mgk::poolBlocks<I, T>(p), blockThreads,
               mgk::poolSmemBytes<I, T>(), p);
  EXPECT_TRUE(kt::near(dy.host(), ref, 1e-6));
}

TEST(PoolKernel, MaxAndAverage) {
  PoolCase c;
  runPool<1, 256>(c);
  c.isMax = false;
  runPool<4, 256>(c);
  c.includePad = true;
  runPool<16, 256>(c);
  PoolCase d;  // dilation, asymmetric pads, stride 1 x 3, ceil mode, channel range
  d.kH = 2, d.kW = 3, d.dH = 2, d.dW = 1, d.sH = 1, d.sW = 3, d.padTop = 0, d.padBottom = 1;
  d.padLeft = 2, d.padRight = 0, d.ceil = true, d.yChannels = 7, d.yOffset = 3;
  runPool<4, 256>(d, 256, false, 2);
  d.isMax = false;
  runPool<4, 256>(d, 256, false, 3);
  PoolCase one;  // 1-D (H = 1) average, 1 x 4 window stride 4 with ceil mode
  one.H = 1, one.W = 30, one.kH = 1, one.kW = 4, one.sH = 1, one.sW = 4, one.padTop = 0;
  one.padBottom = 0, one.padLeft = one.padRight = 0, one.ceil = true, one.isMax = false;
  runPool<1, 256>(one);
}

TEST(PoolKernel, LargerBlockDimAndPlainLoops) {
  PoolCase c;
  runPool<4, 128>(c, 256);
  c.isMax = false;
  runPool<4, 256>(c, 256, true);
}

// ---- reduce -------------------------------------------------------------------------------------
const char* kRedNames[] = {"sum", "mean", "max", "min", "prod", "l1", "l2",
                           "logsum", "logsumexp", "sumsquare"};

double reduceRef(int op, const std::vector<double>& v) {
  double s = 0, m = -INFINITY, mn = INFINITY, p = 1;
  for (double x : v) {
    s += op == mgk::kRedL1 ? std::fabs(x)
         : (op == mgk::kRedL2 || op == mgk::kRedSumSquare) ? x * x
                                                            : x;
    m = std::fmax(m, x);
    mn = std::fmin(mn, x);
    p *= x;
  }
  switch (op) {
    case mgk::kRedMean: return s / double(v.size());
    case mgk::kRedMax: return m;
    case mgk::kRedMin: return mn;
    case mgk::kRedProd: return p;
    case mgk::kRedL2: return std::sqrt(s);
    case mgk::kRedLogSum: return std::log(s);
    case mgk::kRedLogSumExp: {
      double e = 0;
      for (double x : v) e += std::exp(x - m);
      return m + std::log(e);
    }
    default: return s;
  }
}

// Reduces x of shape `dims` over `axes` (kept in order); the output is the other axes, in order.
template <int V, int I, int T>
void runReduce(int op, const std::vector<int64_t>& dims, const std::vector<int>& axes,
               int blockThreads = T, bool noSync = false, uint32_t seed = 1) {
  SCOPED_TRACE(testing::Message() << kRedNames[op] << " variant " << V << " ITEMS " << I
                                  << " blockDim " << blockThreads);
  std::mt19937 rng(seed);
  std::vector<float> x;
  if (op == mgk::kRedProd)
    x = kt::randomVec(product(dims), rng, 0.8f, 1.25f);
  else if (op == mgk::kRedLogSum)
    x = kt::randomVec(product(dims), rng, 0.f, 1.f);
  else if (op == mgk::kRedLogSumExp)
    x = kt::randomVec(product(dims), rng, 80.f, 120.f);  // e^x overflows float: must be stable
  else
    x = kt::randomVec(product(dims), rng);
  const std::vector<int64_t> st = rowMajor(dims);
  mgk::ReduceParams p{};
  std::vector<int64_t> outDims, outStrides, redDims, redStrides;
  for (int d = 0; d < int(dims.size()); ++d) {
    bool red = false;
    for (int a : axes) red |= a == d;
    (red ? redDims : outDims).push_back(dims[d]);
    (red ? redStrides : outStrides).push_back(st[d]);
  }
  p.outN = product(outDims), p.redN = product(redDims);
  p.outRank = int32_t(outDims.size()), p.redRank = int32_t(redDims.size());
  for (size_t d = 0; d < outDims.size(); ++d)
    p.outDims[d] = outDims[d], p.outInStrides[d] = outStrides[d];
  for (size_t d = 0; d < redDims.size(); ++d)
    p.redDims[d] = redDims[d], p.redStrides[d] = redStrides[d];
  p.op = op;
  std::vector<double> ref(p.outN);
  for (int64_t o = 0; o < p.outN; ++o) {
    View ov{outStrides, 0}, rv{redStrides, 0};
    const int64_t base = viewOffset(o, outDims, ov);
    std::vector<double> v(p.redN);
    for (int64_t r = 0; r < p.redN; ++r) v[r] = x[base + viewOffset(r, redDims, rv)];
    ref[o] = reduceRef(op, v);
  }
  Dev<float> dx(x), dy(size_t(p.outN));
  p.x = dx.get(), p.y = dy.get();
  if (noSync)
    kt::launchNoSync(reduceKernel<V, I, T>, mgk::reduceBlocks<V, I, T>(p), blockThreads,
                     mgk::reduceSmemBytes<V, I, T>(), p);
  else
    kt::launch(reduceKernel<V, I, T>, mgk::reduceBlocks<V, I, T>(p), blockThreads,
               mgk::reduceSmemBytes<V, I, T>(), p);
  EXPECT_TRUE(kt::near(dy.host(), ref, 1e-5, 2e-5));
}

TEST(ReduceKernel, EveryOpPerThread) {
  for (int op = mgk::kRedSum; op <= mgk::kRedSumSquare; ++op) {
    runReduce<mgk::kReducePerThread, 1, 256>(op, {3, 5, 7, 4}, {1, 3});  // strided inner axis
    runReduce<mgk::kReducePerThread, 4, 256>(op, {6, 50}, {1}, 256, false, 2);  // last axis
    runReduce<mgk::kReducePerThread, 16, 64>(op, {9, 3, 40}, {0}, 96, true, 3);  // first axis
  }
}

TEST(ReduceKernel, EveryOpPerBlock) {
  for (int op = mgk::kRedSum; op <= mgk::kRedSumSquare; ++op) {
    runReduce<mgk::kReducePerBlock, 1, 256>(op, {3, 5, 7, 4}, {1, 3});
    runReduce<mgk::kReducePerBlock, 4, 256>(op, {2, 3001}, {1}, 256, false, 2);
    runReduce<mgk::kReducePerBlock, 16, 128>(op, {2, 61, 3, 29}, {1, 3}, 320, false, 3);
  }
}

TEST(ReduceKernel, WholeTensorAndGlobalAveragePool) {
  runReduce<mgk::kReducePerBlock, 4, 256>(mgk::kRedSum, {7, 11, 13}, {0, 1, 2});  // outRank 0
  runReduce<mgk::kReducePerThread, 1, 256>(mgk::kRedMax, {7, 11, 13}, {0, 1, 2});
  // GlobalAveragePool of N x C x 7 x 7: one output per (n, c)
  runReduce<mgk::kReducePerThread, 4, 256>(mgk::kRedMean, {2, 130, 7, 7}, {2, 3});
  runReduce<mgk::kReducePerBlock, 4, 256>(mgk::kRedMean, {2, 13, 7, 7}, {2, 3});
}

TEST(ReduceKernel, NanPropagatesThroughMaxAndMin) {
  std::vector<float> x = {1.f, NAN, 3.f, -2.f, 5.f, 4.f};
  for (int op : {mgk::kRedMax, mgk::kRedMin}) {
    Dev<float> dx(x), dy(size_t(2));
    mgk::ReduceParams p{};
    p.outN = 2, p.redN = 3, p.outRank = 1, p.redRank = 1;
    p.outDims[0] = 2, p.outInStrides[0] = 3, p.redDims[0] = 3, p.redStrides[0] = 1;
    p.op = op, p.x = dx.get(), p.y = dy.get();
    kt::launch(reduceKernel<mgk::kReducePerBlock, 1, 256>, 2, 256,
               mgk::reduceSmemBytes<mgk::kReducePerBlock, 1, 256>(), p);
    std::vector<float> y = dy.host();
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], op == mgk::kRedMax ? 5.f : -2.f);
  }
}

// ---- rows ---------------------------------------------------------------------------------------
template <int I, int T>
void runRows(int op, int64_t rows, int64_t len, bool affine, int blockThreads = T,
             uint32_t seed = 1, float offset = 0.f) {
  SCOPED_TRACE(testing::Message() << "row op " << op << " len " << len << " ITEMS " << I
                                  << " blockDim " << blockThreads << " offset " << offset);
  std::mt19937 rng(seed);
  std::vector<float> x = kt::randomVec(rows * len, rng, offset - 3.f, offset + 3.f);
  std::vector<float> sc = kt::randomVec(len, rng), bi = kt::randomVec(len, rng);
  std::vector<double> ref(rows * len);
  const float eps = 1e-5f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = &x[r * len];
    double m = -INFINITY, s = 0, mean = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) m = std::fmax(m, xr[i]), mean += xr[i];
    mean /= double(len);
    for (int64_t i = 0; i < len; ++i) {
      s += std::exp(xr[i] - m);
      var += (xr[i] - mean) * (xr[i] - mean);
    }
    var /= double(len);
    for (int64_t i = 0; i < len; ++i) {
      double v;
      if (op == mgk::kRowSoftmax)
        v = std::exp(xr[i] - m) / s;
      else if (op == mgk::kRowLogSoftmax)
        v = xr[i] - m - std::log(s);
      else
        v = (xr[i] - mean) / std::sqrt(var + eps) * (affine ? sc[i] : 1.0) + (affine ? bi[i] : 0.0);
      ref[r * len + i] = v;
    }
  }
  Dev<float> dx(x), dsc(sc), dbi(bi), dy(x.size());
  mgk::RowParams p{};
  p.rows = rows, p.len = len, p.op = op, p.epsilon = eps;
  p.x = dx.get(), p.y = dy.get();
  p.scale = affine ? dsc.get() : nullptr;
  p.bias = affine ? dbi.get() : nullptr;
  kt::launch(rowKernel<I, T>, mgk::rowBlocks<I, T>(p), blockThreads, mgk::rowSmemBytes<I, T>(),
             p);
  EXPECT_TRUE(kt::near(dy.host(), ref, 2e-5, 1e-4));
}

TEST(RowKernel, SoftmaxLogSoftmaxLayerNorm) {
  for (int op : {mgk::kRowSoftmax, mgk::kRowLogSoftmax, mgk::kRowLayerNorm}) {
    runRows<1, 256>(op, 3, 1, true);               // a single element
    runRows<4, 256>(op, 5, 37, true, 256, 2);      // far fewer elements than threads
    runRows<4, 256>(op, 4, 1000, false, 256, 3);   // fits in registers (<= 1024)
    runRows<1, 256>(op, 3, 1000, true, 256, 4);    // does not: read again by every pass
    runRows<16, 128>(op, 2, 5003, true, 200, 5);   // neither, and a larger blockDim
    runRows<4, 256>(op, 3, 300, true, 256, 6, 1000.f);  // large values: stable formulas
  }
}

// Softmax/LogSoftmax over an axis before the last: x as [outer, len, inner], the row (o, i) at
// stride inner (YOLOv8's DFL softmax over axis 1 of [1, 16, 4, A]).
template <int I, int T>
void runStridedRows(int op, int64_t outer, int64_t len, int64_t inner, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "strided row op " << op << " [" << outer << ", " << len << ", "
                                  << inner << "] ITEMS " << I);
  std::mt19937 rng(seed);
  std::vector<float> x = kt::randomVec(outer * len * inner, rng, -4.f, 4.f);
  std::vector<double> ref(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < len; ++j) m = std::fmax(m, x[at(j)]);
      for (int64_t j = 0; j < len; ++j) s += std::exp(x[at(j)] - m);
      for (int64_t j = 0; j < len; ++j)
        ref[at(j)] = op == mgk::kRowSoftmax ? std::exp(x[at(j)] - m) / s : x[at(j)] - m - std::log(s);
    }
  Dev<float> dx(x), dy(x.size());
  mgk::RowParams p{};
  p.rows = outer * inner, p.len = len, p.inner = inner, p.op = op;
  p.x = dx.get(), p.y = dy.get();
  kt::launch(rowKernel<I, T>, mgk::rowBlocks<I, T>(p), T, mgk::rowSmemBytes<I, T>(), p);
  EXPECT_TRUE(kt::near(dy.host(), ref, 2e-5, 1e-4));
}

TEST(RowKernel, SoftmaxOverAnInnerAxis) {
  for (int op : {mgk::kRowSoftmax, mgk::kRowLogSoftmax}) {
    runStridedRows<1, 256>(op, 1, 16, 4 * 84, 11);  // the DFL shape: [1, 16, 4 * 84]
    runStridedRows<4, 256>(op, 3, 7, 5, 12);       // odd extents on every side
    runStridedRows<1, 128>(op, 2, 1000, 3, 13);    // rows longer than the block's registers
    runStridedRows<4, 256>(op, 2, 9, 1, 14);       // inner 1: the contiguous case
  }
}

}  // namespace
