// fuse-qdq: rewrites the QDQ form of a quantized convolution into one integer QLinearConv, so that
// the CPU runs it on the VNNI kernel (runtime/cpu/f_qconv.cpp) instead of dequantizing the weights
// to float32 and computing the convolution in float.
//
// onnxruntime's static quantizer (QuantFormat.QDQ) and PyTorch's write a quantized Conv as
//   %xf = DequantizeLinear(%xq, %xs, %xz)                  uint8/int8 activation, per tensor
//   %wf = DequantizeLinear(%wq, %ws, %wz) {axis = 0}      constant int8 weight, per tensor or channel
//   %bf = DequantizeLinear(%bq, %bs)                       constant int32 bias at scale xs * ws
//   %yf = Conv(%xf, %wf, %bf) ; [%yr = Relu(%yf)] ; %yq = QuantizeLinear(%yr, %ys, %yz)
//     ->  %yq = QLinearConv(%xq, %xs, %xz, %wq, %ws, %wz, %ys, %yz, %bq)   (Conv's attributes)
// which is the form onnxruntime itself runs (its QDQ transformer makes the same QLinearConv).
//
// What changes, and why that is what a user of a quantized model expects: the QDQ graph read
// literally sums float32 products of dequantized values and rounds that sum once in
// QuantizeLinear; QLinearConv sums the same integer products exactly (int32) and scales the sum by
// xs * ws / ys in float32 before the same rounding. The two differ only where float32 rounding of
// the sum moves a value across a half step of the output scale: one output step, at such
// boundaries, and the integer result is the one the quantizer calibrated for and onnxruntime
// computes. Everything else is exact:
//   - the bias: its int32 values are added as they are; QLinearConv defines them at scale
//     xs * ws[m], so the pass requires the bias's DequantizeLinear scale to equal the float32
//     product xs * ws[m] within 1e-6 relative (quantizers compute it in float32 or float64), and
//     its zero point to be 0;
//   - a Relu between the Conv and the QuantizeLinear is dropped only when the output zero point
//     is the type's lowest value (uint8 0, int8 -128): then QuantizeLinear's saturation already
//     maps every negative value to it, so quantize(relu(v)) == quantize(v) for every v;
//   - padding: Conv pads the dequantized input with 0.0, which is the input zero point's value;
//     QLinearConv pads with the zero point (ONNX), the same number.
// Depthwise convolutions (group == input channels == output channels) are rewritten the same way;
// other grouped ones are left in float (the integer kernels are ungrouped or depthwise).
// Required besides: scales and zero points are constants of the shapes QLinearConv takes (x and y
// per tensor, w per tensor or per output channel along axis 0), the weight and bias are
// constants, and the Conv's (and Relu's) result is read by nothing but the next step, so no float
// value disappears that something else reads. The DequantizeLinear of the activation stays for its
// other readers (dce removes it when none is left).
//
// Only for targets whose code runs QLinearConv fast (include/magneto/target/target_limits.h): the
// cuda and hip lowerings have no integer convolution yet, and there the dequantized float Conv
// stays. Runs before fold, which would otherwise fold the weights' DequantizeLinear into float32
// constants.
//
// Also DequantizeLinear -> MaxPool -> QuantizeLinear with the same parameters -> MaxPool on the
// quantized bytes (see matchPoolAt), which the CPU runs on its uint8/int8 pool kernel, and a
// residual Add between DequantizeLinears and a QuantizeLinear -> MgQuantizedAdd (matchAddAt).
//
// Golden tests: tests/ir/fuse_qdq.mlir, fuse_qdq_kept.mlir, fuse_qdq_maxpool.mlir, fuse_qdq_add.mlir
#include <cmath>
#include <initializer_list>
#include <optional>

#include <set>
#include <string>
#include <vector>

#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/target_limits.h"
#include "match_common.h"

namespace magneto {
namespace qdq {  // a named namespace: the passes are compiled as one unity file
namespace {

bool isQuant8(DType t) { return t == DType::kU8 || t == DType::kI8; }

// A depthwise Conv: one input channel per group and per output channel (weights [C, 1, kh, kw]
// over C input channels), static channel counts.
bool isDepthwise(const Node* conv) {
  const Value* x = conv->input(0);
  const Value* w = conv->input(1);
  if (x->rank() < 3 || w->rank() != x->rank()) return false;
  const int64_t c = x->dims()[1], group = conv->attrs().getInt("group", 1);
  return c > 0 && group == c && w->dims()[0] == c && w->dims()[1] == 1;
}

// A constant operand with its bytes (not an opaque checksum-only weight).
const Tensor* constantOf(const Node* n, size_t i) {
  if (!n->hasInput(i) || !n->input(i)->isConstant() || !n->input(i)->constant().hasData()) return nullptr;
  return &n->input(i)->constant();
}

struct DqParts {
  Node* node = nullptr;
  Value* q = nullptr;       // the quantized operand
  Value* scale = nullptr;
  Value* zero = nullptr;    // null: absent (0 of q's type)
};

// A DequantizeLinear with constant scale (and zero point) of `count` elements (1: per tensor, or
// `perAxis` along axis 0 of a rank-`rank` operand) whose zero point has q's type.
std::optional<DqParts> dqOf(const Value* v, int64_t perAxis) {
  Node* n = v->producer();
  if (!n || n->kind() != "DequantizeLinear" || n->attrs().getInt("block_size", 0) != 0) return std::nullopt;
  const Tensor* s = constantOf(n, 1);
  if (!s || s->dtype() != DType::kF32) return std::nullopt;
  const int64_t count = s->numel();
  if (count != 1) {
    const int rank = n->input(0)->rank();
    int64_t axis = n->attrs().getInt("axis", 1);
    if (axis < 0) axis += rank;
    if (perAxis <= 1 || count != perAxis || axis != 0 || s->type().rank() != 1) return std::nullopt;
  }
  if (n->hasInput(2)) {
    const Tensor* z = constantOf(n, 2);
    if (!z || z->numel() != count || z->dtype() != n->input(0)->dtype()) return std::nullopt;
  }
  return DqParts{n, n->input(0), n->input(1), n->hasInput(2) ? n->input(2) : nullptr};
}

int64_t lowestOf(DType t) { return t == DType::kI8 ? -128 : 0; }

struct ConvMatch {
  Node* conv = nullptr;
  Node* relu = nullptr;  // dropped Relu, or null
  Node* quant = nullptr;
  DqParts x, w, b;
  bool hasBias = false;
  Value* yScale = nullptr;
  Value* yZero = nullptr;  // null: absent
};

std::optional<ConvMatch> matchAt(Node* q) {
  ConvMatch m;
  m.quant = q;
  const DType yT = q->output(0)->dtype();
  if (!isQuant8(yT) || q->numInputs() < 2) return std::nullopt;
  const Tensor* ys = constantOf(q, 1);
  if (!ys || ys->dtype() != DType::kF32 || ys->numel() != 1) return std::nullopt;
  int64_t yZero = 0;
  if (q->hasInput(2)) {
    const Tensor* yz = constantOf(q, 2);
    if (!yz || yz->numel() != 1 || yz->dtype() != yT) return std::nullopt;
    yZero = yz->intAt(0);
    m.yZero = q->input(2);
  }
  m.yScale = q->input(1);
  Node* p = q->input(0)->producer();
  if (!p || match::soleUser(q->input(0)) != q) return std::nullopt;
  if (p->kind() == "Relu") {
    if (yZero != lowestOf(yT)) return std::nullopt;
    m.relu = p;
    p = p->input(0)->producer();
    if (!p || match::soleUser(m.relu->input(0)) != m.relu) return std::nullopt;
  }
  if (p->kind() != "Conv" || p->numOutputs() != 1) return std::nullopt;
  // Grouped convolutions other than depthwise ones stay in float: the CPU's integer kernels are
  // ungrouped or depthwise (other groups would run the reference loops, far slower than the float
  // kernels).
  if (p->attrs().getInt("group", 1) != 1 && !isDepthwise(p)) return std::nullopt;
  m.conv = p;
  const int rank = p->input(0)->rank();
  if (rank != 3 && rank != 4) return std::nullopt;
  auto x = dqOf(p->input(0), 0);
  if (!x || !isQuant8(x->q->dtype())) return std::nullopt;
  const int64_t M = p->input(1)->rank() == rank ? p->input(1)->dims()[0] : -1;
  auto w = dqOf(p->input(1), M);
  if (M <= 0 || !w || !isQuant8(w->q->dtype()) || !w->q->isConstant() || !w->q->constant().hasData())
    return std::nullopt;
  m.x = *x;
  m.w = *w;
  if (p->hasInput(2)) {
    auto b = dqOf(p->input(2), M);
    if (!b || b->q->dtype() != DType::kI32 || !b->q->isConstant() || !b->q->constant().hasData() ||
        b->q->rank() != 1 || b->q->dims()[0] != M)
      return std::nullopt;
    if (b->zero) {
      const Tensor& z = b->zero->constant();
      for (int64_t i = 0; i < z.numel(); ++i)
        if (z.intAt(i) != 0) return std::nullopt;
    }
    // The bias's scale must be xs * ws[m] (QLinearConv's definition of its bias).
    const float xs = static_cast<float>(x->scale->constant().floatAt(0));
    const Tensor& ws = w->scale->constant();
    const Tensor& bs = b->scale->constant();
    for (int64_t i = 0; i < M; ++i) {
      const float want = xs * static_cast<float>(ws.floatAt(ws.numel() == 1 ? 0 : i));
      const double have = bs.floatAt(bs.numel() == 1 ? 0 : i);
      if (!(std::fabs(have - want) <= 1e-6 * std::fabs(want))) return std::nullopt;
    }
    m.b = *b;
    m.hasBias = true;
  }
  return m;
}

// The last step of every rewrite: `n` (created before the QuantizeLinear `quant`) replaces the
// chain ending in quant (its other nodes in `chain`, null entries skipped); n's result takes
// quant's name and readers after a check that it has the type the chain gave (anything else is a
// bug in the rewrite).
Status replaceChain(Graph& g, Node* n, Node* quant, std::initializer_list<Node*> chain) {
  MG_RETURN_IF_ERROR(inferNode(*n));
  Value* old = quant->output(0);
  if (n->output(0)->type() != old->type())
    return internalStatus("fuse-qdq: {} gives {}, the QDQ chain gave {}", n->describe(), n->output(0)->type().str(),
                          old->type().str());
  const std::string name = old->name();
  g.replaceAllUsesWith(old, n->output(0));
  g.eraseNode(quant);
  for (Node* c : chain)
    if (c) g.eraseNode(c);
  g.renameValue(n->output(0), name);
  return Status::success();
}

Value* zeroPoint(Graph& g, DType t, const Dims& dims, const std::string& base) {
  return g.addConstant(g.uniqueName(base), Tensor::zeros(TensorType{t, dims}));
}

Status rewrite(Graph& g, const ConvMatch& m) {
  const std::string base = m.conv->name().empty() ? m.conv->output(0)->name() : m.conv->name();
  Value* xz = m.x.zero ? m.x.zero : zeroPoint(g, m.x.q->dtype(), {}, base + "/x_zero_point");
  Value* wz = m.w.zero ? m.w.zero : zeroPoint(g, m.w.q->dtype(), m.w.scale->dims(), base + "/w_zero_point");
  Value* yz = m.yZero ? m.yZero : zeroPoint(g, m.quant->output(0)->dtype(), {}, base + "/y_zero_point");
  std::vector<Value*> ins = {m.x.q, m.x.scale, xz, m.w.q, m.w.scale, wz, m.yScale, yz};
  if (m.hasBias) ins.push_back(m.b.q);
  Node* n = g.createNode("QLinearConv", ins, {TensorType{}}, m.conv->attrs(), base + "/qlinear", m.quant);
  MG_RETURN_IF_ERROR(replaceChain(g, n, m.quant, {m.relu, m.conv}));
  for (Node* dq : {m.w.node, m.hasBias ? m.b.node : nullptr})
    if (dq && !dq->output(0)->hasUses() && !dq->output(0)->isGraphOutput()) g.eraseNode(dq);
  return Status::success();
}

// DequantizeLinear(%xq, s, z) -> MaxPool -> QuantizeLinear(s, z), the same constant s and z:
// MaxPool on %xq itself. Legal: dequantizing is strictly increasing (s > 0), so the window's max
// of the dequantized values is the dequantized max, and QuantizeLinear(DequantizeLinear(v)) with
// the same parameters is v (round((v - z) * s / s) = v - z exactly: the float error is far below a
// half step); MaxPool's padding never wins a max either way. The quantizers give MaxPool its
// input's parameters, so this is every quantized MaxPool they write.
struct PoolMatch {
  Node* quant = nullptr;
  Node* pool = nullptr;
  Value* xq = nullptr;
};

bool sameScalar(const Value* a, const Value* b) {
  if (!a || !b) return a == b;
  if (!a->isConstant() || !b->isConstant() || !a->constant().hasData() || !b->constant().hasData()) return false;
  const Tensor &x = a->constant(), &y = b->constant();
  return x.numel() == 1 && y.numel() == 1 && x.dtype() == y.dtype() &&
         (x.dtype() == DType::kF32 ? x.floatAt(0) == y.floatAt(0) : x.intAt(0) == y.intAt(0));
}

std::optional<PoolMatch> matchPoolAt(Node* q) {
  Node* pool = q->input(0)->producer();
  if (!pool || pool->kind() != "MaxPool" || pool->numOutputs() != 1 || match::soleUser(q->input(0)) != q) return std::nullopt;
  if (pool->attrs().getInt("storage_order", 0) != 0) return std::nullopt;
  Node* dq = pool->input(0)->producer();
  if (!dq || dq->kind() != "DequantizeLinear" || !isQuant8(dq->input(0)->dtype()) ||
      q->output(0)->dtype() != dq->input(0)->dtype())
    return std::nullopt;
  const Tensor* s = constantOf(dq, 1);
  if (!s || s->numel() != 1 || !(s->floatAt(0) > 0) || !std::isfinite(s->floatAt(0))) return std::nullopt;
  Value* qz = q->hasInput(2) ? q->input(2) : nullptr;
  Value* dz = dq->hasInput(2) ? dq->input(2) : nullptr;
  // An absent zero point is 0 of the quantized type.
  auto zeroOrAbsent = [](const Value* z) {
    return !z || (z->isConstant() && z->constant().hasData() && z->constant().numel() == 1 && z->constant().intAt(0) == 0);
  };
  const bool zerosMatch = (qz && dz) ? sameScalar(qz, dz) : (zeroOrAbsent(qz) && zeroOrAbsent(dz));
  if (!sameScalar(q->input(1), dq->input(1)) || !zerosMatch) return std::nullopt;
  return PoolMatch{q, pool, dq->input(0)};
}

Status rewritePool(Graph& g, const PoolMatch& m) {
  const std::string base = m.pool->name().empty() ? m.pool->output(0)->name() : m.pool->name();
  Node* n = g.createNode("MaxPool", {m.xq}, {TensorType{}}, m.pool->attrs(), base + "/int8", m.quant);
  return replaceChain(g, n, m.quant, {m.pool});
}

// QuantizeLinear(Add(DequantizeLinear(a), DequantizeLinear(b))), everything per tensor and a, b
// and the sum of one shape (a residual add): one MgQuantizedAdd, which computes exactly those
// three formulas per element (the same float32 operations, docs/QUANTIZATION.md) in one pass over
// the bytes instead of four passes over float32 tensors. The Add's result must be read by the
// QuantizeLinear alone; the DequantizeLinears stay for their other readers.
struct AddMatch {
  Node* quant = nullptr;
  Node* add = nullptr;
  DqParts a, b;
};

std::optional<AddMatch> matchAddAt(Node* q) {
  Node* add = q->input(0)->producer();
  if (!add || add->kind() != "Add" || match::soleUser(q->input(0)) != q) return std::nullopt;
  const Tensor* ys = constantOf(q, 1);
  if (!ys || ys->numel() != 1 || ys->dtype() != DType::kF32 || !isQuant8(q->output(0)->dtype())) return std::nullopt;
  if (q->hasInput(2) && !(constantOf(q, 2) && constantOf(q, 2)->numel() == 1)) return std::nullopt;
  auto a = dqOf(add->input(0), 0), b = dqOf(add->input(1), 0);
  if (!a || !b || !isQuant8(a->q->dtype()) || !isQuant8(b->q->dtype())) return std::nullopt;
  const Dims& out = add->output(0)->dims();
  if (a->q->dims() != out || b->q->dims() != out || add->output(0)->isSymbolic()) return std::nullopt;
  return AddMatch{q, add, *a, *b};
}

Status rewriteAdd(Graph& g, const AddMatch& m) {
  const std::string base = m.add->name().empty() ? m.add->output(0)->name() : m.add->name();
  Value* az = m.a.zero ? m.a.zero : zeroPoint(g, m.a.q->dtype(), {}, base + "/a_zero_point");
  Value* bz = m.b.zero ? m.b.zero : zeroPoint(g, m.b.q->dtype(), {}, base + "/b_zero_point");
  Value* yz = m.quant->hasInput(2) ? m.quant->input(2) : zeroPoint(g, m.quant->output(0)->dtype(), {}, base + "/y_zero_point");
  Node* n = g.createNode("MgQuantizedAdd", {m.a.q, m.a.scale, az, m.b.q, m.b.scale, bz, m.quant->input(1), yz},
                         {TensorType{}}, AttrMap{}, base + "/quantized", m.quant);
  return replaceChain(g, n, m.quant, {m.add});
}

}  // namespace
}  // namespace qdq

Expected<bool> fuseQdq(Graph& g, const std::string& target) {
  using namespace qdq;
  if (!targetRunsIntegerConv(target)) return false;
  bool changed = false;
  std::set<const Node*> erased;
  for (Node* q : g.nodes()) {
    if (erased.count(q) || q->kind() != "QuantizeLinear") continue;
    if (std::optional<AddMatch> am = matchAddAt(q)) {
      erased.insert({am->quant, am->add});
      MG_RETURN_IF_ERROR(rewriteAdd(g, *am));
      changed = true;
      continue;
    }
    if (std::optional<PoolMatch> pm = matchPoolAt(q)) {
      erased.insert({pm->quant, pm->pool});
      MG_RETURN_IF_ERROR(rewritePool(g, *pm));
      changed = true;
      continue;
    }
    std::optional<ConvMatch> m = matchAt(q);
    if (!m) continue;
    erased.insert({m->conv, m->quant, m->relu, m->w.node, m->b.node});
    MG_RETURN_IF_ERROR(rewrite(g, *m));
    changed = true;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

std::vector<QdqFloatOp> floatBetweenQdq(const Graph& g, const std::string& target) {
  using namespace qdq;
  std::vector<QdqFloatOp> out;
  auto activationDq = [](const Value* v) {
    const Node* p = v ? v->producer() : nullptr;
    return p && p->kind() == "DequantizeLinear" && !p->input(0)->isConstant();
  };
  for (const Node* n : g.nodes()) {
    const std::string& k = n->kind();
    if (k == "QuantizeLinear" || k == "DequantizeLinear") continue;
    bool fromDq = false, toQ = false;
    for (const Value* v : n->inputs()) fromDq |= activationDq(v);
    for (const Value* v : n->outputs())
      for (const Use& u : v->uses()) toQ |= u.node->kind() == "QuantizeLinear";
    if (!fromDq || !toQ) continue;
    std::string why;
    if (!targetRunsIntegerConv(target))
      why = "the " + target + " target has no integer programs yet (fuse-qdq runs on cpu only)";
    else if (k == "Conv" && n->attrs().getInt("group", 1) != 1 && !isDepthwise(n))
      why = "grouped convolution (not depthwise): the integer kernels are ungrouped or depthwise";
    else if (k == "Conv")
      why = "not the QDQ form fuse-qdq takes: it needs constant int8 weights, an int32 bias at x_scale * w_scale, "
            "per-tensor activations, a Relu only before a zero point at the type's lowest value, and the result "
            "read by the QuantizeLinear alone";
    else if (k == "MatMul" || k == "Gemm")
      why = "no integer matrix product yet (QLinearMatMul runs the reference loops)";
    else if (k == "Add")
      why = "operands of different shapes, or parameters that are not per tensor";
    else if (k == "MaxPool")
      why = "its QuantizeLinear's scale or zero point differ from the DequantizeLinear's";
    else
      why = "no integer program for " + k;
    out.push_back({n->name().empty() ? n->output(0)->name() : n->name(), k, why});
  }
  return out;
}

namespace {
class FuseQdqPass : public Pass {
 public:
  const char* name() const override { return "fuse-qdq"; }
  const char* summary() const override {
    return "DequantizeLinear -> Conv [-> Relu] -> QuantizeLinear -> one integer QLinearConv; quantized MaxPool and "
           "residual Add on the bytes (cpu)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override { return fuseQdq(g, ctx.target); }
};
}  // namespace

std::unique_ptr<Pass> makeFuseQdqPass() { return std::make_unique<FuseQdqPass>(); }

}  // namespace magneto
