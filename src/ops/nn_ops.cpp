// NN op family, part 1: the contractions Conv, ConvTranspose, Gemm and MatMul (schemas and shape
// inference). Pools are in nn_ops_pool.cpp, normalizations in nn_ops_norm.cpp. Spatial output sizes
// come from runtime/cpu/k_nn_shapes.h, the same code the kernels run, so they always agree.
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
  Dims a = c.inputDims(0), b = c.inputDims(1);
  if (a.empty() || b.empty())
    return badInput("{}: operands must have rank >= 1, got {} and {}", op, c.inputType(0).str(),
                    c.inputType(1).str());
  bool va = a.size() == 1, vb = b.size() == 1;
  if (va) a.insert(a.begin(), 1);
  if (vb) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return badInput("{}: inner dimensions differ: A {} has K={}, B {} has K={}", op,
                    c.inputType(0).str(), a.back(), c.inputType(1).str(), b[b.size() - 2]);
  Dims ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  auto batch = broadcastDims(ba, bb);
  if (!batch.ok())
    return badInput("{}: batch dimensions do not broadcast: {}", op, batch.status().message());
  Dims out = batch.value();
  if (!va) out.push_back(a[a.size() - 2]);
  if (!vb) out.push_back(b.back());
  c.setOutput(0, {c.inputDType(0), out});
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
}

}  // namespace magneto
