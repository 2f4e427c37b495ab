// The CPU emitter (see include/magneto/codegen/cpu_emitter.h). Each table row is one line with a
// comment naming the tensor or the ONNX node, so that a person reading NAME.cpp can follow the
// program without the compiler. Rows come from the graph's value and node order and the memory
// plan, nothing else, so the text is deterministic.
#include "magneto/codegen/cpu_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "magneto/ir/kernel_attrs.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"
#include "magneto/target/cost_model.h"
#include "mg_kernels.h"
#include "mg_runtime.h"

namespace magneto {

std::string cpuKernelKind(const std::string& op) {
  if (mgrt::findFastKernel(op.c_str())) return "fast";
  if (mgrt::findKernel(op.c_str())) return "reference";
  return "";
}

std::string cStringLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\{:03o}", c);  // three octal digits: never swallows what follows
    }
  }
  return out + "\"";
}

std::string commentSafe(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (c >= 0x20 && c < 0x7f && c != '\\') ? static_cast<char>(c) : '?';
  return out;
}

namespace {

const char* storageName(StorageKind k) {
  switch (k) {
    case StorageKind::kArena: return "kArena";
    case StorageKind::kWeights: return "kWeights";
    case StorageKind::kInput: return "kInput";
    case StorageKind::kOutput: return "kOutput";
  }
  return "kArena";
}

std::string valueRef(const Value* v) { return v ? "%" + commentSafe(v->name()) : "_"; }

std::string nodeSignature(const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.numOutputs(); ++i) s += (i ? ", " : "") + valueRef(n.output(i));
  s += " = " + commentSafe(n.kind()) + "(";
  for (size_t i = 0; i < n.numInputs(); ++i) s += (i ? ", " : "") + valueRef(n.input(i));
  return s + ")";
}

int normAxis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

bool isStep(const MemoryPlan& plan, const Node* n) {
  return std::find(plan.steps.begin(), plan.steps.end(), n) != plan.steps.end();
}
bool isAliased(const MemoryPlan& plan, const Node* n) {
  return std::find(plan.aliasedViews.begin(), plan.aliasedViews.end(), n) != plan.aliasedViews.end();
}

// `a` equals `b` in every dim but `axis` (same rank, same expressions).
bool sameBut(const Value* a, const Value* b, int axis) {
  if (a->rank() != b->rank()) return false;
  for (int d = 0; d < a->rank(); ++d)
    if (d != axis && !(a->dimExpr(d) == b->dimExpr(d))) return false;
  return true;
}

int inputIndex(const Graph& g, const Value* v) {
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (g.inputs()[i] == v) return static_cast<int>(i);
  return -1;
}

// A two-operand Concat step appending `fresh` to `past` along a dynamic axis of `past`.
bool appendConcat(const MemoryPlan& plan, const Node* c, int* axis) {
  if (!c || c->kind() != "Concat" || c->numInputs() != 2 || !c->input(0) || !c->input(1) ||
      !isStep(plan, c))
    return false;
  const Value* r = c->output(0);
  *axis = normAxis(c->attrs().getInt("axis", 0), r->rank());
  if (*axis < 0 || *axis >= r->rank() || c->input(0)->dtype() != r->dtype() || c->input(1)->dtype() != r->dtype())
    return false;
  if (!plan.find(c->input(1)) || !plan.find(r)) return false;  // the package has slots for both
  return !c->input(0)->dimExpr(*axis).isConstant() && sameBut(c->input(0), r, *axis) &&
         sameBut(c->input(1), r, *axis) && !plan.concats.isInPlace(c, c->input(1)) &&
         !plan.concats.isInPlace(c, c->input(0));
}

// Whether `full` (a piece's past + new) is read through an aliased view other than `except`
// (which a bound run does not need): those read the arena, so the piece is written there too.
bool readByAlias(const MemoryPlan& plan, const Value* full, const Node* except) {
  if (plan.concats.inPlace.count(full)) return true;
  for (const Use& u : full->uses())
    if (u.node != except && isAliased(plan, u.node)) return true;
  return false;
}

}  // namespace

std::vector<KvCache> findKvCaches(const Graph& g, const MemoryPlan& plan) {
  std::vector<KvCache> found;
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    const Value* out = g.outputs()[o];
    if (out->isGraphInput() || out->isConstant() || !out->isSymbolic()) continue;
    if (std::count(g.outputs().begin(), g.outputs().end(), out) != 1) continue;
    bool copied = false;
    for (const OutputCopy& c : plan.copies) copied |= c.source == out;
    const Node* prod = out->producer();
    if (copied || !prod || !plan.find(out) || plan.find(out)->kind != StorageKind::kOutput) continue;
    KvCache kv;
    kv.output = static_cast<int>(o);
    kv.producer = prod;
    int axis = 0;
    if (appendConcat(plan, prod, &axis) && prod->input(0)->isGraphInput()) {  // direct
      kv.input = inputIndex(g, prod->input(0));
      kv.axis = axis;
      KvPiece pc;
      pc.concat = prod;
      pc.fresh = prod->input(1);
      pc.full = out;
      pc.axis = axis;
      kv.pieces.push_back(pc);
      if (kv.input >= 0) found.push_back(kv);
      continue;
    }
    // Stacked: Concat along 0 of views [1, full_j...], full_j = Concat(Gather_0(past, j), new_j).
    if (!prod || prod->kind() != "Concat" || !isStep(plan, prod) || prod->numInputs() < 1 ||
        normAxis(prod->attrs().getInt("axis", 0), out->rank()) != 0)
      continue;
    const Value* past = nullptr;
    bool ok = true;
    std::vector<const Node*> skipped{prod};
    for (size_t j = 0; j < prod->numInputs() && ok; ++j) {
      const Value* u = prod->input(j);
      const Node* view = u ? u->producer() : nullptr;
      ok = view && view->schema() && view->schema()->has(kView) && view->input(0) && u->uses().size() == 1 &&
           u->rank() == view->input(0)->rank() + 1 && u->dimExpr(0) == DimExpr(1);
      if (!ok) break;
      const Value* full = view->input(0);
      for (int d = 0; d < full->rank() && ok; ++d) ok = u->dimExpr(d + 1) == full->dimExpr(d);
      const Node* c = full->producer();
      int ax = 0;
      ok = ok && appendConcat(plan, c, &ax);
      const Node* gat = ok ? c->input(0)->producer() : nullptr;
      ok = ok && gat && gat->kind() == "Gather" && gat->input(0) && gat->input(0)->isGraphInput() &&
           gat->input(1) && gat->input(1)->isConstant() && gat->input(1)->constant().hasData() &&
           gat->input(1)->rank() == 0 && gat->input(0)->rank() == full->rank() + 1 &&
           normAxis(gat->attrs().getInt("axis", 0), gat->input(0)->rank()) == 0;
      if (!ok) break;
      const Value* p = gat->input(0);
      if (!past) past = p;
      ok = p == past && p->dimExpr(0).isConstant() &&
           p->dims()[0] == static_cast<int64_t>(prod->numInputs()) && p->dtype() == out->dtype();
      int64_t idx = ok ? gat->input(1)->constant().intAt(0) : -1;
      if (idx < 0) idx += p->dims()[0];
      ok = ok && idx == static_cast<int64_t>(j);
      if (!ok) break;
      KvPiece pc;
      pc.concat = c;
      pc.gather = gat;
      pc.fresh = c->input(1);
      pc.full = full;
      pc.axis = ax;
      pc.slab = static_cast<int64_t>(j);
      pc.dense = readByAlias(plan, full, view);
      if (c->input(0)->uses().size() == 1 && isStep(plan, gat)) skipped.push_back(gat);
      if (isStep(plan, view)) skipped.push_back(view);
      kv.pieces.push_back(pc);
      kv.axis = ax + 1;
    }
    if (!ok || !past || !sameBut(past, out, kv.axis)) continue;
    kv.input = inputIndex(g, past);
    kv.skipped = skipped;
    if (kv.input >= 0) found.push_back(kv);
  }
  return found;
}

Status emitCpuProgram(const Graph& g, const MemoryPlan& plan, TemplateVars& vars,
                      const std::vector<std::string>& inputNames,
                      const std::vector<std::string>& outputNames, const DeviceProfile* host) {
  // Slots: every value with storage, in creation order.
  std::map<const Value*, int> slot;
  std::string slots;
  for (const Value* v : g.values()) {
    const Storage* st = plan.find(v);
    if (!st) continue;
    if (v->rank() > mgrt::kMaxRank)
      return unsupported("value '{}' has rank {}; the CPU runtime supports rank up to {}",
                         v->name(), v->rank(), mgrt::kMaxRank);
    int index = static_cast<int>(slot.size());
    slot[v] = index;
    int64_t where = st->kind == StorageKind::kInput || st->kind == StorageKind::kOutput
                        ? st->index
                        : st->offset;
    int64_t bytes = v->type().numel() * static_cast<int64_t>(dtypeSize(v->dtype()));
    std::string dims;
    for (int i = 0; i < v->rank(); ++i) dims += fmt::format("{}{}", i ? ", " : "", v->dims()[i]);
    if (dims.empty()) dims = "0";
    slots += fmt::format("    {{{}, {}, {}, {}, {}, {{{}}}}},  // #{} %{} {}\n",
                         static_cast<int>(v->dtype()), v->rank(), storageName(st->kind), where,
                         bytes, dims, index, commentSafe(v->name()), v->type().str());
  }

  std::string inputs, outputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    std::string name = inputNames.size() == g.inputs().size() ? inputNames[i] : v->name();
    inputs += fmt::format("    {{{}, {}}},  // %{}\n", cStringLiteral(name), slot.at(v),
                          commentSafe(v->name()));
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    if (!slot.count(v)) return internalStatus("graph output '{}' has no slot", v->name());
    std::string name = outputNames.size() == g.outputs().size() ? outputNames[i] : v->name();
    outputs += fmt::format("    {{{}, {}}},  // %{}\n", cStringLiteral(name), slot.at(v),
                           commentSafe(v->name()));
  }

  // A wavefront group (passes/recurrent_wavefront.cpp) runs as a pipelined region when every one
  // of its steps is a recurrent layer (the views between them are aliases, no steps): member k
  // (k > 0) is told by `wavefront_stage` to wait, step by step, on member k-1's published progress
  // (f_recurrent.cpp). A group with any other step runs as plain steps, one after another.
  std::map<const Node*, int> wavefrontStage;
  for (size_t i = 0; i < plan.steps.size();) {
    const int gid = plan.steps[i]->group();
    auto git = g.groups().find(gid);
    size_t end = i + 1;
    if (gid >= 0 && git != g.groups().end() && git->second.strategy == "wavefront")
      while (end < plan.steps.size() && plan.steps[end]->group() == gid) ++end;
    bool allLayers = end - i >= 2;
    for (size_t k = i; k < end && allLayers; ++k) {
      const std::string& kind = plan.steps[k]->kind();
      allLayers = kind == "LSTM" || kind == "GRU" || kind == "RNN";
    }
    if (allLayers)
      for (size_t k = i; k < end; ++k) wavefrontStage[plan.steps[k]] = static_cast<int>(k - i);
    i = end;
  }

  std::string io, steps;
  int ioPos = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Node& n = *plan.steps[i];
    if (n.kind() == "MgSymbolic")
      return internalStatus("MgSymbolic %{} is a step of the memory plan; the runtime fills it",
                            n.output(0)->name());
    std::string attrs = encodeAttrs(n);
    auto ws = wavefrontStage.find(&n);
    if (ws != wavefrontStage.end() && ws->second > 0)
      attrs += (attrs.empty() ? "" : ";") + fmt::format("wavefront_stage=i:{}", ws->second);
    std::string row;
    for (const Value* v : n.inputs()) row += fmt::format(" {},", v ? slot.at(v) : -1);
    row += " /* -> */";
    for (const Value* v : n.outputs()) row += fmt::format(" {},", slot.at(v));
    io += fmt::format("    /* #{} */{}\n", i, row);
    // Threads: the cost model's count for the step on its own (1: the calling thread alone).
    const int threads = host ? cpuStepThreads(n, *host) : 0;
    // FLOPs and bytes for the profile's roofline (-1 where shapes are known only at run time).
    bool symbolic = false;
    for (const Value* v : n.inputs()) symbolic |= v && v->isSymbolic();
    for (const Value* v : n.outputs()) symbolic |= v && v->isSymbolic();
    const OpWork work = opWork(n);
    const double flops = symbolic ? -1 : work.flops, bytes = symbolic ? -1 : work.bytes;
    steps += fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {:.6g}, {:.6g}}},  // #{} {}: {}{}\n",
                         cStringLiteral(n.kind()), cStringLiteral(n.name()), cStringLiteral(attrs), ioPos,
                         n.numInputs(), n.numOutputs(), threads, flops, bytes, i, commentSafe(n.name()),
                         nodeSignature(n), threads == 1 ? " (one thread)" : "");
    ioPos += static_cast<int>(n.numInputs() + n.numOutputs());
  }

  // Parallel regions: the steps of one joint group (consecutive: ParallelCoOptimize made them
  // contiguous, and the memory plan gave them one shared lifetime step, so no member's result
  // shares bytes with anything another member reads or writes). The runtime hands the members
  // to the pool's threads as work items, each run on one thread, biggest first (longest
  // processing time first keeps the region's makespan close to the cost model's).
  std::string regions, regionOrder;
  int numRegions = 0, orderPos = 0;
  std::vector<size_t> unitEnd(plan.steps.size());  // the first step after i's region (or i)
  for (size_t i = 0; i < plan.steps.size(); ++i) unitEnd[i] = i + 1;
  for (size_t i = 0; i < plan.steps.size();) {
    const Node& n = *plan.steps[i];
    auto git = g.groups().find(n.group());
    size_t end = i + 1;
    const bool wavefront = wavefrontStage.count(&n) > 0;
    if (n.group() >= 0 && git != g.groups().end() && (git->second.strategy == "joint" || wavefront))
      while (end < plan.steps.size() && plan.steps[end]->group() == n.group()) ++end;
    if (end - i < 2) {
      i = end;
      continue;
    }
    std::vector<std::pair<double, size_t>> byWork;
    for (size_t k = i; k < end; ++k) {
      OpWork w = opWork(*plan.steps[k]);
      byWork.push_back({w.flops + w.bytes, k});
    }
    if (!wavefront)  // a wavefront's layers in layer order: each one's producer is taken first
      std::stable_sort(byWork.begin(), byWork.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string order;
    for (const auto& [work, k] : byWork) order += fmt::format(" {},", k);
    regions += fmt::format("    {{{}, {}, {}}},  // region {}: steps #{}..#{} of {} group {}\n", i,
                           end - i, orderPos, numRegions, i, end - 1, wavefront ? "wavefront" : "joint",
                           n.group());
    regionOrder += fmt::format("    /* region {} */{}\n", numRegions, order);
    orderPos += static_cast<int>(end - i);
    ++numRegions;
    for (size_t k = i; k < end; ++k) unitEnd[k] = end;
    i = end;
  }

  std::string copies;
  for (const OutputCopy& c : plan.copies)
    copies += fmt::format("    {{{}, {}}},  // output {} <- %{}\n", c.output, slot.at(c.source),
                          c.output, commentSafe(c.source->name()));

  // Dynamic dimensions (docs/DYNAMIC_SHAPES.md): the symbols with the input dim each is bound
  // from, the postfix code of every symbolic slot dim and of every MgSymbolic element, and the rows
  // saying which slot dim or element each expression gives. A static package sets none of these
  // (its NAME.cpp is unchanged).
  vars["DYNAMIC"] = g.symbols().empty() ? "0" : "1";
  if (!g.symbols().empty()) {
    std::map<std::string, int> symIndex;
    std::string symbols;
    // Data symbols (docs/DYNAMIC_SHAPES.md, "Data-dependent extents"): the step producing each,
    // and the first step after that step's parallel region (every reader of a slot whose dims or
    // shape-data elements mention the symbol must come at or after it).
    std::map<std::string, size_t> producerStep;
    std::map<const Node*, size_t> stepOf;
    for (size_t i = 0; i < plan.steps.size(); ++i) stepOf[plan.steps[i]] = i;
    for (size_t k = 0; k < g.symbols().size(); ++k) {
      const DimSymbol& sym = g.symbols()[k];
      symIndex[sym.name] = static_cast<int>(k);
      if (sym.data) {
        const Node* producer = nullptr;
        DataSymbolDim at;
        for (const Node* n : g.nodes())
          for (const DataSymbolDim& d : producedDataSymbols(g, *n))
            if (d.symbol == sym.name && !producer) producer = n, at = d;
        if (!producer || !stepOf.count(producer) || !slot.count(producer->output(at.output)))
          return unsupported("data symbol '{}' has no producing step (its node was folded or "
                             "removed); the package cannot compute it",
                             sym.name);
        producerStep[sym.name] = stepOf.at(producer);
        const int s = slot.at(producer->output(at.output));
        symbols += fmt::format("    {{{}, {}, {}, -1, {}, {}}},  // data: step #{} ({}) %{} dim {}\n",
                               cStringLiteral(sym.name), sym.lo, sym.hi, at.dim, s,
                               stepOf.at(producer), commentSafe(producer->name()),
                               commentSafe(producer->output(at.output)->name()), at.dim);
        continue;
      }
      int input = -1, dim = -1;
      for (size_t i = 0; i < g.inputs().size() && input < 0; ++i) {
        const Value* v = g.inputs()[i];
        for (int d = 0; v->isSymbolic() && d < v->rank(); ++d)
          if (v->symDims()[d] == DimExpr::symbol(sym.name)) {
            input = static_cast<int>(i);
            dim = d;
            break;
          }
      }
      if (input < 0)
        return unsupported("dynamic dimension '{}' is not a whole dim of any graph input, so the "
                           "package cannot bind it from the input dims",
                           sym.name);
      symbols += fmt::format("    {{{}, {}, {}, {}, {}}},  // input {} dim {}\n",
                             cStringLiteral(sym.name), sym.lo, sym.hi, input, dim, input, dim);
    }
    std::vector<int64_t> code;
    std::string codeText, dyn;
    int numDyn = 0;
    auto addExpr = [&](const DimExpr& e, int slotIndex, const char* kind, int index,
                       const std::string& what) -> Status {
      size_t start = code.size();
      MG_RETURN_IF_ERROR(e.emit(symIndex, &code));
      std::string words;
      for (size_t w = start; w < code.size(); ++w) words += fmt::format(" {},", code[w]);
      codeText += fmt::format("    /* {} */{}  // {}\n", start, words, commentSafe(e.str()));
      dyn += fmt::format("    {{{}, {}, {}, {}}},  // {}\n", slotIndex, kind, index, start,
                         commentSafe(what));
      ++numDyn;
      return Status::success();
    };
    for (const Value* v : g.values()) {
      auto it = slot.find(v);
      if (it == slot.end()) continue;
      if (v->isSymbolic())
        for (int d = 0; d < v->rank(); ++d)
          if (!v->symDims()[d].isConstant())
            MG_RETURN_IF_ERROR(addExpr(v->symDims()[d], it->second, "mgrt::abi::kDynDim", d,
                                       fmt::format("%{} dim {}", v->name(), d)));
      if (v->producer() && v->producer()->kind() == "MgSymbolic") {
        auto exprs = v->producer()->attrs().getStrings("exprs");
        for (size_t k = 0; k < exprs.size(); ++k) {
          MG_ASSIGN_OR_RETURN(DimExpr e, DimExpr::parse(exprs[k]));
          MG_RETURN_IF_ERROR(addExpr(e, it->second, "mgrt::abi::kDynElement", static_cast<int>(k),
                                     fmt::format("%{} element {}", v->name(), k)));
        }
      }
    }
    // Every step reading or writing a value whose shape or shape data depends on a data symbol
    // runs after that symbol's producer (and its region): the package binds the symbol there.
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Node& n = *plan.steps[i];
      std::vector<const Value*> vals(n.inputs().begin(), n.inputs().end());
      for (const Value* v : n.outputs()) vals.push_back(v);
      for (const Value* v : vals)
        for (const std::string& name : symbolsOf(v)) {
          auto it = producerStep.find(name);
          if (it == producerStep.end() || it->second == i) continue;
          if (i < unitEnd[it->second])
            return unsupported("{} is scheduled before the step computing data-dependent extent "
                               "'{}' ({}) that its operand or result '{}' depends on",
                               n.describe(), name, plan.steps[it->second]->describe(), v->name());
        }
    }
    vars["NUM_SYMBOLS"] = std::to_string(g.symbols().size());
    vars["SYMBOL_TABLE"] = symbols;
    vars["DIM_CODE"] = codeText;
    vars["NUM_DYN"] = std::to_string(numDyn);
    vars["DYN_TABLE"] = dyn;
  }

  // KV-cache outputs (findKvCaches; docs/ABI.md, "KV-cache binding"): each output the package
  // can bind to a caller's buffer, its pieces (the Concat steps that append when bound) and the
  // steps a bound run leaves out. Only with dynamic dims (the cache axis is a symbol).
  std::map<const Node*, size_t> stepIndex;
  for (size_t i = 0; i < plan.steps.size(); ++i) stepIndex[plan.steps[i]] = i;
  const std::vector<KvCache> kvs = g.symbols().empty() ? std::vector<KvCache>() : findKvCaches(g, plan);
  std::string kvTable, kvPieces, kvSkips;
  int numPieces = 0, numSkips = 0;
  for (size_t k = 0; k < kvs.size(); ++k) {
    const KvCache& kv = kvs[k];
    kvTable += fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {}}},  // output {} %{} appends to input {} %{} along axis {}\n",
                           kv.output, kv.input, kv.axis, numPieces, kv.pieces.size(), numSkips,
                           kv.skipped.size(), cStringLiteral(kv.producer->name()), kv.output,
                           commentSafe(g.outputs()[kv.output]->name()), kv.input,
                           commentSafe(g.inputs()[kv.input]->name()), kv.axis);
    for (const KvPiece& pc : kv.pieces) {
      kvPieces += fmt::format("    {{{}, {}, {}, {}, {}, {}, {}}},  // step #{} {}: %{} + %{}{}\n", k,
                              stepIndex.at(pc.concat), slot.at(pc.fresh), slot.at(pc.full), pc.axis, pc.slab,
                              pc.dense ? 1 : 0, stepIndex.at(pc.concat), commentSafe(pc.concat->name()),
                              commentSafe(pc.concat->input(0)->name()), commentSafe(pc.fresh->name()),
                              pc.dense ? " (also read through a view: written densely too)" : "");
      ++numPieces;
    }
    for (const Node* n : kv.skipped) {
      kvSkips += fmt::format("    {},  // #{} {}\n", stepIndex.at(n), stepIndex.at(n), commentSafe(n->name()));
      ++numSkips;
    }
  }
  vars["KV"] = kvs.empty() ? "0" : "1";
  vars["NUM_KV"] = std::to_string(kvs.size());
  vars["KV_TABLE"] = kvTable;
  vars["KV_PIECES"] = kvPieces;
  vars["KV_SKIPS"] = kvSkips;

  vars["NUM_SLOTS"] = std::to_string(slot.size());
  vars["SLOT_TABLE"] = slots;
  vars["NUM_INPUTS"] = std::to_string(g.inputs().size());
  vars["INPUT_TABLE"] = inputs;
  vars["NUM_OUTPUTS"] = std::to_string(g.outputs().size());
  vars["OUTPUT_TABLE"] = outputs;
  vars["STEP_IO"] = io;
  vars["NUM_STEPS"] = std::to_string(plan.steps.size());
  vars["STEP_TABLE"] = steps;
  vars["NUM_REGIONS"] = std::to_string(numRegions);
  vars["REGION_TABLE"] = regions;
  vars["REGION_ORDER"] = regionOrder;
  vars["NUM_COPIES"] = std::to_string(plan.copies.size());
  vars["COPY_TABLE"] = copies;
  vars["ARENA_BYTES"] = std::to_string(plan.arenaBytes);
  return Status::success();
}

}  // namespace magneto
