// Internal to the NN reference kernels (k_nn*.cpp): the kernels each file defines, so that
// k_nn.cpp can hold the one table, and small helpers they share (dtype dispatch, reading the
// spatial attributes, checking that the caller's output buffer has the shape the op computes).
#pragma once

#include <cstdint>
#include <vector>

#include "k_nn_shapes.h"
#include "mg_kernels.h"

namespace mgrt {
namespace nn {

// Attention's attn_mask seen through its broadcast to full = [B, Hq, S, L]: the element stride
// of each of the four dims (0 where the mask's dim is 1 or missing). False when the mask does
// not broadcast. Shared by the reference kernel (k_nn_attention.cpp) and the fused one
// (f_attention.cpp).
inline bool attentionMaskStrides(const Tensor& m, const int64_t full[4], int64_t strides[4]) {
  for (int d = 0; d < 4; ++d) strides[d] = 0;
  int64_t stride = 1;
  for (int d = m.rank - 1; d >= 0; --d) {
    const int fd = 4 - m.rank + d;
    if (fd < 0 || (m.dims[d] != 1 && m.dims[d] != full[fd])) return false;
    strides[fd] = m.dims[d] == 1 ? 0 : stride;
    stride *= m.dims[d];
  }
  return true;
}

#define MG_NN_KERNEL(name) int name(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx)
// k_nn.cpp
MG_NN_KERNEL(kGemm);
MG_NN_KERNEL(kMatMul);
// k_nn_conv.cpp
MG_NN_KERNEL(kConv);
MG_NN_KERNEL(kConvTranspose);
MG_NN_KERNEL(kCol2Im);
MG_NN_KERNEL(kDeformConv);
// k_nn_pool.cpp
MG_NN_KERNEL(kMaxPool);
MG_NN_KERNEL(kAveragePool);
MG_NN_KERNEL(kLpPool);
MG_NN_KERNEL(kGlobalAveragePool);
MG_NN_KERNEL(kGlobalMaxPool);
MG_NN_KERNEL(kGlobalLpPool);
MG_NN_KERNEL(kMaxRoiPool);
// k_nn_norm.cpp
MG_NN_KERNEL(kBatchNormalization);
MG_NN_KERNEL(kInstanceNormalization);
MG_NN_KERNEL(kLayerNormalization);
MG_NN_KERNEL(kGroupNormalization);
MG_NN_KERNEL(kLpNormalization);
MG_NN_KERNEL(kMeanVarianceNormalization);
MG_NN_KERNEL(kLRN);
// k_nn_attention.cpp
MG_NN_KERNEL(kRMSNormalization);
MG_NN_KERNEL(kRotaryEmbedding);
MG_NN_KERNEL(kAttention);
#undef MG_NN_KERNEL

// Calls fn(T{}) with T = float or double by the element type; fails on anything else.
template <typename Fn>
int byFloatType(int32_t dtype, const char* op, Ctx& ctx, Fn&& fn) {
  if (dtype == kF32) return fn(float{});
  if (dtype == kF64) return fn(double{});
  return ctx.fail("%s: unsupported element type %d (expected f32 or f64)", op,
                  static_cast<int>(dtype));
}

// Fails unless operands [0, required) are present and there are at least `outs` results.
inline int checkArity(const char* op, int nin, int required, const Tensor* in, int nout, int outs,
                      Ctx& ctx) {
  if (nin < required) return ctx.fail("%s: expected at least %d operands, got %d", op, required, nin);
  for (int i = 0; i < required; ++i)
    if (!in[i].present()) return ctx.fail("%s: operand %d is missing", op, i);
  if (nout < outs) return ctx.fail("%s: expected at least %d results, got %d", op, outs, nout);
  return 0;
}

// Defines kName(...): checks that `required` operands and one result are there, then runs
// Impl<T>(a, in, nin, out, nout, ctx) with T the float type of operand 0 (k_nn_norm.cpp,
// k_nn_attention.cpp).
#define MG_NN_FLOAT_KERNEL(Name, Impl, required)                                              \
  int k##Name(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {   \
    if (checkArity(#Name, nin, required, in, nout, 1, ctx)) return 1;                         \
    return byFloatType(in[0].dtype, #Name, ctx, [&](auto tag) {                               \
      return Impl<decltype(tag)>(a, in, nin, out, nout, ctx);                                 \
    });                                                                                       \
  }

inline bool present(const Tensor* in, int nin, int i) { return i < nin && in[i].present(); }

inline int spatialAttrsFrom(const char* op, const Attrs& a, SpatialAttrs* s, Ctx& ctx) {
  s->kernelShape = a.ints("kernel_shape");
  s->strides = a.ints("strides");
  s->dilations = a.ints("dilations");
  s->pads = a.ints("pads");
  s->outputPadding = a.ints("output_padding");
  s->outputShape = a.ints("output_shape");
  s->ceilMode = a.i("ceil_mode", 0) != 0;
  std::string ap = a.s("auto_pad", "NOTSET");
  if (!parseAutoPad(ap, &s->autoPad)) return ctx.fail("%s: unknown auto_pad '%s'", op, ap.c_str());
  return 0;
}

// The caller allocated `t` with the statically inferred shape; fail when it is not `want`.
inline int checkDims(const char* op, const Tensor& t, const std::vector<int64_t>& want, Ctx& ctx) {
  bool ok = t.rank == static_cast<int>(want.size());
  for (int i = 0; ok && i < t.rank; ++i) ok = t.dims[i] == want[i];
  if (!ok) return ctx.fail("%s: result buffer has the wrong shape (expected %s)", op, joinInts(want).c_str());
  return 0;
}

inline std::vector<int64_t> dimsOf(const Tensor& t) {
  return std::vector<int64_t>(t.dims, t.dims + t.rank);
}

// Row-major unravel of a flat index over `dims` into `coord`.
inline void unravel(int64_t flat, const std::vector<int64_t>& dims, int64_t* coord) {
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    coord[i] = dims[i] ? flat % dims[i] : 0;
    flat = dims[i] ? flat / dims[i] : 0;
  }
}

inline int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// A reference kernel's fused epilogue on a double accumulator: the activation, if any, in float
// as the optimized kernels apply it.
template <typename T>
T epilogue(const Epilogue& e, double v) {
  if (e.act == Act::kNone) return static_cast<T>(v);
  return static_cast<T>(applyAct(e, static_cast<float>(v)));
}

}  // namespace nn
}  // namespace mgrt
