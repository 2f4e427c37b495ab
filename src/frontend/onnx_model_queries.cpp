// The queries of an ONNX file that need no import (the entry points of
// magneto/frontend/onnx_import.h that `magnetoc check` asks before it compiles): the graph inputs
// and what kind each is, which outputs are sequences or optionals, the output names, and which
// inputs decide shapes (shapeDeterminingInputs: those check binds from the test data).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "magneto/frontend/onnx_import.h"
#include "magneto/ir/op_schema.h"
#include "onnx_loader.h"
#include "onnx_normalize.h"
#include "proto_file.h"

namespace magneto {

namespace {

using frontend::LoadedModel;

// Whether `op`'s results carry none of its operands' values (the walk back from a shape operand
// stops there): ops that read only shapes, SequenceLength (only the length) and
// OptionalHasElement (only the presence), both known at compile time (onnx_sequence.cpp,
// onnx_optional.cpp).
bool isValueStop(const std::string& op) {
  if (op == "Shape" || op == "Size" || op == "Constant" || op == "SequenceLength" ||
      op == "OptionalHasElement")
    return true;
  const OpSchema* s = OpRegistry::instance().find(op);
  return s && s->has(kShapeOnly);
}

// "a sequence" for a value of a type other than tensor (or no type), else null.
const char* nonTensorKind(const onnx::ValueInfoProto& vi) {
  switch (vi.type().value_case()) {
    case onnx::TypeProto::kSequenceType: return "a sequence";
    case onnx::TypeProto::kMapType: return "a map";
    case onnx::TypeProto::kOptionalType: return "an optional";
    case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    default: return nullptr;
  }
}

}  // namespace

Expected<std::vector<OnnxModelInput>> onnxModelInputs(const std::string& path) {
  onnx::ModelProto m;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, m, "ONNX model"));
  // Test data of other types is not a TensorProto: refuse before it is read as one.
  for (const auto* list : {&m.graph().input(), &m.graph().output()})
    for (const auto& vi : *list)
      if (const char* kind = nonTensorKind(vi))
        if (!vi.type().has_sequence_type() && !vi.type().has_optional_type())
          return unsupported("{}: {} '{}' is {}: map and sparse tensor values are not supported", path,
                             list == &m.graph().input() ? "input" : "output", vi.name(), kind);
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  std::vector<OnnxModelInput> ins;
  for (const auto& vi : m.graph().input()) {
    if (inits.count(vi.name())) continue;
    OnnxModelInput in{vi.name(), false, vi.type().has_sequence_type(), vi.type().has_optional_type()};
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) {
      in.staticShape = true;
      for (const auto& d : vi.type().tensor_type().shape().dim())
        if (!d.has_dim_value() || d.dim_value() < 0) in.staticShape = false;
    }
    ins.push_back(in);
  }
  return ins;
}

namespace {

// f(output's ValueInfoProto) for each graph output of the file, in order.
template <typename T, typename F>
Expected<std::vector<T>> perOutput(const std::string& path, F f) {
  onnx::ModelProto m;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, m, "ONNX model"));
  std::vector<T> out;
  for (const auto& vi : m.graph().output()) out.push_back(f(vi));
  return out;
}

}  // namespace

Expected<std::vector<bool>> onnxModelSequenceOutputs(const std::string& path) {
  return perOutput<bool>(path, [](const onnx::ValueInfoProto& vi) { return vi.type().has_sequence_type(); });
}

Expected<std::vector<bool>> onnxModelOptionalOutputs(const std::string& path) {
  return perOutput<bool>(path, [](const onnx::ValueInfoProto& vi) { return vi.type().has_optional_type(); });
}

Expected<std::vector<std::string>> onnxModelOutputNames(const std::string& path) {
  return perOutput<std::string>(path, [](const onnx::ValueInfoProto& vi) { return vi.name(); });
}

namespace {

// The nodes of `g` and of its subgraphs (If, Loop and Scan bodies), the initializers of all, and
// for each subgraph input the names whose values it receives: a Loop body's cond and carried
// inputs the Loop's operand and the body output carried into them; a Scan body's states the same,
// its scan inputs the Scan's operand (elements of it).
void collectScopes(const onnx::GraphProto& g, int64_t opset,
                   std::vector<const onnx::NodeProto*>& nodes,
                   std::map<std::string, std::vector<std::string>>& feeds,
                   std::set<std::string>& initializers) {
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  for (const auto& n : g.node()) {
    nodes.push_back(&n);
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      const onnx::GraphProto& body = a.g();
      collectScopes(body, opset, nodes, feeds, initializers);
      int64_t scanInputs = 0;
      for (const auto& at : n.attribute())
        if (at.name() == "num_scan_inputs") scanInputs = at.i();
      const int base = n.op_type() == "Scan" && opset < 9 ? 1 : 0;
      const int64_t states = n.input_size() - base - scanInputs;
      for (int i = 0; i < body.input_size(); ++i) {
        int operand = -1, carried = -1;
        if (n.op_type() == "Loop" && i >= 1) {
          operand = i;
          carried = i - 1;
        } else if (n.op_type() == "SequenceMap") {
          operand = i;
        } else if (n.op_type() == "Scan") {
          operand = base + i;
          if (i < states) carried = i;
        }
        auto& f = feeds[body.input(i).name()];
        if (operand >= 0 && operand < n.input_size() && !n.input(operand).empty())
          f.push_back(n.input(operand));
        if (carried >= 0 && carried < body.output_size()) f.push_back(body.output(carried).name());
      }
    }
  }
}

// Whether an If with a run-time condition can be imported by selecting between its branches
// (onnx_control_flow.cpp): the branches declare, for every output, the same element type and
// rank, and differ in at most one dimension (a number or a symbol; a dimension with neither
// differs). Then its condition decides values, and at most one extent the package computes at
// run time (a data-dependent extent), never a shape the compile must know; it does not make the
// inputs it depends on shape-deciding. An output without a declared tensor type or shape may
// differ in anything: false.
bool ifBranchesSelectable(const onnx::NodeProto& n) {
  const onnx::GraphProto *then_ = nullptr, *else_ = nullptr;
  for (const auto& a : n.attribute()) {
    if (a.name() == "then_branch" && a.has_g()) then_ = &a.g();
    if (a.name() == "else_branch" && a.has_g()) else_ = &a.g();
  }
  if (!then_ || !else_ || then_->output_size() != else_->output_size()) return false;
  for (int i = 0; i < then_->output_size(); ++i) {
    const onnx::TypeProto &a = then_->output(i).type(), &b = else_->output(i).type();
    if (!a.has_tensor_type() || !b.has_tensor_type()) return false;
    const auto &ta = a.tensor_type(), &tb = b.tensor_type();
    if (ta.elem_type() == 0 || ta.elem_type() != tb.elem_type()) return false;
    if (!ta.has_shape() || !tb.has_shape() || ta.shape().dim_size() != tb.shape().dim_size())
      return false;
    int differ = 0;
    for (int d = 0; d < ta.shape().dim_size(); ++d) {
      const auto &da = ta.shape().dim(d), &db = tb.shape().dim(d);
      if (da.has_dim_value() && db.has_dim_value() && da.dim_value() == db.dim_value()) continue;
      if (da.has_dim_param() && db.has_dim_param() && !da.dim_param().empty() &&
          da.dim_param() == db.dim_param())
        continue;
      ++differ;
    }
    if (differ > 1) return false;
  }
  return true;
}

}  // namespace

Expected<std::vector<std::string>> shapeDeterminingInputs(const std::string& path, bool withData,
                                                          const std::vector<std::string>& runTimeDataOps) {
  MG_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> m,
                      frontend::loadOnnxModel(path, nullptr, /*runChecker=*/false));
  const onnx::GraphProto& graph = m->model.graph();
  std::vector<const onnx::NodeProto*> nodes;
  std::map<std::string, std::vector<std::string>> feeds;
  std::set<std::string> initializers;
  collectScopes(graph, m->opset, nodes, feeds, initializers);
  std::set<std::string> inputs;
  for (const auto& vi : graph.input()) inputs.insert(vi.name());
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto* n : nodes)
    for (const auto& o : n->output()) producer.emplace(o, n);

  // Walk back from every shape operand (and control operand of If and Loop) through the ops that
  // carry values (everything but the ops that read only shapes) to the graph inputs; through a
  // control-flow node to its operands and its subgraphs' outputs, through a subgraph's input to
  // what feeds it.
  // An If's condition is a seed only when its branches may differ in more than the one extent a
  // run-time selection computes (ifBranchesSelectable); otherwise the condition decides values,
  // which reach a shape operand (and are found from there) only where the If's outputs feed one.
  std::vector<std::string> work;
  for (const onnx::NodeProto* n : nodes)
    if (!(n->op_type() == "If" && ifBranchesSelectable(*n)))
    for (int pos : frontend::onnxShapeOperands(
             n->op_type(), m->opset,
             withData && std::find(runTimeDataOps.begin(), runTimeDataOps.end(), n->op_type()) ==
                             runTimeDataOps.end()))
      if (pos < n->input_size() && !n->input(pos).empty()) work.push_back(n->input(pos));
  std::set<std::string> seen, found;
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (name.empty() || !seen.insert(name).second || initializers.count(name)) continue;
    auto it = producer.find(name);
    if (it != producer.end()) {
      const onnx::NodeProto& n = *it->second;
      if (isValueStop(n.op_type())) continue;
      for (const auto& in : n.input()) work.push_back(in);
      for (const auto& a : n.attribute())
        if (a.has_g())
          for (const auto& vi : a.g().output()) work.push_back(vi.name());
      continue;
    }
    auto fed = feeds.find(name);
    if (fed != feeds.end()) {
      for (const auto& f : fed->second) work.push_back(f);
      continue;
    }
    if (inputs.count(name)) found.insert(name);
  }
  std::vector<std::string> out;
  for (const auto& vi : graph.input())
    if (found.count(vi.name()) && !initializers.count(vi.name())) out.push_back(vi.name());
  return out;
}
}  // namespace magneto
