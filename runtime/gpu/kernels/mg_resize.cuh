// resize: ONNX Resize (opset 11-19: nearest, linear, cubic; antialias, axes, every coordinate
// transformation) as tables of taps, for the map functor codegen/gpu generates per Resize node.
//
// Resize is separable: output coordinate c of axis d reads a few input positions with weights.
// The taps depend only on the shapes and attributes, so the generator computes them at compile
// time with the CPU runtime's own planner (mgrt::resizePlan, runtime/common/k_tensor_shared.h) and
// emits them as constant device tables, one per axis; the kernel only sums. So the GPU target uses
// exactly the CPU target's taps and weights, and adds in the CPU's order (odometer over the axes'
// taps, last axis fastest) in double: the two agree to the last bit up to FMA contraction.
//
//   resizeElement<T, RANK, NEAREST>(x, y, o, axes, extrapolation)   computes y[o] (contiguous)
//     NEAREST: one tap of weight 1 per coordinate, the element is copied (any type).
//     otherwise: sum of weight products times x in double, stored into T as the CPU's writeF
//     (integers round to nearest).
//   A coordinate with no taps lies outside the input (tf_crop_and_resize) and takes the
//   extrapolation value.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_typed.cuh"

namespace mgk {

// One axis: the taps of output coordinate c are k in [first[c], first[c + 1]), reading the input
// at offset[k] (index times the input's stride along the axis) with weight weight[k].
struct ResizeAxisTable {
  const int32_t* first;
  const int64_t* offset;
  const double* weight;
  int64_t outDim;
};

template <typename T, int RANK, bool NEAREST>
MG_DEVICE void resizeElement(const T* x, T* y, int64_t o, const ResizeAxisTable* ax,
                             double extrapolation) {
  static_assert(RANK >= 1 && RANK <= kMaxRank, "Resize ranks are 1 to kMaxRank");
  int32_t lo[RANK], hi[RANK], pos[RANK];
  int64_t rem = o;
  MGK_UNROLL
  for (int d = RANK - 1; d >= 0; --d) {
    const int64_t c = rem % ax[d].outDim;
    rem /= ax[d].outDim;
    lo[d] = ax[d].first[c];
    hi[d] = ax[d].first[c + 1];
    pos[d] = lo[d];
  }
  MGK_UNROLL
  for (int d = 0; d < RANK; ++d)
    if (lo[d] == hi[d]) {
      y[o] = storeRounded<T>(extrapolation);
      return;
    }
  if constexpr (NEAREST) {
    int64_t off = 0;
    MGK_UNROLL
    for (int d = 0; d < RANK; ++d) off += ax[d].offset[lo[d]];
    y[o] = x[off];
  } else {
    double acc = 0;
    for (;;) {
      double w = 1;
      int64_t off = 0;
      MGK_UNROLL
      for (int d = 0; d < RANK; ++d) {
        w *= ax[d].weight[pos[d]];
        off += ax[d].offset[pos[d]];
      }
      acc += w * double(x[off]);
      int d = RANK - 1;
      for (; d >= 0; --d) {
        if (++pos[d] < hi[d]) break;
        pos[d] = lo[d];
      }
      if (d < 0) break;
    }
    y[o] = storeRounded<T>(acc);
  }
}

}  // namespace mgk
