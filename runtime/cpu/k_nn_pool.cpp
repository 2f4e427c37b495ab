// Reference kernels: pools (MaxPool with Indices, AveragePool, LpPool, Global*, MaxRoiPool) as
// plain loops over windows. Window geometry is k_nn_shapes.h's, shared with shape inference.
// Conventions follow onnxruntime where ONNX leaves them open:
//   - MaxPool ignores padded positions; ties keep the first maximum; Indices are flattened over the
//     whole input, (n * C + c) * spatial_size + the spatial offset (row-major, or column-major over
//     the spatial dims when storage_order = 1).
//   - AveragePool divides by the in-input positions, or with count_include_pad by the positions
//     inside the padded input (so ceil_mode windows running past the end padding are cut there).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "k_nn_internal.h"

namespace mgrt {
namespace nn {
namespace {

// What a windowed pool needs after validation.
struct PoolSetup {
  SpatialGeometry g;
  int64_t NC = 0, inSize = 0, outSize = 0, kSize = 0;
  std::vector<int64_t> kc;        // unravelled kernel offsets, kk * nsp + d
  std::vector<int64_t> inStride;  // row-major strides of the spatial input
};

int setupPool(const char* op, const Attrs& a, const Tensor& X, const Tensor& Y, PoolSetup* s,
              Ctx& ctx) {
  if (X.rank < 3) return ctx.fail("%s: input must be rank >= 3, got %d", op, X.rank);
  SpatialAttrs sa;
  if (spatialAttrsFrom(op, a, &sa, ctx)) return 1;
  if (sa.kernelShape.empty()) return ctx.fail("%s: kernel_shape is required", op);
  std::string err = resolveConvGeometry(op, std::vector<int64_t>(X.dims + 2, X.dims + X.rank),
                                        sa.kernelShape, sa, &s->g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  std::vector<int64_t> outDims = {X.dims[0], X.dims[1]};
  outDims.insert(outDims.end(), s->g.out.begin(), s->g.out.end());
  if (checkDims(op, Y, outDims, ctx)) return 1;
  int nsp = s->g.nsp;
  s->NC = X.dims[0] * X.dims[1];
  s->inSize = product(s->g.in);
  s->outSize = product(s->g.out);
  s->kSize = product(s->g.kernel);
  s->kc.resize(static_cast<size_t>(s->kSize * nsp));
  for (int64_t kk = 0; kk < s->kSize; ++kk) unravel(kk, s->g.kernel, &s->kc[kk * nsp]);
  s->inStride.resize(nsp);
  for (int64_t d = nsp - 1, st = 1; d >= 0; --d) {
    s->inStride[d] = st;
    st *= s->g.in[d];
  }
  return 0;
}

// Calls visit(offset, inInput, inPadded, coord) for every kernel tap of output position oc.
template <typename Fn>
void forWindow(const PoolSetup& s, const int64_t* oc, std::vector<int64_t>& pos, Fn&& visit) {
  const SpatialGeometry& g = s.g;
  int nsp = g.nsp;
  for (int64_t kk = 0; kk < s.kSize; ++kk) {
    int64_t off = 0;
    bool inInput = true, inPadded = true;
    for (int d = 0; d < nsp; ++d) {
      int64_t p = oc[d] * g.stride[d] - g.padBegin[d] + s.kc[kk * nsp + d] * g.dilation[d];
      pos[d] = p;
      if (p < 0 || p >= g.in[d]) inInput = false;
      if (p < -g.padBegin[d] || p >= g.in[d] + g.padEnd[d]) inPadded = false;
      off += p * s.inStride[d];
    }
    visit(off, inInput, inPadded);
  }
}

template <typename T>
int maxPoolT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  PoolSetup s;
  if (setupPool("MaxPool", a, in[0], out[0], &s, ctx)) return 1;
  int64_t* idx = nullptr;
  if (nout > 1 && out[1].present()) {
    if (out[1].dtype != kI64) return ctx.fail("MaxPool: Indices must be int64");
    if (checkDims("MaxPool", out[1], dimsOf(out[0]), ctx)) return 1;
    idx = out[1].as<int64_t>();
  }
  bool colMajor = a.i("storage_order", 0) == 1;
  const T* x = in[0].as<T>();
  T* y = out[0].as<T>();
  const int nsp = s.g.nsp;
  parallelFor(ctx.pool, s.NC, 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> oc(nsp), pos(nsp);
    for (int64_t nc = b; nc < e; ++nc) {
      const T* xc = x + nc * s.inSize;
      for (int64_t o = 0; o < s.outSize; ++o) {
        unravel(o, s.g.out, oc.data());
        T best = std::numeric_limits<T>::lowest();
        int64_t bestOff = -1;
        std::vector<int64_t> bestPos(nsp, 0);
        forWindow(s, oc.data(), pos, [&](int64_t off, bool inInput, bool) {
          if (!inInput) return;
          if (bestOff < 0 || xc[off] > best) {
            best = xc[off];
            bestOff = off;
            bestPos = pos;
          }
        });
        y[nc * s.outSize + o] = best;
        if (idx) {
          int64_t sp = bestOff;
          if (colMajor && bestOff >= 0) {
            sp = 0;
            for (int d = nsp - 1; d >= 0; --d) sp = sp * s.g.in[d] + bestPos[d];
          }
          idx[nc * s.outSize + o] = bestOff < 0 ? -1 : nc * s.inSize + sp;
        }
      }
    }
  });
  return 0;
}

// Average (p == 0) and Lp (p > 0) pools.
template <typename T>
int avgLpPoolT(const char* op, int64_t p, const Attrs& a, const Tensor* in, Tensor* out,
               Ctx& ctx) {
  PoolSetup s;
  if (setupPool(op, a, in[0], out[0], &s, ctx)) return 1;
  bool includePad = a.i("count_include_pad", 0) != 0;
  const T* x = in[0].as<T>();
  T* y = out[0].as<T>();
  const int nsp = s.g.nsp;
  parallelFor(ctx.pool, s.NC, 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> oc(nsp), pos(nsp);
    for (int64_t nc = b; nc < e; ++nc) {
      const T* xc = x + nc * s.inSize;
      for (int64_t o = 0; o < s.outSize; ++o) {
        unravel(o, s.g.out, oc.data());
        double sum = 0;
        int64_t cnt = 0, cntPad = 0;
        forWindow(s, oc.data(), pos, [&](int64_t off, bool inInput, bool inPadded) {
          if (inPadded) ++cntPad;
          if (!inInput) return;
          ++cnt;
          double v = static_cast<double>(xc[off]);
          sum += p == 0 ? v : std::pow(std::fabs(v), static_cast<double>(p));
        });
        double r;
        if (p == 0) {
          int64_t div = includePad ? cntPad : cnt;
          r = div > 0 ? sum / static_cast<double>(div) : 0.0;
        } else {
          r = std::pow(sum, 1.0 / static_cast<double>(p));
        }
        y[nc * s.outSize + o] = static_cast<T>(r);
      }
    }
  });
  return 0;
}

enum class Global { kAvg, kMax, kLp };

template <typename T>
int globalPoolT(const char* op, Global kind, int64_t p, const Tensor* in, Tensor* out, Ctx& ctx) {
  const Tensor& X = in[0];
  if (X.rank < 3) return ctx.fail("%s: input must be rank >= 3, got %d", op, X.rank);
  std::vector<int64_t> outDims = dimsOf(X);
  for (size_t i = 2; i < outDims.size(); ++i) outDims[i] = 1;
  if (checkDims(op, out[0], outDims, ctx)) return 1;
  int64_t NC = X.dims[0] * X.dims[1], S = product(dimsOf(X), 2);
  const T* x = X.as<T>();
  T* y = out[0].as<T>();
  for (int64_t nc = 0; nc < NC; ++nc) {
    const T* xc = x + nc * S;
    double acc = kind == Global::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < S; ++i) {
      double v = static_cast<double>(xc[i]);
      if (kind == Global::kMax) acc = v > acc ? v : acc;
      else if (kind == Global::kAvg) acc += v;
      else acc += std::pow(std::fabs(v), static_cast<double>(p));
    }
    if (kind == Global::kAvg) acc = S > 0 ? acc / static_cast<double>(S) : 0.0;
    if (kind == Global::kLp) acc = std::pow(acc, 1.0 / static_cast<double>(p));
    y[nc] = static_cast<T>(acc);
  }
  return 0;
}

template <typename T>
int maxRoiPoolT(const Attrs& a, const Tensor* in, Tensor* out, Ctx& ctx) {
  const char* op = "MaxRoiPool";
  const Tensor& X = in[0];
  const Tensor& R = in[1];
  std::vector<int64_t> ps = a.ints("pooled_shape");
  if (X.rank != 4 || R.rank != 2 || R.dims[1] != 5 || R.dtype != X.dtype || ps.size() != 2 ||
      ps[0] <= 0 || ps[1] <= 0)
    return ctx.fail("%s: expects X [N,C,H,W], rois [R,5] and two pooled sizes", op);
  int64_t N = X.dims[0], C = X.dims[1], H = X.dims[2], W = X.dims[3], nr = R.dims[0];
  if (checkDims(op, out[0], {nr, C, ps[0], ps[1]}, ctx)) return 1;
  double scale = a.f("spatial_scale", 1.f);
  const T* x = X.as<T>();
  const T* rois = R.as<T>();
  T* y = out[0].as<T>();
  for (int64_t r = 0; r < nr; ++r) {
    const T* roi = rois + r * 5;
    double bd = static_cast<double>(roi[0]);
    if (!(bd >= 0 && bd < static_cast<double>(N)))
      return ctx.fail("%s: roi %lld has batch index %g outside [0, %lld)", op,
                      static_cast<long long>(r), bd, static_cast<long long>(N));
    int64_t bi = static_cast<int64_t>(bd);
    for (int k = 1; k < 5; ++k) {
      double v = static_cast<double>(roi[k]) * scale;
      if (!(std::fabs(v) < 1e15))
        return ctx.fail("%s: roi %lld has a non-finite or huge coordinate", op,
                        static_cast<long long>(r));
    }
    int64_t x1 = static_cast<int64_t>(std::round(static_cast<double>(roi[1]) * scale));
    int64_t y1 = static_cast<int64_t>(std::round(static_cast<double>(roi[2]) * scale));
    int64_t x2 = static_cast<int64_t>(std::round(static_cast<double>(roi[3]) * scale));
    int64_t y2 = static_cast<int64_t>(std::round(static_cast<double>(roi[4]) * scale));
    double rh = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1));
    double rw = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1));
    double bh = rh / static_cast<double>(ps[0]), bw = rw / static_cast<double>(ps[1]);
    for (int64_t c = 0; c < C; ++c) {
      const T* xc = x + (bi * C + c) * H * W;
      for (int64_t ph = 0; ph < ps[0]; ++ph)
        for (int64_t pw = 0; pw < ps[1]; ++pw) {
          int64_t hs = std::min(std::max<int64_t>(static_cast<int64_t>(std::floor(ph * bh)) + y1, 0), H);
          int64_t he = std::min(std::max<int64_t>(static_cast<int64_t>(std::ceil((ph + 1) * bh)) + y1, 0), H);
          int64_t ws = std::min(std::max<int64_t>(static_cast<int64_t>(std::floor(pw * bw)) + x1, 0), W);
          int64_t we = std::min(std::max<int64_t>(static_cast<int64_t>(std::ceil((pw + 1) * bw)) + x1, 0), W);
          bool empty = he <= hs || we <= ws;
          T best = empty ? T(0) : std::numeric_limits<T>::lowest();
          for (int64_t h = hs; h < he; ++h)
            for (int64_t w = ws; w < we; ++w) best = xc[h * W + w] > best ? xc[h * W + w] : best;
          y[((r * C + c) * ps[0] + ph) * ps[1] + pw] = best;
        }
    }
  }
  return 0;
}

}  // namespace

int kMaxPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("MaxPool", nin, 1, in, nout, 1, ctx)) return 1;
  switch (in[0].dtype) {
    case kF32: return maxPoolT<float>(a, in, nin, out, nout, ctx);
    case kF64: return maxPoolT<double>(a, in, nin, out, nout, ctx);
    case kU8: return maxPoolT<uint8_t>(a, in, nin, out, nout, ctx);
    case kI8: return maxPoolT<int8_t>(a, in, nin, out, nout, ctx);
    default: return ctx.fail("MaxPool: unsupported element type %d", static_cast<int>(in[0].dtype));
  }
}

int kAveragePool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("AveragePool", nin, 1, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "AveragePool", ctx, [&](auto tag) {
    return avgLpPoolT<decltype(tag)>("AveragePool", 0, a, in, out, ctx);
  });
}

int kLpPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("LpPool", nin, 1, in, nout, 1, ctx)) return 1;
  int64_t p = a.i("p", 2);
  if (p <= 0) return ctx.fail("LpPool: p must be positive");
  return byFloatType(in[0].dtype, "LpPool", ctx, [&](auto tag) {
    return avgLpPoolT<decltype(tag)>("LpPool", p, a, in, out, ctx);
  });
}

int kGlobalAveragePool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("GlobalAveragePool", nin, 1, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "GlobalAveragePool", ctx, [&](auto tag) {
    return globalPoolT<decltype(tag)>("GlobalAveragePool", Global::kAvg, 0, in, out, ctx);
  });
}

int kGlobalMaxPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("GlobalMaxPool", nin, 1, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "GlobalMaxPool", ctx, [&](auto tag) {
    return globalPoolT<decltype(tag)>("GlobalMaxPool", Global::kMax, 0, in, out, ctx);
  });
}

int kGlobalLpPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("GlobalLpPool", nin, 1, in, nout, 1, ctx)) return 1;
  int64_t p = a.i("p", 2);
  if (p <= 0) return ctx.fail("GlobalLpPool: p must be positive");
  return byFloatType(in[0].dtype, "GlobalLpPool", ctx, [&](auto tag) {
    return globalPoolT<decltype(tag)>("GlobalLpPool", Global::kLp, p, in, out, ctx);
  });
}

int kMaxRoiPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("MaxRoiPool", nin, 2, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "MaxRoiPool", ctx, [&](auto tag) {
    return maxRoiPoolT<decltype(tag)>(a, in, out, ctx);
  });
}

}  // namespace nn
}  // namespace mgrt
