// Fused attention (AVX-512): ONNX Attention's Y = softmax(Q K^T * scale + mask) V in one pass per
// query block, never materialising the [S, L] score matrix. The CPU target reaches it through
// passes/fuse_attention.cpp, which rewrites the MatMul -> [scale] -> [Add mask] -> Softmax ->
// MatMul chain exporters write (and decompose-attention makes of opset 23's Attention) into this
// op. Covered: float32, 3-D ([B, S, heads * D]) or 4-D ([B, heads, S, D]) Q/K/V, grouped-query
// heads (q head h reads kv head h / (Hq / Hkv)), a float (additive) or boolean mask broadcast to
// [B, Hq, S, L], is_causal, scale; the rest (past_key/past_value, softcap, the present_* and QK
// outputs, other types) falls back to the reference kernel (k_nn_attention.cpp).
//
// Per (batch, kv head), one work item: K^T of the head is packed once into [D][L] (keys along
// the vector lanes), then for each q head of the group and each block of 16 query rows:
//   scores: register tiles of 4 rows x 64 keys, sum over d of q[r][d] (broadcast) * K^T[d][keys];
//           the 4 row groups of the block run one after another on each 64-key tile, so that the
//           tile is read from L2 once per block; scaled, masked (-inf where a boolean mask is
//           false or a causal key lies ahead), into a [16][L] row buffer: 16 * L floats per
//           thread, not S * L;
//   softmax: each row's max and sum of e^(s - max) (the exact two-pass form on the row buffer);
//   output: register tiles of 4 rows x 64 values, sum over keys of p[r][j] (broadcast) *
//           V[j][:], 64-key chunks of V outside the row groups (each chunk read from L2 once per
//           block; partial sums kept in a [16][64] buffer), divided by the row's sum at the end.
// Both products keep 16 accumulators (FMA chains) for 8 loads per step. Measured (magnetoc
// bench, 1 thread, against the MatMul / Softmax / MatMul chain): 8 heads x 512 x 64 4.2 against
// 5.3 ms, 8 x 2048 x 64 70 against 85 ms, mha_block (4 x 128 x 16) 0.15 against 0.18 ms. The
// sums run in another order than the chain's: the results differ by float rounding only (a
// fully masked row is NaN in both, as 0 / 0).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "f_gemm.h"
#include "f_vmath.h"
#include "k_nn_internal.h"
#include "mg_threadpool.h"

namespace mgrt {

#if defined(__AVX512F__)

// GCC 12's AVX-512 conversion and masked-load intrinsics start from an undefined vector
// initialized from itself, which -Wmaybe-uninitialized reports at every call.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {

constexpr int kRows = 4;     // query rows per register tile
constexpr int kVecs = 4;     // 16-lane vectors per register tile row (64 keys or values)
constexpr int kGroups = 4;   // register tiles per block: each 64-key tile of K^T (and of V) is
                             // loaded from L2 once for the 16 rows of a block, not once per 4
constexpr int kBlock = kRows * kGroups;

// Strides (in elements) of one Q/K/V/Y operand: batch, head, position; the head dim is dense.
struct Layout {
  int64_t b = 0, h = 0, s = 0;
};

Layout layoutOf(bool four, int64_t heads, int64_t len, int64_t dim) {
  if (four) return {heads * len * dim, len * dim, dim};
  return {len * heads * dim, dim, heads * dim};  // [B, S, heads * dim]
}

struct Problem {
  const float *q, *k, *v;
  float* y;
  Layout lq, lk, lv, ly;
  int64_t B, Hq, Hkv, S, L, D, Dv;
  float scale;
  bool causal;
  // The mask seen through its broadcast to [B, Hq, S, L] (element strides, 0 where broadcast).
  const void* mask = nullptr;
  bool boolMask = false;
  int64_t ms[4] = {0, 0, 0, 0};
};

// acc[r][v] += sum over d of q[r][d] * K^T[d][16 v ..] for VN vectors of keys (kt: the tile's
// first key in row 0 of the packed [D][lp] K^T); VN a constant, so that the tile stays in
// registers.
template <int VN>
void keyTile(const float* kt, int64_t lp, int64_t D, const float* const (&qr)[kRows],
             __m512 (&acc)[kRows][kVecs]) {
  for (int64_t d = 0; d < D; ++d) {
    const float* row = kt + d * lp;
    __m512 k[VN];
#pragma GCC unroll 4
    for (int v = 0; v < VN; ++v) k[v] = _mm512_load_ps(row + v * 16);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 qv = _mm512_set1_ps(qr[r][d]);
#pragma GCC unroll 4
      for (int v = 0; v < VN; ++v) acc[r][v] = _mm512_fmadd_ps(qv, k[v], acc[r][v]);
    }
  }
}

// Scores of rows [i0, i0 + nr) (nr <= kRows) of q head h against keys [16 v0, 16 (v0 + vn)) of
// the packed K^T (kt: [D][lp]), scaled and masked, into sc ([nr][lp] rows of the block buffer).
void scoreTile(const Problem& p, int64_t b, int64_t h, int64_t i0, int nr, const float* kt, int64_t lp,
               int64_t v0, int vn, float* sc) {
  const float* qr[kRows];
  for (int r = 0; r < kRows; ++r)
    qr[r] = p.q + b * p.lq.b + h * p.lq.h + (i0 + std::min(r, nr - 1)) * p.lq.s;
  const __m512 scale = _mm512_set1_ps(p.scale);
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 acc[kRows][kVecs];
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_setzero_ps();
  switch (vn) {
    case 1: keyTile<1>(kt + v0 * 16, lp, p.D, qr, acc); break;
    case 2: keyTile<2>(kt + v0 * 16, lp, p.D, qr, acc); break;
    case 3: keyTile<3>(kt + v0 * 16, lp, p.D, qr, acc); break;
    default: keyTile<4>(kt + v0 * 16, lp, p.D, qr, acc); break;
  }
  for (int r = 0; r < nr; ++r) {
    const int64_t i = i0 + r;
    for (int v = 0; v < vn; ++v) {
      const int64_t j0 = (v0 + v) * 16;
      __m512 s = _mm512_mul_ps(acc[r][v], scale);
      if (p.mask) {
        const int64_t off = b * p.ms[0] + h * p.ms[1] + i * p.ms[2] + j0 * p.ms[3];
        const __mmask16 in = vm::tailMask(std::min<int64_t>(16, p.L - j0));
        if (p.boolMask) {
          const uint8_t* m = static_cast<const uint8_t*>(p.mask) + off;
          __mmask16 keep;
          if (p.ms[3] == 1) {
            const __m128i bytes = _mm_maskz_loadu_epi8(in, m);
            keep = _mm512_test_epi32_mask(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(0xFF));
          } else {
            keep = *m ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>(0);
          }
          s = _mm512_mask_blend_ps(keep, ninf, s);
        } else {
          const float* m = static_cast<const float*>(p.mask) + off;
          const __m512 mv = p.ms[3] == 1 ? _mm512_maskz_loadu_ps(in, m) : _mm512_set1_ps(*m);
          s = _mm512_add_ps(s, mv);
        }
      }
      if (p.causal && j0 + 15 > i) {  // keys past the query's own position
        const int64_t keep = std::max<int64_t>(0, std::min<int64_t>(16, i - j0 + 1));
        s = _mm512_mask_blend_ps(vm::tailMask(keep), ninf, s);
      }
      _mm512_store_ps(sc + r * lp + j0, s);
    }
  }
}

// Scores of the block's rows [i0, i0 + nr) (nr <= kBlock) into sc ([kBlock][lp]): key tiles
// outside, the block's row groups inside (the tile of K^T stays in L1 for all of them).
void scoreBlock(const Problem& p, int64_t b, int64_t h, int64_t i0, int nr, const float* kt, int64_t lp,
                float* sc) {
  const int64_t nv = lp / 16;
  for (int64_t v0 = 0; v0 < nv; v0 += kVecs) {
    const int vn = static_cast<int>(std::min<int64_t>(kVecs, nv - v0));
    for (int g = 0; g * kRows < nr; ++g)
      scoreTile(p, b, h, i0 + g * kRows, std::min(kRows, nr - g * kRows), kt, lp, v0, vn,
                sc + g * kRows * lp);
  }
}

// Row r of sc (the first L of its lp entries) becomes e^(s - max); returns the sum.
float expRow(float* row, int64_t L) {
  __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 16 <= L; j += 16) mx = _mm512_max_ps(mx, _mm512_load_ps(row + j));
  if (j < L) mx = _mm512_mask_max_ps(mx, vm::tailMask(L - j), mx, _mm512_load_ps(row + j));
  const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j < L; j += 16) {
    const __mmask16 in = vm::tailMask(std::min<int64_t>(16, L - j));
    const __m512 e = _mm512_maskz_mov_ps(in, vm::v16::exp(_mm512_sub_ps(_mm512_load_ps(row + j), m)));
    _mm512_store_ps(row + j, e);
    sum = _mm512_add_ps(sum, e);
  }
  return _mm512_reduce_add_ps(sum);
}

// acc[r][v] += sum over keys [j0, j1) of sc[r][j] * V[j][16 v ..] for VN vectors of values
// (lanes: the valid lanes of each); VN a constant, so that the tile stays in registers.
template <int VN>
void valueTile(const float* vb, int64_t vs, int64_t j0, int64_t j1, const float* sc, int64_t lp,
               const __mmask16* lanes, __m512 (&acc)[kRows][kVecs]) {
  const float* vr = vb + j0 * vs;
  for (int64_t j = j0; j < j1; ++j, vr += vs) {
    __m512 x[VN];
#pragma GCC unroll 4
    for (int v = 0; v < VN; ++v) x[v] = _mm512_maskz_loadu_ps(lanes[v], vr + v * 16);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 w = _mm512_set1_ps(sc[r * lp + j]);
#pragma GCC unroll 4
      for (int v = 0; v < VN; ++v) acc[r][v] = _mm512_fmadd_ps(w, x[v], acc[r][v]);
    }
  }
}

// Y rows [i0, i0 + nr) of q head h: sum over keys of sc[r][j] * V[j][:], divided by sums[r]. Per
// 64-wide slice of the values: 64-key chunks of V outside, the row groups inside, the partial
// sums of the block kept in ob ([kBlock][64]) between chunks.
void outputBlock(const Problem& p, int64_t b, int64_t h, int64_t kh, int64_t i0, int nr,
                 const float* sc, int64_t lp, const float* sums, float* ob) {
  const float* vb = p.v + b * p.lv.b + kh * p.lv.h;
  const int groups = (nr + kRows - 1) / kRows;
  constexpr int64_t kChunk = 64;
  for (int64_t c0 = 0; c0 < p.Dv; c0 += kVecs * 16) {
    const int64_t cw = std::min<int64_t>(kVecs * 16, p.Dv - c0);
    const int vn = static_cast<int>((cw + 15) / 16);
    __mmask16 lanes[kVecs];
    for (int v = 0; v < kVecs; ++v) lanes[v] = vm::tailMask(std::max<int64_t>(0, std::min<int64_t>(16, cw - v * 16)));
    for (int64_t j0 = 0; j0 < p.L; j0 += kChunk) {
      const int64_t j1 = std::min(p.L, j0 + kChunk);
      for (int g = 0; g < groups; ++g) {
        float* og = ob + g * kRows * 64;
        __m512 acc[kRows][kVecs];
        for (int r = 0; r < kRows; ++r)
          for (int v = 0; v < kVecs; ++v)
            acc[r][v] = j0 == 0 ? _mm512_setzero_ps() : _mm512_load_ps(og + r * 64 + v * 16);
        const float* sg = sc + g * kRows * lp;
        switch (vn) {
          case 1: valueTile<1>(vb + c0, p.lv.s, j0, j1, sg, lp, lanes, acc); break;
          case 2: valueTile<2>(vb + c0, p.lv.s, j0, j1, sg, lp, lanes, acc); break;
          case 3: valueTile<3>(vb + c0, p.lv.s, j0, j1, sg, lp, lanes, acc); break;
          default: valueTile<4>(vb + c0, p.lv.s, j0, j1, sg, lp, lanes, acc); break;
        }
        for (int r = 0; r < kRows; ++r)
          for (int v = 0; v < kVecs; ++v) _mm512_store_ps(og + r * 64 + v * 16, acc[r][v]);
      }
    }
    for (int r = 0; r < nr; ++r) {
      const __m512 inv = _mm512_set1_ps(1.f / sums[r]);
      float* yr = p.y + b * p.ly.b + h * p.ly.h + (i0 + r) * p.ly.s + c0;
      for (int v = 0; v < vn; ++v)
        _mm512_mask_storeu_ps(yr + v * 16, lanes[v], _mm512_mul_ps(_mm512_load_ps(ob + r * 64 + v * 16), inv));
    }
  }
}

}  // namespace

int fAttention(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Attention";
  auto fallback = [&] { return fast::fallbackKernel(op, a, in, nin, out, nout, ctx); };
  if (nin < 3 || nout < 1) return fallback();
  const Tensor &Q = in[0], &K = in[1], &V = in[2];
  const bool four = Q.rank == 4;
  if ((Q.rank != 3 && Q.rank != 4) || K.rank != Q.rank || V.rank != Q.rank || Q.dtype != kF32 ||
      K.dtype != kF32 || V.dtype != kF32 || out[0].dtype != kF32)
    return fallback();
  for (int i = 4; i < nin; ++i)
    if (in[i].present()) return fallback();  // past_key / past_value
  for (int i = 1; i < nout; ++i)
    if (out[i].present()) return fallback();  // present_key / present_value / the QK output
  if (a.f("softcap", 0.f) != 0.f || a.i("qk_matmul_output_mode", 0) != 0) return fallback();
  Problem p;
  p.B = Q.dims[0];
  p.Hq = four ? Q.dims[1] : a.i("q_num_heads", 0);
  p.Hkv = four ? K.dims[1] : a.i("kv_num_heads", 0);
  if (p.Hq <= 0 || p.Hkv <= 0 || p.Hq % p.Hkv != 0) return fallback();
  p.S = four ? Q.dims[2] : Q.dims[1];
  p.L = four ? K.dims[2] : K.dims[1];
  if ((four ? V.dims[2] : V.dims[1]) != p.L || K.dims[0] != p.B || V.dims[0] != p.B) return fallback();
  p.D = four ? Q.dims[3] : Q.dims[2] / p.Hq;
  p.Dv = four ? V.dims[3] : V.dims[2] / p.Hkv;
  if ((four ? K.dims[3] : K.dims[2] / p.Hkv) != p.D || (four && V.dims[1] != p.Hkv)) return fallback();
  if (p.B == 0 || p.S == 0 || p.Dv == 0) return 0;
  if (p.L == 0 || p.D == 0) return fallback();  // softmax over nothing, or all-zero scores
  p.q = Q.as<float>();
  p.k = K.as<float>();
  p.v = V.as<float>();
  p.y = out[0].as<float>();
  p.lq = layoutOf(four, p.Hq, p.S, p.D);
  p.lk = layoutOf(four, p.Hkv, p.L, p.D);
  p.lv = layoutOf(four, p.Hkv, p.L, p.Dv);
  p.ly = layoutOf(four, p.Hq, p.S, p.Dv);
  p.scale = a.has("scale") ? a.f("scale", 1.f) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.D)));
  p.causal = a.i("is_causal", 0) != 0;
  if (nin > 3 && in[3].present()) {
    const Tensor& M = in[3];
    if (M.dtype != kF32 && M.dtype != kBool) return fallback();
    const int64_t full[4] = {p.B, p.Hq, p.S, p.L};
    if (!nn::attentionMaskStrides(M, full, p.ms)) return fallback();
    p.mask = M.data;
    p.boolMask = M.dtype == kBool;
  }
  const int64_t lp = (p.L + 15) / 16 * 16;  // keys padded to whole vectors (zero K^T columns)
  const int64_t group = p.Hq / p.Hkv;
  parallelFor(ctx.pool, p.B * p.Hkv, 1, [&](int64_t first, int64_t last) {
    static thread_local fast::Scratch ktS, scS, obS;
    float* kt = ktS.get(p.D * lp);
    float* sc = scS.get(kBlock * lp);
    float* ob = obS.get(kBlock * 64);
    float sums[kBlock];
    for (int64_t item = first; item < last; ++item) {
      const int64_t b = item / p.Hkv, kh = item % p.Hkv;
      const float* kb = p.k + b * p.lk.b + kh * p.lk.h;
      for (int64_t d = 0; d < p.D; ++d) {
        float* row = kt + d * lp;
        for (int64_t j = 0; j < p.L; ++j) row[j] = kb[j * p.lk.s + d];
        for (int64_t j = p.L; j < lp; ++j) row[j] = 0.f;
      }
      for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
        for (int64_t i0 = 0; i0 < p.S; i0 += kBlock) {
          const int nr = static_cast<int>(std::min<int64_t>(kBlock, p.S - i0));
          scoreBlock(p, b, h, i0, nr, kt, lp, sc);
          for (int r = 0; r < nr; ++r) sums[r] = expRow(sc + r * lp, p.L);
          // Rows of the last register tile past the end: zero weights (their sums are unused).
          for (int r = nr; r < (nr + kRows - 1) / kRows * kRows; ++r) std::memset(sc + r * lp, 0, sizeof(float) * lp);
          outputBlock(p, b, h, kh, i0, nr, sc, lp, sums, ob);
        }
    }
  });
  return 0;
}

#else

int fAttention(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return fast::fallbackKernel("Attention", a, in, nin, out, nout, ctx);
}

#endif

}  // namespace mgrt
