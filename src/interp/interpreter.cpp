// Reference interpreter: walks the node list, allocates each result, and calls the reference
// kernel (runtime/cpu k_* tables) with the attributes encoded exactly as generated code gets them.
#include "magneto/interp/interpreter.h"

#include <cstring>
#include <unordered_map>

#include "magneto/ir/kernel_attrs.h"
#include "magneto/ir/op_schema.h"
#include "mg_runtime.h"

namespace magneto {
namespace {

mgrt::Tensor view(const Tensor& t) {
  mgrt::Tensor v;
  v.data = const_cast<uint8_t*>(t.bytes());
  v.dtype = static_cast<int32_t>(t.dtype());
  v.rank = t.type().rank();
  for (int i = 0; i < v.rank; ++i) v.dims[i] = t.dims()[i];
  // A zero-size tensor still counts as present.
  static uint8_t dummy[8];
  if (!v.data) v.data = dummy;
  return v;
}

}  // namespace

bool hasReferenceKernel(const std::string& op) { return mgrt::findKernel(op.c_str()) != nullptr; }

Expected<std::vector<Tensor>> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs) {
  std::vector<TensorType> types;
  for (const Value* v : n.outputs()) types.push_back(v->type());
  return evaluateNode(n, inputs, types);
}

Expected<std::vector<Tensor>> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs,
                                           const std::vector<TensorType>& resultTypes) {
  mgrt::KernelFn fn = mgrt::findKernel(n.kind().c_str());
  if (!fn) return unsupported("{}: no reference kernel for '{}'", n.describe(), n.kind());
  const OpSchema* schema = n.schema();
  const bool shapeOnly = schema && schema->has(kShapeOnly);  // reads dims, never data
  std::vector<mgrt::Tensor> ins(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;  // absent: data stays null
    if (inputs[i]->type().rank() > mgrt::kMaxRank)
      return unsupported("{}: operand {} has rank {}; the runtime supports tensors of rank up to {}",
                         n.describe(), i, inputs[i]->type().rank(), mgrt::kMaxRank);
    if (!inputs[i]->hasData() && !shapeOnly)
      return unsupported("{}: operand {} is an opaque constant (no data to evaluate)", n.describe(), i);
    ins[i] = view(*inputs[i]);
  }
  std::vector<Tensor> results;
  std::vector<mgrt::Tensor> outs(n.numOutputs());
  for (size_t i = 0; i < n.numOutputs(); ++i) {
    if (resultTypes[i].rank() > mgrt::kMaxRank)
      return unsupported("{}: result {} has rank {}; the runtime supports tensors of rank up to {}",
                         n.describe(), i, resultTypes[i].rank(), mgrt::kMaxRank);
    results.push_back(Tensor::zeros(resultTypes[i]));
    outs[i] = view(results.back());
  }
  mgrt::Attrs attrs(encodeAttrs(n).c_str());
  mgrt::Ctx ctx;
  int rc = fn(attrs, ins.data(), static_cast<int>(ins.size()), outs.data(),
              static_cast<int>(outs.size()), ctx);
  if (rc != 0) return badInput("{}: {}", n.describe(), ctx.error);
  return results;
}

Expected<std::map<std::string, Tensor>> interpret(const Graph& g,
                                                  const std::map<std::string, Tensor>& inputs) {
  std::unordered_map<const Value*, Tensor> env;
  for (Value* in : g.inputs()) {
    auto it = inputs.find(in->name());
    if (it == inputs.end()) return badInput("no value given for graph input '{}'", in->name());
    if (it->second.type() != in->type())
      return badInput("graph input '{}' expects {}, got {}", in->name(), in->type().str(),
                      it->second.type().str());
    env[in] = it->second;
  }
  for (Value* c : g.constants()) env[c] = c->constant();
  // Free intermediates after their last use to bound memory on big models.
  std::unordered_map<const Value*, size_t> remaining;
  for (Node* n : g.nodes())
    for (Value* v : n->inputs())
      if (v) ++remaining[v];
  for (Node* n : g.nodes()) {
    std::vector<const Tensor*> ins;
    for (Value* v : n->inputs()) ins.push_back(v ? &env.at(v) : nullptr);
    MG_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluateNode(*n, ins));
    for (size_t i = 0; i < outs.size(); ++i) env[n->output(i)] = std::move(outs[i]);
    for (Value* v : n->inputs())
      if (v && --remaining[v] == 0 && v->producer() && !v->isGraphOutput()) env.erase(v);
  }
  std::map<std::string, Tensor> result;
  for (Value* o : g.outputs()) result[o->name()] = env.at(o);
  return result;
}

}  // namespace magneto
