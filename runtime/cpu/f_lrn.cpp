// Fast LRN (float32, NCHW or [N, C], any spatial rank): y = x / (bias + alpha/size * sum_w x^2)^beta,
// the sum over the channel window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
//
// The reference kernel (k_nn_norm.cpp) visits one element at a time in double, re-reads the window
// for each element and calls std::pow: AlexNet's, GoogLeNet's and ZFNet's LRN layers took 8 to 22
// ms there. Here, per image, the spatial positions are cut into blocks of 512 (threaded); for a
// block and each channel the window's squares are summed by vector loops over the block (the
// block's C rows stay in L1/L2), then the scale d^-beta is taken in float: beta 0.75 (all three
// models) as 1 / (sqrt(d) * sqrt(sqrt(d))), 0.5 and 1 likewise exactly, other exponents through
// std::pow per element. Float sums of at most `size` squares and correctly rounded square roots:
// a few ulp from the double reference (tests/unit/fast_rows_test.cpp bounds it).
#include <algorithm>
#include <cmath>
#include <vector>

#include "f_gemm.h"
#include "mg_kernels.h"
#include "mg_threadpool.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mgrt {

int fLRN(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 1 || nout < 1 || in[0].dtype != kF32 || out[0].dtype != kF32 || in[0].rank < 2 ||
      out[0].numel() != in[0].numel())
    return fast::fallbackKernel("LRN", a, in, nin, out, nout, ctx);
  const int64_t size = a.i("size", 0);
  if (size <= 0) return fast::fallbackKernel("LRN", a, in, nin, out, nout, ctx);  // its error
  const float alpha = a.f("alpha", 1e-4f), beta = a.f("beta", 0.75f), bias = a.f("bias", 1.f);
  const Tensor& X = in[0];
  const int64_t N = X.dims[0], C = X.dims[1];
  int64_t S = 1;
  for (int d = 2; d < X.rank; ++d) S *= X.dims[d];
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  const float scale = alpha / static_cast<float>(size);
  const float* x = X.as<float>();
  float* y = out[0].as<float>();
  constexpr int64_t kBlock = 512;
  const int64_t blocks = (S + kBlock - 1) / kBlock;
  enum class Pow { k075, k05, k1, kAny };
  const Pow pw = beta == 0.75f ? Pow::k075 : beta == 0.5f ? Pow::k05 : beta == 1.f ? Pow::k1 : Pow::kAny;
  parallelFor(ctx.pool, N * blocks, 1, [&](int64_t b, int64_t e) {
    std::vector<float> sq(static_cast<size_t>(kBlock));
    for (int64_t job = b; job < e; ++job) {
      const int64_t n = job / blocks, i0 = (job % blocks) * kBlock, len = std::min(kBlock, S - i0);
      const float* xn = x + n * C * S + i0;
      float* yn = y + n * C * S + i0;
      float* __restrict s = sq.data();
      for (int64_t c = 0; c < C; ++c) {
        std::fill(s, s + len, 0.f);
        for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min(C - 1, c + hi); ++k) {
          const float* __restrict xk = xn + k * S;
          for (int64_t i = 0; i < len; ++i) s[i] += xk[i] * xk[i];
        }
        const float* __restrict xc = xn + c * S;
        float* __restrict yc = yn + c * S;
        switch (pw) {
          case Pow::k075:
          case Pow::k05: {
            int64_t i = 0;
#if defined(__AVX512F__)
            // Square roots by intrinsics: std::sqrt keeps a loop scalar (errno on negatives); the
            // maskz form because GCC 12 warns that _mm512_sqrt_ps reads an undefined vector.
            const __m512 vb = _mm512_set1_ps(bias), vs = _mm512_set1_ps(scale);
            for (; i + 16 <= len; i += 16) {
              const __m512 r = _mm512_maskz_sqrt_ps(0xFFFF, _mm512_fmadd_ps(vs, _mm512_loadu_ps(s + i), vb));
              const __m512 den = pw == Pow::k075 ? _mm512_mul_ps(r, _mm512_maskz_sqrt_ps(0xFFFF, r)) : r;
              _mm512_storeu_ps(yc + i, _mm512_div_ps(_mm512_loadu_ps(xc + i), den));
            }
#endif
            for (; i < len; ++i) {
              const float r = std::sqrt(bias + scale * s[i]);
              yc[i] = xc[i] / (pw == Pow::k075 ? r * std::sqrt(r) : r);
            }
            break;
          }
          case Pow::k1:
            for (int64_t i = 0; i < len; ++i) yc[i] = xc[i] / (bias + scale * s[i]);
            break;
          case Pow::kAny:
            for (int64_t i = 0; i < len; ++i) yc[i] = xc[i] / std::pow(bias + scale * s[i], beta);
            break;
        }
      }
    }
  });
  return 0;
}

}  // namespace mgrt
