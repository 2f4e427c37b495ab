// Spatial geometry of convolutions and pools: output sizes and the padding that auto_pad resolves
// to. Shared by the compiler's shape inference (src/ops/nn_ops*.cpp) and by every kernel (reference
// k_nn_*.cpp and the optimized f_*.cpp), so that the shape the compiler allocated and the loops a
// kernel runs always agree. Attributes stay as the model has them (auto_pad is NOT rewritten into
// pads); both sides call these functions instead.
//
// Formulas (ONNX, per spatial dim; k' = (k - 1) * dilation + 1):
//   NOTSET      out = floor((in + pb + pe - k') / s) + 1       (ceil_mode: ceil instead of floor,
//               then a last window that would start in the end padding is dropped, as PyTorch and
//               onnxruntime do)
//   VALID       pads 0, same formula
//   SAME_UPPER  out = ceil(in / s); total = max(0, (out - 1) * s + k' - in);
//               pb = total / 2, pe = total - pb            (SAME_LOWER: pe = total / 2)
// ConvTranspose:
//   out = s * (in - 1) + output_padding + k' - pb - pe, or output_shape when given, in which case
//   total = max(0, s * (in - 1) + output_padding + k' - output_shape) is split as ONNX says:
//   SAME_UPPER: pb = total / 2, pe = total - pb; otherwise pb = total - total / 2, pe = total / 2.
//   auto_pad SAME_* without output_shape means output_shape = in * s.
// Plain C++17, no dependency beyond the standard library: generated packages carry this file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

// False when the name is none of NOTSET, VALID, SAME_UPPER, SAME_LOWER ("" means NOTSET).
inline bool parseAutoPad(const std::string& s, AutoPad* out) {
  if (s.empty() || s == "NOTSET") *out = AutoPad::kNotSet;
  else if (s == "VALID") *out = AutoPad::kValid;
  else if (s == "SAME_UPPER") *out = AutoPad::kSameUpper;
  else if (s == "SAME_LOWER") *out = AutoPad::kSameLower;
  else return false;
  return true;
}

inline std::string joinInts(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Resolved geometry of one conv/pool over nsp spatial dims. All vectors have nsp entries.
struct SpatialGeometry {
  int nsp = 0;
  std::vector<int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
  std::vector<int64_t> outputPadding;  // ConvTranspose only
};

// Everything the attributes say, as the model wrote it (empty vectors: attribute absent).
struct SpatialAttrs {
  std::vector<int64_t> kernelShape, strides, dilations, pads;
  std::vector<int64_t> outputPadding, outputShape;  // ConvTranspose only
  AutoPad autoPad = AutoPad::kNotSet;
  bool ceilMode = false;  // pools only
};

namespace detail {
inline int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Fills stride/dilation/pads defaults and checks their lengths and values. "" when fine.
inline std::string commonChecks(const char* op, int nsp, const SpatialAttrs& a,
                                SpatialGeometry* g) {
  auto fill = [&](const std::vector<int64_t>& v, int64_t def, std::vector<int64_t>* dst,
                  const char* name, size_t want) -> std::string {
    if (v.empty()) {
      dst->assign(want, def);
      return "";
    }
    if (v.size() != want)
      return std::string(op) + ": " + name + " has " + std::to_string(v.size()) +
             " values, expected " + std::to_string(want) + " (" + std::to_string(nsp) +
             " spatial dims" + (want == size_t(2 * nsp) ? ", begins then ends" : "") + ")";
    *dst = v;
    return "";
  };
  std::string e;
  if (!(e = fill(a.strides, 1, &g->stride, "strides", nsp)).empty()) return e;
  if (!(e = fill(a.dilations, 1, &g->dilation, "dilations", nsp)).empty()) return e;
  std::vector<int64_t> pads;
  if (!(e = fill(a.pads, 0, &pads, "pads", 2 * nsp)).empty()) return e;
  // Bounds that keep every product below in int64 (no model comes near them).
  const int64_t kLimit = int64_t{1} << 31;
  for (int i = 0; i < nsp; ++i) {
    if (g->stride[i] >= kLimit || g->dilation[i] >= kLimit || pads[i] >= kLimit ||
        pads[i + nsp] >= kLimit || g->kernel[i] >= kLimit)
      return std::string(op) + ": strides, dilations, pads and kernel sizes must be below 2^31";
    if (g->stride[i] <= 0)
      return std::string(op) + ": strides must be positive, got " + joinInts(g->stride);
    if (g->dilation[i] <= 0)
      return std::string(op) + ": dilations must be positive, got " + joinInts(g->dilation);
    if (pads[i] < 0 || pads[i + nsp] < 0)
      return std::string(op) + ": pads must not be negative, got " + joinInts(pads);
  }
  g->padBegin.assign(pads.begin(), pads.begin() + nsp);
  g->padEnd.assign(pads.begin() + nsp, pads.end());
  return "";
}
}  // namespace detail

// Conv and the pools. inDims: the nsp spatial input sizes; kernel: the spatial kernel (from the
// weight for Conv, from kernel_shape for pools; a.kernelShape, when given, must match its
// length). Returns "" and fills *g, or an error message saying what was expected.
inline std::string resolveConvGeometry(const char* op, const std::vector<int64_t>& inDims,
                                       const std::vector<int64_t>& kernel, const SpatialAttrs& a,
                                       SpatialGeometry* g) {
  int nsp = static_cast<int>(inDims.size());
  g->nsp = nsp;
  g->in = inDims;
  if (kernel.size() != inDims.size())
    return std::string(op) + ": kernel_shape has " + std::to_string(kernel.size()) +
           " values, input has " + std::to_string(nsp) + " spatial dims";
  for (int i = 0; i < nsp; ++i)
    if (kernel[i] <= 0)
      return std::string(op) + ": kernel sizes must be positive, got " + joinInts(kernel);
  g->kernel = kernel;
  std::string e = detail::commonChecks(op, nsp, a, g);
  if (!e.empty()) return e;
  g->out.assign(nsp, 0);
  for (int i = 0; i < nsp; ++i) {
    int64_t in = inDims[i], s = g->stride[i], kd = (kernel[i] - 1) * g->dilation[i] + 1;
    if (a.autoPad == AutoPad::kSameUpper || a.autoPad == AutoPad::kSameLower) {
      int64_t out = detail::ceilDiv(in, s);
      int64_t total = (out - 1) * s + kd - in;
      if (total < 0) total = 0;
      int64_t small = total / 2;
      g->padBegin[i] = a.autoPad == AutoPad::kSameUpper ? small : total - small;
      g->padEnd[i] = total - g->padBegin[i];
      g->out[i] = out;
      continue;
    }
    if (a.autoPad == AutoPad::kValid) g->padBegin[i] = g->padEnd[i] = 0;
    int64_t span = in + g->padBegin[i] + g->padEnd[i] - kd;
    if (span < 0)
      return std::string(op) + ": spatial dim " + std::to_string(i) + " of size " +
             std::to_string(in) + " (padded " + std::to_string(in + g->padBegin[i] + g->padEnd[i]) +
             ") is smaller than the dilated kernel " + std::to_string(kd);
    int64_t out = (a.ceilMode ? detail::ceilDiv(span, s) : detail::floorDiv(span, s)) + 1;
    if (a.ceilMode && out > 1 && (out - 1) * s >= in + g->padBegin[i]) --out;
    g->out[i] = out;
  }
  return "";
}

// ConvTranspose. inDims: spatial input sizes; kernel: spatial kernel from the weight.
inline std::string resolveConvTransposeGeometry(const std::vector<int64_t>& inDims,
                                                const std::vector<int64_t>& kernel,
                                                const SpatialAttrs& a, SpatialGeometry* g) {
  const char* op = "ConvTranspose";
  int nsp = static_cast<int>(inDims.size());
  g->nsp = nsp;
  g->in = inDims;
  if (kernel.size() != inDims.size())
    return std::string(op) + ": kernel_shape has " + std::to_string(kernel.size()) +
           " values, input has " + std::to_string(nsp) + " spatial dims";
  for (int i = 0; i < nsp; ++i)
    if (kernel[i] <= 0)
      return std::string(op) + ": kernel sizes must be positive, got " + joinInts(kernel);
  g->kernel = kernel;
  std::string e = detail::commonChecks(op, nsp, a, g);
  if (!e.empty()) return e;
  if (a.outputPadding.empty()) {
    g->outputPadding.assign(nsp, 0);
  } else if (a.outputPadding.size() != size_t(nsp)) {
    return std::string(op) + ": output_padding has " + std::to_string(a.outputPadding.size()) +
           " values, expected " + std::to_string(nsp);
  } else {
    g->outputPadding = a.outputPadding;
  }
  std::vector<int64_t> outShape = a.outputShape;
  // Older models give output_shape with the batch and channel dims in front.
  if (outShape.size() == size_t(nsp + 2)) outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (!outShape.empty() && outShape.size() != size_t(nsp))
    return std::string(op) + ": output_shape has " + std::to_string(a.outputShape.size()) +
           " values, expected " + std::to_string(nsp) + " spatial sizes";
  bool same = a.autoPad == AutoPad::kSameUpper || a.autoPad == AutoPad::kSameLower;
  g->out.assign(nsp, 0);
  for (int i = 0; i < nsp; ++i) {
    int64_t s = g->stride[i], kd = (kernel[i] - 1) * g->dilation[i] + 1;
    if (g->outputPadding[i] < 0 || g->outputPadding[i] >= std::max(s, g->dilation[i]))
      return std::string(op) + ": output_padding must be in [0, max(stride, dilation)), got " +
             joinInts(g->outputPadding);
    int64_t full = s * (inDims[i] - 1) + g->outputPadding[i] + kd;
    if (a.autoPad == AutoPad::kValid) g->padBegin[i] = g->padEnd[i] = 0;
    if (!outShape.empty() || same) {
      int64_t want = !outShape.empty() ? outShape[i] : inDims[i] * s;
      if (want <= 0)
        return std::string(op) + ": output_shape must be positive, got " +
               joinInts(a.outputShape);
      int64_t total = full - want;
      if (total < 0) total = 0;
      if (a.autoPad == AutoPad::kSameUpper) {
        g->padBegin[i] = total / 2;
        g->padEnd[i] = total - total / 2;
      } else {
        g->padBegin[i] = total - total / 2;
        g->padEnd[i] = total / 2;
      }
      g->out[i] = want;
      continue;
    }
    int64_t out = full - g->padBegin[i] - g->padEnd[i];
    if (out <= 0)
      return std::string(op) + ": pads " + joinInts(a.pads) + " leave no output in spatial dim " +
             std::to_string(i);
    g->out[i] = out;
  }
  return "";
}

}  // namespace mgrt
