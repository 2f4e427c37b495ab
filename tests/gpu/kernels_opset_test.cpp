// The opset 18-21 programs and helpers of the kernel library (runtime/gpu/kernels/mg_opset.cuh) on
// the CPU emulation: the scatters with repeated indices (exactly the CPU runtime's sequential
// result, for every reduction), GroupNormalization, Col2Im, LpPool and DeformConv against plain
// loops in double (written as runtime/cpu's kernels are), Resize's table walk, and the typed
// helpers (float16 / bfloat16 conversions bit for bit against runtime/cpu's, saturating casts,
// wrapping integer reductions). Barrier-free programs also run under mgLaunchNoSync, the
// GroupNormalization under the strict barrier check with blocks larger than its THREADS.
#include <algorithm>
#include <limits>

#include "../../runtime/cpu/k_elementwise_impl.h"
#include "kernels_test_util.h"

namespace {

using kt::Dev;

template <typename T, int THREADS>
__global__ void scatterNDK(mgk::ScatterNDParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::scatterNDBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void scatterElementsK(mgk::ScatterElementsParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::scatterElementsBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void groupNormK(mgk::GroupNormParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::groupNormBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void col2imK(mgk::Col2ImParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::col2imBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void lpPoolK(mgk::LpPoolParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::lpPoolBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void deformConvK(mgk::DeformConvParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::deformConvBlock<T, THREADS>(p, blockIdx.x, smem);
}

// The CPU runtime's scatterOne (k_tensor_index.cpp): floats combine in double, integers in int64.
template <typename T>
T combine(int red, T old, T v) {
  using C = typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type;
  C a = C(old), b = C(v);
  switch (red) {
    case mgk::kScatterAdd: return T(a + b);
    case mgk::kScatterMul: return T(a * b);
    case mgk::kScatterMax: return T(std::max(a, b));
    case mgk::kScatterMin: return T(std::min(a, b));
    default: return v;
  }
}

// ScatterND on data [6, 5, 4] with index pairs (slice 4), many repeated, one negative and one out
// of range (skipped).
template <typename T>
void scatterNDCase(int red, bool noSync) {
  std::mt19937 rng(11 + red);
  const std::vector<int64_t> dims = {6, 5, 4};
  const int64_t last = 2, slice = 4;
  std::vector<int64_t> idx = {0, 1, 2, 3, 0, 1, 5, 4, -6, 1, 0, 1, 2, 3, 9, 0, 0, 1};
  const int64_t tuples = int64_t(idx.size()) / last;
  std::vector<T> data(6 * 5 * 4), upd(tuples * slice);
  std::uniform_int_distribution<int> d(-4, 4);
  for (T& v : data) v = T(d(rng)) + (std::is_floating_point<T>::value ? T(0.37) : T(0));
  for (T& v : upd) v = T(d(rng)) + (std::is_floating_point<T>::value ? T(0.11) : T(0));
  std::vector<T> want = data;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    bool in = true;
    for (int j = 0; j < last; ++j) {
      int64_t k = idx[t * last + j];
      if (k < 0) k += dims[j];
      in = in && k >= 0 && k < dims[j];
      off += k * (j == 0 ? 20 : 4);
    }
    if (!in) continue;
    for (int64_t s = 0; s < slice; ++s) want[off + s] = combine(red, want[off + s], upd[t * slice + s]);
  }
  Dev<T> out(data);
  Dev<int64_t> di(idx);
  Dev<T> du(upd);
  mgk::ScatterNDParams p{};
  p.tuples = tuples, p.slice = slice, p.last = int32_t(last), p.rank = 3, p.reduction = red;
  p.indexBytes = 8;
  for (int d2 = 0; d2 < 3; ++d2) p.dims[d2] = dims[d2];
  p.strides[0] = 20, p.strides[1] = 4, p.strides[2] = 1;
  p.indices = di.get(), p.updates = du.get(), p.out = out.get();
  // THREADS 2 with blocks of 3: several blocks, and an idle thread per block.
  if (noSync)
    kt::launchNoSync(scatterNDK<T, 2>, mgk::scatterNDBlocks<T, 2>(p), 3, 0, p);
  else
    kt::launch(scatterNDK<T, 2>, mgk::scatterNDBlocks<T, 2>(p), 3, 0, p);
  EXPECT_EQ(out.host(), want) << "reduction " << red;
}

TEST(ScatterKernel, NDRepeatedIndicesEveryReductionFloat) {
  for (int red = 0; red <= 4; ++red) scatterNDCase<float>(red, red % 2 == 0);
}
TEST(ScatterKernel, NDRepeatedIndicesEveryReductionInt32) {
  for (int red = 0; red <= 4; ++red) scatterNDCase<int32_t>(red, red % 2 == 1);
}

// ScatterElements on data [4, 7] along axis 1 (and 0) with int32 indices, negative and repeated.
template <typename T>
void scatterElementsCase(int red, int axis) {
  std::mt19937 rng(5 + red + 10 * axis);
  const int64_t D0 = 4, D1 = 7, I0 = 3, I1 = 5;  // indices [3, 5]
  std::vector<T> data(D0 * D1), upd(I0 * I1);
  std::uniform_int_distribution<int> d(-3, 3);
  for (T& v : data) v = T(d(rng)) * T(1.5);
  for (T& v : upd) v = T(d(rng)) * T(0.75);
  const int64_t n = axis == 1 ? D1 : D0;
  std::uniform_int_distribution<int> di(int(-n), int(n - 1));
  std::vector<int32_t> idx(I0 * I1);
  for (int32_t& v : idx) v = di(rng) / 2;  // few distinct values: many duplicates
  std::vector<T> want = data;
  for (int64_t i = 0; i < I0; ++i)
    for (int64_t j = 0; j < I1; ++j) {
      int64_t k = idx[i * I1 + j];
      if (k < 0) k += n;
      const int64_t o = axis == 1 ? i * D1 + k : k * D1 + j;
      want[o] = combine(red, want[o], upd[i * I1 + j]);
    }
  Dev<T> out(data), du(upd);
  Dev<int32_t> dIdx(idx);
  mgk::ScatterElementsParams p{};
  p.lines = axis == 1 ? I0 : I1, p.rank = 2, p.axis = axis, p.reduction = red, p.indexBytes = 4;
  p.idxDims[0] = I0, p.idxDims[1] = I1, p.dims[0] = D0, p.dims[1] = D1;
  p.strides[0] = D1, p.strides[1] = 1;
  p.indices = dIdx.get(), p.updates = du.get(), p.out = out.get();
  kt::launchNoSync(scatterElementsK<T, 2>, mgk::scatterElementsBlocks<T, 2>(p), 2, 0, p);
  EXPECT_EQ(out.host(), want) << "reduction " << red << " axis " << axis;
}

TEST(ScatterKernel, ElementsRepeatedIndicesEveryReduction) {
  for (int axis = 0; axis < 2; ++axis)
    for (int red = 0; red <= 4; ++red) {
      scatterElementsCase<double>(red, axis);
      scatterElementsCase<int64_t>(red, axis);
    }
}

// GroupNormalization against the CPU's two-pass double loops.
template <int THREADS>
void groupNormCase(int64_t N, int64_t C, int64_t S, int64_t G, bool perChannel, int blockThreads) {
  std::mt19937 rng(unsigned(N * 131 + C * 7 + S + G));
  std::vector<float> x = kt::randomVec(size_t(N * C * S), rng, 995.f, 1005.f);  // far from zero
  const int64_t ns = perChannel ? C : G, per = C / G;
  std::vector<float> scale = kt::randomVec(size_t(ns), rng, 0.5f, 1.5f), bias = kt::randomVec(size_t(ns), rng);
  const double eps = 1e-5;
  std::vector<double> want(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t base = (n * C + g * per) * S, len = per * S;
      double s = 0, v = 0;
      for (int64_t i = 0; i < len; ++i) s += x[base + i];
      const double m = s / double(len);
      for (int64_t i = 0; i < len; ++i) v += (x[base + i] - m) * (x[base + i] - m);
      const double inv = 1 / std::sqrt(v / double(len) + eps);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t pi = perChannel ? g * per + i / S : g;
        want[base + i] = (x[base + i] - m) * inv * scale[pi] + bias[pi];
      }
    }
  Dev<float> dx(x), ds(scale), db(bias), dy(x.size());
  mgk::GroupNormParams p{};
  p.rows = N * G, p.groups = G, p.per = per, p.spatial = S, p.perChannel = perChannel, p.epsilon = eps;
  p.x = dx.get(), p.scale = ds.get(), p.bias = db.get(), p.y = dy.get();
  kt::launch(groupNormK<float, THREADS>, mgk::groupNormBlocks<float, THREADS>(p), blockThreads,
             mgk::groupNormSmemBytes<float, THREADS>(), p);
  EXPECT_TRUE(kt::near(dy.host(), want, 1e-4, 1e-5));
}

TEST(GroupNormKernel, PerGroupAndPerChannelScale) {
  groupNormCase<64>(2, 6, 9, 3, false, 64);
  groupNormCase<64>(2, 6, 9, 3, true, 200);     // a block larger than THREADS, idle threads
  groupNormCase<256>(1, 4, 300, 1, true, 320);  // rows longer than the block
  groupNormCase<32>(3, 8, 5, 8, true, 32);      // a group per channel
}

// Col2Im as the CPU writes it: scatter every column value into the image, in double.
TEST(WindowKernel, Col2ImMatchesScatterLoops) {
  struct G {
    std::vector<int64_t> image, block, stride, pad, dil;
  };
  const G cases[] = {{{5, 5}, {1, 5}, {1, 1}, {0, 2}, {1, 1}},
                     {{6, 7}, {2, 3}, {2, 1}, {1, 1}, {1, 2}},
                     {{4, 5, 3}, {2, 2, 2}, {1, 2, 1}, {0, 1, 1}, {2, 1, 1}}};
  for (const G& c : cases) {
    const int nsp = int(c.image.size());
    std::vector<int64_t> out(nsp);
    int64_t kSize = 1, blocks = 1, im = 1;
    for (int d = 0; d < nsp; ++d) {
      out[d] = (c.image[d] + 2 * c.pad[d] - ((c.block[d] - 1) * c.dil[d] + 1)) / c.stride[d] + 1;
      kSize *= c.block[d], blocks *= out[d], im *= c.image[d];
    }
    const int64_t NC = 3;
    std::mt19937 rng(unsigned(kSize + blocks));
    std::vector<float> x = kt::randomVec(size_t(NC * kSize * blocks), rng);
    std::vector<double> want(size_t(NC * im), 0.0);
    for (int64_t nc = 0; nc < NC; ++nc)
      for (int64_t kk = 0; kk < kSize; ++kk)
        for (int64_t l = 0; l < blocks; ++l) {
          int64_t off = 0, kr = kk, lr = l;
          bool in = true;
          std::vector<int64_t> kc(nsp), bc(nsp);
          for (int d = nsp - 1; d >= 0; --d) kc[d] = kr % c.block[d], kr /= c.block[d], bc[d] = lr % out[d], lr /= out[d];
          for (int d = 0; d < nsp; ++d) {
            const int64_t q = bc[d] * c.stride[d] - c.pad[d] + kc[d] * c.dil[d];
            in = in && q >= 0 && q < c.image[d];
            off = off * c.image[d] + q;
          }
          if (in) want[nc * im + off] += x[(nc * kSize + kk) * blocks + l];
        }
    for (double& v : want) v = float(v);  // the kernel stores float(sum in double)
    Dev<float> dx(x), dy(size_t(NC * im));
    mgk::Col2ImParams p{};
    p.NC = NC, p.g.nsp = nsp, p.x = dx.get(), p.y = dy.get();
    for (int d = 0; d < nsp; ++d) {
      p.g.in[d] = c.image[d], p.g.out[d] = out[d], p.g.kernel[d] = c.block[d];
      p.g.stride[d] = c.stride[d], p.g.padBegin[d] = c.pad[d], p.g.dilation[d] = c.dil[d];
    }
    kt::launchNoSync(col2imK<float, 64>, mgk::col2imBlocks<float, 64>(p), 64, 0, p);
    EXPECT_TRUE(kt::near(dy.host(), want, 0, 0)) << "nsp " << nsp;  // same order: equal
  }
}

TEST(WindowKernel, LpPoolDilationsAndPads) {
  // x [1, 2, 7, 6], kernel 2x3, strides 2x1, pads (1, 0), dilations (2, 1), p = 3; the output
  // extents include a ceil-mode window that starts inside the input and runs past it.
  const int64_t C = 2, H = 7, W = 6, kh = 2, kw = 3, sh = 2, sw = 1, ph = 1, pw = 0, dh = 2, dw = 1;
  const int64_t OH = 4, OW = 4;
  std::mt19937 rng(3);
  std::vector<float> x = kt::randomVec(size_t(C * H * W), rng, -2.f, 2.f);
  for (int64_t p : {1, 2, 3}) {
    std::vector<double> want;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = 0;
          for (int64_t r = 0; r < kh; ++r)
            for (int64_t q = 0; q < kw; ++q) {
              const int64_t ih = oh * sh - ph + r * dh, iw = ow * sw - pw + q * dw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) s += std::pow(std::fabs(double(x[(c * H + ih) * W + iw])), double(p));
            }
          want.push_back(float(std::pow(s, 1.0 / double(p))));
        }
    Dev<float> dx(x), dy(want.size());
    mgk::LpPoolParams prm{};
    prm.NC = C, prm.p = p, prm.g.nsp = 2, prm.x = dx.get(), prm.y = dy.get();
    const int64_t in[] = {H, W}, out[] = {OH, OW}, k[] = {kh, kw}, st[] = {sh, sw}, pd[] = {ph, pw}, dl[] = {dh, dw};
    for (int d = 0; d < 2; ++d) {
      prm.g.in[d] = in[d], prm.g.out[d] = out[d], prm.g.kernel[d] = k[d];
      prm.g.stride[d] = st[d], prm.g.padBegin[d] = pd[d], prm.g.dilation[d] = dl[d];
    }
    kt::launch(lpPoolK<float, 16>, mgk::lpPoolBlocks<float, 16>(prm), 20, 0, prm);
    EXPECT_TRUE(kt::near(dy.host(), want, 1e-6, 1e-6)) << "p " << p;
  }
}

// DeformConv with groups, offset groups, a mask and bias against runtime/cpu's loops.
TEST(WindowKernel, DeformConvGroupsMaskBias) {
  const int64_t N = 2, C = 4, H = 5, W = 6, M = 4, kH = 2, kW = 3, group = 2, og = 2;
  const int64_t sh = 1, sw = 2, ph = 1, pw = 1, dh = 2, dw = 1;
  const int64_t oH = (H + 2 * ph - ((kH - 1) * dh + 1)) / sh + 1, oW = (W + 2 * pw - ((kW - 1) * dw + 1)) / sw + 1;
  const int64_t cg = C / group, kSize = kH * kW, oSize = oH * oW;
  std::mt19937 rng(9);
  std::vector<float> x = kt::randomVec(size_t(N * C * H * W), rng), w = kt::randomVec(size_t(M * cg * kSize), rng);
  std::vector<float> off = kt::randomVec(size_t(N * og * kSize * 2 * oSize), rng, -1.5f, 1.5f);
  std::vector<float> mask = kt::randomVec(size_t(N * og * kSize * oSize), rng, 0.f, 1.f);
  std::vector<float> bias = kt::randomVec(size_t(M), rng);
  auto sample = [&](const float* plane, double h, double wv) {
    if (h <= -1 || h >= H || wv <= -1 || wv >= W) return 0.0;
    const int64_t h0 = int64_t(std::floor(h)), w0 = int64_t(std::floor(wv));
    const double lh = h - h0, lw = wv - w0;
    auto at = [&](int64_t i, int64_t j) { return i >= 0 && i < H && j >= 0 && j < W ? double(plane[i * W + j]) : 0.0; };
    return (1 - lh) * (1 - lw) * at(h0, w0) + (1 - lh) * lw * at(h0, w0 + 1) + lh * (1 - lw) * at(h0 + 1, w0) +
           lh * lw * at(h0 + 1, w0 + 1);
  };
  std::vector<double> want;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) {
          double acc = bias[m];
          const int64_t gi = m / (M / group), pos = oh * oW + ow;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t c = gi * cg + ci, o = c / (C / og);
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < kW; ++kw) {
                const int64_t k = kh * kW + kw;
                const double h = off[((n * og + o) * kSize * 2 + 2 * k) * oSize + pos] + double(oh * sh - ph + kh * dh);
                const double wv = off[((n * og + o) * kSize * 2 + 2 * k + 1) * oSize + pos] + double(ow * sw - pw + kw * dw);
                double v = sample(&x[(n * C + c) * H * W], h, wv) * mask[((n * og + o) * kSize + k) * oSize + pos];
                acc += v * w[(m * cg + ci) * kSize + k];
              }
          }
          want.push_back(acc);
        }
  Dev<float> dx(x), dw2(w), doff(off), dm(mask), db(bias), dy(want.size());
  mgk::DeformConvParams p{};
  p.N = N, p.C = C, p.H = H, p.W = W, p.M = M, p.kH = kH, p.kW = kW, p.group = group, p.offsetGroups = og;
  p.oH = oH, p.oW = oW, p.strideH = sh, p.strideW = sw, p.padTop = ph, p.padLeft = pw, p.dilationH = dh, p.dilationW = dw;
  p.x = dx.get(), p.w = dw2.get(), p.offset = doff.get(), p.bias = db.get(), p.mask = dm.get(), p.y = dy.get();
  kt::launchNoSync(deformConvK<float, 32>, mgk::deformConvBlocks<float, 32>(p), 40, 0, p);
  EXPECT_TRUE(kt::near(dy.host(), want, 1e-5, 1e-5));
}

// Resize's table walk: a 2 x 3 -> 3 x 2 linear resize with hand-made taps (the generator's
// tables come from mgrt::resizePlan; tests/opset checks those end to end), and one output
// coordinate outside (no taps: the extrapolation value).
struct ResizeF {
  const int32_t* f0;
  const int64_t* o0;
  const double* w0;
  const int32_t* f1;
  const int64_t* o1;
  const double* w1;
  MG_DEVICE void operator()(const void* const* in, const int64_t*, void* out, int64_t o) const {
    const mgk::ResizeAxisTable ax[2] = {{f0, o0, w0, 3}, {f1, o1, w1, 2}};
    mgk::resizeElement<float, 2, false>(static_cast<const float*>(in[0]), static_cast<float*>(out), o, ax, -7.0);
  }
};
template <int I, int T>
__global__ void resizeMapK(mgk::MapParams p, ResizeF f) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::mapBlock<ResizeF, I, T>(p, blockIdx.x, smem, f);
}

TEST(ResizeKernel, TablesSumInOdometerOrder) {
  const std::vector<float> x = {1, 2, 4, 8, 16, 32};  // [2, 3]
  // Axis 0 (in 2, out 3): c0 -> row 0; c1 -> 0.25 row 0 + 0.75 row 1; c2 -> outside.
  const std::vector<int32_t> f0 = {0, 1, 3, 3};
  const std::vector<int64_t> o0 = {0, 0, 3};
  const std::vector<double> w0 = {1, 0.25, 0.75};
  // Axis 1 (in 3, out 2): c0 -> 0.5 col 0 + 0.5 col 1; c1 -> col 2.
  const std::vector<int32_t> f1 = {0, 2, 3};
  const std::vector<int64_t> o1 = {0, 1, 2};
  const std::vector<double> w1 = {0.5, 0.5, 1};
  Dev<float> dx(x), dy(6);
  Dev<int32_t> df0(f0), df1(f1);
  Dev<int64_t> do0(o0), do1(o1);
  Dev<double> dw0(w0), dw1(w1);
  mgk::MapParams p{};
  p.n = 6, p.rank = 1, p.nin = 1, p.dims[0] = 6, p.in[0] = dx.get(), p.out = dy.get(), p.outStrides[0] = 1;
  ResizeF f{df0.get(), do0.get(), dw0.get(), df1.get(), do1.get(), dw1.get()};
  kt::launchNoSync(resizeMapK<1, 4>, 2, 4, 0, p, f);
  const std::vector<float> want = {1.5f, 4.f, 0.25f * 1.5f + 0.75f * 12.f, 0.25f * 4 + 0.75f * 32, -7.f, -7.f};
  EXPECT_EQ(dy.host(), want);
}

// The conversions bit for bit against runtime/cpu's (k_elementwise_impl.h).
TEST(TypedHelpers, HalfAndBFloat16MatchTheCpuRuntime) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = mgk::halfToFloat(uint16_t(h)), b = mgrt::ew::halfToFloat(uint16_t(h));
    ASSERT_EQ(std::memcmp(&a, &b, 4), 0) << "half " << h;
    const float c = mgk::bf16ToFloat(uint16_t(h)), d = mgrt::ew::bf16ToFloat(uint16_t(h));
    ASSERT_EQ(std::memcmp(&c, &d, 4), 0) << "bf16 " << h;
  }
  // Every 4099th float bit pattern (all exponents, many mantissas), plus the rounding edges.
  std::vector<uint32_t> bits = {0x33000000u, 0x33000001u, 0x38800000u, 0x387fffffu, 0x477fefffu,
                                0x477ff000u, 0x7f800000u, 0x7fc00000u, 0xff800001u, 0x3f801000u,
                                0x3f803000u, 0x3f800fffu};
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 4099) bits.push_back(uint32_t(b));
  for (uint32_t b : bits) {
    float v;
    std::memcpy(&v, &b, 4);
    ASSERT_EQ(mgk::floatToHalf(v), mgrt::ew::floatToHalf(v)) << std::hex << b;
    ASSERT_EQ(mgk::floatToBf16(v), mgrt::ew::floatToBf16(v)) << std::hex << b;
  }
}

TEST(TypedHelpers, ConvertSaturatesAsTheCpuRuntime) {
  const float vals[] = {0.f, -0.7f, 0.7f, 127.9f, 128.f, -129.f, 3e9f, -3e9f, 1e20f, -1e20f,
                        9.2233720e18f, 1.8446744e19f, INFINITY, -INFINITY, NAN};
  for (float v : vals) {
    EXPECT_EQ(mgk::convertTo<int8_t>(v), mgrt::ew::convert<int8_t>(v)) << v;
    EXPECT_EQ(mgk::convertTo<uint8_t>(v), mgrt::ew::convert<uint8_t>(v)) << v;
    EXPECT_EQ(mgk::convertTo<int32_t>(v), mgrt::ew::convert<int32_t>(v)) << v;
    EXPECT_EQ(mgk::convertTo<uint32_t>(v), mgrt::ew::convert<uint32_t>(v)) << v;
    EXPECT_EQ(mgk::convertTo<int64_t>(v), mgrt::ew::convert<int64_t>(v)) << v;
    EXPECT_EQ(mgk::convertTo<uint64_t>(v), mgrt::ew::convert<uint64_t>(v)) << v;
    EXPECT_EQ(mgk::convertTo<int64_t>(double(v)), mgrt::ew::convert<int64_t>(double(v))) << v;
    EXPECT_EQ(mgk::convertTo<mgk::Bool>(v).v, mgrt::ew::convert<bool>(v) ? 1 : 0) << v;
    EXPECT_EQ(mgk::convertTo<mgk::Half>(v).bits, mgrt::ew::floatToHalf(v)) << v;
  }
  EXPECT_EQ(mgk::storeRounded<int32_t>(2.5), 2);  // nearbyint: half to even
  EXPECT_EQ(mgk::storeRounded<int32_t>(-3.5), -4);
  EXPECT_EQ(mgk::storeRounded<uint8_t>(NAN), 0);
  EXPECT_EQ(mgk::storeRounded<float>(0.1), 0.1f);
}

TEST(TypedHelpers, ReduceTypedWrapsAndBool) {
  const int8_t x[] = {100, 100, -3, 7};
  const int64_t dims[] = {4}, strides[] = {1};
  EXPECT_EQ((mgk::reduceTyped<int8_t, mgk::kRedSum>(x, 1, dims, strides, 4)), int8_t(204));  // wraps
  EXPECT_EQ((mgk::reduceTyped<int8_t, mgk::kRedMean>(x, 1, dims, strides, 4)), int8_t(int8_t(204) / 4));
  EXPECT_EQ((mgk::reduceTyped<int8_t, mgk::kRedMax>(x, 1, dims, strides, 4)), 100);
  EXPECT_EQ((mgk::reduceTyped<int8_t, mgk::kRedMin>(x, 1, dims, strides, 0)), 127);  // empty
  EXPECT_EQ((mgk::reduceTyped<int8_t, mgk::kRedL1>(x, 1, dims, strides, 4)), int8_t(210));
  const uint8_t b[] = {0, 1, 0, 0, 0, 0};
  const int64_t bd[] = {2, 3}, bs[] = {3, 1};
  EXPECT_EQ((mgk::reduceTyped<uint8_t, mgk::kRedMax>(b, 2, bd, bs, 6)), 1);  // any
  EXPECT_EQ((mgk::reduceTyped<uint8_t, mgk::kRedMin>(b, 2, bd, bs, 6)), 0);  // all
  const double d[] = {1000, 1000.5, NAN};
  EXPECT_DOUBLE_EQ((mgk::reduceTyped<double, mgk::kRedLogSumExp>(d, 1, dims, strides, 2)),
                   1000.5 + std::log(std::exp(-0.5) + 1));
  EXPECT_TRUE(std::isnan(mgk::reduceTyped<double, mgk::kRedMax>(d, 1, dims, strides, 3)));
}

}  // namespace
