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

// The normalization ops fuse-layernorm may create for `target` (passes/fuse_layernorm.cpp). The
// cuda/hip lowering has no RMSNormalization program, and its row program (LayerNormalization:
// codegen/gpu/lower_compute.cpp, lowerRows) reads float32 (or float16 storage) and a scale and
// bias holding every element of the normalized dims; the CPU kernels take both ops in float32 and
// float64 with any broadcast of the scale and bias over the normalized dims.
inline bool normTargetIsGpu(const std::string& target) { return target == "cuda" || target == "hip"; }
inline bool targetRunsRMSNormalization(const std::string& target) { return !normTargetIsGpu(target); }
inline bool targetRunsFloat64Norms(const std::string& target) { return !normTargetIsGpu(target); }
inline bool targetNeedsFullNormAffine(const std::string& target) { return normTargetIsGpu(target); }

// Whether fuse-qdq may turn a QDQ convolution into QLinearConv (passes/fuse_qdq.cpp): the CPU runs
// it on integer kernels (runtime/cpu/f_qconv.cpp); the cuda/hip lowerings have no QLinearConv
// program, so there the dequantized float Conv stays.
inline bool targetRunsIntegerConv(const std::string& target) { return target == "cpu"; }

// Whether fuse-attention may form ONNX Attention nodes (passes/fuse_attention.cpp): the CPU runs
// them on one fused kernel (runtime/cpu/f_attention.cpp); the cuda/hip lowerings have no
// Attention program, so there the MatMul / Softmax / MatMul chain stays.
inline bool targetRunsFusedAttention(const std::string& target) { return target == "cpu"; }

}  // namespace magneto
