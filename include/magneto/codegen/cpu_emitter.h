// The CPU emitter: the tables of a generated NAME.cpp (slots, steps, operands, copies) as template
// values for codegen/templates/cpu/NAME.cpp.in. The glue code around them (create, run, the
// handle registry) lives in the template; this file decides only what the model's program is.
#pragma once

#include <string>
#include <vector>

#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/template.h"
#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "magneto/target/device_profile.h"

namespace magneto {

// Fills NUM_SLOTS, SLOT_TABLE, NUM_INPUTS, INPUT_TABLE, NUM_OUTPUTS, OUTPUT_TABLE, STEP_IO,
// NUM_STEPS, STEP_TABLE, NUM_REGIONS, REGION_TABLE, REGION_ORDER, NUM_COPIES, COPY_TABLE,
// ARENA_BYTES into `vars`. A region is the steps of one joint group: the runtime runs them as one
// parallel region whose work items are the members (each on one thread, biggest first).
// inputNames / outputNames: the interface names by position (empty: the values' names).
// host: the CPU profile whose cost model gives each step its thread count (cpuStepThreads,
// StepDesc::threads); null: every step may use the whole pool.
Status emitCpuProgram(const Graph& g, const MemoryPlan& plan, TemplateVars& vars,
                      const std::vector<std::string>& inputNames = {},
                      const std::vector<std::string>& outputNames = {},
                      const DeviceProfile* host = nullptr);

// Whether the CPU runtime has a kernel for `op`, and which: "fast", "reference" or "".
std::string cpuKernelKind(const std::string& op);

// KV-cache outputs (docs/ABI.md, "KV-cache binding"): a graph output that is a graph input with
// new rows appended along one dynamic axis, `present = Concat(past, new)`, found in the planned
// graph in one of two forms:
//   direct:  present = Concat(past, new) along the axis, past a graph input;
//   stacked: present = Concat_0(view_0, ..., view_{L-1}) (torch.stack), view_j a view adding a
//            leading 1 to full_j = Concat(Gather_0(past, j), new_j) along the axis - 1, for
//            j = 0..L-1 in order, L = past's static dim 0 (a per-layer cache).
// A package binds such an output to a caller's buffer holding `capacity` rows along the axis
// (NAME_bind_kv): the past is the buffer's first rows, and a run writes only the new rows into it.
struct KvPiece {
  const Node* concat = nullptr;  // Concat(past or Gather(past, slab), fresh): appends when bound
  const Node* gather = nullptr;  // the stacked form's Gather (null: direct form)
  const Value* fresh = nullptr;  // the new rows
  const Value* full = nullptr;   // past + new (the Concat's result)
  int axis = 0;                  // the cache axis of `full`
  int64_t slab = 0;              // index along the buffer's dim 0 (stacked form; 0: direct)
  bool dense = false;            // full is also read through an aliased view: written densely too
};
struct KvCache {
  int output = -1;  // graph output index
  int input = -1;   // graph input index (the past)
  int axis = 0;     // the cache axis of both
  const Node* producer = nullptr;      // the output's node (named in messages)
  std::vector<KvPiece> pieces;
  std::vector<const Node*> skipped;    // steps a bound run leaves out (Gathers of the past, the stack)
};
// The KV-cache outputs of a planned graph, by output index.
std::vector<KvCache> findKvCaches(const Graph& g, const MemoryPlan& plan);

// A C string literal for `s` (quotes included), escaping anything not plainly printable.
std::string cStringLiteral(const std::string& s);
// `s` made safe for a // comment (no line breaks, no trailing backslash effects).
std::string commentSafe(const std::string& s);

}  // namespace magneto
