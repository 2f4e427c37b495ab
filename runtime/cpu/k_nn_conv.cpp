// Reference kernels: Conv and ConvTranspose over any number of spatial dims, as plain loops that
// follow ONNX's definitions directly (the numeric oracle for the optimized kernels, not fast).
// Geometry (output sizes, auto_pad) comes from k_nn_shapes.h, the same code shape inference runs.
// Accumulation is in double so that the oracle's own rounding stays far below test tolerances.
#include <vector>

#include "k_nn_internal.h"

namespace mgrt {
namespace nn {
namespace {

template <typename T>
T epilogue(const Epilogue& e, double v) {
  if (e.act == Act::kNone) return static_cast<T>(v);
  return static_cast<T>(applyAct(e, static_cast<float>(v)));
}

// Kernel offsets, unravelled once: kc[kk * nsp + d].
std::vector<int64_t> kernelCoords(const std::vector<int64_t>& kernel) {
  int nsp = static_cast<int>(kernel.size());
  int64_t ks = product(kernel);
  std::vector<int64_t> kc(static_cast<size_t>(ks * nsp));
  for (int64_t kk = 0; kk < ks; ++kk) unravel(kk, kernel, &kc[kk * nsp]);
  return kc;
}

template <typename T>
int convT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Conv";
  const Tensor& X = in[0];
  const Tensor& W = in[1];
  if (X.rank < 3 || W.rank != X.rank)
    return ctx.fail("%s: input must be rank >= 3 and the weight of the same rank (got %d, %d)", op,
                    X.rank, W.rank);
  if (W.dtype != X.dtype) return ctx.fail("%s: weight and input element types differ", op);
  int64_t group = a.i("group", 1);
  int64_t N = X.dims[0], C = X.dims[1], M = W.dims[0], cg = W.dims[1];
  if (group <= 0 || C % group != 0 || M % group != 0 || cg * group != C)
    return ctx.fail("%s: weight has %lld input channels per group, input has %lld channels in "
                    "%lld groups",
                    op, static_cast<long long>(cg), static_cast<long long>(C),
                    static_cast<long long>(group));
  SpatialAttrs sa;
  if (spatialAttrsFrom(op, a, &sa, ctx)) return 1;
  std::vector<int64_t> kernel(W.dims + 2, W.dims + W.rank);
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return ctx.fail("%s: kernel_shape does not match the weight", op);
  SpatialGeometry g;
  std::string err = resolveConvGeometry(op, std::vector<int64_t>(X.dims + 2, X.dims + X.rank),
                                        kernel, sa, &g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  std::vector<int64_t> outDims = {N, M};
  outDims.insert(outDims.end(), g.out.begin(), g.out.end());
  if (checkDims(op, out[0], outDims, ctx)) return 1;
  const T* bias = nullptr;
  if (present(in, nin, 2)) {
    if (in[2].dtype != X.dtype || in[2].rank != 1 || in[2].dims[0] != M)
      return ctx.fail("%s: bias must be [%lld]", op, static_cast<long long>(M));
    bias = in[2].as<T>();
  }
  const T* resid = nullptr;
  if (present(in, nin, 3)) {
    if (in[3].dtype != X.dtype || checkDims(op, in[3], outDims, ctx))
      return ctx.fail("%s: residual must have the output's shape and type", op);
    resid = in[3].as<T>();
  }
  Epilogue ep = Epilogue::fromAttrs(a);
  const int nsp = g.nsp;
  const int64_t inSize = product(g.in), outSize = product(g.out), kSize = product(kernel);
  std::vector<int64_t> inStride(nsp);
  for (int64_t d = nsp - 1, s = 1; d >= 0; --d) {
    inStride[d] = s;
    s *= g.in[d];
  }
  std::vector<int64_t> kc = kernelCoords(kernel);
  const T* x = X.as<T>();
  const T* w = W.as<T>();
  T* y = out[0].as<T>();
  const int64_t mg = M / group;
  parallelFor(ctx.pool, N * M, 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> oc(nsp);
    for (int64_t nm = b; nm < e; ++nm) {
      int64_t n = nm / M, m = nm % M, gi = m / mg;
      const T* xg = x + (n * C + gi * cg) * inSize;
      const T* wm = w + m * cg * kSize;
      for (int64_t o = 0; o < outSize; ++o) {
        unravel(o, g.out, oc.data());
        double acc = bias ? static_cast<double>(bias[m]) : 0.0;
        for (int64_t kk = 0; kk < kSize; ++kk) {
          int64_t off = 0;
          bool inside = true;
          for (int d = 0; d < nsp && inside; ++d) {
            int64_t p = oc[d] * g.stride[d] - g.padBegin[d] + kc[kk * nsp + d] * g.dilation[d];
            inside = p >= 0 && p < g.in[d];
            off += p * inStride[d];
          }
          if (!inside) continue;
          for (int64_t c = 0; c < cg; ++c)
            acc += static_cast<double>(xg[c * inSize + off]) * static_cast<double>(wm[c * kSize + kk]);
        }
        int64_t yi = nm * outSize + o;
        if (resid) acc += static_cast<double>(resid[yi]);
        y[yi] = epilogue<T>(ep, acc);
      }
    }
  });
  return 0;
}

template <typename T>
int convTransposeT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "ConvTranspose";
  const Tensor& X = in[0];
  const Tensor& W = in[1];
  if (X.rank < 3 || W.rank != X.rank)
    return ctx.fail("%s: input must be rank >= 3 and the weight of the same rank (got %d, %d)", op,
                    X.rank, W.rank);
  if (W.dtype != X.dtype) return ctx.fail("%s: weight and input element types differ", op);
  int64_t group = a.i("group", 1);
  int64_t N = X.dims[0], C = X.dims[1];
  if (group <= 0 || W.dims[0] != C || C % group != 0)
    return ctx.fail("%s: weight has %lld input channels, input has %lld in %lld groups", op,
                    static_cast<long long>(W.dims[0]), static_cast<long long>(C),
                    static_cast<long long>(group));
  int64_t cg = C / group, mg = W.dims[1], M = mg * group;
  SpatialAttrs sa;
  if (spatialAttrsFrom(op, a, &sa, ctx)) return 1;
  std::vector<int64_t> kernel(W.dims + 2, W.dims + W.rank);
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return ctx.fail("%s: kernel_shape does not match the weight", op);
  SpatialGeometry g;
  std::string err = resolveConvTransposeGeometry(
      std::vector<int64_t>(X.dims + 2, X.dims + X.rank), kernel, sa, &g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  std::vector<int64_t> outDims = {N, M};
  outDims.insert(outDims.end(), g.out.begin(), g.out.end());
  if (checkDims(op, out[0], outDims, ctx)) return 1;
  const T* bias = nullptr;
  if (present(in, nin, 2)) {
    if (in[2].dtype != X.dtype || in[2].rank != 1 || in[2].dims[0] != M)
      return ctx.fail("%s: bias must be [%lld]", op, static_cast<long long>(M));
    bias = in[2].as<T>();
  }
  Epilogue ep = Epilogue::fromAttrs(a);
  const int nsp = g.nsp;
  const int64_t inSize = product(g.in), outSize = product(g.out), kSize = product(kernel);
  std::vector<int64_t> outStride(nsp);
  for (int64_t d = nsp - 1, s = 1; d >= 0; --d) {
    outStride[d] = s;
    s *= g.out[d];
  }
  std::vector<int64_t> kc = kernelCoords(kernel);
  const T* x = X.as<T>();
  const T* w = W.as<T>();
  T* y = out[0].as<T>();
  // Scatter form, one (n, output channel group) at a time so threads write disjoint outputs.
  parallelFor(ctx.pool, N * group, 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> ic(nsp);
    std::vector<double> acc(static_cast<size_t>(mg * outSize));
    for (int64_t ng = b; ng < e; ++ng) {
      int64_t n = ng / group, gi = ng % group;
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t o = 0; o < outSize; ++o)
          acc[m * outSize + o] = bias ? static_cast<double>(bias[gi * mg + m]) : 0.0;
      for (int64_t c = gi * cg; c < (gi + 1) * cg; ++c) {
        const T* xc = x + (n * C + c) * inSize;
        for (int64_t i = 0; i < inSize; ++i) {
          unravel(i, g.in, ic.data());
          double xv = static_cast<double>(xc[i]);
          for (int64_t kk = 0; kk < kSize; ++kk) {
            int64_t off = 0;
            bool inside = true;
            for (int d = 0; d < nsp && inside; ++d) {
              int64_t p = ic[d] * g.stride[d] - g.padBegin[d] + kc[kk * nsp + d] * g.dilation[d];
              inside = p >= 0 && p < g.out[d];
              off += p * outStride[d];
            }
            if (!inside) continue;
            for (int64_t m = 0; m < mg; ++m)
              acc[m * outSize + off] += xv * static_cast<double>(w[(c * mg + m) * kSize + kk]);
          }
        }
      }
      T* yg = y + (n * M + gi * mg) * outSize;
      for (int64_t j = 0; j < mg * outSize; ++j) yg[j] = epilogue<T>(ep, acc[j]);
    }
  });
  return 0;
}

}  // namespace

int kConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("Conv", nin, 2, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "Conv", ctx, [&](auto tag) {
    return convT<decltype(tag)>(a, in, nin, out, nout, ctx);
  });
}

int kConvTranspose(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("ConvTranspose", nin, 2, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "ConvTranspose", ctx, [&](auto tag) {
    return convTransposeT<decltype(tag)>(a, in, nin, out, nout, ctx);
  });
}

}  // namespace nn
}  // namespace mgrt
