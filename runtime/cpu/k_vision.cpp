// Reference kernels of the vision family (schemas: src/ops/vision_ops.cpp), float32 and float64:
//
// GridSample (opset 16, PyTorch's grid_sample): Y[n, c, h, w] samples X[n, c] at the point
//   grid[n, h, w] = (gx, gy) in [-1, 1], unnormalized to pixel coordinates by
//   align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2.
//   bilinear: the 4 neighbours, nearest: the pixel at the coordinate rounded half to even,
//   bicubic: the 4x4 neighbours with the cubic convolution kernel of A = -0.75.
//   padding_mode says what lies outside: zeros (taps outside read 0), border (coordinates clamped
//   to the edge) or reflection (coordinates mirrored at the border, at -0.5 and size - 0.5 without
//   align_corners, at the edge pixels' centres with it, then clamped). bilinear and nearest apply
//   it to the sampling point, bicubic to each of its 16 taps.
// RoiAlign (opset 16, as onnxruntime): region r = (x1, y1, x2, y2) * spatial_scale of image
//   batch_indices[r] (minus 0.5 with half_pixel; with output_half_pixel the region is at least
//   1 x 1) is cut into output_height x output_width bins; each bin averages (avg) or takes the
//   maximum of (max) a sampling_ratio x sampling_ratio grid of bilinear samples (sampling_ratio 0:
//   ceil(bin size) per side; none when the region is NaN or infinite). A sample more than one
//   pixel outside the image is 0; one less than that is clamped to the edge. max is
//   onnxruntime's (and ONNX's reference): the largest of the four weighted corner values
//   w_i * x_i of each sample, not of the interpolated value.
//   A batch index outside [0, N), or more than 2^24 samples per bin, fails the step.
// MaxUnpool (opset 11): Y = zeros, then Y[I[i]] = X[i] for every i in order (the last write wins),
//   I being flat indices into the inferred shape [N, C, (x - 1) * stride + kernel - pads...];
//   with output_shape, that block (pads taken as 0) sits at the start of the larger output.
//   An index outside the inferred shape fails the step.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mg_kernels.h"

namespace mgrt {
namespace {

// ---- GridSample ------------------------------------------------------------------------------

enum class Interp { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridSampleSpec {
  Interp interp = Interp::kBilinear;
  Padding padding = Padding::kZeros;
  bool alignCorners = false;
};

int parseGridSample(const Attrs& a, GridSampleSpec* s, Ctx& ctx) {
  std::string m = a.s("mode", "bilinear"), p = a.s("padding_mode", "zeros");
  if (m == "bilinear" || m == "linear") s->interp = Interp::kBilinear;
  else if (m == "nearest") s->interp = Interp::kNearest;
  else if (m == "bicubic" || m == "cubic") s->interp = Interp::kBicubic;
  else
    return ctx.fail("GridSample: mode must be bilinear, nearest or bicubic, got '%s'", m.c_str());
  if (p == "zeros") s->padding = Padding::kZeros;
  else if (p == "border") s->padding = Padding::kBorder;
  else if (p == "reflection") s->padding = Padding::kReflection;
  else return ctx.fail("GridSample: padding_mode must be zeros, border or reflection, got '%s'",
                       p.c_str());
  s->alignCorners = a.i("align_corners", 0) != 0;
  return 0;
}

// Coordinates are computed in the element type T, as PyTorch does (rounding and floor see the
// same numbers); interpolation sums in double.
template <typename T>
T unnormalize(T g, int64_t size, bool alignCorners) {
  const T n = static_cast<T>(size);
  return alignCorners ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
}

template <typename T>
T clampToEdge(T x, int64_t size) {
  return std::min(static_cast<T>(size - 1), std::max(x, static_cast<T>(0)));
}

// Mirrors x into [twiceLow / 2, twiceHigh / 2] (NaN and infinities stay as they are: the clamp
// after it takes them to an edge).
template <typename T>
T reflect(T x, int64_t twiceLow, int64_t twiceHigh) {
  if (twiceLow == twiceHigh) return 0;
  if (!std::isfinite(x)) return x;
  const T lo = static_cast<T>(twiceLow) / 2, span = static_cast<T>(twiceHigh - twiceLow) / 2;
  x = std::fabs(x - lo);
  const T extra = std::fmod(x, span);
  const bool evenFlips = std::fmod(std::floor(x / span), static_cast<T>(2)) == 0;
  return evenFlips ? extra + lo : span - extra + lo;
}

// padding_mode applied to one pixel coordinate (zeros: unchanged, the reads check bounds).
template <typename T>
T applyPadding(T x, int64_t size, const GridSampleSpec& s) {
  if (s.padding == Padding::kBorder) return clampToEdge(x, size);
  if (s.padding == Padding::kReflection) {
    x = s.alignCorners ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
    return clampToEdge(x, size);
  }
  return x;
}

// Pixel (x, y) of one H x W plane, 0 outside. NaN coordinates (from a NaN grid) read 0.
template <typename T>
double pixel(const T* plane, int64_t H, int64_t W, int64_t x, int64_t y) {
  return x >= 0 && x < W && y >= 0 && y < H ? static_cast<double>(plane[y * W + x]) : 0.0;
}

// The integer position of a whole-numbered coordinate; far outside any image when it is NaN,
// infinite or beyond 2^40 (so the read gives 0, and the cast is defined).
template <typename T>
int64_t tap(T v) {
  return std::fabs(v) < static_cast<T>(1e12) ? static_cast<int64_t>(v) : -(int64_t{1} << 40);
}

// The cubic convolution kernel at distance t: for |t| <= 1, and for 1 < |t| < 2.
double cubicWeight1(double t, double A) { return ((A + 2) * t - (A + 3)) * t * t + 1; }
double cubicWeight2(double t, double A) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; }

template <typename T>
double sampleBicubic(const T* plane, int64_t H, int64_t W, T ix, T iy, const GridSampleSpec& s) {
  const double A = -0.75;
  const T x0 = std::floor(ix), y0 = std::floor(iy);
  const double tx = static_cast<double>(ix - x0), ty = static_cast<double>(iy - y0);
  const double wx[4] = {cubicWeight2(tx + 1, A), cubicWeight1(tx, A), cubicWeight1(1 - tx, A),
                        cubicWeight2(2 - tx, A)};
  const double wy[4] = {cubicWeight2(ty + 1, A), cubicWeight1(ty, A), cubicWeight1(1 - ty, A),
                        cubicWeight2(2 - ty, A)};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    const int64_t y = tap(applyPadding<T>(y0 - 1 + i, H, s));
    double row = 0;
    for (int j = 0; j < 4; ++j)
      row += wx[j] * pixel(plane, H, W, tap(applyPadding<T>(x0 - 1 + j, W, s)), y);
    sum += wy[i] * row;
  }
  return sum;
}

template <typename T>
double sampleAt(const T* plane, int64_t H, int64_t W, T gx, T gy, const GridSampleSpec& s) {
  T ix = unnormalize(gx, W, s.alignCorners), iy = unnormalize(gy, H, s.alignCorners);
  if (s.interp == Interp::kBicubic) {
    if (!(std::fabs(ix) < static_cast<T>(1e12) && std::fabs(iy) < static_cast<T>(1e12))) return 0;
    return sampleBicubic(plane, H, W, ix, iy, s);
  }
  ix = applyPadding(ix, W, s);
  iy = applyPadding(iy, H, s);
  // A NaN or huge point (zeros padding) is outside the image.
  if (!(std::fabs(ix) < static_cast<T>(1e12) && std::fabs(iy) < static_cast<T>(1e12))) return 0;
  if (s.interp == Interp::kNearest)
    return pixel(plane, H, W, tap(std::nearbyint(ix)), tap(std::nearbyint(iy)));
  const T fx = std::floor(ix), fy = std::floor(iy);
  const int64_t x0 = tap(fx), y0 = tap(fy);
  const double lx = static_cast<double>(ix - fx), ly = static_cast<double>(iy - fy);
  return pixel(plane, H, W, x0, y0) * (1 - lx) * (1 - ly) +
         pixel(plane, H, W, x0 + 1, y0) * lx * (1 - ly) +
         pixel(plane, H, W, x0, y0 + 1) * (1 - lx) * ly +
         pixel(plane, H, W, x0 + 1, y0 + 1) * lx * ly;
}

template <typename T>
void gridSampleT(const Tensor& x, const Tensor& grid, const Tensor& y, const GridSampleSpec& s) {
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  const int64_t Ho = grid.dims[1], Wo = grid.dims[2];
  const T *X = x.as<T>(), *G = grid.as<T>();
  T* Y = y.as<T>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const T* plane = X + (n * C + c) * H * W;
      T* dst = Y + (n * C + c) * Ho * Wo;
      for (int64_t p = 0; p < Ho * Wo; ++p) {
        const T* g = G + (n * Ho * Wo + p) * 2;
        dst[p] = static_cast<T>(sampleAt(plane, H, W, g[0], g[1], s));
      }
    }
}

int kGridSample(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 2 || nout < 1 || !in[0].present() || !in[1].present())
    return ctx.fail("GridSample: expected X and grid");
  const Tensor &x = in[0], &g = in[1], &y = out[0];
  if (x.rank != 4 || g.rank != 4 || g.dims[0] != x.dims[0] || g.dims[3] != 2 || y.rank != 4 ||
      y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1] || y.dims[2] != g.dims[1] ||
      y.dims[3] != g.dims[2] || g.dtype != x.dtype || y.dtype != x.dtype)
    return ctx.fail("GridSample: expected X [N, C, H, W], grid [N, Ho, Wo, 2] and Y [N, C, Ho, Wo] "
                    "of one type");
  GridSampleSpec s;
  if (parseGridSample(a, &s, ctx)) return 1;
  if (x.dtype == kF32) gridSampleT<float>(x, g, y, s);
  else if (x.dtype == kF64) gridSampleT<double>(x, g, y, s);
  else return ctx.fail("GridSample: X must be float32 or float64 (got element type %d)", x.dtype);
  return 0;
}

// ---- RoiAlign --------------------------------------------------------------------------------

// One bilinear sample: the four pixel offsets and their weights (all 0 outside the image).
struct RoiSample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

RoiSample roiSample(double y, double x, int64_t H, int64_t W) {
  RoiSample s;
  if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W) ||
      std::isnan(x) || std::isnan(y))
    return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= H - 1) y = static_cast<double>(y0 = y1 = H - 1);
  else y1 = y0 + 1;
  if (x0 >= W - 1) x = static_cast<double>(x0 = x1 = W - 1);
  else x1 = x0 + 1;
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y0 * W + x0;
  s.pos[1] = y0 * W + x1;
  s.pos[2] = y1 * W + x0;
  s.pos[3] = y1 * W + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// At most this many samples per bin (2^24): more is a region far larger than any image, which
// would run for hours; it fails the step instead.
constexpr int64_t kMaxRoiSamples = int64_t{1} << 24;

// sampling_ratio 0: ceil(bin size) samples per side; none for an empty, reversed, NaN or infinite
// bin (no sample of it lies in the image). Capped past kMaxRoiSamples to keep the cast defined.
int64_t adaptiveGrid(double binSize) {
  if (!(binSize > 0) || !std::isfinite(binSize)) return 0;
  const double cap = static_cast<double>(kMaxRoiSamples) + 1;
  return static_cast<int64_t>(std::min(std::ceil(binSize), cap));
}

int64_t indexAt(const Tensor& t, int64_t i) {
  return t.dtype == kI32 ? static_cast<int64_t>(t.as<int32_t>()[i]) : t.as<int64_t>()[i];
}

template <typename T>
int roiAlignT(const Attrs& a, const Tensor* in, const Tensor& y, Ctx& ctx) {
  const Tensor &x = in[0], &rois = in[1], &bi = in[2];
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  const int64_t R = rois.dims[0], PH = y.dims[2], PW = y.dims[3];
  const bool avg = a.s("mode", "avg") != "max";
  const bool halfPixel = a.s("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const double scale = a.f("spatial_scale", 1.0f), offset = halfPixel ? 0.5 : 0.0;
  const int64_t ratio = a.i("sampling_ratio", 0);
  const T* X = x.as<T>();
  const T* box = rois.as<T>();
  T* Y = y.as<T>();
  std::vector<RoiSample> samples;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = indexAt(bi, r);
    if (b < 0 || b >= N)
      return ctx.fail("RoiAlign: batch_indices[%lld] = %lld is outside [0, %lld)",
                      static_cast<long long>(r), static_cast<long long>(b),
                      static_cast<long long>(N));
    const double x1 = box[r * 4 + 0] * scale - offset, y1 = box[r * 4 + 1] * scale - offset;
    double rw = box[r * 4 + 2] * scale - offset - x1, rh = box[r * 4 + 3] * scale - offset - y1;
    if (!halfPixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(PH), bw = rw / static_cast<double>(PW);
    const int64_t gh = ratio > 0 ? ratio : adaptiveGrid(bh);
    const int64_t gw = ratio > 0 ? ratio : adaptiveGrid(bw);
    if (gh > kMaxRoiSamples || gw > kMaxRoiSamples || gh * gw > kMaxRoiSamples)
      return ctx.fail("RoiAlign: roi %lld needs %lld x %lld samples per bin, more than 2^24 "
                      "(a region far larger than the image, or a huge sampling_ratio)",
                      static_cast<long long>(r), static_cast<long long>(gh),
                      static_cast<long long>(gw));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ph = 0; ph < PH; ++ph)
      for (int64_t pw = 0; pw < PW; ++pw) {
        // The bin's samples, shared by every channel.
        samples.clear();
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix)
            samples.push_back(roiSample(y1 + ph * bh + (iy + 0.5) * bh / static_cast<double>(gh),
                                        x1 + pw * bw + (ix + 0.5) * bw / static_cast<double>(gw),
                                        H, W));
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = X + (b * C + c) * H * W;
          double acc = avg ? 0.0 : -INFINITY;
          for (const RoiSample& s : samples)
            for (int k = 0; k < 4; ++k) {
              const double v = s.w[k] * static_cast<double>(plane[s.pos[k]]);
              if (avg) acc += v;
              else acc = std::max(acc, v);
            }
          if (samples.empty()) acc = 0;
          Y[((r * C + c) * PH + ph) * PW + pw] = static_cast<T>(avg ? acc / count : acc);
        }
      }
  }
  return 0;
}

int kRoiAlign(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 3 || nout < 1 || !in[0].present() || !in[1].present() || !in[2].present())
    return ctx.fail("RoiAlign: expected X, rois and batch_indices");
  const Tensor &x = in[0], &rois = in[1], &bi = in[2], &y = out[0];
  if (x.rank != 4 || rois.rank != 2 || rois.dims[1] != 4 || bi.rank != 1 ||
      bi.dims[0] != rois.dims[0] || (bi.dtype != kI64 && bi.dtype != kI32) || y.rank != 4 ||
      y.dims[0] != rois.dims[0] || y.dims[1] != x.dims[1] || rois.dtype != x.dtype ||
      y.dtype != x.dtype)
    return ctx.fail("RoiAlign: expected X [N, C, H, W], rois [R, 4] of X's type, integer "
                    "batch_indices [R] and Y [R, C, oh, ow]");
  if (x.dtype == kF32) return roiAlignT<float>(a, in, y, ctx);
  if (x.dtype == kF64) return roiAlignT<double>(a, in, y, ctx);
  return ctx.fail("RoiAlign: X must be float32 or float64 (got element type %d)", x.dtype);
}

// ---- MaxUnpool -------------------------------------------------------------------------------

int kMaxUnpool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 2 || nout < 1 || !in[0].present() || !in[1].present())
    return ctx.fail("MaxUnpool: expected X and I");
  const Tensor &x = in[0], &idx = in[1], &y = out[0];
  const int sp = x.rank - 2;
  const bool given = nin > 2 && in[2].present();
  std::vector<int64_t> k = a.ints("kernel_shape"), s = a.ints("strides"), p = a.ints("pads");
  if (s.empty()) s.assign(static_cast<size_t>(std::max(sp, 0)), 1);
  if (p.empty() || given) p.assign(static_cast<size_t>(2 * std::max(sp, 0)), 0);
  bool ok = sp >= 1 && idx.dtype == kI64 && idx.rank == x.rank && y.rank == x.rank &&
            y.dtype == x.dtype && static_cast<int>(k.size()) == sp &&
            static_cast<int>(s.size()) == sp && static_cast<int>(p.size()) == 2 * sp;
  for (int d = 0; ok && d < x.rank; ++d) ok = idx.dims[d] == x.dims[d];
  // The inferred shape, which I indexes, and where it sits in Y (its first elements per dim).
  int64_t inferred[kMaxRank], total = 1;
  for (int d = 0; ok && d < x.rank; ++d) {
    const int e = d - 2;
    inferred[d] = d < 2 ? x.dims[d] : (x.dims[d] - 1) * s[e] + k[e] - p[e] - p[e + sp];
    ok = inferred[d] >= 0 && inferred[d] <= y.dims[d] && (d >= 2 || inferred[d] == y.dims[d]);
    total *= ok ? inferred[d] : 1;
  }
  if (!ok)
    return ctx.fail("MaxUnpool: expected X [N, C, spatial...], I of X's shape (int64), and Y at "
                    "least the shape kernel_shape, strides and pads give");
  const size_t esz = dtypeSize(x.dtype);
  std::memset(y.data, 0, static_cast<size_t>(y.numel()) * esz);
  const int64_t* I = idx.as<int64_t>();
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t f = I[i];
    if (f < 0 || f >= total)
      return ctx.fail("MaxUnpool: I[%lld] = %lld is outside [0, %lld), the unpooled shape's size",
                      static_cast<long long>(i), static_cast<long long>(f),
                      static_cast<long long>(total));
    // Coordinates in the inferred shape, then the flat offset in Y.
    int64_t o = 0, stride = 1;
    for (int d = x.rank - 1; d >= 0; --d) {
      o += (f % inferred[d]) * stride;
      f /= inferred[d];
      stride *= y.dims[d];
    }
    std::memcpy(dst + o * static_cast<int64_t>(esz), src + i * static_cast<int64_t>(esz), esz);
  }
  return 0;
}

}  // namespace

const KernelEntry* visionKernels() {
  static const KernelEntry kTable[] = {
      {"GridSample", kGridSample},
      {"RoiAlign", kRoiAlign},
      {"MaxUnpool", kMaxUnpool},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
