// Normalization: older ONNX op forms -> the IR's canonical forms, one rule per op, applied while
// importing so that kernels and shape inference only know one form of each op.
//
// Why here and not in ONNX's version converter: libonnx 1.12's converter stops at opset 17, drops
// models it cannot adapt in full, and its Resize 10->11 adapter keeps Resize-11's default
// half_pixel coordinates, which changes Resize-10's results. The rules below are small and exact:
//
//   Slice  (opset < 10)   starts/ends/axes attrs          -> constant i64 operands
//   Pad    (opset < 11)   pads (paddings in opset 1), value -> operands; mode stays an attribute
//   Clip   (opset < 11)   min/max attrs                   -> scalar operands of X's type
//   TopK   (opset < 10)   k attr                          -> i64[1] operand
//   Dropout               ratio / is_test attrs dropped (inference only)
//   Upsample (any)        -> Resize(X, _, scales) {mode, asymmetric, nearest_mode = floor}
//   Resize (opset 10)     (X, scales) -> (X, _, scales) {asymmetric, nearest_mode = floor}:
//                         Resize-10 computes x_in = x_out / scale, like Upsample
//   Gemm                  legacy broadcast attr dropped
//   Softmax/LogSoftmax/Hardmax (opset < 13): axis made explicit (default 1) and mg_coerce_2d = 1,
//                         since before opset 13 these ops flatten the input to 2-D around axis
//   PRelu  (written < 7)  a constant slope[C] on an input of rank >= 3 was channel-wise (axis 1)
//                         -> reshaped to [C,1,...,1]; the 6 -> 7 converter keeps the old shape
//   ConstantOfShape       value tensor -> dtype (ONNX type) and mg_value / mg_value_i scalars
//   RoiAlign (written < 16) coordinate_transformation_mode made explicit: output_half_pixel, the
//                         only behaviour before opset 16 (whose default is half_pixel)
//   GroupNormalization    no rewrite; scale and bias must be per group (opset 18-20) or per
//                         channel (21+): the IR op takes either, telling them apart by size
//   DFT    (opset >= 20)  the axis operand (constant; default -2) -> DFT-17's axis attribute
//
//   %y = Slice(%x) {starts = [1], ends = [3]}   ->   const %y_starts = dense<[1]>
//                                                     const %y_ends = dense<[3]>
//                                                     %y = Slice(%x, %y_starts, %y_ends)
#include "onnx_normalize.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "magneto/ir/op_schema.h"

namespace magneto {
namespace frontend {

namespace {

// double -> T, saturating for integers (Clip bounds may be +-inf or FLT_MAX).
template <typename T>
T saturate(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T{0};
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
Tensor scalarTensor(DType dt, double v) {
  return Tensor::fromVector<T>(dt, {}, std::vector<T>{saturate<T>(v)});
}

Expected<Tensor> scalarOf(DType dt, double v) {
  switch (dt) {
    case DType::kF32: return scalarTensor<float>(dt, v);
    case DType::kF64: return scalarTensor<double>(dt, v);
    case DType::kF16:
      return Tensor::fromVector<uint16_t>(dt, {}, {floatToHalf(static_cast<float>(v))});
    case DType::kBF16:
      return Tensor::fromVector<uint16_t>(dt, {}, {floatToBf16(static_cast<float>(v))});
    case DType::kI8: return scalarTensor<int8_t>(dt, v);
    case DType::kI16: return scalarTensor<int16_t>(dt, v);
    case DType::kI32: return scalarTensor<int32_t>(dt, v);
    case DType::kI64: return scalarTensor<int64_t>(dt, v);
    case DType::kU8: return scalarTensor<uint8_t>(dt, v);
    case DType::kU16: return scalarTensor<uint16_t>(dt, v);
    case DType::kU32: return scalarTensor<uint32_t>(dt, v);
    case DType::kU64: return scalarTensor<uint64_t>(dt, v);
    case DType::kBool: return Tensor::fromVector<uint8_t>(dt, {}, {static_cast<uint8_t>(v != 0)});
    default: return unsupported("no scalar of element type {}", dtypeName(dt));
  }
}

Value* addConst(Graph& g, const NodeDraft& n, const char* what, Tensor t) {
  std::string base = n.name + "_" + what;
  return g.addConstant(n.freshName ? n.freshName(base) : g.uniqueName(base), std::move(t));
}

Value* addInts(Graph& g, const NodeDraft& n, const char* what, const std::vector<int64_t>& v) {
  return addConst(g, n, what,
                  Tensor::fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v));
}

void setInput(NodeDraft& n, size_t i, Value* v) {
  if (n.inputs.size() <= i) n.inputs.resize(i + 1, nullptr);
  n.inputs[i] = v;
}

Status requireData(const NodeDraft& n) {
  if (n.inputs.empty() || !n.inputs[0]) return badInput("{}: missing operand 0", n.describe());
  return Status::success();
}

Status sliceAttrsToOperands(Graph& g, NodeDraft& n) {
  MG_RETURN_IF_ERROR(requireData(n));
  if (!n.attrs.has("starts") || !n.attrs.has("ends"))
    return badInput("{}: Slice before opset 10 needs attributes 'starts' and 'ends'",
                    n.describe());
  std::vector<int64_t> starts = n.attrs.getInts("starts"), ends = n.attrs.getInts("ends");
  if (starts.size() != ends.size())
    return badInput("{}: 'starts' has {} values but 'ends' has {}", n.describe(), starts.size(),
                    ends.size());
  n.inputs.resize(1);
  n.inputs.push_back(addInts(g, n, "starts", starts));
  n.inputs.push_back(addInts(g, n, "ends", ends));
  if (n.attrs.has("axes")) n.inputs.push_back(addInts(g, n, "axes", n.attrs.getInts("axes")));
  n.attrs.erase("starts");
  n.attrs.erase("ends");
  n.attrs.erase("axes");
  return Status::success();
}

Status padAttrsToOperands(Graph& g, NodeDraft& n) {
  MG_RETURN_IF_ERROR(requireData(n));
  const char* padsName = n.attrs.has("pads") ? "pads" : "paddings";
  if (!n.attrs.has(padsName))
    return badInput("{}: Pad before opset 11 needs attribute 'pads'", n.describe());
  n.inputs.resize(1);
  n.inputs.push_back(addInts(g, n, "pads", n.attrs.getInts(padsName)));
  if (n.attrs.has("value")) {
    MG_ASSIGN_OR_RETURN(Tensor v, scalarOf(n.inputs[0]->dtype(), n.attrs.getFloat("value", 0)));
    n.inputs.push_back(addConst(g, n, "value", std::move(v)));
  }
  n.attrs.erase("pads");
  n.attrs.erase("paddings");
  n.attrs.erase("value");
  return Status::success();
}

Status clipAttrsToOperands(Graph& g, NodeDraft& n) {
  MG_RETURN_IF_ERROR(requireData(n));
  n.inputs.resize(1);
  DType dt = n.inputs[0]->dtype();
  if (n.attrs.has("min")) {
    MG_ASSIGN_OR_RETURN(Tensor v, scalarOf(dt, n.attrs.getFloat("min", 0)));
    setInput(n, 1, addConst(g, n, "min", std::move(v)));
  }
  if (n.attrs.has("max")) {
    MG_ASSIGN_OR_RETURN(Tensor v, scalarOf(dt, n.attrs.getFloat("max", 0)));
    setInput(n, 2, addConst(g, n, "max", std::move(v)));
  }
  n.attrs.erase("min");
  n.attrs.erase("max");
  return Status::success();
}

Status topkAttrToOperand(Graph& g, NodeDraft& n) {
  MG_RETURN_IF_ERROR(requireData(n));
  if (!n.attrs.has("k"))
    return badInput("{}: TopK before opset 10 needs attribute 'k'", n.describe());
  n.inputs.resize(1);
  n.inputs.push_back(addInts(g, n, "k", {n.attrs.getInt("k", 0)}));
  n.attrs.erase("k");
  return Status::success();
}

void setResizeSemantics(AttrMap& a, const std::string& mode) {
  a.set("mode", mode);
  a.set("coordinate_transformation_mode", "asymmetric");
  a.set("nearest_mode", "floor");
}

Status upsampleToResize(Graph& g, int64_t opset, NodeDraft& n) {
  MG_RETURN_IF_ERROR(requireData(n));
  std::string mode = n.attrs.getString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return unsupported("{}: Upsample mode '{}' is not supported (nearest, linear)", n.describe(),
                       mode);
  Value* scales = nullptr;
  if (opset < 9) {
    if (!n.attrs.has("scales"))
      return badInput("{}: Upsample before opset 9 needs attribute 'scales'", n.describe());
    std::vector<float> s;
    for (double d : n.attrs.getFloats("scales")) s.push_back(static_cast<float>(d));
    scales = addConst(g, n, "scales",
                      Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(s.size())}, s));
  } else {
    if (n.inputs.size() < 2 || !n.inputs[1])
      return badInput("{}: Upsample needs operand 1 (scales)", n.describe());
    scales = n.inputs[1];
  }
  Value* x = n.inputs[0];
  n.kind = "Resize";
  n.inputs = {x, nullptr, scales};
  n.attrs = AttrMap();
  setResizeSemantics(n.attrs, mode);
  return Status::success();
}

Status resize10ToResize11(NodeDraft& n) {
  MG_RETURN_IF_ERROR(requireData(n));
  if (n.inputs.size() < 2 || !n.inputs[1])
    return badInput("{}: Resize-10 needs operand 1 (scales)", n.describe());
  Value* x = n.inputs[0];
  Value* scales = n.inputs[1];
  n.inputs = {x, nullptr, scales};
  setResizeSemantics(n.attrs, n.attrs.getString("mode", "nearest"));
  return Status::success();
}

Status legacyPReluSlope(Graph& g, NodeDraft& n) {
  if (n.inputs.size() < 2 || !n.inputs[0] || !n.inputs[1]) return Status::success();
  Value* x = n.inputs[0];
  Value* slope = n.inputs[1];
  if (x->rank() < 3 || slope->rank() != 1 || slope->dims()[0] == 1 ||
      slope->dims()[0] != x->dims()[1] || !slope->isConstant() || !slope->constant().hasData())
    return Status::success();
  const Tensor& t = slope->constant();
  Dims dims(static_cast<size_t>(x->rank() - 1), 1);
  dims[0] = t.dims()[0];
  std::vector<uint8_t> bytes(t.bytes(), t.bytes() + t.byteSize());
  n.inputs[1] = addConst(g, n, "slope", Tensor(TensorType{t.dtype(), dims}, std::move(bytes)));
  return Status::success();
}

Status constantOfShapeValue(NodeDraft& n) {
  const Attribute* a = n.attrs.find("value");
  if (!a) {
    n.attrs.set("dtype", int64_t{1});
    n.attrs.set("mg_value", 0.0);
    return Status::success();
  }
  if (a->kind() != Attribute::Kind::kTensor)
    return badInput("{}: attribute 'value' must be a tensor", n.describe());
  const Tensor& t = a->tensor();
  if (t.numel() != 1 || !t.hasData())
    return badInput("{}: attribute 'value' must hold one element, got shape {}", n.describe(),
                    dimsStr(t.dims()));
  DType dt = t.dtype();
  n.attrs.set("dtype", static_cast<int64_t>(dt));
  if (dt == DType::kF16) {
    n.attrs.set("mg_value", static_cast<double>(halfToFloat(*t.data<uint16_t>())));
  } else if (dt == DType::kBF16) {
    n.attrs.set("mg_value", static_cast<double>(bf16ToFloat(*t.data<uint16_t>())));
  } else if (isFloat(dt)) {
    n.attrs.set("mg_value", t.floatAt(0));
  } else if (isInteger(dt) || dt == DType::kBool) {
    n.attrs.set("mg_value_i", t.intAt(0));
  } else {
    return unsupported("{}: value of element type {} is not supported", n.describe(),
                       dtypeName(dt));
  }
  return Status::success();
}

// GroupNormalization-21 made scale and bias per channel; versions 18-20 have them per group. The
// sizes tell the two apart unless num_groups equals the channel count (then they mean the same),
// so only the size the model's opset defines is accepted.
Status groupNormScaleForm(int64_t opset, const NodeDraft& n) {
  if (n.inputs.size() < 3 || !n.inputs[0] || n.inputs[0]->rank() < 2) return Status::success();
  const bool perChannel = opset >= 21;
  const int64_t want = perChannel ? n.inputs[0]->dims()[1] : n.attrs.getInt("num_groups", 0);
  for (size_t i = 1; i < 3; ++i) {
    const Value* v = n.inputs[i];
    if (v && v->rank() == 1 && v->dims()[0] != want)
      return badInput("{}: GroupNormalization-{} takes {} per {} ([{}]), got {}", n.describe(),
                      perChannel ? 21 : 18, i == 1 ? "scale" : "bias",
                      perChannel ? "channel" : "group", want, v->type().str());
  }
  return Status::success();
}

// DFT-20 made the axis an optional operand (default -2, the last signal dim) where DFT-17, the
// IR's form, has an attribute (default 1). The axis is a shape operand, so it must be constant.
Status dft20AxisToAttr(NodeDraft& n) {
  int64_t axis = -2;
  if (n.inputs.size() > 2 && n.inputs[2]) {
    const Value* v = n.inputs[2];
    if (!v->isConstant() || !v->constant().hasData() || v->constant().numel() != 1 ||
        !isInteger(v->dtype()))
      return unsupported("{}: DFT's axis operand '{}' must be a constant integer scalar (an "
                         "initializer; magnetoc check binds a graph input from its data)",
                         n.describe(), v->name());
    axis = v->constant().intAt(0);
  }
  if (n.inputs.size() > 2) n.inputs.resize(2);
  while (n.inputs.size() > 1 && !n.inputs.back()) n.inputs.pop_back();  // no dft_length
  n.attrs.set("axis", axis);
  return Status::success();
}

}  // namespace

Status normalizeNode(Graph& g, int64_t opset, NodeDraft& n) {
  const std::string& k = n.kind;
  if (k == "Slice" && opset < 10) return sliceAttrsToOperands(g, n);
  if (k == "Pad" && opset < 11) return padAttrsToOperands(g, n);
  if (k == "Clip" && opset < 11) return clipAttrsToOperands(g, n);
  if (k == "TopK" && opset < 10) return topkAttrToOperand(g, n);
  if (k == "Upsample") return upsampleToResize(g, opset, n);
  if (k == "Resize" && opset < 11) return resize10ToResize11(n);
  if (k == "ConstantOfShape") return constantOfShapeValue(n);
  if (k == "GroupNormalization") return groupNormScaleForm(opset, n);
  if (k == "DFT" && opset >= 20) return dft20AxisToAttr(n);
  if (k == "PRelu" && n.sourceOpset > 0 && n.sourceOpset < 7) return legacyPReluSlope(g, n);
  if (k == "RoiAlign" && (n.sourceOpset > 0 ? n.sourceOpset : opset) < 16 &&
      !n.attrs.has("coordinate_transformation_mode"))
    n.attrs.set("coordinate_transformation_mode", std::string("output_half_pixel"));
  if (k == "Dropout") {
    n.attrs.erase("ratio");
    n.attrs.erase("is_test");
  } else if (k == "Gemm") {
    n.attrs.erase("broadcast");
  } else if ((k == "Softmax" || k == "LogSoftmax" || k == "Hardmax") && opset < 13) {
    n.attrs.set("axis", n.attrs.getInt("axis", 1));
    n.attrs.set("mg_coerce_2d", int64_t{1});
  }
  return Status::success();
}

std::vector<int> onnxShapeOperands(const std::string& opType, int64_t opset, bool withData) {
  // Control flow is specialised on import (onnx_control_flow.cpp) only when its control is
  // constant: If's condition, Loop's trip count and condition. Scan's length comes from shapes.
  if (opType == "If") return {0};
  if (opType == "Loop") return {0, 1};
  // Sequences are resolved on import (onnx_sequence.cpp) only with constant positions and splits.
  if (opType == "SequenceAt" || opType == "SequenceErase" || opType == "SplitToSequence")
    return {1};
  if (opType == "SequenceInsert") return {2};
  if (opType == "Upsample") return opset >= 9 ? std::vector<int>{1} : std::vector<int>{};
  if (opType == "Resize" && opset < 11) return {1};
  if (opType == "DFT" && opset >= 20) return {1, 2};  // dft_length, axis
  if ((opType == "Slice" && opset < 10) || (opType == "Pad" && opset < 11) ||
      (opType == "TopK" && opset < 10) || (opType == "Clip" && opset < 11))
    return {};
  const OpSchema* s = OpRegistry::instance().find(opType);
  if (!s) return {};
  std::vector<int> out = s->shapeOperands;
  if (withData) out.insert(out.end(), s->dataOperands.begin(), s->dataOperands.end());
  return out;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    // Half subnormals are multiples of 2^-24; nearbyint rounds to nearest even.
    float scaled = std::ldexp(f < 0 ? -f : f, 24);
    uint32_t q = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t e = (absx >> 23) - 127 + 15, m = absx & 0x7fffffu;
  uint32_t h = (e << 10) | (m >> 13);
  uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // round to nearest even
  return static_cast<uint16_t>(sign | h);
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace frontend
}  // namespace magneto
