// What the constant-folding passes over convolutions (fold-batchnorm, fold-affine,
// fold-conv-scale) share. Internal to passes/; not an installed header.
#pragma once

#include <string>
#include <vector>

#include "magneto/ir/graph.h"

namespace magneto {
namespace fold {

// v is a float32 constant with its data.
inline bool constF32(const Value* v) {
  return v && v->isConstant() && v->constant().hasData() && v->dtype() == DType::kF32;
}

// Rescales output channel m of `conv` (constant float32 weight [M, ...], optional constant bias
// [M]): W'[m] = W[m] * s[m], b'[m] = b[m] * s[m] + shift[m] (b = 0 where the Conv has none). With
// an empty shift and no bias, no bias is added. The new weight is named after the old one plus
// weightSuffix, the new bias biasName. Legal because convolution is linear in W and b per output
// channel.
inline void scaleConvChannels(Graph& g, Node* conv, const std::vector<float>& s, const std::vector<float>& shift,
                              const std::string& weightSuffix, const std::string& biasName) {
  const Tensor& w = conv->input(1)->constant();
  const int64_t channels = static_cast<int64_t>(s.size());
  const int64_t per = w.numel() / channels;
  std::vector<float> nw(w.data<float>(), w.data<float>() + w.numel());
  for (int64_t m = 0; m < channels; ++m)
    for (int64_t k = 0; k < per; ++k) nw[m * per + k] *= s[m];
  Value* nwv = g.addConstant(conv->input(1)->name() + weightSuffix,
                             Tensor::fromVector<float>(DType::kF32, w.dims(), nw));
  const bool hasBias = conv->hasInput(2);
  conv->setInput(1, nwv);
  if (!hasBias && shift.empty()) return;
  std::vector<float> nb(static_cast<size_t>(channels), 0.f);
  if (hasBias) {
    const float* b = conv->input(2)->constant().data<float>();
    for (int64_t m = 0; m < channels; ++m) nb[m] = b[m];
  }
  for (int64_t m = 0; m < channels; ++m) {
    nb[m] *= s[m];
    if (!shift.empty()) nb[m] += shift[m];
  }
  Value* nbv = g.addConstant(biasName, Tensor::fromVector<float>(DType::kF32, {channels}, nb));
  if (conv->numInputs() < 3) conv->addInput(nbv);
  else conv->setInput(2, nbv);
}

}  // namespace fold
}  // namespace magneto
