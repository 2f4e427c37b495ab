// Tests of the fast kernels for the shapes of issue #41 (small GEMMs in disguise) against the
// reference kernels (runtime/cpu/k_*.cpp) on odd shapes: ConvTranspose (f_conv_transpose.cpp:
// overlapping and non-overlapping taps, strides above the kernel, dilations, pads, output_padding,
// output_shape and auto_pad, groups, 1-D, channel counts off the GEMM's blocks, K slices, bands
// of rows), nearest Resize (f_resize.cpp: integer and fractional factors, every coordinate
// transform and rounding mode, several dtypes) and 1-D convolutions (f_conv.cpp's strided-view
// GEMM for one input channel and its 1-D form of the 2-D kernels); each on 1 and 2 threads, with
// the weights also marked constant (packed once in a step state, run twice).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "k_nn_shapes.h"
#include "mg_kernels.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

// A named namespace: a unity build compiles this file with the other fast-kernel tests as one.
namespace fast_upsample_test {

using mgrt::Tensor;

struct Arr {
  std::vector<float> v;
  Tensor t;
  Arr() = default;
  Arr(const std::vector<int64_t>& dims, std::mt19937* rng, float fill = 0.f) {
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i], n *= dims[i];
    v.assign(static_cast<size_t>(n), fill);
    if (rng) {
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      for (auto& x : v) x = d(*rng);
    }
    t.data = v.data();
    t.dtype = mgrt::kF32;
  }
};

class FastUpsample : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (GetParam() > 1) pool_ = std::make_unique<mgrt::ThreadPool>(GetParam());
  }
  mgrt::ThreadPool* pool() { return pool_.get(); }
  std::unique_ptr<mgrt::ThreadPool> pool_;
};

// Runs op's reference kernel and its fast kernel on `in` into buffers of outDims, then the fast one
// twice more with operand 1 marked constant (state kept between the runs). Float outputs must agree
// within tol relative; others exactly.
void compare(const char* op, const std::string& attrs, const std::vector<Tensor>& in,
             const std::vector<int64_t>& outDims, mgrt::ThreadPool* pool, float tol = 2e-5f,
             mgrt::DType outType = mgrt::kF32) {
  mgrt::KernelFn ref = mgrt::findKernel(op), fast = mgrt::findFastKernel(op);
  ASSERT_NE(ref, nullptr) << op;
  ASSERT_NE(fast, nullptr) << op << " has no fast kernel";
  ASSERT_NE(ref, fast) << op;
  const size_t esz = mgrt::dtypeSize(outType);
  int64_t n = 1;
  for (int64_t d : outDims) n *= d;
  std::vector<unsigned char> want(static_cast<size_t>(n) * esz, 0xAB), got(want.size(), 0xCD);
  auto outT = [&](std::vector<unsigned char>& buf) {
    Tensor t;
    t.rank = static_cast<int32_t>(outDims.size());
    for (size_t i = 0; i < outDims.size(); ++i) t.dims[i] = outDims[i];
    t.dtype = outType;
    t.data = buf.data();
    return t;
  };
  mgrt::Attrs a(attrs.c_str());
  {
    Tensor o = outT(want);
    mgrt::Ctx c;
    c.pool = pool;
    ASSERT_EQ(ref(a, in.data(), static_cast<int>(in.size()), &o, 1, c), 0) << op << " reference: " << c.error;
  }
  auto check = [&](const char* how) {
    if (outType != mgrt::kF32) {
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size()), 0) << op << " " << attrs << " " << how;
      return;
    }
    const float* w = reinterpret_cast<const float*>(want.data());
    const float* g = reinterpret_cast<const float*>(got.data());
    for (int64_t i = 0; i < n; ++i)
      if (!(std::fabs(w[i] - g[i]) <= tol * (1.f + std::fabs(w[i])))) {
        ADD_FAILURE() << op << " " << attrs << " " << how << ": element " << i << " of " << n << ": got "
                      << g[i] << " want " << w[i];
        return;
      }
  };
  {
    Tensor o = outT(got);
    mgrt::Ctx c;
    c.pool = pool;
    ASSERT_EQ(fast(a, in.data(), static_cast<int>(in.size()), &o, 1, c), 0) << op << " fast: " << c.error;
    check("(no state)");
  }
  mgrt::StepState state;
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(got.begin(), got.end(), static_cast<unsigned char>(0x5A + pass));
    Tensor o = outT(got);
    mgrt::Ctx c;
    c.pool = pool;
    c.state = &state;
    c.constInputs = 1u << 1;
    ASSERT_EQ(fast(a, in.data(), static_cast<int>(in.size()), &o, 1, c), 0) << op << " fast: " << c.error;
    check(pass ? "(constant weights, second run)" : "(constant weights, first run)");
  }
}

std::string ints(const char* name, const std::vector<int64_t>& v) {
  std::string s = std::string(";") + name + "=i:";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// ---- ConvTranspose ------------------------------------------------------------------------------

struct CtCase {
  std::vector<int64_t> x;       // input dims [n, c, spatial...]
  int64_t mg, group;            // output channels per group, groups
  std::vector<int64_t> kernel, strides, dilations, pads, outPad, outShape;
  const char* autoPad;
  bool bias;
  const char* act;              // "" or an epilogue activation
};

void checkConvTranspose(mgrt::ThreadPool* pool, std::mt19937& rng, const CtCase& cc) {
  std::vector<int64_t> wd = {cc.x[1], cc.mg};
  wd.insert(wd.end(), cc.kernel.begin(), cc.kernel.end());
  Arr X(cc.x, &rng), W(wd, &rng), B;
  if (cc.bias) B = Arr({cc.mg * cc.group}, &rng);
  mgrt::SpatialAttrs sa;
  sa.strides = cc.strides;
  sa.dilations = cc.dilations;
  sa.pads = cc.pads;
  sa.outputPadding = cc.outPad;
  sa.outputShape = cc.outShape;
  ASSERT_TRUE(mgrt::parseAutoPad(cc.autoPad, &sa.autoPad));
  mgrt::SpatialGeometry g;
  ASSERT_EQ(mgrt::resolveConvTransposeGeometry(std::vector<int64_t>(cc.x.begin() + 2, cc.x.end()), cc.kernel, sa, &g), "");
  std::vector<int64_t> od = {cc.x[0], cc.mg * cc.group};
  od.insert(od.end(), g.out.begin(), g.out.end());
  std::string at = "group=i:" + std::to_string(cc.group) + ints("kernel_shape", cc.kernel);
  if (!cc.strides.empty()) at += ints("strides", cc.strides);
  if (!cc.dilations.empty()) at += ints("dilations", cc.dilations);
  if (!cc.pads.empty()) at += ints("pads", cc.pads);
  if (!cc.outPad.empty()) at += ints("output_padding", cc.outPad);
  if (!cc.outShape.empty()) at += ints("output_shape", cc.outShape);
  at += std::string(";auto_pad=s:") + cc.autoPad;
  if (*cc.act) at += std::string(";mg_act=s:") + cc.act + ";mg_alpha=f:0.1";
  std::vector<Tensor> in = {X.t, W.t};
  if (cc.bias) in.push_back(B.t);
  compare("ConvTranspose", at, in, od, pool, 5e-5f);
}

TEST_P(FastUpsample, ConvTransposeMatchesReference) {
  std::mt19937 rng(41);
  const CtCase cases[] = {
      // DBNet's upsampling: kernel 2 stride 2, 24 -> 24 channels (the paired-column direct write)
      {{1, 24, 12, 16}, 24, 1, {2, 2}, {2, 2}, {}, {}, {}, {}, "NOTSET", true, "Relu"},
      // batch 2 and groups, overlapping 3x3/2 taps, pads and output_padding
      {{2, 6, 7, 9}, 5, 2, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}, {}, "NOTSET", true, "LeakyRelu"},
      // 4x4/2 pad 1 (GAN / U-Net upsampling), channels off the GEMM blocks (rows 13 * 16)
      {{1, 8, 9, 11}, 13, 1, {4, 4}, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "NOTSET", false, ""},
      // stride above the kernel (gaps set to the bias), output_padding at the end
      {{1, 5, 6, 7}, 7, 1, {2, 2}, {3, 3}, {}, {}, {2, 1}, {}, "NOTSET", true, ""},
      // dilation 2 with kernel 2, stride 2: taps overlap; stride 3: they do not, with gaps
      {{1, 4, 5, 6}, 3, 1, {2, 2}, {2, 2}, {2, 2}, {}, {}, {}, "NOTSET", true, "Sigmoid"},
      {{2, 4, 5, 6}, 3, 1, {2, 2}, {3, 3}, {2, 2}, {0, 1, 2, 0}, {}, {}, "NOTSET", true, ""},
      // stride 1, 3x3, pad 1 (a plain transposed convolution)
      {{1, 9, 8, 10}, 6, 1, {3, 3}, {1, 1}, {}, {1, 1, 1, 1}, {}, {}, "NOTSET", true, "Relu"},
      // kernel 2 stride 2 with pads cutting the first column / row on one side only
      {{1, 3, 5, 9}, 4, 1, {2, 2}, {2, 2}, {}, {1, 1, 0, 0}, {}, {}, "NOTSET", true, ""},
      {{1, 3, 5, 9}, 4, 1, {2, 2}, {2, 2}, {}, {0, 0, 1, 1}, {1, 1}, {}, "NOTSET", false, "Relu"},
      // anisotropic kernel and strides
      {{1, 5, 6, 8}, 3, 1, {3, 2}, {1, 2}, {}, {1, 0, 1, 0}, {}, {}, "NOTSET", true, ""},
      // output_shape and auto_pad
      {{1, 4, 5, 5}, 3, 1, {3, 3}, {2, 2}, {}, {}, {}, {10, 11}, "NOTSET", true, ""},
      {{1, 4, 5, 6}, 3, 1, {3, 3}, {2, 2}, {}, {}, {}, {}, "SAME_UPPER", true, ""},
      {{1, 4, 5, 6}, 3, 1, {4, 4}, {2, 2}, {}, {}, {}, {}, "SAME_LOWER", false, ""},
      // channel counts not multiples of the GEMM's register tile, groups of odd sizes
      {{1, 37, 13, 13}, 19, 1, {2, 2}, {2, 2}, {}, {}, {}, {}, "NOTSET", true, ""},
      {{2, 15, 6, 7}, 7, 3, {2, 2}, {2, 2}, {}, {}, {}, {}, "NOTSET", true, "Relu"},
      // K = 300 input channels: two of the GEMM's K slices
      {{1, 300, 5, 6}, 3, 1, {2, 2}, {2, 2}, {}, {}, {}, {}, "NOTSET", true, ""},
      // wide rows and many output rows: several bands, with overlapping taps across band edges
      {{1, 6, 20, 70}, 16, 1, {4, 4}, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "NOTSET", true, ""},
      {{1, 6, 40, 70}, 16, 1, {2, 2}, {2, 2}, {}, {}, {}, {}, "NOTSET", true, "Relu"},
      {{1, 6, 30, 50}, 20, 1, {5, 3}, {3, 1}, {1, 2}, {2, 1, 0, 3}, {1, 0}, {}, "NOTSET", true, ""},
      // 1-D: kernel 4 stride 2 pad 1, kernel 2 stride 2, groups
      {{2, 6, 33}, 5, 1, {4}, {2}, {}, {1, 1}, {}, {}, "NOTSET", true, ""},
      {{1, 8, 40}, 3, 2, {2}, {2}, {}, {}, {1}, {}, "NOTSET", true, "Relu"},
      // one input pixel, one channel
      {{1, 1, 1, 1}, 2, 1, {3, 3}, {2, 2}, {}, {}, {}, {}, "NOTSET", true, ""},
  };
  for (const CtCase& cc : cases) checkConvTranspose(pool(), rng, cc);
}

// ---- Resize (nearest) ---------------------------------------------------------------------------

// Resize of x (dims xd, element type dt) by scales (or to sizes when scales is empty).
void checkResize(mgrt::ThreadPool* pool, std::mt19937& rng, const std::vector<int64_t>& xd, mgrt::DType dt,
                 const std::vector<float>& scales, const std::vector<int64_t>& sizes, const std::string& attrs,
                 const std::vector<int64_t>& axes = {}) {
  int64_t n = 1;
  for (int64_t d : xd) n *= d;
  const size_t esz = mgrt::dtypeSize(dt);
  std::vector<unsigned char> xb(static_cast<size_t>(n) * esz);
  for (auto& b : xb) b = static_cast<unsigned char>(rng());
  if (dt == mgrt::kF32) {  // finite floats (the comparison is numeric)
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(xb.data())[i] = u(rng);
  }
  Tensor X;
  X.rank = static_cast<int32_t>(xd.size());
  for (size_t i = 0; i < xd.size(); ++i) X.dims[i] = xd[i];
  X.dtype = dt;
  X.data = xb.data();
  std::vector<float> sv = scales;
  std::vector<int64_t> zv = sizes;
  Tensor S, Z;
  if (!sv.empty()) {
    S.rank = 1;
    S.dims[0] = static_cast<int64_t>(sv.size());
    S.dtype = mgrt::kF32;
    S.data = sv.data();
  } else {
    Z.rank = 1;
    Z.dims[0] = static_cast<int64_t>(zv.size());
    Z.dtype = mgrt::kI64;
    Z.data = zv.data();
  }
  // Output extents as the reference computes them: floor(in * scale), or the sizes.
  std::vector<int64_t> od = xd;
  std::vector<int64_t> ax = axes;
  if (ax.empty())
    for (size_t d = 0; d < xd.size(); ++d) ax.push_back(static_cast<int64_t>(d));
  for (size_t k = 0; k < ax.size(); ++k)
    od[ax[k]] = !sv.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(xd[ax[k]]) * sv[k])) : zv[k];
  std::string at = "mode=s:nearest" + attrs;
  if (!axes.empty()) at += ints("axes", axes);
  std::vector<Tensor> in = {X, Tensor{}, S};
  if (sv.empty()) in.push_back(Z);
  compare("Resize", at, in, od, pool, 0.f, dt);
}

TEST_P(FastUpsample, NearestResizeMatchesReference) {
  std::mt19937 rng(7);
  const char* coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                          "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  const char* rounds[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (const char* c : coords)
    for (const char* rd : rounds) {
      const std::string at = std::string(";coordinate_transformation_mode=s:") + c + ";nearest_mode=s:" + rd;
      // DBNet's 2x upsampling (factor 2 on both axes), odd extents, batch 2
      checkResize(pool(), rng, {2, 3, 7, 9}, mgrt::kF32, {1, 1, 2, 2}, {}, at);
      // integer factors 3 and 4, 1 on the rows only
      checkResize(pool(), rng, {1, 2, 5, 6}, mgrt::kF32, {1, 1, 3, 4}, {}, at);
      checkResize(pool(), rng, {1, 2, 5, 6}, mgrt::kF32, {1, 1, 1, 2}, {}, at);
      // fractional and shrinking factors, sizes
      checkResize(pool(), rng, {1, 3, 6, 10}, mgrt::kF32, {1, 1, 1.5f, 0.7f}, {}, at);
      checkResize(pool(), rng, {1, 1, 9, 7}, mgrt::kF32, {}, {1, 1, 20, 15}, at);
    }
  const std::string def;
  // other element sizes (nearest copies bytes), ranks 1, 3 and 5, a resized channel axis, axes
  checkResize(pool(), rng, {2, 4, 5, 7}, mgrt::kI64, {1, 1, 2, 2}, {}, def);
  checkResize(pool(), rng, {1, 3, 6, 6}, mgrt::kU8, {1, 1, 2, 3}, {}, def);
  checkResize(pool(), rng, {1, 3, 6, 6}, mgrt::kF16, {1, 1, 2, 2}, {}, def);
  checkResize(pool(), rng, {13}, mgrt::kF32, {3}, {}, def);
  checkResize(pool(), rng, {2, 5, 11}, mgrt::kF32, {1, 2, 2}, {}, def);
  checkResize(pool(), rng, {1, 2, 3, 4, 5}, mgrt::kF32, {1, 1, 2, 2, 2}, {}, def);
  checkResize(pool(), rng, {1, 4, 6, 8}, mgrt::kF32, {2, 2}, {}, ";coordinate_transformation_mode=s:asymmetric;nearest_mode=s:floor", {2, 3});
  // a large plane: several row blocks on the pool, each block's first row gathered
  checkResize(pool(), rng, {1, 2, 240, 330}, mgrt::kF32, {1, 1, 2, 2}, {}, def);
}

// ---- 1-D Conv -----------------------------------------------------------------------------------

struct Conv1dCase {
  int64_t n, c, w, m, k, group, stride, dil, pb, pe;
  bool bias;
  const char* act;
};

void checkConv1d(mgrt::ThreadPool* pool, std::mt19937& rng, const Conv1dCase& cc) {
  Arr X({cc.n, cc.c, cc.w}, &rng), W({cc.m, cc.c / cc.group, cc.k}, &rng), B;
  if (cc.bias) B = Arr({cc.m}, &rng);
  const int64_t kd = (cc.k - 1) * cc.dil + 1, ow = (cc.w + cc.pb + cc.pe - kd) / cc.stride + 1;
  std::string at = "group=i:" + std::to_string(cc.group) + ints("kernel_shape", {cc.k}) + ints("strides", {cc.stride}) +
                   ints("dilations", {cc.dil}) + ints("pads", {cc.pb, cc.pe});
  if (*cc.act) at += std::string(";mg_act=s:") + cc.act;
  std::vector<Tensor> in = {X.t, W.t};
  if (cc.bias) in.push_back(B.t);
  compare("Conv", at, in, {cc.n, cc.m, ow}, pool, 5e-5f);
}

TEST_P(FastUpsample, Conv1dMatchesReference) {
  std::mt19937 rng(160);
  const Conv1dCase cases[] = {
      // n c  w     m    k    g  s    d  pb   pe
      // the STFT front end: 1 -> 257 channels, kernel 512, stride 160 (a strided view, no copy)
      {1, 1, 4000, 257, 512, 1, 160, 1, 0, 0, true, ""},
      // centre padding (a padded copy of the row), batch 2, output channels off the blocks
      {2, 1, 3001, 65, 128, 1, 40, 1, 64, 64, false, ""},
      {1, 1, 500, 9, 40, 1, 7, 2, 3, 11, true, "Relu"},
      // few frames (N <= 4: the GEMM's matrix-vector path), a 26-tap kernel (just past depthwise)
      {1, 1, 700, 31, 512, 1, 160, 1, 0, 0, true, ""},
      {1, 1, 200, 12, 26, 1, 3, 1, 1, 0, true, ""},
      // the strided view where the AVX-512 stem kernel does not apply: 5 channels, 1100 taps
      {1, 1, 900, 5, 40, 1, 9, 1, 4, 0, true, "Relu"},
      {2, 1, 6000, 9, 1100, 1, 300, 1, 0, 0, true, ""},
      // one input channel, short kernels: the depthwise kernels on a single row
      {1, 1, 300, 16, 5, 1, 2, 1, 2, 2, true, "Relu"},
      // depthwise and grouped 1-D layers (wav2vec-style positional convolution), plain 1-D layers
      {2, 24, 77, 24, 7, 24, 1, 1, 3, 3, true, ""},
      {1, 16, 50, 32, 9, 4, 1, 1, 4, 4, true, "Relu"},
      {1, 40, 61, 48, 3, 1, 1, 1, 1, 1, true, "Relu"},
      {2, 3, 90, 20, 10, 1, 5, 1, 0, 0, true, ""},
      {1, 64, 40, 96, 1, 1, 2, 1, 0, 0, false, ""},
      {1, 130, 33, 70, 3, 1, 2, 2, 2, 1, true, ""},
  };
  for (const Conv1dCase& cc : cases) checkConv1d(pool(), rng, cc);
}

INSTANTIATE_TEST_SUITE_P(Threads, FastUpsample, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) { return "T" + std::to_string(i.param); });

}  // namespace fast_upsample_test
