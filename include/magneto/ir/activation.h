// The attribute parameters of activation ops, read one way by every part that turns an activation
// into code: pass fuse-epilogue (the runtime's mg_act/mg_alpha/mg_beta) and the GPU lowering's
// generated functors.
#pragma once

#include "magneto/ir/graph.h"

namespace magneto {

// alpha and beta of `n`, read from the ONNX attributes the activation table names, with its
// defaults (runtime/common/mg_acts.h: e.g. LeakyRelu alpha 0.01, Selu alpha and gamma as beta).
// Every other op (Relu, Sigmoid, Clip, whose bounds are operands, ...) gets 0, 0.
void activationAttrParams(const Node& n, double& alpha, double& beta);

}  // namespace magneto
