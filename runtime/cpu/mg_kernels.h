// Kernel tables of the CPU runtime, one per op family (each in its own k_*.cpp file), plus the
// helpers kernels share. Reference kernels ("k_") are plain and obviously correct; the optimized
// kernels ("f_", fast table) are what generated packages prefer when one exists for an op.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mg_acts.h"
#include "mg_runtime.h"

namespace mgrt {

const KernelEntry* elementwiseKernels();  // k_elementwise.cpp
const KernelEntry* reductionKernels();    // k_reduction.cpp
const KernelEntry* tensorKernels();       // k_tensor.cpp
const KernelEntry* nnKernels();           // k_nn.cpp
const KernelEntry* recurrentKernels();    // k_recurrent.cpp
const KernelEntry* lossKernels();         // k_loss.cpp
const KernelEntry* selectKernels();       // k_select.cpp
const KernelEntry* visionKernels();       // k_vision.cpp
const KernelEntry* quantizeKernels();     // k_quantize.cpp
const KernelEntry* signalKernels();       // k_signal.cpp
const KernelEntry* randomKernels();       // k_random.cpp
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

// Epilogue activations shared by fused kernels (attribute mg_act, mg_alpha, mg_beta), MgElementwise
// programs and the standalone activation kernels, so all compute exactly the same function: the
// activations of runtime/common/mg_acts.h, numbered and computed as there.
#define MG_ACT_ENUM(id, name, code, params, an, ad, bn, bd, flags, f) k##id = code,
enum class Act { MG_ACTS(MG_ACT_ENUM) };
#undef MG_ACT_ENUM
Act parseAct(const std::string& name);
struct Epilogue {
  Act act = Act::kNone;
  float alpha = 0.f, beta = 0.f;
  static Epilogue fromAttrs(const Attrs& a);  // reads mg_act / mg_alpha / mg_beta
};
inline float applyAct(const Epilogue& e, float x) {
  return acts::applyCode<float>(static_cast<int>(e.act), x, e.alpha, e.beta);
}

}  // namespace mgrt
