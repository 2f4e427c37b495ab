// The GPU emitter (see include/magneto/codegen/gpu_emitter.h): steps -> items -> launches, and
// the text of NAME.cu's generated parts. Everything is a function of the graph, the plan and the
// device profile, in schedule order: the same model gives byte-identical files.
#include "magneto/codegen/gpu_emitter.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "gpu_lowering.h"
#include "magneto/codegen/cpu_emitter.h"
#include "magneto/target/cost_model.h"

namespace magneto {
namespace gpu {

std::string LowerContext::ptr(const Value* v) const {
  auto it = slots->find(v);
  return it == slots->end() ? std::string("S(-1)") : fmt::format("S({})", it->second);
}

std::string LowerContext::typedPtr(const char* ctype, const Value* v, bool isConst) const {
  return fmt::format("reinterpret_cast<{}{}*>({})", isConst ? "const " : "", ctype, ptr(v));
}

std::vector<int64_t> contiguousStrides(const Dims& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

const char* ctypeOf(DType t) {
  switch (t) {
    case DType::kF32: return "float";
    case DType::kF64: return "double";
    case DType::kI8: return "int8_t";
    case DType::kU8: return "uint8_t";
    case DType::kI16: return "int16_t";
    case DType::kU16: return "uint16_t";
    case DType::kI32: return "int32_t";
    case DType::kU32: return "uint32_t";
    case DType::kI64: return "int64_t";
    case DType::kU64: return "uint64_t";
    case DType::kBool: return "uint8_t";
    default: return nullptr;
  }
}

std::string floatLiteral(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  if (std::fabs(v) > 3.4028234663852886e38) return v > 0 ? "3.40282347e+38f" : "(-3.40282347e+38f)";
  std::string s = fmt::format("{:.9g}", static_cast<float>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + "f)" : s + "f";
}

std::string intList(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

Expected<std::vector<GpuItem>> lowerNode(const Node& n, const TileConfig& tile, LowerContext& cx) {
  for (const Value* v : n.outputs())
    if (v && v->rank() > 8)
      return unsupported("{}: rank {} results (the GPU kernels handle rank up to 8)", n.describe(), v->rank());
  Expected<std::vector<GpuItem>> out = std::vector<GpuItem>{};
  if (lowerComputeFamily(n, tile, cx, out)) return out;
  if (lowerMapFamily(n, tile, cx, out)) return out;
  return unsupported("{}: the cuda/hip targets have no kernel for op '{}' yet (docs/GPU_TARGET.md "
                     "lists the supported ops; --target cpu supports it)",
                     n.describe(), n.kind());
}

Status gpuSupports(const Node& n) {
  std::map<const Value*, int> none;
  LowerContext cx;
  cx.slots = &none;
  auto r = lowerNode(n, TileConfig{}, cx);
  return r.ok() ? Status::success() : r.status();
}

namespace {

struct Launch {
  std::vector<int> steps;       // plan step indices
  std::vector<GpuItem> items;
  std::vector<int> itemStep;    // the step each item computes
  int group = -1;               // joint group id, or -1
  std::string note;             // comment: what runs here
};

std::string describeStep(const Node& n) { return commentSafe(n.name()) + " (" + n.kind() + ")"; }

}  // namespace
}  // namespace gpu

Status checkGpuSupport(const MemoryPlan& plan) {
  for (const Node* n : plan.steps) MG_RETURN_IF_ERROR(gpu::gpuSupports(*n));
  return Status::success();
}

Expected<GpuEmitSummary> emitGpuProgram(const Graph& g, const MemoryPlan& plan,
                                        const DeviceProfile& device, TemplateVars& vars,
                                        const std::vector<std::string>& inputNames,
                                        const std::vector<std::string>& outputNames) {
  using namespace gpu;
  // The host tables (slots, ports, copies) are the CPU emitter's; slots are numbered the same way.
  MG_RETURN_IF_ERROR(emitCpuProgram(g, plan, vars, inputNames, outputNames));
  std::map<const Value*, int> slots;
  for (const Value* v : g.values())
    if (plan.find(v)) {
      int index = static_cast<int>(slots.size());
      slots[v] = index;
    }
  LowerContext cx;
  cx.slots = &slots;

  // Steps -> launches: joint groups' contiguous members share one launch.
  std::vector<Launch> launches;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Node* n = plan.steps[i];
    int gid = n->group();
    auto git = g.groups().find(gid);
    bool joint = gid >= 0 && git != g.groups().end() && git->second.strategy == "joint";
    if (joint && !launches.empty() && launches.back().group == gid) {
      launches.back().steps.push_back(static_cast<int>(i));
      continue;
    }
    Launch l;
    l.steps.push_back(static_cast<int>(i));
    l.group = joint ? gid : -1;
    launches.push_back(std::move(l));
  }

  GpuEmitSummary sum;
  sum.steps = static_cast<int>(plan.steps.size());
  for (Launch& l : launches) {
    std::vector<TileConfig> tiles(l.steps.size());
    std::vector<const Node*> members;
    for (int s : l.steps) members.push_back(plan.steps[s]);
    if (l.steps.size() > 1) {
      JointEstimate j = coTune(members, device);
      if (j.valid && j.tiles.size() == members.size()) tiles = j.tiles;
      l.note = fmt::format("joint kernel of parallel group #{} ({} members), co-tuned for {}: {:.1f} us modeled",
                           l.group, members.size(), device.name, j.valid ? j.latencyUs : 0.0);
    } else {
      KernelEstimate e = bestKernel(*members[0], device);
      if (e.valid) tiles[0] = e.tile;
    }
    for (size_t m = 0; m < members.size(); ++m) {
      cx.step = l.steps[m];
      cx.functorCounter = 0;
      MG_ASSIGN_OR_RETURN(std::vector<GpuItem> items, lowerNode(*members[m], tiles[m], cx));
      for (GpuItem& it : items) {
        l.items.push_back(std::move(it));
        l.itemStep.push_back(l.steps[m]);
      }
    }
  }

  std::string functors, structs, kernels, fields, init, forward, table;
  int index = 0;
  for (const Launch& l : launches) {
    if (l.items.empty()) continue;  // a step with nothing to do (all pieces empty)
    int li = index++;
    ++sum.launches;
    if (l.group >= 0) ++sum.jointLaunches;
    int threads = 0;
    bool syncs = false;
    for (const GpuItem& it : l.items) threads = std::max(threads, it.threads), syncs |= it.syncs;

    std::string what;
    for (int s : l.steps) what += fmt::format("{}step {} {}", what.empty() ? "" : ", ", s, describeStep(*plan.steps[s]));
    std::string head = fmt::format("// launch {}: {}{}\n", li, what, l.note.empty() ? "" : "\n//   " + l.note);

    structs += head + fmt::format("struct L{}Args {{\n", li);
    for (size_t k = 0; k < l.items.size(); ++k)
      structs += fmt::format("  {} p{};  // step {}, {}\n", l.items[k].paramsType, k, l.itemStep[k], l.items[k].tile);
    structs += fmt::format("  int64_t end[{}];  // block-range ends\n}};\n", l.items.size());

    kernels += head + fmt::format("__global__ void __launch_bounds__({}) launch{}(const L{}Args* __restrict__ a) {{\n"
                                  "  MG_DYNAMIC_SHARED(char, smem);\n  const int64_t b = blockIdx.x;\n",
                                  threads, li, li);
    for (size_t k = 0; k < l.items.size(); ++k) {
      const GpuItem& it = l.items[k];
      if (!it.functor.empty()) functors += it.functor;
      std::string start = k == 0 ? "0" : fmt::format("a->end[{}]", k - 1);
      kernels += fmt::format("  if (b < a->end[{}]) {{ {}(a->p{}, b - {}, smem); return; }}\n", k, it.program, k, start);
    }
    kernels += "}\n\n";

    fields += fmt::format("  L{0}Args l{0};\n", li);
    init += head;
    std::string smem = "0";
    for (size_t k = 0; k < l.items.size(); ++k) {
      const GpuItem& it = l.items[k];
      init += fmt::format("{{  // item {} (step {})\n  auto& p = P.l{}.p{};\n", k, l.itemStep[k], li, k);
      std::string body = it.init;
      size_t pos = 0;
      while (pos < body.size()) {
        size_t eol = body.find('\n', pos);
        if (eol == std::string::npos) eol = body.size();
        if (eol > pos) init += "  " + body.substr(pos, eol - pos) + "\n";
        pos = eol + 1;
      }
      init += fmt::format("  P.l{}.end[{}] = {}{}(p);\n}}\n", li, k, k == 0 ? "" : fmt::format("P.l{}.end[{}] + ", li, k - 1), it.blocks);
      smem = fmt::format("mgMax({}, {}())", smem, it.smem);
    }
    table += fmt::format("    {{{}, {}, \"launch{}\"}},  // {}\n", threads, syncs ? "true" : "false", li, what);
    init += fmt::format("m->launch[{0}].blocks = P.l{0}.end[{1}];\nm->launch[{0}].smem = {2};\n", li, l.items.size() - 1, smem);
    // Above 48 KiB of dynamic shared memory (the 128x128 tiles) a kernel must opt in, as on CUDA.
    init += fmt::format("if (m->launch[{0}].smem > 48 * 1024 &&\n    mgFuncSetMaxDynamicSharedMemory(launch{0}, m->launch[{0}].smem) != mgSuccess)\n  return \"launch{0}\";\n", li);
    forward += fmt::format("  MG_LAUNCH_STEP({}, launch{}, &D->l{});\n", li, li, li);
  }
  if (sum.launches == 0) {
    fields = "  int64_t unused;\n";
  }
  vars["FUNCTORS"] = functors;
  vars["LAUNCH_STRUCTS"] = structs;
  vars["KERNELS"] = kernels;
  vars["PARAMS_FIELDS"] = fields;
  vars["INIT_PARAMS"] = init;
  vars["FORWARD"] = forward;
  vars["NUM_LAUNCHES"] = std::to_string(sum.launches);
  vars["LAUNCH_TABLE"] = table;
  vars["JOINT_LAUNCHES"] = std::to_string(sum.jointLaunches);
  vars["DEVICE_PROFILE"] = device.name;
  return sum;
}

}  // namespace magneto
