// Helpers of the GPU lowering tests (tests/unit/gpu_*_lowering_test.cpp): the template values of
// the generated GPU program for a textual graph, on the h200 profile.
#pragma once

#include <string>

#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/target/device_profile.h"
#include "op_test_util.h"

namespace magneto {
namespace testing {

inline Expected<TemplateVars> emitGpu(const std::string& text) {
  auto g = parseVerified(text);
  if (!g) return badInput("the test graph does not parse");
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
