// The fast quantization kernels against the ONNX formulas written here. QuantizeLinear and
// DequantizeLinear per tensor (runtime/cpu/f_quant.cpp): every byte of the formula's result
// (runtime/common/mg_quant.h) on lengths with vector tails, exact ties, saturation, NaN and
// infinities, uint8 and int8, with and without a zero point.
// The VNNI QLinearConv kernel (runtime/cpu/f_qconv.cpp) against QLinearConv's formula written here
// in plain loops (int64 sums, the float32 requantization of the ONNX document as onnxruntime
// computes it): byte-exact on odd shapes (channel and pixel counts off the 8 x 48 tile, strides 1, 2
// and 3, dilation, asymmetric padding, 1x1 and 1-D layers), int8 and uint8 activations, uint8
// weights at zero point 128, per-tensor and per-channel scales, with and without a bias, weights
// packed per call and once into a step state, on 1 and 2 threads. Cases the kernel leaves to the
// reference (groups other than depthwise, weight zero points other than 0/128) must give the same
// bytes too; depthwise layers (f_qconv_dw.cpp) are checked on their own odd shapes. In the
// baseline build (no VNNI) every case runs the reference kernel through the fast entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "f_gemm.h"
#include "mg_kernels.h"
#include "mg_quant.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

namespace {

using mgrt::Tensor;

struct QCase {
  int64_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
  bool s8x, u8w, s8y, perChannel, bias;
  int wzp;  // the weights' zero point (0 for int8, 128 for uint8 is the fast case)
  bool oneD = false;
};

template <typename T>
Tensor tensorOf(std::vector<T>& v, std::vector<int64_t> dims, int32_t dtype) {
  Tensor t;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
  t.data = v.data();
  t.dtype = dtype;
  return t;
}

void checkCase(const QCase& q, mgrt::ThreadPool* pool, std::mt19937& rng) {
  const int64_t cg = q.c / q.group, mg = q.m / q.group;
  const int64_t oh = q.oneD ? 1 : (q.h + q.pt + q.pb - (q.kh - 1) * q.dh - 1) / q.sh + 1;
  const int64_t ow = (q.w + q.pl + q.pr - (q.kw - 1) * q.dw - 1) / q.sw + 1;
  const int64_t h = q.oneD ? 1 : q.h;
  std::uniform_int_distribution<int> byte(0, 255), small(-3, 3);
  std::vector<uint8_t> x(q.n * q.c * h * q.w), w(q.m * cg * q.kh * q.kw);
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  const int xzp = q.s8x ? small(rng) * 20 : 100 + small(rng) * 30;  // int8: -60..60, uint8: 10..190
  const int yzp = q.s8y ? -5 : 7;
  std::vector<float> xs = {0.02f}, ys = {0.75f + 0.01f * small(rng)};
  std::vector<float> ws(q.perChannel ? q.m : 1);
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = 0.004f * (1 + i % 5) + 0.0007f * small(rng);
  std::vector<uint8_t> xz = {static_cast<uint8_t>(xzp)}, yz = {static_cast<uint8_t>(yzp)};
  std::vector<uint8_t> wz(ws.size(), static_cast<uint8_t>(q.wzp));
  std::vector<int32_t> bias(q.m);
  for (auto& b : bias) b = small(rng) * 4000;
  auto xAt = [&](int64_t i) { return q.s8x ? int(static_cast<int8_t>(x[i])) : int(x[i]); };
  auto wAt = [&](int64_t i) { return q.u8w ? int(w[i]) : int(static_cast<int8_t>(w[i])); };
  const int32_t xT = q.s8x ? mgrt::kI8 : mgrt::kU8, wT = q.u8w ? mgrt::kU8 : mgrt::kI8, yT = q.s8y ? mgrt::kI8 : mgrt::kU8;

  // Expected bytes.
  const int32_t lo = q.s8y ? -128 : 0, hi = q.s8y ? 127 : 255;
  std::vector<uint8_t> want(q.n * q.m * oh * ow);
  const int wzpv = q.u8w ? q.wzp : int(static_cast<int8_t>(q.wzp));
  for (int64_t n = 0; n < q.n; ++n)
    for (int64_t m = 0; m < q.m; ++m) {
      const int64_t gi = m / mg;
      const float mult = xs[0] * ws[q.perChannel ? m : 0] / ys[0];
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t s = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < q.kh; ++ky)
              for (int64_t kx = 0; kx < q.kw; ++kx) {
                const int64_t iy = q.oneD ? 0 : oy * q.sh - q.pt + ky * q.dh, ix = ox * q.sw - q.pl + kx * q.dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= q.w) continue;
                const int64_t xi = ((n * q.c + gi * cg + c) * h + iy) * q.w + ix;
                const int64_t wi = ((m * cg + c) * q.kh + ky) * q.kw + kx;
                s += int64_t(xAt(xi) - xzp) * (wAt(wi) - wzpv);
              }
          const int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(s) + static_cast<uint32_t>(q.bias ? bias[m] : 0));
          const int32_t v = mgrt::quant::saturateAdd(mgrt::quant::roundHalfEven(static_cast<float>(acc) * mult), yzp, lo, hi);
          want[((n * q.m + m) * oh + oy) * ow + ox] = static_cast<uint8_t>(v);
        }
    }

  std::vector<int64_t> xd = q.oneD ? std::vector<int64_t>{q.n, q.c, q.w} : std::vector<int64_t>{q.n, q.c, q.h, q.w};
  std::vector<int64_t> wd = q.oneD ? std::vector<int64_t>{q.m, cg, q.kw} : std::vector<int64_t>{q.m, cg, q.kh, q.kw};
  std::vector<int64_t> yd = q.oneD ? std::vector<int64_t>{q.n, q.m, ow} : std::vector<int64_t>{q.n, q.m, oh, ow};
  std::vector<int64_t> sd = q.perChannel ? std::vector<int64_t>{q.m} : std::vector<int64_t>{};
  std::vector<Tensor> in = {tensorOf(x, xd, xT),  tensorOf(xs, {}, mgrt::kF32), tensorOf(xz, {}, xT),
                            tensorOf(w, wd, wT),  tensorOf(ws, sd, mgrt::kF32), tensorOf(wz, sd, wT),
                            tensorOf(ys, {}, mgrt::kF32), tensorOf(yz, {}, yT)};
  if (q.bias) in.push_back(tensorOf(bias, {q.m}, mgrt::kI32));
  std::string attrs = q.oneD ? "strides=i:" + std::to_string(q.sw) + ";dilations=i:" + std::to_string(q.dw) +
                                   ";pads=i:" + std::to_string(q.pl) + "," + std::to_string(q.pr)
                             : "strides=i:" + std::to_string(q.sh) + "," + std::to_string(q.sw) +
                                   ";dilations=i:" + std::to_string(q.dh) + "," + std::to_string(q.dw) +
                                   ";pads=i:" + std::to_string(q.pt) + "," + std::to_string(q.pl) + "," +
                                   std::to_string(q.pb) + "," + std::to_string(q.pr);
  attrs += ";group=i:" + std::to_string(q.group);
  mgrt::Attrs a(attrs.c_str());
  const std::string what = "QLinearConv c=" + std::to_string(q.c) + " m=" + std::to_string(q.m) + " " +
                           std::to_string(q.h) + "x" + std::to_string(q.w) + " k" + std::to_string(q.kh) + "x" +
                           std::to_string(q.kw) + " " + attrs + (q.s8x ? " s8x" : " u8x") + (q.u8w ? " u8w" : " s8w") +
                           (q.s8y ? " s8y" : " u8y");
  mgrt::StepState state;
  for (int pass = 0; pass < 3; ++pass) {  // per call, then packed into the state, then reusing it
    std::vector<uint8_t> got(want.size(), 0xA5);
    Tensor y = tensorOf(got, yd, yT);
    mgrt::Ctx ctx;
    ctx.pool = pool;
    if (pass > 0) {
      ctx.state = &state;
      ctx.constInputs = 1u << 3;
    }
    ASSERT_EQ(mgrt::findFastKernel("QLinearConv")(a, in.data(), static_cast<int>(in.size()), &y, 1, ctx), 0)
        << what << ": " << ctx.error;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(int(got[i]), int(want[i])) << what << " pass " << pass << ": byte " << i << " of " << want.size();
    }
  }
}

class FastQConv : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() > 1) pool_ = std::make_unique<mgrt::ThreadPool>(GetParam());
  }
  std::unique_ptr<mgrt::ThreadPool> pool_;
};

TEST_P(FastQConv, MatchesTheFormulaByteForByte) {
  std::mt19937 rng(42);
  const QCase cases[] = {
      // n  c   h   w   m  kh kw sh sw dh dw pt pl pb pr g  s8x    u8w    s8y    perCh  bias  wzp
      {1, 16, 9, 11, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, false, false, true, true, 0},   // 1x1
      {2, 7, 10, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true, true, 0},    // 3x3 pad 1
      {1, 3, 23, 21, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, false, false, true, true, false, 0},   // 7x7/2 stem
      {1, 6, 15, 14, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, true, false, false, false, true, 0},    // dilation 2
      {1, 5, 13, 17, 7, 3, 5, 2, 1, 1, 1, 0, 2, 1, 0, 1, true, true, true, true, true, 128},     // asym, u8w
      {1, 9, 10, 31, 11, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, false, false, false, true, true, 0},   // stride 3
      {1, 32, 8, 8, 40, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, false, false, false, true, true, 0},    // 1x1 s2
      {1, 6, 20, 70, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, false, false, true, true, 0},    // 3x3/2, wide rows
      {1, 5, 9, 41, 9, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, false, false, true, true, true, 0},     // 3x3/2 no pad
      {1, 4, 11, 37, 6, 5, 5, 3, 2, 2, 1, 2, 1, 3, 2, 1, false, true, false, true, true, 128},   // strides 3x2, dil
      {1, 64, 7, 7, 67, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true, true, 0},    // 7x7 plane
      {1, 20, 30, 30, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true, true, 0},  // many panels
      // the image read in place (stride 1, no padding, uint8 input): 3x3 and 1x1, batch 2, the last
      // panel past the image's end
      {1, 6, 12, 37, 10, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, false, false, true, true, 0},
      {2, 24, 20, 50, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, false, true, true, true, 0},
      {1, 3, 7, 45, 8, 1, 3, 1, 1, 1, 2, 0, 0, 0, 0, 1, false, true, false, false, true, 128},
      // channels in the lanes (ow <= 16, m >= 32): channel counts off 4 and 64, strides, dilation
      {1, 13, 9, 9, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, true, true, true, true, 128},
      {2, 5, 12, 10, 33, 3, 5, 1, 1, 2, 1, 2, 0, 1, 3, 1, false, false, false, true, false, 0},
      {1, 130, 6, 7, 129, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, false, false, true, false, true, 0},
      {3, 4, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true, false, false, 0},      // batch 3
      {1, 3, 1, 50, 5, 1, 4, 1, 2, 1, 1, 0, 1, 0, 2, 1, false, false, false, true, true, 0, true},  // 1-D
      // depthwise (group == c == m, f_qconv_dw.cpp): strides 1-3, dilation, asymmetric padding,
      // 5x5 and 7x7, grid tails off the 128-pixel block, wide rows, batch 2, int8 and uint8
      {1, 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, false, false, false, true, true, 0},
      {2, 13, 17, 19, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 13, true, false, true, true, true, 0},
      {1, 7, 14, 14, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 7, false, true, false, true, true, 128},
      {1, 5, 29, 23, 5, 5, 5, 2, 2, 1, 1, 2, 1, 1, 2, 5, false, false, false, false, true, 0},
      {1, 3, 9, 40, 3, 3, 3, 1, 1, 2, 2, 2, 2, 0, 1, 3, true, false, false, true, false, 0},
      {1, 4, 7, 7, 4, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 4, false, false, true, true, true, 0},
      {1, 6, 20, 130, 6, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 6, false, false, false, true, true, 0},
      {1, 2, 11, 12, 2, 3, 3, 3, 3, 1, 1, 0, 0, 2, 2, 2, true, true, true, false, false, 128},
      {1, 8, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, false, false, false, true, true, 0},      // groups: reference
      {1, 5, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true, true, 3},      // wzp 3: reference
  };
  for (const QCase& q : cases) checkCase(q, pool_.get(), rng);
}

TEST_P(FastQConv, QuantizeAndDequantizePerTensorMatchTheFormula) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-40.f, 40.f);
  for (int64_t n : {1, 15, 16, 17, 100003}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) {
      // ties at the scale 0.5 (k + 0.5 steps), values past both ends, NaN and infinities
      const int64_t kind = i % 7;
      x[i] = kind == 0 ? 0.25f * (2 * (i % 41) - 41) : kind == 1 ? d(rng) * 10.f : d(rng);
      if (i % 997 == 5) x[i] = NAN;
      if (i % 991 == 6) x[i] = (i & 1) ? INFINITY : -INFINITY;
    }
    for (bool s8 : {false, true})
      for (bool withZp : {false, true}) {
        const int32_t yT = s8 ? mgrt::kI8 : mgrt::kU8;
        std::vector<float> scale = {0.5f};
        std::vector<uint8_t> zp = {static_cast<uint8_t>(s8 ? -7 : 131)};
        std::vector<uint8_t> q(n, 0xA5);
        std::vector<Tensor> in = {tensorOf(x, {n}, mgrt::kF32), tensorOf(scale, {}, mgrt::kF32)};
        if (withZp) in.push_back(tensorOf(zp, {}, yT));
        Tensor y = tensorOf(q, {n}, yT);
        mgrt::Attrs a("");
        mgrt::Ctx ctx;
        ctx.pool = pool_.get();
        ASSERT_EQ(mgrt::findFastKernel("QuantizeLinear")(a, in.data(), static_cast<int>(in.size()), &y, 1, ctx), 0)
            << ctx.error;
        const int32_t z = withZp ? (s8 ? -7 : 131) : 0, lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
        for (int64_t i = 0; i < n; ++i) {
          const int32_t want = mgrt::quant::quantize(x[i], 0.5f, z, lo, hi);
          const int32_t got = s8 ? int32_t(static_cast<int8_t>(q[i])) : int32_t(q[i]);
          ASSERT_EQ(got, want) << "QuantizeLinear n=" << n << (s8 ? " int8" : " uint8") << " x[" << i << "]=" << x[i];
        }
        // Back: DequantizeLinear of those bytes.
        std::vector<float> back(n, -1.f);
        std::vector<Tensor> din = {tensorOf(q, {n}, yT), tensorOf(scale, {}, mgrt::kF32)};
        if (withZp) din.push_back(tensorOf(zp, {}, yT));
        Tensor bt = tensorOf(back, {n}, mgrt::kF32);
        ASSERT_EQ(mgrt::findFastKernel("DequantizeLinear")(a, din.data(), static_cast<int>(din.size()), &bt, 1, ctx), 0)
            << ctx.error;
        for (int64_t i = 0; i < n; ++i) {
          const int32_t v = s8 ? int32_t(static_cast<int8_t>(q[i])) : int32_t(q[i]);
          ASSERT_EQ(back[i], mgrt::quant::dequantize(v, z, 0.5f)) << "DequantizeLinear n=" << n << " i=" << i;
        }
      }
  }
}

// MgQuantizedAdd (fuse-qdq's residual add): every byte of quantize(dequantize(a) + dequantize(b)).
TEST_P(FastQConv, QuantizedAddMatchesTheThreeFormulas) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int64_t n : {1, 17, 40000}) {
    for (int types = 0; types < 4; ++types) {
      const bool s8a = types & 1, s8y = types & 2;
      std::vector<uint8_t> a(n), b(n), y(n, 0xA5);
      for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
      for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
      std::vector<float> as = {0.037f}, bs = {0.05f}, ys = {0.0625f};
      std::vector<uint8_t> az = {static_cast<uint8_t>(s8a ? -3 : 131)}, bz = {120},
                           yz = {static_cast<uint8_t>(s8y ? 5 : 77)};
      const int32_t aT = s8a ? mgrt::kI8 : mgrt::kU8, yT = s8y ? mgrt::kI8 : mgrt::kU8;
      std::vector<Tensor> in = {tensorOf(a, {n}, aT),  tensorOf(as, {}, mgrt::kF32), tensorOf(az, {}, aT),
                                tensorOf(b, {n}, mgrt::kU8), tensorOf(bs, {}, mgrt::kF32), tensorOf(bz, {}, mgrt::kU8),
                                tensorOf(ys, {}, mgrt::kF32), tensorOf(yz, {}, yT)};
      Tensor yt = tensorOf(y, {n}, yT);
      mgrt::Attrs at("");
      mgrt::Ctx ctx;
      ctx.pool = pool_.get();
      ASSERT_EQ(mgrt::findFastKernel("MgQuantizedAdd")(at, in.data(), 8, &yt, 1, ctx), 0) << ctx.error;
      const int32_t zA = s8a ? -3 : 131, zY = s8y ? 5 : 77, lo = s8y ? -128 : 0, hi = s8y ? 127 : 255;
      for (int64_t i = 0; i < n; ++i) {
        const int va = s8a ? int(static_cast<int8_t>(a[i])) : int(a[i]);
        const float v = mgrt::quant::dequantize(va, zA, 0.037f) + mgrt::quant::dequantize(b[i], 120, 0.05f);
        const int32_t want = mgrt::quant::quantize(v, 0.0625f, zY, lo, hi);
        ASSERT_EQ(s8y ? int(static_cast<int8_t>(y[i])) : int(y[i]), want) << "n=" << n << " types=" << types << " i=" << i;
      }
    }
  }
}

// MaxPool on uint8 / int8 (runtime/cpu/f_pool.cpp, a quantized model's pool after fuse-qdq):
// every byte against the max over the window's in-image elements.
TEST_P(FastQConv, MaxPoolOnBytesMatchesTheWindowMax) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  struct P { int64_t c, h, w, kh, kw, sh, sw, pt, pl, pb, pr; };
  const P cases[] = {{3, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1}, {2, 9, 70, 2, 2, 2, 2, 0, 0, 0, 0},
                     {4, 13, 37, 3, 3, 1, 1, 1, 1, 1, 1}, {1, 11, 40, 5, 3, 3, 3, 2, 1, 2, 1},
                     {2, 7, 100, 3, 3, 2, 2, 0, 0, 1, 1}};
  for (const P& c : cases)
    for (bool s8 : {false, true}) {
      const int64_t oh = (c.h + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.w + c.pl + c.pr - c.kw) / c.sw + 1;
      std::vector<uint8_t> x(c.c * c.h * c.w), got(c.c * oh * ow, 0xA5);
      for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
      const int32_t t = s8 ? mgrt::kI8 : mgrt::kU8;
      Tensor xt = tensorOf(x, {1, c.c, c.h, c.w}, t), yt = tensorOf(got, {1, c.c, oh, ow}, t);
      const std::string at = "kernel_shape=i:" + std::to_string(c.kh) + "," + std::to_string(c.kw) + ";strides=i:" +
                             std::to_string(c.sh) + "," + std::to_string(c.sw) + ";pads=i:" + std::to_string(c.pt) +
                             "," + std::to_string(c.pl) + "," + std::to_string(c.pb) + "," + std::to_string(c.pr);
      mgrt::Attrs a(at.c_str());
      mgrt::Ctx ctx;
      ctx.pool = pool_.get();
      ASSERT_EQ(mgrt::findFastKernel("MaxPool")(a, &xt, 1, &yt, 1, ctx), 0) << ctx.error;
      auto val = [&](int64_t i) { return s8 ? int(static_cast<int8_t>(x[i])) : int(x[i]); };
      for (int64_t ch = 0; ch < c.c; ++ch)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            int best = -1000;
            for (int64_t ky = 0; ky < c.kh; ++ky)
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t iy = oy * c.sh - c.pt + ky, ix = ox * c.sw - c.pl + kx;
                if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w) best = std::max(best, val((ch * c.h + iy) * c.w + ix));
              }
            const uint8_t g = got[(ch * oh + oy) * ow + ox];
            ASSERT_EQ(s8 ? int(static_cast<int8_t>(g)) : int(g), best)
                << "MaxPool " << at << (s8 ? " int8" : " uint8") << " at " << ch << "," << oy << "," << ox;
          }
    }
}

INSTANTIATE_TEST_SUITE_P(Threads, FastQConv, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "t"; });

}  // namespace
