// fold-batchnorm: removes inference-time BatchNormalization.
//
//   y = scale * (x - mean) / sqrt(var + eps) + B  ==  x * s + t,
//   with s = scale / sqrt(var + eps) and t = B - mean * s (per channel).
//
// 1. After a Conv whose weight (and bias, if any) are constants and whose result feeds only the
//    BatchNormalization, s and t fold into the convolution: W'[m] = W[m] * s[m], b' = b * s + t.
//    Legal because convolution is linear in W and b per output channel.
// 2. Otherwise (BatchNormalization after a Concat, a pool, a graph input...) it becomes
//    Mul(x, s) then Add(., t) with s and t constants shaped [C, 1, ..., 1], which the elementwise
//    passes can fuse further.
// Only float32 with constant scale/B/mean/var and training_mode = 0 is rewritten.
//
//   %c = Conv(%x, %w, %b)                     %c = Conv(%x, %w', %b')
//   %y = BatchNormalization(%c, ...)    ->
//
// Golden test: tests/ir/fold_batchnorm.mlir
#include <cmath>

#include "fold_common.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

using fold::constF32;

Tensor f32Tensor(Dims dims, const std::vector<float>& v) {
  return Tensor::fromVector<float>(DType::kF32, std::move(dims), v);
}

}  // namespace

Expected<bool> foldBatchNorm(Graph& g) {
  bool changed = false;
  for (Node* bn : g.nodes()) {
    if (bn->kind() != "BatchNormalization" || bn->attrs().getInt("training_mode", 0) != 0) continue;
    if (bn->numOutputs() > 1) {
      bool extraUsed = false;
      for (size_t i = 1; i < bn->numOutputs(); ++i)
        extraUsed |= bn->output(i)->hasUses() || bn->output(i)->isGraphOutput();
      if (extraUsed) continue;
    }
    Value* x = bn->input(0);
    if (x->dtype() != DType::kF32 || x->rank() < 2) continue;
    bool paramsConst = true;
    for (int i = 1; i <= 4; ++i) paramsConst &= constF32(bn->input(i));
    if (!paramsConst) continue;
    int64_t channels = x->dims()[1];
    double eps = bn->attrs().getFloat("epsilon", 1e-5);
    const float* scale = bn->input(1)->constant().data<float>();
    const float* bias = bn->input(2)->constant().data<float>();
    const float* mean = bn->input(3)->constant().data<float>();
    const float* var = bn->input(4)->constant().data<float>();
    std::vector<float> s(channels), t(channels);
    for (int64_t c = 0; c < channels; ++c) {
      s[c] = static_cast<float>(scale[c] / std::sqrt(static_cast<double>(var[c]) + eps));
      t[c] = static_cast<float>(bias[c] - mean[c] * static_cast<double>(s[c]));
    }
    Node* conv = x->producer();
    bool intoConv = conv && conv->kind() == "Conv" && x->uses().size() == 1 &&
                    !x->isGraphOutput() && constF32(conv->input(1)) &&
                    (!conv->hasInput(2) || constF32(conv->input(2))) && !conv->hasInput(3) &&
                    !conv->attrs().has("mg_act");
    if (intoConv) {
      fold::scaleConvChannels(g, conv, s, t, "_bn", bn->name().empty() ? "bn_bias" : bn->name() + "_bias");
      g.replaceAllUsesWith(bn->output(0), x);
    } else {
      Dims bshape(static_cast<size_t>(x->rank() - 1), 1);
      bshape[0] = channels;
      Value* sv = g.addConstant(bn->name() + "_scale", f32Tensor(bshape, s));
      Value* tv = g.addConstant(bn->name() + "_shift", f32Tensor(bshape, t));
      Node* mul = g.createNode("Mul", {x, sv}, {x->type()}, {}, bn->name() + "/mul", bn);
      Node* add = g.createNode("Add", {mul->output(0), tv}, {x->type()}, {}, bn->name() + "/add", bn);
      g.replaceAllUsesWith(bn->output(0), add->output(0));
    }
    g.eraseNode(bn);
    changed = true;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FoldBatchNormPass : public Pass {
 public:
  const char* name() const override { return "fold-batchnorm"; }
  const char* summary() const override {
    return "fold inference BatchNormalization into the preceding Conv, else into Mul+Add";
  }
  Expected<bool> run(Graph& g, PassContext&) override { return foldBatchNorm(g); }
};
}  // namespace

std::unique_ptr<Pass> makeFoldBatchNormPass() { return std::make_unique<FoldBatchNormPass>(); }

}  // namespace magneto
