// The GPU emitter (see include/magneto/codegen/gpu_emitter.h): steps -> items -> launches, and
// the text of NAME.cu's generated parts. Everything is a function of the graph, the plan and the
// device profile, in schedule order: the same model gives byte-identical files.
#include "magneto/codegen/gpu_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "gpu_lowering.h"
#include "magneto/codegen/cpu_emitter.h"
#include "magneto/ir/symbolic.h"
#include "magneto/target/cost_model.h"

namespace magneto {
namespace gpu {

std::string LowerContext::ptr(const Value* v) const {
  auto it = slots->find(v);
  return it == slots->end() ? std::string("S(-1)") : fmt::format("S({})", it->second);
}

const Dims& LowerContext::choiceDims(const Value* v) const {
  if (dynamic && refDims) {
    auto it = refDims->find(v);
    if (it != refDims->end()) return it->second;
  }
  return v->dims();
}

std::string LowerContext::scratch(int64_t bytes) {
  if (dynamic) {  // placed by the emitter (fitDynamicParams)
    scratchRequests.push_back(std::max<int64_t>(bytes, 0));
    return fmt::format("SCRATCH_AT({})", scratchRequests.size() - 1);
  }
  // 256-byte aligned, like the arena's buffers and cudaMalloc.
  std::string s = fmt::format("SCRATCH({})", scratchBytes);
  scratchBytes += (std::max<int64_t>(bytes, 0) + 255) / 256 * 256;
  return s;
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
  LowerFn lower = findLowering(n.kind());
  if (!lower)
    return unsupported("{}: the cuda/hip targets have no kernel for op '{}' yet (docs/GPU_TARGET.md "
                       "lists the supported ops; --target cpu supports it)",
                       n.describe(), n.kind());
  return lower(n, tile, cx);
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
  int streams = -1;             // id of the `streams` group its step belongs to, or -1
  bool wavefront = false;       // the steps are the layers of a `wavefront` group
  std::string key;              // launchKey of the plan launch (phases of one node share it)
  int candidates = 0;           // tile candidates tune can try (tuning runs only)
  double modeledUs = 0;         // the cost model's latency for the tiles used
  std::vector<TileConfig> tiles;  // per member of the plan launch
  std::string note;             // comment: what runs here
  std::vector<int64_t> scratchRequests;  // dynamic graphs: LowerContext::scratchRequests
  // A variant for one --opt point (dynamic graphs): its tiles and programs chosen and lowered at
  // that exact binding, run instead of the general launch that follows it when the binding is
  // that point (kOptPoints[optPoint] in the package); -1 for a general launch.
  int optPoint = -1;
  std::string optBinding;                // a variant: its binding ("batch=1")
  std::vector<std::string> generalTiles;  // a variant: the general tiles it replaces
  double generalUs = 0;                  // a variant: the general tiles' latency at its binding
};

// The --opt points of a dynamic graph: every combination of the declared opt values of the
// symbols that have some, the other symbols at their maximum; the reference binding (every
// symbol at its maximum) is left out, its tiles are the general ones. At most kMaxOptPoints.
constexpr size_t kMaxOptPoints = 16;
std::vector<DimBinding> optPoints(const Graph& g) {
  std::vector<DimBinding> points(1);
  bool any = false;
  for (const DimSymbol& s : g.symbols()) {
    if (s.data || s.opt.empty()) {
      for (DimBinding& b : points) b[s.name] = s.hi;
      continue;
    }
    any = true;
    std::vector<DimBinding> next;
    for (const DimBinding& b : points)
      for (int64_t v : s.opt) {
        DimBinding c = b;
        c[s.name] = v;
        if (next.size() < kMaxOptPoints + 1) next.push_back(std::move(c));
      }
    points = std::move(next);
  }
  if (!any) return {};
  const DimBinding ref = g.referenceBinding();
  points.erase(std::remove(points.begin(), points.end(), ref), points.end());
  if (points.size() > kMaxOptPoints) points.resize(kMaxOptPoints);
  return points;
}

std::string bindingText(const DimBinding& b) {
  std::string t;
  for (const auto& [name, v] : b) t += (t.empty() ? "" : ",") + name + "=" + std::to_string(v);
  return t;
}

// What the launch parameters cannot follow at other bindings: an operand written in place inside
// its Concat's result, or a channel slice viewed at a byte offset, where the offset would change
// with the dims (a slot's place in the arena is fixed). The memory plan makes such placements only
// between values of static extent (src/analysis/memory_plan.cpp), so this is a guard against a
// later plan that forgets it: a refusal by node instead of a package wrong at other bindings.
Status checkDynamicGpuPlan(const Graph& g, const MemoryPlan& plan) {
  auto varying = [](const Value* v) {
    for (const DimExpr& e : v->symDims())
      if (!e.isConstant()) return true;
    return false;
  };
  for (const auto& [v, slot] : plan.concats.inPlace)
    if (varying(v) || varying(slot.concat->output(0)))
      return unsupported("{}: its operand %{} is placed inside its result at an offset that changes with the "
                         "dynamic dims; the cuda/hip targets cannot follow it yet (compile with --shape, or "
                         "--target cpu)",
                         slot.concat->describe(), v->name());
  for (const Node* n : plan.aliasedViews)
    if (n->kind() == "MgChannelSlice" && (varying(n->input(0)) || varying(n->output(0))))
      return unsupported("{}: a view at an offset that changes with the dynamic dims; the cuda/hip targets "
                         "cannot follow it yet (compile with --shape, or --target cpu)",
                         n->describe());
  (void)g;
  return Status::success();
}

std::string describeStep(const Node& n) { return commentSafe(n.name()) + " (" + n.kind() + ")"; }

// A launch whose items have several phases (a recurrent node: the input projection, then the
// time loop that reads it) becomes one launch per phase, in phase order: a launch starts only
// after every block of the one before it is done, which is exactly the dependency between
// phases (the GPU has no grid-wide barrier to offer inside one launch). The other items of a
// joint group are phase 0, so they still share the group's first launch.
std::vector<Launch> splitPhases(std::vector<Launch> launches) {
  std::vector<Launch> out;
  for (Launch& l : launches) {
    int phases = 1;
    for (const GpuItem& it : l.items) phases = std::max(phases, it.phase + 1);
    if (phases == 1) {
      out.push_back(std::move(l));
      continue;
    }
    for (int ph = 0; ph < phases; ++ph) {
      Launch p;
      p.group = l.group;
      p.streams = l.streams;
      p.key = l.key;
      p.candidates = l.candidates;
      p.tiles = l.tiles;
      p.modeledUs = ph == 0 ? l.modeledUs : 0;
      p.note = fmt::format("{}{}phase {} of {}{}", l.note, l.note.empty() ? "" : "; ", ph + 1, phases,
                           ph == 0 ? "" : " (reads what the phase before wrote)");
      for (size_t k = 0; k < l.items.size(); ++k) {
        if (l.items[k].phase != ph) continue;
        p.items.push_back(l.items[k]);
        p.itemStep.push_back(l.itemStep[k]);
        if (std::find(p.steps.begin(), p.steps.end(), l.itemStep[k]) == p.steps.end())
          p.steps.push_back(l.itemStep[k]);
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace
}  // namespace gpu

Status checkGpuSupport(const MemoryPlan& plan) {
  for (const Node* n : plan.steps) MG_RETURN_IF_ERROR(gpu::gpuSupports(*n));
  return Status::success();
}

// After the last launch of a producer of data-dependent extents (NonZero, Compress, Unique,
// NonMaxSuppression, TopK with a run-time K): the package reads the count back and binds the
// data symbol (MG_DATA_EXTENT in NAME.cu.in; docs/DYNAMIC_SHAPES.md, "Data-dependent extents"),
// right there when a later launch depends on it, else after the last launch (the emitter decides).
// The data symbols step `st` produces, by index (once each: several results may carry one).
static std::vector<int> producedSymbolIndices(const Graph& g, const MemoryPlan& plan, int st) {
  std::vector<int> out;
  for (const DataSymbolDim& d : producedDataSymbols(g, *plan.steps[st]))
    for (size_t k = 0; k < g.symbols().size(); ++k)
      if (g.symbols()[k].name == d.symbol && std::find(out.begin(), out.end(), static_cast<int>(k)) == out.end())
        out.push_back(static_cast<int>(k));
  return out;
}

static std::string dataExtentLine(const MemoryPlan& plan, int st, int k) {
  const Node* n = plan.steps[st];
  return fmt::format("  MG_DATA_EXTENT({}, {}, {});\n", k, st,
                     cStringLiteral(n->name().empty() ? n->describe()
                                                      : fmt::format("{}, node '{}'", n->kind(), n->name())));
}

Expected<GpuEmitSummary> emitGpuProgram(const Graph& g, const MemoryPlan& plan,
                                        const DeviceProfile& device, TemplateVars& vars,
                                        const std::vector<std::string>& inputNames,
                                        const std::vector<std::string>& outputNames,
                                        const TuningChoice* tuning, bool fp16) {
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
  cx.concats = &plan.concats;
  cx.fp16 = fp16;
  // Dynamic dimensions: lowering decides by the reference dims and leaves scratch to be placed
  // (LowerContext::dynamic); the launch parameters are fitted below (fitDynamicParams).
  const bool dynamic = !g.symbols().empty();
  std::map<const Value*, Dims> refDims;
  if (dynamic) {
    for (const Value* v : g.values()) refDims[v] = v->dims();
    cx.dynamic = true;
    cx.refDims = &refDims;
    MG_RETURN_IF_ERROR(checkDynamicGpuPlan(g, plan));
  }

  // Steps -> launches: joint groups' contiguous members share one launch.
  std::vector<Launch> launches;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Node* n = plan.steps[i];
    int gid = n->group();
    auto git = g.groups().find(gid);
    bool joint = gid >= 0 && git != g.groups().end() &&
                 (git->second.strategy == "joint" || git->second.strategy == "wavefront");
    if (joint && !launches.empty() && launches.back().group == gid) {
      launches.back().steps.push_back(static_cast<int>(i));
      continue;
    }
    Launch l;
    l.steps.push_back(static_cast<int>(i));
    l.group = joint ? gid : -1;
    l.wavefront = joint && git->second.strategy == "wavefront";
    l.streams = gid >= 0 && git != g.groups().end() && git->second.strategy == "streams" ? gid : -1;
    launches.push_back(std::move(l));
  }

  // The items of a launch with its tiles (l.tiles), appended to l.items and l.itemStep. Functor
  // names are F<step>_<k> from k = functorBase (a variant's start past the general launch's).
  int functorBase = 0;
  auto lowerLaunch = [&](Launch& l) -> Status {
    cx.scratchBytes = 0;
    cx.scratchRequests.clear();
    std::vector<const Node*> members;
    for (int s : l.steps) members.push_back(plan.steps[s]);
    if (l.wavefront) {
      cx.step = l.steps[0];
      cx.functorCounter = functorBase;
      MG_ASSIGN_OR_RETURN(std::vector<GpuItem> items, lowerRecurrentWavefront(members, l.tiles[0], device, cx));
      for (GpuItem& it : items) {
        l.items.push_back(std::move(it));
        l.itemStep.push_back(l.steps[0]);
      }
      members.clear();  // lowered as one
    }
    for (size_t m = 0; m < members.size(); ++m) {
      cx.step = l.steps[m];
      cx.functorCounter = functorBase;
      MG_ASSIGN_OR_RETURN(std::vector<GpuItem> items, lowerNode(*members[m], l.tiles[m], cx));
      for (GpuItem& it : items) {
        l.items.push_back(std::move(it));
        l.itemStep.push_back(l.steps[m]);
      }
    }
    l.scratchRequests = cx.scratchRequests;
    return Status::success();
  };

  GpuEmitSummary sum;
  sum.steps = static_cast<int>(plan.steps.size());
  int64_t scratchBytes = 0;  // the most any launch group needs (LowerContext::scratch)
  for (Launch& l : launches) {
    std::vector<TileConfig> tiles(l.steps.size());
    std::vector<const Node*> members;
    for (int s : l.steps) members.push_back(plan.steps[s]);
    if (l.wavefront) {
      WavefrontEstimate w = estimateWavefront(members, device);
      KernelEstimate e = bestKernel(*members[0], device);
      if (e.valid) tiles[0] = e.tile;
      l.note = fmt::format("wavefront of parallel group #{} ({} stacked layers, layer l step t beside layer l-1 "
                           "step t+1): {:.1f} us modeled",
                           l.group, members.size(), w.valid ? w.latencyUs : 0.0);
    } else if (l.steps.size() > 1) {
      JointEstimate j = coTune(members, device);
      if (j.valid && j.tiles.size() == members.size()) tiles = j.tiles;
      l.note = fmt::format("joint kernel of parallel group #{} ({} members), co-tuned for {}: {:.1f} us modeled",
                           l.group, members.size(), device.name, j.valid ? j.latencyUs : 0.0);
    } else {
      KernelEstimate e = bestKernel(*members[0], device);
      if (e.valid) tiles[0] = e.tile;
    }
    l.key = launchKey(members);
    if (tuning && !l.wavefront) {
      // Measured tiles replace the modeled ones only when they are still candidates here (a
      // record made for another profile or compiler version may name tiles that no longer fit).
      std::vector<std::vector<TileConfig>> cands = launchTileCandidates(members, device, tuning->candidates);
      l.candidates = static_cast<int>(cands.size());
      std::vector<TileConfig> chosen;
      if (tuning->variant >= 0 && !cands.empty()) {
        chosen = cands[std::min<size_t>(static_cast<size_t>(tuning->variant), cands.size() - 1)];
      } else if (auto it = tuning->byKey.find(l.key); it != tuning->byKey.end()) {
        for (size_t m = 0; m < members.size() && it->second.size() == members.size(); ++m) {
          for (const TileConfig& c : tileCandidates(*members[m], device))
            if (c.tileM == it->second[m].tileM && c.tileN == it->second[m].tileN &&
                c.tileK == it->second[m].tileK && c.itemsPerThread == it->second[m].itemsPerThread &&
                c.warps == it->second[m].warps) {
              chosen.push_back(c);
              break;
            }
        }
        if (chosen.size() != members.size()) chosen.clear();
      }
      if (!chosen.empty()) {
        tiles = chosen;
        ++sum.tunedLaunches;
        l.note += (l.note.empty() ? "" : "; ") +
                  std::string(tuning->variant >= 0 ? fmt::format("tuning variant {}", tuning->variant)
                                                   : "tiles measured by magnetoc tune");
      }
    }
    // A GEMV tile's program is for skinny products and transposes itself by the operands' shape:
    // with dynamic dims the general GEMM program (default tile) computes every binding alike.
    if (dynamic)
      for (TileConfig& t : tiles)
        if (t.isGemv()) t = TileConfig{};
    l.tiles = tiles;
    l.modeledUs = l.wavefront           ? estimateWavefront(members, device).latencyUs
                  : members.size() > 1 ? estimateJoint(members, device, tiles).latencyUs
                                       : estimateKernel(*members[0], device, tiles[0]).latencyUs;
    MG_RETURN_IF_ERROR(lowerLaunch(l));
    scratchBytes = std::max(scratchBytes, cx.scratchBytes);
  }
  // What the device work depends on, by symbol: the symbols of each MG_DIM(k) expression, and
  // those of scratch sizes and shape data (MgSymbolic elements, written by the host).
  std::vector<std::set<std::string>> dimSymbols;
  std::set<std::string> deviceSymbols;
  for (const Node* n : g.nodes())
    if (n->kind() == "MgSymbolic")
      for (const std::string& text : n->attrs().getStrings("exprs")) {
        auto e = DimExpr::parse(text);
        if (!e.ok()) return e.status();
        for (const std::string& y : e->symbols()) deviceSymbols.insert(y);
      }
  if (dynamic) {
    // Lower every launch again at other bindings and fit the literals that vary.
    std::vector<DynLaunchText> texts;
    std::vector<std::string> names;
    std::vector<std::vector<DimExpr>> coords;
    for (const Launch& l : launches) {
      texts.push_back({l.items, l.scratchRequests});
      std::string what;
      std::vector<DimExpr> cs;
      for (int st : l.steps) {
        const Node* n = plan.steps[st];
        what += (what.empty() ? "" : ", ") + n->describe();
        for (const DimExpr& c : fitCoordinates(*n))
          if (std::find(cs.begin(), cs.end(), c) == cs.end()) cs.push_back(c);
        for (const Value* v : n->outputs())
          for (const DimExpr& e : v ? v->symDims() : std::vector<DimExpr>{})
            for (const DimExpr& a : e.floorAtoms())
              if (a.symbols().size() == 1 && std::find(cs.begin(), cs.end(), a) == cs.end()) cs.push_back(a);
      }
      names.push_back(what);
      coords.push_back(std::move(cs));
    }
    DynLowerFn relower = [&](std::vector<DynLaunchText>* out) -> Status {
      for (const Launch& ref : launches) {
        Launch l = ref;
        l.items.clear();
        l.itemStep.clear();
        MG_RETURN_IF_ERROR(lowerLaunch(l));
        out->push_back({std::move(l.items), std::move(l.scratchRequests)});
      }
      return Status::success();
    };
    DynParamsResult fit;
    MG_RETURN_IF_ERROR(fitDynamicParams(g, names, coords, relower, &texts, &fit));
    for (const DimExpr& e : fit.exprs) {
      std::vector<std::string> syms = e.symbols();
      dimSymbols.emplace_back(syms.begin(), syms.end());
    }
    for (const DynParamsResult::Scratch& sc : fit.scratch)
      for (const std::string& y : sc.bytes.symbols()) deviceSymbols.insert(y);
    for (size_t i = 0; i < launches.size(); ++i)
      for (size_t k = 0; k < launches[i].items.size(); ++k) launches[i].items[k].init = texts[i].items[k].init;
    scratchBytes = fit.scratchBytes;
    std::map<std::string, int> symIndex;
    for (size_t k = 0; k < g.symbols().size(); ++k) symIndex[g.symbols()[k].name] = static_cast<int>(k);
    std::vector<int64_t> code;
    std::string codeText, at, needs;
    for (size_t k = 0; k < fit.exprs.size(); ++k) {
      size_t start = code.size();
      MG_RETURN_IF_ERROR(fit.exprs[k].emit(symIndex, &code));
      std::string words;
      for (size_t w = start; w < code.size(); ++w) words += fmt::format(" {},", code[w]);
      codeText += fmt::format("    /* {} */{}  // MG_DIM({}) = {}\n", start, words, k, commentSafe(fit.exprs[k].str()));
      at += fmt::format("    {},  // MG_DIM({})\n", start, k);
    }
    for (const DynParamsResult::Scratch& sc : fit.scratch) {
      size_t start = code.size();
      MG_RETURN_IF_ERROR(sc.bytes.emit(symIndex, &code));
      std::string words;
      for (size_t w = start; w < code.size(); ++w) words += fmt::format(" {},", code[w]);
      codeText += fmt::format("    /* {} */{}  // scratch: {}\n", start, words, commentSafe(sc.bytes.str()));
      needs += fmt::format("    {{{}, {}, {}}},\n", start, sc.reserved, cStringLiteral(sc.what));
    }
    vars["NUM_PARAM_DIMS"] = std::to_string(fit.exprs.size());
    vars["PARAM_CODE"] = codeText;
    vars["PARAM_AT"] = at;
    vars["NUM_SCRATCH_NEEDS"] = std::to_string(fit.scratch.size());
    vars["SCRATCH_NEEDS"] = needs;
  }
  // Per --opt point, a variant of every launch whose cost-model tiles there differ from the
  // general ones (docs/DYNAMIC_SHAPES.md, "cuda and hip": tiles per opt size).
  std::string optTable;
  int numOptPoints = 0;
  // Not with data symbols: a variant's literals hold at one value of every symbol, and a count is
  // known only during the run (after its producer), after the forward pass chose its launches.
  if (dynamic && !hasDataSymbols(g)) {
    const std::vector<DimBinding> points = optPoints(g);
    std::vector<std::vector<Launch>> variants(launches.size());
    for (size_t k = 0; k < points.size(); ++k) {
      std::string row = "    {";
      for (const DimSymbol& sym : g.symbols()) row += fmt::format("{}, ", points[k].at(sym.name));
      optTable += row + fmt::format("}},  // opt point {}: {}\n", k, bindingText(points[k]));
      MG_RETURN_IF_ERROR(withDynamicBinding(g, points[k], [&]() -> Status {
        for (size_t i = 0; i < launches.size(); ++i) {
          const Launch& l = launches[i];
          bool eligible = !l.wavefront && l.streams < 0;
          for (const GpuItem& it : l.items) eligible &= it.phase == 0 && !it.coResident;
          if (!eligible) continue;
          std::vector<const Node*> members;
          for (int st : l.steps) members.push_back(plan.steps[st]);
          std::vector<TileConfig> tiles(members.size());
          double us = 0;
          if (members.size() > 1) {
            JointEstimate j = coTune(members, device);
            if (!j.valid || j.tiles.size() != members.size()) continue;
            tiles = j.tiles;
            us = j.latencyUs;
          } else {
            KernelEstimate e = bestKernel(*members[0], device);
            if (!e.valid) continue;
            tiles[0] = e.tile;
            us = e.latencyUs;
          }
          if (tiles == l.tiles) continue;
          // The general tiles priced at this binding (NaN: the cost model has no estimate for them,
          // e.g. the default GEMM tile that stands in for a GEMV at the maximum binding).
          double generalUs = std::nan("");
          if (members.size() > 1) {
            JointEstimate ge = estimateJoint(members, device, l.tiles);
            if (ge.valid) generalUs = ge.latencyUs;
          } else {
            KernelEstimate ge = estimateKernel(*members[0], device, l.tiles[0]);
            if (ge.valid) generalUs = ge.latencyUs;
          }
          Launch v;
          v.steps = l.steps;
          v.group = l.group;
          v.key = l.key;
          v.tiles = tiles;
          v.modeledUs = us;
          v.optPoint = static_cast<int>(k);
          v.optBinding = bindingText(points[k]);
          v.generalUs = generalUs;
          for (const TileConfig& t : l.tiles) v.generalTiles.push_back(t == TileConfig{} ? std::string() : t.str());
          std::string was, now;
          for (size_t m = 0; m < tiles.size(); ++m) {
            // An empty general tile is the GEMM program's default one (a GEMV tile is not general).
            was += (m ? ", " : "") + (l.tiles[m] == TileConfig{} ? std::string("the default GEMM tile") : l.tiles[m].str());
            now += (m ? ", " : "") + tiles[m].str();
          }
          v.note = fmt::format("variant for opt point {} ({}): {} ({:.1f} us modeled there) instead of {}{}", k,
                               bindingText(points[k]), now, us, was,
                               std::isfinite(generalUs) ? fmt::format(" ({:.1f} us)", generalUs) : std::string());
          // Lowered as a static launch at this binding: its literals hold only here.
          cx.dynamic = false;
          functorBase = 1000 * static_cast<int>(k + 1);
          Status st = lowerLaunch(v);
          cx.dynamic = true;
          functorBase = 0;
          MG_RETURN_IF_ERROR(st);
          bool onePhase = true;
          for (const GpuItem& it : v.items) onePhase &= it.phase == 0 && !it.coResident;
          if (!onePhase) continue;  // the general launch's shape of phases is what the forward pass keeps
          scratchBytes = std::max(scratchBytes, cx.scratchBytes);
          variants[i].push_back(std::move(v));
        }
        return Status::success();
      }));
    }
    numOptPoints = static_cast<int>(points.size());
    std::vector<Launch> all;
    for (size_t i = 0; i < launches.size(); ++i) {
      for (Launch& v : variants[i]) all.push_back(std::move(v));
      all.push_back(std::move(launches[i]));
    }
    launches = std::move(all);
  }
  vars["NUM_OPT_POINTS"] = std::to_string(numOptPoints);
  vars["OPT_POINTS"] = optTable;
  launches = splitPhases(std::move(launches));

  std::string functors, structs, kernels, fields, init, forward, table;
  // Launches that run the same block programs with the same parameter types (the many convs of
  // one tile shape) share one kernel and one argument struct: each kernel costs the device
  // compiler a full inlining and register allocation (nvcc spends about a second per kernel and
  // architecture), and identical kernels would only make the binary bigger.
  std::map<std::string, int> kernelOf;  // signature -> the launch index whose kernel it is
  // A contiguous run of launches of one `streams` group runs on side streams, one per member step
  // (a step's several launches stay on one stream, in order), forked from and joined back to the
  // handle's stream. Members of a group never depend on each other (ParallelAnalysis), and the
  // run holds nothing else, so only the fork and the join order them against the rest.
  int sideStreams = 0;
  int openStreams = -1;          // the group of the open run, or -1
  std::map<int, int> sideOfStep;  // step -> side stream in the open run
  auto closeRun = [&] {
    if (openStreams < 0) return;
    forward += fmt::format("  MG_JOIN({});  // streams group #{} joins\n", sideOfStep.size(), openStreams);
    openStreams = -1;
    sideOfStep.clear();
  };
  int index = 0;
  std::vector<int> variantPoints;  // the opt points of the variants just emitted, before their general launch
  // Whether a launch after launches[at] depends on data symbol `sym`: a launch parameter or grid
  // (an MG_DIM(k) whose expression mentions it), or the shape data or scratch the host writes
  // from it. Such a count is read back right after its producer; the others at the end.
  std::string deferredCounts;
  auto needsCountNow = [&](const std::string& sym, size_t at) {
    if (deviceSymbols.count(sym)) return true;
    for (size_t b = at + 1; b < launches.size(); ++b)
      for (const GpuItem& it : launches[b].items)
        for (size_t p = it.init.find("MG_DIM("); p != std::string::npos; p = it.init.find("MG_DIM(", p + 1)) {
          const size_t k = static_cast<size_t>(std::atoll(it.init.c_str() + p + 7));
          if (k >= dimSymbols.size() || dimSymbols[k].count(sym)) return true;
        }
    return false;
  };
  for (size_t at = 0; at < launches.size(); ++at) {
    const Launch& l = launches[at];
    if (l.items.empty()) continue;  // a step with nothing to do (all pieces empty)
    if (l.streams != openStreams) {
      closeRun();
      if (l.streams >= 0) {  // open a run if at least two member steps follow one another
        std::map<int, int> steps;
        for (size_t b = at; b < launches.size() && launches[b].streams == l.streams; ++b)
          for (int st : launches[b].steps) steps.emplace(st, static_cast<int>(steps.size()));
        if (steps.size() > 1) {
          openStreams = l.streams;
          sideOfStep = steps;
          sideStreams = std::max(sideStreams, static_cast<int>(steps.size()));
          forward += fmt::format("  MG_FORK({});  // streams group #{}: its {} members run concurrently\n",
                                 steps.size(), l.streams, steps.size());
        }
      }
    }
    int li = index++;
    ++sum.launches;
    sum.launchKeys.push_back(l.key);
    sum.launchCandidates.push_back(l.candidates);
    sum.launchModeledUs.push_back(l.modeledUs);
    sum.launchTiles.push_back(l.tiles);
    if (l.group >= 0) ++sum.jointLaunches;
    int threads = 0;
    bool syncs = false, coResident = false;
    for (const GpuItem& it : l.items)
      threads = std::max(threads, it.threads), syncs |= it.syncs, coResident |= it.coResident;

    std::string what;
    for (int s : l.steps) what += fmt::format("{}step {} {}", what.empty() ? "" : ", ", s, describeStep(*plan.steps[s]));
    std::string head = fmt::format("// launch {}: {}{}\n", li, what, l.note.empty() ? "" : "\n//   " + l.note);

    std::string signature = std::to_string(threads);
    for (const GpuItem& it : l.items) signature += "|" + it.paramsType + "|" + it.program;
    auto [seen, fresh] = kernelOf.emplace(signature, li);
    int ki = seen->second;  // the kernel (and argument struct) this launch uses
    for (const GpuItem& it : l.items)
      if (!it.functor.empty()) functors += it.functor;
    if (fresh) {
      ++sum.kernels;
      GpuKernelUnit unit;
      unit.name = fmt::format("launch{}", li);
      unit.threads = threads;
      for (const GpuItem& it : l.items) unit.functors += it.functor;
      unit.argsStruct = fmt::format("struct L{}Args {{\n", li);
      for (size_t k = 0; k < l.items.size(); ++k)
        unit.argsStruct += fmt::format("  {} p{};  // step {}, {}\n", l.items[k].paramsType, k, l.itemStep[k], l.items[k].tile);
      unit.argsStruct += fmt::format("  int64_t end[{}];  // block-range ends\n}};\n", l.items.size());
      structs += head + unit.argsStruct;

      unit.kernel = fmt::format("__global__ void __launch_bounds__({}) launch{}(const L{}Args* __restrict__ a) {{\n"
                                "  MG_DYNAMIC_SHARED(char, smem);\n  const int64_t b = blockIdx.x;\n",
                                threads, li, li);
      // Consecutive items that run the same program (a joint group's members of one tile shape,
      // a Concat's copies) share one call site whose params are selected by block range: one
      // inlined copy of the program per run, not one per item. ptxas allocates registers over
      // every copy in the function together: a joint kernel of three 64x32 GEMMs took 255
      // registers and spilled where one GEMM takes 168 (magnetoc report --resources ptxas,
      // docs/GPU_TARGET.md).
      for (size_t r0 = 0; r0 < l.items.size();) {
        size_t r1 = r0;
        while (r1 + 1 < l.items.size() && l.items[r1 + 1].program == l.items[r0].program &&
               l.items[r1 + 1].paramsType == l.items[r0].paramsType)
          ++r1;
        const GpuItem& it = l.items[r0];
        std::string start = r0 == 0 ? "0" : fmt::format("a->end[{}]", r0 - 1);
        if (r1 == r0) {
          unit.kernel += fmt::format("  if (b < a->end[{}]) {{ {}(a->p{}, b - {}, smem); return; }}\n", r0, it.program, r0, start);
        } else {
          unit.kernel += fmt::format("  if (b < a->end[{}]) {{\n    const {}* p = &a->p{};\n    int64_t start = {};\n",
                                     r1, it.paramsType, r0, start);
          for (size_t k = r0 + 1; k <= r1; ++k)
            unit.kernel += fmt::format("    if (b >= a->end[{0}]) p = &a->p{1}, start = a->end[{0}];\n", k - 1, k);
          unit.kernel += fmt::format("    {}(*p, b - start, smem);\n    return;\n  }}\n", it.program);
        }
        r0 = r1 + 1;
      }
      unit.kernel += "}\n";
      kernels += head + unit.kernel + "\n";
      unit.smemExpr = "0";
      for (const GpuItem& it : l.items) unit.smemExpr = fmt::format("mgMax({}, {}())", unit.smemExpr, it.smem);
      sum.kernelUnits.push_back(std::move(unit));
    }
    {
      GpuLaunchInfo info;
      info.name = fmt::format("launch{}", li);
      info.threads = threads;
      for (size_t u = 0; u < sum.kernelUnits.size(); ++u)
        if (sum.kernelUnits[u].name == fmt::format("launch{}", ki)) info.kernel = static_cast<int>(u);
      for (int s : l.steps) {
        const Node* n = plan.steps[s];
        info.members.push_back(n->name().empty() ? n->kind() : n->name());
      }
      info.optPoint = l.optPoint;
      if (l.optPoint >= 0) {
        info.optBinding = l.optBinding;
        info.generalTiles = l.generalTiles;
        info.optModeledUs = l.modeledUs;
        info.generalModeledUs = l.generalUs;
      }
      sum.launchInfo.push_back(std::move(info));
    }

    fields += fmt::format("  L{}Args l{};{}\n", ki, li, fresh ? "" : fmt::format("  // runs kernel launch{}", ki));
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
    table += fmt::format("    {{{}, {}, \"launch{}\"}},  // {}\n", threads, syncs ? "true" : "false", ki, what);
    init += fmt::format("m->launch[{0}].blocks = P.l{0}.end[{1}];\nm->launch[{0}].smem = {2};\n", li, l.items.size() - 1, smem);
    // Above 48 KiB of dynamic shared memory (the 128x128 tiles) a kernel must opt in, as on CUDA.
    init += fmt::format("if (m->launch[{0}].smem > 48 * 1024 &&\n    mgFuncSetMaxDynamicSharedMemory(launch{1}, m->launch[{0}].smem) != mgSuccess)\n  return \"launch{1}\";\n", li, ki);
    if (l.optPoint >= 0) {  // runs instead of the general launch that follows, at its opt point
      forward += fmt::format("  if (opt == {0}) MG_LAUNCH_STEP({1}, launch{2}, &D->l{1}); else MG_SKIP_STEP({1});\n",
                             l.optPoint, li, ki);
      variantPoints.push_back(l.optPoint);
      continue;
    }
    if (!variantPoints.empty()) {  // the general launch, at every binding but its variants' points
      std::string cond;
      for (int k : variantPoints) cond += fmt::format("{}opt != {}", cond.empty() ? "" : " && ", k);
      forward += fmt::format("  if ({0}) MG_LAUNCH_STEP({1}, launch{2}, &D->l{1}); else MG_SKIP_STEP({1});\n", cond,
                             li, ki);
      variantPoints.clear();
      continue;
    }
    if (openStreams >= 0)
      forward += fmt::format("  MG_LAUNCH_STEP_ON({}, launch{}, &D->l{}, MG_SIDE({}));\n", li, ki, li,
                             sideOfStep.at(l.steps.front()));
    else if (coResident)  // every block at once: the wavefront's blocks wait on each other
      forward += fmt::format("  MG_LAUNCH_STEP_CORESIDENT({}, launch{}, &D->l{});\n", li, ki, li);
    else
      forward += fmt::format("  MG_LAUNCH_STEP({}, launch{}, &D->l{});\n", li, ki, li);
    // A step's count is final after its last launch (its last phase: Unique, NonMaxSuppression).
    for (int st : l.steps) {
      bool later = false;
      for (size_t b = at + 1; b < launches.size() && !later; ++b)
        later = !launches[b].items.empty() &&
                std::find(launches[b].steps.begin(), launches[b].steps.end(), st) != launches[b].steps.end();
      if (later) continue;
      for (int k : producedSymbolIndices(g, plan, st)) {
        if (needsCountNow(g.symbols()[k].name, at)) forward += dataExtentLine(plan, st, k);
        else deferredCounts += dataExtentLine(plan, st, k);
      }
    }
  }
  closeRun();
  // Counts that no later launch depends on: read back once, after the last launch (the run ends
  // with a synchronization anyway), instead of stopping the stream after their producers.
  forward += deferredCounts;
  sum.sideStreams = sideStreams;
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
  vars["SCRATCH_BYTES"] = std::to_string(scratchBytes);
  vars["SIDE_STREAMS"] = std::to_string(sideStreams);
  return sum;
}

}  // namespace magneto
