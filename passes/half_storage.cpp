// half-storage: --precision fp16 on the cuda target stores activations and weights in float16.
//
// Rewrites the dtype of every float32 tensor that a node able to read and write half storage
// produces or reads (the predicate `readsHalf`, from the GPU lowering: its programs take the
// storage type as a template parameter, load float16 into float registers, accumulate and
// compute in float, and round to nearest even on store) to float16:
//
//   input %x: f32[1,3,8,8]                  input %x: f32[1,3,8,8]
//   %y = Conv(%x, %w: f32 const)       ->   %x16 = Cast<to=f16>(%x)
//   %z = LSTM(%y, ...)                      %y = Conv(%x16, %w16: f16 const)      %y: f16
//   %o = Relu(%z)                           %y32 = Cast<to=f32>(%y)
//   output %o                               %z = LSTM(%y32, ...)                  (float island)
//                                           %z16 = Cast<to=f16>(%z)
//                                           %o16 = Relu(%z16)
//                                           %o = Cast<to=f32>(%o16)               output %o
//
// The model's interface stays float32 (a Cast at entry and exit, named like the original output),
// constants read by half-capable nodes are converted once (round to nearest even; a constant
// also read by a float node keeps its float32 copy for it), and every node that cannot read half
// (an island) keeps float32 operands and results, with a Cast before and after it; a model's own
// Cast that produces float32 is half-capable and its `to` becomes float16. Data movement
// (Reshape, Transpose, Slice, ...) whose data comes from an island stays in the island, so that
// chains such as LSTM -> Squeeze -> LSTM take no casts. With dynamic dimensions a Cast's result
// takes the symbolic shape of the value it converts (it runs after the symbolic inference).
//
// Legal because the values change only by the rounding of float16 storage, which is what
// --precision fp16 asks for (the tolerance of `magnetoc check --precision fp16`, docs/
// GPU_TARGET.md "Precision"); shapes, the order of computation and the interface are unchanged.
// Run by the driver after the pass pipeline (the parallel groups are already decided) and before
// the memory plan, so the arena is sized for 2-byte activations.
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <set>

#include "magneto/passes/passes.h"

namespace magneto {
namespace {

// float32 -> float16 bits, round to nearest even, overflow to infinity (the CPU runtime's and
// the GPU kernels' conversion, runtime/gpu/kernels/mg_kcommon.cuh floatToHalf).
uint16_t halfStorageBits(float v) {
  uint32_t f;
  std::memcpy(&f, &v, 4);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t absf = f & 0x7fffffffu;
  if (absf >= 0x7f800000u) return static_cast<uint16_t>(sign | (absf > 0x7f800000u ? 0x7e00 : 0x7c00));
  if (absf >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);
  if (absf < 0x38800000u) {
    if (absf < 0x33000000u) return sign;
    const uint32_t man = (absf & 0x7fffffu) | 0x800000u;
    const int shift = 126 - static_cast<int>(absf >> 23);
    uint32_t half = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = (absf >> 13) - (112u << 10);
  const uint32_t rem = absf & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

bool storedAsF32(const Value* v) { return v && v->dtype() == DType::kF32; }

bool touchesF32(const Node& n) {
  for (const Value* v : n.inputs())
    if (storedAsF32(v)) return true;
  for (const Value* v : n.outputs())
    if (storedAsF32(v)) return true;
  return false;
}

// Ops that only move or view their first operand's elements.
bool isDataMovement(const std::string& k) {
  static const std::set<std::string> kMoves = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                               "Dropout", "MgChannelSlice", "Transpose", "Expand", "Tile",
                                               "Slice", "Concat", "Split", "Gather", "Pad"};
  return kMoves.count(k) > 0;
}

}  // namespace

Expected<HalfStorageResult> storeActivationsInHalf(Graph& g, const std::function<bool(const Node&)>& readsHalf) {
  HalfStorageResult r;
  std::vector<Node*> order = g.nodes();
  // Which nodes run on half storage: the capable ones, less data movement fed by an island.
  std::set<const Node*> half;
  for (Node* n : order)
    if (touchesF32(*n) && readsHalf(*n)) half.insert(n);
  for (Node* n : order) {
    if (!half.count(n) || !isDataMovement(n->kind())) continue;
    const Value* data = n->input(0);
    const Node* p = data ? data->producer() : nullptr;
    if (p && storedAsF32(data) && !half.count(p)) half.erase(n);
  }
  for (Node* n : order)
    if (touchesF32(*n) && !half.count(n)) r.floatNodes.push_back(n->describe());

  // Results of half nodes become float16; remember which values changed.
  std::set<Value*> retyped;
  for (Node* n : order) {
    if (!half.count(n)) continue;
    for (Value* v : n->outputs())
      if (storedAsF32(v)) {
        v->setType(TensorType{DType::kF16, v->dims()});
        retyped.insert(v);
        ++r.halfValues;
        if (n->kind() == "Cast") n->attrs().set("to", static_cast<int64_t>(DType::kF16));  // a Cast to float
      }
  }

  std::map<Value*, Value*> toHalf, toFloat;  // one conversion per value
  auto cast = [&](Value* v, DType to, Node* before) {
    AttrMap a;
    a.set("to", static_cast<int64_t>(to));  // DType numbers are ONNX's TensorProto types
    Node* c = g.createNode("Cast", {v}, {TensorType{to, v->dims()}}, std::move(a),
                           g.uniqueName(v->name() + (to == DType::kF16 ? "_to_f16" : "_to_f32")), before);
    c->output(0)->setSymDims(v->symDims());  // the same shape (dynamic dims: the same expressions)
    ++r.casts;
    return c->output(0);
  };
  for (Node* n : order) {
    for (size_t i = 0; i < n->numInputs(); ++i) {
      Value* v = n->input(i);
      if (!v) continue;
      if (half.count(n) && storedAsF32(v)) {
        // A float32 operand of a half node: a converted constant, or a Cast before n.
        auto it = toHalf.find(v);
        if (it == toHalf.end()) {
          Value* h;
          if (v->isConstant() && v->constant().hasData()) {
            const Tensor& t = v->constant();
            std::vector<uint16_t> bits(static_cast<size_t>(t.numel()));
            for (size_t e = 0; e < bits.size(); ++e) bits[e] = halfStorageBits(t.data<float>()[e]);
            h = g.addConstant(g.uniqueName(v->name() + "_f16"), Tensor::fromVector(DType::kF16, t.dims(), bits));
            ++r.halfConstants;
          } else {
            h = cast(v, DType::kF16, n);
          }
          it = toHalf.emplace(v, h).first;
        }
        n->setInput(i, it->second);
      } else if (!half.count(n) && retyped.count(v)) {
        auto it = toFloat.find(v);
        if (it == toFloat.end()) it = toFloat.emplace(v, cast(v, DType::kF32, n)).first;
        n->setInput(i, it->second);
      }
    }
  }
  // The interface stays float32: a Cast at exit, which takes the output's name.
  std::vector<Value*> outs = g.outputs();
  for (Value*& o : outs) {
    if (!retyped.count(o)) continue;
    const std::string name = o->name();
    g.renameValue(o, g.uniqueName(name + "_f16"));
    AttrMap a;
    a.set("to", static_cast<int64_t>(DType::kF32));
    Node* c = g.createNode("Cast", {o}, {TensorType{DType::kF32, o->dims()}}, std::move(a),
                           g.uniqueName(name + "_to_f32"), nullptr, {name});
    c->output(0)->setSymDims(o->symDims());
    ++r.casts;
    o = c->output(0);
  }
  g.setOutputs(outs);
  g.removeDeadValues();
  if (!g.topoSort()) return internalStatus("half-storage: the graph has a cycle after inserting casts");
  return r;
}

}  // namespace magneto
