// The direct N-D programs of runtime/gpu/kernels/mg_conv_nd.cuh on the CPU emulation: Conv over 1 to
// 3 spatial dims (groups, strides, pads, dilations, bias, residual, activation; float and double),
// ConvTranspose over 1 to 3 spatial dims (groups, strides, pads, dilations, output padding, bias)
// and MaxPool / AveragePool over 3 spatial dims (dilations, ceil-mode windows, count_include_pad),
// against plain loops in double written from the ONNX definitions (ConvTranspose in the scatter
// form). Every case runs under mgLaunchNoSync and under the strict barrier check with blocks
// larger than THREADS (including sizes that are not multiples of a warp).
#include <algorithm>
#include <cfloat>
#include <functional>

#include "kernels_test_util.h"

namespace {

using kt::Dev;

template <typename T, int THREADS>
__global__ void convNdK(mgk::ConvNdParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::convNdBlock<T, THREADS>(p, blockIdx.x, smem);
}
template <typename T, int THREADS>
__global__ void poolNdK(mgk::PoolNdParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::poolNdBlock<T, THREADS>(p, blockIdx.x, smem);
}

struct Geo {
  std::vector<int64_t> in, kernel, stride, padBegin, padEnd, dilation;
  std::vector<int64_t> outPad;  // ConvTranspose
};

int64_t prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::vector<int64_t> unravel(int64_t e, const std::vector<int64_t>& dims) {
  std::vector<int64_t> c(dims.size());
  for (int d = int(dims.size()) - 1; d >= 0; --d) c[d] = e % dims[d], e /= dims[d];
  return c;
}

// Flat index of c over dims, or -1 when outside.
int64_t ravel(const std::vector<int64_t>& c, const std::vector<int64_t>& dims) {
  int64_t o = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (c[d] < 0 || c[d] >= dims[d]) return -1;
    o = o * dims[d] + c[d];
  }
  return o;
}

void fillGeometry(mgk::WindowGeometry& g, const Geo& c, const std::vector<int64_t>& out) {
  g.nsp = int32_t(c.in.size());
  for (size_t d = 0; d < c.in.size(); ++d) {
    g.in[d] = c.in[d], g.out[d] = out[d], g.kernel[d] = c.kernel[d];
    g.stride[d] = c.stride[d], g.padBegin[d] = c.padBegin[d], g.dilation[d] = c.dilation[d];
  }
}

// Runs the program three ways: NoSync with THREADS, strict with THREADS + 37, strict with 200+.
template <typename P>
void runAll(void (*k)(P), int64_t blocks, int threads, const P& p, const std::function<void()>& check) {
  kt::launchNoSync(k, blocks, threads, 0, p);
  check();
  kt::launch(k, blocks, threads + 37, 0, p);
  check();
  kt::launch(k, blocks, std::max(200, threads * 2 + 8), 0, p);
  check();
}

template <typename T>
std::vector<T> randomT(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (T& x : v) x = T(d(rng));
  return v;
}

template <typename T>
::testing::AssertionResult closeTo(const std::vector<T>& got, const std::vector<double>& want) {
  std::vector<float> g(got.begin(), got.end());
  return kt::near(g, want, 1e-5, 1e-5);
}

// Conv as ONNX defines it, in double.
template <typename T>
void convCase(const Geo& c, int64_t N, int64_t C, int64_t M, int64_t group, bool bias, bool residual, int act,
              float alpha, float beta) {
  const int nsp = int(c.in.size());
  std::vector<int64_t> out(nsp), wdims{M, C / group};
  for (int d = 0; d < nsp; ++d) {
    out[d] = (c.in[d] + c.padBegin[d] + c.padEnd[d] - ((c.kernel[d] - 1) * c.dilation[d] + 1)) / c.stride[d] + 1;
    wdims.push_back(c.kernel[d]);
  }
  const int64_t inSize = prod(c.in), outSize = prod(out), kSize = prod(c.kernel), cg = C / group, mg = M / group;
  std::mt19937 rng(unsigned(N * 131 + C * 17 + M + nsp));
  std::vector<T> x = randomT<T>(size_t(N * C * inSize), rng), w = randomT<T>(size_t(M * cg * kSize), rng);
  std::vector<T> b = randomT<T>(size_t(M), rng), r = randomT<T>(size_t(N * M * outSize), rng);
  std::vector<double> want(size_t(N * M * outSize));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o = 0; o < outSize; ++o) {
        const std::vector<int64_t> oc = unravel(o, out);
        const int64_t gi = m / mg;
        double acc = bias ? double(b[m]) : 0.0;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kk = 0; kk < kSize; ++kk) {
            std::vector<int64_t> kc = unravel(kk, c.kernel), pos(nsp);
            for (int d = 0; d < nsp; ++d) pos[d] = oc[d] * c.stride[d] - c.padBegin[d] + kc[d] * c.dilation[d];
            const int64_t i = ravel(pos, c.in);
            if (i >= 0) acc += double(x[(n * C + gi * cg + ci) * inSize + i]) * double(w[(m * cg + ci) * kSize + kk]);
          }
        const int64_t e = (n * M + m) * outSize + o;
        if (residual) acc += double(r[e]);
        want[e] = act ? kt::act(act, acc, alpha, beta) : acc;
      }
  Dev<T> dx(x), dw(w), db(b), dr(r), dy(want.size());
  mgk::ConvNdParams p{};
  p.N = N, p.C = C, p.M = M, p.group = group, p.transposed = 0;
  fillGeometry(p.g, c, out);
  p.x = dx.get(), p.w = dw.get(), p.bias = bias ? db.get() : nullptr, p.residual = residual ? dr.get() : nullptr;
  p.y = dy.get(), p.act = act, p.actAlpha = alpha, p.actBeta = beta;
  runAll(convNdK<T, 64>, mgk::convNdBlocks<T, 64>(p), 64, p, [&] {
    EXPECT_TRUE(closeTo(dy.host(), want)) << "Conv nsp " << nsp << " group " << group;
  });
}

// ConvTranspose as ONNX defines it: every input pixel scatters x * w over its window, in double.
template <typename T>
void convTransposeCase(const Geo& c, int64_t N, int64_t C, int64_t M, int64_t group, bool bias) {
  const int nsp = int(c.in.size());
  std::vector<int64_t> out(nsp);
  for (int d = 0; d < nsp; ++d)
    out[d] = c.stride[d] * (c.in[d] - 1) + c.outPad[d] + (c.kernel[d] - 1) * c.dilation[d] + 1 - c.padBegin[d] -
             c.padEnd[d];
  const int64_t inSize = prod(c.in), outSize = prod(out), kSize = prod(c.kernel), cg = C / group, mg = M / group;
  std::mt19937 rng(unsigned(N * 7 + C * 5 + M * 3 + nsp));
  std::vector<T> x = randomT<T>(size_t(N * C * inSize), rng), w = randomT<T>(size_t(C * mg * kSize), rng);
  std::vector<T> b = randomT<T>(size_t(M), rng);
  std::vector<double> want(size_t(N * M * outSize), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o = 0; o < outSize; ++o) want[(n * M + m) * outSize + o] = bias ? double(b[m]) : 0.0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch) {
      const int64_t gi = ch / cg;
      for (int64_t i = 0; i < inSize; ++i) {
        const std::vector<int64_t> ic = unravel(i, c.in);
        for (int64_t kk = 0; kk < kSize; ++kk) {
          std::vector<int64_t> kc = unravel(kk, c.kernel), pos(nsp);
          for (int d = 0; d < nsp; ++d) pos[d] = ic[d] * c.stride[d] - c.padBegin[d] + kc[d] * c.dilation[d];
          const int64_t o = ravel(pos, out);
          if (o < 0) continue;
          for (int64_t ml = 0; ml < mg; ++ml)
            want[(n * M + gi * mg + ml) * outSize + o] +=
                double(x[(n * C + ch) * inSize + i]) * double(w[(ch * mg + ml) * kSize + kk]);
        }
      }
    }
  Dev<T> dx(x), dw(w), db(b), dy(want.size());
  mgk::ConvNdParams p{};
  p.N = N, p.C = C, p.M = M, p.group = group, p.transposed = 1;
  fillGeometry(p.g, c, out);
  p.x = dx.get(), p.w = dw.get(), p.bias = bias ? db.get() : nullptr, p.residual = nullptr;
  p.y = dy.get(), p.act = mgk::kActNone;
  runAll(convNdK<T, 32>, mgk::convNdBlocks<T, 32>(p), 32, p, [&] {
    EXPECT_TRUE(closeTo(dy.host(), want)) << "ConvTranspose nsp " << nsp << " group " << group;
  });
}

// Pools as runtime/cpu/k_nn_pool.cpp defines them (ceil mode: the caller gives the output extents).
void poolCase(const Geo& c, const std::vector<int64_t>& out, int64_t NC, bool isMax, bool includePad) {
  const int nsp = int(c.in.size());
  const int64_t inSize = prod(c.in), outSize = prod(out), kSize = prod(c.kernel);
  std::mt19937 rng(unsigned(NC + outSize));
  std::vector<float> x = kt::randomVec(size_t(NC * inSize), rng, -3.f, 3.f);
  std::vector<double> want;
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t o = 0; o < outSize; ++o) {
      const std::vector<int64_t> oc = unravel(o, out);
      double best = -DBL_MAX, sum = 0;
      bool have = false;
      int64_t cnt = 0, cntPad = 0;
      for (int64_t kk = 0; kk < kSize; ++kk) {
        std::vector<int64_t> kc = unravel(kk, c.kernel), pos(nsp);
        bool padded = true;
        for (int d = 0; d < nsp; ++d) {
          pos[d] = oc[d] * c.stride[d] - c.padBegin[d] + kc[d] * c.dilation[d];
          padded = padded && pos[d] >= -c.padBegin[d] && pos[d] < c.in[d] + c.padEnd[d];
        }
        if (padded) ++cntPad;
        const int64_t i = ravel(pos, c.in);
        if (i < 0) continue;
        const double v = x[nc * inSize + i];
        ++cnt, sum += v;
        if (!have || v > best) best = v, have = true;
      }
      const int64_t div = includePad ? cntPad : cnt;
      want.push_back(isMax ? (have ? best : double(-FLT_MAX)) : float(div > 0 ? sum / double(div) : 0.0));
    }
  Dev<float> dx(x), dy(want.size());
  mgk::PoolNdParams p{};
  p.NC = NC, p.isMax = isMax, p.countIncludePad = includePad;
  fillGeometry(p.g, c, out);
  for (int d = 0; d < nsp; ++d) p.padEnd[d] = c.padEnd[d];
  p.x = dx.get(), p.y = dy.get();
  runAll(poolNdK<float, 64>, mgk::poolNdBlocks<float, 64>(p), 64, p, [&] {
    EXPECT_TRUE(kt::near(dy.host(), want, 1e-6, 1e-6)) << (isMax ? "MaxPool" : "AveragePool") << " nsp " << nsp;
  });
}

}  // namespace

TEST(ConvNdKernel, Conv3dGroupsStridesPadsDilations) {
  // in, kernel, stride, padBegin, padEnd, dilation
  convCase<float>({{5, 6, 4}, {3, 2, 3}, {2, 1, 1}, {1, 0, 1}, {1, 1, 0}, {1, 2, 1}, {}}, 2, 4, 6, 2, true, true,
                  mgk::kActRelu, 0.f, 0.f);
  convCase<float>({{4, 4, 5}, {2, 2, 2}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {}}, 1, 3, 5, 1, false, false,
                  mgk::kActNone, 0.f, 0.f);
  convCase<float>({{3, 5, 5}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {}}, 1, 6, 6, 6, true, false,
                  mgk::kActClip, -0.2f, 0.3f);  // depthwise 3-D
  convCase<float>({{2, 3, 2, 3}, {2, 2, 1, 2}, {1, 1, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 1}, {1, 1, 1, 1}, {}}, 1, 2, 4,
                  2, true, true, mgk::kActLeakyRelu, 0.1f, 0.f);  // 4-D
}

TEST(ConvNdKernel, ConvDouble1d2d) {
  convCase<double>({{9}, {3}, {2}, {1}, {2}, {2}, {}}, 2, 4, 4, 2, true, false, mgk::kActNone, 0.f, 0.f);
  convCase<double>({{5, 6}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, {1, 1}, {}}, 1, 3, 2, 1, true, true, mgk::kActNone, 0.f,
                   0.f);
}

TEST(ConvNdKernel, ConvTranspose1d2d3d) {
  // in, kernel, stride, padBegin, padEnd, dilation, output_padding
  convTransposeCase<float>({{5}, {3}, {2}, {1}, {0}, {1}, {1}}, 2, 4, 6, 2, true);
  convTransposeCase<float>({{3, 4}, {3, 2}, {3, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 1}}, 1, 2, 3, 1, false);
  convTransposeCase<float>({{3, 3}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, {2, 2}, {0, 0}}, 2, 3, 3, 3, true);
  convTransposeCase<float>({{2, 3, 2}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1}, {1, 0, 0}, {1, 1, 2}, {1, 0, 1}}, 1, 4, 4, 2,
                           true);
  convTransposeCase<double>({{4, 3}, {2, 2}, {2, 2}, {1, 0}, {0, 1}, {1, 1}, {0, 1}}, 2, 2, 4, 2, true);
}

TEST(ConvNdKernel, Pools3d) {
  // in, kernel, stride, padBegin, padEnd, dilation; outputs as k_nn_shapes.h gives them:
  // a with ceil_mode (dim 0: floor 3, ceil 4, the last window starts at 5 < in + padBegin = 6).
  const Geo a{{5, 6, 4}, {2, 3, 2}, {2, 2, 1}, {1, 1, 0}, {1, 0, 1}, {1, 1, 2}, {}};
  poolCase(a, {4, 3, 3}, 3, true, false);
  poolCase(a, {4, 3, 3}, 3, false, false);
  poolCase(a, {4, 3, 3}, 3, false, true);
  poolCase(a, {3, 3, 3}, 3, false, true);  // the same without ceil_mode
  // b with ceil_mode: dims 1 and 2 get a last window at 4 that runs past the input (no end
  // padding), where count_include_pad's divisor is cut.
  const Geo b{{5, 5, 5}, {2, 2, 2}, {2, 2, 2}, {1, 0, 0}, {0, 0, 0}, {1, 1, 1}, {}};
  poolCase(b, {3, 3, 3}, 2, false, true);
  poolCase(b, {3, 3, 3}, 2, true, false);
}
