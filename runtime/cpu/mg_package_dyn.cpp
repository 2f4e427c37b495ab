// The package core's dynamic dimensions (mg_package_model.h; docs/DYNAMIC_SHAPES.md): the binding
// of the symbols (from input dims, or for a data symbol from the count its producing step's kernel
// reported), the evaluation of every DynEntry at a binding, set_input_dims, and the shape-data
// elements written before their first reader.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mg_dim_eval.h"
#include "mg_package_model.h"

namespace mgrt {
namespace pkg {
// ---- Dynamic dimensions ----
// The binding gives every symbol a value; every DynEntry is an expression of it (a slot's dim, or
// an element of a small shape-data tensor). set_input_dims checks a candidate binding whole (every
// expression evaluates, no dim is negative, no slot needs more bytes than the arena was planned
// for at the maximum binding) before anything changes, so a refusal leaves the handle as it was.

// "input 0 ('x')", "output 1 ('y')" or "slot 12": what a message calls a slot.
static std::string dynSlotName(const Program& p, int slot) {
  for (int i = 0; i < p.numInputs; ++i)
    if (p.inputs[i].slot == slot) return "input " + std::to_string(i) + " ('" + p.inputs[i].name + "')";
  for (int i = 0; i < p.numOutputs; ++i)
    if (p.outputs[i].slot == slot) return "output " + std::to_string(i) + " ('" + p.outputs[i].name + "')";
  return "slot " + std::to_string(slot);
}

static std::string dynEntryName(const Program& p, const DynEntry& e) {
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

static int64_t dynElementBytes(const SlotDesc& d) {
  return static_cast<int64_t>(mgrt::dtypeSize(d.dtype));
}

// Every DynEntry's value at `binding` into `values`, and the checks above; false with `why`.
static bool dynEvaluateAt(const Model* m, const std::vector<int64_t>& binding, std::vector<int64_t>& values,
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
static void dynCommit(Model* m, std::vector<int64_t>& binding, std::vector<int64_t>& values) {
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
static std::vector<int> dynCodeSymbols(const Program& p, int32_t code) {
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
static int dynUnitEnd(const Program& p, int i) {
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
                        "', outside its range [" + std::to_string(y.lo) + ", " + std::to_string(y.hi) + "]" +
                        (n < y.lo ? std::string(" (the nodes reading it need at least ") + std::to_string(y.lo) + ")"
                                  : std::string()));
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

}  // namespace pkg
}  // namespace mgrt
