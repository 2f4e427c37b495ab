// Recurrent op family: LSTM, GRU and RNN with ONNX's full semantics (directions, activations with
// alpha/beta, clip, layout 0/1, sequence_lens, initial states, LSTM peepholes and input_forget,
// GRU linear_before_reset). Schemas and shape inference; kernels in runtime/cpu/k_recurrent.cpp.
// Every operand after R is optional; every result may be an unused value.
#include <algorithm>

#include "k_recurrent_act.h"
#include "families.h"

namespace magneto {
namespace {

using K = Attribute::Kind;

struct RnnKind {
  const char* op;
  int gates;        // rows of W per direction, in units of hidden_size
  int activations;  // activation functions per direction
};

Status expectDims(const InferContext& c, size_t i, const Dims& want, const char* op,
                  const char* what) {
  if (c.inputDims(i) != want)
    return badInput("{}: {} must be {}, got {}", op, what,
                    TensorType{c.inputDType(i), want}.str(), c.inputType(i).str());
  return Status::success();
}

Status inferRnn(InferContext& c, const RnnKind& k) {
  const char* op = k.op;
  DType t = c.inputDType(0);
  if (t != DType::kF32 && t != DType::kF64)
    return unsupported("{}: X must be f32 or f64, got {}", op, dtypeName(t));
  for (size_t i = 1; i < c.numInputs(); ++i) {
    if (!c.hasInput(i) || i == 4) continue;  // 4: sequence_lens is integer
    if (c.inputDType(i) != t)
      return badInput("{}: operand {} has element type {}, X has {}", op, i,
                      dtypeName(c.inputDType(i)), dtypeName(t));
  }
  const AttrMap& a = c.attrs();
  std::string dir = a.getString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return badInput("{}: direction must be forward, reverse or bidirectional, got '{}'", op, dir);
  int64_t nd = dir == "bidirectional" ? 2 : 1;
  int64_t layout = a.getInt("layout", 0);
  if (layout != 0 && layout != 1) return badInput("{}: layout must be 0 or 1, got {}", op, layout);
  const Dims& x = c.inputDims(0);
  if (x.size() != 3)
    return badInput("{}: X must be rank 3 ({}), got {}", op,
                    layout ? "[batch, seq, input]" : "[seq, batch, input]", c.inputType(0).str());
  int64_t seq = layout ? x[1] : x[0], batch = layout ? x[0] : x[1], in = x[2];
  const Dims& r = c.inputDims(2);
  if (r.size() != 3)
    return badInput("{}: R must be rank 3 [num_directions, {}*hidden, hidden], got {}", op,
                    k.gates, c.inputType(2).str());
  int64_t h = a.getInt("hidden_size", r[2]);
  if (h <= 0) return badInput("{}: hidden_size must be positive, got {}", op, h);
  int64_t gh = k.gates * h;
  MG_RETURN_IF_ERROR(expectDims(c, 1, {nd, gh, in}, op, "W"));
  MG_RETURN_IF_ERROR(expectDims(c, 2, {nd, gh, h}, op, "R"));
  if (c.hasInput(3)) MG_RETURN_IF_ERROR(expectDims(c, 3, {nd, 2 * gh}, op, "B"));
  if (c.hasInput(4)) {
    if (!isInteger(c.inputDType(4)))
      return badInput("{}: sequence_lens must be an integer tensor, got {}", op,
                      c.inputType(4).str());
    MG_RETURN_IF_ERROR(expectDims(c, 4, {batch}, op, "sequence_lens"));
  }
  Dims state = layout ? Dims{batch, nd, h} : Dims{nd, batch, h};
  if (c.hasInput(5)) MG_RETURN_IF_ERROR(expectDims(c, 5, state, op, "initial_h"));
  if (k.gates == 4) {
    if (c.hasInput(6)) MG_RETURN_IF_ERROR(expectDims(c, 6, state, op, "initial_c"));
    if (c.hasInput(7)) MG_RETURN_IF_ERROR(expectDims(c, 7, {nd, 3 * h}, op, "P"));
    int64_t inf = a.getInt("input_forget", 0);
    if (inf != 0 && inf != 1)
      return badInput("{}: input_forget must be 0 or 1, got {}", op, inf);
  }
  if (a.has("clip") && !(a.getFloat("clip", 0) > 0))
    return badInput("{}: clip must be positive, got {}", op, a.getFloat("clip", 0));
  std::vector<std::string> acts = a.getStrings("activations");
  if (!acts.empty()) {
    if (acts.size() != size_t(k.activations) && acts.size() != size_t(k.activations * nd))
      return badInput("{}: activations has {} functions, expected {} ({} per direction x {} "
                      "direction{})",
                      op, acts.size(), k.activations * nd, k.activations, nd, nd > 1 ? "s" : "");
    for (const std::string& s : acts)
      if (mgrt::parseRnnAct(s) < 0)
        return unsupported("{}: activation '{}' is not supported", op, s);
  }
  Dims y = layout ? Dims{batch, seq, nd, h} : Dims{seq, nd, batch, h};
  c.setOutput(0, {t, y});
  for (size_t i = 1; i < c.numOutputs(); ++i) c.setOutput(i, {t, state});
  return Status::success();
}

OpSchema rnnSchema(const RnnKind& k, int maxInputs, int maxOutputs,
                   std::vector<AttrSpec> extra, const char* doc, int since) {
  OpSchema s;
  s.name = k.op;
  s.minInputs = 3;
  s.maxInputs = maxInputs;
  s.minOutputs = 1;
  s.maxOutputs = maxOutputs;
  s.attrs = {{"activation_alpha", K::kFloats}, {"activation_beta", K::kFloats},
             {"activations", K::kStrings},     {"clip", K::kFloat},
             {"direction", K::kString},        {"hidden_size", K::kInt},
             {"layout", K::kInt}};
  s.attrs.insert(s.attrs.end(), extra.begin(), extra.end());
  s.infer = [k](InferContext& c) { return inferRnn(c, k); };
  s.doc = doc;
  s.sinceVersion = since;
  return s;
}

}  // namespace

void registerRecurrentOps(OpRegistry& r) {
  r.add(rnnSchema({"LSTM", 4, 3}, 8, 3, {{"input_forget", K::kInt}},
                  "LSTM (gates i,o,f,c; peepholes P; outputs Y, Y_h, Y_c)", 14));
  r.add(rnnSchema({"GRU", 3, 2}, 6, 2, {{"linear_before_reset", K::kInt}},
                  "GRU (gates z,r,h; linear_before_reset; outputs Y, Y_h)", 14));
  r.add(rnnSchema({"RNN", 1, 1}, 6, 2, {}, "simple RNN (outputs Y, Y_h)", 14));
}

}  // namespace magneto
