// The package core's handle (mg_package.h's Model) and what its two source files share:
// mg_package.cpp (create, run, the step loop) and mg_package_dyn.cpp (dynamic dimensions: the
// symbol binding, set_input_dims, the shape-data elements, and the data symbols bound after their
// producing steps; docs/DYNAMIC_SHAPES.md). Internal to the runtime: a package's NAME.cpp includes
// only mg_package.h.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "mg_abi.h"
#include "mg_package.h"
#include "mg_runtime.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace pkg {
static_assert(abi::kMaxDims == kMaxRank, "slot tables hold kMaxRank dims");

using abi::AlignedBytes;
using abi::alignedAlloc;

struct Model {
  explicit Model(const Program& p) : program(&p) {}
  ~Model();
  const Program* program;
  std::string error;
  std::vector<mgrt::KernelFn> kernels;
  std::vector<mgrt::Attrs> attrs;
  std::vector<mgrt::Tensor> slots;
  std::vector<mgrt::Tensor> scratch;  // one step's operands and results
  // A parallel region's members run at once: each needs its own operands, results and error.
  std::vector<mgrt::Tensor> regionScratch;  // widest step x largest region
  std::vector<mgrt::Ctx> regionCtx;         // one per member of the largest region
  std::vector<int> regionAt;                // step -> index into regions starting there, or -1
  std::unique_ptr<std::atomic<int64_t>[]> regionProgress;  // per member: steps done (Ctx::progress)
  // What kernels keep between runs (weights packed into the GEMM's panel layout), one per step,
  // and which operands of each step are weights (constant while the handle lives).
  std::unique_ptr<mgrt::StepState[]> states;
  std::vector<uint32_t> constInputs;
  size_t widest = 1;
  AlignedBytes arena;
  AlignedBytes ownedWeights;                          // loaded from a weights file
  std::shared_ptr<const unsigned char> sharedWeights;  // the embedded ones, copied once per process
  const unsigned char* weights = nullptr;
  std::unique_ptr<mgrt::ThreadPool> pool;
  int threads = 1;
  std::atomic<bool> busy{false};
  // MAGNETO_PROFILE=1 in the environment: time every step, print a table when destroyed.
  bool profile = false;
  std::vector<double> stepSeconds;
  int64_t profiledRuns = 0;
  int64_t runsSeen = 0;        // runs of this handle, profiled or not
  double firstRunSeconds = 0;  // the first run's steps (weights packed on first use), left out
  // Dynamic dimensions (empty in a static package): the current value of every symbol (create:
  // each at its maximum), every slot's current byte size, the value of every DynEntry at the
  // binding, which inputs set_input_dims set since the last run (to catch two inputs giving one
  // symbol two values), and which kDynElement rows to write before step i runs (fillAt[i] ..
  // fillAt[i + 1] in fillRows; the rows of slots no step reads are written before the copies).
  std::vector<int64_t> binding;
  std::vector<int64_t> slotBytes;
  std::vector<int64_t> dynValues;
  std::vector<char> inputSetSinceRun;
  std::vector<int32_t> fillAt;
  std::vector<int32_t> fillRows;
  std::vector<int32_t> dimRows;   // [slot * kMaxDims + k]: the kDynDim row of that dim, or -1
  std::vector<int32_t> dynSlots;  // the slots with at least one kDynDim row
  // Data symbols (SymbolDesc::input == -1): the step producing each (-1: an input symbol), the
  // symbols each step produces, and the count a producing step's kernel reported this run.
  std::vector<int32_t> producerStep;
  std::vector<std::vector<int32_t>> stepSymbols;
  std::vector<int64_t> dataCount;
  // KV-cache binding: per KvDesc, the caller's buffer (null: not bound) and its capacity; while a
  // run of a bound handle lasts (kvActive), what each step does instead of its kernel (kvAction: 0
  // run it, -1 leave it out, k + 1 append piece k), every piece's `full` slot's own bytes (the
  // arena, restored after the run) and, per step and operand, the dense copies of pitched operands
  // of kernels that read packed tensors only.
  std::vector<void*> kvBuffer;
  std::vector<int64_t> kvCapacity;
  bool kvActive = false;
  std::vector<int32_t> kvAction;
  std::vector<void*> kvHome;
  std::vector<std::vector<unsigned char>> kvDense;
};

// "NAME_what": the prefix of a C function's messages.
std::string fn(const Program& p, const char* what);
// Records `message` as the handle's error (and the thread's) and returns `s`.
int fail(const Model* m, int s, const std::string& message);

// ---- Dynamic dimensions (mg_package_dyn.cpp) ----
// The symbol an expression is when it is a lone symbol, else -1.
int dynLoneSymbol(const Program& p, int32_t code);
// The DynEntry giving dim `k` of `slot`, or -1: the dim is static.
int dynDimRow(const Model* m, int slot, int k);
// Checks the tables once (create) and plans where each shape-data element is written.
int initDynamic(Model* m);
// Writes the shape-data elements due before step i (i == numSteps: before the output copies).
void dynFill(Model* m, int i);
// set_input_dims once the handle is known live and held.
int applyInputDims(Model* m, int input, const int64_t* dims, int rank);
// Binds the data symbols steps [first, end) produced to the counts their kernels reported.
int dynBindData(Model* m, int first, int end);

}  // namespace pkg
}  // namespace mgrt
