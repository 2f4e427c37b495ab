// Reference kernel of ONNX Resize (opset 11-13 semantics; the frontend rewrites Upsample and the
// opset-10 form into this operand layout: X, roi, scales, sizes).
//
// Resize is separable: every output coordinate along an axis maps to a source coordinate
// (coordinate_transformation_mode) and from there to a few weighted source taps (nearest: 1,
// linear: 2, cubic: 4). We build those tap lists per axis once and then sum over the product of
// the taps for every output element. This follows the ONNX reference implementation
// (onnx/backend/test/case/node/resize.py) exactly, including its choices at exact integer source
// coordinates (the tap on the left gets weight 0) and its edge padding (taps clamp to the border).
#include <cmath>
#include <string>
#include <vector>

#include "k_tensor_util.h"
#include "mg_kernels.h"

namespace mgrt {

using namespace tensor_util;

namespace {

struct Tap {
  int64_t index;
  double weight;
};

struct AxisPlan {
  std::vector<std::vector<Tap>> taps;  // per output coordinate
  std::vector<bool> outside;           // tf_crop_and_resize: coordinate maps outside the input
};

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  std::string coord, nearest;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

double sourceCoord(const ResizeParams& p, double x, double scale, int64_t inLen, double roiStart,
                   double roiEnd, bool* outside) {
  double outLen = scale * static_cast<double>(inLen);
  const std::string& m = p.coord;
  if (m == "align_corners") return outLen == 1 ? 0.0 : x * (inLen - 1) / (outLen - 1);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "pytorch_half_pixel") return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "tf_crop_and_resize") {
    double v = outLen == 1 ? (roiEnd - roiStart) * (inLen - 1) / 2
                           : x * (roiEnd - roiStart) * (inLen - 1) / (outLen - 1);
    v += roiStart * (inLen - 1);
    *outside = v < 0 || v > inLen - 1;
    return v;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

std::vector<double> coeffs(const ResizeParams& p, double ratio, bool exact) {
  switch (p.mode) {
    case Mode::kNearest: {
      if (exact) return {0, 1};
      const std::string& n = p.nearest;
      if (n == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
      if (n == "floor") return {1, 0};
      if (n == "ceil") return {0, 1};
      return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};  // round_prefer_floor
    }
    case Mode::kLinear: return {1 - ratio, ratio};
    case Mode::kCubic: {
      double A = p.cubicA, r = ratio, s = 1 - ratio;
      return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
              ((A + 2) * r - (A + 3)) * r * r + 1, ((A + 2) * s - (A + 3)) * s * s + 1,
              ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
    }
  }
  return {};
}

AxisPlan planAxis(const ResizeParams& p, int64_t inLen, int64_t outLen, double scale,
                  double roiStart, double roiEnd) {
  AxisPlan plan;
  plan.taps.resize(static_cast<size_t>(outLen));
  plan.outside.assign(static_cast<size_t>(outLen), false);
  for (int64_t x = 0; x < outLen; ++x) {
    bool outside = false;
    double src = sourceCoord(p, static_cast<double>(x), scale, inLen, roiStart, roiEnd, &outside);
    plan.outside[x] = outside;
    if (outside) continue;
    // The reference picks neighbours so that the ratio lies in (0, 1]: at an integer coordinate
    // the left neighbour is src - 1 with weight 0.
    double fl = std::floor(src);
    bool exact = src == fl;
    int64_t left = static_cast<int64_t>(fl) - (exact ? 1 : 0);
    double ratio = exact ? 1.0 : src - fl;
    std::vector<double> c = coeffs(p, ratio, exact);
    int64_t first = left - (static_cast<int64_t>(c.size()) / 2 - 1);
    if (p.excludeOutside) {
      double sum = 0;
      for (size_t k = 0; k < c.size(); ++k) {
        int64_t idx = first + static_cast<int64_t>(k);
        if (idx < 0 || idx >= inLen) c[k] = 0;
        sum += c[k];
      }
      if (sum != 0)
        for (double& v : c) v /= sum;
    }
    for (size_t k = 0; k < c.size(); ++k) {
      if (c[k] == 0) continue;
      int64_t idx = first + static_cast<int64_t>(k);
      idx = idx < 0 ? 0 : (idx >= inLen ? inLen - 1 : idx);
      plan.taps[x].push_back({idx, c[k]});
    }
    if (plan.taps[x].empty()) plan.taps[x].push_back({left < 0 ? 0 : (left >= inLen ? inLen - 1 : left), 0.0});
  }
  return plan;
}

}  // namespace

MG_TENSOR_KERNEL(kResize) {
  const Tensor& x = in[0];
  const Tensor& y = out[0];
  int r = x.rank;
  ResizeParams p;
  std::string mode = a.s("mode", "nearest");
  if (mode == "nearest") p.mode = Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") p.mode = Mode::kLinear;
  else if (mode == "cubic" || mode == "bicubic") p.mode = Mode::kCubic;
  else return ctx.fail("Resize: unknown mode '%s'", mode.c_str());
  p.coord = a.s("coordinate_transformation_mode", "half_pixel");
  p.nearest = a.s("nearest_mode", "round_prefer_floor");
  p.cubicA = a.f("cubic_coeff_a", -0.75f);
  p.excludeOutside = a.i("exclude_outside", 0) != 0;
  double extrapolation = a.f("extrapolation_value", 0.f);
  bool hasSizes = nin > 3 && in[3].present() && in[3].numel() > 0;
  bool hasScales = nin > 2 && in[2].present() && in[2].numel() > 0;
  bool hasRoi = nin > 1 && in[1].present() && in[1].numel() == 2 * r;
  if (!hasSizes && (!hasScales || in[2].numel() != r))
    return ctx.fail("Resize: needs scales or sizes with one value per dimension");
  if (x.numel() == 0 && y.numel() > 0) return ctx.fail("Resize: empty input, non-empty result");
  std::vector<AxisPlan> plans(r);
  for (int d = 0; d < r; ++d) {
    double scale = hasSizes ? static_cast<double>(y.dims[d]) / static_cast<double>(x.dims[d])
                            : readF(in[2], d);
    if (!(scale > 0)) return ctx.fail("Resize: scale %g on axis %d is not positive", scale, d);
    double rs = hasRoi ? readF(in[1], d) : 0.0, re = hasRoi ? readF(in[1], r + d) : 1.0;
    plans[d] = planAxis(p, x.dims[d], y.dims[d], scale, rs, re);
  }
  int64_t xs[kMaxRank], c[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = y.numel();
  bool copyOnly = p.mode == Mode::kNearest;
  std::vector<size_t> pos(r);
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, y.dims, r, c);
    bool outside = false;
    for (int d = 0; d < r; ++d) outside |= plans[d].outside[c[d]];
    if (outside) {
      writeF(y, i, extrapolation);
      continue;
    }
    if (copyOnly) {  // nearest: exactly one tap per axis with weight 1; copy bytes (any dtype)
      int64_t off = 0;
      for (int d = 0; d < r; ++d) off += plans[d].taps[c[d]][0].index * xs[d];
      copyElem(y, i, x, off, esz);
      continue;
    }
    // Sum over the product of the per-axis taps (an odometer over tap positions).
    double acc = 0;
    std::fill(pos.begin(), pos.end(), 0);
    for (;;) {
      double w = 1;
      int64_t off = 0;
      for (int d = 0; d < r; ++d) {
        const Tap& t = plans[d].taps[c[d]][pos[d]];
        w *= t.weight;
        off += t.index * xs[d];
      }
      acc += w * readF(x, off);
      int d = r - 1;
      for (; d >= 0; --d) {
        if (++pos[d] < plans[d].taps[c[d]].size()) break;
        pos[d] = 0;
      }
      if (d < 0) break;
    }
    writeF(y, i, acc);
  }
  return 0;
}

}  // namespace mgrt
