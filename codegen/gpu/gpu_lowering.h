// GPU lowering: one IR node -> the block programs ("items") that compute it, as C++ text for the
// generated NAME.cu (see runtime/gpu/kernels/mg_kparams.h for the block-program contract and
// include/magneto/codegen/gpu_emitter.h for how items become kernels and launches).
//
// An item is one block program with its parameters: "run mgk::convBlock<64, 32, 128> over the
// blocks of this ConvParams". Most nodes are one item; a Concat or a Split is one item per piece
// (a copy into or out of a strided view), and their items share one launch like a joint group's.
// Parameters are filled once, when a handle is created, from the slots' device addresses
// (`S(k)` in the generated code); nothing shape-dependent is computed at run time.
#pragma once

#include <cstdint>
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
  bool fp16 = false;  // --precision fp16: Gemm/MatMul/Conv on the tensor-core programs (F16)

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
// A gemmBlock item with the cost model's GEMM tile (or the default); `init` left to the caller.
// fp16: the tensor-core program gemmF16Block (same tiles; all of kGemmTiles are multiples of 16).
GpuItem gemmItem(const TileConfig& tile, bool fp16 = false);
// Map items (lower_map.cpp): one operand of mgk::mapBlock, a strided view of a value, and the
// item out[o] = functor(operands) over `dims`; functorHead(name) opens a generated functor's
// struct and operator() (locals: in, idx, out, o), kFunctorTail closes it.
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
// Strides of `in` broadcast to `out` (numpy rules: right-aligned, extent-1 dims repeat).
std::vector<int64_t> broadcastStrides(const Dims& in, const Dims& out);

// Lowering per family (lower_map.cpp, lower_compute.cpp); each returns false when it does not
// handle the node's kind, so that lowerNode can try the next.
bool lowerMapFamily(const Node& n, const TileConfig& tile, LowerContext& cx,
                    Expected<std::vector<GpuItem>>& out);
bool lowerComputeFamily(const Node& n, const TileConfig& tile, LowerContext& cx,
                        Expected<std::vector<GpuItem>>& out);
bool lowerRecurrentFamily(const Node& n, const TileConfig& tile, LowerContext& cx,
                          Expected<std::vector<GpuItem>>& out);  // lower_recurrent.cpp
// lower_opset.cpp: the operators of opsets 18-21 and the element types that the other families
// refuse (it claims a node only then, so lowerNode asks it first).
bool lowerOpsetFamily(const Node& n, const TileConfig& tile, LowerContext& cx,
                      Expected<std::vector<GpuItem>>& out);
// lower_conv_nd.cpp: the direct programs of mg_conv_nd.cuh: Conv with 3+ spatial dims or on
// float64, ConvTranspose, MaxPool/AveragePool with 3+ spatial dims or on float64 (and AveragePool's
// count_include_pad with ceil_mode); lower_compute.cpp hands those nodes over.
Expected<std::vector<GpuItem>> lowerConvNd(const Node& n, const TileConfig& tile, LowerContext& cx);
Expected<std::vector<GpuItem>> lowerPoolNd(const Node& n, const TileConfig& tile, LowerContext& cx);

}  // namespace gpu
}  // namespace magneto
