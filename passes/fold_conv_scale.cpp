// fold-conv-scale: folds a per-output-channel constant scale after a Conv into its weights.
//
//   Conv(x, W, b) * s  ==  Conv(x, W', b'),  W'[m] = W[m] * s[m],  b'[m] = b[m] * s[m]
//   Conv(x, W, b) / s  ==  the same with 1 / s[m]
//
// Legal because convolution is linear in W and b per output channel m (the same identity
// fold-batchnorm uses). Old exporters write a BatchNormalization followed by a separate scale
// layer (Mul, then Add, by [C, 1, 1] constants) after each convolution (Inception v2 of the ONNX
// model zoo): after fold-batchnorm and fold-affine that is Conv, Mul, Add; this pass removes the
// Mul, fuse-epilogue then takes the Add into the bias and the ReLU into the epilogue, and the
// whole chain is one convolution instead of a convolution and an elementwise pass over its result.
//
// Only when: the Conv's weight (and bias, if any) are float32 constants, it has no residual
// operand and no fused activation yet, its result has no other user and is not a graph output;
// the scale is a float32 constant that broadcasts per channel (every dimension 1 but the channel
// one, which is 1 or M, and no more dimensions than the Conv's result, so shapes are unchanged).
// In float32 the result differs from the unfolded graph by rounding only.
//
//   const %s : f32[4,1,1]                       const %w' = w * s, %b' = b * s
//   %c = Conv(%x, %w, %b)             ->        %c = Conv(%x, %w', %b')
//   %y = Mul(%c, %s)
//
// Golden test: tests/ir/fold_conv_scale.mlir
#include "fold_common.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

using fold::constF32;

// The per-channel factors of constant c against a result of shape x (channels at dimension 1),
// or empty when c does not broadcast per channel.
std::vector<float> perChannel(const Value* c, const Dims& x) {
  const Dims& cd = c->dims();
  const size_t r = x.size();
  if (r < 2 || cd.size() > r) return {};
  const int64_t channels = x[1];
  for (size_t p = 0; p < cd.size(); ++p) {
    const size_t q = p + (r - cd.size());
    if (cd[p] != 1 && !(q == 1 && cd[p] == channels)) return {};
  }
  const float* d = c->constant().data<float>();
  const bool full = c->constant().numel() == channels;
  std::vector<float> s(static_cast<size_t>(channels));
  for (int64_t m = 0; m < channels; ++m) s[m] = full ? d[m] : d[0];
  return s;
}

bool foldable(const Node* conv, const Value* x) {
  return conv && conv->kind() == "Conv" && x->uses().size() == 1 && !x->isGraphOutput() &&
         constF32(conv->input(1)) && (!conv->hasInput(2) || constF32(conv->input(2))) &&
         !conv->hasInput(3) && !conv->attrs().has("mg_act") && x->dtype() == DType::kF32;
}

}  // namespace

Expected<bool> foldConvScale(Graph& g) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    const bool mul = n->kind() == "Mul", div = n->kind() == "Div";
    if ((!mul && !div) || n->numInputs() != 2 || n->numOutputs() != 1) continue;
    // The Conv's result is the first operand of a Div, either operand of a Mul.
    int xi = -1;
    for (int i = 0; i < (div ? 1 : 2); ++i)
      if (foldable(n->input(i)->producer(), n->input(i)) && constF32(n->input(1 - i))) xi = i;
    if (xi < 0) continue;
    Value* x = n->input(xi);
    std::vector<float> s = perChannel(n->input(1 - xi), x->dims());
    if (s.empty() || n->output(0)->dims() != x->dims()) continue;
    if (div) {
      bool zero = false;
      for (float& v : s) zero |= v == 0.f, v = 1.f / v;
      if (zero) continue;  // x / 0 keeps its infinities and NaNs where they are
    }
    Node* conv = x->producer();
    const Tensor& w = conv->input(1)->constant();
    const int64_t channels = static_cast<int64_t>(s.size());
    if (w.dims().empty() || w.dims()[0] != channels) continue;
    const std::string base = n->name().empty() ? n->output(0)->name() : n->name();
    fold::scaleConvChannels(g, conv, s, {}, "_scaled", base + "_bias");
    g.replaceAllUsesWith(n->output(0), x);
    g.eraseNode(n);
    changed = true;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FoldConvScalePass : public Pass {
 public:
  const char* name() const override { return "fold-conv-scale"; }
  const char* summary() const override {
    return "fold a per-channel constant Mul (or Div) after a Conv into its weights and bias";
  }
  Expected<bool> run(Graph& g, PassContext&) override { return foldConvScale(g); }
};
}  // namespace

std::unique_ptr<Pass> makeFoldConvScalePass() { return std::make_unique<FoldConvScalePass>(); }

}  // namespace magneto
