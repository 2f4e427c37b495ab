// QuantizeLinear and DequantizeLinear per tensor (one scale, one zero point), and MgQuantizedAdd
// (their composition around an Add, fuse-qdq's residual adds), 16 elements per
// AVX-512 vector, threaded: the activations' Q/DQ pairs of a QDQ model between its integer kernels
// (residual adds, pools) run on every element of the tensor, and the reference loops (one
// floorf/fmodf rounding per element) took two thirds of a quantized ResNet's time.
//
// The same float32 operations as the reference formulas (runtime/common/mg_quant.h), so the same
// bytes: QuantizeLinear divides by the scale (a true division, not a reciprocal product), rounds
// half to even (vrndscaleps with the rounding fixed in the instruction, whatever MXCSR holds), adds
// the zero point in float and saturates; NaN gives the zero point. DequantizeLinear subtracts the
// zero point in integers (exact for 8-bit operands) and multiplies by the scale. Per-axis scales,
// int32 operands, block quantization and other ISAs run the reference kernels.
#include <algorithm>
#include <cstdint>

#include "f_gemm.h"
#include "mg_threadpool.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define MG_QUANT_AVX512 1
// GCC 12's conversion intrinsics start from an "undefined" vector initialized from itself.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mgrt {
namespace {

#if defined(MG_QUANT_AVX512)
constexpr int64_t kChunk = 16 * 1024;  // elements per parallel item

// One scalar parameter: a one-element operand (absent: 0).
bool scalarParam(const Tensor* in, int nin, int i, int32_t dtype, bool* present) {
  *present = i < nin && in[i].present();
  return !*present || (in[i].numel() == 1 && in[i].dtype == dtype);
}

int32_t zeroAt(const Tensor& t) {
  return t.dtype == kU8 ? int32_t(t.as<uint8_t>()[0]) : int32_t(t.as<int8_t>()[0]);
}

// body(i, mask) for every 16 elements of [0, n) (mask: those inside), threaded in chunks.
template <typename Body>
void forEachVector(ThreadPool* pool, int64_t n, const Body& body) {
  parallelFor(pool, (n + kChunk - 1) / kChunk, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b * kChunk, end = std::min(n, e * kChunk); i < end; i += 16)
      body(i, end - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (end - i)) - 1));
  });
}
#endif

}  // namespace

int fQuantizeLinear(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("QuantizeLinear", a, in, nin, out, nout, ctx); };
#if defined(MG_QUANT_AVX512)
  if (nin < 2 || nout < 1) return fallback();
  const Tensor& X = in[0];
  Tensor& Y = out[0];
  bool hasZp = false;
  if (X.dtype != kF32 || (Y.dtype != kU8 && Y.dtype != kI8) || in[1].dtype != kF32 || in[1].numel() != 1 ||
      !scalarParam(in, nin, 2, Y.dtype, &hasZp) || a.i("block_size", 0) != 0 || X.numel() != Y.numel())
    return fallback();
  const float scale = in[1].as<float>()[0];
  const int32_t zp = hasZp ? zeroAt(in[2]) : 0;
  const bool s8 = Y.dtype == kI8;
  const __m512 vs = _mm512_set1_ps(scale), vz = _mm512_set1_ps(static_cast<float>(zp));
  const __m512 lo = _mm512_set1_ps(s8 ? -128.f : 0.f), hi = _mm512_set1_ps(s8 ? 127.f : 255.f);
  const float* x = X.as<float>();
  uint8_t* y = static_cast<uint8_t*>(Y.data);
  const int64_t n = X.numel();
  forEachVector(ctx.pool, n, [&](int64_t i, __mmask16 m) {
    const __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vs);
    __m512 v = _mm512_add_ps(_mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q), v, vz);  // NaN: the zero point
    _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
  });
  return 0;
#else
  return fallback();
#endif
}

int fDequantizeLinear(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("DequantizeLinear", a, in, nin, out, nout, ctx); };
#if defined(MG_QUANT_AVX512)
  if (nin < 2 || nout < 1) return fallback();
  const Tensor& X = in[0];
  Tensor& Y = out[0];
  bool hasZp = false;
  if ((X.dtype != kU8 && X.dtype != kI8) || Y.dtype != kF32 || in[1].dtype != kF32 || in[1].numel() != 1 ||
      !scalarParam(in, nin, 2, X.dtype, &hasZp) || a.i("block_size", 0) != 0 || X.numel() != Y.numel())
    return fallback();
  const __m512 vs = _mm512_set1_ps(in[1].as<float>()[0]);
  const __m512i vz = _mm512_set1_epi32(hasZp ? zeroAt(in[2]) : 0);
  const bool s8 = X.dtype == kI8;
  const uint8_t* x = static_cast<const uint8_t*>(X.data);
  float* y = Y.as<float>();
  const int64_t n = X.numel();
  forEachVector(ctx.pool, n, [&](int64_t i, __mmask16 m) {
    const __m128i bytes = _mm_maskz_loadu_epi8(m, x + i);
    const __m512i v = s8 ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
    _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, vz)), vs));
  });
  return 0;
#else
  return fallback();
#endif
}

int fMgQuantizedAdd(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  auto fallback = [&] { return fast::fallbackKernel("MgQuantizedAdd", a, in, nin, out, nout, ctx); };
#if defined(MG_QUANT_AVX512)
  if (nin != 8 || nout < 1) return fallback();
  const Tensor &A = in[0], &B = in[3];
  Tensor& Y = out[0];
  bool za = false, zb = false, zy = false;
  auto quant8 = [](int32_t t) { return t == kU8 || t == kI8; };
  if (!quant8(A.dtype) || !quant8(B.dtype) || !quant8(Y.dtype) || A.numel() != B.numel() || A.numel() != Y.numel() ||
      in[1].dtype != kF32 || in[4].dtype != kF32 || in[6].dtype != kF32 || in[1].numel() != 1 || in[4].numel() != 1 ||
      in[6].numel() != 1 || !scalarParam(in, nin, 2, A.dtype, &za) || !scalarParam(in, nin, 5, B.dtype, &zb) ||
      !scalarParam(in, nin, 7, Y.dtype, &zy))
    return fallback();
  const __m512 sa = _mm512_set1_ps(in[1].as<float>()[0]), sb = _mm512_set1_ps(in[4].as<float>()[0]);
  const __m512 sy = _mm512_set1_ps(in[6].as<float>()[0]);
  const __m512i vza = _mm512_set1_epi32(za ? zeroAt(in[2]) : 0), vzb = _mm512_set1_epi32(zb ? zeroAt(in[5]) : 0);
  const int32_t yzp = zy ? zeroAt(in[7]) : 0;
  const __m512 vzy = _mm512_set1_ps(static_cast<float>(yzp));
  const bool s8y = Y.dtype == kI8, s8a = A.dtype == kI8, s8b = B.dtype == kI8;
  const __m512 lo = _mm512_set1_ps(s8y ? -128.f : 0.f), hi = _mm512_set1_ps(s8y ? 127.f : 255.f);
  const uint8_t* pa = static_cast<const uint8_t*>(A.data);
  const uint8_t* pb = static_cast<const uint8_t*>(B.data);
  uint8_t* py = static_cast<uint8_t*>(Y.data);
  const int64_t n = Y.numel();
  forEachVector(ctx.pool, n, [&](int64_t i, __mmask16 m) {
    const __m128i ba = _mm_maskz_loadu_epi8(m, pa + i), bb = _mm_maskz_loadu_epi8(m, pb + i);
    const __m512i ia = s8a ? _mm512_cvtepi8_epi32(ba) : _mm512_cvtepu8_epi32(ba);
    const __m512i ib = s8b ? _mm512_cvtepi8_epi32(bb) : _mm512_cvtepu8_epi32(bb);
    const __m512 fa = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ia, vza)), sa);
    const __m512 fb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(ib, vzb)), sb);
    const __m512 q = _mm512_div_ps(_mm512_add_ps(fa, fb), sy);
    __m512 v = _mm512_add_ps(_mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzy);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q), v, vzy);
    _mm_mask_storeu_epi8(py + i, m, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
  });
  return 0;
#else
  return fallback();
#endif
}

}  // namespace mgrt
