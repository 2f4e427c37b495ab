// ONNX ModelProto -> ir::Graph (the entry points of magneto/frontend/onnx_import.h).
//
// onnx_loader.cpp has already parsed, sorted, upgraded and checked the model. Here:
//   1. initializers become constants; old-style models also list them as graph inputs, and the
//      initializer wins (such an input is not a graph input of the IR);
//   2. the remaining inputs get fully static shapes (the model's dims, overridden by --shape;
//      a symbolic or unknown dim is an error that says how to fix it) or become constants when
//      bound (ImportOptions::bindings);
//   3. nodes are built in order: Constant nodes become constants, others are normalized
//      (onnx_normalize.cpp), created, shape-inferred with our op table and, when their operands
//      are constant (or the op reads only shapes), folded at once. Folding as we go is what makes
//      Shape -> Gather -> Concat -> Reshape resolve: Reshape's shape operand is a constant by the
//      time Reshape is inferred.
// Values are tracked by ONNX name; folded values are re-created under their ONNX name.
#include "magneto/frontend/onnx_import.h"

#include <algorithm>
#include <set>

#include "magneto/interp/fold_node.h"
#include "magneto/ir/op_schema.h"
#include "onnx_attribute.h"
#include "onnx_loader.h"
#include "onnx_normalize.h"
#include "proto_file.h"
#include "tensor_proto.h"

namespace magneto {

namespace {

using frontend::LoadedModel;

std::string joinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

class Importer {
 public:
  Importer(LoadedModel& m, const ImportOptions& opts, ImportInfo& info)
      : m_(m), graph_(m.model.graph()), opts_(opts), info_(info), g_(std::make_unique<Graph>()) {}

  Expected<std::unique_ptr<Graph>> run() {
    for (const auto& t : graph_.initializer()) reserved_.insert(t.name());
    for (const auto& vi : graph_.input()) reserved_.insert(vi.name());
    for (const auto& n : graph_.node())
      for (const auto& o : n.output()) reserved_.insert(o);
    MG_RETURN_IF_ERROR(addInitializers());
    MG_RETURN_IF_ERROR(checkOptionNames());
    MG_RETURN_IF_ERROR(addInputs());
    for (int i = 0; i < graph_.node_size(); ++i) MG_RETURN_IF_ERROR(addNode(graph_.node(i), i));
    MG_RETURN_IF_ERROR(addOutputs());
    g_->removeDeadValues(false);
    return std::move(g_);
  }

 private:
  Status fail(const Status& s) const { return s.withContext(m_.path + ": "); }

  Status addInitializers() {
    for (const auto& t : graph_.initializer()) {
      if (values_.count(t.name()))
        return badInput("{}: initializer '{}' is defined twice", m_.path, t.name());
      auto tensor = frontend::tensorFromProto(t, m_.dir, "initializer '" + t.name() + "'");
      if (!tensor.ok()) return fail(tensor.status());
      values_[t.name()] = g_->addConstant(t.name(), std::move(tensor).value());
    }
    return Status::success();
  }

  // Every --shape and --bind name must be a real graph input.
  Status checkOptionNames() {
    std::vector<std::string> inputs;
    for (const auto& vi : graph_.input())
      if (!values_.count(vi.name())) inputs.push_back(vi.name());
    auto check = [&](const std::string& name, const char* flag) -> Status {
      if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
        return Status::success();
      if (values_.count(name))
        return badInput("{}: {} names '{}', which is an initializer, not a graph input", m_.path,
                        flag, name);
      return badInput("{}: {} names '{}', which is not a graph input (inputs: {})", m_.path, flag,
                      name, joinNames(inputs));
    };
    for (const auto& [name, dims] : opts_.shapes) MG_RETURN_IF_ERROR(check(name, "--shape"));
    for (const auto& [name, t] : opts_.bindings) MG_RETURN_IF_ERROR(check(name, "--bind"));
    return Status::success();
  }

  Expected<TensorType> inputType(const onnx::ValueInfoProto& vi) {
    const std::string& name = vi.name();
    if (!vi.type().has_tensor_type())
      return unsupported("{}: input '{}' is not a tensor (sequence, map and optional inputs are "
                         "not supported)",
                         m_.path, name);
    const auto& tt = vi.type().tensor_type();
    auto dt = frontend::dtypeFromOnnx(tt.elem_type());
    if (!dt.ok()) return fail(dt.status().withContext("input '" + name + "': "));
    auto given = opts_.shapes.find(name);
    if (given != opts_.shapes.end()) {
      if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(given->second.size()))
        return badInput("{}: --shape {}={} has rank {}, but input '{}' has rank {} in the model",
                        m_.path, name, dimsStr(given->second), given->second.size(), name,
                        tt.shape().dim_size());
      if (tt.has_shape()) {
        Dims model;
        bool isStatic = true;
        for (const auto& d : tt.shape().dim()) {
          isStatic &= d.has_dim_value();
          model.push_back(d.dim_value());
        }
        if (isStatic && model != given->second)
          info_.notes.push_back(fmt::format("input '{}': --shape {} overrides the model's {}", name,
                                            dimsStr(given->second), dimsStr(model)));
      }
      return TensorType{*dt, given->second};
    }
    if (!tt.has_shape())
      return badInput("{}: input '{}' has no shape in the model; fix it with --shape {}=DIMS "
                      "(e.g. 1x3x224x224)",
                      m_.path, name, name);
    Dims dims;
    std::string problem;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(d.dim_value());
        continue;
      }
      dims.push_back(1);
      if (!problem.empty()) continue;
      if (d.has_dim_value())
        problem = fmt::format("negative dimension {} (dim {})", d.dim_value(), i);
      else if (d.has_dim_param() && !d.dim_param().empty())
        problem = fmt::format("symbolic dimension '{}' (dim {})", d.dim_param(), i);
      else
        problem = fmt::format("unknown dimension (dim {})", i);
    }
    if (!problem.empty()) {
      std::string example = dims.empty() ? "scalar" : dimsStr(dims);
      return badInput("{}: input '{}' has {}; fix it with --shape {}={}", m_.path, name, problem,
                      name, example);
    }
    return TensorType{*dt, dims};
  }

  Status addInputs() {
    for (const auto& vi : graph_.input()) {
      const std::string& name = vi.name();
      if (values_.count(name)) continue;  // an initializer listed as input (old-style models)
      auto bound = opts_.bindings.find(name);
      if (bound != opts_.bindings.end()) {
        MG_RETURN_IF_ERROR(checkBinding(vi, bound->second));
        values_[name] = g_->addConstant(name, bound->second);
        info_.notes.push_back(fmt::format("input '{}' bound to a constant {}", name,
                                          bound->second.type().str()));
        continue;
      }
      MG_ASSIGN_OR_RETURN(TensorType type, inputType(vi));
      auto bytes = checkedByteSize(type);
      if (!bytes.ok()) return fail(bytes.status().withContext("input '" + name + "': "));
      values_[name] = g_->addInput(name, std::move(type));
    }
    return Status::success();
  }

  Status checkBinding(const onnx::ValueInfoProto& vi, const Tensor& t) {
    if (!t.hasData())
      return badInput("{}: --bind {}: the bound value has no data", m_.path, vi.name());
    if (!vi.type().has_tensor_type()) return Status::success();
    const auto& tt = vi.type().tensor_type();
    if (tt.elem_type() != 0 && tt.elem_type() != static_cast<int32_t>(t.dtype()))
      return badInput("{}: --bind {}: value is {}, the input is {}", m_.path, vi.name(),
                      dtypeName(t.dtype()), frontend::onnxDTypeName(tt.elem_type()));
    if (!tt.has_shape()) return Status::success();
    bool ok = tt.shape().dim_size() == t.type().rank();
    for (int i = 0; ok && i < tt.shape().dim_size(); ++i)
      if (tt.shape().dim(i).has_dim_value()) ok = tt.shape().dim(i).dim_value() == t.dims()[i];
    if (!ok)
      return badInput("{}: --bind {}: value has shape {}, which does not fit the input's shape",
                      m_.path, vi.name(), dimsStr(t.dims()));
    return Status::success();
  }

  // A value name for an unnamed result that no ONNX tensor uses.
  std::string freshName(const std::string& base) {
    std::string name = base;
    for (int i = 1; reserved_.count(name) || g_->findValue(name); ++i)
      name = base + "_" + std::to_string(i);
    reserved_.insert(name);
    return name;
  }

  Status addNode(const onnx::NodeProto& np, int index) {
    const std::string name = frontend::onnxNodeName(np, index);
    const std::string desc = frontend::describeOnnxNode(np, index);
    if (np.op_type() == "Constant") {
      if (np.output_size() != 1 || np.output(0).empty())
        return badInput("{}: {}: a Constant needs one named result", m_.path, desc);
      auto t = frontend::constantNodeValue(np, m_.dir, desc);
      if (!t.ok()) return fail(t.status());
      values_[np.output(0)] = g_->addConstant(np.output(0), std::move(t).value());
      return Status::success();
    }
    frontend::NodeDraft d;
    d.kind = np.op_type();
    d.name = name;
    d.sourceOpset = m_.sourceOpset;
    d.freshName = [this](const std::string& base) { return freshName(base); };
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        d.inputs.push_back(nullptr);
        continue;
      }
      auto it = values_.find(in);
      if (it == values_.end())  // sortOnnxNodes guarantees definitions; keep the error anyway
        return badInput("{}: {} reads undefined tensor '{}'", m_.path, desc, in);
      d.inputs.push_back(it->second);
    }
    for (const auto& a : np.attribute()) {
      auto attr = frontend::convertAttribute(a, m_.dir, desc);
      if (!attr.ok()) return fail(attr.status());
      d.attrs.set(a.name(), std::move(attr).value());
    }
    MG_RETURN_IF_ERROR(fail(frontend::normalizeNode(*g_, m_.opset, d)));

    std::vector<std::string> resultNames;
    for (int i = 0; i < np.output_size(); ++i)
      resultNames.push_back(np.output(i).empty()
                                ? freshName(name + "_unused" + std::to_string(i))
                                : np.output(i));
    std::vector<TensorType> types(resultNames.size());
    Node* n = g_->createNode(d.kind, d.inputs, types, std::move(d.attrs), name, nullptr,
                             resultNames);
    MG_RETURN_IF_ERROR(fail(inferNode(*n)));
    for (int i = 0; i < np.output_size(); ++i)
      if (!np.output(i).empty()) values_[np.output(i)] = n->output(i);
    if (opts_.foldOnImport) MG_RETURN_IF_ERROR(foldIfConstant(n, np));
    return Status::success();
  }

  Status foldIfConstant(Node* n, const onnx::NodeProto& np) {
    const OpSchema* s = n->schema();
    bool constant = true;
    for (Value* v : n->inputs())
      if (v && !(v->isConstant() && v->constant().hasData())) constant = false;
    if (!constant && !(s && s->has(kShapeOnly))) return Status::success();
    const size_t nout = n->numOutputs();
    const size_t before = g_->values().size();
    auto folded = foldNode(*g_, n);
    if (!folded.ok())  // the message names the node already
      return fail(Status(folded.status().code(),
                         folded.status().message() + " (while folding constants on import)"));
    if (!*folded) return Status::success();
    // foldNode appended one constant per result and, the results being unused so far, erased the
    // node with its results: the constants are the last `nout` values.
    std::vector<Value*> all = g_->values();
    MG_CHECK(all.size() == before && all.size() >= nout, "unexpected value count after folding {}",
             np.op_type());
    for (size_t i = 0; i < nout; ++i) {
      Value* c = all[all.size() - nout + i];
      MG_CHECK(c->isConstant(), "folded result {} of {} is not a constant", i, np.op_type());
      const std::string& onnxName = np.output(static_cast<int>(i));
      if (onnxName.empty()) continue;
      // Re-create under the ONNX name (freed by the erase); the "_const" copy dies unused.
      values_[onnxName] = g_->addConstant(onnxName, c->constant());
    }
    return Status::success();
  }

  Status addOutputs() {
    for (const auto& vi : graph_.output()) {
      auto it = values_.find(vi.name());
      if (it == values_.end())
        return badInput("{}: graph output '{}' is not computed by any node, input or initializer",
                        m_.path, vi.name());
      Value* v = it->second;
      if (vi.type().has_tensor_type()) {
        int32_t declared = vi.type().tensor_type().elem_type();
        if (declared != 0 && declared != static_cast<int32_t>(v->dtype()))
          info_.notes.push_back(fmt::format("output '{}' is declared {} but computes {}",
                                            vi.name(), frontend::onnxDTypeName(declared),
                                            dtypeName(v->dtype())));
      }
      g_->addOutput(v);
    }
    if (graph_.output_size() == 0) return badInput("{}: the graph has no outputs", m_.path);
    return Status::success();
  }

  LoadedModel& m_;
  const onnx::GraphProto& graph_;
  const ImportOptions& opts_;
  ImportInfo& info_;
  std::unique_ptr<Graph> g_;
  std::map<std::string, Value*> values_;  // ONNX tensor name -> value
  std::set<std::string> reserved_;        // every tensor name the model uses
};

bool isValueStop(const std::string& op) {
  if (op == "Shape" || op == "Size" || op == "Constant") return true;
  const OpSchema* s = OpRegistry::instance().find(op);
  return s && s->has(kShapeOnly);
}

}  // namespace

Expected<std::unique_ptr<Graph>> importOnnx(const std::string& path, const ImportOptions& opts,
                                            ImportInfo* info) {
  ImportInfo local;
  ImportInfo& inf = info ? *info : local;
  MG_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> m, frontend::loadOnnxModel(path, &inf));
  Importer imp(*m, opts, inf);
  return imp.run();
}

Expected<std::unique_ptr<Graph>> importOnnxFromMemory(const void* data, size_t size,
                                                      const std::string& name,
                                                      const ImportOptions& opts,
                                                      ImportInfo* info) {
  ImportInfo local;
  ImportInfo& inf = info ? *info : local;
  MG_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> m,
                      frontend::loadOnnxModelFromMemory(data, size, name, &inf));
  Importer imp(*m, opts, inf);
  return imp.run();
}

Expected<std::vector<OnnxModelInput>> onnxModelInputs(const std::string& path) {
  onnx::ModelProto m;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, m, "ONNX model"));
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  std::vector<OnnxModelInput> ins;
  for (const auto& vi : m.graph().input()) {
    if (inits.count(vi.name())) continue;
    OnnxModelInput in{vi.name(), false};
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) {
      in.staticShape = true;
      for (const auto& d : vi.type().tensor_type().shape().dim())
        if (!d.has_dim_value() || d.dim_value() < 0) in.staticShape = false;
    }
    ins.push_back(in);
  }
  return ins;
}

Expected<std::vector<std::string>> onnxModelOutputNames(const std::string& path) {
  onnx::ModelProto m;
  MG_RETURN_IF_ERROR(frontend::readProtoFile(path, m, "ONNX model"));
  std::vector<std::string> names;
  for (const auto& vi : m.graph().output()) names.push_back(vi.name());
  return names;
}

Expected<std::vector<std::string>> shapeDeterminingInputs(const std::string& path) {
  MG_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> m,
                      frontend::loadOnnxModel(path, nullptr, /*runChecker=*/false));
  const onnx::GraphProto& graph = m->model.graph();
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& o : graph.node(i).output()) producer[o] = i;

  // Walk back from every shape operand through the ops that carry values (everything but the
  // ops that read only shapes) to the graph inputs.
  std::vector<std::string> work;
  for (const auto& n : graph.node())
    for (int pos : frontend::onnxShapeOperands(n.op_type(), m->opset))
      if (pos < n.input_size() && !n.input(pos).empty()) work.push_back(n.input(pos));
  std::set<std::string> seen, found;
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (!seen.insert(name).second || initializers.count(name)) continue;
    auto it = producer.find(name);
    if (it == producer.end()) {
      found.insert(name);  // a graph input (sortOnnxNodes checked every name is defined)
      continue;
    }
    const auto& n = graph.node(it->second);
    if (isValueStop(n.op_type())) continue;
    for (const auto& in : n.input())
      if (!in.empty()) work.push_back(in);
  }
  std::vector<std::string> out;
  for (const auto& vi : graph.input())
    if (found.count(vi.name()) && !initializers.count(vi.name())) out.push_back(vi.name());
  return out;
}

}  // namespace magneto
