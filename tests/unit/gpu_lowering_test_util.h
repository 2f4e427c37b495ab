// Helpers of the GPU lowering tests (tests/unit/gpu_*_lowering_test.cpp): the template values of
// the generated GPU program for a textual graph, on the h200 profile.
#pragma once

#include <string>

#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/ir/symbolic.h"
#include "magneto/target/device_profile.h"
#include "op_test_util.h"

namespace magneto {
namespace testing {

// fitted: after the symbolic inference that `magnetoc compile` runs on import (the reference
// dims a consumer of a run-time count chooses its strides by).
inline Expected<TemplateVars> emitGpu(const std::string& text, bool fitted = false) {
  auto g = parseVerified(text);
  if (!g) return badInput("the test graph does not parse");
  if (fitted) MG_RETURN_IF_ERROR(inferSymbolicShapes(*g));
  MG_ASSIGN_OR_RETURN(MemoryPlan plan, planMemory(*g));
  MG_ASSIGN_OR_RETURN(DeviceProfile device, loadDeviceProfile("h200"));
  TemplateVars vars;
  MG_ASSIGN_OR_RETURN(GpuEmitSummary sum, emitGpuProgram(*g, plan, device, vars));
  (void)sum;
  return vars;
}

inline bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace testing
}  // namespace magneto
