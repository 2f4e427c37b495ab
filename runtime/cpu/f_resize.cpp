// Fast nearest-neighbour Resize: every output row (all axes but the last) is either a copy of
// the output row before it (memcpy: the rows an integer upscale repeats) or one gather of an
// input row along the last axis, which for an integer factor f (source column ox / f, as every
// coordinate transform but tf_crop_and_resize gives at 2x) is each input element written f times.
//
// The source index of every output coordinate comes from the reference kernel's own tap lists
// (resizeCallPlan, k_tensor_resize.cpp), so the fast kernel picks exactly the elements the
// reference does, for every coordinate transform and rounding mode, any factor, any rank and any
// element size (nearest copies bytes). The reference walks the output element by element (an
// unravel and a tap lookup per axis per element): 72 ms for a DBNet text detector's 2x upsamplings.
// Linear and cubic modes, tf_crop_and_resize (extrapolated outputs) and ranks below 1 go to the
// reference. Threaded over blocks of output rows; a block's first row is always gathered (the row
// before it may belong to another thread).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "f_gemm.h"
#include "k_tensor_resize.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

// Each of the n input elements written f times in a row (F: f known at compile time, 0: not).
template <int F, typename T>
void repeatRow(const T* __restrict x, T* __restrict y, int64_t n, int64_t f) {
  const int64_t ff = F ? F : f;
  for (int64_t ix = 0; ix < n; ++ix) {
    const T v = x[ix];
#pragma GCC unroll 8
    for (int64_t k = 0; k < ff; ++k) y[ix * ff + k] = v;
  }
}

// One output row of n columns from one input row: with an integer factor f > 0, y[ix * f + k] =
// x[ix] for k < f; otherwise y[ox] = x[col[ox]].
template <typename T>
void gatherRow(const T* __restrict x, T* __restrict y, const int64_t* col, int64_t n, int64_t f) {
  switch (f) {
    case 0:
      for (int64_t ox = 0; ox < n; ++ox) y[ox] = x[col[ox]];
      return;
    case 2: return repeatRow<2>(x, y, n / 2, 2);
    case 4: return repeatRow<4>(x, y, n / 4, 4);
    case 8: return repeatRow<8>(x, y, n / 8, 8);
    default: return repeatRow<0>(x, y, n / f, f);
  }
}

template <typename T>
void resizeRows(const T* x, T* y, int r, const int64_t* ydims, const int64_t* xs,
                const std::vector<std::vector<int64_t>>& idx, int64_t f, ThreadPool* pool) {
  const int64_t ow = ydims[r - 1];
  int64_t rows = 1;
  for (int d = 0; d < r - 1; ++d) rows *= ydims[d];
  const int64_t* col = idx[r - 1].data();
  // Rows per work item: about 64K elements, at least one row.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, ow));
  parallelFor(pool, rows, grain, [&](int64_t b, int64_t e) {
    int64_t c[kMaxRank] = {0};
    for (int64_t i = b, d = r - 2; d >= 0; --d) {  // unravel b over the leading axes
      c[d] = i % ydims[d];
      i /= ydims[d];
    }
    int64_t prevSrc = -1;
    for (int64_t row = b; row < e; ++row) {
      int64_t src = 0;
      for (int d = 0; d < r - 1; ++d) src += idx[d][c[d]] * xs[d];
      T* yr = y + row * ow;
      if (src == prevSrc)
        std::memcpy(yr, yr - ow, sizeof(T) * ow);
      else
        gatherRow(x + src, yr, col, ow, f);
      prevSrc = src;
      for (int d = r - 2; d >= 0; --d) {  // next row's coordinates
        if (++c[d] < ydims[d]) break;
        c[d] = 0;
      }
    }
  });
}

}  // namespace

int fResize(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("Resize", a, in, nin, out, nout, ctx); };
  if (nin < 1 || nout < 1 || in[0].rank < 1 || a.s("mode", "nearest") != "nearest" ||
      a.s("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" ||
      out[0].dtype != in[0].dtype || in[0].dtype == kStr)
    return fallback();
  const Tensor& x = in[0];
  Tensor& y = out[0];
  ResizeMode m;
  std::vector<ResizeAxisPlan> plans;
  if (!resizeCallPlan(a, in, nin, y, &m, &plans).empty()) return fallback();  // the reference says why
  if (y.numel() == 0) return 0;
  const int r = x.rank;
  std::vector<std::vector<int64_t>> idx(static_cast<size_t>(r));
  for (int d = 0; d < r; ++d) {
    const ResizeAxisPlan& p = plans[d];
    if (static_cast<int64_t>(p.taps.size()) != y.dims[d]) return fallback();
    idx[d].resize(static_cast<size_t>(y.dims[d]));
    for (int64_t o = 0; o < y.dims[d]; ++o) {
      if (p.taps[o].empty() || (o < static_cast<int64_t>(p.outside.size()) && p.outside[o])) return fallback();
      idx[d][o] = p.taps[o][0].index;
    }
  }
  // The last axis as an integer factor f: source column ox / f for every output column (the
  // output row is then exactly iw * f columns).
  int64_t f = 0;
  const int64_t ow = y.dims[r - 1], iw = x.dims[r - 1];
  if (ow % iw == 0) {
    f = ow / iw;
    for (int64_t o = 0; o < ow && f; ++o)
      if (idx[r - 1][o] != o / f) f = 0;
  }
  int64_t xs[kMaxRank];
  int64_t stride = 1;
  for (int d = r - 1; d >= 0; --d) {
    xs[d] = stride;
    stride *= x.dims[d];
  }
  switch (dtypeSize(x.dtype)) {
    case 1: resizeRows(x.as<uint8_t>(), y.as<uint8_t>(), r, y.dims, xs, idx, f, ctx.pool); return 0;
    case 2: resizeRows(x.as<uint16_t>(), y.as<uint16_t>(), r, y.dims, xs, idx, f, ctx.pool); return 0;
    case 4: resizeRows(x.as<uint32_t>(), y.as<uint32_t>(), r, y.dims, xs, idx, f, ctx.pool); return 0;
    case 8: resizeRows(x.as<uint64_t>(), y.as<uint64_t>(), r, y.dims, xs, idx, f, ctx.pool); return 0;
    default: return fallback();
  }
}

}  // namespace mgrt
