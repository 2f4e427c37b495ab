// GPU lowering of DFT, STFT and MelWeightMatrix (float32 and float64) as generated map functors.
// DFT and STFT: one thread per
// output number (the real or the imaginary part of bin k of one line or frame) sums the line's
// terms in double in the CPU runtime's order (runtime/cpu/k_signal.cpp), O(n) per output, with
// the twiddle angle 2 pi ((j k) mod n) / n, the same reduction of the angle as the CPU's table.
//   DFT    the operand's strides over the signal axis and the trailing 1|2 dim are 0, so idx[0]
//          is the start of the output's line; the line is read with the axis' stride.
//   STFT   idx[0] is the start of the output's frame (batch * length + frame * frame_step); the
//          window (optional) is a second operand of stride 0, read at j.
// MelWeightMatrix (reached only when sample_rate or an edge is bound at run time; otherwise it
// folds): one thread per output (bin j, filter i) computes the filter's three mel points as the
// CPU does and its value at j. Where the CPU fails the run (a point below 0, a filter reaching
// past the last bin, a sample_rate below 1) the filter is NaN: a GPU program cannot stop a run.
// The windows fold at compile time (their one operand, the size, is a shape operand, so it is a
// constant) and never reach the GPU.
#include <fmt/format.h>

#include <cstdint>

#include "gpu_lowering.h"

namespace magneto {
namespace gpu {
namespace {

// Statements of the functor's loop: `s` (double) += term j of output bin `k` (an int64_t
// variable) of the n-point transform of the line at p, whose point j is p[j * stride] (and its
// imaginary part at + 1 when complex), times w[j] when windowed; `part` selects real (0) or
// imaginary (1). `used` points are read (the rest are the zero padding).
std::string dftSum(int64_t n, int64_t used, int64_t stride, bool complex, bool inverse,
                   bool windowed) {
  std::string f;
  f += "    double s = 0;\n";
  f += fmt::format("    for (int64_t j = 0; j < {}; ++j) {{\n", used);
  f += fmt::format("      const double t = 6.283185307179586476925 * static_cast<double>((j * k) % "
                   "{0}) / {0}.0;\n",
                   n);
  f += fmt::format("      const double c = cos(t), sn = {}sin(t);\n", inverse ? "" : "-");
  f += fmt::format("      const double w = {};\n", windowed ? "static_cast<double>(w0[j])" : "1.0");
  f += fmt::format("      const double re = static_cast<double>(p[j * {}]) * w;\n", stride);
  if (complex)
    f += fmt::format("      const double im = static_cast<double>(p[j * {} + 1]) * w;\n", stride);
  else
    f += "      const double im = 0;\n";
  f += "      s += part == 0 ? re * c - im * sn : re * sn + im * c;\n";
  f += "    }\n";
  return f;
}

Status requireFloat(const Node& n, DType t) {
  if (t != DType::kF32 && t != DType::kF64)
    return unsupported("{}: signals of type {} on the cuda/hip targets (f32 and f64 are lowered)",
                       n.describe(), dtypeName(t));
  return Status::success();
}

}  // namespace

Expected<std::vector<GpuItem>> lowerDFT(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  MG_RETURN_IF_ERROR(requireFloat(n, x->dtype()));
  const char* T = ctypeOf(x->dtype());
  const int r = x->rank();
  int64_t axis = n.attrs().getInt("axis", 1);
  if (axis < 0) axis += r;
  const bool inverse = n.attrs().getInt("inverse", 0) != 0;
  const Dims& xd = x->dims();
  const int64_t c = xd[r - 1], len = xd[axis], bins = y->dims()[axis];
  int64_t points = len;  // dft_length: a constant (shape operand), else the axis' length
  if (n.hasInput(1)) {
    const Tensor* l = n.input(1)->isConstant() ? &n.input(1)->constant() : nullptr;
    if (!l || !l->hasData())
      return unsupported("{}: dft_length must be a constant on the cuda/hip targets", n.describe());
    points = l->intAt(0);
  }
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < r - 1; ++d) inner *= xd[d];

  std::vector<int64_t> xs = contiguousStrides(xd), over = xs;
  over[axis] = 0;
  over[r - 1] = 0;
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const {0}* const p = static_cast<const {0}*>(in[0]) + idx[0];\n", T);
  f += fmt::format("    const int64_t k = (o / {}) % {}, part = o % 2;\n", inner * 2, bins);
  f += dftSum(points, std::min(points, len), xs[axis], c == 2, inverse, false);
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(s{1});\n", T,
                   inverse ? fmt::format(" / {}.0", points) : std::string());
  f += kFunctorTail;
  return std::vector<GpuItem>{mapItem(name, f, y->dims(), {{cx.ptr(x), 0, over}}, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerSTFT(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  MG_RETURN_IF_ERROR(requireFloat(n, x->dtype()));
  const char* T = ctypeOf(x->dtype());
  const Dims& xd = x->dims();
  const Tensor* stepT = n.input(1)->isConstant() ? &n.input(1)->constant() : nullptr;
  if (!stepT || !stepT->hasData())
    return unsupported("{}: frame_step must be a constant on the cuda/hip targets", n.describe());
  const int64_t step = stepT->intAt(0), c = xd[2], bins = y->dims()[2];
  const bool windowed = n.hasInput(2);
  int64_t length = windowed ? n.input(2)->dims()[0] : 0;
  if (!windowed) {
    const Tensor* l = n.input(3)->isConstant() ? &n.input(3)->constant() : nullptr;
    if (!l || !l->hasData())
      return unsupported("{}: frame_length must be a constant on the cuda/hip targets",
                         n.describe());
    length = l->intAt(0);
  }

  std::vector<MapOperand> ops = {{cx.ptr(x), 0, {xd[1] * c, step * c, 0, 0}}};
  if (windowed) ops.push_back({cx.ptr(n.input(2)), 0, {0, 0, 0, 0}});
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const {0}* const p = static_cast<const {0}*>(in[0]) + idx[0];\n", T);
  if (windowed)
    f += fmt::format("    const {0}* const w0 = static_cast<const {0}*>(in[1]) + idx[1];\n", T);
  f += fmt::format("    const int64_t k = (o / 2) % {}, part = o % 2;\n", bins);
  f += dftSum(length, length, c, c == 2, false, windowed);
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(s);\n", T);
  f += kFunctorTail;
  return std::vector<GpuItem>{mapItem(name, f, y->dims(), ops, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

Expected<std::vector<GpuItem>> lowerMelWeightMatrix(const Node& n, const TileConfig& tile,
                                                    LowerContext& cx) {
  const Value* y = n.output(0);
  const int64_t specBins = y->dims()[0], melBins = y->dims()[1];
  const int64_t dftLength = n.input(1)->constant().intAt(0);  // a shape operand: constant
  const char* T = ctypeOf(y->dtype());
  // Output (j, i) is filter i at spectrogram bin j: it computes mel points i, i + 1, i + 2.
  std::string name = functorName(cx), f = functorHead(name);
  f += fmt::format("    const int64_t j = o / {0}, i = o % {0};\n", melBins);
  // Operands 0, 1, 2 of the item: sample_rate, lower_edge_hertz, upper_edge_hertz.
  const char* scalars[] = {"rate", "lo", "hi"};
  for (int k = 0; k < 3; ++k)
    f += fmt::format("    const double {} = static_cast<double>(static_cast<const {}*>(in[{}])[idx[{}]]);"
                     "\n",
                     scalars[k], ctypeOf(n.input(k + 2)->dtype()), k, k);
  f += "    const double lowMel = 2595.0 * log10(1.0 + lo / 700.0);\n";
  f += "    const double highMel = 2595.0 * log10(1.0 + hi / 700.0);\n";
  f += fmt::format("    const double step = (highMel - lowMel) / {}.0;\n", melBins + 2);
  f += "    double pt[3];\n    bool bad = !(rate >= 1);\n";
  f += "    for (int q = 0; q < 3; ++q) {\n";
  f += "      const double mel = static_cast<double>(i + q) * step + lowMel;\n";
  f += "      const double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);\n";
  f += fmt::format("      pt[q] = floor({}.0 * hz / rate);\n", dftLength + 1);
  f += "      bad = bad || !(pt[q] >= 0 && pt[q] <= 1e15);\n    }\n";
  f += "    const int64_t left = static_cast<int64_t>(pt[0]);\n"
       "    const int64_t center = static_cast<int64_t>(pt[1]), right = static_cast<int64_t>(pt[2]);\n";
  // The CPU fails the run when a filter reaches past the last bin; here the filter is NaN.
  f += "    int64_t last = center >= left ? center : -1;\n";
  f += "    if (right > center && right - 1 > last) last = right - 1;\n";
  f += fmt::format("    bad = bad || last >= {};\n", specBins);
  f += "    double v = 0;\n";
  f += "    if (center == left && j == center) v = 1;\n";
  f += "    if (center > left && j >= left && j <= center)\n"
       "      v = static_cast<double>(j - left) / static_cast<double>(center - left);\n";
  f += "    if (right > center && j >= center && j < right)\n"
       "      v = static_cast<double>(right - j) / static_cast<double>(right - center);\n";
  f += fmt::format("    static_cast<{0}*>(out)[o] = static_cast<{0}>(bad ? NAN : v);\n", T);
  f += kFunctorTail;
  std::vector<MapOperand> ops;
  for (int k = 2; k < 5; ++k) ops.push_back({cx.ptr(n.input(k)), 0, {0, 0}});
  return std::vector<GpuItem>{mapItem(name, f, y->dims(), ops, cx.ptr(y), 0,
                                      contiguousStrides(y->dims()), itemsPerThread(tile))};
}

}  // namespace gpu
}  // namespace magneto
