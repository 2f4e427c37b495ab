// Reference kernels of the quantization family: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv, and the
// family's kernel table. Plain loops that follow the ONNX operator documents:
//   QuantizeLinear     y = saturate(round_half_even(x / scale) + zero_point)     (float32 math)
//   DequantizeLinear   y = (x - zero_point) * scale                              (float32 math)
//   DynamicQuantize    scale = (max(0, max x) - min(0, min x)) / 255 (1 when that is 0),
//                      zero_point = saturate(round_half_even(0 - min(0, min x) / scale)),
//                      then QuantizeLinear to uint8
//   *Integer           int32 sums of (a - a_zero_point) * (b - b_zero_point)
//   QLinear*           y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zp),
//                      acc the int32 sum (plus QLinearConv's int32 bias), the multiplier and
//                      the product in float32 as onnxruntime computes them.
// Rounding and saturation are runtime/common/mg_quant.h's. Every integer product is exact: the
// operands are 8-bit, sums are kept in int64 and wrapped to int32 as the ops' int32 results are.
// Scales and zero points are per tensor (one element) or vectors: per slice of `axis`
// (QuantizeLinear, DequantizeLinear), per row of A / column of B / row of y (the matrix
// products), per output channel (the convolutions' weights); shape inference checked which.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "k_nn_internal.h"
#include "mg_quant.h"

namespace mgrt {
namespace quant {
namespace {

using nn::checkArity;
using nn::checkDims;
using nn::dimsOf;
using nn::present;
using nn::product;
using nn::unravel;

bool isQuant(int32_t t) { return t == kU8 || t == kI8; }

int32_t lowOf(int32_t t) { return t == kI8 ? -128 : 0; }
int32_t highOf(int32_t t) { return t == kI8 ? 127 : 255; }

// Element i of an integer tensor (uint8, int8, int32) as int32.
int32_t intAt(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case kU8: return t.as<uint8_t>()[i];
    case kI8: return t.as<int8_t>()[i];
    default: return t.as<int32_t>()[i];
  }
}

void storeQuant(Tensor& t, int64_t i, int32_t v) {
  if (t.dtype == kI8) t.as<int8_t>()[i] = static_cast<int8_t>(v);
  else t.as<uint8_t>()[i] = static_cast<uint8_t>(v);
}

// A scale or zero point: per tensor (one element) or a vector indexed by the caller's index.
struct Param {
  const Tensor* t = nullptr;  // null: absent (zero point 0)
  bool perTensor = true;
  int64_t n = 1;
  float scale(int64_t i) const { return t->as<float>()[perTensor ? 0 : i]; }
  int32_t zero(int64_t i) const { return t ? intAt(*t, perTensor ? 0 : i) : 0; }
};

// Operand `i` as a parameter that is per tensor or has `len` elements (len 0: per tensor only).
int paramOf(const char* op, const char* what, const Tensor* in, int nin, int i, int64_t len,
            Param* p, Ctx& ctx) {
  *p = Param{};
  if (!present(in, nin, i)) return 0;
  const Tensor& t = in[i];
  p->t = &t;
  p->n = t.numel();
  if (p->n == 1 && t.rank <= 1) return 0;
  if (len > 0 && t.rank == 1 && p->n == len) {
    p->perTensor = false;
    return 0;
  }
  return ctx.fail("%s: %s must have one element or %lld, got %lld", op, what,
                  static_cast<long long>(len), static_cast<long long>(p->n));
}

// x viewed as [outer, len, inner] around `axis` (QuantizeLinear / DequantizeLinear's per-axis).
struct AxisView {
  int64_t len = 1, inner = 1;
  int64_t channel(int64_t flat) const { return (flat / inner) % len; }
};

int axisView(const char* op, const Attrs& a, const Tensor& x, const Tensor& scale, AxisView* v,
             Ctx& ctx) {
  if (a.i("block_size", 0) != 0)
    return ctx.fail("%s: block quantization (block_size) is not supported", op);
  *v = AxisView{};
  if (scale.numel() == 1 && scale.rank <= 1) return 0;
  int64_t axis = a.i("axis", 1);
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= x.rank) return ctx.fail("%s: axis out of range for rank %d", op, x.rank);
  v->len = x.dims[axis];
  for (int d = static_cast<int>(axis) + 1; d < x.rank; ++d) v->inner *= x.dims[d];
  return 0;
}

int kQuantizeLinear(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "QuantizeLinear";
  if (checkArity(op, nin, 2, in, nout, 1, ctx)) return 1;
  const Tensor& x = in[0];
  Tensor& y = out[0];
  if ((x.dtype != kF32 && x.dtype != kI32) || in[1].dtype != kF32 || !isQuant(y.dtype))
    return ctx.fail("%s: expects f32 or i32 x, f32 scale and a uint8 or int8 result", op);
  AxisView v;
  if (axisView(op, a, x, in[1], &v, ctx)) return 1;
  Param scale, zp;
  if (paramOf(op, "y_scale", in, nin, 1, v.len, &scale, ctx) ||
      paramOf(op, "y_zero_point", in, nin, 2, v.len, &zp, ctx))
    return 1;
  const int32_t lo = lowOf(y.dtype), hi = highOf(y.dtype);
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = v.channel(i);
    float xv = x.dtype == kF32 ? x.as<float>()[i] : static_cast<float>(x.as<int32_t>()[i]);
    storeQuant(y, i, quantize(xv, scale.scale(c), zp.zero(c), lo, hi));
  }
  return 0;
}

int kDequantizeLinear(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "DequantizeLinear";
  if (checkArity(op, nin, 2, in, nout, 1, ctx)) return 1;
  const Tensor& x = in[0];
  if ((!isQuant(x.dtype) && x.dtype != kI32) || in[1].dtype != kF32 || out[0].dtype != kF32)
    return ctx.fail("%s: expects uint8, int8 or int32 x, f32 scale and an f32 result", op);
  AxisView v;
  if (axisView(op, a, x, in[1], &v, ctx)) return 1;
  Param scale, zp;
  if (paramOf(op, "x_scale", in, nin, 1, v.len, &scale, ctx) ||
      paramOf(op, "x_zero_point", in, nin, 2, v.len, &zp, ctx))
    return 1;
  float* y = out[0].as<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = v.channel(i);
    y[i] = dequantize(intAt(x, i), zp.zero(c), scale.scale(c));
  }
  return 0;
}

int kDynamicQuantizeLinear(const Attrs&, const Tensor* in, int nin, Tensor* out, int nout,
                           Ctx& ctx) {
  const char* op = "DynamicQuantizeLinear";
  if (checkArity(op, nin, 1, in, nout, 1, ctx)) return 1;
  const Tensor& x = in[0];
  if (x.dtype != kF32 || out[0].dtype != kU8)
    return ctx.fail("%s: expects an f32 x and a uint8 result", op);
  const float* xp = x.as<float>();
  const int64_t n = x.numel();
  float lo = 0.f, hi = 0.f;  // the range always holds 0
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(xp[i])) return ctx.fail("%s: x holds NaN; its range is undefined", op);
    lo = std::min(lo, xp[i]);
    hi = std::max(hi, xp[i]);
  }
  const float qmin = 0.f, qmax = 255.f;
  float scale = (hi - lo) / (qmax - qmin);
  if (scale == 0.f) scale = 1.f;  // x all zeros: any scale represents it; onnxruntime takes 1
  float zpf = std::min(qmax, std::max(qmin, qmin - lo / scale));
  int32_t zp = static_cast<int32_t>(roundHalfEven(zpf));
  for (int64_t i = 0; i < n; ++i) storeQuant(out[0], i, quantize(xp[i], scale, zp, 0, 255));
  if (nout > 1 && out[1].present()) out[1].as<float>()[0] = scale;
  if (nout > 2 && out[2].present()) out[2].as<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return 0;
}

// ---- integer matrix product -------------------------------------------------------------------

// numpy matmul geometry of A [.., M, K] and B [.., K, N] (1-D operands promoted), batch dims
// broadcast; offA/offB give each batch's first element.
struct MatMulGeom {
  int64_t M = 1, K = 1, N = 1, batches = 1;
  std::vector<int64_t> outDims, offA, offB;
};

int matMulGeom(const char* op, const Tensor& A, const Tensor& B, MatMulGeom* g, Ctx& ctx) {
  if (A.rank < 1 || B.rank < 1) return ctx.fail("%s: operands must have rank >= 1", op);
  std::vector<int64_t> ad = dimsOf(A), bd = dimsOf(B);
  bool va = ad.size() == 1, vb = bd.size() == 1;
  if (va) ad.insert(ad.begin(), 1);
  if (vb) bd.push_back(1);
  g->M = ad[ad.size() - 2];
  g->K = ad.back();
  g->N = bd.back();
  if (bd[bd.size() - 2] != g->K) return ctx.fail("%s: inner dimensions differ", op);
  size_t ra = ad.size() - 2, rb = bd.size() - 2, r = std::max(ra, rb);
  std::vector<int64_t> batch(r), sa(r, 0), sb(r, 0);
  for (int64_t i = static_cast<int64_t>(r) - 1, stA = g->M * g->K, stB = g->K * g->N; i >= 0; --i) {
    int64_t da = i >= int64_t(r - ra) ? ad[i - (r - ra)] : 1;
    int64_t db = i >= int64_t(r - rb) ? bd[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1) return ctx.fail("%s: batch dimensions do not broadcast", op);
    batch[i] = (da == 0 || db == 0) ? 0 : std::max(da, db);
    sa[i] = da == 1 ? 0 : stA;
    sb[i] = db == 1 ? 0 : stB;
    stA *= da;
    stB *= db;
  }
  g->outDims = batch;
  if (!va) g->outDims.push_back(g->M);
  if (!vb) g->outDims.push_back(g->N);
  g->batches = product(batch);
  std::vector<int64_t> coord(r);
  for (int64_t b = 0; b < g->batches; ++b) {
    unravel(b, batch, coord.data());
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < r; ++d) {
      oa += coord[d] * sa[d];
      ob += coord[d] * sb[d];
    }
    g->offA.push_back(oa);
    g->offB.push_back(ob);
  }
  return 0;
}

// The int32 sums [batches, M, N] of (A - a_zp[row]) * (B - b_zp[col]).
std::vector<int32_t> intMatMul(const MatMulGeom& g, const Tensor& A, const Param& azp,
                               const Tensor& B, const Param& bzp) {
  std::vector<int32_t> acc(static_cast<size_t>(g.batches * g.M * g.N));
  for (int64_t b = 0; b < g.batches; ++b)
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t j = 0; j < g.N; ++j) {
        int64_t s = 0;
        for (int64_t k = 0; k < g.K; ++k) {
          int64_t av = intAt(A, g.offA[b] + i * g.K + k) - azp.zero(i);
          int64_t bv = intAt(B, g.offB[b] + k * g.N + j) - bzp.zero(j);
          s += av * bv;
        }
        acc[(b * g.M + i) * g.N + j] = static_cast<int32_t>(static_cast<uint32_t>(s));
      }
  return acc;
}

int kMatMulInteger(const Attrs&, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "MatMulInteger";
  if (checkArity(op, nin, 2, in, nout, 1, ctx)) return 1;
  if (!isQuant(in[0].dtype) || !isQuant(in[1].dtype) || out[0].dtype != kI32)
    return ctx.fail("%s: expects uint8 or int8 operands and an int32 result", op);
  MatMulGeom g;
  if (matMulGeom(op, in[0], in[1], &g, ctx) || checkDims(op, out[0], g.outDims, ctx)) return 1;
  Param azp, bzp;
  if (paramOf(op, "a_zero_point", in, nin, 2, g.M, &azp, ctx) ||
      paramOf(op, "b_zero_point", in, nin, 3, g.N, &bzp, ctx))
    return 1;
  std::vector<int32_t> acc = intMatMul(g, in[0], azp, in[1], bzp);
  std::copy(acc.begin(), acc.end(), out[0].as<int32_t>());
  return 0;
}

int kQLinearMatMul(const Attrs&, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "QLinearMatMul";
  if (checkArity(op, nin, 8, in, nout, 1, ctx)) return 1;
  if (!isQuant(in[0].dtype) || !isQuant(in[3].dtype) || !isQuant(out[0].dtype) ||
      in[1].dtype != kF32 || in[4].dtype != kF32 || in[6].dtype != kF32)
    return ctx.fail("%s: expects uint8 or int8 a, b and y and f32 scales", op);
  MatMulGeom g;
  if (matMulGeom(op, in[0], in[3], &g, ctx) || checkDims(op, out[0], g.outDims, ctx)) return 1;
  Param as, azp, bs, bzp, ys, yzp;
  if (paramOf(op, "a_scale", in, nin, 1, g.M, &as, ctx) ||
      paramOf(op, "a_zero_point", in, nin, 2, g.M, &azp, ctx) ||
      paramOf(op, "b_scale", in, nin, 4, g.N, &bs, ctx) ||
      paramOf(op, "b_zero_point", in, nin, 5, g.N, &bzp, ctx) ||
      paramOf(op, "y_scale", in, nin, 6, g.M, &ys, ctx) ||
      paramOf(op, "y_zero_point", in, nin, 7, g.M, &yzp, ctx))
    return 1;
  std::vector<int32_t> acc = intMatMul(g, in[0], azp, in[3], bzp);
  const int32_t lo = lowOf(out[0].dtype), hi = highOf(out[0].dtype);
  for (int64_t b = 0; b < g.batches; ++b)
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t j = 0; j < g.N; ++j) {
        const int64_t o = (b * g.M + i) * g.N + j;
        const float mult = as.scale(i) * bs.scale(j) / ys.scale(i);
        storeQuant(out[0], o,
                   saturateAdd(roundHalfEven(static_cast<float>(acc[o]) * mult), yzp.zero(i), lo,
                               hi));
      }
  return 0;
}

// ---- integer convolution ----------------------------------------------------------------------

struct ConvGeom {
  SpatialGeometry s;
  int64_t N = 0, C = 0, M = 0, cg = 0, group = 1;
  std::vector<int64_t> outDims;
};

int convGeom(const char* op, const Attrs& a, const Tensor& X, const Tensor& W, ConvGeom* g,
             Ctx& ctx) {
  if (X.rank < 3 || W.rank != X.rank)
    return ctx.fail("%s: input must be rank >= 3 and the weight of the same rank", op);
  g->group = a.i("group", 1);
  g->N = X.dims[0];
  g->C = X.dims[1];
  g->M = W.dims[0];
  g->cg = W.dims[1];
  if (g->group <= 0 || g->C % g->group != 0 || g->M % g->group != 0 || g->cg * g->group != g->C)
    return ctx.fail("%s: weight does not fit the input's channels in %lld groups", op,
                    static_cast<long long>(g->group));
  SpatialAttrs sa;
  if (nn::spatialAttrsFrom(op, a, &sa, ctx)) return 1;
  std::vector<int64_t> kernel(W.dims + 2, W.dims + W.rank);
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return ctx.fail("%s: kernel_shape does not match the weight", op);
  std::string err = resolveConvGeometry(op, std::vector<int64_t>(X.dims + 2, X.dims + X.rank),
                                        kernel, sa, &g->s);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  g->outDims = {g->N, g->M};
  g->outDims.insert(g->outDims.end(), g->s.out.begin(), g->s.out.end());
  return 0;
}

// The int32 sums [N, M, out...] of (x - x_zp) * (w - w_zp[m]); padding reads x_zp (adds 0).
std::vector<int32_t> intConv(const ConvGeom& g, const Tensor& X, const Param& xzp, const Tensor& W,
                             const Param& wzp) {
  const SpatialGeometry& s = g.s;
  const int nsp = s.nsp;
  const int64_t inSize = product(s.in), outSize = product(s.out), kSize = product(s.kernel);
  std::vector<int64_t> inStride(nsp), oc(nsp), kc(nsp);
  for (int64_t d = nsp - 1, st = 1; d >= 0; --d) {
    inStride[d] = st;
    st *= s.in[d];
  }
  std::vector<int32_t> acc(static_cast<size_t>(g.N * g.M * outSize));
  const int64_t mg = g.M / g.group;
  for (int64_t nm = 0; nm < g.N * g.M; ++nm) {
    const int64_t n = nm / g.M, m = nm % g.M, gi = m / mg;
    const int64_t xBase = (n * g.C + gi * g.cg) * inSize, wBase = m * g.cg * kSize;
    for (int64_t o = 0; o < outSize; ++o) {
      unravel(o, s.out, oc.data());
      int64_t sum = 0;
      for (int64_t kk = 0; kk < kSize; ++kk) {
        unravel(kk, s.kernel, kc.data());
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < nsp && inside; ++d) {
          int64_t p = oc[d] * s.stride[d] - s.padBegin[d] + kc[d] * s.dilation[d];
          inside = p >= 0 && p < s.in[d];
          off += p * inStride[d];
        }
        if (!inside) continue;
        for (int64_t c = 0; c < g.cg; ++c) {
          int64_t xv = intAt(X, xBase + c * inSize + off) - xzp.zero(0);
          int64_t wv = intAt(W, wBase + c * kSize + kk) - wzp.zero(m);
          sum += xv * wv;
        }
      }
      acc[nm * outSize + o] = static_cast<int32_t>(static_cast<uint32_t>(sum));
    }
  }
  return acc;
}

int kConvInteger(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "ConvInteger";
  if (checkArity(op, nin, 2, in, nout, 1, ctx)) return 1;
  if (!isQuant(in[0].dtype) || !isQuant(in[1].dtype) || out[0].dtype != kI32)
    return ctx.fail("%s: expects uint8 or int8 x and w and an int32 result", op);
  ConvGeom g;
  if (convGeom(op, a, in[0], in[1], &g, ctx) || checkDims(op, out[0], g.outDims, ctx)) return 1;
  Param xzp, wzp;
  if (paramOf(op, "x_zero_point", in, nin, 2, 0, &xzp, ctx) ||
      paramOf(op, "w_zero_point", in, nin, 3, g.M, &wzp, ctx))
    return 1;
  std::vector<int32_t> acc = intConv(g, in[0], xzp, in[1], wzp);
  std::copy(acc.begin(), acc.end(), out[0].as<int32_t>());
  return 0;
}

int kQLinearConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "QLinearConv";
  if (checkArity(op, nin, 8, in, nout, 1, ctx)) return 1;
  if (!isQuant(in[0].dtype) || !isQuant(in[3].dtype) || !isQuant(out[0].dtype) ||
      in[1].dtype != kF32 || in[4].dtype != kF32 || in[6].dtype != kF32)
    return ctx.fail("%s: expects uint8 or int8 x, w and y and f32 scales", op);
  ConvGeom g;
  if (convGeom(op, a, in[0], in[3], &g, ctx) || checkDims(op, out[0], g.outDims, ctx)) return 1;
  Param xs, xzp, ws, wzp, ys, yzp;
  if (paramOf(op, "x_scale", in, nin, 1, 0, &xs, ctx) ||
      paramOf(op, "x_zero_point", in, nin, 2, 0, &xzp, ctx) ||
      paramOf(op, "w_scale", in, nin, 4, g.M, &ws, ctx) ||
      paramOf(op, "w_zero_point", in, nin, 5, g.M, &wzp, ctx) ||
      paramOf(op, "y_scale", in, nin, 6, 0, &ys, ctx) ||
      paramOf(op, "y_zero_point", in, nin, 7, 0, &yzp, ctx))
    return 1;
  const int32_t* bias = nullptr;
  if (present(in, nin, 8)) {
    if (in[8].dtype != kI32 || in[8].numel() != g.M)
      return ctx.fail("%s: B must be int32 with one element per output channel", op);
    bias = in[8].as<int32_t>();
  }
  std::vector<int32_t> acc = intConv(g, in[0], xzp, in[3], wzp);
  const int32_t lo = lowOf(out[0].dtype), hi = highOf(out[0].dtype);
  const int64_t outSize = product(g.s.out);
  for (int64_t nm = 0; nm < g.N * g.M; ++nm) {
    const int64_t m = nm % g.M;
    const float mult = xs.scale(0) * ws.scale(m) / ys.scale(0);
    for (int64_t o = 0; o < outSize; ++o) {
      const int64_t i = nm * outSize + o;
      int32_t v = static_cast<int32_t>(
          static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(bias ? bias[m] : 0));
      storeQuant(out[0], i,
                 saturateAdd(roundHalfEven(static_cast<float>(v) * mult), yzp.zero(0), lo, hi));
    }
  }
  return 0;
}

// MgQuantizedAdd: quantize(dequantize(a) + dequantize(b)) element by element, per tensor, with
// the formulas of the three ops (pass fuse-qdq fuses them; the same float32 operations).
int kMgQuantizedAdd(const Attrs&, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "MgQuantizedAdd";
  if (checkArity(op, nin, 8, in, nout, 1, ctx)) return 1;
  if (!isQuant(in[0].dtype) || !isQuant(in[3].dtype) || !isQuant(out[0].dtype) || in[0].numel() != in[3].numel() ||
      in[0].numel() != out[0].numel())
    return ctx.fail("%s: expects uint8 or int8 a, b and y of one size", op);
  Param as, az, bs, bz, ys, yz;
  if (paramOf(op, "a_scale", in, nin, 1, 0, &as, ctx) || paramOf(op, "a_zero_point", in, nin, 2, 0, &az, ctx) ||
      paramOf(op, "b_scale", in, nin, 4, 0, &bs, ctx) || paramOf(op, "b_zero_point", in, nin, 5, 0, &bz, ctx) ||
      paramOf(op, "y_scale", in, nin, 6, 0, &ys, ctx) || paramOf(op, "y_zero_point", in, nin, 7, 0, &yz, ctx))
    return 1;
  const int32_t lo = lowOf(out[0].dtype), hi = highOf(out[0].dtype);
  for (int64_t i = 0, n = in[0].numel(); i < n; ++i) {
    const float v = dequantize(intAt(in[0], i), az.zero(0), as.scale(0)) + dequantize(intAt(in[3], i), bz.zero(0), bs.scale(0));
    storeQuant(out[0], i, quantize(v, ys.scale(0), yz.zero(0), lo, hi));
  }
  return 0;
}

}  // namespace
}  // namespace quant

const KernelEntry* quantizeKernels() {
  static const KernelEntry kTable[] = {
      {"QuantizeLinear", quant::kQuantizeLinear},
      {"DequantizeLinear", quant::kDequantizeLinear},
      {"DynamicQuantizeLinear", quant::kDynamicQuantizeLinear},
      {"MatMulInteger", quant::kMatMulInteger},
      {"QLinearMatMul", quant::kQLinearMatMul},
      {"ConvInteger", quant::kConvInteger},
      {"QLinearConv", quant::kQLinearConv},
      {"MgQuantizedAdd", quant::kMgQuantizedAdd},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
