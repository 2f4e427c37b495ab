// Det: the determinant of each square matrix of the last two dims ([*, M, M] -> [*]), float32 or
// float64. Each matrix is copied into double and reduced by Gaussian elimination with partial
// pivoting (the LU factorization PA = LU): det = (-1)^swaps * prod(diag(U)). A singular matrix
// (a zero pivot column) gives 0; NaN or Inf inputs propagate. M = 0 gives 1 (the empty product).
#include <cmath>
#include <utility>
#include <vector>

#include "k_tensor_util.h"

namespace mgrt {
namespace {

// Determinant of the M x M row-major matrix a (overwritten by its elimination).
double luDeterminant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;  // the pivot: the largest magnitude in column k at or below the diagonal
    for (int64_t r = k + 1; r < m; ++r)
      if (std::fabs(a[r * m + k]) > std::fabs(a[p * m + k])) p = r;
    const double pivot = a[p * m + k];
    if (pivot == 0.0) return 0.0;
    if (p != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[k * m + c], a[p * m + c]);
      det = -det;
    }
    det *= pivot;
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = a[r * m + k] / pivot;
      for (int64_t c = k + 1; c < m; ++c) a[r * m + c] -= f * a[k * m + c];
    }
  }
  return det;
}

template <typename T>
void detT(const Tensor& x, const Tensor& y) {
  const int64_t m = x.dims[x.rank - 1], mm = m * m, batch = y.numel();
  const T* src = x.as<T>();
  T* dst = y.as<T>();
  std::vector<double> a(static_cast<size_t>(mm));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < mm; ++i)
      a[static_cast<size_t>(i)] = static_cast<double>(src[b * mm + i]);
    dst[b] = static_cast<T>(luDeterminant(a, m));
  }
}

}  // namespace

MG_TENSOR_KERNEL(kDet) {
  (void)a;
  if (nin < 1 || nout < 1 || !in[0].present()) return ctx.fail("Det: expected one input");
  const Tensor &x = in[0], &y = out[0];
  if (x.rank < 2 || x.dims[x.rank - 1] != x.dims[x.rank - 2] || y.dtype != x.dtype)
    return ctx.fail("Det: expected [*, M, M] in and [*] of the same type out");
  if (x.dtype == kF32) detT<float>(x, y);
  else if (x.dtype == kF64) detT<double>(x, y);
  else return ctx.fail("Det: input must be float32 or float64 (got element type %d)", x.dtype);
  return 0;
}

}  // namespace mgrt
