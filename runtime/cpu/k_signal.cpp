// Reference kernels: the signal-processing ops HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix, DFT and STFT (opset 17; schemas in src/ops/signal_ops.cpp). Signals and
// generated tensors are float32 or float64; everything is computed in double and rounded once.
//
//   windows    w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), n < size, N = size when
//              periodic (the default), size - 1 when symmetric; a symmetric window of one point
//              is [1] (its peak, as numpy's and torch's are: the formula would divide 0 by 0).
//              Hann (0.5, 0.5, 0), Hamming (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08).
//   DFT        X[k] = sum_j x[j] e^(-2 pi i j k / n) along `axis` (inverse: e^(+...) / n), n =
//              dft_length (the axis zero-padded or cut to it) or the axis' length; onesided keeps
//              k <= n / 2. A plain O(n^2) sum over a table of the n twiddle factors.
//   STFT       the DFT of each frame signal[b, f * frame_step + j] * window[j], j < frame_length.
//   MelWeightMatrix  ONNX's triangular filter bank: num_mel_bins + 2 points equally spaced on the
//              mel scale mel(f) = 2595 log10(1 + f / 700) from lower_edge_hertz to
//              upper_edge_hertz (step (high - low) / (num_mel_bins + 2)), each mapped to the
//              spectrogram bin floor((dft_length + 1) hz / sample_rate); filter i rises from 0 at
//              point i to 1 at point i + 1 and falls to 0 at point i + 2.
// Complex values are pairs (real, imaginary) in a trailing dim of 2; a real signal's is 1.
#include <algorithm>
#include <cmath>
#include <vector>

#include "mg_kernels.h"

namespace mgrt {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool isIndex(const Tensor& t) { return t.dtype == kI32 || t.dtype == kI64; }
bool isReal(const Tensor& t) { return t.dtype == kF32 || t.dtype == kF64; }

int64_t intScalar(const Tensor& t) {
  return t.dtype == kI32 ? static_cast<int64_t>(t.as<int32_t>()[0]) : t.as<int64_t>()[0];
}

double floatScalar(const Tensor& t) {
  return t.dtype == kF32 ? static_cast<double>(t.as<float>()[0]) : t.as<double>()[0];
}

double floatAt(const Tensor& t, int64_t i) {
  return t.dtype == kF32 ? static_cast<double>(t.as<float>()[i]) : t.as<double>()[i];
}

void storeAt(Tensor& t, int64_t i, double v) {
  if (t.dtype == kF32) t.as<float>()[i] = static_cast<float>(v);
  else t.as<double>()[i] = v;
}

// Operand i is present and one int32/int64 value.
int requireIntScalar(const char* op, const Tensor* in, int nin, int i, const char* what,
                     Ctx& ctx) {
  if (i >= nin || !in[i].present() || !isIndex(in[i]) || in[i].numel() != 1)
    return ctx.fail("%s: %s must be an int32 or int64 scalar", op, what);
  return 0;
}

// Fails unless the operand value v (named `what`) is at least `min`.
int requireAtLeast(const char* op, const char* what, int64_t v, int64_t min, Ctx& ctx) {
  if (v >= min) return 0;
  return ctx.fail("%s: %s must be >= %lld, got %lld", op, what, static_cast<long long>(min),
                  static_cast<long long>(v));
}

int requireResult(const char* op, Tensor* out, int nout, int64_t numel, Ctx& ctx) {
  if (nout < 1 || !out[0].present() || !isReal(out[0]))
    return ctx.fail("%s: expected one float32 or float64 result", op);
  if (out[0].numel() != numel)
    return ctx.fail("%s: the result has %lld elements, expected %lld", op,
                    static_cast<long long>(out[0].numel()), static_cast<long long>(numel));
  return 0;
}

// ---- windows -------------------------------------------------------------------------------

struct WindowCoeffs {
  double a0, a1, a2;
};

int window(const char* op, WindowCoeffs w, const Attrs& a, const Tensor* in, int nin, Tensor* out,
           int nout, Ctx& ctx) {
  if (requireIntScalar(op, in, nin, 0, "size", ctx)) return 1;
  const int64_t size = intScalar(in[0]);
  if (requireAtLeast(op, "size", size, 0, ctx)) return 1;
  if (requireResult(op, out, nout, size, ctx)) return 1;
  const int64_t N = a.i("periodic", 1) != 0 ? size : size - 1;
  for (int64_t n = 0; n < size; ++n) {
    double v = 1.0;
    if (N > 0) {
      const double t = 2.0 * kPi * static_cast<double>(n) / static_cast<double>(N);
      v = w.a0 - w.a1 * std::cos(t) + w.a2 * std::cos(2.0 * t);
    }
    storeAt(out[0], n, v);
  }
  return 0;
}

int kHannWindow(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return window("HannWindow", {0.5, 0.5, 0.0}, a, in, nin, out, nout, ctx);
}

int kHammingWindow(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return window("HammingWindow", {25.0 / 46.0, 21.0 / 46.0, 0.0}, a, in, nin, out, nout, ctx);
}

int kBlackmanWindow(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return window("BlackmanWindow", {0.42, 0.5, 0.08}, a, in, nin, out, nout, ctx);
}

// ---- MelWeightMatrix -----------------------------------------------------------------------

double hzToMel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double melToHz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

int kMelWeightMatrix(const Attrs&, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "MelWeightMatrix";
  if (requireIntScalar(op, in, nin, 0, "num_mel_bins", ctx) ||
      requireIntScalar(op, in, nin, 1, "dft_length", ctx) ||
      requireIntScalar(op, in, nin, 2, "sample_rate", ctx))
    return 1;
  for (int i : {3, 4})
    if (nin <= i || !in[i].present() || !isReal(in[i]) || in[i].numel() != 1)
      return ctx.fail("%s: %s must be a float32 or float64 scalar", op,
                      i == 3 ? "lower_edge_hertz" : "upper_edge_hertz");
  const int64_t melBins = intScalar(in[0]), dftLength = intScalar(in[1]),
                sampleRate = intScalar(in[2]);
  if (melBins < 1 || dftLength < 1 || sampleRate < 1)
    return ctx.fail("%s: num_mel_bins, dft_length and sample_rate must be >= 1, got %lld, %lld, "
                    "%lld",
                    op, static_cast<long long>(melBins), static_cast<long long>(dftLength),
                    static_cast<long long>(sampleRate));
  const int64_t specBins = dftLength / 2 + 1;
  if (requireResult(op, out, nout, specBins * melBins, ctx)) return 1;

  const double lowMel = hzToMel(floatScalar(in[3])), highMel = hzToMel(floatScalar(in[4]));
  const double melStep = (highMel - lowMel) / static_cast<double>(melBins + 2);
  std::vector<int64_t> point(static_cast<size_t>(melBins + 2));
  for (int64_t i = 0; i < melBins + 2; ++i) {
    const double hz = melToHz(static_cast<double>(i) * melStep + lowMel);
    const double bin = std::floor(static_cast<double>(dftLength + 1) * hz /
                                  static_cast<double>(sampleRate));
    if (!(bin >= 0 && bin <= 1e15))  // also NaN
      return ctx.fail("%s: mel point %lld (%g Hz) falls on spectrogram bin %g: the edges must "
                      "lie in [0, sample_rate / 2]",
                      op, static_cast<long long>(i), hz, bin);
    point[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }

  Tensor& y = out[0];
  for (int64_t i = 0; i < specBins * melBins; ++i) storeAt(y, i, 0.0);
  for (int64_t i = 0; i < melBins; ++i) {
    const int64_t left = point[i], center = point[i + 1], right = point[i + 2];
    // Filter i's value at spectrogram bin j (bins are >= 0; the upper edge may reach too far).
    auto put = [&](int64_t j, double v) {
      if (j >= specBins) return false;
      storeAt(y, j * melBins + i, v);
      return true;
    };
    bool ok = true;
    // Rising edge [left, center] (a single 1 where left == center), then falling [center, right).
    if (center == left) ok = put(center, 1.0);
    for (int64_t j = left; ok && j <= center && center > left; ++j)
      ok = put(j, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = center; ok && j < right; ++j)
      ok = put(j, static_cast<double>(right - j) / static_cast<double>(right - center));
    if (!ok)
      return ctx.fail("%s: mel filter %lld reaches past the last spectrogram bin (%lld): "
                      "upper_edge_hertz must be at most sample_rate / 2",
                      op, static_cast<long long>(i), static_cast<long long>(specBins - 1));
  }
  return 0;
}

// ---- DFT and STFT --------------------------------------------------------------------------

// The transform of length n: its twiddle factors e^(-+2 pi i m / n), m < n, computed once.
class Dft {
 public:
  Dft(int64_t n, bool inverse) : n_(n), inverse_(inverse), cos_(n), sin_(n) {
    for (int64_t m = 0; m < n; ++m) {
      const double t = 2.0 * kPi * static_cast<double>(m) / static_cast<double>(n);
      cos_[m] = std::cos(t);
      sin_[m] = inverse ? std::sin(t) : -std::sin(t);
    }
  }

  // X[k], k < bins, of the n points (re, im).
  void run(const double* re, const double* im, int64_t bins, double* outRe, double* outIm) const {
    const double scale = inverse_ ? 1.0 / static_cast<double>(n_) : 1.0;
    for (int64_t k = 0; k < bins; ++k) {
      double sr = 0, si = 0;
      for (int64_t j = 0; j < n_; ++j) {
        const int64_t m = (j * k) % n_;  // e^(i t j k) = e^(i t (j k mod n))
        sr += re[j] * cos_[m] - im[j] * sin_[m];
        si += re[j] * sin_[m] + im[j] * cos_[m];
      }
      outRe[k] = sr * scale;
      outIm[k] = si * scale;
    }
  }

 private:
  int64_t n_;
  bool inverse_;
  std::vector<double> cos_, sin_;
};

int requireSignal(const char* op, const Tensor* in, int nin, int minRank, Ctx& ctx) {
  if (nin < 1 || !in[0].present() || !isReal(in[0]))
    return ctx.fail("%s: the signal must be float32 or float64", op);
  if (in[0].rank < minRank || (in[0].dims[in[0].rank - 1] != 1 && in[0].dims[in[0].rank - 1] != 2))
    return ctx.fail("%s: the signal must have rank >= %d and a last dim of 1 (real) or 2 "
                    "(complex)",
                    op, minRank);
  return 0;
}

int kDFT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "DFT";
  if (requireSignal(op, in, nin, 3, ctx)) return 1;
  const Tensor& x = in[0];
  const int r = x.rank;
  const int64_t c = x.dims[r - 1];
  int64_t axis = a.i("axis", 1);
  if (axis < -r || axis > r - 2 || axis == -1)
    return ctx.fail("%s: axis %lld is out of range for a rank-%d input", op,
                    static_cast<long long>(axis), r);
  if (axis < 0) axis += r;
  const bool inverse = a.i("inverse", 0) != 0, onesided = a.i("onesided", 0) != 0;
  if (onesided && c == 2) return ctx.fail("%s: onesided = 1 needs a real input", op);
  const int64_t len = x.dims[axis];
  int64_t n = len;
  if (nin > 1 && in[1].present()) {
    if (requireIntScalar(op, in, nin, 1, "dft_length", ctx)) return 1;
    n = intScalar(in[1]);
  }
  if (requireAtLeast(op, "dft_length", n, 1, ctx)) return 1;
  const int64_t bins = onesided ? n / 2 + 1 : n;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.dims[i];
  for (int i = static_cast<int>(axis) + 1; i < r - 1; ++i) inner *= x.dims[i];
  if (requireResult(op, out, nout, outer * bins * inner * 2, ctx)) return 1;
  if (out[0].dtype != x.dtype) return ctx.fail("%s: the result must have the input's type", op);

  const Dft dft(n, inverse);
  const int64_t used = std::min(n, len);
  std::vector<double> re(n), im(n), yr(bins), yi(bins);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::fill(re.begin(), re.end(), 0.0);
      std::fill(im.begin(), im.end(), 0.0);
      for (int64_t j = 0; j < used; ++j) {
        const int64_t at = ((o * len + j) * inner + i) * c;
        re[j] = floatAt(x, at);
        if (c == 2) im[j] = floatAt(x, at + 1);
      }
      dft.run(re.data(), im.data(), bins, yr.data(), yi.data());
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((o * bins + k) * inner + i) * 2;
        storeAt(out[0], at, yr[k]);
        storeAt(out[0], at + 1, yi[k]);
      }
    }
  return 0;
}

int kSTFT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "STFT";
  if (requireSignal(op, in, nin, 3, ctx)) return 1;
  const Tensor& x = in[0];
  if (x.rank != 3) return ctx.fail("%s: the signal must be [batch, signal_length, 1|2]", op);
  const int64_t batch = x.dims[0], signalLength = x.dims[1], c = x.dims[2];
  if (requireIntScalar(op, in, nin, 1, "frame_step", ctx)) return 1;
  const int64_t step = intScalar(in[1]);
  if (requireAtLeast(op, "frame_step", step, 1, ctx)) return 1;
  const Tensor* window = nin > 2 && in[2].present() ? &in[2] : nullptr;
  if (window && (window->rank != 1 || window->dtype != x.dtype))
    return ctx.fail("%s: the window must be a vector of the signal's type", op);
  int64_t length = window ? window->dims[0] : -1;
  if (nin > 3 && in[3].present()) {
    if (requireIntScalar(op, in, nin, 3, "frame_length", ctx)) return 1;
    const int64_t fl = intScalar(in[3]);
    if (window && fl != length)
      return ctx.fail("%s: frame_length %lld differs from the window's length %lld", op,
                      static_cast<long long>(fl), static_cast<long long>(length));
    length = fl;
  }
  if (length < 1 || length > signalLength)
    return ctx.fail("%s: the frame length (%lld) must be in [1, %lld], the signal's length", op,
                    static_cast<long long>(length), static_cast<long long>(signalLength));
  const bool onesided = a.i("onesided", 1) != 0;
  if (onesided && c == 2) return ctx.fail("%s: onesided = 1 needs a real signal", op);
  const int64_t frames = (signalLength - length) / step + 1;
  const int64_t bins = onesided ? length / 2 + 1 : length;
  if (requireResult(op, out, nout, batch * frames * bins * 2, ctx)) return 1;
  if (out[0].dtype != x.dtype) return ctx.fail("%s: the result must have the signal's type", op);

  const Dft dft(length, /*inverse=*/false);
  std::vector<double> re(length), im(length), yr(bins), yi(bins);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < length; ++j) {
        const int64_t at = (b * signalLength + f * step + j) * c;
        const double w = window ? floatAt(*window, j) : 1.0;
        re[j] = floatAt(x, at) * w;
        im[j] = c == 2 ? floatAt(x, at + 1) * w : 0.0;
      }
      dft.run(re.data(), im.data(), bins, yr.data(), yi.data());
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((b * frames + f) * bins + k) * 2;
        storeAt(out[0], at, yr[k]);
        storeAt(out[0], at + 1, yi[k]);
      }
    }
  return 0;
}

}  // namespace

const KernelEntry* signalKernels() {
  static const KernelEntry kTable[] = {
      {"HannWindow", kHannWindow},   {"HammingWindow", kHammingWindow},
      {"BlackmanWindow", kBlackmanWindow}, {"MelWeightMatrix", kMelWeightMatrix},
      {"DFT", kDFT},                 {"STFT", kSTFT},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
