// The package core (see mg_package.h): the C interface of every CPU package, over its Program.
#include "mg_package.h"

#include "mg_abi.h"
#include "mg_dim_eval.h"
#include "mg_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mg_kernels.h"
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
};

namespace {

std::string fn(const Program& p, const char* what) { return std::string(p.name) + "_" + what; }

int fail(const Model* m, int s, const std::string& message) {
  return abi::report(m ? &const_cast<Model*>(m)->error : nullptr, s, message);
}

// True when m is a handle that this program's create() returned and destroy() has not freed.
bool isLive(const Program& p, const Model* m) { return abi::Registry::isLive(m, &p); }

int loadWeights(Model* m, const char* weightsPath) {
  const Program& p = *m->program;
  if (weightsPath) {
    int s = abi::loadWeightsFile(weightsPath, p.weightsBytes, p.weightsChecksum, m->ownedWeights, &m->error);
    if (s == kOk) m->weights = m->ownedWeights.get();
    return s;
  }
  int s = abi::shareEmbeddedWeights(p.name, p.embeddedWeights, p.embeddedWeightsEnd, p.weightsBytes,
                                    p.weightsChecksum, &m->sharedWeights, &m->error);
  if (s == kOk) m->weights = m->sharedWeights ? m->sharedWeights.get() : p.embeddedWeights;
  return s;
}

int setThreads(Model* m, int n) {
  m->pool.reset();
  m->threads = n;
  if (n > 1) m->pool.reset(new (std::nothrow) mgrt::ThreadPool(n));
  if (n > 1 && !m->pool) return fail(m, kErrOutOfMemory, "out of memory creating threads");
  return kOk;
}

// ---- Dynamic dimensions ----
// The binding gives every symbol a value; every DynEntry is an expression of it (a slot's dim, or
// an element of a small shape-data tensor). set_input_dims checks a candidate binding whole (every
// expression evaluates, no dim is negative, no slot needs more bytes than the arena was planned
// for at the maximum binding) before anything changes, so a refusal leaves the handle as it was.

// "input 0 ('x')", "output 1 ('y')" or "slot 12": what a message calls a slot.
std::string dynSlotName(const Program& p, int slot) {
  for (int i = 0; i < p.numInputs; ++i)
    if (p.inputs[i].slot == slot) return "input " + std::to_string(i) + " ('" + p.inputs[i].name + "')";
  for (int i = 0; i < p.numOutputs; ++i)
    if (p.outputs[i].slot == slot) return "output " + std::to_string(i) + " ('" + p.outputs[i].name + "')";
  return "slot " + std::to_string(slot);
}

std::string dynEntryName(const Program& p, const DynEntry& e) {
  return dynSlotName(p, e.slot) + (e.kind == abi::kDynDim ? " dim " : " element ") + std::to_string(e.index);
}

// The symbol an expression is when it is a lone symbol (what binds it from an input dim), else -1.
int dynLoneSymbol(const Program& p, int32_t code) {
  const int64_t* c = p.dimCode + code;
  return c[0] == abi::kDimSym && c[2] == abi::kDimEnd ? static_cast<int>(c[1]) : -1;
}

// The DynEntry giving dim `k` of `slot`, or -1: the dim is static.
int dynDimRow(const Model* m, int slot, int k) {
  return m->dimRows.empty() ? -1 : m->dimRows[static_cast<size_t>(slot) * abi::kMaxDims + k];
}

int64_t dynElementBytes(const SlotDesc& d) {
  return static_cast<int64_t>(mgrt::dtypeSize(d.dtype));
}

// Every DynEntry's value at `binding` into `values`, and the checks above; false with `why`.
bool dynEvaluateAt(const Model* m, const std::vector<int64_t>& binding, std::vector<int64_t>& values,
                   std::string& why) {
  const Program& p = *m->program;
  values.assign(p.numDyn, 0);
  for (int r = 0; r < p.numDyn; ++r) {
    const DynEntry& e = p.dyn[r];
    const int s = abi::evalDimCode(p.dimCode + e.code, binding.data(), p.numSymbols, &values[r]);
    if (s != abi::kDimEvalOk) {
      why = dynEntryName(p, e) + " cannot be computed: " + abi::dimEvalStatusText(s);
      return false;
    }
    const SlotDesc& d = p.slots[e.slot];
    if (e.kind == abi::kDynDim && values[r] < 0) {
      why = dynEntryName(p, e) + " would be " + std::to_string(values[r]) + ", negative";
      return false;
    }
    if (e.kind == abi::kDynElement && d.dtype == mgrt::kI32 &&
        (values[r] < INT32_MIN || values[r] > INT32_MAX)) {
      why = dynEntryName(p, e) + " would be " + std::to_string(values[r]) + ", outside int32";
      return false;
    }
  }
  // Byte sizes of the slots with symbolic dims, against what the plan reserved (their maximum).
  for (int32_t slot : m->dynSlots) {
    const SlotDesc& d = p.slots[slot];
    int64_t bytes = dynElementBytes(d);
    for (int k = 0; k < d.rank; ++k) {
      const int row = dynDimRow(m, slot, k);
      const int64_t dim = row >= 0 ? values[row] : d.dims[k];
      if (!abi::dim_eval::mul(bytes, dim, &bytes)) bytes = INT64_MAX;
    }
    if (bytes > d.bytes) {
      why = dynSlotName(p, slot) + " would need " + std::to_string(bytes) + " bytes, more than the " +
            std::to_string(d.bytes) + " planned for its largest shape";
      return false;
    }
  }
  return true;
}

// Makes `binding` (checked by dynEvaluateAt, which gave `values`) current: slot dims and sizes,
// and the kernel state of every step one of whose operands or results changed shape is dropped
// (kernels choose layouts and plans by shape: the convolution's packing depends on the output
// width, for one), to be rebuilt on the next run.
void dynCommit(Model* m, std::vector<int64_t>& binding, std::vector<int64_t>& values) {
  const Program& p = *m->program;
  std::vector<char> changed(p.numSlots, 0);
  for (int r = 0; r < p.numDyn; ++r) {
    const DynEntry& e = p.dyn[r];
    if (e.kind != abi::kDynDim) continue;
    int64_t& dim = m->slots[e.slot].dims[e.index];
    if (dim != values[r]) dim = values[r], changed[e.slot] = 1;
  }
  for (int s = 0; s < p.numSlots; ++s) {
    if (!changed[s]) continue;
    const SlotDesc& d = p.slots[s];
    m->slotBytes[s] = dynElementBytes(d) * m->slots[s].numel();
  }
  for (int i = 0; i < p.numSteps; ++i) {
    const int32_t* io = p.stepIo + p.steps[i].io;
    for (int a = 0; a < p.steps[i].nin + p.steps[i].nout; ++a)
      if (io[a] >= 0 && changed[io[a]]) {
        m->states[i].reset();
        break;
      }
  }
  m->binding.swap(binding);
  m->dynValues.swap(values);
}

// The symbols an expression mentions.
std::vector<int> dynCodeSymbols(const Program& p, int32_t code) {
  std::vector<int> out;
  for (const int64_t* c = p.dimCode + code; *c != abi::kDimEnd; ++c) {
    if (*c == abi::kDimConst) {
      ++c;
    } else if (*c == abi::kDimSym) {
      ++c;
      if (std::find(out.begin(), out.end(), static_cast<int>(*c)) == out.end()) out.push_back(static_cast<int>(*c));
    }
  }
  return out;
}

// The first step after step i's unit (its parallel region, or itself).
int dynUnitEnd(const Program& p, int i) {
  for (int g = 0; g < p.numRegions; ++g)
    if (i >= p.regions[g].first && i < p.regions[g].first + p.regions[g].count)
      return p.regions[g].first + p.regions[g].count;
  return i + 1;
}

// Checks the dynamic tables once (create): symbols and entries in range, every expression equal
// to the SlotDesc dims at the maximum binding, shape-data elements only in slots the run writes;
// then where each kDynElement row is written (before the first step reading its slot, or the
// region holding that step; before the output copies when no step reads it).
int initDynamic(Model* m) {
  const Program& p = *m->program;
  m->slotBytes.resize(p.numSlots);
  for (int i = 0; i < p.numSlots; ++i) m->slotBytes[i] = p.slots[i].bytes;
  m->inputSetSinceRun.assign(p.numInputs, 0);
  m->fillAt.assign(p.numSteps + 2, 0);
  m->binding.resize(p.numSymbols);
  auto bad = [&](const std::string& why) {
    return fail(m, kErrRuntime, "the package's dynamic-shape tables are inconsistent: " + why +
                                    " (compile the model again)");
  };
  for (int k = 0; k < p.numSymbols; ++k) {
    const SymbolDesc& y = p.symbols[k];
    if (y.lo < 0 || y.lo > y.hi) return bad("symbol '" + std::string(y.name) + "' has an empty range");
    m->binding[k] = y.hi;
  }
  for (int r = 0; r < p.numDyn; ++r) {
    const DynEntry& e = p.dyn[r];
    if (e.slot < 0 || e.slot >= p.numSlots || e.code < 0) return bad("entry " + std::to_string(r) + " has no slot");
    const SlotDesc& d = p.slots[e.slot];
    if (e.kind == abi::kDynDim && (e.index < 0 || e.index >= d.rank))
      return bad(dynEntryName(p, e) + ": no such dim");
    if (e.kind == abi::kDynDim) {
      if (m->dimRows.empty()) m->dimRows.assign(static_cast<size_t>(p.numSlots) * abi::kMaxDims, -1);
      int32_t& row = m->dimRows[static_cast<size_t>(e.slot) * abi::kMaxDims + e.index];
      if (row >= 0) return bad(dynEntryName(p, e) + " has two entries");
      bool seen = false;
      for (int k = 0; k < abi::kMaxDims; ++k) seen = seen || m->dimRows[static_cast<size_t>(e.slot) * abi::kMaxDims + k] >= 0;
      if (!seen) m->dynSlots.push_back(e.slot);
      row = r;
    }
    if (e.kind == abi::kDynElement) {
      int64_t n = 1;
      for (int k = 0; k < d.rank; ++k) n *= d.dims[k];
      if ((d.dtype != mgrt::kI64 && d.dtype != mgrt::kI32) || e.index < 0 || e.index >= n ||
          d.storage == kWeights || d.storage == kInput)
        return bad(dynEntryName(p, e) + ": not an element of an int64/int32 tensor the run writes");
    }
  }
  // Every symbol is bound from its input dim, or (a data symbol) from a dim of one step's result:
  // that dim's entry is the lone symbol.
  m->producerStep.assign(p.numSymbols, -1);
  m->stepSymbols.assign(p.numSteps, {});
  m->dataCount.assign(p.numSymbols, 0);
  for (int k = 0; k < p.numSymbols; ++k) {
    const SymbolDesc& y = p.symbols[k];
    if (y.input < 0) {
      if (y.slot < 0 || y.slot >= p.numSlots)
        return bad("data symbol '" + std::string(y.name) + "' names slot " + std::to_string(y.slot));
      for (int i = 0; i < p.numSteps && m->producerStep[k] < 0; ++i) {
        const int32_t* io = p.stepIo + p.steps[i].io;
        for (int a = p.steps[i].nin; a < p.steps[i].nin + p.steps[i].nout; ++a)
          if (io[a] == y.slot) m->producerStep[k] = i;
      }
      const int row = m->producerStep[k] >= 0 && y.dim >= 0 && y.dim < p.slots[y.slot].rank
                          ? dynDimRow(m, y.slot, y.dim)
                          : -1;
      if (row < 0 || dynLoneSymbol(p, p.dyn[row].code) != k)
        return bad("data symbol '" + std::string(y.name) + "' is not dim " + std::to_string(y.dim) + " of a step's result " +
                   dynSlotName(p, y.slot));
      m->stepSymbols[m->producerStep[k]].push_back(k);
      continue;
    }
    const int slot = y.input >= 0 && y.input < p.numInputs ? p.inputs[y.input].slot : -1;
    const int row = slot >= 0 && y.dim >= 0 && y.dim < p.slots[slot].rank ? dynDimRow(m, slot, y.dim) : -1;
    if (row < 0 || dynLoneSymbol(p, p.dyn[row].code) != k)
      return bad("symbol '" + std::string(y.name) + "' is not input " + std::to_string(y.input) + " dim " +
                 std::to_string(y.dim));
  }
  std::vector<int64_t> binding = m->binding, values;
  std::string why;
  if (!dynEvaluateAt(m, binding, values, why)) return bad(why);
  for (int r = 0; r < p.numDyn; ++r)
    if (p.dyn[r].kind == abi::kDynDim && values[r] != p.slots[p.dyn[r].slot].dims[p.dyn[r].index])
      return bad(dynEntryName(p, p.dyn[r]) + " is " + std::to_string(values[r]) +
                 " at the maximum binding, its slot says " +
                 std::to_string(p.slots[p.dyn[r].slot].dims[p.dyn[r].index]));
  m->dynValues = values;
  // Where each kDynElement row is written.
  std::vector<int32_t> at(p.numDyn, -1);
  for (int r = 0; r < p.numDyn; ++r) {
    if (p.dyn[r].kind != abi::kDynElement) continue;
    at[r] = p.numSteps;
    for (int i = 0; i < p.numSteps && at[r] == p.numSteps; ++i) {
      const int32_t* io = p.stepIo + p.steps[i].io;
      for (int a = 0; a < p.steps[i].nin; ++a)
        if (io[a] == p.dyn[r].slot) at[r] = i;
    }
    for (int g = 0; g < p.numRegions; ++g)
      if (at[r] >= p.regions[g].first && at[r] < p.regions[g].first + p.regions[g].count)
        at[r] = p.regions[g].first;
    // An element depending on a data symbol is known once its producer (and the producer's region)
    // ran; the compiler orders every reader after that.
    for (int k : dynCodeSymbols(p, p.dyn[r].code)) {
      if (m->producerStep[k] < 0) continue;
      const int after = dynUnitEnd(p, m->producerStep[k]);
      if (at[r] < after) {
        if (at[r] < p.numSteps)
          return bad(dynEntryName(p, p.dyn[r]) + " is read by step " + std::to_string(at[r]) +
                     " before data symbol '" + p.symbols[k].name + "' is computed by step " +
                     std::to_string(m->producerStep[k]));
        at[r] = after;
      }
    }
  }
  for (int i = 0; i <= p.numSteps; ++i) {
    m->fillAt[i] = static_cast<int32_t>(m->fillRows.size());
    for (int r = 0; r < p.numDyn; ++r)
      if (at[r] == i) m->fillRows.push_back(r);
  }
  m->fillAt[p.numSteps + 1] = static_cast<int32_t>(m->fillRows.size());
  return kOk;
}

// Writes the shape-data elements due before step i (i == numSteps: before the output copies).
void dynFill(Model* m, int i) {
  const Program& p = *m->program;
  for (int32_t k = m->fillAt[i]; k < m->fillAt[i + 1]; ++k) {
    const int r = m->fillRows[k];
    const DynEntry& e = p.dyn[r];
    void* data = m->slots[e.slot].data;
    if (p.slots[e.slot].dtype == mgrt::kI64)
      static_cast<int64_t*>(data)[e.index] = m->dynValues[r];
    else
      static_cast<int32_t*>(data)[e.index] = static_cast<int32_t>(m->dynValues[r]);
  }
}

// set_input_dims once the handle is known live and held: see mg_package.h.
int applyInputDims(Model* m, int input, const int64_t* dims, int rank) {
  const Program& p = *m->program;
  const std::string f = fn(p, "set_input_dims") + ": ";
  const int slot = p.inputs[input].slot;
  const SlotDesc& d = p.slots[slot];
  const std::string who = dynSlotName(p, slot);
  auto dimsText = [&](const int64_t* v, int n) {
    std::string t = "[";
    for (int k = 0; k < n; ++k) t += (k ? "x" : "") + std::to_string(v[k]);
    return t + "]";
  };
  if (rank != d.rank)
    return fail(m, kErrInvalidArgument,
                f + who + " has rank " + std::to_string(d.rank) + ", got " + std::to_string(rank) + " dims " +
                    dimsText(dims, rank));
  std::vector<int64_t> binding = m->binding;
  // Data symbols go back to their maximum: until the next run computes them, the outputs they
  // shape report their capacity (what a caller's buffer must hold).
  for (int k = 0; k < p.numSymbols; ++k)
    if (p.symbols[k].input < 0) binding[k] = p.symbols[k].hi;
  std::vector<int> boundAt(p.numSymbols, -1);  // the dim of this input that bound the symbol
  for (int k = 0; k < rank; ++k) {
    const int row = dynDimRow(m, slot, k);
    if (row < 0) {
      if (dims[k] != d.dims[k])
        return fail(m, kErrInvalidArgument,
                    f + who + " dim " + std::to_string(k) + " is static: it must be " + std::to_string(d.dims[k]) +
                        ", got " + std::to_string(dims[k]) + " (dims " + dimsText(dims, rank) + ")");
      continue;
    }
    const int s = dynLoneSymbol(p, p.dyn[row].code);
    if (s < 0 || s >= p.numSymbols) continue;  // an expression: checked once the binding is known
    const SymbolDesc& y = p.symbols[s];
    const std::string sym = "symbol '" + std::string(y.name) + "'";
    if (dims[k] < y.lo || dims[k] > y.hi)
      return fail(m, kErrInvalidArgument,
                  f + who + " dim " + std::to_string(k) + " (" + sym + ") must be in [" + std::to_string(y.lo) +
                      ", " + std::to_string(y.hi) + "], got " + std::to_string(dims[k]));
    if (boundAt[s] >= 0 && binding[s] != dims[k])
      return fail(m, kErrInvalidArgument,
                  f + who + " dims " + std::to_string(boundAt[s]) + " and " + std::to_string(k) + " are both " + sym +
                      " but are " + std::to_string(binding[s]) + " and " + std::to_string(dims[k]));
    // Another input set since the last run that gives the symbol another value.
    for (int j = 0; j < p.numInputs; ++j) {
      if (j == input || !m->inputSetSinceRun[j]) continue;
      const int sj = p.inputs[j].slot;
      for (int kj = 0; kj < p.slots[sj].rank; ++kj) {
        const int rj = dynDimRow(m, sj, kj);
        if (rj < 0 || dynLoneSymbol(p, p.dyn[rj].code) != s || m->slots[sj].dims[kj] == dims[k]) continue;
        return fail(m, kErrInvalidArgument,
                    f + sym + " is " + std::to_string(m->slots[sj].dims[kj]) + " in " + dynSlotName(p, sj) +
                        " dim " + std::to_string(kj) + " (set since the last run), but " + who + " dim " +
                        std::to_string(k) + " gives " + std::to_string(dims[k]) +
                        ": every input must agree on a symbol's value");
      }
    }
    binding[s] = dims[k];
    boundAt[s] = k;
  }
  std::vector<int64_t> values;
  std::string why;
  if (!dynEvaluateAt(m, binding, values, why))
    return fail(m, kErrInvalidArgument, f + who + " dims " + dimsText(dims, rank) + " refused: " + why);
  for (int k = 0; k < rank; ++k) {
    const int row = dynDimRow(m, slot, k);
    if (row >= 0 && values[row] != dims[k])
      return fail(m, kErrInvalidArgument,
                  f + who + " dim " + std::to_string(k) + " must be " + std::to_string(values[row]) +
                      " with the other dims given, got " + std::to_string(dims[k]));
  }
  dynCommit(m, binding, values);
  m->inputSetSinceRun[input] = 1;
  return kOk;
}

int init(Model* m, const char* weightsPath) {
  const Program& p = *m->program;
  int s = loadWeights(m, weightsPath);
  if (s != kOk) return s;
  m->arena = alignedAlloc(static_cast<uint64_t>(p.arenaBytes));
  if (!m->arena)
    return fail(m, kErrOutOfMemory,
                "out of memory allocating the " + std::to_string(p.arenaBytes) + "-byte arena");
  m->slots.resize(p.numSlots);
  for (int i = 0; i < p.numSlots; ++i) {
    const SlotDesc& d = p.slots[i];
    mgrt::Tensor& t = m->slots[i];
    t.dtype = d.dtype;
    t.rank = d.rank;
    for (int k = 0; k < d.rank; ++k) t.dims[k] = d.dims[k];
    if (d.storage == kArena) t.data = m->arena.get() + d.where;
    if (d.storage == kWeights) t.data = const_cast<unsigned char*>(m->weights) + d.where;
  }
  if (int ds = initDynamic(m); ds != kOk) return ds;
  m->kernels.resize(p.numSteps);
  m->attrs.reserve(p.numSteps);
  size_t widest = 1;
  for (int i = 0; i < p.numSteps; ++i) {
    const StepDesc& st = p.steps[i];
    mgrt::KernelFn k = mgrt::findFastKernel(st.op);
    if (!k) k = mgrt::findKernel(st.op);
    if (!k)
      return fail(m, kErrRuntime,
                  std::string("the runtime has no kernel for op '") + st.op + "' (node '" +
                      st.node + "'): the package's runtime/ does not match the compiler");
    m->kernels[i] = k;
    m->attrs.emplace_back(st.attrs);
    widest = std::max(widest, static_cast<size_t>(st.nin + st.nout));
  }
  m->scratch.resize(widest);
  m->widest = widest;
  m->states.reset(new (std::nothrow) mgrt::StepState[p.numSteps > 0 ? p.numSteps : 1]);
  if (!m->states) return fail(m, kErrOutOfMemory, "out of memory creating step states");
  m->constInputs.assign(p.numSteps, 0u);
  for (int i = 0; i < p.numSteps; ++i) {
    const int32_t* io = p.stepIo + p.steps[i].io;
    for (int k = 0; k < p.steps[i].nin && k < 32; ++k)
      if (io[k] >= 0 && p.slots[io[k]].storage == kWeights) m->constInputs[i] |= 1u << k;
  }
  m->regionAt.assign(p.numSteps, -1);
  size_t largest = 0;
  for (int r = 0; r < p.numRegions; ++r) {
    m->regionAt[p.regions[r].first] = r;
    largest = std::max(largest, static_cast<size_t>(p.regions[r].count));
  }
  m->regionScratch.resize(widest * largest);
  m->regionCtx.resize(largest);
  m->regionProgress.reset(new std::atomic<int64_t>[largest > 0 ? largest : 1]);
  const char* prof = std::getenv("MAGNETO_PROFILE");
  m->profile = prof && *prof && std::strcmp(prof, "0") != 0;
  m->stepSeconds.assign(p.numSteps, 0.0);
  unsigned hw = std::thread::hardware_concurrency();
  return setThreads(m, hw == 0 ? 1 : static_cast<int>(hw));
}

// Runs step i's kernel on the operand tensors `t` (its nin operands, then its nout results, filled
// here from stepIo) with context `c` (whose pool the caller chose): the step's state and constant
// operands, the profile's timing. Returns the kernel's status; on failure c.error says why.
int runStep(Model* m, int i, mgrt::Tensor* t, mgrt::Ctx& c) {
  const Program& p = *m->program;
  const StepDesc& st = p.steps[i];
  const int32_t* io = p.stepIo + st.io;
  for (int a = 0; a < st.nin + st.nout; ++a) t[a] = io[a] >= 0 ? m->slots[io[a]] : mgrt::Tensor();
  // A step producing data symbols gets the result dims that are those symbols at their capacity
  // (the slot's largest shape, what memory holds); its kernel sets them to the actual extents. (A
  // result dim that is another step's data symbol, like Unique's inverse_indices over a NonZero's
  // count, is already bound.)
  c.dataExtents = !m->stepSymbols.empty() && !m->stepSymbols[i].empty();
  if (c.dataExtents)
    for (int a = st.nin; a < st.nin + st.nout; ++a)
      for (int k = 0; io[a] >= 0 && k < p.slots[io[a]].rank; ++k) {
        const int row = dynDimRow(m, io[a], k);
        const int sym = row >= 0 ? dynLoneSymbol(p, p.dyn[row].code) : -1;
        if (sym >= 0 && m->producerStep[sym] == i) t[a].dims[k] = p.slots[io[a]].dims[k];
      }
  c.error[0] = '\0';
  c.state = &m->states[i];
  c.constInputs = m->constInputs[i];
  auto t0 = m->profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  int rc = m->kernels[i](m->attrs[i], t, st.nin, t + st.nin, st.nout, c);
  if (m->profile)
    m->stepSeconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0 && c.error[0] == '\0') std::snprintf(c.error, sizeof c.error, "kernel failed");
  if (rc == 0 && c.dataExtents)
    for (int k : m->stepSymbols[i]) {
      const SymbolDesc& y = p.symbols[k];
      for (int a = st.nin; a < st.nin + st.nout; ++a)
        if (io[a] == y.slot) m->dataCount[k] = t[a].dims[y.dim];
    }
  return rc;
}

// After steps [first, end) ran: binds the data symbols they produced to the counts their kernels
// reported and makes the new binding current (slot dims and sizes, kernel states, the shape-data
// elements written from then on). A count outside the symbol's range (a kernel that wrote more
// than its result holds) fails the run, naming the step.
int dynBindData(Model* m, int first, int end) {
  const Program& p = *m->program;
  bool any = false;
  std::vector<int64_t> binding = m->binding;
  for (int i = first; i < end; ++i)
    for (int k : m->stepSymbols[i]) {
      const SymbolDesc& y = p.symbols[k];
      const int64_t n = m->dataCount[k];
      if (n < y.lo || n > y.hi)
        return fail(m, kErrRuntime,
                    std::string("step ") + std::to_string(i) + " (" + p.steps[i].op + ", node '" + p.steps[i].node +
                        "') computed extent " + std::to_string(n) + " for data symbol '" + y.name +
                        "', outside its range [" + std::to_string(y.lo) + ", " + std::to_string(y.hi) + "]");
      any |= binding[k] != n;
      binding[k] = n;
    }
  if (!any) return kOk;
  std::vector<int64_t> values;
  std::string why;
  if (!dynEvaluateAt(m, binding, values, why))
    return fail(m, kErrRuntime, std::string("the data-dependent extents of step ") + std::to_string(first) + " (" +
                                    p.steps[first].op + ", node '" + p.steps[first].node + "') give an invalid shape: " + why);
  dynCommit(m, binding, values);
  return kOk;
}

int stepFailed(Model* m, int i, const mgrt::Ctx& c) {
  const StepDesc& st = m->program->steps[i];
  return fail(m, kErrRuntime,
              std::string("step ") + std::to_string(i) + " (" + st.op + ", node '" + st.node +
                  "') failed: " + c.error);
}

// One joint group's members as one parallel region: the pool's threads take members one at a
// time (biggest first; a wavefront's layers in layer order, so a member waiting on the one before
// always has it running or done) and run each whole on one thread (its kernel sees no pool). Errors are
// reported for the first failing member in step order, as a sequential run would.
int runRegion(Model* m, const RegionDesc& r) {
  const int32_t* order = m->program->regionOrder + r.order;
  std::atomic<int64_t>* progress = m->regionProgress.get();
  for (int slot = 0; slot < r.count; ++slot) progress[slot].store(0, std::memory_order_relaxed);
  m->pool->runInOrder(r.count, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int i = order[k];
      const int slot = i - r.first;
      mgrt::Ctx& c = m->regionCtx[slot];
      c.pool = nullptr;
      c.progress = &progress[slot];
      c.upstream = slot > 0 ? &progress[slot - 1] : nullptr;
      runStep(m, i, m->regionScratch.data() + static_cast<size_t>(slot) * m->widest, c);
      progress[slot].store(mgrt::Ctx::kProgressDone, std::memory_order_release);
    }
  });
  for (int slot = 0; slot < r.count; ++slot)
    if (m->regionCtx[slot].error[0] != '\0') return stepFailed(m, r.first + slot, m->regionCtx[slot]);
  return kOk;
}

int execute(Model* m, const void* const* inputs, void* const* outputs) {
  const Program& p = *m->program;
  static unsigned char empty[64];
  std::fill(m->inputSetSinceRun.begin(), m->inputSetSinceRun.end(), 0);
  for (int i = 0; i < p.numInputs; ++i) {
    const void* ptr = inputs[i] ? inputs[i] : (m->slotBytes[p.inputs[i].slot] == 0 ? empty : nullptr);
    if (!ptr)
      return fail(m, kErrInvalidArgument,
                  std::string("input ") + std::to_string(i) + " ('" + p.inputs[i].name +
                      "') is a null pointer");
    m->slots[p.inputs[i].slot].data = const_cast<void*>(ptr);
  }
  for (int i = 0; i < p.numOutputs; ++i) {
    const SlotDesc& d = p.slots[p.outputs[i].slot];
    void* ptr = outputs[i] ? outputs[i] : (m->slotBytes[p.outputs[i].slot] == 0 ? empty : nullptr);
    if (!ptr)
      return fail(m, kErrInvalidArgument,
                  std::string("output ") + std::to_string(i) + " ('" + p.outputs[i].name +
                      "') is a null pointer");
    if (d.storage == kOutput && d.where == i) m->slots[p.outputs[i].slot].data = ptr;
  }
  mgrt::Ctx ctx;
  ctx.pool = m->pool.get();
  const bool fills = !m->fillRows.empty();
  bool hasData = false;
  for (int32_t k : m->producerStep) hasData |= k >= 0;
  for (int i = 0; i < p.numSteps; ++i) {
    if (fills) dynFill(m, i);
    if (m->regionAt[i] >= 0 && m->pool) {
      const RegionDesc& r = p.regions[m->regionAt[i]];
      int s = runRegion(m, r);
      if (s != kOk) return s;
      if (hasData && (s = dynBindData(m, r.first, r.first + r.count)) != kOk) return s;
      i += r.count - 1;
      continue;
    }
    if (runStep(m, i, m->scratch.data(), ctx) != 0) return stepFailed(m, i, ctx);
    if (hasData && !m->stepSymbols[i].empty())
      if (int s = dynBindData(m, i, i + 1); s != kOk) return s;
  }
  if (m->profile) {
    // The first run of a handle also packs each layer's weights into its kernel's panels (done
    // once per handle, on first use): kept apart, so the averages show the steady state.
    if (m->runsSeen == 0) {
      for (double& s : m->stepSeconds) m->firstRunSeconds += s, s = 0.0;
    } else {
      ++m->profiledRuns;
    }
  }
  ++m->runsSeen;
  if (fills) dynFill(m, p.numSteps);
  for (int i = 0; i < p.numCopies; ++i) {
    const CopyDesc& c = p.copies[i];
    if (m->slotBytes[c.slot] > 0)
      std::memcpy(outputs[c.output], m->slots[c.slot].data, static_cast<size_t>(m->slotBytes[c.slot]));
  }
  return kOk;
}

void printProfile(const Model* m) {
  if (!m->profile || m->profiledRuns == 0) return;
  const Program& p = *m->program;
  std::vector<int> order(p.numSteps);
  double total = 0;
  for (int i = 0; i < p.numSteps; ++i) order[i] = i, total += m->stepSeconds[i];
  std::stable_sort(order.begin(), order.end(),
                   [m](int a, int b) { return m->stepSeconds[a] > m->stepSeconds[b]; });
  std::fprintf(stderr, "%s profile: %lld runs, %.3f ms per run in %d steps (slowest first)\n", p.name,
               static_cast<long long>(m->profiledRuns), 1e3 * total / m->profiledRuns, p.numSteps);
  std::fprintf(stderr, "  (the first run, %.3f ms, packs weights on first use and is left out)\n",
               1e3 * m->firstRunSeconds);
  if (p.numRegions > 0 && m->threads > 1)
    std::fprintf(stderr, "  (%d parallel regions: their members' times overlap, so the sum exceeds the run time)\n",
                 p.numRegions);
  // Per op kind (the step's op: fused chains are MgElementwise), most time first.
  std::vector<std::string> kinds;
  std::vector<double> kindSeconds;
  std::vector<int> kindSteps;
  for (int i = 0; i < p.numSteps; ++i) {
    size_t k = 0;
    while (k < kinds.size() && kinds[k] != p.steps[i].op) ++k;
    if (k == kinds.size()) kinds.push_back(p.steps[i].op), kindSeconds.push_back(0.0), kindSteps.push_back(0);
    kindSeconds[k] += m->stepSeconds[i];
    ++kindSteps[k];
  }
  std::vector<size_t> byKind(kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) byKind[k] = k;
  std::stable_sort(byKind.begin(), byKind.end(),
                   [&](size_t a, size_t b) { return kindSeconds[a] > kindSeconds[b]; });
  std::fprintf(stderr, "  by op kind:\n");
  for (size_t k : byKind)
    std::fprintf(stderr, "  %8.3f ms  %5.1f%%  %-20s %d step(s)\n", 1e3 * kindSeconds[k] / m->profiledRuns,
                 total > 0 ? 100.0 * kindSeconds[k] / total : 0.0, kinds[k].c_str(), kindSteps[k]);
  // The 25 slowest steps, or MAGNETO_PROFILE_STEPS of them (0: every step).
  int shown = 25;
  if (const char* e = std::getenv("MAGNETO_PROFILE_STEPS")) {
    const int n = std::atoi(e);
    shown = n > 0 ? n : p.numSteps;
  }
  std::fprintf(stderr, "  slowest steps:\n");
  for (int k = 0; k < p.numSteps && k < shown; ++k) {
    int i = order[k];
    std::fprintf(stderr, "  %8.3f ms  %5.1f%%  step %3d  %-20s %s\n",
                 1e3 * m->stepSeconds[i] / m->profiledRuns,
                 total > 0 ? 100.0 * m->stepSeconds[i] / total : 0.0, i, p.steps[i].op, p.steps[i].node);
  }
}

const SlotDesc* port(const Program& p, bool output, int index) {
  return output ? abi::port(p.slots, p.outputs, p.numOutputs, index, "output")
                : abi::port(p.slots, p.inputs, p.numInputs, index, "input");
}

}  // namespace

Model::~Model() { printProfile(this); }

int create(const Program& p, Model** model, const char* weightsPath) {
  if (!model) return fail(nullptr, kErrInvalidArgument, fn(p, "create") + ": model is NULL");
  *model = nullptr;
  try {
    std::unique_ptr<Model> m(new (std::nothrow) Model(p));
    if (!m) return fail(nullptr, kErrOutOfMemory, "out of memory creating a handle");
    int s = init(m.get(), weightsPath);
    if (s != kOk) return s;
    abi::Registry::add(m.get(), &p);
    *model = m.release();
    return kOk;
  } catch (const std::bad_alloc&) {
    return fail(nullptr, kErrOutOfMemory, "out of memory creating a handle");
  } catch (...) {
    return fail(nullptr, kErrRuntime, "unexpected error creating a handle");
  }
}

int setNumThreads(const Program& p, Model* model, int n) {
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "set_num_threads") + ": not a live handle (NULL or destroyed)");
  if (n < 1)
    return fail(model, kErrInvalidArgument,
                fn(p, "set_num_threads") + ": n must be at least 1, got " + std::to_string(n));
  // Refused as busy: the message goes to this thread only. The handle's own message belongs to
  // the thread running it (writing it here would race with other refused callers).
  if (model->busy.exchange(true))
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "set_num_threads") + ": the handle is running on another thread");
  int s;
  try {
    s = setThreads(model, n);
  } catch (...) {
    s = fail(model, kErrOutOfMemory, "cannot start " + std::to_string(n) + " threads");
  }
  model->busy = false;
  return s;
}

int run(const Program& p, Model* model, const void* const* inputs, void* const* outputs) {
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument, fn(p, "run") + ": not a live handle (NULL or destroyed)");
  if ((!inputs && p.numInputs > 0) || (!outputs && p.numOutputs > 0))
    return fail(model, kErrInvalidArgument,
                fn(p, "run") + ": the " + (!outputs ? "outputs" : "inputs") + " array is NULL");
  if (model->busy.exchange(true))  // the message goes to this thread only, as above
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "run") + ": the handle is already running on another thread (use one handle "
                               "per thread)");
  int s;
  try {
    s = execute(model, inputs, outputs);
  } catch (const std::bad_alloc&) {
    s = fail(model, kErrOutOfMemory, "out of memory while running");
  } catch (...) {
    s = fail(model, kErrRuntime, "unexpected error while running");
  }
  model->busy = false;
  return s;
}

void destroy(const Program& p, Model* model) {
  if (!model) return;
  if (!abi::Registry::remove(model, &p)) {
    abi::threadError() = fn(p, "destroy") + ": not a live handle (destroyed twice?)";
    return;
  }
  delete model;
}

const char* lastError(const Program& p, const Model* model) {
  if (model && isLive(p, model)) return model->error.c_str();
  return abi::threadError().c_str();
}

const char* portName(const Program& p, bool output, int i) {
  return port(p, output, i) ? (output ? p.outputs : p.inputs)[i].name : nullptr;
}
int portRank(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? d->rank : -1;
}
const int64_t* portDims(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? d->dims : nullptr;
}
int portDtype(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? d->dtype : -1;
}
size_t portBytes(const Program& p, bool output, int i) {
  const SlotDesc* d = port(p, output, i);
  return d ? static_cast<size_t>(d->bytes) : 0;
}

int setInputDims(const Program& p, Model* model, int input, const int64_t* dims, int rank) {
  const std::string f = fn(p, "set_input_dims") + ": ";
  if (!model || !isLive(p, model))
    return fail(nullptr, kErrInvalidArgument, f + "not a live handle (NULL or destroyed)");
  if (input < 0 || input >= p.numInputs)
    return fail(model, kErrInvalidArgument,
                f + "input index " + std::to_string(input) + " is out of range [0, " + std::to_string(p.numInputs) + ")");
  if (rank < 0 || rank > abi::kMaxDims || (rank > 0 && !dims))
    return fail(model, kErrInvalidArgument,
                f + (rank > 0 && !dims ? std::string("dims is NULL") : "rank " + std::to_string(rank) + " is invalid"));
  if (model->busy.exchange(true))  // the message goes to this thread only (see setNumThreads)
    return fail(nullptr, kErrInvalidArgument, f + "the handle is running on another thread");
  int s;
  try {
    s = applyInputDims(model, input, dims, rank);
  } catch (const std::bad_alloc&) {
    s = fail(model, kErrOutOfMemory, "out of memory setting input dims");
  } catch (...) {
    s = fail(model, kErrRuntime, "unexpected error setting input dims");
  }
  model->busy = false;
  return s;
}

const int64_t* modelPortDims(const Program& p, const Model* model, bool output, int i) {
  if (!model || !isLive(p, model)) {
    abi::threadError() = fn(p, output ? "model_output_dims" : "model_input_dims") + ": not a live handle";
    return nullptr;
  }
  if (!port(p, output, i)) return nullptr;
  return model->slots[(output ? p.outputs : p.inputs)[i].slot].dims;
}

size_t modelPortBytes(const Program& p, const Model* model, bool output, int i) {
  if (!model || !isLive(p, model)) {
    abi::threadError() = fn(p, output ? "model_output_bytes" : "model_input_bytes") + ": not a live handle";
    return 0;
  }
  if (!port(p, output, i)) return 0;
  return static_cast<size_t>(model->slotBytes[(output ? p.outputs : p.inputs)[i].slot]);
}

int numSymbols(const Program& p) { return p.numSymbols; }

const char* symbolName(const Program& p, int k) {
  if (k < 0 || k >= p.numSymbols) {
    abi::threadError() = fn(p, "symbol_name") + ": symbol index " + std::to_string(k) + " is out of range [0, " +
                         std::to_string(p.numSymbols) + ")";
    return nullptr;
  }
  return p.symbols[k].name;
}

int symbolRange(const Program& p, int k, int64_t* lo, int64_t* hi) {
  if (k < 0 || k >= p.numSymbols)
    return fail(nullptr, kErrInvalidArgument,
                fn(p, "symbol_range") + ": symbol index " + std::to_string(k) + " is out of range [0, " +
                    std::to_string(p.numSymbols) + ")");
  if (lo) *lo = p.symbols[k].lo;
  if (hi) *hi = p.symbols[k].hi;
  return kOk;
}

}  // namespace pkg
}  // namespace mgrt
