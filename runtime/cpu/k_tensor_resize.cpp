// Reference kernel of ONNX Resize (opset 11-19 semantics; the frontend rewrites Upsample and the
// opset-10 form into this operand layout: X, roi, scales, sizes).
//
// Resize is separable: every output coordinate along an axis maps to a source coordinate
// (coordinate_transformation_mode) and from there to a few weighted source taps (nearest: 1,
// linear: 2, cubic: 4). We build those tap lists per axis once and then sum over the product of
// the taps for every output element (resizePlan, declared in k_tensor_shared.h: the GPU lowering
// bakes the same tap lists into tables). This follows the ONNX reference implementation
// (onnx/backend/test/case/node/resize.py) exactly, including its choices at exact integer source
// coordinates (the tap on the left gets weight 0) and its edge padding (taps clamp to the border).
//
// Opset 18 and 19 additions:
//   - axes: scales/sizes/roi list only some axes; the others keep scale 1 (resizeGeometry).
//   - keep_aspect_ratio_policy: with sizes, one ratio for every listed axis (resizeGeometry).
//   - antialias (linear, cubic): the interpolation filter is stretched by 1/scale when
//     downscaling, so that every input pixel under it contributes (a box-like low-pass filter).
//     The taps follow onnxruntime's CPU kernel (upsample_antialias.h, after Pillow): the window
//     is [floor(c - support + 0.5), floor(c + support + 0.5)) around c = x_original + 0.5,
//     support = 1 (linear) or 2 (cubic) times max(1/scale, 1), weights filter((j - x_original) *
//     min(scale, 1)) normalized to sum 1; taps outside the input clamp to the border, or are
//     dropped with exclude_outside.
//   - half_pixel_symmetric (opset 19): half_pixel shifted so that the centre of the input maps
//     to the centre of the output when the output extent was rounded.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "k_tensor_resize.h"
#include "k_tensor_shared.h"
#include "k_tensor_util.h"
#include "mg_kernels.h"

namespace mgrt {

using namespace tensor_util;

namespace {

using Tap = ResizeTap;
using AxisPlan = ResizeAxisPlan;

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  std::string coord, nearest;
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};

// `outInt` is the output extent, `scale * inLen` the unrounded one.
double sourceCoord(const ResizeParams& p, double x, double scale, int64_t inLen, int64_t outInt,
                   double roiStart, double roiEnd, bool* outside) {
  double outLen = scale * static_cast<double>(inLen);
  const std::string& m = p.coord;
  if (m == "align_corners") return outLen == 1 ? 0.0 : x * (inLen - 1) / (outLen - 1);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "pytorch_half_pixel") return outLen > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "half_pixel_symmetric") {
    double adjustment = static_cast<double>(outInt) / outLen;
    double offset = static_cast<double>(inLen) / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
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

// The antialiasing filters (Pillow's, as onnxruntime uses them): triangle and Keys' cubic.
double antialiasFilter(const ResizeParams& p, double x) {
  x = std::fabs(x);
  if (p.mode == Mode::kLinear) return x < 1 ? 1 - x : 0;
  double A = p.cubicA;
  if (x < 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * A;
  return 0;
}

// Taps of output coordinate x with antialias (linear or cubic): see the file comment.
std::vector<Tap> antialiasTaps(const ResizeParams& p, double src, double scale, int64_t inLen) {
  double inPerOut = 1 / scale;
  double support = (p.mode == Mode::kCubic ? 2.0 : 1.0) * std::max(inPerOut, 1.0);
  double stretch = inPerOut >= 1 ? scale : 1.0;
  int64_t window = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  double center = src + 0.5;
  int64_t lo = static_cast<int64_t>(std::floor(center - support + 0.5));
  int64_t hi = static_cast<int64_t>(std::floor(center + support + 0.5));
  hi = lo + std::min(std::max<int64_t>(hi - lo, 0), window);
  std::vector<Tap> taps;
  double total = 0;
  for (int64_t j = lo; j < hi; ++j) {
    if (p.excludeOutside && (j < 0 || j >= inLen)) continue;
    double w = antialiasFilter(p, (static_cast<double>(j) - src) * stretch);
    total += w;
    if (w != 0) taps.push_back({std::min(std::max<int64_t>(j, 0), inLen - 1), w});
  }
  if (total != 0)
    for (Tap& t : taps) t.weight /= total;
  return taps;
}

AxisPlan planAxis(const ResizeParams& p, int64_t inLen, int64_t outLen, double scale,
                  double roiStart, double roiEnd) {
  AxisPlan plan;
  plan.taps.resize(static_cast<size_t>(outLen));
  plan.outside.assign(static_cast<size_t>(outLen), false);
  for (int64_t x = 0; x < outLen; ++x) {
    bool outside = false;
    double src = sourceCoord(p, static_cast<double>(x), scale, inLen, outLen, roiStart, roiEnd,
                             &outside);
    plan.outside[x] = outside;
    if (outside) continue;
    if (p.antialias && p.mode != Mode::kNearest) {
      // onnxruntime leaves an axis of scale 1 untouched (its coordinate is x itself).
      plan.taps[x] = antialiasTaps(p, scale == 1 ? static_cast<double>(x) : src, scale, inLen);
      if (plan.taps[x].empty()) plan.taps[x].push_back({0, 0.0});
      continue;
    }
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

std::string resizeGeometry(const std::vector<int64_t>& in, const std::vector<int64_t>& axes,
                           const std::vector<float>& scales, const std::vector<int64_t>& sizes,
                           const std::string& policy, ResizeGeometry* g) {
  const int64_t r = static_cast<int64_t>(in.size());
  auto str = [](int64_t v) { return std::to_string(v); };
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return "keep_aspect_ratio_policy '" + policy + "' is not stretch, not_larger or not_smaller";
  g->axes.clear();
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    if (a < -r || a >= r) return "axis " + str(a) + " is out of range for rank " + str(r);
    if (a < 0) a += r;
    if (seen[a]) return "axis " + str(a) + " appears twice in axes";
    seen[a] = true;
    g->axes.push_back(a);
  }
  if (axes.empty())
    for (int64_t d = 0; d < r; ++d) g->axes.push_back(d);
  const size_t n = g->axes.size();
  g->scales.assign(static_cast<size_t>(r), 1.0);
  g->out = in;
  if (!sizes.empty()) {
    if (sizes.size() != n)
      return "sizes have " + str(static_cast<int64_t>(sizes.size())) + " values, expected " +
             str(static_cast<int64_t>(n)) + (axes.empty() ? " (the rank)" : " (one per axis)");
    // onnxruntime computes the ratios and the policy's extents in float: so do we.
    std::vector<float> ratio(n, 1.0f);
    for (size_t k = 0; k < n; ++k) {
      int64_t a = g->axes[k];
      if (sizes[k] < 0) return "size " + str(sizes[k]) + " on axis " + str(a) + " is negative";
      if (in[a] == 0 && sizes[k] != 0) return "cannot grow axis " + str(a) + " of extent 0";
      if (in[a] > 0) ratio[k] = static_cast<float>(sizes[k]) / static_cast<float>(in[a]);
    }
    if (policy == "stretch") {
      for (size_t k = 0; k < n; ++k) {
        g->out[g->axes[k]] = sizes[k];
        g->scales[g->axes[k]] = ratio[k];
      }
      return "";
    }
    float pick = ratio[0];
    for (float v : ratio) pick = policy == "not_larger" ? std::min(pick, v) : std::max(pick, v);
    if (!(pick > 0)) return "keep_aspect_ratio_policy " + policy + " gives scale 0";
    for (size_t k = 0; k < n; ++k) {
      int64_t a = g->axes[k];
      g->scales[a] = pick;
      g->out[a] = static_cast<int64_t>(std::round(pick * static_cast<float>(in[a])));
    }
    return "";
  }
  if (scales.size() != n)
    return "scales have " + str(static_cast<int64_t>(scales.size())) + " values, expected " +
           str(static_cast<int64_t>(n)) + (axes.empty() ? " (the rank)" : " (one per axis)");
  for (size_t k = 0; k < n; ++k) {
    int64_t a = g->axes[k];
    double s = scales[k];
    if (!(s > 0) || !std::isfinite(s))
      return "scale " + std::to_string(s) + " on axis " + str(a) + " must be positive";
    double v = std::floor(static_cast<double>(in[a]) * s);
    if (v > 1e15) return "scale " + std::to_string(s) + " on axis " + str(a) + " is too large";
    g->scales[a] = s;
    g->out[a] = static_cast<int64_t>(v);
  }
  return "";
}

std::string resizePlan(const ResizeMode& m, const std::vector<int64_t>& in,
                       const std::vector<int64_t>& out, const ResizeGeometry& geo,
                       bool stretchedSizes, const std::vector<double>& roi,
                       std::vector<ResizeAxisPlan>* plans) {
  ResizeParams p;
  if (m.mode == "nearest") p.mode = Mode::kNearest;
  else if (m.mode == "linear" || m.mode == "bilinear" || m.mode == "trilinear") p.mode = Mode::kLinear;
  else if (m.mode == "cubic" || m.mode == "bicubic") p.mode = Mode::kCubic;
  else return "unknown mode '" + m.mode + "'";
  p.coord = m.coord;
  p.nearest = m.nearest;
  p.cubicA = m.cubicA;
  p.excludeOutside = m.excludeOutside;
  p.antialias = m.antialias;
  const int r = static_cast<int>(in.size());
  if (out.size() != in.size()) return "result rank differs from the input's";
  // roi: [starts..., ends...] of the listed axes; the others take the whole axis.
  const size_t nAxes = geo.axes.size();
  bool hasRoi = roi.size() == 2 * nAxes;
  std::vector<double> roiStart(r, 0.0), roiEnd(r, 1.0);
  for (size_t k = 0; hasRoi && k < nAxes; ++k) {
    roiStart[geo.axes[k]] = roi[k];
    roiEnd[geo.axes[k]] = roi[nAxes + k];
  }
  plans->assign(static_cast<size_t>(r), AxisPlan());
  for (int d = 0; d < r; ++d) {
    // Stretched sizes keep the exact ratio (as before opset 18); an empty axis resizes by 1.
    double scale = stretchedSizes ? static_cast<double>(out[d]) / static_cast<double>(in[d])
                                  : geo.scales[d];
    if (in[d] == 0) scale = 1;
    if (!(scale > 0)) return "scale " + std::to_string(scale) + " on axis " + std::to_string(d) + " is not positive";
    (*plans)[d] = planAxis(p, in[d], out[d], scale, roiStart[d], roiEnd[d]);
  }
  return "";
}

std::string resizeCallPlan(const Attrs& a, const Tensor* in, int nin, const Tensor& y, ResizeMode* mode,
                           std::vector<ResizeAxisPlan>* plans) {
  const Tensor& x = in[0];
  int r = x.rank;
  ResizeMode& m = *mode;
  m.mode = a.s("mode", "nearest");
  m.coord = a.s("coordinate_transformation_mode", "half_pixel");
  m.nearest = a.s("nearest_mode", "round_prefer_floor");
  m.cubicA = a.f("cubic_coeff_a", -0.75f);
  m.excludeOutside = a.i("exclude_outside", 0) != 0;
  m.antialias = a.i("antialias", 0) != 0;
  bool hasSizes = nin > 3 && in[3].present() && in[3].numel() > 0;
  bool hasScales = nin > 2 && in[2].present() && in[2].numel() > 0;
  if (!hasSizes && !hasScales) return "needs scales or sizes";
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (hasSizes) {
    for (int64_t k = 0; k < in[3].numel(); ++k) sizes.push_back(readI(in[3], k));
  } else {
    for (int64_t k = 0; k < in[2].numel(); ++k)
      scales.push_back(static_cast<float>(readF(in[2], k)));
  }
  const std::string policy = a.s("keep_aspect_ratio_policy", "stretch");
  ResizeGeometry geo;
  std::string err = resizeGeometry(std::vector<int64_t>(x.dims, x.dims + r), a.ints("axes"),
                                   scales, sizes, policy, &geo);
  if (!err.empty()) return err;
  if (y.rank != r) return "result rank differs from the input's";
  for (int d = 0; d < r; ++d)
    if (geo.out[d] != y.dims[d])
      return "result extent " + std::to_string(y.dims[d]) + " on axis " + std::to_string(d) +
             ", expected " + std::to_string(geo.out[d]);
  std::vector<double> roi;
  for (int64_t k = 0; nin > 1 && in[1].present() && k < in[1].numel(); ++k) roi.push_back(readF(in[1], k));
  if (x.numel() == 0 && y.numel() > 0) return "empty input, non-empty result";
  return resizePlan(m, std::vector<int64_t>(x.dims, x.dims + r), std::vector<int64_t>(y.dims, y.dims + r),
                    geo, hasSizes && policy == "stretch", roi, plans);
}

MG_TENSOR_KERNEL(kResize) {
  const Tensor& x = in[0];
  const Tensor& y = out[0];
  int r = x.rank;
  ResizeMode m;
  std::vector<AxisPlan> plans;
  std::string err = resizeCallPlan(a, in, nin, y, &m, &plans);
  if (!err.empty()) return ctx.fail("Resize: %s", err.c_str());
  double extrapolation = a.f("extrapolation_value", 0.f);
  int64_t xs[kMaxRank], c[kMaxRank];
  stridesOf(x, xs);
  size_t esz = elemSize(x);
  int64_t total = y.numel();
  bool copyOnly = m.mode == "nearest";
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
