// What each code-generation target can run, as facts the passes consult before they create a node,
// so that no pass emits what the chosen target would refuse (and the target's lowering reads the
// same numbers, so they cannot drift apart).
#pragma once

#include <string>

namespace magneto {

// Operands one item of the GPU map kernel reads (runtime/gpu/kernels/mg_map.cuh, codegen/gpu).
constexpr int kGpuMapMaxInputs = 6;

// The most inputs a fused elementwise chain (MgElementwise) may have on `target`; 0: no limit
// (the CPU kernel takes any number).
inline int maxFusedElementwiseInputs(const std::string& target) {
  return target == "cuda" || target == "hip" ? kGpuMapMaxInputs : 0;
}

}  // namespace magneto
