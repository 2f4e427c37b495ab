// decompose-attention: rewrites the transformer ops of opset 23 — Attention, RotaryEmbedding,
// RMSNormalization — into ops every target already compiles (MatMul, Softmax, Mul, Add, Div,
// Sqrt, ReduceMean, Tanh, Where, Slice, Concat, Gather, Reshape, Transpose). It runs first in the
// default pipeline, so the cpu, cuda and hip targets need no kernel of their own for these ops
// and the later passes (fusion, the parallel passes) see plain ops: the Q/K/V projections and
// the two batched MatMuls of each head group.
//
// Legal because each rewrite computes the op's definition (ONNX opset 23, with onnxruntime's
// reading where the specification is loose, as the reference kernels of
// runtime/cpu/k_nn_attention.cpp do) with the same operations in the same element type:
//   RMSNormalization  Y = X / Sqrt(ReduceMean(X * X, axes [axis, rank)) + epsilon) * scale
//   RotaryEmbedding   cos/sin rows (Gather by position_ids, or the caches as given) broadcast
//                     over the heads; x1, x2 = the two halves (or the even and odd elements, when
//                     interleaved) of the first rotary_embedding_dim dims;
//                     (x1 cos - x2 sin, x1 sin + x2 cos) put back in place, the rest copied
//   Attention         K' = Concat(past_key, K), V' likewise (present_key, present_value);
//                     S = (Q * scale) K'^T, softcap * Tanh(S / softcap), + mask (bool: Where(m,
//                     0, -inf)) + causal (0 / -inf, offset by the past length), Softmax, P V'
// Grouped-query heads copy no K or V: q head h reads kv head h / g (g = q_heads / kv_heads), so
// the g query heads of one kv head are contiguous and Q [B, Hq, Sq, D] reshapes (a view) to
// [B, Hkv, g*Sq, D]: one batched MatMul per kv head against K' [B, Hkv, D, L] gives all g heads'
// scores, which reshape back to [B, Hq, Sq, L] for the mask and the Softmax, and the same
// reshape feeds P V'. Without a past, present_key is K itself; a value that would leave the graph
// as both an input and an output goes through an Identity (canonicalize keeps it then).
//
//   %y = Attention(%q, %k, %v) {kv_num_heads = 2, q_num_heads = 8}      (3-D, GQA)
//     ->  %q4 = Transpose(Reshape(%q, [B,S,8,D]), perm [0,2,1,3])  ; %k4, %v4 with 2 heads
//         %s = Reshape(MatMul(Reshape(Mul(%q4, scale), [B,2,4*S,D]), Transpose(%k4, [0,1,3,2])))
//         %p = Softmax(%s) ; %o = Reshape(MatMul(Reshape(%p, [B,2,4*S,L]), %v4), [B,8,S,Dv])
//         %y = Reshape(Transpose(%o, [0,2,1,3]), [B,S,8*Dv])
//
// Graphs with dynamic dimensions keep the ops (an error names the node: not supported yet).
// Golden tests: tests/ir/decompose_attention.mlir, decompose_attention_gqa.mlir,
// decompose_attention_dynamic.mlir (the refusal),
// decompose_rotary.mlir, decompose_rmsnorm.mlir; end to end against onnxruntime:
// tests/e2e/opset23_test.sh.
#include <cmath>
#include <limits>
#include <set>

#include "magneto/ir/op_schema.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {

namespace {

bool isTarget(const std::string& k) {
  return k == "Attention" || k == "RotaryEmbedding" || k == "RMSNormalization";
}

AttrMap attr(const std::string& name, Attribute v) {
  AttrMap m;
  m.set(name, std::move(v));
  return m;
}

// Creates nodes before `at`, each named after it, with result types from shape inference.
class Builder {
 public:
  Builder(Graph& g, Node* at) : g_(g), at_(at), t_(at->input(0)->dtype()) {}

  Value* op(const std::string& kind, const std::vector<Value*>& ins, AttrMap attrs = {}) {
    Node* n = g_.createNode(kind, ins, {TensorType{}}, std::move(attrs),
                            fmt::format("{}/{}{}", at_->name(), kind, count_++), at_);
    mine_.insert(n->output(0));
    Status s = inferNode(*n);
    if (!s.ok() && status_.ok()) status_ = s;
    return n->output(0);
  }
  Value* ints(const std::vector<int64_t>& v) {
    return g_.addConstant(g_.uniqueName(at_->name() + "/i"),
                          Tensor::fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v));
  }
  // A constant of the op's element type.
  Value* floats(const Dims& dims, const std::vector<double>& v) {
    Tensor t = t_ == DType::kF64
                   ? Tensor::fromVector<double>(DType::kF64, dims, v)
                   : Tensor::fromVector<float>(DType::kF32, dims, std::vector<float>(v.begin(), v.end()));
    return g_.addConstant(g_.uniqueName(at_->name() + "/c"), std::move(t));
  }
  Value* scalar(double v) { return floats({}, {v}); }

  Value* reshape(Value* x, const std::vector<int64_t>& dims) { return op("Reshape", {x, ints(dims)}); }
  Value* transpose(Value* x, const std::vector<int64_t>& perm) {
    return op("Transpose", {x}, attr("perm", Attribute(perm)));
  }
  Value* slice(Value* x, int64_t begin, int64_t end, int64_t axis, int64_t step = 1) {
    return op("Slice", {x, ints({begin}), ints({end}), ints({axis}), ints({step})});
  }
  Value* concat(const std::vector<Value*>& xs, int64_t axis) {
    return op("Concat", xs, attr("axis", Attribute(axis)));
  }

  // Hands result `i` of the op over to `v` (its users, graph outputs and name).
  void replace(size_t i, Value* v) {
    if (i >= at_->numOutputs()) return;
    Value* old = at_->output(i);
    if (!old || (!old->hasUses() && !old->isGraphOutput())) return;
    if (!mine_.count(v) || v == replaced_) v = op("Identity", {v});
    replaced_ = v;
    std::string name = old->name();
    g_.replaceAllUsesWith(old, v);
    pending_.push_back({v, name});
  }
  // Erases the op and gives its results' names to their replacements.
  Status finish() {
    MG_RETURN_IF_ERROR(status_);
    g_.eraseNode(at_);
    for (auto& [v, name] : pending_) g_.renameValue(v, name);
    return Status::success();
  }
  DType dtype() const { return t_; }

 private:
  Graph& g_;
  Node* at_;
  DType t_;
  int count_ = 0;
  Status status_ = Status::success();
  std::set<Value*> mine_;
  Value* replaced_ = nullptr;
  std::vector<std::pair<Value*, std::string>> pending_;
};

Status decomposeRMSNorm(Graph& g, Node* n) {
  Builder b(g, n);
  Value* x = n->input(0);
  const int64_t rank = x->type().rank();
  int64_t axis = n->attrs().getInt("axis", -1);
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  Value* ms = b.op("ReduceMean", {b.op("Mul", {x, x}), b.ints(axes)},
                   attr("keepdims", Attribute(int64_t{1})));
  Value* rms = b.op("Sqrt", {b.op("Add", {ms, b.scalar(n->attrs().getFloat("epsilon", 1e-5))})});
  b.replace(0, b.op("Mul", {b.op("Div", {x, rms}), n->input(1)}));
  return b.finish();
}

Status decomposeRotary(Graph& g, Node* n) {
  Builder b(g, n);
  Value* x = n->input(0);
  const Dims xd = x->type().dims;
  const bool four = xd.size() == 4;
  const int64_t B = xd[0];
  const int64_t H = four ? xd[1] : n->attrs().getInt("num_heads", 0);
  const int64_t S = four ? xd[2] : xd[1];
  const int64_t D = four ? xd[3] : xd[2] / H;
  int64_t R = n->attrs().getInt("rotary_embedding_dim", 0);
  if (R == 0) R = D;
  const int64_t half = R / 2;
  const bool interleaved = n->attrs().getInt("interleaved", 0) != 0;
  // Work on [B, H, S, D] (4-D, as given) or [B, S, H, D] (3-D, a view); cos/sin broadcast over H.
  Value* w = four ? x : b.reshape(x, {B, S, H, D});
  const std::vector<int64_t> cs = four ? std::vector<int64_t>{B, 1, S, half}
                                       : std::vector<int64_t>{B, S, 1, half};
  Value* cosv = n->input(1);
  Value* sinv = n->input(2);
  if (n->hasInput(3)) {
    cosv = b.op("Gather", {cosv, n->input(3)}, attr("axis", Attribute(int64_t{0})));
    sinv = b.op("Gather", {sinv, n->input(3)}, attr("axis", Attribute(int64_t{0})));
  }
  cosv = b.reshape(cosv, cs);
  sinv = b.reshape(sinv, cs);
  Value* xr = R < D ? b.slice(w, 0, R, 3) : w;
  Value* x1 = interleaved ? b.slice(xr, 0, R, 3, 2) : b.slice(xr, 0, half, 3);
  Value* x2 = interleaved ? b.slice(xr, 1, R, 3, 2) : b.slice(xr, half, R, 3);
  Value* real = b.op("Sub", {b.op("Mul", {x1, cosv}), b.op("Mul", {x2, sinv})});
  Value* imag = b.op("Add", {b.op("Mul", {x1, sinv}), b.op("Mul", {x2, cosv})});
  const Dims& wd = w->type().dims;
  Value* rot;
  if (interleaved) {
    std::vector<int64_t> d5 = {wd[0], wd[1], wd[2], half, 1};
    rot = b.reshape(b.concat({b.reshape(real, d5), b.reshape(imag, d5)}, 4),
                    {wd[0], wd[1], wd[2], R});
  } else {
    rot = b.concat({real, imag}, 3);
  }
  Value* y = R < D ? b.concat({rot, b.slice(w, R, D, 3)}, 3) : rot;
  if (!four) y = b.reshape(y, xd);
  b.replace(0, y);
  return b.finish();
}

Status decomposeAttention(Graph& g, Node* n) {
  Builder b(g, n);
  const AttrMap& a = n->attrs();
  Value *q = n->input(0), *k = n->input(1), *v = n->input(2);
  const Dims qd = q->type().dims, kd = k->type().dims, vd = v->type().dims;
  const bool four = qd.size() == 4;
  const int64_t B = qd[0];
  const int64_t Hq = four ? qd[1] : a.getInt("q_num_heads", 0);
  const int64_t Hkv = four ? kd[1] : a.getInt("kv_num_heads", 0);
  const int64_t Sq = four ? qd[2] : qd[1];
  const int64_t Skv = four ? kd[2] : kd[1];
  const int64_t Dh = four ? qd[3] : qd[2] / Hq;
  const int64_t Dv = four ? vd[3] : vd[2] / Hkv;
  const int64_t grp = Hq / Hkv;
  const bool past = n->hasInput(4) && n->hasInput(5);
  const int64_t P = past ? n->input(4)->type().dims[2] : 0;
  const int64_t L = P + Skv;
  if (!four) {
    q = b.transpose(b.reshape(q, {B, Sq, Hq, Dh}), {0, 2, 1, 3});
    k = b.transpose(b.reshape(k, {B, Skv, Hkv, Dh}), {0, 2, 1, 3});
    v = b.transpose(b.reshape(v, {B, Skv, Hkv, Dv}), {0, 2, 1, 3});
  }
  if (past) {
    k = b.concat({n->input(4), k}, 2);
    v = b.concat({n->input(5), v}, 2);
  }
  b.replace(1, k);
  b.replace(2, v);
  const double scale = a.find("scale") ? a.getFloat("scale", 1.0) : 1.0 / std::sqrt(static_cast<double>(Dh));
  Value* qs = b.op("Mul", {q, b.scalar(scale)});
  if (grp > 1) qs = b.reshape(qs, {B, Hkv, grp * Sq, Dh});
  Value* s = b.op("MatMul", {qs, b.transpose(k, {0, 1, 3, 2})});
  if (grp > 1) s = b.reshape(s, {B, Hq, Sq, L});
  const int64_t mode = a.getInt("qk_matmul_output_mode", 0);
  Value* qkOut = s;
  const double softcap = a.getFloat("softcap", 0.0);
  if (softcap > 0)
    s = b.op("Mul", {b.op("Tanh", {b.op("Mul", {s, b.scalar(1.0 / softcap)})}), b.scalar(softcap)});
  if (mode == 1) qkOut = s;
  const double ninf = -std::numeric_limits<double>::infinity();
  Value* bias = nullptr;
  if (n->hasInput(3)) {
    Value* m = n->input(3);
    bias = m->dtype() == DType::kBool ? b.op("Where", {m, b.scalar(0.0), b.scalar(ninf)}) : m;
  }
  if (a.getInt("is_causal", 0) != 0) {
    std::vector<double> c(static_cast<size_t>(Sq * L));
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < L; ++j) c[static_cast<size_t>(i * L + j)] = j > i + P ? ninf : 0.0;
    Value* cv = b.floats({Sq, L}, c);
    bias = bias ? b.op("Add", {bias, cv}) : cv;
  }
  if (bias) s = b.op("Add", {s, bias});
  if (mode == 2) qkOut = s;
  Value* p = b.op("Softmax", {s}, attr("axis", Attribute(int64_t{-1})));
  if (mode == 3) qkOut = p;
  b.replace(3, qkOut);
  Value* o = b.op("MatMul", {grp > 1 ? b.reshape(p, {B, Hkv, grp * Sq, L}) : p, v});
  if (grp > 1) o = b.reshape(o, {B, Hq, Sq, Dv});
  if (!four) o = b.reshape(b.transpose(o, {0, 2, 1, 3}), {B, Sq, Hq * Dv});
  b.replace(0, o);
  return b.finish();
}

}  // namespace

Expected<bool> decomposeAttentionOps(Graph& g) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (!isTarget(n->kind())) continue;
    if (!g.symbols().empty())
      return unsupported("{}: {} in a graph with dynamic dimensions is not supported yet "
                         "(give the inputs static shapes, e.g. with --shape)",
                         n->describe(), n->kind());
    // Operand types may have changed since import (a pass rewrote them): check again.
    MG_RETURN_IF_ERROR(inferNode(*n));
    Status s = n->kind() == "Attention"         ? decomposeAttention(g, n)
               : n->kind() == "RotaryEmbedding" ? decomposeRotary(g, n)
                                                : decomposeRMSNorm(g, n);
    MG_RETURN_IF_ERROR(s);
    changed = true;
  }
  return changed;
}

namespace {
class DecomposeAttentionPass : public Pass {
 public:
  const char* name() const override { return "decompose-attention"; }
  const char* summary() const override {
    return "Attention, RotaryEmbedding, RMSNormalization (opset 23) -> MatMul/Softmax/elementwise ops";
  }
  Expected<bool> run(Graph& g, PassContext&) override { return decomposeAttentionOps(g); }
};
}  // namespace

std::unique_ptr<Pass> makeDecomposeAttentionPass() { return std::make_unique<DecomposeAttentionPass>(); }

}  // namespace magneto
