// Helpers shared by the NN op family's schema files (nn_ops.cpp: Conv, ConvTranspose, Gemm,
// MatMul; nn_ops_pool.cpp: pools; nn_ops_norm.cpp: normalizations). Internal to src/ops.
#pragma once

#include <string>
#include <vector>

#include "k_nn_shapes.h"
#include "mg_acts.h"
#include "families.h"

namespace magneto {

void registerNNPoolOps(OpRegistry& r);  // nn_ops_pool.cpp
void registerNNNormOps(OpRegistry& r);  // nn_ops_norm.cpp
void registerNNAttentionOps(OpRegistry& r);  // nn_ops_attention.cpp: opset 23 transformer ops

namespace nnops {

using K = Attribute::Kind;

// Reads kernel_shape/strides/dilations/pads/auto_pad (and ConvTranspose's, and ceil_mode).
inline Expected<mgrt::SpatialAttrs> readSpatialAttrs(const InferContext& c, const char* op) {
  const AttrMap& a = c.attrs();
  mgrt::SpatialAttrs s;
  s.kernelShape = a.getInts("kernel_shape");
  s.strides = a.getInts("strides");
  s.dilations = a.getInts("dilations");
  s.pads = a.getInts("pads");
  s.outputPadding = a.getInts("output_padding");
  s.outputShape = a.getInts("output_shape");
  s.ceilMode = a.getInt("ceil_mode", 0) != 0;
  std::string ap = a.getString("auto_pad", "NOTSET");
  if (!mgrt::parseAutoPad(ap, &s.autoPad))
    return badInput("{}: auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, got '{}'", op,
                    ap);
  return s;
}

// Float element types the reference kernels of this family compute in.
inline bool isNNFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }

inline Status requireFloat(const InferContext& c, size_t i, const char* op, const char* what) {
  if (!isNNFloat(c.inputDType(i)))
    return unsupported("{}: {} must be f32 or f64, got {}", op, what,
                       dtypeName(c.inputDType(i)));
  return Status::success();
}

inline Status requireSameDType(const InferContext& c, size_t i, const char* op, const char* what) {
  if (c.hasInput(i) && c.inputDType(i) != c.inputDType(0))
    return badInput("{}: {} has element type {}, input has {}", op, what,
                    dtypeName(c.inputDType(i)), dtypeName(c.inputDType(0)));
  return Status::success();
}

inline Status requireRank(const InferContext& c, size_t i, int rank, const char* op,
                          const char* what) {
  if (c.inputType(i).rank() != rank)
    return badInput("{}: {} must have rank {}, got {}", op, what, rank,
                    c.inputType(i).str());
  return Status::success();
}

// Fused epilogue attributes (see runtime/cpu/mg_kernels.h Epilogue).
inline std::vector<AttrSpec> epilogueAttrs() {
  return {{"mg_act", K::kString}, {"mg_alpha", K::kFloat}, {"mg_beta", K::kFloat}};
}

inline Status checkEpilogue(const InferContext& c, const char* op) {
  std::string act = c.attrs().getString("mg_act", "");
  if (act.empty() || mgrt::acts::find(act.c_str(), mgrt::acts::kE)) return Status::success();
  return badInput("{}: mg_act '{}' is not a supported epilogue activation", op, act);
}

inline std::vector<AttrSpec> concatAttrs(std::vector<AttrSpec> a, const std::vector<AttrSpec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The numpy matmul shape of operands `ia` and `ib` (batch dims broadcast), with M and N: MatMul's
// rules, shared by MatMul, MatMulInteger and QLinearMatMul.
struct MatMulShape {
  Dims out;
  int64_t m = 1, n = 1;
};

inline Expected<MatMulShape> matMulShape(const InferContext& c, size_t ia, size_t ib, const char* op) {
  Dims a = c.inputDims(ia), b = c.inputDims(ib);
  if (a.empty() || b.empty())
    return badInput("{}: operands must have rank >= 1, got {} and {}", op, c.inputType(ia).str(),
                    c.inputType(ib).str());
  bool va = a.size() == 1, vb = b.size() == 1;
  if (va) a.insert(a.begin(), 1);
  if (vb) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return badInput("{}: inner dimensions differ: A {} has K={}, B {} has K={}", op,
                    c.inputType(ia).str(), a.back(), c.inputType(ib).str(), b[b.size() - 2]);
  auto batch = broadcastDims(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!batch.ok())
    return badInput("{}: batch dimensions do not broadcast: {}", op, batch.status().message());
  MatMulShape s;
  s.out = batch.value();
  s.m = a[a.size() - 2];
  s.n = b.back();
  if (!va) s.out.push_back(s.m);
  if (!vb) s.out.push_back(s.n);
  return s;
}

}  // namespace nnops
}  // namespace magneto
