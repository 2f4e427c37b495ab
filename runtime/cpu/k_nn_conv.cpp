// Reference kernels: Conv and ConvTranspose over any number of spatial dims, Col2Im (opset 18,
// any number of spatial dims) and DeformConv (opset 19, 2-D), as plain loops that follow ONNX's
// definitions directly (the numeric oracle for the optimized kernels, not fast).
// Geometry (output sizes, auto_pad) comes from k_nn_shapes.h, the same code shape inference runs.
// Accumulation is in double so that the oracle's own rounding stays far below test tolerances.
#include <cmath>
#include <vector>

#include "k_nn_internal.h"

namespace mgrt {
namespace nn {
namespace {

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

// Col2Im: input [N, C * prod(block), L] holds, for each of the L sliding-block positions (the
// output grid of a convolution of `block` over the padded image), the C blocks' values; they are
// summed back into the image [N, C, image...]. Positions in the padding are dropped.
template <typename T>
int col2imT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Col2Im";
  const Tensor& X = in[0];
  std::vector<int64_t> image, block;
  for (int64_t i = 0; i < in[1].numel(); ++i) image.push_back(in[1].as<int64_t>()[i]);
  for (int64_t i = 0; i < in[2].numel(); ++i) block.push_back(in[2].as<int64_t>()[i]);
  if (in[1].dtype != kI64 || in[2].dtype != kI64 || image.size() != block.size() || image.empty())
    return ctx.fail("%s: image_shape and block_shape must be i64 of one length", op);
  SpatialAttrs sa;
  if (spatialAttrsFrom(op, a, &sa, ctx)) return 1;
  SpatialGeometry g;
  std::string err = resolveConvGeometry(op, image, block, sa, &g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  const int nsp = g.nsp;
  const int64_t kSize = product(block), blocks = product(g.out), imSize = product(image);
  if (X.rank != 3 || X.dims[1] % kSize != 0 || X.dims[2] != blocks)
    return ctx.fail("%s: input must be [N, C * %lld, %lld]", op, static_cast<long long>(kSize),
                    static_cast<long long>(blocks));
  const int64_t N = X.dims[0], C = X.dims[1] / kSize;
  std::vector<int64_t> outDims = {N, C};
  outDims.insert(outDims.end(), image.begin(), image.end());
  if (checkDims(op, out[0], outDims, ctx)) return 1;
  std::vector<int64_t> imStride(nsp);
  for (int64_t d = nsp - 1, st = 1; d >= 0; --d) {
    imStride[d] = st;
    st *= image[d];
  }
  std::vector<int64_t> kc = kernelCoords(block);
  const T* x = X.as<T>();
  T* y = out[0].as<T>();
  parallelFor(ctx.pool, N * C, 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> bc(nsp);
    std::vector<double> acc(static_cast<size_t>(imSize));
    for (int64_t nc = b; nc < e; ++nc) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const T* xc = x + nc * kSize * blocks;  // rows c * kSize .. (c + 1) * kSize - 1 of batch n
      for (int64_t kk = 0; kk < kSize; ++kk)
        for (int64_t l = 0; l < blocks; ++l) {
          unravel(l, g.out, bc.data());
          int64_t off = 0;
          bool inside = true;
          for (int d = 0; d < nsp && inside; ++d) {
            int64_t p = bc[d] * g.stride[d] - g.padBegin[d] + kc[kk * nsp + d] * g.dilation[d];
            inside = p >= 0 && p < image[d];
            off += p * imStride[d];
          }
          if (inside) acc[off] += static_cast<double>(xc[kk * blocks + l]);
        }
      for (int64_t i = 0; i < imSize; ++i) y[nc * imSize + i] = static_cast<T>(acc[i]);
    }
  });
  return 0;
}

// Bilinear sample of one H x W plane at (h, w), zero outside (torchvision's deform_conv2d and
// onnxruntime: a point within one pixel of the border still blends with the zero outside).
template <typename T>
double sampleBilinear(const T* plane, int64_t H, int64_t W, double h, double w) {
  if (h <= -1 || h >= H || w <= -1 || w >= W) return 0;
  int64_t h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  double lh = h - h0, lw = w - w0;
  auto at = [&](int64_t i, int64_t j) {
    return i >= 0 && i < H && j >= 0 && j < W ? static_cast<double>(plane[i * W + j]) : 0.0;
  };
  return (1 - lh) * (1 - lw) * at(h0, w0) + (1 - lh) * lw * at(h0, w0 + 1) +
         lh * (1 - lw) * at(h0 + 1, w0) + lh * lw * at(h0 + 1, w0 + 1);
}

// DeformConv (2-D): a grouped convolution whose kernel taps are moved by per-position offsets
// [N, offset_group * kH * kW * 2, oH, oW] (pairs of (dh, dw), ordered offset group, kh, kw) and
// scaled by an optional mask [N, offset_group * kH * kW, oH, oW]; input channels are split evenly
// among offset groups. Taps that land between pixels are sampled bilinearly.
template <typename T>
int deformConvT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "DeformConv";
  const Tensor& X = in[0];
  const Tensor& W = in[1];
  const Tensor& O = in[2];
  if (X.rank != 4 || W.rank != 4 || O.rank != 4)
    return ctx.fail("%s: input, weight and offset must be 4-D (2-D deformable convolution)", op);
  if (W.dtype != X.dtype || O.dtype != X.dtype)
    return ctx.fail("%s: weight, offset and input element types differ", op);
  const int64_t group = a.i("group", 1), og = a.i("offset_group", 1);
  const int64_t N = X.dims[0], C = X.dims[1], H = X.dims[2], Wd = X.dims[3];
  const int64_t M = W.dims[0], cg = W.dims[1], kH = W.dims[2], kW = W.dims[3];
  if (group <= 0 || og <= 0 || C % group != 0 || M % group != 0 || cg * group != C ||
      C % og != 0)
    return ctx.fail("%s: channels do not split into group %lld / offset_group %lld", op,
                    static_cast<long long>(group), static_cast<long long>(og));
  SpatialAttrs sa;
  if (spatialAttrsFrom(op, a, &sa, ctx)) return 1;
  std::vector<int64_t> kernel = {kH, kW};
  SpatialGeometry g;
  std::string err = resolveConvGeometry(op, {H, Wd}, kernel, sa, &g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  const int64_t oH = g.out[0], oW = g.out[1], kSize = kH * kW, oSize = oH * oW;
  if (O.dims[0] != N || O.dims[1] != og * kSize * 2 || O.dims[2] != oH || O.dims[3] != oW)
    return ctx.fail("%s: offset has the wrong shape", op);
  if (checkDims(op, out[0], {N, M, oH, oW}, ctx)) return 1;
  const T* bias = present(in, nin, 3) ? in[3].as<T>() : nullptr;
  const T* mask = present(in, nin, 4) ? in[4].as<T>() : nullptr;
  if (bias && (in[3].dtype != X.dtype || in[3].numel() != M))
    return ctx.fail("%s: bias must be [%lld]", op, static_cast<long long>(M));
  if (mask && (in[4].dtype != X.dtype || in[4].numel() != N * og * kSize * oSize))
    return ctx.fail("%s: mask must be [N, %lld, %lld, %lld]", op,
                    static_cast<long long>(og * kSize), static_cast<long long>(oH),
                    static_cast<long long>(oW));
  const T* x = X.as<T>();
  const T* w = W.as<T>();
  const T* off = O.as<T>();
  T* y = out[0].as<T>();
  const int64_t mg = M / group, cPerOg = C / og;
  parallelFor(ctx.pool, N * M, 1, [&](int64_t b, int64_t e) {
    for (int64_t nm = b; nm < e; ++nm) {
      const int64_t n = nm / M, m = nm % M, gi = m / mg;
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) {
          double acc = bias ? static_cast<double>(bias[m]) : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t c = gi * cg + ci, o = c / cPerOg;
            const T* plane = x + (n * C + c) * H * Wd;
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < kW; ++kw) {
                const int64_t k = kh * kW + kw;
                const int64_t pos = oh * oW + ow;
                double dh = off[((n * og + o) * kSize * 2 + 2 * k) * oSize + pos];
                double dw = off[((n * og + o) * kSize * 2 + 2 * k + 1) * oSize + pos];
                double h = dh + static_cast<double>(oh * g.stride[0] - g.padBegin[0] +
                                                    kh * g.dilation[0]);
                double wv = dw + static_cast<double>(ow * g.stride[1] - g.padBegin[1] +
                                                     kw * g.dilation[1]);
                double v = sampleBilinear(plane, H, Wd, h, wv);
                if (mask) v *= static_cast<double>(mask[((n * og + o) * kSize + k) * oSize + pos]);
                acc += v * static_cast<double>(w[(m * cg + ci) * kSize + k]);
              }
          }
          y[nm * oSize + oh * oW + ow] = static_cast<T>(acc);
        }
    }
  });
  return 0;
}

}  // namespace

int kCol2Im(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("Col2Im", nin, 3, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "Col2Im", ctx, [&](auto tag) {
    return col2imT<decltype(tag)>(a, in, nin, out, nout, ctx);
  });
}

int kDeformConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("DeformConv", nin, 3, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "DeformConv", ctx, [&](auto tag) {
    return deformConvT<decltype(tag)>(a, in, nin, out, nout, ctx);
  });
}

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
