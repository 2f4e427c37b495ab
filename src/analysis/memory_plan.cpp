// The memory planner (see include/magneto/analysis/memory_plan.h for the storage model).
//
// Arena placement is greedy best-fit over lifetimes: buffers are taken largest first (ties by the
// step that defines them, then by value id, so the result never depends on pointer values); each
// goes into the smallest gap between already placed buffers that are live at the same time, or
// above them all when no gap fits. Tests: tests/unit/codegen_test.cpp (MemoryPlan.*).
#include "magneto/analysis/memory_plan.h"

#include <algorithm>
#include <limits>

#include "magneto/ir/op_schema.h"

namespace magneto {

int64_t alignUp(int64_t bytes) {
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

namespace {

Expected<int64_t> byteSize(const Value* v) {
  if (v->dtype() == DType::kString || v->dtype() == DType::kUndefined || dtypeSize(v->dtype()) == 0)
    return unsupported("value '{}' has element type {}, which generated code cannot hold",
                       v->name(), dtypeName(v->dtype()));
  auto bytes = checkedByteSize(v->type());
  if (!bytes.ok()) return bytes.status().withContext("value '" + v->name() + "': ");
  return bytes;
}

// A value whose bytes live in the arena (an intermediate that is not a graph output).
bool isArenaValue(const Value* v) {
  return v->producer() != nullptr && !v->isGraphInput() && !v->isConstant() && !v->isGraphOutput();
}

bool canAlias(const Node* n) {
  const OpSchema* s = n->schema();
  if (!s || !s->has(kView) || n->numOutputs() != 1 || !n->hasInput(0)) return false;
  const Value* in = n->input(0);
  const Value* out = n->output(0);
  if (!isArenaValue(in) || out->isGraphOutput()) return false;
  if (in->dtype() != out->dtype()) return false;
  auto a = checkedNumel(in->dims()), b = checkedNumel(out->dims());
  return a.ok() && b.ok() && a.value() == b.value();
}

// Whether a value's extent changes with the dynamic dims (docs/DYNAMIC_SHAPES.md). The arena
// places values at fixed offsets, planned at the reference dims: an in-place Concat operand or a
// channel-slice view whose offset or contiguity depends on a symbol would be right at one binding
// only (a Concat on the batch axis: the second operand starts after the first's B rows), so those
// placements are made only between values of static extent.
bool extentVaries(const Value* v) {
  for (const DimExpr& e : v->symDims())
    if (!e.isConstant()) return true;
  return false;
}

// MgChannelSlice with batch 1 of an arena intermediate: channels [begin, end) are one contiguous
// run of bytes inside the operand, so the result is a view at a byte offset (returned in `offset`).
bool canOffsetAlias(const Node* n, int64_t& offset) {
  if (n->kind() != "MgChannelSlice" || n->numOutputs() != 1 || !n->hasInput(0)) return false;
  if (n->attrs().getInt("materialize", 0) != 0) return false;  // place-concat-slices wants a copy
  const Value* in = n->input(0);
  const Value* out = n->output(0);
  if (!isArenaValue(in) || out->isGraphOutput() || in->dtype() != out->dtype()) return false;
  if (extentVaries(in) || extentVaries(out)) return false;
  if (in->rank() < 2 || in->dims()[0] != 1) return false;
  int64_t begin = n->attrs().getInt("begin", -1);
  if (begin < 0) return false;
  int64_t inner = static_cast<int64_t>(dtypeSize(in->dtype()));
  for (int d = 2; d < in->rank(); ++d) inner *= in->dims()[d];
  offset = begin * inner;
  return true;
}

}  // namespace

ConcatElision planConcatElision(const Graph& g) {
  ConcatElision ce;
  for (const Node* n : g.nodes()) {
    if (n->kind() != "Concat" || n->numOutputs() != 1 || n->numInputs() < 1) continue;
    const Value* y = n->output(0);
    if (!isArenaValue(y) || y->dtype() == DType::kString || dtypeSize(y->dtype()) == 0) continue;
    if (extentVaries(y)) continue;
    int64_t axis = n->attrs().getInt("axis", 0);
    if (axis < 0) axis += y->rank();
    if (axis < 0 || axis >= y->rank()) continue;
    bool contiguous = true;
    for (int64_t d = 0; d < axis; ++d) contiguous &= y->dims()[d] == 1;
    if (!contiguous) continue;
    int64_t inner = static_cast<int64_t>(dtypeSize(y->dtype()));
    for (int64_t d = axis + 1; d < y->rank(); ++d) inner *= y->dims()[d];
    std::map<const Value*, int> times;
    for (const Value* v : n->inputs()) ++times[v];
    int64_t at = 0;
    size_t placed = 0;
    for (const Value* v : n->inputs()) {
      int64_t offset = at;
      at += v ? v->dims()[axis] * inner : 0;
      if (!v || times[v] != 1 || !isArenaValue(v) || v->dtype() != y->dtype() || extentVaries(v)) continue;
      const Node* p = v->producer();
      int64_t unused = 0;
      if (canAlias(p) || canOffsetAlias(p, unused) || p->kind() == "Concat") continue;
      if (offset % kTensorAlignment != 0 || ce.inPlace.count(v)) continue;
      ce.inPlace[v] = {n, offset};
      ++placed;
    }
    if (placed == n->numInputs()) ce.elided.push_back(n);
  }
  return ce;
}

namespace {

// Each buffer is at most kMaxTensorBytes; the arena is kept within kMaxTensorBytes too, so no
// offset arithmetic here can overflow.
Status placeBuffers(std::vector<ArenaBuffer>& buffers, int64_t& arenaBytes) {
  std::stable_sort(buffers.begin(), buffers.end(), [](const ArenaBuffer& a, const ArenaBuffer& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.first != b.first) return a.first < b.first;
    return a.value->id() < b.value->id();
  });
  arenaBytes = 0;
  std::vector<const ArenaBuffer*> placed;
  for (ArenaBuffer& buf : buffers) {
    if (buf.bytes == 0) {
      buf.offset = 0;  // nothing is read or written; any in-range pointer will do
      continue;
    }
    std::vector<const ArenaBuffer*> live;
    for (const ArenaBuffer* p : placed)
      if (p->first <= buf.last && buf.first <= p->last) live.push_back(p);
    std::sort(live.begin(), live.end(), [](const ArenaBuffer* a, const ArenaBuffer* b) {
      return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
    });
    int64_t cursor = 0;
    int64_t best = -1, bestGap = std::numeric_limits<int64_t>::max();
    for (const ArenaBuffer* p : live) {
      int64_t gap = p->offset - cursor;
      if (gap >= buf.bytes && gap < bestGap) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, p->offset + p->bytes);
    }
    buf.offset = best >= 0 ? best : cursor;
    if (buf.bytes > kMaxTensorBytes - buf.offset)
      return badInput("the intermediate tensors need more than 2^62 bytes of memory at once "
                      "(value '{}', {}, would start at byte {})",
                      buf.value->name(), buf.value->type().str(), buf.offset);
    arenaBytes = std::max(arenaBytes, buf.offset + buf.bytes);
    placed.push_back(&buf);
  }
  return Status::success();
}

}  // namespace

Expected<MemoryPlan> planMemory(const Graph& g) {
  MemoryPlan plan;

  // Graph inputs and outputs: the caller's buffers.
  for (size_t i = 0; i < g.inputs().size(); ++i)
    plan.storage[g.inputs()[i]] = Storage{StorageKind::kInput, 0, static_cast<int>(i)};
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    const Value* v = g.outputs()[k];
    MG_ASSIGN_OR_RETURN(int64_t bytes, byteSize(v));
    (void)bytes;
    bool produced = v->producer() != nullptr && !v->isGraphInput() && !v->isConstant();
    if (produced && !plan.storage.count(v))
      plan.storage[v] = Storage{StorageKind::kOutput, 0, static_cast<int>(k)};
    else
      plan.copies.push_back({static_cast<int>(k), v});
  }

  // Steps and aliases, in schedule order. Operands placed inside a Concat's result are aliases of
  // it from the start, so views of them resolve to the Concat's buffer too.
  std::map<const Value*, const Value*> root;  // alias -> the value owning the bytes
  std::map<const Value*, int64_t> rootOffset;  // alias -> its byte offset into the root
  std::map<const Node*, int> stepIndex;
  plan.concats = planConcatElision(g);
  for (const auto& [v, slot] : plan.concats.inPlace) {
    root[v] = slot.concat->output(0);
    rootOffset[v] = slot.offset;
  }
  // Shape data of dynamic dimensions (MgSymbolic) is no step: the package's runtime writes its
  // elements before the steps run, so its bytes live from the first step on.
  std::vector<const Value*> runtimeFilled;
  for (Node* n : g.nodes()) {
    int64_t offset = 0;
    if (n->kind() == "MgSymbolic") {
      runtimeFilled.push_back(n->output(0));
      continue;
    }
    if (plan.concats.isElided(n)) continue;
    if (canAlias(n) || canOffsetAlias(n, offset)) {
      const Value* in = n->input(0);
      auto it = root.find(in);
      root[n->output(0)] = it == root.end() ? in : it->second;
      rootOffset[n->output(0)] = (it == root.end() ? 0 : rootOffset.at(in)) + offset;
      plan.aliasedViews.push_back(n);
      continue;
    }
    stepIndex[n] = static_cast<int>(plan.steps.size());
    plan.steps.push_back(n);
  }
  // The members of a joint group run as ONE kernel on GPU targets (their blocks interleave), so
  // for lifetimes they are one step: a member's result must not reuse bytes another member still
  // reads. Consecutive steps of one joint group share the index of the first. So do the layers
  // of a wavefront group (passes/recurrent_wavefront.cpp), which run at the same time: layer l's
  // results must not take the bytes of layer l-1's input, still read while layer l runs.
  for (size_t i = 1; i < plan.steps.size(); ++i) {
    const Node* a = plan.steps[i - 1];
    const Node* b = plan.steps[i];
    auto git = g.groups().find(b->group());
    if (b->group() >= 0 && a->group() == b->group() && git != g.groups().end() &&
        (git->second.strategy == "joint" || git->second.strategy == "wavefront"))
      stepIndex[b] = stepIndex[a];
  }

  // Lifetimes of arena buffers (aliases extend their root's).
  std::map<const Value*, ArenaBuffer> owners;
  std::vector<const Value*> order;  // owners in definition order
  auto own = [&](const Value* out, int at) -> Status {
    auto it = owners.find(out);
    if (it != owners.end()) {
      it->second.first = std::min(it->second.first, at);
      return Status::success();
    }
    MG_ASSIGN_OR_RETURN(int64_t bytes, byteSize(out));
    ArenaBuffer b;
    b.value = out;
    b.bytes = alignUp(bytes);
    b.first = b.last = at;
    owners[out] = b;
    order.push_back(out);
    return Status::success();
  };
  for (const Value* v : runtimeFilled)
    if (isArenaValue(v)) MG_RETURN_IF_ERROR(own(v, 0));
  for (const Node* n : plan.steps) {
    for (const Value* out : n->outputs()) {
      if (!isArenaValue(out)) continue;
      auto slot = plan.concats.inPlace.find(out);
      // Written in place: the Concat's result owns the bytes from this step on.
      MG_RETURN_IF_ERROR(own(slot == plan.concats.inPlace.end() ? out : slot->second.concat->output(0),
                             stepIndex.at(n)));
    }
  }
  for (const Node* n : plan.steps) {
    int at = stepIndex.at(n);
    for (const Value* in : n->inputs()) {
      if (!in) continue;
      auto r = root.find(in);
      const Value* owner = r == root.end() ? in : r->second;
      auto it = owners.find(owner);
      if (it != owners.end()) it->second.last = std::max(it->second.last, at);
    }
  }
  for (const Value* v : order) plan.buffers.push_back(owners.at(v));
  MG_RETURN_IF_ERROR(placeBuffers(plan.buffers, plan.arenaBytes));
  for (const ArenaBuffer& b : plan.buffers)
    plan.storage[b.value] = Storage{StorageKind::kArena, b.offset, 0};
  for (const auto& [v, slot] : plan.concats.inPlace) {
    Storage st = plan.storage.at(slot.concat->output(0));
    st.offset += slot.offset;
    plan.storage[v] = st;
  }
  for (const Node* n : plan.aliasedViews) {
    const Value* out = n->output(0);
    Storage st = plan.storage.at(root.at(out));
    st.offset += rootOffset.at(out);
    plan.storage[out] = st;
  }

  // Constants read by a step or copied to an output: the weights blob, in creation order.
  std::map<const Value*, bool> needed;
  for (const Node* n : plan.steps)
    for (const Value* in : n->inputs())
      if (in && in->isConstant()) needed[in] = true;
  for (const OutputCopy& c : plan.copies)
    if (c.source->isConstant()) needed[c.source] = true;
  int64_t offset = 0;
  for (const Value* v : g.values()) {
    if (!needed.count(v)) continue;
    const Tensor& t = v->constant();
    MG_ASSIGN_OR_RETURN(int64_t bytes, byteSize(v));
    if (!t.hasData())
      return unsupported("constant '{}' has no data (an opaque blob from textual IR): cannot emit "
                         "weights for it", v->name());
    if (static_cast<int64_t>(t.byteSize()) != bytes)
      return internalStatus("constant '{}' holds {} bytes, its type {} needs {}", v->name(),
                            t.byteSize(), v->type().str(), bytes);
    plan.storage[v] = Storage{StorageKind::kWeights, offset, 0};
    plan.weights.push_back(v);
    offset += alignUp(bytes);
  }
  plan.weightsBytes = offset;

  // Anything a step touches must have a home by now.
  for (const Node* n : plan.steps) {
    for (const Value* v : n->inputs())
      if (v && !plan.storage.count(v))
        return internalStatus("{}: operand '{}' has no storage", n->describe(), v->name());
    for (const Value* v : n->outputs()) {
      if (plan.storage.count(v)) continue;
      // A result that is a graph output listed only as a copy source cannot happen (first
      // occurrence owns it); anything else is a planner bug.
      return internalStatus("{}: result '{}' has no storage", n->describe(), v->name());
    }
  }
  return plan;
}

}  // namespace magneto
