// GPU lowering of the ops with compute programs (see gpu_lowering.h; their entries in
// lowering_table.cpp): Conv (implicit GEMM, or the direct depthwise program), Gemm and MatMul
// (tiled GEMM with strides for transposes and batch broadcasting), Max/AveragePool, global pools
// and float32 Reduce* (the reduce program), and Softmax, LogSoftmax and LayerNormalization over
// trailing axes (the row program). Epilogues that fuse-epilogue attached (mg_act, bias, residual
// operand 3) go into the params.
//
// Skinny Gemm/MatMul (min(M, N) <= 16: batch-1 heads and projections): when the cost model picks
// a GEMV tile (TileConfig::isGemv), the split-K program mgk::gemvBlock<rows, cols, 256> with the
// same GemmParams and epilogue (mg_gemv.cuh), transposed by strides when N < M. It stays float32
// under --precision fp16: it is bound by the weight's bytes, which stay float in memory.
//
// Tiles. The cost model tiles a Conv as the GEMM M = N*OH*OW (pixels) x N = output channels, while
// mgk::convBlock<BM, BN> tiles BM output channels x BN pixels, so the cost model's tileM x tileN is
// instantiated as convBlock<tileN, tileM>: the tile set is symmetric, every pair exists.
#include <fmt/format.h>

#include <algorithm>

#include "gpu_lowering.h"
#include "mg_acts.h"

namespace magneto {
namespace gpu {
namespace {

Status epilogue(const Node& n, std::string& init) {
  std::string act = n.attrs().getString("mg_act", "");
  const int code = mgrt::acts::codeOf(act.c_str());  // the device's mgk::Act (mg_acts.h)
  if (code < 0) return unsupported("{}: epilogue activation '{}' on the cuda/hip targets", n.describe(), act);
  init += fmt::format("p.act = {}; p.actAlpha = {}; p.actBeta = {};\n", code,
                      floatLiteral(n.attrs().getFloat("mg_alpha", 0)),
                      floatLiteral(n.attrs().getFloat("mg_beta", 0)));
  return Status::success();
}

// The GEMM tile of the cost model, or its default. threads = warps x warp size of the profile.
struct Tile {
  int m = 64, n = 64, threads = 128;
};
Tile gemmTile(const TileConfig& t) {
  Tile r;
  if (t.isGemm()) {
    r.m = t.tileM, r.n = t.tileN;
    // The kernel library's tiles: 128 threads up to 64x64, 256 above (cost_model.cpp kGemmTiles).
    r.threads = t.tileM * t.tileN > 64 * 64 ? 256 : 128;
  }
  return r;
}
// The tensor-core programs need BM, BN multiples of 16, 32 | THREADS and whole fragments per
// warp (GemmTileF16); every kGemmTiles entry has them. A tile that had not would stay fp32.
bool gemmFitsF16(const Tile& t) {
  return t.m % 16 == 0 && t.n % 16 == 0 && t.threads % 32 == 0 &&
         (t.m / 16) * (t.n / 16) % (t.threads / 32) == 0;
}


// Pads of one spatial axis: explicit, or from auto_pad and the output extent.
void spatialPad(const Node& n, int axis, int spatialRank, int64_t in, int64_t out, int64_t k,
                int64_t s, int64_t d, int64_t& before) {
  std::string autoPad = n.attrs().getString("auto_pad", "NOTSET");
  std::vector<int64_t> pads = n.attrs().getInts("pads");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
    before = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
  } else if (autoPad == "VALID") {
    before = 0;
  } else {
    before = static_cast<int>(pads.size()) == 2 * spatialRank ? pads[axis] : 0;
  }
}

// GemmParams for Y = A x B (+ C) with element strides; batch strides 0 broadcast.
struct GemmView {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  int64_t aB = 0, aM = 0, aK = 0, bB = 0, bK = 0, bN = 0;
};

// Batch stride of an operand of MatMul: 0 when it has no batch dims (or all are 1), its matrix
// size when its batch dims equal the output's; otherwise the batch broadcast is not expressible
// with one stride.
// The decision is by the dims at the reference binding in a dynamic graph (LowerContext::choiceDims):
// a batch that is 1 only at some bindings keeps the matrix stride, which is as right for one batch.
bool batchStride(const LowerContext& cx, const Value* v, const Value* y, int64_t matrix, int64_t& stride) {
  const Dims &vd = cx.choiceDims(v), &yd = cx.choiceDims(y);
  int vb = std::max(0, v->rank() - 2), yb = std::max(0, y->rank() - 2);
  int64_t prod = 1;
  for (int i = 0; i < vb; ++i) prod *= vd[i];
  if (prod == 1) return stride = 0, true;
  if (vb != yb) {
    // Leading 1s then the same dims as the output.
    if (vb > yb) return false;
    for (int i = 0; i < vb; ++i)
      if (vd[i] != yd[yb - vb + i]) return false;
    int64_t ylead = 1;
    for (int i = 0; i < yb - vb; ++i) ylead *= yd[i];
    if (ylead != 1) return false;
    return stride = matrix, true;
  }
  for (int i = 0; i < vb; ++i)
    if (vd[i] != yd[i]) return false;
  return stride = matrix, true;
}

int reduceCode(const std::string& k) {
  static const char* kOps[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                               "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                               "ReduceSumSquare"};
  for (int i = 0; i < 10; ++i)
    if (k == kOps[i]) return i;
  if (k == "GlobalAveragePool") return 1;
  if (k == "GlobalMaxPool") return 2;
  return -1;
}

bool isF32OrF16(DType t) { return t == DType::kF32 || t == DType::kF16; }

}  // namespace

Expected<bool> halfStorageOf(const Node& n) {
  int f32 = 0, f16 = 0;
  auto count = [&](const Value* v) {
    if (!v) return;
    f32 += v->dtype() == DType::kF32;
    f16 += v->dtype() == DType::kF16;
  };
  for (const Value* v : n.inputs()) count(v);
  for (const Value* v : n.outputs())
    if (v->hasUses() || v->isGraphOutput()) count(v);
  if (f32 > 0 && f16 > 0)
    return unsupported("{}: {} mixes float32 and float16 tensors (its program reads and writes one storage "
                       "type; --precision fp16 casts around it)", n.describe(), n.kind());
  return f16 > 0;
}

void setStorage(GpuItem& it, bool half) {
  if (!half) return;
  for (std::string* s : {&it.program, &it.blocks, &it.smem}) s->insert(s->size() - 1, ", mgk::Half");
  it.tile += " half";
}

Expected<std::vector<GpuItem>> lowerConv(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *res = n.input(3), *y = n.output(0);
  // 3-D and up, and float64: the direct N-D program (lower_conv_nd.cpp).
  if (!isF32OrF16(x->dtype()) || (x->rank() != 4 && x->rank() != 3)) return lowerConvNd(n, tile, cx);
  MG_ASSIGN_OR_RETURN(bool half, halfStorageOf(n));
  int sr = x->rank() - 2;
  bool oneD = sr == 1;
  int64_t group = n.attrs().getInt("group", 1);
  std::vector<int64_t> strides = n.attrs().getInts("strides"), dil = n.attrs().getInts("dilations");
  auto at = [](const std::vector<int64_t>& v, int i) { return i < static_cast<int>(v.size()) ? v[i] : 1; };
  int64_t N = x->dims()[0], C = x->dims()[1], H = oneD ? 1 : x->dims()[2], W = x->dims().back();
  int64_t K = w->dims()[0], R = oneD ? 1 : w->dims()[2], S = w->dims().back();
  int64_t OH = oneD ? 1 : y->dims()[2], OW = y->dims().back();
  int64_t sh = oneD ? 1 : at(strides, 0), sw = at(strides, sr - 1);
  int64_t dh = oneD ? 1 : at(dil, 0), dw = at(dil, sr - 1);
  int64_t pt = 0, pl = 0;
  if (!oneD) spatialPad(n, 0, sr, H, OH, R, sh, dh, pt);
  spatialPad(n, sr - 1, sr, W, OW, S, sw, dw, pl);

  bool depthwise = group == C && K == C && group > 1;
  GpuItem it;
  if (depthwise) {
    int items = tile.itemsPerThread > 0 ? tile.itemsPerThread : 1;
    it = programItem("depthwise", fmt::format("{}, 256", items), "mgk::ConvParams", 256, false,
              fmt::format("depthwise items{}", items));
  } else {
    Tile t = gemmTile(tile);
    // convBlock<BM = output channels, BN = pixels>: the transpose of the cost model's tile.
    // fp16: the tensor-core program, same tiles (BM, BN multiples of 16: gemmFitsF16).
    it = programItem(cx.fp16 && gemmFitsF16(t) ? "convF16" : "conv", fmt::format("{}, {}, {}", t.n, t.m, t.threads),
              "mgk::ConvParams", t.threads, true,
              fmt::format("{}x{} t{}{}", t.n, t.m, t.threads, cx.fp16 && gemmFitsF16(t) ? " fp16" : ""));
  }
  it.init = fmt::format(
      "p.N = {}; p.C = {}; p.H = {}; p.W = {}; p.K = {}; p.R = {}; p.S = {}; p.group = {};\n"
      "p.strideH = {}; p.strideW = {}; p.padTop = {}; p.padLeft = {}; p.dilationH = {}; "
      "p.dilationW = {}; p.OH = {}; p.OW = {};\n"
      "p.x = {}; p.w = {}; p.bias = {}; p.residual = {}; p.y = {}; p.yChannels = {}; "
      "p.yChannelOffset = 0;\n",
      N, C, H, W, K, R, S, group, sh, sw, pt, pl, dh, dw, OH, OW, cx.typedPtr("float", x, true),
      cx.typedPtr("float", w, true), b ? cx.typedPtr("float", b, true) : "nullptr",
      res ? cx.typedPtr("float", res, true) : "nullptr", cx.typedPtr("float", y, false), K);
  setStorage(it, half);
  MG_RETURN_IF_ERROR(epilogue(n, it.init));
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerGemm(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  if (!isF32OrF16(a->dtype()) || !isF32OrF16(b->dtype()))
    return unsupported("{}: {} on {} (the cuda/hip targets do f32, and f16 storage under --precision fp16)",
                       n.describe(), n.kind(), dtypeName(a->dtype()));
  MG_ASSIGN_OR_RETURN(bool half, halfStorageOf(n));
  GemmView g;
  std::string cPtr = "nullptr";
  int64_t cm = 0, cn = 0;
  double beta = 0;
  float alpha = 1.f;
  if (n.kind() == "Gemm") {
    bool ta = n.attrs().getInt("transA", 0) != 0, tb = n.attrs().getInt("transB", 0) != 0;
    g.M = ta ? a->dims()[1] : a->dims()[0];
    g.K = ta ? a->dims()[0] : a->dims()[1];
    g.N = tb ? b->dims()[0] : b->dims()[1];
    g.aM = ta ? 1 : a->dims()[1], g.aK = ta ? a->dims()[1] : 1;
    g.bK = tb ? 1 : b->dims()[1], g.bN = tb ? b->dims()[1] : 1;
    alpha = static_cast<float>(n.attrs().getFloat("alpha", 1.0));
    if (const Value* c = n.input(2)) {
      // C broadcasts to M x N (numpy rules).
      Dims cd = c->dims(), cc = cx.choiceDims(c);
      if (cd.size() == 2) cm = cc[0] == 1 ? 0 : cd[1], cn = cc[1] == 1 ? 0 : 1;
      else if (cd.size() == 1) cn = cc[0] == 1 ? 0 : 1;
      cPtr = cx.typedPtr("float", c, true);
      beta = n.attrs().getFloat("beta", 1.0);
    }
  } else {  // MatMul, numpy semantics: 1-D operands gain a dimension that the result drops
    int ar = a->rank(), br = b->rank();
    g.M = ar >= 2 ? a->dims()[ar - 2] : 1;
    g.K = a->dims()[ar - 1];
    g.N = br >= 2 ? b->dims()[br - 1] : 1;
    g.aM = ar >= 2 ? g.K : 0, g.aK = 1;
    g.bK = br >= 2 ? g.N : 1, g.bN = br >= 2 ? 1 : 0;
    int64_t out = y->type().numel();
    g.batch = g.M * g.N > 0 ? out / (g.M * g.N) : 0;
    if (!batchStride(cx, a, y, g.M * g.K, g.aB) || !batchStride(cx, b, y, g.K * g.N, g.bB))
      return unsupported("{}: MatMul batch broadcasting {} x {} (the cuda/hip targets need equal or absent batch dims)",
                         n.describe(), a->type().str(), b->type().str());
  }
  const Value* res = n.kind() == "Gemm" ? nullptr : n.input(2);  // MatMul's residual operand
  std::string aPtr = cx.typedPtr("float", a, true), bPtr = cx.typedPtr("float", b, true);
  int64_t yM = g.N, yN = 1;
  GpuItem it;
  if (tile.isGemv()) {
    // The split-K program (mg_gemv.cuh) for min(M, N) <= 16, at most tile.tileM rows per block.
    // When N < M (gemvTransposed, as the cost model priced it) it computes Y^T = B^T A^T: the
    // operands, their strides and C's and Y's strides swap roles; the residual keeps Y's offsets.
    const bool transposed = gemvTransposed(g.M, g.N);
    if (transposed) {
      std::swap(g.M, g.N);
      std::swap(aPtr, bPtr);
      GemmView t = g;
      g.aB = t.bB, g.aM = t.bN, g.aK = t.bK;
      g.bB = t.aB, g.bK = t.aK, g.bN = t.aM;
      std::swap(cm, cn);
      std::swap(yM, yN);
    }
    it = programItem("gemv", fmt::format("{}, {}, {}", tile.tileM, tile.tileN, 256), "mgk::GemmParams", 256, true,
                     fmt::format("gemv {}x{} t256{}", tile.tileM, tile.tileN, transposed ? " transposed" : ""));
  } else {
    it = gemmItem(tile, cx.fp16);
  }
  it.init = fmt::format(
      "p.batch = {}; p.M = {}; p.N = {}; p.K = {};\n"
      "p.A = {}; p.aBatch = {}; p.aM = {}; p.aK = {};\n"
      "p.B = {}; p.bBatch = {}; p.bK = {}; p.bN = {};\n"
      "p.C = {}; p.cBatch = 0; p.cM = {}; p.cN = {}; p.beta = {};\n"
      "p.alpha = {}; p.Y = {}; p.yBatch = {}; p.yM = {}; p.yN = {}; p.residual = {};\n",
      g.batch, g.M, g.N, g.K, aPtr, g.aB, g.aM, g.aK, bPtr, g.bB, g.bK, g.bN, cPtr, cm, cn,
      cPtr == "nullptr" ? "0.f" : floatLiteral(beta), floatLiteral(alpha), cx.typedPtr("float", y, false),
      g.M * g.N, yM, yN, res ? cx.typedPtr("float", res, true) : "nullptr");
  setStorage(it, half);
  MG_RETURN_IF_ERROR(epilogue(n, it.init));
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerPool(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  // 3-D and up, float64, and AveragePool's count_include_pad with ceil_mode (whose divisor the 2-D
  // program does not cut at the end padding): the N-D program (lower_conv_nd.cpp).
  if (!isF32OrF16(x->dtype()) || (x->rank() != 4 && x->rank() != 3) ||
      (n.kind() == "AveragePool" && n.attrs().getInt("count_include_pad", 0) != 0 &&
       n.attrs().getInt("ceil_mode", 0) != 0))
    return lowerPoolNd(n, tile, cx);
  if (n.numOutputs() > 1 && n.output(1) && (n.output(1)->hasUses() || n.output(1)->isGraphOutput()))
    return unsupported("{}: MaxPool's Indices output on the cuda/hip targets", n.describe());
  int sr = x->rank() - 2;
  bool oneD = sr == 1;
  std::vector<int64_t> ks = n.attrs().getInts("kernel_shape"), st = n.attrs().getInts("strides"),
                       dl = n.attrs().getInts("dilations");
  auto at = [](const std::vector<int64_t>& v, int i) { return i < static_cast<int>(v.size()) ? v[i] : 1; };
  int64_t H = oneD ? 1 : x->dims()[2], W = x->dims().back();
  int64_t OH = oneD ? 1 : y->dims()[2], OW = y->dims().back();
  int64_t kh = oneD ? 1 : at(ks, 0), kw = at(ks, sr - 1), sh = oneD ? 1 : at(st, 0), sw = at(st, sr - 1);
  int64_t dh = oneD ? 1 : at(dl, 0), dw = at(dl, sr - 1);
  int64_t pt = 0, pl = 0;
  if (!oneD) spatialPad(n, 0, sr, H, OH, kh, sh, dh, pt);
  spatialPad(n, sr - 1, sr, W, OW, kw, sw, dw, pl);
  MG_ASSIGN_OR_RETURN(bool half, halfStorageOf(n));
  int items = tile.itemsPerThread > 0 ? tile.itemsPerThread : 1;
  GpuItem it = programItem("pool", fmt::format("{}, 256", items), "mgk::PoolParams", 256, false,
                    fmt::format("items{}", items));
  it.init = fmt::format(
      "p.N = {}; p.C = {}; p.H = {}; p.W = {}; p.OH = {}; p.OW = {};\n"
      "p.kernelH = {}; p.kernelW = {}; p.strideH = {}; p.strideW = {}; p.padTop = {}; p.padLeft = {}; "
      "p.dilationH = {}; p.dilationW = {};\n"
      "p.isMax = {}; p.countIncludePad = {}; p.x = {}; p.y = {}; p.yChannels = {}; p.yChannelOffset = 0;\n",
      x->dims()[0], x->dims()[1], H, W, OH, OW, kh, kw, sh, sw, pt, pl, dh, dw,
      n.kind() == "MaxPool" ? 1 : 0, n.attrs().getInt("count_include_pad", 0),
      cx.typedPtr("float", x, true), cx.typedPtr("float", y, false), x->dims()[1]);
  setStorage(it, half);
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerReduce(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!isF32OrF16(x->dtype())) return unsupported("{}: {} on {}", n.describe(), n.kind(), dtypeName(x->dtype()));
  MG_ASSIGN_OR_RETURN(bool half, halfStorageOf(n));
  std::vector<bool> reduced(x->rank(), false);
  if (n.kind().rfind("Global", 0) == 0) {
    for (int d = 2; d < x->rank(); ++d) reduced[d] = true;
  } else {
    std::vector<int64_t> axes = n.attrs().getInts("axes");
    if (n.input(1)) {
      if (!n.input(1)->isConstant())
        return unsupported("{}: computed reduction axes on the cuda/hip targets", n.describe());
      axes = n.input(1)->constant().toInts();
    }
    // noop_with_empty_axes: nothing reduced; each output is its op over one element (|x| for
    // L1, x^2 for SumSquare, ...), as the CPU computes it (redDims {1} below).
    bool noop = axes.empty() && n.attrs().getInt("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && !noop) reduced.assign(x->rank(), true);
    for (int64_t a : axes) reduced[a < 0 ? a + x->rank() : a] = true;
  }
  std::vector<int64_t> xs = contiguousStrides(x->dims()), od, os, rd, rs;
  int64_t outN = 1, redN = 1;
  for (int d = 0; d < x->rank(); ++d) {
    if (reduced[d]) rd.push_back(x->dims()[d]), rs.push_back(xs[d]), redN *= x->dims()[d];
    else od.push_back(x->dims()[d]), os.push_back(xs[d]), outN *= x->dims()[d];
  }
  if (od.empty()) od = {1}, os = {0};
  if (rd.empty()) rd = {1}, rs = {0};
  // One output per thread for short reductions; one block per output (tree) for long ones.
  // (By the reference dims in a dynamic graph: both programs compute any size.)
  int64_t choiceRedN = 1;
  for (int d = 0; d < x->rank(); ++d)
    if (reduced[d]) choiceRedN *= cx.choiceDims(x)[d];
  bool perBlock = choiceRedN >= 256;
  GpuItem it = perBlock ? programItem("reduce", "mgk::kReducePerBlock, 1, 256", "mgk::ReduceParams", 256, true,
                             "block per output")
                        : programItem("reduce", "mgk::kReducePerThread, 1, 256", "mgk::ReduceParams", 256, false,
                             "thread per output");
  (void)tile;
  it.init = fmt::format(
      "p.outN = {}; p.redN = {}; p.outRank = {}; p.redRank = {}; mgSet(p.outDims, {}); "
      "mgSet(p.outInStrides, {}); mgSet(p.redDims, {}); mgSet(p.redStrides, {});\n"
      "p.op = {}; p.x = {}; p.y = {};\n",
      outN, redN, od.size(), rd.size(), intList(od), intList(os), intList(rd), intList(rs),
      reduceCode(n.kind()), cx.typedPtr("float", x, true), cx.typedPtr("float", y, false));
  setStorage(it, half);
  return std::vector<GpuItem>{it};
}

Expected<std::vector<GpuItem>> lowerRows(const Node& n, const TileConfig& tile, LowerContext& cx) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!isF32OrF16(x->dtype())) return unsupported("{}: {} on {}", n.describe(), n.kind(), dtypeName(x->dtype()));
  MG_ASSIGN_OR_RETURN(bool half, halfStorageOf(n));
  int64_t axis = n.attrs().getInt("axis", -1);
  if (axis < 0) axis += x->rank();
  int64_t len = 1, inner = 1;
  bool layerNorm = n.kind() == "LayerNormalization";
  if (axis < 0 || axis >= x->rank())
    return unsupported("{}: {} over axis {} of rank {}", n.describe(), n.kind(), axis, x->rank());
  if (layerNorm) {
    for (int d = static_cast<int>(axis); d < x->rank(); ++d) len *= x->dims()[d];
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.output(i) && (n.output(i)->hasUses() || n.output(i)->isGraphOutput()))
        return unsupported("{}: LayerNormalization's mean/inv_std outputs on the cuda/hip targets", n.describe());
    for (int i = 1; i <= 2; ++i)
      if (const Value* v = n.input(i); v && v->type().numel() != len)
        return unsupported("{}: a broadcast LayerNormalization scale/bias on the cuda/hip targets", n.describe());
  } else {
    // Softmax/LogSoftmax over one axis: x as [outer, len, inner]; rows with inner > 1 (an axis
    // before the last, as YOLOv8's DFL softmax over axis 1) have their elements inner apart.
    for (int d = static_cast<int>(axis) + 1; d < x->rank(); ++d) inner *= x->dims()[d];
    len = x->dims()[axis];
  }
  // The rows are the dims before the axis (times the inner ones), also when the axis is empty
  // (rows of no elements, which the block program reads and writes nothing of): a dynamic extent
  // that reaches 0 keeps one expression for the grid.
  int64_t rows = inner;
  for (int d = 0; d < static_cast<int>(axis); ++d) rows *= x->dims()[d];
  int op = n.kind() == "Softmax" ? 0 : n.kind() == "LogSoftmax" ? 1 : 2;
  GpuItem it = programItem("row", "1, 256", "mgk::RowParams", 256, true, "block per row");
  (void)tile;
  const Value *scale = layerNorm ? n.input(1) : nullptr, *bias = layerNorm ? n.input(2) : nullptr;
  it.init = fmt::format("p.rows = {}; p.len = {}; p.inner = {}; p.op = {}; p.epsilon = {}; p.x = {}; p.scale = {}; p.bias = {}; p.y = {};\n",
                        rows, len, inner, op, floatLiteral(n.attrs().getFloat("epsilon", 1e-5)),
                        cx.typedPtr("float", x, true), scale ? cx.typedPtr("float", scale, true) : "nullptr",
                        bias ? cx.typedPtr("float", bias, true) : "nullptr", cx.typedPtr("float", y, false));
  setStorage(it, half);
  return std::vector<GpuItem>{it};
}

GpuItem programItem(const std::string& family, const std::string& args, const std::string& paramsType,
                    int threads, bool syncs, const std::string& tile) {
  GpuItem it;
  it.paramsType = paramsType;
  it.program = "mgk::" + family + "Block<" + args + ">";
  it.blocks = "mgk::" + family + "Blocks<" + args + ">";
  it.smem = "mgk::" + family + "SmemBytes<" + args + ">";
  it.threads = threads;
  it.syncs = syncs;
  it.tile = tile;
  return it;
}

GpuItem gemmItem(const TileConfig& tile, bool fp16) {
  Tile t = gemmTile(tile);
  fp16 = fp16 && gemmFitsF16(t);
  return programItem(fp16 ? "gemmF16" : "gemm", fmt::format("{}, {}, {}", t.m, t.n, t.threads), "mgk::GemmParams",
              t.threads, true, fmt::format("{}x{} t{}{}", t.m, t.n, t.threads, fp16 ? " fp16" : ""));
}

}  // namespace gpu
}  // namespace magneto
