// Reference kernels of the opset 23 transformer ops: RMSNormalization, RotaryEmbedding, Attention.
// Plain loops accumulating in double, written from the ONNX specification (and onnxruntime's
// behaviour where the specification is loose: grouped-query heads map q head h to kv head
// h / (q_heads / kv_heads); a causal mask is offset by the past length; softcap comes before the
// mask; qk_matmul_output modes 0..3 = scaled QK, after softcap, after the mask, after softmax).
// Compiled graphs reach none of them on the default pipeline (passes/decompose_attention.cpp
// rewrites the three ops into plain ones; the RMSNormalization that fuse-layernorm makes again on
// cpu runs f_norm.cpp's kernel, which falls back to this one for float64 and broadcast scales);
// the reference interpreter runs them, which makes them the oracle of those passes' golden tests
// (tests/ir/decompose_attention*.mlir, fuse_layernorm*.mlir).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "k_nn_internal.h"

namespace mgrt {
namespace nn {
namespace {

template <typename T>
int rmsNormT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int, Ctx& ctx) {
  const char* op = "RMSNormalization";
  (void)nin;
  const Tensor& X = in[0];
  int64_t rank = X.rank, axis = a.i("axis", -1);
  if (rank < 1 || axis < -rank || axis >= rank) return ctx.fail("%s: axis out of range", op);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= X.dims[d];
  const Tensor& S = in[1];
  if (S.dtype != X.dtype || S.rank > rank - axis) return ctx.fail("%s: bad scale", op);
  // Index of the scale element for each position of the normalized block (numpy broadcast).
  std::vector<int64_t> sIdx(static_cast<size_t>(inner));
  for (int64_t j = 0; j < inner; ++j) {
    int64_t rem = j, off = 0, stride = 1;
    for (int64_t d = rank - 1; d >= axis; --d) {
      int64_t c = rem % X.dims[d];
      rem /= X.dims[d];
      int64_t sd = d - (rank - S.rank);
      if (sd >= 0) {
        if (S.dims[sd] != 1 && S.dims[sd] != X.dims[d]) return ctx.fail("%s: bad scale", op);
        if (S.dims[sd] != 1) off += c * stride;
        stride *= S.dims[sd];
      }
    }
    sIdx[static_cast<size_t>(j)] = off;
  }
  const double eps = a.f("epsilon", 1e-5f);
  const T* x = X.as<T>();
  const T* s = S.as<T>();
  T* y = out[0].as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    const T* xr = x + o * inner;
    double sq = 0;
    for (int64_t j = 0; j < inner; ++j) sq += static_cast<double>(xr[j]) * static_cast<double>(xr[j]);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
    for (int64_t j = 0; j < inner; ++j)
      y[o * inner + j] = static_cast<T>(static_cast<double>(xr[j]) * inv *
                                        static_cast<double>(s[sIdx[static_cast<size_t>(j)]]));
  }
  return 0;
}

template <typename T>
int rotaryT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int, Ctx& ctx) {
  const char* op = "RotaryEmbedding";
  const Tensor& X = in[0];
  const bool four = X.rank == 4;
  if (X.rank != 3 && X.rank != 4) return ctx.fail("%s: X must be 3-D or 4-D", op);
  const int64_t B = X.dims[0];
  const int64_t H = four ? X.dims[1] : a.i("num_heads", 0);
  const int64_t S = four ? X.dims[2] : X.dims[1];
  if (H <= 0 || (!four && X.dims[2] % H != 0)) return ctx.fail("%s: bad num_heads", op);
  const int64_t D = four ? X.dims[3] : X.dims[2] / H;
  int64_t R = a.i("rotary_embedding_dim", 0);
  if (R == 0) R = D;
  if (R > D || R % 2 != 0) return ctx.fail("%s: bad rotary_embedding_dim", op);
  const int64_t half = R / 2;
  const bool interleaved = a.i("interleaved", 0) != 0;
  const bool withPos = present(in, nin, 3);
  const Tensor& P = in[3 < nin ? 3 : 0];
  const T* cosC = in[1].as<T>();
  const T* sinC = in[2].as<T>();
  const int64_t maxPos = in[1].dims[0];
  const T* x = X.as<T>();
  T* y = out[0].as<T>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      int64_t row = b * S + s;  // cache row without position_ids
      if (withPos) {
        row = P.dtype == kI64 ? P.as<int64_t>()[b * S + s] : P.as<int32_t>()[b * S + s];
        if (row < 0 || row >= maxPos) return ctx.fail("%s: position id %lld out of range", op, static_cast<long long>(row));
      }
      const T* cr = cosC + row * half;
      const T* sr = sinC + row * half;
      for (int64_t h = 0; h < H; ++h) {
        const int64_t base = four ? ((b * H + h) * S + s) * D : (b * S + s) * H * D + h * D;
        const T* xv = x + base;
        T* yv = y + base;
        for (int64_t d = R; d < D; ++d) yv[d] = xv[d];
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
          const double x1 = static_cast<double>(xv[i1]), x2 = static_cast<double>(xv[i2]);
          const double c = static_cast<double>(cr[i]), sn = static_cast<double>(sr[i]);
          yv[i1] = static_cast<T>(c * x1 - sn * x2);
          yv[i2] = static_cast<T>(sn * x1 + c * x2);
        }
      }
    }
  return 0;
}

template <typename T>
int attentionT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Attention";
  const Tensor &Q = in[0], &K = in[1], &V = in[2];
  const bool four = Q.rank == 4;
  if ((Q.rank != 3 && Q.rank != 4) || K.rank != Q.rank || V.rank != Q.rank)
    return ctx.fail("%s: Q, K, V must all be 3-D or all 4-D", op);
  const int64_t B = Q.dims[0];
  const int64_t Hq = four ? Q.dims[1] : a.i("q_num_heads", 0);
  const int64_t Hkv = four ? K.dims[1] : a.i("kv_num_heads", 0);
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv != 0) return ctx.fail("%s: bad head counts", op);
  const int64_t Sq = four ? Q.dims[2] : Q.dims[1];
  const int64_t Skv = four ? K.dims[2] : K.dims[1];
  const int64_t Dh = four ? Q.dims[3] : Q.dims[2] / Hq;
  const int64_t Dv = four ? V.dims[3] : V.dims[2] / Hkv;
  const bool withPast = present(in, nin, 4) && present(in, nin, 5);
  const int64_t P = withPast ? in[4].dims[2] : 0;
  const int64_t L = P + Skv;
  const int64_t group = Hq / Hkv;
  const bool causal = a.i("is_causal", 0) != 0;
  const double scale = a.has("scale") ? a.f("scale", 1.f) : 1.0 / std::sqrt(static_cast<double>(Dh));
  const double softcap = a.f("softcap", 0.f);
  const int64_t mode = a.i("qk_matmul_output_mode", 0);
  const bool withMask = present(in, nin, 3);
  const Tensor* M = withMask ? &in[3] : nullptr;
  // Element offsets of the mask seen through a broadcast to [B, Hq, Sq, L].
  int64_t ms[4] = {0, 0, 0, 0};
  if (M) {
    const int64_t full[4] = {B, Hq, Sq, L};
    if (!attentionMaskStrides(*M, full, ms)) return ctx.fail("%s: attn_mask does not broadcast", op);
  }
  // Element (b, head, s, d) of a Q/K/V operand in its 3-D or 4-D layout.
  auto at = [four](const Tensor& t, int64_t H, int64_t D, int64_t b, int64_t h, int64_t s, int64_t d) {
    const int64_t S = four ? t.dims[2] : t.dims[1];
    return four ? static_cast<double>(t.as<T>()[((b * H + h) * S + s) * D + d])
                : static_cast<double>(t.as<T>()[(b * S + s) * H * D + h * D + d]);
  };
  auto keyAt = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < P ? static_cast<double>(in[4].as<T>()[((b * Hkv + h) * P + j) * Dh + d])
                 : at(K, Hkv, Dh, b, h, j - P, d);
  };
  auto valueAt = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < P ? static_cast<double>(in[5].as<T>()[((b * Hkv + h) * P + j) * Dv + d])
                 : at(V, Hkv, Dv, b, h, j - P, d);
  };
  const bool wantPk = nout > 1 && out[1].present();
  const bool wantPv = nout > 2 && out[2].present();
  const bool wantQk = nout > 3 && out[3].present();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t j = 0; j < L; ++j) {
        if (wantPk)
          for (int64_t d = 0; d < Dh; ++d)
            out[1].as<T>()[((b * Hkv + h) * L + j) * Dh + d] = static_cast<T>(keyAt(b, h, j, d));
        if (wantPv)
          for (int64_t d = 0; d < Dv; ++d)
            out[2].as<T>()[((b * Hkv + h) * L + j) * Dv + d] = static_cast<T>(valueAt(b, h, j, d));
      }
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> sc(static_cast<size_t>(L));
  T* y = out[0].as<T>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < Sq; ++i) {
        T* qkRow = wantQk ? out[3].as<T>() + ((b * Hq + h) * Sq + i) * L : nullptr;
        for (int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < Dh; ++d) dot += at(Q, Hq, Dh, b, h, i, d) * keyAt(b, kh, j, d);
          double s = dot * scale;
          if (qkRow && mode == 0) qkRow[j] = static_cast<T>(s);
          if (softcap > 0) s = softcap * std::tanh(s / softcap);
          if (qkRow && mode == 1) qkRow[j] = static_cast<T>(s);
          if (M) {
            const int64_t off = b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3];
            if (M->dtype == kBool) s += M->as<uint8_t>()[off] ? 0.0 : ninf;
            else s += static_cast<double>(M->as<T>()[off]);
          }
          if (causal && j > i + P) s = ninf;
          if (qkRow && mode == 2) qkRow[j] = static_cast<T>(s);
          sc[static_cast<size_t>(j)] = s;
        }
        double mx = ninf, sum = 0;
        for (double s : sc) mx = std::max(mx, s);
        for (double& s : sc) sum += (s = std::exp(s - mx));
        for (double& s : sc) s /= sum;
        if (qkRow && mode == 3)
          for (int64_t j = 0; j < L; ++j) qkRow[j] = static_cast<T>(sc[static_cast<size_t>(j)]);
        for (int64_t d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < L; ++j) acc += sc[static_cast<size_t>(j)] * valueAt(b, kh, j, d);
          const int64_t o = four ? ((b * Hq + h) * Sq + i) * Dv + d : (b * Sq + i) * Hq * Dv + h * Dv + d;
          y[o] = static_cast<T>(acc);
        }
      }
    }
  return 0;
}

}  // namespace

MG_NN_FLOAT_KERNEL(RMSNormalization, rmsNormT, 2)
MG_NN_FLOAT_KERNEL(RotaryEmbedding, rotaryT, 3)
MG_NN_FLOAT_KERNEL(Attention, attentionT, 3)

}  // namespace nn
}  // namespace mgrt
