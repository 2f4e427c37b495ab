// GPU lowering: one IR node -> the block programs ("items") that compute it, as C++ text for the
// generated NAME.cu (see runtime/gpu/kernels/mg_kparams.h for the block-program contract and
// include/magneto/codegen/gpu_emitter.h for how items become kernels and launches).
//
// Each op has one lowering function, named by its entry in lowering_table.cpp; lowerNode looks
// the node's op up there. The functions live in one file per kind of program (declared below).
//
// An item is one block program with its parameters: "run mgk::convBlock<64, 32, 128> over the
// blocks of this ConvParams". Most nodes are one item; a Concat or a Split is one item per piece
// (a copy into or out of a strided view), and their items share one launch like a joint group's.
// Parameters are filled once, when a handle is created, from the slots' device addresses
// (`S(k)` in the generated code); nothing shape-dependent is computed at run time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "magneto/analysis/memory_plan.h"
#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "magneto/target/cost_model.h"

namespace magneto {
namespace gpu {

struct GpuItem {
  std::string paramsType;  // "mgk::ConvParams"
  std::string program;     // "mgk::convBlock<64, 32, 128>" (called as program(p, block, smem))
  std::string blocks;      // "mgk::convBlocks<64, 32, 128>" (called as blocks(p), host side)
  std::string smem;        // "mgk::convSmemBytes<64, 32, 128>" (called as smem())
  int threads = 256;       // the program's kThreads
  bool syncs = false;      // uses __syncthreads or warp intrinsics (emulation needs fibers)
  std::string functor;     // a struct definition the program names, or ""
  std::string init;        // statements filling `p` (a reference to the params), one per line
  std::string tile;        // for comments: "64x32 t128", "items4"
  bool coResident = false;  // every block resident at once (mgLaunchCoResident): progress flags
  int phase = 0;           // a node's items run in launches ordered by phase: phase 1 starts after
                           // every block of phase 0 is done (LSTM: projection GEMM, then the time loop)
};

// What lowering needs to know about the model's storage: the generated slot index of a value.
struct LowerContext {
  const std::map<const Value*, int>* slots = nullptr;
  const ConcatElision* concats = nullptr;  // operands already in their Concat's result (or none)
  int functorCounter = 0;  // functor names are F<step>_<k>: unique per package
  int step = 0;
  int64_t scratchBytes = 0;  // scratch used by the launch being lowered (the emitter resets it)
  bool fp16 = false;  // --precision fp16: Gemm/MatMul/Conv on the tensor-core programs (F16); the
                      // activations' float16 storage is the values' dtype (passes/half_storage.cpp)
  // A graph with dynamic dimensions (docs/DYNAMIC_SHAPES.md, "cuda and hip"): the emitter lowers
  // every node at many bindings of the symbols (the values' dims set to each) and fits each integer
  // literal of the items' `init` that varies as an expression of the symbols, so the items must be
  // the same text at every binding but for those literals. Lowering then (1) makes every choice of
  // program by the dims at the reference binding (refDims: every symbol at its maximum), never by
  // the dims being lowered, and (2) writes scratch as "SCRATCH_AT(k)" (the launch's k-th request,
  // its sizes in scratchRequests), placed by the emitter once every binding's sizes are known.
  bool dynamic = false;
  const std::map<const Value*, Dims>* refDims = nullptr;
  std::vector<int64_t> scratchRequests;
  // The dims a lowering decides its program by: v's dims, or at the reference binding (dynamic).
  const Dims& choiceDims(const Value* v) const;

  int slot(const Value* v) const { return slots->at(v); }
  // "SCRATCH(off)": the device address of `bytes` bytes of temporary memory for the node being
  // lowered, valid across its phases. Launches run one after another, so each launch (a step, or
  // a joint group with all its phases) reuses the same scratch from offset 0; the members of one
  // launch get disjoint ranges.
  std::string scratch(int64_t bytes);
  // "S(12)": the device address of a value's bytes, as generated code spells it.
  std::string ptr(const Value* v) const;
  std::string typedPtr(const char* ctype, const Value* v, bool isConst) const;
};

// The items of one node with `tile` from the cost model (empty TileConfig: a default). Errors are
// kUnsupported and name the node and what is missing.
Expected<std::vector<GpuItem>> lowerNode(const Node& n, const TileConfig& tile, LowerContext& cx);

// Dynamic dimensions (gpu_dynamic.cpp): one launch's items as lowered at one binding, with the
// sizes of its scratch requests (LowerContext::scratchRequests).
struct DynLaunchText {
  std::vector<GpuItem> items;
  std::vector<int64_t> scratch;
};
// Lowers every launch, in order, with the graph's values at the dims they have now.
using DynLowerFn = std::function<Status(std::vector<DynLaunchText>*)>;
struct DynParamsResult {
  std::vector<DimExpr> exprs;  // MG_DIM(k) in the rewritten items is exprs[k] at the binding
  struct Scratch {
    DimExpr bytes;     // a request's size at the binding...
    int64_t reserved;  // ... which must not pass what is reserved for it
    std::string what;
  };
  std::vector<Scratch> scratch;
  int64_t scratchBytes = 0;  // the scratch region (the largest launch's)
};
// `launches` holds the items lowered at the reference binding (LowerContext::dynamic set); `lower`
// lowers them again at the binding the values' dims are set to. Fits every integer literal of
// the items' init that varies between bindings as an expression of the graph's symbols (coords:
// fitDimExpr's coordinates per launch), verifies them at the checking bindings, and rewrites the
// items' init: MG_DIM(k) for a varying literal, SCRATCH(offset) for SCRATCH_AT(r). kUnsupported,
// naming the launch (launchNames), when the items differ in anything else or a literal has no
// expression. The graph's value types are the reference ones again when it returns.
Status fitDynamicParams(const Graph& g, const std::vector<std::string>& launchNames,
                        const std::vector<std::vector<DimExpr>>& coords, const DynLowerFn& lower,
                        std::vector<DynLaunchText>* launches, DynParamsResult* result);

// Runs `f` with every symbolic value of g at its dims at binding `b` (the reference dims again
// after, whatever f returns): what the per-opt-size launch variants are chosen and lowered at.
Status withDynamicBinding(const Graph& g, const DimBinding& b, const std::function<Status()>& f);

// A lowering function: lowerNode's contract for the ops whose table entry names it.
using LowerFn = Expected<std::vector<GpuItem>> (*)(const Node& n, const TileConfig& tile, LowerContext& cx);
// The lowering of `op` (lowering_table.cpp), or nullptr when the cuda/hip targets have none.
LowerFn findLowering(const std::string& op);

// Whether lowerNode can handle the node (op, dtypes, attributes), with the reason when not.
Status gpuSupports(const Node& n);

// Shared helpers of the lowering files.
std::vector<int64_t> contiguousStrides(const Dims& d);
const char* ctypeOf(DType t);  // "float", "int64_t", ... or nullptr when the GPU target lacks it
std::string floatLiteral(double v);
std::string intList(const std::vector<int64_t>& v);  // "{1, 2, 3}"
// A block-program item of family `family` ("conv" -> mgk::convBlock<args>, mgk::convBlocks<args>,
// mgk::convSmemBytes<args>) over params `paramsType` (lower_compute.cpp).
GpuItem programItem(const std::string& family, const std::string& args,
                    const std::string& paramsType, int threads, bool syncs, const std::string& tile);
// --precision fp16's half storage (lower_compute.cpp): whether the programs of n read and write
// float16 (true) or float32 (false) tensors; an error when n mixes them (its program has one
// storage type S). setStorage adds S = mgk::Half to an item's program, blocks and smem templates.
Expected<bool> halfStorageOf(const Node& n);
void setStorage(GpuItem& it, bool half);
// A gemmBlock item with the cost model's GEMM tile (or the default); `init` left to the caller.
// fp16: the tensor-core program gemmF16Block (same tiles; all of kGemmTiles are multiples of 16).
GpuItem gemmItem(const TileConfig& tile, bool fp16 = false);
// Map items (lower_map.cpp): one operand of mgk::mapBlock, a strided view of a value, and the
// item out[o] = functor(operands) over `dims`; functorHead(name) opens a generated functor's
// struct and operator() (locals: in, idx, out, o), kFunctorTail closes it; functorName gives the
// next functor name of the step ("F<step>_<k>", unique in the package); itemsPerThread is the
// tile's elements per thread, or the default 4.
struct MapOperand {
  std::string ptr;               // "S(3)"
  int64_t offset = 0;
  std::vector<int64_t> strides;  // per output dim
};
GpuItem mapItem(const std::string& functorName, const std::string& functor, const Dims& dims,
                const std::vector<MapOperand>& ins, const std::string& outPtr, int64_t outOffset,
                const std::vector<int64_t>& outStrides, int items);
std::string functorHead(const std::string& name);
extern const char* const kFunctorTail;
std::string functorName(LowerContext& cx);
int itemsPerThread(const TileConfig& tile);
// Strides of `in` broadcast to `out` (numpy rules: right-aligned, extent-1 dims repeat).
std::vector<int64_t> broadcastStrides(const Dims& in, const Dims& out);
// The same for values, deciding which dims broadcast by LowerContext::choiceDims (a dynamic dim that
// is 1 at the reference broadcasts at every binding; one that is 1 only here, where the result's is
// not, broadcasts here only, which the dynamic fit then refuses). A dim of extent 1 in both may
// take any stride.
std::vector<int64_t> broadcastStrides(const LowerContext& cx, const Value* in, const Value* out);

// The lowering functions that lowering_table.cpp names, by file. Each refuses (kUnsupported) the
// element types and attributes that its programs do not cover.
//
// lower_compute.cpp: Conv (the 2-D/1-D float32 programs; hands the rest to lowerConvNd), Gemm and
// MatMul, MaxPool/AveragePool (hands the rest to lowerPoolNd), float32 Reduce* and the global
// pools, Softmax/LogSoftmax/LayerNormalization.
Expected<std::vector<GpuItem>> lowerConv(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerGemm(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerPool(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerReduce(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerRows(const Node& n, const TileConfig& tile, LowerContext& cx);
// lower_conv_nd.cpp: the direct programs of mg_conv_nd.cuh: Conv with 3+ spatial dims or on
// float64, ConvTranspose, MaxPool/AveragePool with 3+ spatial dims or on float64 (and AveragePool's
// count_include_pad with ceil_mode).
Expected<std::vector<GpuItem>> lowerConvNd(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerPoolNd(const Node& n, const TileConfig& tile, LowerContext& cx);
// lower_recurrent.cpp: LSTM, GRU, RNN.
Expected<std::vector<GpuItem>> lowerRecurrent(const Node& n, const TileConfig& tile, LowerContext& cx);
// Stacked recurrent layers of a wavefront group (passes/recurrent_wavefront.cpp): phase 0 holds
// layer 0's projection, every R transposed, W transposed for the layers above, and the progress
// flags' reset; phase 1 one co-resident launch of recurrentWavefrontBlock (layers*batch blocks,
// checked to fit on `device` at once). tile0: layer 0's projection tile.
Expected<std::vector<GpuItem>> lowerRecurrentWavefront(const std::vector<const Node*>& layers, const TileConfig& tile0,
                                                       const DeviceProfile& device, LowerContext& cx);
// lower_map.cpp: the elementwise ops on float32 (and int32/int64 where their expressions have an
// integer form), MgElementwise; BatchNormalization in inference mode.
Expected<std::vector<GpuItem>> lowerElementwise(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerBatchNorm(const Node& n, const TileConfig& tile, LowerContext& cx);
// lower_data_movement.cpp: lowerCopy is Reshape, Flatten, Squeeze, Unsqueeze and Identity (a flat
// copy); lowerArgMaxMin is ArgMax and ArgMin; the others are the op they are named after
// (lowerChannelSlice: MgChannelSlice).
Expected<std::vector<GpuItem>> lowerCopy(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerDropout(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerChannelSlice(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerTranspose(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerExpand(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerTile(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerSlice(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerPad(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerArgMaxMin(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerOneHot(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerConcat(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerSplit(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerGather(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerGatherND(const Node& n, const TileConfig& tile, LowerContext& cx);
// lower_loss.cpp: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
Expected<std::vector<GpuItem>> lowerLoss(const Node& n, const TileConfig& tile, LowerContext& cx);
// lower_signal.cpp: DFT, STFT and MelWeightMatrix.
Expected<std::vector<GpuItem>> lowerDFT(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerSTFT(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerMelWeightMatrix(const Node& n, const TileConfig& tile, LowerContext& cx);
// lower_vision.cpp: GridSample, RoiAlign, MaxUnpool, LRN, Det.
Expected<std::vector<GpuItem>> lowerGridSample(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerRoiAlign(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerMaxUnpool(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerLRN(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerDet(const Node& n, const TileConfig& tile, LowerContext& cx);

// The operators of opsets 18-21 and the element types that the float32 lowerings refuse
// (lower_opset.h says which file holds which).
// The producers of data-dependent extents (lower_select.cpp): mg_select.cuh's and mg_topk.cuh's
// programs, the count
// to MG_COUNT(k) (k: the data symbol) for the package to bind after the launch.
Expected<std::vector<GpuItem>> lowerNonZero(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerCompress(const Node& n, const TileConfig& tile, LowerContext& cx);
// TopK (a constant K, or a run-time one: then a data-dependent extent), Unique, NonMaxSuppression.
Expected<std::vector<GpuItem>> lowerTopK(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerUnique(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerNonMaxSuppression(const Node& n, const TileConfig& tile, LowerContext& cx);
// The binding the dynamic emitter is lowering at (set while a DynBindingScope holds one; null at
// the reference binding): shape data (MgSymbolic) a lowering reads, a Slice's run-time starts,
// is evaluated there.
const DimBinding* dynLoweringBinding();

namespace opset {
// ConstantOfShape (one value over the result's dims).
Expected<std::vector<GpuItem>> lowerConstantOfShape(const Node& n, const TileConfig& tile, LowerContext& cx);
// Cast, CastLike.
Expected<std::vector<GpuItem>> lowerCast(const Node& n, const TileConfig& tile, LowerContext& cx);
// BitwiseAnd/Or/Xor/Not, BitShift.
Expected<std::vector<GpuItem>> lowerBitwise(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerIsNanInf(const Node& n, const TileConfig& tile, LowerContext& cx);
// Unary math and the activations on a float64 operand.
Expected<std::vector<GpuItem>> lowerUnaryF64(const Node& n, const TileConfig& tile, LowerContext& cx);
// Reduce* on bool, integer and float64 tensors.
Expected<std::vector<GpuItem>> lowerTypedReduce(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerCenterCropPad(const Node& n, const TileConfig& tile, LowerContext& cx);
// QuantizeLinear, DequantizeLinear (the other quantization ops have no GPU lowering yet).
Expected<std::vector<GpuItem>> lowerQuantize(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerResize(const Node& n, const TileConfig& tile, LowerContext& cx);
// ScatterND, ScatterElements, Scatter.
Expected<std::vector<GpuItem>> lowerScatter(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerGroupNorm(const Node& n, const TileConfig& tile, LowerContext& cx);
// Col2Im, LpPool, DeformConv.
Expected<std::vector<GpuItem>> lowerWindow(const Node& n, const TileConfig& tile, LowerContext& cx);
}  // namespace opset

}  // namespace gpu
}  // namespace magneto
