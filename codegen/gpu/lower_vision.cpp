// GPU lowering of GridSample, RoiAlign, MaxUnpool, LRN (the vision family) and Det as generated
// map functors, each computing the CPU runtime's formulas (runtime/cpu/k_vision.cpp,
// k_tensor_det.cpp) in the same order and precision, with the node's constants (sizes, modes,
// padding) written into the functor:
//   GridSample  one item over Y [N, C, Ho, Wo]: each element reads its grid point and samples
//               its plane (coordinates in the element type, sums in double, as the CPU);
//   RoiAlign    one item over Y [R, C, oh, ow]: each element walks its bin's samples;
//   MaxUnpool   phase 0 zeroes Y, phase 1 is one item over X writing each value to its index;
//   LRN         one item over Y [N, C, ...]: each element sums the squares of its channel window
//               [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C) in double, then
//               divides by (bias + alpha/size * sum)^beta (the reference kernel's formula,
//               k_nn_norm.cpp; AlexNet's, GoogLeNet's and ZFNet's local response normalization);
//   Det         one item over the matrices: each thread eliminates its own M x M copy in double
//               (M <= 16, the copy lives in the thread's registers / local memory).
// A GPU program has no way to stop a run with a message, so the data errors of the CPU target
// become defined values instead: a RoiAlign batch index outside [0, N) gives NaN for that roi,
// a MaxUnpool index outside the unpooled shape is not written (its value is lost), and RoiAlign's
// sample limit (2^24 per bin) gives NaN. Duplicate MaxUnpool indices (overlapping MaxPool windows
// pick the same element) carry the same value, so their write order does not matter.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "gpu_lowering.h"

namespace magneto {
namespace gpu {
namespace {

Expected<const char*> floatType(const Node& n, const Value* v) {
  if (v->dtype() != DType::kF32 && v->dtype() != DType::kF64)
    return unsupported("{}: element type {} on the cuda/hip targets (f32 and f64 are lowered)",
                       n.describe(), dtypeName(v->dtype()));
  return ctypeOf(v->dtype());
}

// std::min / std::max as the CPU kernel calls them (NaN handling included): clamp v to
// [0, size - 1].
std::string clampExpr(const std::string& v, int64_t size, const char* T) {
  return fmt::format("(({0}) < ({1})0 ? ({1})0 : (({0}) < ({1}){2} ? ({0}) : ({1}){2}))", v, T,
                     size - 1);
}

// Statements computing `dst` = padding_mode applied to the coordinate expression `v` (type T).
std::string paddingStmts(const std::string& dst, const std::string& v, int64_t size,
                         const std::string& padding, bool align, const char* T) {
  if (padding == "border") return fmt::format("      {} = {};\n", dst, clampExpr(v, size, T));
  if (padding != "reflection") return dst == v ? "" : fmt::format("      {} = {};\n", dst, v);
  const int64_t twiceLow = align ? 0 : -1, twiceHigh = align ? 2 * (size - 1) : 2 * size - 1;
  if (twiceLow == twiceHigh) return fmt::format("      {} = ({})0;\n", dst, T);
  return fmt::format(
      "      {{\n"
      "        {0} r = {1};\n"
      "        if (r - r == 0) {{  // finite\n"
      "          const {0} lo = ({0}){2} / 2, span = ({0}){3} / 2;\n"
      "          r = fabs(r - lo);\n"
      "          const {0} extra = fmod(r, span);\n"
      "          r = fmod(floor(r / span), ({0})2) == 0 ? extra + lo : span - extra + lo;\n"
      "        }}\n"
      "        {4} = {5};\n"
      "      }}\n",
      T, v, twiceLow, twiceHigh - twiceLow, dst, clampExpr("r", size, T));
}

}  // namespace

Expected<std::vector<GpuItem>> lowerGridSample(const Node& n, const TileConfig& tile,
                                               LowerContext& cx) {
  const Value *x = n.input(0), *g = n.input(1), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(const char* T, floatType(n, x));
  const int64_t C = x->dims()[1], H = x->dims()[2], W = x->dims()[3];
  const int64_t Ho = g->dims()[1], Wo = g->dims()[2];
  std::string mode = n.attrs().getString("mode", "bilinear");
  const std::string padding = n.attrs().getString("padding_mode", "zeros");
  const bool align = n.attrs().getInt("align_corners", 0) != 0;
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  auto unnorm = [&](const char* gv, int64_t size) {
    return align ? fmt::format("({} + 1) / 2 * ({})({} - 1)", gv, T, size)
                 : fmt::format("(({} + 1) * ({}){} - 1) / 2", gv, T, size);
  };
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const {0}* const plane = static_cast<const {0}*>(in[0]) + idx[0];\n", T);
  f += fmt::format("    const {0}* const g = static_cast<const {0}*>(in[1]) + idx[1];\n", T);
  f += fmt::format(
      "    auto pixel = [plane](int64_t px, int64_t py) -> double {{\n"
      "      return px >= 0 && px < {0} && py >= 0 && py < {1} ? static_cast<double>(plane[py * {0} + px]) : 0.0;\n"
      "    }};\n"
      "    auto tap = []({2} v) -> int64_t {{\n"
      "      return fabs(v) < ({2})1e12 ? static_cast<int64_t>(v) : -(static_cast<int64_t>(1) << 40);\n"
      "    }};\n",
      W, H, T);
  f += fmt::format("    {0} ix = {1}, iy = {2};\n", T, unnorm("g[0]", W), unnorm("g[1]", H));
  f += "    double v = 0;\n";
  f += fmt::format("    const {0} big = ({0})1e12;\n", T);
  if (mode == "bicubic") {
    f += "    if (fabs(ix) < big && fabs(iy) < big) {\n";
    f += fmt::format("      const {0} x0 = floor(ix), y0 = floor(iy);\n", T);
    f += "      const double tx = static_cast<double>(ix - x0), ty = static_cast<double>(iy - y0);\n"
         "      const double A = -0.75;\n"
         "      auto w1 = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };\n"
         "      auto w2 = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };\n"
         "      const double wx[4] = {w2(tx + 1), w1(tx), w1(1 - tx), w2(2 - tx)};\n"
         "      const double wy[4] = {w2(ty + 1), w1(ty), w1(1 - ty), w2(2 - ty)};\n"
         "      for (int i = 0; i < 4; ++i) {\n";
    f += fmt::format("      {} py;\n", T);
    f += paddingStmts("py", fmt::format("y0 - 1 + ({})i", T), H, padding, align, T);
    f += "      double row = 0;\n      for (int j = 0; j < 4; ++j) {\n";
    f += fmt::format("      {} px;\n", T);
    f += paddingStmts("px", fmt::format("x0 - 1 + ({})j", T), W, padding, align, T);
    f += "      row += wx[j] * pixel(tap(px), tap(py));\n      }\n"
         "      v += wy[i] * row;\n      }\n    }\n";
  } else {
    f += paddingStmts("ix", "ix", W, padding, align, T);
    f += paddingStmts("iy", "iy", H, padding, align, T);
    f += "    if (fabs(ix) < big && fabs(iy) < big) {\n";
    if (mode == "nearest") {
      f += "      v = pixel(tap(rint(ix)), tap(rint(iy)));\n";  // half to even, as nearbyint
    } else {
      f += fmt::format("      const {0} fx = floor(ix), fy = floor(iy);\n", T);
      f += "      const int64_t x0 = tap(fx), y0 = tap(fy);\n"
           "      const double lx = static_cast<double>(ix - fx), ly = static_cast<double>(iy - fy);\n"
           "      v = pixel(x0, y0) * (1 - lx) * (1 - ly) + pixel(x0 + 1, y0) * lx * (1 - ly) +\n"
           "          pixel(x0, y0 + 1) * (1 - lx) * ly + pixel(x0 + 1, y0 + 1) * lx * ly;\n";
    }
    f += "    }\n";
  }
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(v);\n", T);
  f += kFunctorTail;
  const Dims& yd = y->dims();
  std::vector<MapOperand> ops = {{cx.ptr(x), 0, {C * H * W, H * W, 0, 0}},
                                 {cx.ptr(g), 0, {Ho * Wo * 2, 0, Wo * 2, 2}}};
  return std::vector<GpuItem>{mapItem(name, f, yd, ops, cx.ptr(y), 0, contiguousStrides(yd),
                                      itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerRoiAlign(const Node& n, const TileConfig& tile,
                                             LowerContext& cx) {
  const Value *x = n.input(0), *rois = n.input(1), *bi = n.input(2), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(const char* T, floatType(n, x));
  const char* TI = ctypeOf(bi->dtype());
  const int64_t N = x->dims()[0], C = x->dims()[1], H = x->dims()[2], W = x->dims()[3];
  const int64_t PH = y->dims()[2], PW = y->dims()[3];
  const bool avg = n.attrs().getString("mode", "avg") != "max";
  const bool halfPixel =
      n.attrs().getString("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  // The CPU reads spatial_scale as a float (Attrs::f), then widens it to double.
  const double scale = static_cast<float>(n.attrs().getFloat("spatial_scale", 1.0));
  const int64_t ratio = n.attrs().getInt("sampling_ratio", 0);
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const {0}* const box = static_cast<const {0}*>(in[1]) + idx[1];\n", T);
  f += fmt::format("    const int64_t b = static_cast<int64_t>(static_cast<const {}*>(in[2])[idx[2]]);\n", TI);
  f += fmt::format("    const int64_t c = (o / {}) % {}, ph = (o / {}) % {}, pw = o % {};\n", PH * PW, C,
                   PW, PH, PW);
  f += fmt::format("    double acc = NAN;\n    if (b >= 0 && b < {}) {{\n", N);
  f += fmt::format("    const {0}* const plane = static_cast<const {0}*>(in[0]) + (b * {1} + c) * {2};\n",
                   T, C, H * W);
  f += fmt::format("    const double scale = {}, offset = {};\n", floatLiteral(scale), halfPixel ? "0.5" : "0.0");
  f += "    const double x1 = box[0] * scale - offset, y1 = box[1] * scale - offset;\n"
       "    double rw = box[2] * scale - offset - x1, rh = box[3] * scale - offset - y1;\n";
  if (!halfPixel) f += "    rw = rw < 1.0 ? 1.0 : rw;\n    rh = rh < 1.0 ? 1.0 : rh;\n";
  f += fmt::format("    const double bh = rh / {}.0, bw = rw / {}.0;\n", PH, PW);
  if (ratio > 0) {
    f += fmt::format("    const int64_t gh = {0}, gw = {0};\n", ratio);
  } else {
    f += "    auto grid = [](double s) -> int64_t {\n"
         "      if (!(s > 0) || s - s != 0) return 0;  // also NaN, infinite\n"
         "      const double cap = 16777217.0;\n"
         "      return static_cast<int64_t>(ceil(s) < cap ? ceil(s) : cap);\n"
         "    };\n"
         "    const int64_t gh = grid(bh), gw = grid(bw);\n";
  }
  f += "    if (gh <= 16777216 && gw <= 16777216 && gh * gw <= 16777216) {\n";
  f += fmt::format("    const double count = gh * gw > 1 ? static_cast<double>(gh * gw) : 1.0;\n"
                   "    acc = {};\n    bool any = false;\n", avg ? "0.0" : "-INFINITY");
  f += "    for (int64_t iy = 0; iy < gh; ++iy)\n"
       "      for (int64_t ix = 0; ix < gw; ++ix) {\n"
       "        double sy = y1 + ph * bh + (iy + 0.5) * bh / static_cast<double>(gh);\n"
       "        double sx = x1 + pw * bw + (ix + 0.5) * bw / static_cast<double>(gw);\n"
       "        int64_t pos[4] = {0, 0, 0, 0};\n"
       "        double w[4] = {0, 0, 0, 0};\n";
  f += fmt::format(
      "        if (!(sy < -1.0 || sy > {0}.0 || sx < -1.0 || sx > {1}.0 || sx != sx || sy != sy)) {{\n"
      "          sy = sy < 0.0 ? 0.0 : sy;\n"
      "          sx = sx < 0.0 ? 0.0 : sx;\n"
      "          int64_t y0 = static_cast<int64_t>(sy), x0 = static_cast<int64_t>(sx), yh, xh;\n"
      "          if (y0 >= {0} - 1) {{ y0 = yh = {0} - 1; sy = static_cast<double>(y0); }} else yh = y0 + 1;\n"
      "          if (x0 >= {1} - 1) {{ x0 = xh = {1} - 1; sx = static_cast<double>(x0); }} else xh = x0 + 1;\n"
      "          const double ly = sy - static_cast<double>(y0), lx = sx - static_cast<double>(x0);\n"
      "          pos[0] = y0 * {1} + x0; pos[1] = y0 * {1} + xh; pos[2] = yh * {1} + x0; pos[3] = yh * {1} + xh;\n"
      "          w[0] = (1 - ly) * (1 - lx); w[1] = (1 - ly) * lx; w[2] = ly * (1 - lx); w[3] = ly * lx;\n"
      "        }}\n",
      H, W);
  f += "        any = true;\n        for (int k = 0; k < 4; ++k) {\n"
       "          const double v = w[k] * static_cast<double>(plane[pos[k]]);\n";
  f += avg ? "          acc += v;\n" : "          acc = acc < v ? v : acc;\n";
  f += "        }\n      }\n";
  f += avg ? "    acc = any ? acc / count : 0.0;\n" : "    if (!any) acc = 0.0;\n";
  f += "    }\n    }\n";
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(acc);\n", T);
  f += kFunctorTail;
  const Dims& yd = y->dims();
  std::vector<MapOperand> ops = {{cx.ptr(x), 0, {0, 0, 0, 0}},
                                 {cx.ptr(rois), 0, {4, 0, 0, 0}},
                                 {cx.ptr(bi), 0, {1, 0, 0, 0}}};
  return std::vector<GpuItem>{mapItem(name, f, yd, ops, cx.ptr(y), 0, contiguousStrides(yd),
                                      itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerMaxUnpool(const Node& n, const TileConfig& tile,
                                              LowerContext& cx) {
  const Value *x = n.input(0), *ind = n.input(1), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(const char* T, floatType(n, x));
  const Dims &xd = x->dims(), &yd = y->dims();
  const int64_t rank = static_cast<int64_t>(xd.size()), sp = rank - 2;
  // The shape the indices address: shape inference's, with pads ignored under output_shape.
  std::vector<int64_t> k = n.attrs().getInts("kernel_shape");
  std::vector<int64_t> st = n.attrs().getInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pd = n.attrs().getInts("pads", std::vector<int64_t>(2 * sp, 0));
  const bool given = n.hasInput(2);
  Dims inferred = {xd[0], xd[1]};
  int64_t total = xd[0] * xd[1];
  for (int64_t d = 0; d < sp; ++d) {
    inferred.push_back((xd[d + 2] - 1) * st[d] + k[d] - (given ? 0 : pd[d] + pd[d + sp]));
    total *= inferred.back();
  }
  // Phase 0: Y = 0.
  std::string zname = functorName(cx), z = functorHead(zname);
  z += fmt::format("    static_cast<{0}*>(out)[o] = ({0})0;\n", T);
  z += kFunctorTail;
  GpuItem zero = mapItem(zname, z, yd, {}, cx.ptr(y), 0, contiguousStrides(yd), itemsPerThread(tile));
  // Phase 1: over X, each value to its index's place in Y (o unused: out strides 0).
  std::string name = functorName(cx), f = functorHead(name);
  f += "    int64_t i = static_cast<const int64_t*>(in[1])[idx[1]];\n";
  f += fmt::format("    if (i >= 0 && i < {}) {{\n      int64_t at = 0;\n", total);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    f += fmt::format("      at += (i % {}) * {};\n      i /= {};\n", inferred[d], stride,
                     inferred[d]);
    stride *= yd[d];
  }
  f += fmt::format("      static_cast<{0}*>(out)[at] = static_cast<const {0}*>(in[0])[idx[0]];\n"
                   "    }}\n    (void)o;\n", T);
  f += kFunctorTail;
  GpuItem scatter = mapItem(name, f, xd, {{cx.ptr(x), 0, contiguousStrides(xd)},
                                          {cx.ptr(ind), 0, contiguousStrides(xd)}},
                            cx.ptr(y), 0, std::vector<int64_t>(xd.size(), 0), itemsPerThread(tile));
  scatter.phase = 1;  // after every element is zeroed
  return std::vector<GpuItem>{zero, scatter};
}

Expected<std::vector<GpuItem>> lowerLRN(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(const char* T, floatType(n, x));
  const Dims& xd = x->dims();
  if (xd.size() < 2) return unsupported("{}: LRN of a rank-{} input (rank 2 or more)", n.describe(), xd.size());
  const int64_t size = n.attrs().getInt("size", 0);
  if (size <= 0) return unsupported("{}: LRN size {} (must be positive)", n.describe(), size);
  // The CPU reads alpha, beta and bias as floats (Attrs::f), then widens them to double.
  const float alpha = static_cast<float>(n.attrs().getFloat("alpha", 1e-4));
  const float beta = static_cast<float>(n.attrs().getFloat("beta", 0.75));
  const float bias = static_cast<float>(n.attrs().getFloat("bias", 1.0));
  const int64_t C = xd[1];
  int64_t S = 1;
  for (size_t d = 2; d < xd.size(); ++d) S *= xd[d];
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  std::string name = functorName(cx), f = functorHead(name);
  // in[0] + idx[0] is the element's position in channel 0 of its image; o / S % C its channel.
  f += fmt::format("    const {0}* const x0 = static_cast<const {0}*>(in[0]) + idx[0];\n", T);
  f += fmt::format("    const int64_t c = (o / {}) % {};\n", S, C);
  f += fmt::format("    const int64_t k0 = c - {0} < 0 ? 0 : c - {0}, k1 = c + {1} > {2} ? {2} : c + {1};\n",
                   lo, hi, C - 1);
  f += "    double sq = 0;\n";
  f += fmt::format("    for (int64_t k = k0; k <= k1; ++k) {{\n"
                   "      const double v = static_cast<double>(x0[k * {}]);\n"
                   "      sq += v * v;\n"
                   "    }}\n",
                   S);
  f += fmt::format("    const double d = pow(static_cast<double>({}) + static_cast<double>({}) / {}.0 * sq, "
                   "static_cast<double>({}));\n",
                   floatLiteral(bias), floatLiteral(alpha), size, floatLiteral(beta));
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(static_cast<double>(x0[c * {1}]) / d);\n",
                   T, S);
  f += kFunctorTail;
  const Dims& yd = y->dims();
  std::vector<int64_t> xs = contiguousStrides(xd);
  xs[1] = 0;  // every channel of an image reads from channel 0's position
  return std::vector<GpuItem>{mapItem(name, f, yd, {{cx.ptr(x), 0, xs}}, cx.ptr(y), 0,
                                      contiguousStrides(yd), itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerDet(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  MG_ASSIGN_OR_RETURN(const char* T, floatType(n, x));
  const int64_t M = x->dims().back();
  if (M > 16)
    return unsupported("{}: {}x{} matrices on the cuda/hip targets (each thread keeps its matrix: "
                       "up to 16x16)", n.describe(), M, M);
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const {0}* const src = static_cast<const {0}*>(in[0]) + idx[0];\n", T);
  f += fmt::format("    double a[{}];\n", M * M > 0 ? M * M : 1);
  f += fmt::format("    for (int64_t i = 0; i < {}; ++i) a[i] = static_cast<double>(src[i]);\n", M * M);
  f += fmt::format(
      "    double det = 1.0;\n"
      "    for (int64_t k = 0; k < {0}; ++k) {{\n"
      "      int64_t p = k;\n"
      "      for (int64_t r = k + 1; r < {0}; ++r) if (fabs(a[r * {0} + k]) > fabs(a[p * {0} + k])) p = r;\n"
      "      const double pivot = a[p * {0} + k];\n"
      "      if (pivot == 0.0) {{ det = 0.0; break; }}\n"
      "      if (p != k) {{\n"
      "        for (int64_t c = 0; c < {0}; ++c) {{\n"
      "          const double t = a[k * {0} + c];\n"
      "          a[k * {0} + c] = a[p * {0} + c];\n"
      "          a[p * {0} + c] = t;\n"
      "        }}\n"
      "        det = -det;\n"
      "      }}\n"
      "      det *= pivot;\n"
      "      for (int64_t r = k + 1; r < {0}; ++r) {{\n"
      "        const double fr = a[r * {0} + k] / pivot;\n"
      "        for (int64_t c = k + 1; c < {0}; ++c) a[r * {0} + c] -= fr * a[k * {0} + c];\n"
      "      }}\n"
      "    }}\n",
      M);
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(det);\n", T);
  f += kFunctorTail;
  // Over the batch dims ([1] for one matrix): x advances M * M per matrix.
  Dims outDims = y->dims();
  std::vector<int64_t> xs;
  for (int64_t s : contiguousStrides(outDims)) xs.push_back(s * M * M);
  if (outDims.empty()) {
    outDims = {1};
    xs = {0};
  }
  return std::vector<GpuItem>{mapItem(name, f, outDims, {{cx.ptr(x), 0, xs}}, cx.ptr(y), 0,
                                      contiguousStrides(outDims), itemsPerThread(tile))};
}

}  // namespace gpu
}  // namespace magneto
