// Kernel tables of the CPU runtime, one per op family (each in its own k_*.cpp file), plus the
// helpers kernels share. Reference kernels ("k_") are plain and obviously correct; the optimized
// kernels ("f_", fast table) are what generated packages prefer when one exists for an op.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mg_epilogue_acts.h"
#include "mg_runtime.h"

namespace mgrt {

const KernelEntry* elementwiseKernels();  // k_elementwise.cpp
const KernelEntry* reductionKernels();    // k_reduction.cpp
const KernelEntry* tensorKernels();       // k_tensor.cpp
const KernelEntry* nnKernels();           // k_nn.cpp
const KernelEntry* recurrentKernels();    // k_recurrent.cpp
const KernelEntry* fusedKernels();        // k_fused.cpp: Magneto's internal fused ops
const KernelEntry* fastKernels();         // f_*.cpp: optimized kernels, same contract

KernelFn findFastKernel(const char* op);

// Row-major strides of a tensor's dims.
inline void stridesOf(const Tensor& t, int64_t* strides) {
  int64_t s = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= t.dims[i];
  }
}

// Strides of `x` seen through a numpy broadcast to o's dims (0 on broadcast dims), per dim of o.
inline void broadcastStrides(const Tensor& x, const Tensor& o, int64_t* bs) {
  int64_t xs[kMaxRank];
  stridesOf(x, xs);
  int lead = o.rank - x.rank;
  for (int d = 0; d < o.rank; ++d) {
    int xd = d - lead;
    bs[d] = xd < 0 || x.dims[xd] == 1 ? 0 : xs[xd];
  }
}

// Epilogue activations shared by fused kernels (attribute mg_act, mg_alpha, mg_beta) and the
// standalone activation kernels, so both compute exactly the same function.
// The epilogue activations of runtime/common/mg_epilogue_acts.h, numbered as there.
#define MG_ACT_ENUM(id, name, code, params) k##id = code,
enum class Act { MG_EPILOGUE_ACTS(MG_ACT_ENUM) };
#undef MG_ACT_ENUM
Act parseAct(const std::string& name);
struct Epilogue {
  Act act = Act::kNone;
  float alpha = 0.f, beta = 0.f;
  static Epilogue fromAttrs(const Attrs& a);  // reads mg_act / mg_alpha / mg_beta
};
inline float applyAct(const Epilogue& e, float x) {
  switch (e.act) {
    case Act::kNone: return x;
    case Act::kRelu: return x > 0.f ? x : 0.f;
    case Act::kLeakyRelu: return x >= 0.f ? x : x * e.alpha;
    case Act::kSigmoid: return 1.f / (1.f + std::exp(-x));
    case Act::kTanh: return std::tanh(x);
    case Act::kClip: return x < e.alpha ? e.alpha : (x > e.beta ? e.beta : x);
    case Act::kHardSigmoid: { float y = e.alpha * x + e.beta; return y < 0.f ? 0.f : (y > 1.f ? 1.f : y); }
    case Act::kHardSwish: { float y = x / 6.f + 0.5f; y = y < 0.f ? 0.f : (y > 1.f ? 1.f : y); return x * y; }
    case Act::kElu: return x >= 0.f ? x : e.alpha * (std::exp(x) - 1.f);
    case Act::kSelu: return x > 0.f ? e.beta * x : e.beta * (e.alpha * std::exp(x) - e.alpha);
    case Act::kSoftplus: return x > 20.f ? x : std::log1p(std::exp(x));
    case Act::kGelu: return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
    case Act::kSwish: return x * (1.f / (1.f + std::exp(-x)));  // x * Sigmoid(x), as exporters write it
  }
  return x;
}

}  // namespace mgrt
