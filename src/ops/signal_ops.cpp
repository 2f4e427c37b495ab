// The signal-processing op family (opset 17): HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix, DFT and STFT, schemas and shape inference. Reference kernels:
// runtime/cpu/k_signal.cpp.
//
// Complex tensors are real ones with a trailing dim of 2 (real, imaginary); a real signal has a
// trailing dim of 1. The operands that decide a result's shape are shape operands (constant at
// compile time, bound by `magnetoc check`): a window's size, DFT's dft_length, STFT's frame_step
// and frame_length, MelWeightMatrix's num_mel_bins and dft_length. Element types: float32 and
// float64 for signals and for the generated tensors (`output_datatype`); the other types ONNX
// allows (float16, bfloat16, integers) are refused by name.
#include <string>

#include "families.h"

namespace magneto {
namespace {

using K = Attribute::Kind;

bool isSignalFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }
bool isIndexType(DType t) { return t == DType::kI32 || t == DType::kI64; }

// Operand i is one int32/int64 value (a scalar or a one-element vector).
Status requireIntScalar(const InferContext& c, size_t i, const char* op, const char* what) {
  if (!isIndexType(c.inputDType(i)) || c.inputType(i).rank() > 1 || c.inputType(i).numel() != 1)
    return badInput("{}: {} must be an int32 or int64 scalar, got {}", op, what,
                    c.inputType(i).str());
  return Status::success();
}

// The value of the shape operand i, a constant int32/int64 scalar of at least `min`.
Expected<int64_t> constScalar(const InferContext& c, size_t i, const char* op, const char* what,
                              int64_t min) {
  MG_RETURN_IF_ERROR(requireIntScalar(c, i, op, what));
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.constInts(i, what));
  if (v[0] < min) return badInput("{}: {} must be at least {}, got {}", op, what, min, v[0]);
  return v[0];
}

// The attribute output_datatype (default 1, float32), a type the kernels generate.
Expected<DType> outputDatatype(const InferContext& c, const char* op) {
  int64_t code = c.attrs().getInt("output_datatype", 1);
  DType t = static_cast<DType>(code);
  if (!isSignalFloat(t))
    return unsupported("{}: output_datatype {} is not supported (1 = float32 and 11 = float64 are)",
                       op, code);
  return t;
}

// A real (trailing dim 1) or complex (trailing dim 2) float32/float64 signal of rank >= `rank`.
Status requireSignal(const InferContext& c, size_t i, const char* op, const char* what,
                     size_t rank, const char* layout) {
  DType t = c.inputDType(i);
  if (!isSignalFloat(t))
    return unsupported("{}: {} must be f32 or f64, got {}", op, what, dtypeName(t));
  const Dims& d = c.inputDims(i);
  if (d.size() < rank || (d.back() != 1 && d.back() != 2))
    return badInput("{}: {} must be {} with a last dim of 1 (real) or 2 (complex), got {}", op,
                    what, layout, c.inputType(i).str());
  return Status::success();
}

Expected<bool> boolAttr(const InferContext& c, const char* op, const char* name, int64_t def) {
  int64_t v = c.attrs().getInt(name, def);
  if (v != 0 && v != 1) return badInput("{}: {} must be 0 or 1, got {}", op, name, v);
  return v == 1;
}

// HannWindow, HammingWindow, BlackmanWindow: size -> [size] of output_datatype.
InferFn inferWindow(const char* op) {
  return [op](InferContext& c) -> Status {
    MG_ASSIGN_OR_RETURN(int64_t size, constScalar(c, 0, op, "size", 0));
    MG_RETURN_IF_ERROR(boolAttr(c, op, "periodic", 1).status());
    MG_ASSIGN_OR_RETURN(DType t, outputDatatype(c, op));
    c.setOutput(0, {t, {size}});
    return Status::success();
  };
}

// MelWeightMatrix: [floor(dft_length / 2) + 1, num_mel_bins] of output_datatype.
Status inferMelWeightMatrix(InferContext& c) {
  const char* op = "MelWeightMatrix";
  MG_ASSIGN_OR_RETURN(int64_t bins, constScalar(c, 0, op, "num_mel_bins", 1));
  MG_ASSIGN_OR_RETURN(int64_t dftLength, constScalar(c, 1, op, "dft_length", 1));
  MG_RETURN_IF_ERROR(requireIntScalar(c, 2, op, "sample_rate"));
  for (size_t i : {3, 4}) {
    const char* what = i == 3 ? "lower_edge_hertz" : "upper_edge_hertz";
    if (!isSignalFloat(c.inputDType(i)) || c.inputType(i).rank() > 1 ||
        c.inputType(i).numel() != 1)
      return badInput("{}: {} must be an f32 or f64 scalar, got {}", op, what,
                      c.inputType(i).str());
  }
  MG_ASSIGN_OR_RETURN(DType t, outputDatatype(c, op));
  c.setOutput(0, {t, {dftLength / 2 + 1, bins}});
  return Status::success();
}

// DFT: the signal axis becomes dft_length (floor(dft_length / 2) + 1 when onesided), the last
// dim 2. `axis` counts the batch dim: [0, r - 2] or [-r, -2].
Status inferDFT(InferContext& c) {
  const char* op = "DFT";
  MG_RETURN_IF_ERROR(requireSignal(c, 0, op, "input", 3, "[batch, signal dims..., 1|2]"));
  const Dims& x = c.inputDims(0);
  const int64_t r = static_cast<int64_t>(x.size());
  int64_t axis = c.attrs().getInt("axis", 1);
  if (axis < -r || axis > r - 2 || axis == -1)
    return badInput("{}: axis {} is out of range for input {} (expected [0, {}] or [{}, -2])", op,
                    axis, c.inputType(0).str(), r - 2, -r);
  if (axis < 0) axis += r;
  MG_RETURN_IF_ERROR(boolAttr(c, op, "inverse", 0).status());
  MG_ASSIGN_OR_RETURN(bool onesided, boolAttr(c, op, "onesided", 0));
  if (onesided && x.back() == 2)
    return badInput("{}: onesided = 1 needs a real input (last dim 1), got the complex {}", op,
                    c.inputType(0).str());
  int64_t n = x[axis];
  if (c.hasInput(1)) {
    MG_ASSIGN_OR_RETURN(n, constScalar(c, 1, op, "dft_length", 1));
  } else if (n < 1) {
    return badInput("{}: the signal axis {} of {} is empty", op, axis, c.inputType(0).str());
  }
  Dims out = x;
  out[axis] = onesided ? n / 2 + 1 : n;
  out.back() = 2;
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

// STFT: signal [batch, length, 1|2] -> [batch, frames, bins, 2], frames =
// (length - frame_length) / frame_step + 1, bins = frame_length (/ 2 + 1 when onesided).
// frame_length is the operand, else the window's length; both given, they must agree.
Status inferSTFT(InferContext& c) {
  const char* op = "STFT";
  MG_RETURN_IF_ERROR(requireSignal(c, 0, op, "signal", 3, "[batch, signal_length, 1|2]"));
  const Dims& x = c.inputDims(0);
  if (x.size() != 3)
    return badInput("{}: signal must be [batch, signal_length, 1|2], got {}", op,
                    c.inputType(0).str());
  MG_ASSIGN_OR_RETURN(int64_t step, constScalar(c, 1, op, "frame_step", 1));
  int64_t length = -1;
  if (c.hasInput(2)) {
    if (c.inputDType(2) != c.inputDType(0) || c.inputType(2).rank() != 1)
      return badInput("{}: window must be a vector of the signal's type {}, got {}", op,
                      dtypeName(c.inputDType(0)), c.inputType(2).str());
    length = c.inputDims(2)[0];
  }
  if (c.hasInput(3)) {
    MG_ASSIGN_OR_RETURN(int64_t fl, constScalar(c, 3, op, "frame_length", 1));
    if (length >= 0 && fl != length)
      return badInput("{}: frame_length {} differs from the window's length {}", op, fl, length);
    length = fl;
  }
  if (length < 0) return badInput("{}: needs a window or a frame_length (neither is given)", op);
  if (length < 1) return badInput("{}: the window is empty", op);
  if (length > x[1])
    return badInput("{}: frame length {} is longer than the signal ({} samples)", op, length,
                    x[1]);
  MG_ASSIGN_OR_RETURN(bool onesided, boolAttr(c, op, "onesided", 1));
  if (onesided && x.back() == 2)
    return badInput("{}: onesided = 1 (the default) needs a real signal (last dim 1), got the "
                    "complex {}; set onesided = 0",
                    op, c.inputType(0).str());
  const int64_t frames = (x[1] - length) / step + 1;
  c.setOutput(0, {c.inputDType(0), {x[0], frames, onesided ? length / 2 + 1 : length, 2}});
  return Status::success();
}

OpSchema schema(const char* name, int minIn, int maxIn, std::vector<AttrSpec> attrs,
                std::vector<int> shapeOperands, InferFn fn, const char* doc) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.attrs = std::move(attrs);
  s.shapeOperands = std::move(shapeOperands);
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = 17;
  return s;
}

}  // namespace

void registerSignalOps(OpRegistry& r) {
  const std::vector<AttrSpec> window = {{"periodic", K::kInt}, {"output_datatype", K::kInt}};
  r.add(schema("HannWindow", 1, 1, window, {0}, inferWindow("HannWindow"),
               "0.5 - 0.5 cos(2 pi n / N), N = size (periodic) or size - 1"));
  r.add(schema("HammingWindow", 1, 1, window, {0}, inferWindow("HammingWindow"),
               "25/46 - 21/46 cos(2 pi n / N), N = size (periodic) or size - 1"));
  r.add(schema("BlackmanWindow", 1, 1, window, {0}, inferWindow("BlackmanWindow"),
               "0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N), N = size or size - 1"));
  r.add(schema("MelWeightMatrix", 5, 5, {{"output_datatype", K::kInt}}, {0, 1},
               inferMelWeightMatrix,
               "[dft_length / 2 + 1, num_mel_bins] triangular mel filter bank"));
  r.add(schema("DFT", 1, 2, {{"axis", K::kInt}, {"inverse", K::kInt}, {"onesided", K::kInt}},
               {1}, inferDFT, "discrete Fourier transform along one axis (or its inverse)"));
  r.add(schema("STFT", 2, 4, {{"onesided", K::kInt}}, {1, 3}, inferSTFT,
               "short-time Fourier transform of [batch, length, 1|2] signals"));
}

}  // namespace magneto
