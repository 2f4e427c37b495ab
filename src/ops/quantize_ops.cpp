// Quantization op family: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv (schemas and shape inference; reference kernels in
// runtime/cpu/k_quantize.cpp). Quantized tensors are int8 or uint8 (DequantizeLinear also reads
// int32), scales float32. A scale or zero point is per tensor (a scalar or a one-element vector)
// or, where the op allows it, a vector along one axis: QuantizeLinear/DequantizeLinear's `axis`,
// the rows of a matrix product's A, its columns of B, a convolution's output channels.
// Block quantization (opset 21's block_size) is refused by name; so are element types other
// than int8/uint8 for the quantized side (the importer refuses float8 and int4 before that).
#include "nn_ops_common.h"

namespace magneto {
namespace {

using namespace nnops;

bool isQuantType(DType t) { return t == DType::kU8 || t == DType::kI8; }

Status requireQuant(const InferContext& c, size_t i, const char* op, const char* what) {
  if (!isQuantType(c.inputDType(i)))
    return unsupported("{}: {} must be uint8 or int8, got {}", op, what,
                       dtypeName(c.inputDType(i)));
  return Status::success();
}

Status requireF32(const InferContext& c, size_t i, const char* op, const char* what) {
  if (c.inputDType(i) != DType::kF32)
    return unsupported("{}: {} must be f32, got {}", op, what, dtypeName(c.inputDType(i)));
  return Status::success();
}

bool isPerTensor(const Dims& d) { return d.size() <= 1 && TensorType{DType::kF32, d}.numel() == 1; }

// A quantization parameter (scale or zero point) that is per tensor, or a vector of `len`
// elements when `len` > 0 ("per row", "per output channel", ...).
Status requireParamShape(const InferContext& c, size_t i, int64_t len, const char* op,
                         const char* what, const char* along) {
  if (!c.hasInput(i)) return Status::success();
  const Dims& d = c.inputDims(i);
  if (isPerTensor(d)) return Status::success();
  if (len > 0 && d.size() == 1 && d[0] == len) return Status::success();
  if (len > 0)
    return badInput("{}: {} must be a scalar or a vector of {} ({}), got {}", op, what, len, along,
                    c.inputType(i).str());
  return badInput("{}: {} must be a scalar (per-tensor), got {}", op, what, c.inputType(i).str());
}

Status refuseBlocks(const InferContext& c, const char* op) {
  int64_t block = c.attrs().getInt("block_size", 0);
  if (block != 0)
    return unsupported("{}: block quantization (block_size {}) is not supported", op, block);
  return Status::success();
}

// Scale (and zero point) of QuantizeLinear/DequantizeLinear: per tensor, or per slice of `axis`.
Status checkAxisParams(const InferContext& c, const char* op, const char* scale, const char* zp) {
  MG_RETURN_IF_ERROR(refuseBlocks(c, op));
  const Dims& x = c.inputDims(0);
  const Dims& s = c.inputDims(1);
  if (!isPerTensor(s)) {
    MG_ASSIGN_OR_RETURN(int64_t axis,
                        normalizeAxis(c.attrs().getInt("axis", 1), static_cast<int64_t>(x.size())));
    if (s.size() != 1 || s[0] != x[axis])
      return badInput("{}: {} must be a scalar or a vector of {} (input dim {} = axis), got {}", op,
                      scale, x[axis], axis, c.inputType(1).str());
  }
  if (c.hasInput(2) && c.inputDims(2) != s && !(isPerTensor(s) && isPerTensor(c.inputDims(2))))
    return badInput("{}: {} must have the shape of {} {}, got {}", op, zp, scale,
                    c.inputType(1).str(), c.inputType(2).str());
  return Status::success();
}

Status inferQuantizeLinear(InferContext& c) {
  const char* op = "QuantizeLinear";
  DType x = c.inputDType(0);
  if (x != DType::kF32 && x != DType::kI32)
    return unsupported("{}: x must be f32 or i32, got {}", op, dtypeName(x));
  MG_RETURN_IF_ERROR(requireF32(c, 1, op, "y_scale"));
  DType y = DType::kU8;
  if (c.hasInput(2)) {
    MG_RETURN_IF_ERROR(requireQuant(c, 2, op, "y_zero_point"));
    y = c.inputDType(2);
  }
  if (c.attrs().has("output_dtype")) {
    int64_t od = c.attrs().getInt("output_dtype", 0);
    DType want = static_cast<DType>(od);
    if (od != 0 && want != DType::kU8 && want != DType::kI8)
      return unsupported("{}: output_dtype {} is not supported (uint8 or int8)", op, od);
    if (od != 0 && c.hasInput(2) && want != y)
      return badInput("{}: output_dtype {} differs from y_zero_point's type {}", op,
                      dtypeName(want), dtypeName(y));
    if (od != 0) y = want;
  }
  MG_RETURN_IF_ERROR(checkAxisParams(c, op, "y_scale", "y_zero_point"));
  c.setOutput(0, {y, c.inputDims(0)});
  return Status::success();
}

Status inferDequantizeLinear(InferContext& c) {
  const char* op = "DequantizeLinear";
  DType x = c.inputDType(0);
  if (!isQuantType(x) && x != DType::kI32)
    return unsupported("{}: x must be uint8, int8 or int32, got {}", op, dtypeName(x));
  MG_RETURN_IF_ERROR(requireF32(c, 1, op, "x_scale"));
  if (c.hasInput(2) && c.inputDType(2) != x)
    return badInput("{}: x_zero_point has element type {}, x has {}", op,
                    dtypeName(c.inputDType(2)), dtypeName(x));
  MG_RETURN_IF_ERROR(checkAxisParams(c, op, "x_scale", "x_zero_point"));
  c.setOutput(0, {DType::kF32, c.inputDims(0)});
  return Status::success();
}

Status inferDynamicQuantizeLinear(InferContext& c) {
  MG_RETURN_IF_ERROR(requireF32(c, 0, "DynamicQuantizeLinear", "x"));
  c.setOutput(0, {DType::kU8, c.inputDims(0)});
  if (c.numOutputs() > 1) c.setOutput(1, {DType::kF32, {}});
  if (c.numOutputs() > 2) c.setOutput(2, {DType::kU8, {}});
  return Status::success();
}

Status requireZeroPointType(const InferContext& c, size_t zp, size_t of, const char* op,
                            const char* what) {
  if (c.hasInput(zp) && c.inputDType(zp) != c.inputDType(of))
    return badInput("{}: {} has element type {}, its operand has {}", op, what,
                    dtypeName(c.inputDType(zp)), dtypeName(c.inputDType(of)));
  return Status::success();
}

// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32.
Status inferMatMulInteger(InferContext& c) {
  const char* op = "MatMulInteger";
  MG_RETURN_IF_ERROR(requireQuant(c, 0, op, "A"));
  MG_RETURN_IF_ERROR(requireQuant(c, 1, op, "B"));
  MG_RETURN_IF_ERROR(requireZeroPointType(c, 2, 0, op, "a_zero_point"));
  MG_RETURN_IF_ERROR(requireZeroPointType(c, 3, 1, op, "b_zero_point"));
  MG_ASSIGN_OR_RETURN(MatMulShape s, matMulShape(c, 0, 1, op));
  MG_RETURN_IF_ERROR(requireParamShape(c, 2, s.m, op, "a_zero_point", "one per row of A"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 3, s.n, op, "b_zero_point", "one per column of B"));
  c.setOutput(0, {DType::kI32, s.out});
  return Status::success();
}

// The element types of QLinearMatMul's and QLinearConv's common operands (p, p_scale,
// p_zero_point, q, q_scale, q_zero_point, y_scale, y_zero_point): quantized p, q and y_zero_point,
// float32 scales, each zero point of its operand's type.
Status requireQLinearOperandTypes(const InferContext& c, const char* op, const std::string& p,
                                  const std::string& q) {
  MG_RETURN_IF_ERROR(requireQuant(c, 0, op, p.c_str()));
  MG_RETURN_IF_ERROR(requireQuant(c, 3, op, q.c_str()));
  MG_RETURN_IF_ERROR(requireQuant(c, 7, op, "y_zero_point"));
  MG_RETURN_IF_ERROR(requireF32(c, 1, op, (p + "_scale").c_str()));
  MG_RETURN_IF_ERROR(requireF32(c, 4, op, (q + "_scale").c_str()));
  MG_RETURN_IF_ERROR(requireF32(c, 6, op, "y_scale"));
  MG_RETURN_IF_ERROR(requireZeroPointType(c, 2, 0, op, (p + "_zero_point").c_str()));
  return requireZeroPointType(c, 5, 3, op, (q + "_zero_point").c_str());
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y_zp's type.
Status inferQLinearMatMul(InferContext& c) {
  const char* op = "QLinearMatMul";
  MG_RETURN_IF_ERROR(requireQLinearOperandTypes(c, op, "a", "b"));
  MG_ASSIGN_OR_RETURN(MatMulShape s, matMulShape(c, 0, 3, op));
  MG_RETURN_IF_ERROR(requireParamShape(c, 1, s.m, op, "a_scale", "one per row of a"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 2, s.m, op, "a_zero_point", "one per row of a"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 4, s.n, op, "b_scale", "one per column of b"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 5, s.n, op, "b_zero_point", "one per column of b"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 6, s.m, op, "y_scale", "one per row of y"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 7, s.m, op, "y_zero_point", "one per row of y"));
  c.setOutput(0, {c.inputDType(7), s.out});
  return Status::success();
}

// Output dims of a convolution of input operand `ix` by weight operand `iw` (Conv's rules).
Expected<Dims> convOutDims(const InferContext& c, size_t ix, size_t iw, const char* op) {
  const Dims& x = c.inputDims(ix);
  const Dims& w = c.inputDims(iw);
  if (x.size() < 3)
    return badInput("{}: input must be N x C x spatial (rank >= 3), got {}", op,
                    c.inputType(ix).str());
  if (w.size() != x.size())
    return badInput("{}: weight must have rank {} like the input, got {}", op, x.size(),
                    c.inputType(iw).str());
  int64_t group = c.attrs().getInt("group", 1);
  if (group <= 0) return badInput("{}: group must be positive, got {}", op, group);
  if (x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1])
    return badInput("{}: weight {} does not fit input {} in {} groups", op, c.inputType(iw).str(),
                    c.inputType(ix).str(), group);
  MG_ASSIGN_OR_RETURN(mgrt::SpatialAttrs sa, readSpatialAttrs(c, op));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return badInput("{}: kernel_shape {} does not match the weight's spatial dims {}", op,
                    mgrt::joinInts(sa.kernelShape), mgrt::joinInts(kernel));
  mgrt::SpatialGeometry g;
  std::string err = mgrt::resolveConvGeometry(op, Dims(x.begin() + 2, x.end()), kernel, sa, &g);
  if (!err.empty()) return badInput("{}", err);
  Dims out = {x[0], w[0]};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return out;
}

// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32.
Status inferConvInteger(InferContext& c) {
  const char* op = "ConvInteger";
  MG_RETURN_IF_ERROR(requireQuant(c, 0, op, "x"));
  MG_RETURN_IF_ERROR(requireQuant(c, 1, op, "w"));
  MG_RETURN_IF_ERROR(requireZeroPointType(c, 2, 0, op, "x_zero_point"));
  MG_RETURN_IF_ERROR(requireZeroPointType(c, 3, 1, op, "w_zero_point"));
  MG_ASSIGN_OR_RETURN(Dims out, convOutDims(c, 0, 1, op));
  MG_RETURN_IF_ERROR(requireParamShape(c, 2, 0, op, "x_zero_point", ""));
  MG_RETURN_IF_ERROR(
      requireParamShape(c, 3, out[1], op, "w_zero_point", "one per output channel"));
  c.setOutput(0, {DType::kI32, out});
  return Status::success();
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) -> y_zp's type.
Status inferQLinearConv(InferContext& c) {
  const char* op = "QLinearConv";
  MG_RETURN_IF_ERROR(requireQLinearOperandTypes(c, op, "x", "w"));
  MG_ASSIGN_OR_RETURN(Dims out, convOutDims(c, 0, 3, op));
  const int64_t m = out[1];
  MG_RETURN_IF_ERROR(requireParamShape(c, 1, 0, op, "x_scale", ""));
  MG_RETURN_IF_ERROR(requireParamShape(c, 2, 0, op, "x_zero_point", ""));
  MG_RETURN_IF_ERROR(requireParamShape(c, 4, m, op, "w_scale", "one per output channel"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 5, m, op, "w_zero_point", "one per output channel"));
  MG_RETURN_IF_ERROR(requireParamShape(c, 6, 0, op, "y_scale", ""));
  MG_RETURN_IF_ERROR(requireParamShape(c, 7, 0, op, "y_zero_point", ""));
  if (c.hasInput(8) && (c.inputDType(8) != DType::kI32 || c.inputDims(8) != Dims{m}))
    return badInput("{}: B must be i32[{}] (one per output channel), got {}", op, m,
                    c.inputType(8).str());
  c.setOutput(0, {c.inputDType(7), out});
  return Status::success();
}

std::vector<AttrSpec> convAttrs() {
  return {{"auto_pad", K::kString}, {"dilations", K::kInts}, {"group", K::kInt},
          {"kernel_shape", K::kInts}, {"pads", K::kInts},    {"strides", K::kInts}};
}

void add(OpRegistry& r, const char* name, int minIn, int maxIn, int minOut, int maxOut,
         std::vector<AttrSpec> attrs, InferFn infer, const char* doc, int since) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.minOutputs = minOut;
  s.maxOutputs = maxOut;
  s.attrs = std::move(attrs);
  s.infer = std::move(infer);
  s.doc = doc;
  s.sinceVersion = since;
  r.add(std::move(s));
}

// MgQuantizedAdd(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y_zp's type, a's shape:
// QuantizeLinear(DequantizeLinear(a) + DequantizeLinear(b)), per tensor (pass fuse-qdq).
Status inferMgQuantizedAdd(InferContext& c) {
  const char* op = "MgQuantizedAdd";
  MG_RETURN_IF_ERROR(requireQLinearOperandTypes(c, op, "a", "b"));
  if (c.inputDims(0) != c.inputDims(3))
    return badInput("{}: a and b must have the same shape, got {} and {}", op, c.inputType(0).str(),
                    c.inputType(3).str());
  for (size_t i : {1, 2, 4, 5, 6, 7})
    MG_RETURN_IF_ERROR(requireParamShape(c, i, 0, op, "every scale and zero point", "per tensor"));
  c.setOutput(0, {c.inputDType(7), c.inputDims(0)});
  return Status::success();
}

}  // namespace

void registerQuantizeOps(OpRegistry& r) {
  add(r, "QuantizeLinear", 2, 3, 1, 1,
      {{"axis", K::kInt}, {"block_size", K::kInt}, {"output_dtype", K::kInt},
       {"saturate", K::kInt}},
      inferQuantizeLinear,
      "y = saturate(round_half_even(x / scale) + zero_point), per tensor or per axis; uint8/int8",
      13);
  add(r, "DequantizeLinear", 2, 3, 1, 1, {{"axis", K::kInt}, {"block_size", K::kInt}},
      inferDequantizeLinear, "y = (x - zero_point) * scale, per tensor or per axis; f32 result",
      13);
  add(r, "DynamicQuantizeLinear", 1, 1, 1, 3, {}, inferDynamicQuantizeLinear,
      "uint8 quantization of x with scale and zero point from x's range (widened to hold 0)", 11);
  add(r, "MatMulInteger", 2, 4, 1, 1, {}, inferMatMulInteger,
      "int32 matmul of (A - a_zero_point) and (B - b_zero_point); uint8/int8 operands", 10);
  add(r, "QLinearMatMul", 8, 8, 1, 1, {}, inferQLinearMatMul,
      "quantized matmul: int32 accumulation, requantized with a_scale * b_scale / y_scale", 10);
  add(r, "ConvInteger", 2, 4, 1, 1, convAttrs(), inferConvInteger,
      "int32 convolution of (x - x_zero_point) by (w - w_zero_point); uint8/int8 operands", 10);
  add(r, "MgQuantizedAdd", 8, 8, 1, 1, {}, inferMgQuantizedAdd,
      "internal (pass fuse-qdq): QuantizeLinear(DequantizeLinear(a) + DequantizeLinear(b)) in one pass, "
      "per-tensor parameters, a and b of one shape; the same float32 operations as the three ops",
      1);
  add(r, "QLinearConv", 8, 9, 1, 1, convAttrs(), inferQLinearConv,
      "quantized convolution: int32 accumulation plus int32 bias, requantized per output channel",
      10);
}

}  // namespace magneto
