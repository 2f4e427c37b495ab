// NN op family, part 1: the contractions Conv, ConvTranspose, Gemm and MatMul, and the
// convolution relatives Col2Im (opset 18) and DeformConv (opset 19) (schemas and shape
// inference). Pools are in nn_ops_pool.cpp, normalizations in nn_ops_norm.cpp. Spatial output sizes
// come from runtime/common/k_nn_shapes.h, the same code the kernels run, so they always agree.
#include "nn_ops_common.h"

namespace magneto {
namespace {

using namespace nnops;

Expected<int64_t> groupOf(const InferContext& c, const char* op) {
  int64_t g = c.attrs().getInt("group", 1);
  if (g <= 0) return badInput("{}: group must be positive, got {}", op, g);
  return g;
}

Status inferConv(InferContext& c) {
  const char* op = "Conv";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  for (size_t i = 1; i < 4; ++i) {
    static const char* kWhat[] = {"", "weight", "bias", "residual"};
    MG_RETURN_IF_ERROR(requireSameDType(c, i, op, kWhat[i]));
  }
  MG_RETURN_IF_ERROR(checkEpilogue(c, op));
  const Dims& x = c.inputDims(0);
  const Dims& w = c.inputDims(1);
  if (x.size() < 3)
    return badInput("{}: input must be N x C x spatial (rank >= 3), got {}", op,
                    c.inputType(0).str());
  if (w.size() != x.size())
    return badInput("{}: weight must have rank {} like the input, got {}", op, x.size(),
                    c.inputType(1).str());
  MG_ASSIGN_OR_RETURN(int64_t group, groupOf(c, op));
  int64_t cin = x[1], m = w[0];
  if (cin % group != 0)
    return badInput("{}: group {} does not divide the {} input channels", op, group, cin);
  if (m % group != 0)
    return badInput("{}: group {} does not divide the {} output channels (weight dim 0)", op,
                    group, m);
  if (w[1] * group != cin)
    return badInput("{}: weight has {} input channels per group, input has {} ({} channels / "
                    "group {})",
                    op, w[1], cin / group, cin, group);
  MG_ASSIGN_OR_RETURN(mgrt::SpatialAttrs sa, readSpatialAttrs(c, op));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return badInput("{}: kernel_shape {} does not match the weight's spatial dims {}", op,
                    mgrt::joinInts(sa.kernelShape), mgrt::joinInts(kernel));
  mgrt::SpatialGeometry g;
  std::string err = mgrt::resolveConvGeometry(op, Dims(x.begin() + 2, x.end()), kernel, sa, &g);
  if (!err.empty()) return badInput("{}", err);
  Dims out = {x[0], m};
  out.insert(out.end(), g.out.begin(), g.out.end());
  if (c.hasInput(2)) {
    const Dims& b = c.inputDims(2);
    if (b.size() != 1 || b[0] != m)
      return badInput("{}: bias must be [{}] (one per output channel), got {}", op, m,
                      c.inputType(2).str());
  }
  if (c.hasInput(3) && c.inputDims(3) != out)
    return badInput("{}: residual must have the output's shape {}, got {}", op, dimsStr(out),
                    c.inputType(3).str());
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

Status inferConvTranspose(InferContext& c) {
  const char* op = "ConvTranspose";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "weight"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "bias"));
  MG_RETURN_IF_ERROR(checkEpilogue(c, op));
  const Dims& x = c.inputDims(0);
  const Dims& w = c.inputDims(1);
  if (x.size() < 3)
    return badInput("{}: input must be N x C x spatial (rank >= 3), got {}", op,
                    c.inputType(0).str());
  if (w.size() != x.size())
    return badInput("{}: weight must have rank {} like the input, got {}", op, x.size(),
                    c.inputType(1).str());
  MG_ASSIGN_OR_RETURN(int64_t group, groupOf(c, op));
  if (w[0] != x[1])
    return badInput("{}: weight has {} input channels (dim 0), input has {}", op, w[0], x[1]);
  if (x[1] % group != 0)
    return badInput("{}: group {} does not divide the {} input channels", op, group, x[1]);
  int64_t m = w[1] * group;
  MG_ASSIGN_OR_RETURN(mgrt::SpatialAttrs sa, readSpatialAttrs(c, op));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return badInput("{}: kernel_shape {} does not match the weight's spatial dims {}", op,
                    mgrt::joinInts(sa.kernelShape), mgrt::joinInts(kernel));
  mgrt::SpatialGeometry g;
  std::string err =
      mgrt::resolveConvTransposeGeometry(Dims(x.begin() + 2, x.end()), kernel, sa, &g);
  if (!err.empty()) return badInput("{}", err);
  if (c.hasInput(2)) {
    const Dims& b = c.inputDims(2);
    if (b.size() != 1 || b[0] != m)
      return badInput("{}: bias must be [{}] (one per output channel), got {}", op, m,
                      c.inputType(2).str());
  }
  Dims out = {x[0], m};
  out.insert(out.end(), g.out.begin(), g.out.end());
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

// Col2Im(input [N, C * prod(block), L], image_shape, block_shape) -> [N, C, image...]: L must be
// the number of block positions, the output grid of a convolution of `block` over the image.
Status inferCol2Im(InferContext& c) {
  const char* op = "Col2Im";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> image, c.constInts(1, "image_shape"));
  MG_ASSIGN_OR_RETURN(std::vector<int64_t> block, c.constInts(2, "block_shape"));
  if (image.empty() || image.size() != block.size())
    return badInput("{}: image_shape [{}] and block_shape [{}] must have the same, non-zero length",
                    op, mgrt::joinInts(image), mgrt::joinInts(block));
  for (size_t d = 0; d < image.size(); ++d)
    if (image[d] <= 0 || block[d] <= 0)
      return badInput("{}: image_shape [{}] and block_shape [{}] must be positive", op,
                      mgrt::joinInts(image), mgrt::joinInts(block));
  MG_ASSIGN_OR_RETURN(mgrt::SpatialAttrs sa, readSpatialAttrs(c, op));
  mgrt::SpatialGeometry g;
  std::string err = mgrt::resolveConvGeometry(op, image, block, sa, &g);
  if (!err.empty()) return badInput("{}", err);
  int64_t kSize = 1, blocks = 1;
  for (size_t d = 0; d < block.size(); ++d) {
    kSize *= block[d];
    blocks *= g.out[d];
  }
  const Dims& x = c.inputDims(0);
  if (x.size() != 3 || x[1] % kSize != 0 || x[2] != blocks)
    return badInput("{}: input must be [N, C * {}, {}] (C times the block size, then the number "
                    "of blocks), got {}",
                    op, kSize, blocks, c.inputType(0).str());
  Dims out = {x[0], x[1] / kSize};
  out.insert(out.end(), image.begin(), image.end());
  c.setOutput(0, {c.inputDType(0), out});
  return Status::success();
}

// DeformConv(X [N, C, H, W], W [M, C / group, kH, kW], offset [N, og * kH * kW * 2, oH, oW],
// B [M]?, mask [N, og * kH * kW, oH, oW]?) -> [N, M, oH, oW] (2-D only, as onnxruntime).
Status inferDeformConv(InferContext& c) {
  const char* op = "DeformConv";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "input"));
  static const char* kWhat[] = {"", "weight", "offset", "bias", "mask"};
  for (size_t i = 1; i < 5; ++i) MG_RETURN_IF_ERROR(requireSameDType(c, i, op, kWhat[i]));
  MG_RETURN_IF_ERROR(requireRank(c, 0, 4, op, "input (2-D deformable convolution)"));
  MG_RETURN_IF_ERROR(requireRank(c, 1, 4, op, "weight"));
  const Dims& x = c.inputDims(0);
  const Dims& w = c.inputDims(1);
  MG_ASSIGN_OR_RETURN(int64_t group, groupOf(c, op));
  int64_t og = c.attrs().getInt("offset_group", 1);
  if (og <= 0) return badInput("{}: offset_group must be positive, got {}", op, og);
  if (x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1])
    return badInput("{}: weight {} does not fit input {} in {} groups", op, c.inputType(1).str(),
                    c.inputType(0).str(), group);
  if (x[1] % og != 0)
    return badInput("{}: offset_group {} does not divide the {} input channels", op, og, x[1]);
  MG_ASSIGN_OR_RETURN(mgrt::SpatialAttrs sa, readSpatialAttrs(c, op));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!sa.kernelShape.empty() && sa.kernelShape != kernel)
    return badInput("{}: kernel_shape {} does not match the weight's spatial dims {}", op,
                    mgrt::joinInts(sa.kernelShape), mgrt::joinInts(kernel));
  mgrt::SpatialGeometry g;
  std::string err = mgrt::resolveConvGeometry(op, {x[2], x[3]}, kernel, sa, &g);
  if (!err.empty()) return badInput("{}", err);
  const int64_t taps = kernel[0] * kernel[1];
  Dims offset = {x[0], og * taps * 2, g.out[0], g.out[1]};
  if (c.inputDims(2) != offset)
    return badInput("{}: offset must be {} (N, offset_group * kH * kW * 2, oH, oW), got {}", op,
                    dimsStr(offset), c.inputType(2).str());
  if (c.hasInput(3) && c.inputDims(3) != Dims{w[0]})
    return badInput("{}: bias must be [{}], got {}", op, w[0], c.inputType(3).str());
  Dims mask = {x[0], og * taps, g.out[0], g.out[1]};
  if (c.hasInput(4) && c.inputDims(4) != mask)
    return badInput("{}: mask must be {}, got {}", op, dimsStr(mask), c.inputType(4).str());
  c.setOutput(0, {c.inputDType(0), {x[0], w[0], g.out[0], g.out[1]}});
  return Status::success();
}

Status inferGemm(InferContext& c) {
  const char* op = "Gemm";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "A"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "B"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "C"));
  MG_RETURN_IF_ERROR(checkEpilogue(c, op));
  MG_RETURN_IF_ERROR(requireRank(c, 0, 2, op, "A"));
  MG_RETURN_IF_ERROR(requireRank(c, 1, 2, op, "B"));
  const Dims& a = c.inputDims(0);
  const Dims& b = c.inputDims(1);
  bool ta = c.attrs().getInt("transA", 0) != 0, tb = c.attrs().getInt("transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka != kb)
    return badInput("{}: inner dimensions differ: A{} {} gives K={}, B{} {} gives K={}", op,
                    ta ? "^T" : "", c.inputType(0).str(), ka, tb ? "^T" : "",
                    c.inputType(1).str(), kb);
  if (c.hasInput(2)) {
    const Dims& cd = c.inputDims(2);
    Dims want = {m, n};
    bool ok = cd.size() <= 2;
    for (size_t i = 0; ok && i < cd.size(); ++i) {
      int64_t t = want[2 - cd.size() + i];
      ok = cd[i] == 1 || cd[i] == t;
    }
    if (!ok)
      return badInput("{}: C {} does not broadcast to the output [{},{}]", op,
                      c.inputType(2).str(), m, n);
  }
  c.setOutput(0, {c.inputDType(0), {m, n}});
  return Status::success();
}

Status inferMatMul(InferContext& c) {
  const char* op = "MatMul";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "A"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "B"));
  MG_RETURN_IF_ERROR(checkEpilogue(c, op));
  MG_ASSIGN_OR_RETURN(MatMulShape shape, matMulShape(c, 0, 1, op));
  c.setOutput(0, {c.inputDType(0), shape.out});
  return Status::success();
}

}  // namespace

void registerNNOps(OpRegistry& r) {
  std::vector<AttrSpec> spatial = {{"auto_pad", K::kString}, {"dilations", K::kInts},
                                   {"kernel_shape", K::kInts}, {"pads", K::kInts},
                                   {"strides", K::kInts}};
  {
    OpSchema s;
    s.name = "Conv";
    s.minInputs = 2;
    s.maxInputs = 4;  // X, W, optional B, optional Magneto residual
    s.attrs = concatAttrs(concatAttrs(spatial, {{"group", K::kInt}}), epilogueAttrs());
    s.traits = kHasEpilogue;
    s.infer = inferConv;
    s.doc = "N-D convolution (groups, dilations, auto_pad); fused epilogue and residual operand 3";
    s.sinceVersion = 11;
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "ConvTranspose";
    s.minInputs = 2;
    s.maxInputs = 3;
    s.attrs = concatAttrs(concatAttrs(spatial, {{"group", K::kInt},
                                                {"output_padding", K::kInts},
                                                {"output_shape", K::kInts}}),
                          epilogueAttrs());
    s.traits = kHasEpilogue;
    s.infer = inferConvTranspose;
    s.doc = "N-D transposed convolution (output_padding, output_shape, auto_pad); fused epilogue";
    s.sinceVersion = 11;
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Col2Im";
    s.minInputs = s.maxInputs = 3;
    s.attrs = {{"dilations", K::kInts}, {"pads", K::kInts}, {"strides", K::kInts}};
    s.shapeOperands = {1, 2};
    s.infer = inferCol2Im;
    s.doc = "sums sliding blocks [N, C * prod(block), L] back into an image [N, C, image...]";
    s.sinceVersion = 18;
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "DeformConv";
    s.minInputs = 3;
    s.maxInputs = 5;  // X, W, offset, optional B, optional mask
    s.attrs = {{"dilations", K::kInts}, {"group", K::kInt}, {"kernel_shape", K::kInts},
               {"offset_group", K::kInt}, {"pads", K::kInts}, {"strides", K::kInts}};
    s.infer = inferDeformConv;
    s.doc = "2-D convolution with per-position tap offsets (bilinear sampling) and optional mask";
    s.sinceVersion = 19;
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "Gemm";
    s.minInputs = 2;
    s.maxInputs = 3;
    s.attrs = concatAttrs({{"alpha", K::kFloat}, {"beta", K::kFloat}, {"transA", K::kInt},
                           {"transB", K::kInt}},
                          epilogueAttrs());
    s.traits = kHasEpilogue;
    s.infer = inferGemm;
    s.doc = "Y = alpha * A' * B' + beta * C (C broadcast to [M,N]); fused epilogue";
    s.sinceVersion = 13;
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "MatMul";
    s.minInputs = 2;
    s.maxInputs = 2;
    s.attrs = epilogueAttrs();
    s.traits = kHasEpilogue;
    s.infer = inferMatMul;
    s.doc = "numpy matmul: 1-D operands promoted then squeezed, batch dims broadcast";
    s.sinceVersion = 13;
    r.add(std::move(s));
  }
  registerNNPoolOps(r);
  registerNNNormOps(r);
  registerNNAttentionOps(r);
}

}  // namespace magneto
