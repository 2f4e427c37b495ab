// The CPU emitter: the tables of a generated NAME.cpp (slots, steps, operands, copies) as template
// values for codegen/templates/cpu/NAME.cpp.in. The glue code around them (create, run, the
// handle registry) lives in the template; this file decides only what the model's program is.
#pragma once

#include <string>

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

// A C string literal for `s` (quotes included), escaping anything not plainly printable.
std::string cStringLiteral(const std::string& s);
// `s` made safe for a // comment (no line breaks, no trailing backslash effects).
std::string commentSafe(const std::string& s);

}  // namespace magneto
