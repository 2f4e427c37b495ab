// Activation functions of the recurrent ops (LSTM, GRU, RNN attribute `activations`), with the
// defaults of their alpha/beta and the order in which activation_alpha/activation_beta are consumed.
// Shared by the compiler's shape inference (src/ops/recurrent_ops.cpp validates names and counts)
// and the kernels (k_recurrent.cpp), so both accept exactly the same set.
#pragma once

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace mgrt {

enum class RnnAct {
  kInvalid, kSigmoid, kTanh, kRelu, kHardSigmoid, kLeakyRelu, kScaledTanh, kAffine,
  kThresholdedRelu, kElu, kSoftsign, kSoftplus
};

struct RnnActFn {
  RnnAct act = RnnAct::kInvalid;
  float alpha = 0.f, beta = 0.f;
};

// Case-insensitive, as onnxruntime accepts them.
inline RnnAct parseRnnAct(const std::string& name) {
  std::string n;
  for (char ch : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (n == "sigmoid") return RnnAct::kSigmoid;
  if (n == "tanh") return RnnAct::kTanh;
  if (n == "relu") return RnnAct::kRelu;
  if (n == "hardsigmoid") return RnnAct::kHardSigmoid;
  if (n == "leakyrelu") return RnnAct::kLeakyRelu;
  if (n == "scaledtanh") return RnnAct::kScaledTanh;
  if (n == "affine") return RnnAct::kAffine;
  if (n == "thresholdedrelu") return RnnAct::kThresholdedRelu;
  if (n == "elu") return RnnAct::kElu;
  if (n == "softsign") return RnnAct::kSoftsign;
  if (n == "softplus") return RnnAct::kSoftplus;
  return RnnAct::kInvalid;
}

// Which of alpha/beta a function takes, and their defaults (those of the ONNX operators).
inline void rnnActParams(RnnAct a, int* nparams, float* defAlpha, float* defBeta) {
  *nparams = 0;
  *defAlpha = 0.f;
  *defBeta = 0.f;
  switch (a) {
    case RnnAct::kLeakyRelu: *nparams = 1; *defAlpha = 0.01f; break;
    case RnnAct::kThresholdedRelu: *nparams = 1; *defAlpha = 1.f; break;
    case RnnAct::kElu: *nparams = 1; *defAlpha = 1.f; break;
    case RnnAct::kHardSigmoid: *nparams = 2; *defAlpha = 0.2f; *defBeta = 0.5f; break;
    case RnnAct::kScaledTanh: *nparams = 2; *defAlpha = 1.f; *defBeta = 1.f; break;
    case RnnAct::kAffine: *nparams = 2; *defAlpha = 1.f; *defBeta = 0.f; break;
    default: break;
  }
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
    if (f.act == RnnAct::kInvalid) return static_cast<int>(i);
    int np;
    rnnActParams(f.act, &np, &f.alpha, &f.beta);
    if (np >= 1 && ai < alphas.size()) f.alpha = alphas[ai++];
    if (np >= 2 && bi < betas.size()) f.beta = betas[bi++];
    out->push_back(f);
  }
  return -1;
}

template <typename T>
inline T applyRnnAct(const RnnActFn& f, T x) {
  const T a = static_cast<T>(f.alpha), b = static_cast<T>(f.beta);
  switch (f.act) {
    case RnnAct::kSigmoid: return T(1) / (T(1) + std::exp(-x));
    case RnnAct::kTanh: return std::tanh(x);
    case RnnAct::kRelu: return x > T(0) ? x : T(0);
    case RnnAct::kHardSigmoid: {
      T y = a * x + b;
      return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
    }
    case RnnAct::kLeakyRelu: return x >= T(0) ? x : a * x;
    case RnnAct::kScaledTanh: return a * std::tanh(b * x);
    case RnnAct::kAffine: return a * x + b;
    case RnnAct::kThresholdedRelu: return x > a ? x : T(0);
    case RnnAct::kElu: return x >= T(0) ? x : a * (std::exp(x) - T(1));
    case RnnAct::kSoftsign: return x / (T(1) + std::fabs(x));
    case RnnAct::kSoftplus: return x > T(20) ? x : std::log1p(std::exp(x));
    case RnnAct::kInvalid: break;
  }
  return x;
}

}  // namespace mgrt
