// The loss op family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13
// semantics, unchanged since), schemas and shape inference. Both take scores [N, C, d1..dk],
// integer class targets [N, d1..dk], an optional per-class weight [C], the attributes `reduction`
// (none, sum, mean) and `ignore_index`; SoftmaxCrossEntropyLoss's optional second result is the
// log-softmax of the scores over axis 1. Reference kernels: runtime/cpu/k_loss.cpp.
#include <string>

#include "families.h"

namespace magneto {
namespace {

using K = Attribute::Kind;

bool isLossFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }

// reduction = none | sum | mean (default mean).
Status checkReduction(const InferContext& c, const char* op, bool* none) {
  std::string r = c.attrs().getString("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean")
    return badInput("{}: reduction must be 'none', 'sum' or 'mean', got '{}'", op, r);
  *none = r == "none";
  return Status::success();
}

// The scores [N, C, d1..dk], the targets [N, d1..dk] of int32/int64 and the weight [C] agree.
Status checkLossOperands(const InferContext& c, const char* op, const char* scores) {
  DType xt = c.inputDType(0);
  if (!isLossFloat(xt))
    return unsupported("{}: {} must be f32 or f64, got {}", op, scores, dtypeName(xt));
  const Dims& x = c.inputDims(0);
  if (x.size() < 2)
    return badInput("{}: {} must be [N, C, d1, ..., dk] (rank >= 2), got {}", op, scores,
                    c.inputType(0).str());
  DType tt = c.inputDType(1);
  if (tt != DType::kI32 && tt != DType::kI64)
    return badInput("{}: target must be i32 or i64 class indices, got {}", op, dtypeName(tt));
  const Dims& t = c.inputDims(1);
  bool match = t.size() + 1 == x.size() && t[0] == x[0];
  for (size_t i = 1; match && i < t.size(); ++i) match = t[i] == x[i + 1];
  if (!match) {
    Dims want = x;
    want.erase(want.begin() + 1);
    return badInput("{}: target must be {} ({} without its class dim C = {}), got {}", op,
                    dimsStr(want), scores, x[1], c.inputType(1).str());
  }
  if (c.hasInput(2)) {
    if (c.inputDType(2) != xt)
      return badInput("{}: weight has element type {}, {} has {}", op,
                      dtypeName(c.inputDType(2)), scores, dtypeName(xt));
    const Dims& w = c.inputDims(2);
    if (w.size() != 1 || w[0] != x[1])
      return badInput("{}: weight must be [{}] (one per class C), got {}", op, x[1],
                      c.inputType(2).str());
  }
  return Status::success();
}

// The loss: the targets' shape under reduction none, else a scalar, of the scores' type.
Status inferLoss(InferContext& c, const char* op, const char* scores) {
  MG_RETURN_IF_ERROR(checkLossOperands(c, op, scores));
  bool none = false;
  MG_RETURN_IF_ERROR(checkReduction(c, op, &none));
  c.setOutput(0, {c.inputDType(0), none ? c.inputDims(1) : Dims{}});
  return Status::success();
}

Status inferNLL(InferContext& c) { return inferLoss(c, "NegativeLogLikelihoodLoss", "input"); }

Status inferSCE(InferContext& c) {
  MG_RETURN_IF_ERROR(inferLoss(c, "SoftmaxCrossEntropyLoss", "scores"));
  if (c.numOutputs() > 1) c.setOutput(1, c.inputType(0));  // log_prob
  return Status::success();
}

OpSchema loss(const char* name, InferFn fn, const char* doc, int since, int maxOut) {
  OpSchema s;
  s.name = name;
  s.minInputs = 2;
  s.maxInputs = 3;
  s.maxOutputs = maxOut;
  s.attrs = {{"reduction", K::kString}, {"ignore_index", K::kInt}};
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = since;
  return s;
}

}  // namespace

void registerLossOps(OpRegistry& r) {
  r.add(loss("NegativeLogLikelihoodLoss", inferNLL,
             "-input[n, target, d...] * weight[target]; reduction none, sum or weighted mean", 13,
             1));
  r.add(loss("SoftmaxCrossEntropyLoss", inferSCE,
             "NegativeLogLikelihoodLoss of LogSoftmax(scores, axis 1); optional log_prob", 13, 2));
}

}  // namespace magneto
