#include "magneto/ir/op_schema.h"

#include <algorithm>

namespace magneto {

OpRegistry& OpRegistry::instance() {
  static OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    registerAllOps(*reg);
    return reg;
  }();
  return *r;
}

void OpRegistry::add(OpSchema s) {
  MG_CHECK(!schemas_.count(s.name), "op '{}' registered twice", s.name);
  std::string name = s.name;
  schemas_.emplace(std::move(name), std::move(s));
}

const OpSchema* OpRegistry::find(const std::string& name) const {
  auto it = schemas_.find(name);
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : schemas_) out.push_back(k);
  return out;
}

const Tensor* InferContext::constantInput(size_t i) const {
  if (probeConst_) return i < probeConst_->size() ? (*probeConst_)[i] : nullptr;
  Value* v = node_.input(i);
  if (v && v->producer() && v->producer()->kind() == "MgSymbolic") {
    auto it = symbolicValues_.find(i);
    if (it != symbolicValues_.end()) return &it->second;
    const Graph* g = node_.graph();
    auto t = symbolicValueAt(*v->producer(), g ? g->referenceBinding() : DimBinding{});
    if (!t.ok()) return nullptr;
    return &symbolicValues_.emplace(i, std::move(*t)).first->second;
  }
  return v && v->isConstant() && v->constant().hasData() ? &v->constant() : nullptr;
}

Expected<Tensor> symbolicValueAt(const Node& n, const DimBinding& b) {
  auto exprs = n.attrs().getStrings("exprs");
  auto dt = static_cast<DType>(n.attrs().getInt("to", static_cast<int64_t>(DType::kI64)));
  std::vector<int64_t> vals;
  for (const std::string& s : exprs) {
    MG_ASSIGN_OR_RETURN(DimExpr e, DimExpr::parse(s));
    MG_ASSIGN_OR_RETURN(int64_t v, e.evaluate(b));
    vals.push_back(v);
  }
  Dims shape = n.attrs().getInts("shape", {static_cast<int64_t>(vals.size())});
  if (dt == DType::kI32) {
    std::vector<int32_t> v32;
    for (int64_t v : vals) {
      if (v < INT32_MIN || v > INT32_MAX)
        return badInput("{}: element {} does not fit int32 at this binding", n.describe(), v);
      v32.push_back(static_cast<int32_t>(v));
    }
    return Tensor::fromVector(DType::kI32, shape, v32);
  }
  return Tensor::fromVector(DType::kI64, shape, vals);
}

Expected<std::vector<int64_t>> InferContext::constInts(size_t i, const char* what) const {
  if (!hasInput(i)) return badInput("missing operand {} ({})", i, what);
  const Tensor* t = constantInput(i);
  if (!t)
    return unsupported(
        "operand {} ('{}', the {}) must be known at compile time: Magneto compiles static shapes. "
        "Make it an initializer or a Constant (`magnetoc check` binds a graph input that feeds it to "
        "its data set's values)",
        i, node_.input(i)->name(), what);
  if (!isInteger(t->dtype()))
    return badInput("operand {} ('{}', the {}) must be an integer tensor, got {}", i,
                    node_.input(i)->name(), what, dtypeName(t->dtype()));
  return t->toInts();
}

void InferContext::setOutput(size_t i, TensorType t) {
  MG_CHECK(i < node_.numOutputs(), "{} has no result {}", node_.describe(), i);
  if (probeOut_) {
    if (probeOut_->size() < node_.numOutputs()) probeOut_->resize(node_.numOutputs());
    (*probeOut_)[i] = std::move(t);
    return;
  }
  node_.output(i)->setType(std::move(t));
}

Status inferNode(Node& n, std::vector<DataDim>* dataDims) {
  std::string ctx = n.describe() + ": ";
  const OpSchema* s = n.schema();
  if (!s) return unsupported("{}unsupported operator '{}'", ctx, n.kind());
  int nin = static_cast<int>(n.numInputs());
  // Trailing absent optional operands do not count.
  while (nin > 0 && !n.input(nin - 1)) --nin;
  if (nin < s->minInputs || (s->maxInputs >= 0 && nin > s->maxInputs))
    return badInput("{}expected {}{} operands, got {}", ctx, s->minInputs,
                    s->maxInputs == s->minInputs ? std::string()
                    : s->maxInputs < 0          ? std::string(" or more")
                                                : fmt::format(" to {}", s->maxInputs),
                    nin);
  // A required operand given as an empty name (an absent optional's spelling) is missing: shape
  // inference reads every required operand (found by fuzz_onnx_import: Expand with input "").
  for (int i = 0; i < s->minInputs; ++i)
    if (!n.input(i)) return badInput("{}operand {} is required but absent (an empty name)", ctx, i);
  int nout = static_cast<int>(n.numOutputs());
  if (nout < s->minOutputs || (s->maxOutputs >= 0 && nout > s->maxOutputs))
    return badInput("{}expected {} to {} results, got {}", ctx, s->minOutputs, s->maxOutputs,
                    nout);
  for (const AttrSpec& a : s->attrs) {
    const Attribute* got = n.attrs().find(a.name);
    if (!got) {
      if (a.required) return badInput("{}missing required attribute '{}'", ctx, a.name);
      continue;
    }
    bool ok = got->kind() == a.kind ||
              (a.kind == Attribute::Kind::kFloat && got->kind() == Attribute::Kind::kInt);
    if (!ok)
      return badInput("{}attribute '{}' should be {}, got {}", ctx, a.name,
                      attrKindName(a.kind), attrKindName(got->kind()));
  }
  for (size_t i = 0; i < n.numInputs(); ++i) {
    if (n.input(i) && n.input(i)->dtype() == DType::kUndefined)
      return internalStatus("{}operand {} has no type yet", ctx, i);
  }
  if (!s->infer) return internalStatus("{}op '{}' has no shape inference", ctx, n.kind());
  InferContext ic(n);
  MG_RETURN_IF_ERROR(s->infer(ic).withContext(ctx));
  if (dataDims) *dataDims = ic.dataDims();
  constexpr int kMaxRank = 8;  // the runtime's limit (runtime/cpu/mg_runtime.h)
  for (Value* v : n.outputs()) {
    if (v->rank() > kMaxRank)
      return unsupported("{}result '{}' has rank {}; Magneto supports tensors of rank up to {}", ctx,
                         v->name(), v->rank(), kMaxRank);
    if (v->dtype() == DType::kUndefined)
      return internalStatus("{}shape inference left result '{}' untyped", ctx, v->name());
    auto bytes = checkedByteSize(v->type());
    if (!bytes.ok()) return bytes.status().withContext(ctx + "result '" + v->name() + "': ");
  }
  return Status::success();
}

Status inferNodeAt(Node& n, const std::vector<TensorType>& ins,
                   const std::vector<const Tensor*>& consts, std::vector<TensorType>* outs,
                   std::vector<DataDim>* dataDims) {
  const OpSchema* s = n.schema();
  if (!s || !s->infer) return unsupported("{}: no shape inference", n.describe());
  outs->assign(n.numOutputs(), TensorType{});
  InferContext ic(n, &ins, &consts, outs);
  MG_RETURN_IF_ERROR(s->infer(ic).withContext(n.describe() + ": "));
  if (dataDims) *dataDims = ic.dataDims();
  for (size_t i = 0; i < outs->size(); ++i) {
    if ((*outs)[i].dtype == DType::kUndefined)
      return internalStatus("{}: shape inference left result {} untyped", n.describe(), i);
    auto bytes = checkedByteSize((*outs)[i]);
    if (!bytes.ok()) return bytes.status().withContext(n.describe() + ": ");
  }
  return Status::success();
}

Expected<Dims> broadcastDims(const Dims& a, const Dims& b) {
  size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      return badInput("shapes {} and {} do not broadcast (dimension {}: {} vs {})", dimsStr(a),
                      dimsStr(b), i, da, db);
  }
  return out;
}

Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return badInput("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace magneto
