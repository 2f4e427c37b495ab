// The GPU lowering table: for every op that the cuda and hip targets lower, the one function that
// turns a node of that op into block-program items (gpu_lowering.h declares them, one file per
// kind of program). lowerNode (gpu_emitter.cpp) looks a node's op up here and calls the function;
// an op without an entry is refused at compile time, naming the node.
//
// Adding an op: write its lowering function in the lower_*.cpp of its kind of program, declare it
// in gpu_lowering.h, and add one entry below. An elementwise op needs none of that: its row in
// elementwise_exprs.h (or its activation in runtime/common/mg_acts.h, flag O) is its entry, read
// from there so that the op's name and formula stay written once. Each op has one entry and is an
// op of the registry (tests/unit/gpu_lowering_table_test.cpp checks both).
//
// Where the program depends on the element type, the entry names a dispatcher below, which picks
// the float32 lowering or the typed one of lower_opset.cpp; each lowering refuses the types it
// does not cover, so the message names what is missing.
#include <string>
#include <unordered_map>
#include <vector>

#include "elementwise_exprs.h"
#include "gpu_lowering.h"
#include "magneto/codegen/gpu_emitter.h"
#include "mg_acts.h"

namespace magneto {
namespace gpu {
namespace {

DType firstOperandType(const Node& n) {
  return n.numInputs() > 0 && n.input(0) ? n.input(0)->dtype() : DType::kUndefined;
}

// Unary math and activations: a float64 operand gets the double formulas, anything else the
// float32 map functors (which refuse the other types).
Expected<std::vector<GpuItem>> lowerUnary(const Node& n, const TileConfig& tile, LowerContext& cx) {
  if (firstOperandType(n) == DType::kF64 && n.numInputs() == 1) return opset::lowerUnaryF64(n, tile, cx);
  return lowerElementwise(n, tile, cx);
}

// Reduce*: float32 and float16 (--precision fp16's storage, or a model's own: read as float,
// summed in float) on the reduce program, every other type on the typed functors.
Expected<std::vector<GpuItem>> lowerAnyReduce(const Node& n, const TileConfig& tile, LowerContext& cx) {
  if (firstOperandType(n) == DType::kF32 || firstOperandType(n) == DType::kF16) return lowerReduce(n, tile, cx);
  return opset::lowerTypedReduce(n, tile, cx);
}

struct Entry {
  const char* op;
  LowerFn lower;
};

std::vector<Entry> buildEntries() {
  std::vector<Entry> e = {
      // Compute programs.
      {"Conv", lowerConv},
      {"ConvTranspose", lowerConvNd},
      {"Gemm", lowerGemm},
      {"MatMul", lowerGemm},
      {"MaxPool", lowerPool},
      {"AveragePool", lowerPool},
      {"GlobalAveragePool", lowerReduce},
      {"GlobalMaxPool", lowerReduce},
      {"ReduceSum", lowerAnyReduce},
      {"ReduceMean", lowerAnyReduce},
      {"ReduceMax", lowerAnyReduce},
      {"ReduceMin", lowerAnyReduce},
      {"ReduceProd", lowerAnyReduce},
      {"ReduceL1", lowerAnyReduce},
      {"ReduceL2", lowerAnyReduce},
      {"ReduceLogSum", lowerAnyReduce},
      {"ReduceLogSumExp", lowerAnyReduce},
      {"ReduceSumSquare", lowerAnyReduce},
      {"Softmax", lowerRows},
      {"LogSoftmax", lowerRows},
      {"LayerNormalization", lowerRows},
      {"LSTM", lowerRecurrent},
      {"GRU", lowerRecurrent},
      {"RNN", lowerRecurrent},
      // The operators of opsets 18-21 and typed functors (lower_opset*.cpp).
      {"Resize", opset::lowerResize},
      {"ScatterND", opset::lowerScatter},
      {"ScatterElements", opset::lowerScatter},
      {"Scatter", opset::lowerScatter},
      {"GroupNormalization", opset::lowerGroupNorm},
      {"Col2Im", opset::lowerWindow},
      {"LpPool", opset::lowerWindow},
      {"DeformConv", opset::lowerWindow},
      {"CenterCropPad", opset::lowerCenterCropPad},
      {"ConstantOfShape", opset::lowerConstantOfShape},
      {"Cast", opset::lowerCast},
      {"CastLike", opset::lowerCast},
      {"BitwiseAnd", opset::lowerBitwise},
      {"BitwiseOr", opset::lowerBitwise},
      {"BitwiseXor", opset::lowerBitwise},
      {"BitwiseNot", opset::lowerBitwise},
      {"BitShift", opset::lowerBitwise},
      {"IsNaN", opset::lowerIsNanInf},
      {"IsInf", opset::lowerIsNanInf},
      {"QuantizeLinear", opset::lowerQuantize},
      {"DequantizeLinear", opset::lowerQuantize},
      // Data movement (lower_data_movement.cpp).
      {"Reshape", lowerCopy},
      {"Flatten", lowerCopy},
      {"Squeeze", lowerCopy},
      {"Unsqueeze", lowerCopy},
      {"Identity", lowerCopy},
      {"Dropout", lowerDropout},
      {"MgChannelSlice", lowerChannelSlice},
      {"Transpose", lowerTranspose},
      {"Expand", lowerExpand},
      {"Tile", lowerTile},
      {"Slice", lowerSlice},
      {"Pad", lowerPad},
      {"ArgMax", lowerArgMaxMin},
      {"ArgMin", lowerArgMaxMin},
      {"OneHot", lowerOneHot},
      {"Concat", lowerConcat},
      {"Split", lowerSplit},
      {"Gather", lowerGather},
      {"GatherND", lowerGatherND},
      // Data-dependent extents (lower_select.cpp).
      {"NonZero", lowerNonZero},
      {"Compress", lowerCompress},
      {"Unique", lowerUnique},
      {"NonMaxSuppression", lowerNonMaxSuppression},
      {"TopK", lowerTopK},
      // Losses (lower_loss.cpp).
      {"NegativeLogLikelihoodLoss", lowerLoss},
      {"SoftmaxCrossEntropyLoss", lowerLoss},
      // Signal processing (lower_signal.cpp); the windows fold at compile time.
      {"DFT", lowerDFT},
      {"STFT", lowerSTFT},
      {"MelWeightMatrix", lowerMelWeightMatrix},
      // The vision family and Det (lower_vision.cpp).
      {"GridSample", lowerGridSample},
      {"RoiAlign", lowerRoiAlign},
      {"MaxUnpool", lowerMaxUnpool},
      {"LRN", lowerLRN},
      {"Det", lowerDet},
      // Elementwise ops whose expressions are not rows of a table (lower_map.cpp).
      {"MgElementwise", lowerElementwise},
      {"BatchNormalization", lowerBatchNorm},
      {"Where", lowerElementwise},
      {"Not", lowerElementwise},
      {"Mean", lowerElementwise},
      {"Clip", lowerElementwise},  // an activation whose bounds are operands: no flag O
  };
  for (const UnaryMathExpr& u : kUnaryMathExprs) e.push_back({u.op, lowerUnary});
  for (const mgrt::acts::ActInfo& a : mgrt::acts::kTable)
    if (a.has(mgrt::acts::kO)) e.push_back({a.name, lowerUnary});
  for (const BinaryExpr& b : kBinaryExprs) e.push_back({b.op, lowerElementwise});
  for (const CompareExpr& c : kCompareExprs) e.push_back({c.op, lowerElementwise});
  return e;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = buildEntries();
  return kEntries;
}

}  // namespace

LowerFn findLowering(const std::string& op) {
  static const std::unordered_map<std::string, LowerFn> kByOp = [] {
    std::unordered_map<std::string, LowerFn> m;
    for (const Entry& e : entries()) m.emplace(e.op, e.lower);
    return m;
  }();
  auto it = kByOp.find(op);
  return it == kByOp.end() ? nullptr : it->second;
}

}  // namespace gpu

bool gpuReadsHalfStorage(const Node& n) {
  using namespace gpu;
  const LowerFn f = findLowering(n.kind());
  if (!f) return false;
  const Value* x = n.input(0);
  const int rank = x ? x->rank() : 0;
  // Programs that take the storage type S (mg_kcommon.cuh ldF/stF) or copy elements by size.
  if (f == lowerElementwise || f == lowerUnary || f == lowerBatchNorm || f == lowerCopy || f == lowerDropout ||
      f == lowerChannelSlice || f == lowerTranspose || f == lowerExpand || f == lowerTile || f == lowerSlice ||
      f == lowerConcat || f == lowerSplit || f == lowerGather || f == lowerGemm || f == lowerRows ||
      f == lowerReduce || f == lowerAnyReduce || f == lowerArgMaxMin || f == lowerPad)
    return true;
  // Cast converts any storage type (mgk::convertTo reads and writes Half): a float operand or
  // result becomes float16 (the half-storage rewrite sets `to` to match).
  if (n.kind() == "Cast") return true;
  // The 1-D/2-D programs only (mg_conv.cuh, mg_pool.cuh); lowerConvNd/lowerPoolNd are float32.
  if (f == lowerConv) return rank == 3 || rank == 4;
  if (f == lowerPool) {
    if (rank != 3 && rank != 4) return false;
    if (n.kind() == "AveragePool" && n.attrs().getInt("count_include_pad", 0) != 0 &&
        n.attrs().getInt("ceil_mode", 0) != 0)
      return false;
    return true;
  }
  return false;
}

std::vector<std::string> gpuLoweredOps() {
  std::vector<std::string> ops;
  for (const gpu::Entry& e : gpu::entries()) ops.push_back(e.op);
  return ops;
}

}  // namespace magneto
