// Per-op work: FLOPs, bytes moved and the GEMM view of a node
// (include/magneto/target/cost_model.h). Counting conventions (docs/COST_MODEL.md): a multiply-add
// is 2 FLOPs; bytes are every operand, result and weight touched once at its element size (f32 = 4
// B), except a Gather's data, of which only the gathered elements count; an fused epilogue (mg_act)
// adds one FLOP per output element. Ops not listed fall back to
// bytes of operands and results with one FLOP per output element.
#include <algorithm>
#include <set>

#include "magneto/ir/op_schema.h"
#include "magneto/target/cost_model.h"
#include "mg_acts.h"

namespace magneto {
namespace {

int64_t numelOf(const Value* v) {
  if (!v) return 0;
  int64_t n = 1;
  for (int64_t d : v->dims()) n *= std::max<int64_t>(d, 0);
  return n;
}

double bytesOf(const Value* v) {
  if (!v) return 0;
  size_t es = dtypeSize(v->dtype());
  if (es == 0) es = 4;
  return static_cast<double>(numelOf(v)) * static_cast<double>(es);
}

int64_t dim(const Value* v, int i) {
  if (!v) return 1;
  int r = v->rank();
  if (i < 0) i += r;
  if (i < 0 || i >= r) return 1;
  return std::max<int64_t>(v->dims()[i], 1);
}

int64_t prodFrom(const Value* v, int from) {
  int64_t p = 1;
  if (!v) return p;
  for (int i = from; i < v->rank(); ++i) p *= std::max<int64_t>(v->dims()[i], 1);
  return p;
}

int64_t outNumel(const Node& n) { return n.numOutputs() ? numelOf(n.output(0)) : 0; }

double epilogueFlops(const Node& n) {
  return n.attrs().has("mg_act") ? static_cast<double>(outNumel(n)) : 0.0;
}

bool isKind(const Node& n, std::initializer_list<const char*> kinds) {
  for (const char* k : kinds)
    if (n.kind() == k) return true;
  return false;
}

// FLOPs per element of ops whose hardware cost is a few instructions (exp, log, tanh, erf, ...).
// Activations (runtime/common/mg_acts.h) say so in their table (flag H), by op or program name.
double elementwiseFlopsPerItem(const std::string& kind) {
  if (const mgrt::acts::ActInfo* a = mgrt::acts::find(kind.c_str()); a && a->code != mgrt::acts::kNone)
    return a->has(mgrt::acts::kH) ? 4.0 : 1.0;
  static const std::set<std::string> kTranscendental = {
      "Exp", "Log", "Erf", "Pow",  "Sqrt", "Reciprocal", "Sin",   "Cos",   "Tan",   "Asin",
      "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Div", "Mod"};
  return kTranscendental.count(kind) ? 4.0 : 1.0;
}

}  // namespace

OpWork opWork(const Node& n) {
  OpWork w;
  for (const Value* v : n.inputs()) {
    if (!v) continue;
    double b = bytesOf(v);
    w.bytes += b;
    if (v->isConstant()) w.weightBytes += b;
  }
  for (const Value* v : n.outputs()) w.bytes += bytesOf(v);
  const Value* x = n.input(0);
  const Value* y = n.numOutputs() ? n.output(0) : nullptr;
  w.halfPrecision = x && (x->dtype() == DType::kF16 || x->dtype() == DType::kBF16);
  int64_t outN = outNumel(n);
  w.elements = 0;
  for (const Value* v : n.outputs()) w.elements += numelOf(v);  // Split has several
  const std::string& k = n.kind();
  const OpSchema* schema = n.schema();

  // The integer convolutions count their multiply-adds the same way (2 operations each; the
  // weight is QLinearConv's operand 3).
  const size_t convWeight = k == "QLinearConv" ? 3 : 1;
  if ((k == "Conv" || k == "ConvInteger" || k == "QLinearConv") && n.hasInput(convWeight) && x && y) {
    const Value* wt = n.input(convWeight);
    int64_t group = std::max<int64_t>(n.attrs().getInt("group", 1), 1);
    int64_t batch = dim(y, 0), cout = dim(y, 1), spatial = prodFrom(y, 2);
    int64_t cinPerGroup = dim(wt, 1), kernel = prodFrom(wt, 2);
    w.cls = OpWork::Class::kGemm;
    w.gemm = {group, batch * spatial, std::max<int64_t>(cout / group, 1), cinPerGroup * kernel};
    w.flops = 2.0 * batch * cout * spatial * cinPerGroup * kernel;
    if (n.hasInput(k == "QLinearConv" ? 8 : 2)) w.flops += static_cast<double>(outN);
    w.flops += epilogueFlops(n);
    w.note = fmt::format("implicit GEMM {}x{}x{}x{}{}", w.gemm.batch, w.gemm.m, w.gemm.n, w.gemm.k,
                         group > 1 ? (group == dim(x, 1) ? " (depthwise)" : " (grouped)") : "");
    return w;
  }
  if (k == "ConvTranspose" && n.hasInput(1) && x && y) {
    const Value* wt = n.input(1);  // [C, M/group, k...]
    int64_t group = std::max<int64_t>(n.attrs().getInt("group", 1), 1);
    int64_t batch = dim(x, 0), cin = dim(x, 1), inSpatial = prodFrom(x, 2);
    int64_t coutPerGroup = dim(wt, 1), kernel = prodFrom(wt, 2);
    w.cls = OpWork::Class::kGemm;
    // Each input pixel scatters a (M/group * k) column: GEMM then col2im.
    w.gemm = {group, batch * inSpatial, coutPerGroup * kernel, std::max<int64_t>(cin / group, 1)};
    w.flops = 2.0 * batch * cin * inSpatial * coutPerGroup * kernel;
    if (n.hasInput(2)) w.flops += static_cast<double>(outN);
    w.flops += epilogueFlops(n);
    w.note = fmt::format("GEMM+col2im {}x{}x{}x{}", w.gemm.batch, w.gemm.m, w.gemm.n, w.gemm.k);
    return w;
  }
  if (k == "Gemm" && n.hasInput(1) && x && y) {
    bool transA = n.attrs().getInt("transA", 0) != 0;
    int64_t m = transA ? dim(x, 1) : dim(x, 0), kk = transA ? dim(x, 0) : dim(x, 1);
    int64_t nn = dim(y, 1);
    w.cls = OpWork::Class::kGemm;
    w.gemm = {1, m, nn, kk};
    w.flops = 2.0 * m * nn * kk;
    if (n.hasInput(2)) w.flops += static_cast<double>(m * nn);
    w.flops += epilogueFlops(n);
    w.note = fmt::format("GEMM {}x{}x{}", m, nn, kk);
    return w;
  }
  if (k == "MatMul" && n.hasInput(1) && x && y) {
    const Value* b = n.input(1);
    int64_t m = x->rank() >= 2 ? dim(x, -2) : 1, kk = dim(x, -1);
    int64_t nn = b->rank() >= 2 ? dim(b, -1) : 1;
    int64_t batch = std::max<int64_t>(outN / std::max<int64_t>(m * nn, 1), 1);
    w.cls = OpWork::Class::kGemm;
    w.gemm = {batch, m, nn, kk};
    w.flops = 2.0 * batch * m * nn * kk + epilogueFlops(n);
    w.note = fmt::format("batched GEMM {}x{}x{}x{}", batch, m, nn, kk);
    return w;
  }
  if (isKind(n, {"LSTM", "GRU", "RNN"}) && n.hasInput(1) && n.hasInput(2) && x) {
    int gates = k == "LSTM" ? 4 : k == "GRU" ? 3 : 1;
    bool batchFirst = n.attrs().getInt("layout", 0) != 0;
    int64_t seq = batchFirst ? dim(x, 1) : dim(x, 0), batch = batchFirst ? dim(x, 0) : dim(x, 1);
    int64_t input = dim(x, 2);
    const Value* wt = n.input(1);  // [dirs, gates*H, input]
    int64_t dirs = dim(wt, 0);
    int64_t hidden = n.attrs().getInt("hidden_size", dim(wt, 1) / gates);
    w.cls = OpWork::Class::kGemm;
    // One step: both directions side by side, gates of [x_t, h_{t-1}] in one GEMM.
    w.gemm = {dirs, batch, gates * hidden, input + hidden};
    w.serialSteps = seq;
    double perStep = 2.0 * batch * gates * hidden * (input + hidden) + 10.0 * batch * hidden;
    w.flops = dirs * seq * perStep;
    w.note = fmt::format("{} steps of GEMM {}x{}x{}x{}", seq, w.gemm.batch, w.gemm.m, w.gemm.n,
                         w.gemm.k);
    return w;
  }

  // Everything else streams over memory.
  w.cls = OpWork::Class::kMemory;
  int64_t inN = numelOf(x);
  if ((schema && (schema->has(kView) || schema->has(kShapeOnly))) ||
      isKind(n, {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape", "Size"})) {
    w.cls = OpWork::Class::kView;
    w.flops = 0;
    w.bytes = 0;
    w.elements = 0;
    w.note = "view: no kernel";
    return w;
  }
  if (isKind(n, {"MaxPool", "AveragePool", "LpPool"})) {
    int64_t kernel = 1;
    for (int64_t d : n.attrs().getInts("kernel_shape")) kernel *= std::max<int64_t>(d, 1);
    w.flops = static_cast<double>(outN) * kernel * (k == "LpPool" ? 2 : 1);
    w.elements = std::max(outN, inN);
    w.note = fmt::format("pool, {} taps per output", kernel);
    return w;
  }
  if (isKind(n, {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ArgMax", "ArgMin"}) ||
      k.rfind("Reduce", 0) == 0) {
    double per = isKind(n, {"ReduceL2", "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum",
                            "GlobalLpPool"})
                     ? 2.0
                     : 1.0;
    w.flops = per * static_cast<double>(inN);
    w.elements = std::max(outN, inN);
    w.note = "reduction";
    return w;
  }
  if (isKind(n, {"Softmax", "LogSoftmax", "Hardmax"})) {
    w.flops = 5.0 * static_cast<double>(inN);  // max, subtract, exp, sum, divide
    w.elements = inN;
    w.note = "softmax";
    return w;
  }
  if (k == "Attention" && n.numInputs() >= 3 && x && n.input(1) && n.input(2)) {
    // Q K^T and P V (a multiply-add each), and the scale, mask and softmax on the scores (5 per
    // score, as Softmax). 4-D [B, H, S, D]; 3-D [B, S, heads * D].
    const bool four = x->rank() == 4;
    const double heads = four ? dim(x, 1) : std::max<int64_t>(1, n.attrs().getInt("q_num_heads", 1));
    const double kvHeads = four ? dim(n.input(1), 1) : std::max<int64_t>(1, n.attrs().getInt("kv_num_heads", 1));
    const double b = dim(x, 0), s = dim(x, -2), l = dim(n.input(1), -2);
    const double d = dim(x, -1) / (four ? 1.0 : heads), dv = dim(n.input(2), -1) / (four ? 1.0 : kvHeads);
    const double scores = b * heads * s * l;
    w.flops = scores * (2.0 * d + 2.0 * dv + 5.0);
    w.elements = outN;
    w.note = "attention";
    return w;
  }
  if (k == "BatchNormalization") {
    w.flops = 2.0 * static_cast<double>(inN);  // inference: scale and shift
    w.elements = inN;
    w.note = "normalization (inference)";
    return w;
  }
  if (isKind(n, {"LayerNormalization", "RMSNormalization", "InstanceNormalization", "GroupNormalization",
                 "MeanVarianceNormalization", "LpNormalization"})) {
    w.flops = 8.0 * static_cast<double>(inN);  // mean, variance, normalize, scale, shift
    w.elements = inN;
    w.note = "normalization";
    return w;
  }
  if (k == "LRN") {
    w.flops = static_cast<double>(inN) * (n.attrs().getInt("size", 5) + 4);
    w.elements = inN;
    w.note = "LRN";
    return w;
  }
  if (k == "MgElementwise") {
    double flops = 0;
    for (const std::string& instr : n.attrs().getStrings("program"))
      flops += elementwiseFlopsPerItem(instr.substr(0, instr.find(' ')));
    w.flops = std::max(flops, 1.0) * static_cast<double>(outN);
    w.note =
        fmt::format("fused elementwise, {} instructions", n.attrs().getStrings("program").size());
    return w;
  }
  if ((schema && schema->has(kElementwise)) ||
      isKind(n, {"Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu"})) {
    w.flops = elementwiseFlopsPerItem(k) * static_cast<double>(outN);
    w.note = "elementwise";
    return w;
  }
  if (isKind(n, {"Gather", "GatherElements"}) && x && y) {
    // Each output element reads one element of the data: the rows an embedding lookup gathers,
    // not its whole table (a 10000x650 table read in full would price a one-token lookup like
    // streaming 26 MB, and make small batches dearer than large ones). Counted: the gathered
    // elements, the indices, the result.
    const size_t es = dtypeSize(x->dtype()) ? dtypeSize(x->dtype()) : 4;
    const double gathered = static_cast<double>(outN) * static_cast<double>(es);
    w.bytes += gathered - bytesOf(x);
    if (x->isConstant()) w.weightBytes += gathered - bytesOf(x);
    w.flops = 0;
    w.note = "data movement (gathered elements)";
    return w;
  }
  if (isKind(n, {"Concat", "Slice", "Transpose", "Split", "Pad", "Tile", "Expand", "ScatterND",
                 "DepthToSpace", "SpaceToDepth", "Cast"})) {
    w.flops = 0;
    w.note = "data movement";
    return w;
  }
  w.flops = static_cast<double>(outN);
  w.note = "fallback: operand and result bytes";
  return w;
}

}  // namespace magneto
