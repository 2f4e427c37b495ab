// Activation functions of the recurrent ops (LSTM, GRU, RNN attribute `activations`): the entries
// of the activation table (mg_acts.h) flagged R, with their alpha/beta defaults, and the order in
// which activation_alpha/activation_beta are consumed.
// Shared by the compiler's shape inference (src/ops/recurrent_ops.cpp validates names and counts)
// and the kernels (k_recurrent.cpp), so both accept exactly the same set.
#pragma once

#include <string>
#include <vector>

#include "mg_acts.h"

namespace mgrt {

// A function: its code in the activation table (mg_acts.h, entries flagged R), -1 when unknown.
struct RnnActFn {
  int act = -1;
  float alpha = 0.f, beta = 0.f;
};

// The code of a name, compared case-insensitively (as onnxruntime reads them), or -1.
inline int parseRnnAct(const std::string& name) {
  const acts::ActInfo* a = acts::find(name.c_str(), acts::kR, true);
  return a ? a->code : -1;
}

// Builds the activation list: `names` (already expanded to every direction) consume alphas and
// betas in order, each function taking as many as it has parameters (onnxruntime's rule).
// Returns the index of the first unknown name, or -1.
inline int buildRnnActs(const std::vector<std::string>& names, const std::vector<float>& alphas,
                        const std::vector<float>& betas, std::vector<RnnActFn>* out) {
  size_t ai = 0, bi = 0;
  out->clear();
  for (size_t i = 0; i < names.size(); ++i) {
    RnnActFn f;
    f.act = parseRnnAct(names[i]);
    if (f.act < 0) return static_cast<int>(i);
    const acts::ActInfo& e = acts::kTable[f.act];
    const int np = e.params;
    f.alpha = static_cast<float>(e.alphaDefault);
    f.beta = static_cast<float>(e.betaDefault);
    if (np >= 1 && ai < alphas.size()) f.alpha = alphas[ai++];
    if (np >= 2 && bi < betas.size()) f.beta = betas[bi++];
    out->push_back(f);
  }
  return -1;
}

template <typename T>
inline T applyRnnAct(const RnnActFn& f, T x) {
  return acts::applyCode<T>(f.act, x, static_cast<T>(f.alpha), static_cast<T>(f.beta));
}

}  // namespace mgrt
