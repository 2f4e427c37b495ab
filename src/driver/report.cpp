// `magnetoc report`: import, the target's pipeline on a device profile, then the parallel groups
// and the model's totals as a table, JSON, Graphviz DOT and SVG. The totals' definitions are in
// include/magneto/driver/report.h; the format in docs/PARALLEL.md.
#include "magneto/driver/report.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/gpu_emitter.h"
#include "magneto/codegen/package.h"
#include "magneto/driver/process.h"
#include "magneto/support/strings.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/ir/symbolic.h"
#include "magneto/ir/verifier.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"
#include "magneto/target/resource_usage.h"

namespace magneto {
namespace driver {
namespace {

// Labels longer than this are cut (keeping the end, where ONNX exporters put the op's own part).
constexpr size_t kMaxDotLabel = 36;

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string jsonNumber(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "null"; }

std::string dotString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string shortLabel(const std::string& s) {
  if (s.size() <= kMaxDotLabel) return s;
  return "..." + s.substr(s.size() - (kMaxDotLabel - 3));
}

const char* clusterColor(const std::string& strategy) {
  if (strategy == "joint") return "#cfe3ff";
  if (strategy == "streams") return "#fff1b8";
  if (strategy == "wide") return "#d4f2d4";
  if (strategy == "batch") return "#ffdcc2";
  if (strategy == "wavefront") return "#e8d4f7";
  return "#eeeeee";
}

// The passes that form parallel groups: the baseline ("unfused") pipeline leaves them out.
const std::set<std::string> kParallelPasses = {"wide-merge", "shared-weight-merge", "batch-merge", "batch-merge-conv",
                                               "place-concat-slices", "recurrent-wavefront",
                                               "parallel-co-optimize"};

std::string withoutParallelPasses(const std::string& list) {
  std::string out;
  for (const std::string& name : splitList(list, ','))
    if (!kParallelPasses.count(name)) out += (out.empty() ? "" : ",") + name;
  return out;
}

Expected<std::unique_ptr<Graph>> importAndRun(const CompileOptions& c, const std::string& pipelineText,
                                              const std::string& device, bool parallelOpt) {
  ImportOptions io;
  io.shapes = c.shapes;
  io.dynamic = c.dynamic;
  io.bindings = c.bindings;
  io.sequenceInputs = c.sequenceInputs;
  io.optionalInputs = c.optionalInputs;
  MG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, importOnnx(c.model, io));
  MG_RETURN_IF_ERROR(inferSymbolicShapes(*g));
  MG_ASSIGN_OR_RETURN(auto pipeline, parsePipeline(pipelineText));
  PassContext ctx;
  ctx.target = c.target;
  ctx.device = device;
  ctx.parallelOpt = parallelOpt;
  ctx.printAfter = c.common.printAfter;
  ctx.printAfter.erase("import");
  ctx.debugOnly = c.common.debugOnly;
  ctx.verifyEach = c.common.verifyEach;
  ctx.out = [](const std::string& s) { std::fputs(s.c_str(), stdout); };
  MG_RETURN_IF_ERROR(runPipeline(*g, pipeline, ctx));
  if (Status v = verifyGraph(*g); !v.ok())
    return internalStatus("the IR after the passes is invalid (a compiler bug): {}", v.message());
  MG_RETURN_IF_ERROR(inferSymbolicShapes(*g).withContext("after the passes: "));
  return g;
}

// What the memory planner (src/analysis/memory_plan.cpp) turns into no kernel or a smaller one: views,
// batch-1 MgChannelSlices (byte-offset views) and Concats whose operands are written in place.
class Launches {
 public:
  Launches(const Graph& g, const DeviceProfile& p) : concats_(planConcatElision(g)), p_(p) {}

  // Whether `n` launches a kernel.
  bool launches(const Node& n) const {
    if (opWork(n).cls == OpWork::Class::kView) return false;
    if (n.kind() == "MgChannelSlice" && n.hasInput(0) && n.input(0)->rank() >= 2 &&
        n.input(0)->dims()[0] == 1 && !n.output(0)->isGraphOutput() &&
        n.attrs().getInt("materialize", 0) == 0)
      return false;
    return !concats_.isElided(&n);
  }

  // Modeled latency of `n`'s kernel; a Concat copies only its operands not already in place.
  double us(const Node& n) const {
    if (n.kind() == "Concat") {
      std::vector<const Value*> moved;
      for (const Value* v : n.inputs())
        if (v && !concats_.isInPlace(&n, v)) moved.push_back(v);
      if (moved.size() < n.numInputs() && !moved.empty()) {
        // The same Concat over the operands it still copies.
        Graph scratch;
        std::vector<Value*> ins;
        int64_t axis = n.attrs().getInt("axis", 0);
        if (axis < 0) axis += n.output(0)->rank();
        Dims out = n.output(0)->dims();
        out[axis] = 0;
        for (const Value* v : moved) {
          ins.push_back(scratch.addInput("x" + std::to_string(ins.size()), v->type()));
          out[axis] += v->dims()[axis];
        }
        return estimate(*scratch.createNode("Concat", ins, {{n.output(0)->dtype(), out}}, n.attrs()));
      }
    }
    return estimate(n);
  }

 private:
  double estimate(const Node& n) const {
    KernelEstimate e = bestKernel(n, p_);
    return e.valid && std::isfinite(e.latencyUs) ? e.latencyUs : 0.0;
  }

  ConcatElision concats_;
  const DeviceProfile& p_;
};

std::string fmtUs(double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : "n/a"; }

}  // namespace

std::string defaultReportDevice(const std::string& target) {
  if (target == "cuda") return "h200";
  if (target == "hip") return "mi250x";
  return "host";
}

namespace {

// The occupancy (resident warps / maximum) of one launch of `tiles` on `p`: the largest block,
// registers and shared memory over the members, as the joint kernel takes them.
double tilesOccupancy(const std::vector<TileConfig>& tiles, const DeviceProfile& p) {
  int threads = 0, regs = 0, smem = 0;
  for (const TileConfig& t : tiles) {
    threads = std::max(threads, t.warps * p.warpSize);
    regs = std::max(regs, t.regsPerThread);
    smem = std::max(smem, t.smemBytes);
  }
  return kernelOccupancy(threads, regs, smem, p).fraction;
}

// Each launch's member operators, from the graph by node name (a member without a name is its
// kind already), and for a joint launch whose co-tuned tiles are not every member's best tile
// alone, why (coTune prices the occupancy the largest member's registers leave the others).
void annotateLaunchKinds(Report& r, const DeviceProfile& p) {
  std::map<std::string, const Node*> byName;
  if (r.graph)
    for (const Node* n : r.graph->nodes())
      if (!n->name().empty()) byName[n->name()] = n;
  for (LaunchResources& l : r.resources.launches) {
    l.kinds.clear();
    std::vector<const Node*> nodes;
    for (const std::string& m : l.members) {
      auto it = byName.find(m);
      l.kinds.push_back(it != byName.end() ? it->second->kind() : m);
      if (it != byName.end()) nodes.push_back(it->second);
    }
    l.coTuneReason.clear();
    if (nodes.size() < 2 || nodes.size() != l.members.size() || !p.isGpu()) continue;
    JointEstimate j = coTune(nodes, p);
    if (!j.valid || j.independentTiles.size() != j.tiles.size() || j.tiles == j.independentTiles) continue;
    std::string changed;
    for (size_t i = 0; i < j.tiles.size(); ++i)
      if (j.tiles[i] != j.independentTiles[i])
        changed += fmt::format("{}{}: {} -> {}", changed.empty() ? "" : "; ", l.members[i],
                               j.independentTiles[i].str(), j.tiles[i].str());
    l.coTuneReason = fmt::format(
        "co-tuned tiles differ from the members' best alone ({}): occupancy {:.1f}% -> {:.1f}%, "
        "modeled {:.2f} -> {:.2f} us",
        changed, 100.0 * tilesOccupancy(j.independentTiles, p), 100.0 * tilesOccupancy(j.tiles, p),
        j.independentLatencyUs, j.latencyUs);
  }
}

}  // namespace

Expected<Report> buildReport(const ReportOptions& o) {
  const CompileOptions& c = o.compile;
  if (c.target != "cpu" && c.target != "cuda" && c.target != "hip")
    return badInput("unknown target '{}'; choose cpu, cuda or hip", c.target);
  Report r;
  r.model = c.model;
  r.target = c.target;
  r.device = o.device.empty() ? defaultReportDevice(c.target) : o.device;
  MG_ASSIGN_OR_RETURN(DeviceProfile profile, loadDeviceProfile(r.device));
  r.device = profile.name;
  r.deviceDescription = profile.description;

  Reporter rep(c.common.verbosity);
  rep.progress("importing " + c.model);
  r.pipeline = c.passesGiven ? c.passes : defaultPipeline(c.target, c.parallelOpt);
  rep.progress(fmt::format("running passes on {}: {}", r.device,
                           r.pipeline.empty() ? "(none)" : r.pipeline));
  MG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g,
                      importAndRun(c, r.pipeline, r.device, c.parallelOpt));

  // The baseline: the same pipeline without the parallel passes, every kernel launched alone.
  std::string basePipeline = withoutParallelPasses(r.pipeline);
  std::unique_ptr<Graph> base;
  if (basePipeline != r.pipeline) {
    CompileOptions quiet = c;
    quiet.common.printAfter.clear();
    quiet.common.debugOnly.clear();
    MG_ASSIGN_OR_RETURN(base, importAndRun(quiet, basePipeline, r.device, false));
  }
  const Graph& baseline = base ? *base : *g;
  const Launches baseLaunches(baseline, profile), fusedLaunches(*g, profile);
  std::map<std::string, const Node*> baseByName;
  for (const Node* n : baseline.nodes()) {
    if (!baseLaunches.launches(*n)) continue;
    r.kernelsUnfused += 1;
    r.latencyUnfusedUs += baseLaunches.us(*n);
    if (!n->name().empty()) baseByName[n->name()] = n;
  }

  // Groups whose pass did not model them (wide-merge): after = the marked nodes' best kernels,
  // before = the members' best kernels in the baseline graph.
  std::map<int, ParallelGroup> groups = g->groups();
  std::map<int, double> markedUs;
  std::map<int, int> markedNodes;
  for (const Node* n : g->nodes())
    if (n->group() >= 0 && fusedLaunches.launches(*n)) {
      markedUs[n->group()] += fusedLaunches.us(*n);
      ++markedNodes[n->group()];
    }
  for (auto& [id, pg] : groups) {
    if (pg.kernelsBefore <= 0 || pg.modeledUsBefore > 0 || pg.modeledUsAfter > 0) continue;
    pg.modeledUsAfter = markedUs.count(id) ? markedUs[id] : 0.0;
    double before = 0;
    bool all = !pg.members.empty();
    for (const std::string& m : pg.members) {
      auto it = baseByName.find(m);
      if (it == baseByName.end()) all = false;
      else before += baseLaunches.us(*it->second);
    }
    pg.modeledUsBefore = all ? before : std::numeric_limits<double>::quiet_NaN();
  }

  // Fused totals: each marked group counts its kernelsAfter and modeledUsAfter once.
  std::set<int> marked;
  r.nodes = static_cast<int>(g->numNodes());
  for (const Node* n : g->nodes()) {
    if (!fusedLaunches.launches(*n)) continue;
    auto it = groups.find(n->group());
    if (it != groups.end() && it->second.kernelsBefore > 0) {
      marked.insert(n->group());
      continue;
    }
    r.kernelsFused += 1;
    r.latencyFusedUs += fusedLaunches.us(*n);
  }
  for (int id : marked) {
    r.kernelsFused += groups.at(id).kernelsAfter;
    r.latencyFusedUs += groups.at(id).modeledUsAfter;
  }
  for (const auto& [id, pg] : groups) r.groups.push_back({id, pg});

  // GPU targets: the program's launches as compile generates them, with their resources.
  if (isGpuTarget(c.target)) {
    // --precision fp16: the float16 storage that compile gives the package (passes/half_storage.cpp).
    if (c.target == "cuda" && c.precision == "fp16") MG_RETURN_IF_ERROR(storeActivationsInHalf(*g, gpuReadsHalfStorage).status());
    MG_ASSIGN_OR_RETURN(MemoryPlan plan, planMemory(*g));
    TemplateVars vars;
    MG_ASSIGN_OR_RETURN(GpuEmitSummary program,
                        emitGpuProgram(*g, plan, profile, vars, {}, {}, nullptr,
                                       c.target == "cuda" && c.precision == "fp16"));
    if (o.deferResources) {
      r.program = std::make_shared<GpuEmitSummary>(std::move(program));
    } else {
      MG_ASSIGN_OR_RETURN(r.resources, launchResources(program, profile, c.target, o.resources, rep));
    }
    r.hasLaunches = true;
  }
  r.floatInQdq = floatBetweenQdq(*g, c.target);
  for (const Node* n : g->nodes())
    r.integerOps += n->kind() == "QLinearConv" || n->kind() == "MgQuantizedAdd" ||
                    (n->kind() == "MaxPool" && n->input(0)->dtype() != DType::kF32 && n->input(0)->dtype() != DType::kF64);
  r.graph = std::move(g);
  annotateLaunchKinds(r, profile);
  return r;
}

namespace {

// The launches of lowest occupancy (ties: forward order), at most kLowestLaunches of them.
constexpr size_t kLowestLaunches = 5;

std::string formatLowestOccupancy(const Report& r) {
  const ResourceFeedback& fb = r.resources;
  std::vector<const LaunchResources*> order;
  int spilling = 0;
  for (const LaunchResources& l : fb.launches) {
    order.push_back(&l);
    if (l.spillBytes > 0) ++spilling;
  }
  std::stable_sort(order.begin(), order.end(), [](const LaunchResources* a, const LaunchResources* b) {
    return a->occupancy < b->occupancy;
  });
  std::string s = fmt::format("\nlaunch resources ({} launches, source {}{}; {} spilling)\n",
                              fb.launches.size(), fb.source,
                              fb.source == "ptxas" ? fmt::format(": {} kernels compiled, {} cached",
                                                                 fb.kernelsCompiled, fb.kernelsCached)
                                                   : "",
                              spilling);
  if (!fb.note.empty()) s += "  note: " + fb.note + "\n";
  for (const LaunchResources& l : fb.launches)
    if (!l.coTuneReason.empty()) s += fmt::format("  {}: {}\n", l.name, l.coTuneReason);
  if (order.empty()) return s;
  s += fmt::format("  lowest occupancy (est: the cost model's registers and occupancy):\n"
                   "  {:<10} {:<10} {:>7} {:>9} {:>6} {:>8} {:>15}  {}\n", "launch",
                   "kernel", "threads", "regs/est", "spill", "smem", "occupancy/est", "limited by / members");
  for (size_t i = 0; i < order.size() && i < kLowestLaunches; ++i) {
    const LaunchResources& l = *order[i];
    std::string members;
    for (const std::string& m : l.members) members += (members.empty() ? "" : ", ") + m;
    s += fmt::format("  {:<10} {:<10} {:>7} {:>9} {:>6} {:>8} {:>15}  {}: {}\n", l.name, l.kernel,
                     l.threads, fmt::format("{}/{}", l.registers, l.estimatedRegisters), l.spillBytes,
                     l.smemBytes,
                     fmt::format("{:.1f}%/{:.1f}%", 100.0 * l.occupancy, 100.0 * l.estimatedOccupancy),
                     l.limiter, members);
  }
  return s;
}

// The general launch a --opt variant replaces at its point: the next general launch in forward
// order (the package runs a launch's variants just before it, docs/DYNAMIC_SHAPES.md).
std::string generalLaunchOf(const ResourceFeedback& fb, size_t i) {
  for (size_t j = i + 1; j < fb.launches.size(); ++j)
    if (fb.launches[j].optPoint < 0) return fb.launches[j].name;
  return "";
}

std::string tilesText(const std::vector<std::string>& tiles) {
  std::string t;
  for (const std::string& x : tiles) t += (t.empty() ? "" : ", ") + (x.empty() ? std::string("default GEMM tile") : x);
  return t;
}

// cuda/hip --dynamic with --opt: per launch and opt point where the cost model's tiles differ from
// the general ones, both tile choices and their modeled latency at that point.
std::string formatOptVariants(const Report& r) {
  const ResourceFeedback& fb = r.resources;
  std::string s;
  int n = 0;
  for (size_t i = 0; i < fb.launches.size(); ++i) {
    const LaunchResources& l = fb.launches[i];
    if (l.optPoint < 0) continue;
    ++n;
    std::string members;
    for (const std::string& m : l.members) members += (members.empty() ? "" : ", ") + m;
    auto us = [](double v) { return std::isfinite(v) ? fmtUs(v) + " us" : std::string("n/a"); };
    s += fmt::format("  {:<10} {:<10} {:>5}  {:<18} {:>10} {:>10}  {}\n", l.name, generalLaunchOf(fb, i),
                     l.optPoint, l.optBinding.empty() ? "-" : l.optBinding, us(l.optModeledUs),
                     us(l.generalModeledUs), members);
    s += fmt::format("  {:<10} {:<10} {:>5}  tiles {} instead of {}\n", "", "", "", tilesText(l.tiles),
                     tilesText(l.generalTiles));
  }
  if (n == 0) return "";
  return fmt::format("\ntiles per --opt size ({} launch variants; latency modeled at the point)\n"
                     "  {:<10} {:<10} {:>5}  {:<18} {:>10} {:>10}  {}\n",
                     n, "variant", "instead of", "point", "binding", "variant", "general", "members") + s;
}

}  // namespace

std::string formatReport(const Report& r) {
  std::map<std::string, int> byStrategy;
  for (const ReportGroup& rg : r.groups) ++byStrategy[rg.group.strategy];
  std::string counts;
  for (const auto& [s, n] : byStrategy) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, s);
  std::string s = fmt::format("model    {}\ndevice   {} ({}), target {}\npipeline {}\n\n", r.model,
                              r.device, r.deviceDescription, r.target, r.pipeline);
  s += fmt::format("parallel groups: {}{}\n", r.groups.size(),
                   counts.empty() ? "" : " (" + counts + ")");
  if (!r.groups.empty())
    s += fmt::format("  {:>4}  {:<8} {:>9}  {:>22}  {}\n", "#", "strategy", "kernels",
                     "modeled us", "members / why");
  for (const ReportGroup& rg : r.groups) {
    const ParallelGroup& g = rg.group;
    std::string members;
    for (const std::string& m : g.members) members += (members.empty() ? "" : ", ") + m;
    s += fmt::format("  {:>4}  {:<8} {:>9}  {:>22}  {}\n", "#" + std::to_string(rg.id), g.strategy,
                     fmt::format("{} -> {}", g.kernelsBefore, g.kernelsAfter),
                     fmtUs(g.modeledUsBefore) + " -> " + fmtUs(g.modeledUsAfter), members);
    s += fmt::format("  {:>4}  {:<8} {:>9}  {:>22}  why: {}\n", "", "", "", "", g.reason);
  }
  double launchDelta = r.kernelsUnfused > 0
                           ? 100.0 * (r.kernelsFused - r.kernelsUnfused) / r.kernelsUnfused
                           : 0.0;
  double speedup = r.latencyFusedUs > 0 ? r.latencyUnfusedUs / r.latencyFusedUs : 1.0;
  s += fmt::format("\ntotals ({} nodes)\n", r.nodes);
  s += fmt::format("  kernel launches   {} -> {} ({:+.1f}%)\n", r.kernelsUnfused, r.kernelsFused,
                   launchDelta);
  s += fmt::format("  modeled latency   {} us -> {} us ({:.2f}x) on {}\n", fmtUs(r.latencyUnfusedUs),
                   fmtUs(r.latencyFusedUs), speedup, r.device);
  if (r.hasLaunches) s += formatLowestOccupancy(r) + formatOptVariants(r);
  if (r.integerOps > 0 || !r.floatInQdq.empty()) {
    s += fmt::format("\nquantized model: {} integer op(s); {} op(s) compute in float32 between DequantizeLinear and "
                     "QuantizeLinear{}\n",
                     r.integerOps, r.floatInQdq.size(), r.floatInQdq.empty() ? "" : ":");
    for (const QdqFloatOp& f : r.floatInQdq)
      s += fmt::format("  {:<28} {:<12} {}\n", shortLabel(f.node), f.op, f.why);
  }
  if (r.graph && !r.graph->symbols().empty()) {
    s += "\ndynamic dimensions (static dims are at every symbol's maximum)\n";
    for (const DimSymbol& sym : r.graph->symbols()) {
      std::string opt;
      for (int64_t v : sym.opt) opt += (opt.empty() ? "" : ",") + std::to_string(v);
      s += fmt::format("  {} = {}..{}{}{}\n", sym.name, sym.lo, sym.hi, opt.empty() ? "" : "  opt " + opt,
                       sym.data ? "  (data: an extent computed at run time)" : "");
    }
    s += "symbolic shapes\n";
    for (const Value* v : r.graph->values()) {
      if (!v->isSymbolic()) continue;
      std::string e;
      for (const DimExpr& d : v->symDims()) e += (e.empty() ? "" : ", ") + d.str();
      s += fmt::format("  {:<28} {:<22} [{}]\n", shortLabel(v->name()), v->type().str(), e);
    }
  }
  return s;
}

namespace {

// A --opt variant launch's extra field (absent on general launches): its opt point and binding,
// the general launch it replaces there, both tile choices and their modeled latency there.
std::string optVariantJson(const ResourceFeedback& fb, size_t i) {
  const LaunchResources& l = fb.launches[i];
  if (l.optPoint < 0) return "";
  std::string general;
  for (const std::string& t : l.generalTiles) general += (general.empty() ? "" : ", ") + jsonString(t);
  return fmt::format(", \"opt_variant\": {{\"point\": {}, \"binding\": {}, \"instead_of\": {}, "
                     "\"general_tiles\": [{}], \"modeled_us\": {}, \"general_modeled_us\": {}}}",
                     l.optPoint, jsonString(l.optBinding), jsonString(generalLaunchOf(fb, i)), general,
                     jsonNumber(l.optModeledUs), jsonNumber(l.generalModeledUs));
}

}  // namespace

std::string reportJson(const Report& r) {
  std::string s = "{\n";
  s += fmt::format("  \"model\": {},\n  \"device\": {},\n  \"target\": {},\n  \"pipeline\": {},\n",
                   jsonString(r.model), jsonString(r.device), jsonString(r.target),
                   jsonString(r.pipeline));
  s += fmt::format("  \"nodes\": {},\n  \"kernels_unfused\": {},\n  \"kernels_fused\": {},\n",
                   r.nodes, r.kernelsUnfused, r.kernelsFused);
  s += fmt::format("  \"modeled_latency_us\": {{\"unfused\": {}, \"fused\": {}}},\n",
                   jsonNumber(r.latencyUnfusedUs), jsonNumber(r.latencyFusedUs));
  s += "  \"groups\": [";
  for (size_t i = 0; i < r.groups.size(); ++i) {
    const ParallelGroup& g = r.groups[i].group;
    std::string members;
    for (const std::string& m : g.members) members += (members.empty() ? "" : ", ") + jsonString(m);
    s += fmt::format(
        "{}\n    {{\"id\": {}, \"strategy\": {}, \"reason\": {}, \"members\": [{}], "
        "\"kernels_before\": {}, \"kernels_after\": {}, \"modeled_us_before\": {}, "
        "\"modeled_us_after\": {}}}",
        i ? "," : "", r.groups[i].id, jsonString(g.strategy), jsonString(g.reason), members,
        g.kernelsBefore, g.kernelsAfter, jsonNumber(g.modeledUsBefore), jsonNumber(g.modeledUsAfter));
  }
  s += r.groups.empty() ? "]" : "\n  ]";
  if (r.integerOps > 0 || !r.floatInQdq.empty()) {
    s += fmt::format(",\n  \"integer_ops\": {},\n  \"float_between_qdq\": [", r.integerOps);
    for (size_t i = 0; i < r.floatInQdq.size(); ++i)
      s += fmt::format("{}\n    {{\"node\": {}, \"op\": {}, \"why\": {}}}", i ? "," : "", jsonString(r.floatInQdq[i].node),
                       jsonString(r.floatInQdq[i].op), jsonString(r.floatInQdq[i].why));
    s += r.floatInQdq.empty() ? "]" : "\n  ]";
  }
  if (r.hasLaunches) {
    const ResourceFeedback& fb = r.resources;
    s += fmt::format(",\n  \"resources\": {{\"source\": {}, \"note\": {}, \"kernels_compiled\": {}, "
                     "\"kernels_cached\": {}}},\n  \"launches\": [",
                     jsonString(fb.source), jsonString(fb.note), fb.kernelsCompiled, fb.kernelsCached);
    for (size_t i = 0; i < fb.launches.size(); ++i) {
      const LaunchResources& l = fb.launches[i];
      std::string members, kinds, tiles;
      for (const std::string& m : l.members) members += (members.empty() ? "" : ", ") + jsonString(m);
      for (const std::string& k : l.kinds) kinds += (kinds.empty() ? "" : ", ") + jsonString(k);
      for (const std::string& t : l.tiles) tiles += (tiles.empty() ? "" : ", ") + jsonString(t);
      s += fmt::format(
          "{}\n    {{\"name\": {}, \"kernel\": {}, \"members\": [{}], \"kinds\": [{}], "
          "\"tiles\": [{}], \"cotune_reason\": {}, \"threads\": {}, "
          "\"registers\": {}, \"spill_bytes\": {}, \"smem_bytes\": {}, \"blocks_per_sm\": {}, "
          "\"occupancy\": {:.4f}, \"limiter\": {}, \"source\": {}, \"stack_bytes\": {}, {}"
          "\"estimated\": {{\"registers\": {}, \"smem_bytes\": {}, \"occupancy\": {:.4f}}}{}}}",
          i ? "," : "", jsonString(l.name), jsonString(l.kernel), members, kinds, tiles,
          jsonString(l.coTuneReason), l.threads,
          l.registers,
          l.spillBytes, l.smemBytes, l.blocksPerSm, l.occupancy, jsonString(l.limiter),
          jsonString(l.source), l.stackBytes,
          l.source == "hipcc" ? fmt::format("\"sgprs\": {}, \"vgprs\": {}, \"agprs\": {}, "
                                            "\"spilled_registers\": {}, \"compiler_waves_per_simd\": {}, ",
                                            l.sgprs, l.vgprs, l.agprs, l.spilledRegisters,
                                            l.compilerWavesPerSimd)
                              : std::string(),
          l.estimatedRegisters, l.estimatedSmemBytes, l.estimatedOccupancy, optVariantJson(fb, i));
    }
    s += fb.launches.empty() ? "]" : "\n  ]";
  }
  if (r.graph && !r.graph->symbols().empty()) {
    s += ",\n  \"symbols\": [";
    const auto& syms = r.graph->symbols();
    for (size_t i = 0; i < syms.size(); ++i)
      s += fmt::format("{}\n    {{\"name\": {}, \"lo\": {}, \"hi\": {}, \"opt\": [{}], \"data\": {}}}",
                       i ? "," : "", jsonString(syms[i].name), syms[i].lo, syms[i].hi,
                       fmt::join(syms[i].opt, ", "), syms[i].data ? "true" : "false");
    s += "\n  ],\n  \"values\": [";
    bool first = true;
    for (const Value* v : r.graph->values()) {
      if (!v->isSymbolic()) continue;
      std::string e;
      for (const DimExpr& d : v->symDims()) e += (e.empty() ? "" : ", ") + jsonString(d.str());
      s += fmt::format("{}\n    {{\"name\": {}, \"dtype\": {}, \"dims\": [{}], \"dims_expr\": [{}]}}",
                       first ? "" : ",", jsonString(v->name()), jsonString(std::string(dtypeName(v->dtype()))),
                       fmt::join(v->dims(), ", "), e);
      first = false;
    }
    s += first ? "]" : "\n  ]";
  }
  s += "\n}\n";
  return s;
}

std::string graphDot(const Graph& g) {
  std::string s = fmt::format("digraph {} {{\n", dotString(g.name()));
  s += "  rankdir=TB;\n  node [shape=box, fontsize=10, style=filled, fillcolor=white];\n"
       "  edge [arrowsize=0.6];\n";
  std::map<const Node*, std::string> id;
  std::vector<Node*> nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) id[nodes[i]] = "n" + std::to_string(i);
  std::map<const Value*, std::string> inputId;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    inputId[g.inputs()[i]] = "in" + std::to_string(i);
    s += fmt::format("  in{} [shape=ellipse, label={}];\n", i,
                     dotString(shortLabel(g.inputs()[i]->name())));
  }
  auto nodeLine = [&](const Node* n, const char* indent) {
    std::string name = n->name().empty() ? n->output(0)->name() : n->name();
    return fmt::format("{}{} [label={}];\n", indent, id[n],
                       dotString(shortLabel(name) + "\n" + n->kind()));
  };
  for (size_t i = 0; i < nodes.size();) {
    int gid = nodes[i]->group();
    auto it = g.groups().find(gid);
    if (gid < 0 || it == g.groups().end()) {
      s += nodeLine(nodes[i++], "  ");
      continue;
    }
    s += fmt::format("  subgraph cluster_{} {{\n    label={};\n    style=filled;\n    color={};\n",
                     gid, dotString(fmt::format("#{} {}", gid, it->second.strategy)),
                     dotString(clusterColor(it->second.strategy)));
    while (i < nodes.size() && nodes[i]->group() == gid) s += nodeLine(nodes[i++], "    ");
    s += "  }\n";
  }
  for (const Node* n : nodes) {
    std::set<std::string> from;  // one edge per producer, operands in order
    for (const Value* v : n->inputs()) {
      if (!v || v->isConstant()) continue;
      std::string src = v->producer() ? id[v->producer()] : inputId.count(v) ? inputId[v] : "";
      if (src.empty() || !from.insert(src).second) continue;
      s += fmt::format("  {} -> {};\n", src, id[n]);
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    s += fmt::format("  out{} [shape=ellipse, label={}];\n", i, dotString(shortLabel(v->name())));
    std::string src = v->producer() ? id[v->producer()] : inputId.count(v) ? inputId[v] : "";
    if (!src.empty()) s += fmt::format("  {} -> out{};\n", src, i);
  }
  return s + "}\n";
}

Status reportModel(const ReportOptions& o) {
  if (!o.svgPath.empty() && !inPath("dot"))
    return Status(ErrorCode::kToolFailed,
                  "--svg needs Graphviz's 'dot' in PATH (apt-get install graphviz, or "
                  "scripts/setup.sh); --dot FILE writes the DOT text without it");
  Reporter rep(o.compile.common.verbosity);
  if (!o.moreModels.empty()) {
    if (!o.dotPath.empty() || !o.svgPath.empty())
      return badInput("--dot/--svg take one model; {} given", o.moreModels.size() + 1);
    // Several models: every program first, their kernels' resources in one compiler call, then
    // each report from the cache.
    std::vector<Report> reports;
    std::vector<std::string> models = {o.compile.model};
    models.insert(models.end(), o.moreModels.begin(), o.moreModels.end());
    for (const std::string& m : models) {
      ReportOptions one = o;
      one.compile.model = m;
      one.moreModels.clear();
      one.deferResources = isGpuTarget(o.compile.target);
      MG_ASSIGN_OR_RETURN(Report r, buildReport(one));
      reports.push_back(std::move(r));
    }
    if (isGpuTarget(o.compile.target)) {
      MG_ASSIGN_OR_RETURN(DeviceProfile profile, loadDeviceProfile(reports.front().device));
      std::vector<const GpuEmitSummary*> programs;
      for (const Report& r : reports) programs.push_back(r.program.get());
      MG_RETURN_IF_ERROR(prefetchLaunchResources(programs, profile, o.compile.target, o.resources, rep));
      for (Report& r : reports) {
        MG_ASSIGN_OR_RETURN(r.resources, launchResources(*r.program, profile, r.target, o.resources, rep));
        annotateLaunchKinds(r, profile);
      }
    }
    std::string json = "[\n";
    for (size_t i = 0; i < reports.size(); ++i) {
      std::fputs(((i ? "\n" : "") + formatReport(reports[i])).c_str(), stdout);
      json += (i ? ",\n" : "") + reportJson(reports[i]);
    }
    if (!o.jsonPath.empty()) {
      MG_RETURN_IF_ERROR(writeFile(o.jsonPath, json + "]\n"));
      rep.progress("wrote " + o.jsonPath);
    }
    return Status::success();
  }
  MG_ASSIGN_OR_RETURN(Report r, buildReport(o));
  std::fputs(formatReport(r).c_str(), stdout);
  if (!o.jsonPath.empty()) {
    MG_RETURN_IF_ERROR(writeFile(o.jsonPath, reportJson(r)));
    rep.progress("wrote " + o.jsonPath);
  }
  std::string dot = (!o.dotPath.empty() || !o.svgPath.empty()) ? graphDot(*r.graph) : "";
  if (!o.dotPath.empty()) {
    MG_RETURN_IF_ERROR(writeFile(o.dotPath, dot));
    rep.progress("wrote " + o.dotPath);
  }
  if (!o.svgPath.empty()) {
    std::string dotFile = o.dotPath;
    if (dotFile.empty()) {
      dotFile = o.svgPath + ".dot.tmp";
      MG_RETURN_IF_ERROR(writeFile(dotFile, dot));
    }
    auto pr = runProcess({"dot", "-Tsvg", dotFile, "-o", o.svgPath});
    if (o.dotPath.empty()) std::remove(dotFile.c_str());
    if (!pr.ok()) return pr.status();
    if (pr->exitCode != 0)
      return Status(ErrorCode::kToolFailed, fmt::format("dot -Tsvg failed (exit {}):\n{}",
                                                        pr->exitCode, tailLines(pr->output, 20)));
    rep.progress("wrote " + o.svgPath);
  }
  return Status::success();
}

}  // namespace driver
}  // namespace magneto
