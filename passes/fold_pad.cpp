// fold-pad: folds a zero-valued constant Pad of the spatial dims into the Conv, MaxPool or
// AveragePool that reads it, as that op's own `pads`.
//
// PyTorch exports AvgPool2d(padding=p, count_include_pad=True) and explicit ZeroPad2d as a Pad
// followed by the pooling or convolution; a separate Pad is a full copy of the tensor.
//
// Legal because:
//   - Conv: zero padding of the input is exactly what Conv's own pads do;
//   - AveragePool: the padded zeros are real elements of the Pad's output, so they count in every
//     window's divisor: that is count_include_pad = 1 with the combined pads (only when the pool's
//     own pads are zero or it already counts padding, so divisors do not change);
//   - MaxPool: only with a pad value of -inf (ONNX's MaxPool pads behave as -inf), so a zero pad
//     is never folded into MaxPool.
// Only mode "constant", a constant pads operand that pads the batch and channel dims by 0,
// non-negative pads, and a Pad result with no other user.
//
//   %p = Pad(%x, dense<[0,0,1,1, 0,0,1,1]>)           %y = AveragePool(%x) {kernel_shape = [3, 3],
//   %y = AveragePool(%p) {kernel_shape = [3, 3]}  ->       pads = [1, 1, 1, 1], count_include_pad = 1}
//
// Golden test: tests/ir/fold_pad.mlir
#include <cmath>

#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

bool constantOperand(const Node* n, size_t i) {
  return n->hasInput(i) && n->input(i)->isConstant() && n->input(i)->constant().hasData();
}

}  // namespace

Expected<bool> foldPads(Graph& g) {
  bool changed = false;
  for (Node* pad : g.nodes()) {
    if (pad->kind() != "Pad" || pad->attrs().getString("mode", "constant") != "constant") continue;
    if (!constantOperand(pad, 1) || pad->hasInput(3)) continue;  // no explicit axes
    Value* out = pad->output(0);
    if (out->uses().size() != 1 || out->isGraphOutput()) continue;
    double value = 0;
    if (pad->hasInput(2)) {
      if (!constantOperand(pad, 2) || pad->input(2)->constant().numel() != 1) continue;
      value = pad->input(2)->constant().floatAt(0);
    }
    std::vector<int64_t> pads = pad->input(1)->constant().toInts();
    int64_t rank = pad->input(0)->rank();
    if (static_cast<int64_t>(pads.size()) != 2 * rank || rank < 3) continue;
    bool ok = pads[0] == 0 && pads[1] == 0 && pads[rank] == 0 && pads[rank + 1] == 0;
    for (int64_t p : pads) ok &= p >= 0;
    if (!ok) continue;
    Node* user = out->uses()[0].node;
    if (out->uses()[0].operand != 0) continue;
    const std::string& k = user->kind();
    bool isConv = k == "Conv", isAvg = k == "AveragePool";
    if (!(isConv && value == 0) && !(isAvg && value == 0)) continue;
    if (user->attrs().getString("auto_pad", "NOTSET") != "NOTSET") continue;
    int64_t spatial = rank - 2;
    std::vector<int64_t> own = user->attrs().getInts("pads", std::vector<int64_t>(2 * spatial, 0));
    if (static_cast<int64_t>(own.size()) != 2 * spatial) continue;
    if (isAvg) {
      bool ownZero = true;
      for (int64_t p : own) ownZero &= p == 0;
      if (!ownZero && user->attrs().getInt("count_include_pad", 0) == 0) continue;
    }
    std::vector<int64_t> merged(2 * spatial);
    for (int64_t d = 0; d < spatial; ++d) {
      merged[d] = own[d] + pads[2 + d];
      merged[spatial + d] = own[spatial + d] + pads[rank + 2 + d];
    }
    user->attrs().set("pads", merged);
    if (isAvg) user->attrs().set("count_include_pad", int64_t{1});
    user->setInput(0, pad->input(0));
    g.eraseNode(pad);
    changed = true;
  }
  if (changed) g.removeDeadValues();
  return changed;
}

namespace {
class FoldPadPass : public Pass {
 public:
  const char* name() const override { return "fold-pad"; }
  const char* summary() const override {
    return "fold zero Pad of spatial dims into the following Conv or AveragePool";
  }
  Expected<bool> run(Graph& g, PassContext&) override { return foldPads(g); }
};
}  // namespace

std::unique_ptr<Pass> makeFoldPadPass() { return std::make_unique<FoldPadPass>(); }

}  // namespace magneto
