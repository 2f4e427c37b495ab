// ONNX ModelProto -> ir::Graph (the entry points of magneto/frontend/onnx_import.h).
//
// onnx_loader.cpp has already parsed, sorted, upgraded and checked the model. Here:
//   1. initializers become constants; old-style models also list them as graph inputs, and the
//      initializer wins (such an input is not a graph input of the IR);
//   2. the remaining inputs get fully static shapes (the model's dims, overridden by --shape;
//      a symbolic or unknown dim is an error that says how to fix it) or become constants when
//      bound (ImportOptions::bindings); a sequence input is one input per element, an optional
//      input what it holds (ImportOptions::sequenceInputs, optionalInputs);
//   3. nodes are built in order: Constant nodes become constants, others are normalized
//      (onnx_normalize.cpp), created, shape-inferred with our op table and, when their operands
//      are constant (or the op reads only shapes), folded at once. Folding as we go is what makes
//      Shape -> Gather -> Concat -> Reshape resolve: Reshape's shape operand is a constant by the
//      time Reshape is inferred.
//      If, Loop and Scan are specialised (onnx_control_flow.cpp): their bodies' nodes are imported
//      through the same addNode, in a scope of their own, once per branch taken or iteration.
// Values are tracked by ONNX name in a stack of scopes (a subgraph's names first, then the
// enclosing graphs'); folded values are re-created under their IR name. At the top level a value's
// IR name is its ONNX name; in a body it is the body's prefix (NODE/ITER/) and the ONNX name.
#include "magneto/frontend/onnx_import.h"

#include <algorithm>
#include <deque>
#include <set>

#include "magneto/interp/fold_node.h"
#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/symbolic.h"
#include "onnx_attribute.h"
#include "onnx_control_flow.h"
#include "onnx_loader.h"
#include "onnx_normalize.h"
#include "onnx_optional.h"
#include "onnx_sequence.h"
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

// Every tensor name `g` and its subgraphs use.
void collectNames(const onnx::GraphProto& g, std::set<std::string>& names) {
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& vi : g.input()) names.insert(vi.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) names.insert(o);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collectNames(a.g(), names);
      for (const auto& sub : a.graphs()) collectNames(sub, names);
    }
  }
}

class Importer : public frontend::OptionalHost {
 public:
  Importer(LoadedModel& m, const ImportOptions& opts, ImportInfo& info)
      : m_(m), graph_(m.model.graph()), opts_(opts), info_(info), g_(std::make_unique<Graph>()) {
    scopes_.emplace_back();
  }

  Expected<std::unique_ptr<Graph>> run() {
    collectNames(graph_, reserved_);
    MG_RETURN_IF_ERROR(addInitializers());
    foldBudget_ = opts_.foldBudgetBytes > 0 ? FoldBudget(opts_.foldBudgetBytes)
                                            : FoldBudget::forGraph(*g_);
    MG_RETURN_IF_ERROR(checkOptionNames());
    g_->symbols() = opts_.dynamic;
    MG_RETURN_IF_ERROR(addInputs());
    for (int i = 0; i < graph_.node_size(); ++i)
      MG_RETURN_IF_ERROR(fail(addNode(graph_.node(i), i)));
    MG_RETURN_IF_ERROR(addOutputs());
    g_->removeDeadValues(false);
    return std::move(g_);
  }

  // --- frontend::BodyImporter (onnx_control_flow.cpp) ---

  bool isPlaceholder(const Value* v) const override {
    return seqs_.count(v) != 0 || optionals_.count(v) != 0;
  }

  Expected<std::vector<Value*>> importBody(const onnx::GraphProto& body,
                                           const std::vector<Value*>& inputs,
                                           const std::string& prefix) override {
    MG_CHECK(static_cast<size_t>(body.input_size()) == inputs.size(),
             "body of {} inputs given {} values", body.input_size(), inputs.size());
    if (body.sparse_initializer_size() > 0)
      return unsupported("sparse initializers are not supported");
    unrolledNodes_ += body.node_size();
    if (unrolledNodes_ > frontend::kMaxUnrolledNodes)
      return unsupported("specialising control flow would import more than {} body nodes in all, "
                         "the most Magneto unrolls at compile time",
                         frontend::kMaxUnrolledNodes);
    scopes_.push_back(Scope{{}, prefix});
    struct Pop {
      std::deque<Scope>& s;
      ~Pop() { s.pop_back(); }
    } pop{scopes_};
    for (int i = 0; i < body.input_size(); ++i) {
      MG_RETURN_IF_ERROR(checkBodyInput(body.input(i), inputs[i]));
      bind(body.input(i).name(), inputs[i]);
    }
    for (const auto& t : body.initializer()) {
      auto tensor = frontend::tensorFromProto(t, m_.dir, "initializer '" + t.name() + "'");
      if (!tensor.ok()) return tensor.status();
      bind(t.name(), g_->addConstant(irName(t.name()), std::move(tensor).value()));
    }
    for (int i = 0; i < body.node_size(); ++i) MG_RETURN_IF_ERROR(addNode(body.node(i), i));
    std::vector<Value*> outs;
    for (const auto& vi : body.output()) {
      Value* v = lookup(vi.name());
      if (!v)
        return badInput("output '{}' is not computed by any node, input or initializer",
                        vi.name());
      outs.push_back(v);
    }
    return outs;
  }

  Expected<Value*> addOp(const std::string& kind, const std::vector<Value*>& inputs,
                         AttrMap attrs, const std::string& name) override {
    MG_ASSIGN_OR_RETURN(std::vector<Value*> results, addOpN(kind, inputs, std::move(attrs), name, 1));
    return results[0];
  }

  // --- frontend::SequenceHost (onnx_sequence.cpp) ---

  Expected<std::vector<Value*>> addOpN(const std::string& kind, const std::vector<Value*>& inputs,
                                       AttrMap attrs, const std::string& name,
                                       int nresults) override {
    MG_RETURN_IF_ERROR(refusePlaceholderOperands(inputs, fmt::format("node '{}' ({})", name, kind)));
    std::vector<TensorType> types(static_cast<size_t>(nresults));
    std::vector<std::string> names;
    for (int i = 0; i < nresults; ++i)
      names.push_back(freshName(nresults == 1 ? name : name + "_" + std::to_string(i)));
    Node* n = g_->createNode(kind, inputs, types, std::move(attrs), name, nullptr, names);
    std::vector<DataDim> dataDims;
    MG_RETURN_IF_ERROR(inferNode(*n, &dataDims));
    MG_RETURN_IF_ERROR(declareDataSymbols(*g_, n, dataDims));
    MG_RETURN_IF_ERROR(inferSymbolicNode(*g_, n));
    return foldIfConstant(n);
  }

  const frontend::SeqValue* sequenceOf(const Value* v) const override {
    auto it = seqs_.find(v);
    return it == seqs_.end() ? nullptr : &it->second;
  }

  // A sequence stands as an unused i64 constant (dropped with the dead values at the end); no IR
  // node ever reads one (refusePlaceholderOperands).
  Value* makeSequence(const std::string& base, frontend::SeqValue s) override {
    Value* v = g_->addConstant(freshName(base), Tensor::fromVector<int64_t>(DType::kI64, {}, {0}));
    seqs_[v] = std::move(s);
    return v;
  }

  std::string resultName(const std::string& name) override { return irName(name); }

  // --- frontend::OptionalHost (onnx_optional.cpp) ---

  const frontend::OptValue* optionalOf(const Value* v) const override {
    auto it = optionals_.find(v);
    return it == optionals_.end() ? nullptr : &it->second;
  }

  // An optional stands as an unused constant, as a sequence does.
  Value* makeOptional(const std::string& base, frontend::OptValue o) override {
    Value* v = g_->addConstant(freshName(base), Tensor::fromVector<int64_t>(DType::kI64, {}, {0}));
    optionals_[v] = o;
    return v;
  }

  Value* addConstant(const std::string& base, Tensor t) override {
    return g_->addConstant(freshName(base), std::move(t));
  }

  int64_t opset() const override { return m_.opset; }

  void note(const std::string& text) override { info_.notes.push_back(text); }

 private:
  struct Scope {
    std::map<std::string, Value*> values;  // ONNX tensor name -> value
    std::string prefix;                    // of IR names ("" at the top level)
  };

  Status fail(const Status& s) const { return s.withContext(m_.path + ": "); }

  // A sequence or an optional read by an op other than theirs, If, Loop and Scan: refused, naming
  // the node (both are resolved on import, onnx_sequence.cpp and onnx_optional.cpp; there are no
  // run-time sequences or optionals).
  Status refusePlaceholderOperands(const std::vector<Value*>& inputs, const std::string& desc) const {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (const frontend::OptValue* o = optionalOf(inputs[i]))
        return unsupported("{}: operand {} is an optional ({}); Magneto resolves optionals at "
                           "compile time (OptionalGetElement, OptionalHasElement) and has no "
                           "run-time optionals, so no other op may read one",
                           desc, i, o->content ? "holding a value" : "empty");
      else if (const frontend::SeqValue* s = sequenceOf(inputs[i]))
        return unsupported("{}: operand {} is a sequence (of {} tensor{}); Magneto resolves "
                           "sequences at compile time into their tensors (SequenceAt, "
                           "ConcatFromSequence, ...) and has no run-time sequences, so no other op "
                           "may read one",
                           desc, i, s->items.size(), s->items.size() == 1 ? "" : "s");
    return Status::success();
  }

  Value* lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto v = it->values.find(name);
      if (v != it->values.end()) return v->second;
    }
    return nullptr;
  }
  void bind(const std::string& name, Value* v) { scopes_.back().values[name] = v; }
  // The IR name of ONNX tensor `name` in the current scope.
  std::string irName(const std::string& name) {
    const std::string& prefix = scopes_.back().prefix;
    return prefix.empty() ? name : freshName(prefix + name);
  }

  // A body input receives the value bound to it: a declared element type must match, a sequence
  // input must receive a sequence (and a tensor input a tensor); map and optional inputs are
  // refused.
  Status checkBodyInput(const onnx::ValueInfoProto& vi, const Value* v) {
    const bool isSeq = sequenceOf(v) != nullptr;
    if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
      return Status::success();
    // An optional input takes an optional, or (a Loop's later iterations) what one holds.
    if (vi.type().has_optional_type()) return Status::success();
    if (optionalOf(v))
      return badInput("input '{}' is declared {} but receives an optional", vi.name(),
                      vi.type().has_sequence_type() ? "a sequence" : "a tensor");
    if (vi.type().has_sequence_type()) {
      if (!isSeq)
        return badInput("input '{}' is declared a sequence but receives the tensor {}", vi.name(),
                        v->type().str());
      return Status::success();
    }
    if (isSeq && vi.type().has_tensor_type())
      return badInput("input '{}' is declared a tensor but receives a sequence", vi.name());
    if (!vi.type().has_tensor_type())
      return unsupported("input '{}' is not a tensor (sequence, map and optional values are not "
                         "supported)",
                         vi.name());
    int32_t declared = vi.type().tensor_type().elem_type();
    if (declared != 0 && declared != static_cast<int32_t>(v->dtype()))
      return badInput("input '{}' is declared {} but receives {}", vi.name(),
                      frontend::onnxDTypeName(declared), v->type().str());
    return Status::success();
  }

  Status addInitializers() {
    for (const auto& t : graph_.initializer()) {
      if (top().count(t.name()))
        return badInput("{}: initializer '{}' is defined twice", m_.path, t.name());
      auto tensor = frontend::tensorFromProto(t, m_.dir, "initializer '" + t.name() + "'");
      if (!tensor.ok()) return fail(tensor.status());
      top()[t.name()] = g_->addConstant(t.name(), std::move(tensor).value());
    }
    return Status::success();
  }

  // Every --shape and --bind name must be a real graph input.
  Status checkOptionNames() {
    std::vector<std::string> inputs;
    for (const auto& vi : graph_.input())
      if (!top().count(vi.name())) inputs.push_back(vi.name());
    auto check = [&](const std::string& name, const char* flag) -> Status {
      if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
        return Status::success();
      if (top().count(name))
        return badInput("{}: {} names '{}', which is an initializer, not a graph input", m_.path,
                        flag, name);
      return badInput("{}: {} names '{}', which is not a graph input (inputs: {})", m_.path, flag,
                      name, joinNames(inputs));
    };
    for (const auto& [name, dims] : opts_.shapes) MG_RETURN_IF_ERROR(check(name, "--shape"));
    for (const auto& [name, t] : opts_.bindings) MG_RETURN_IF_ERROR(check(name, "--bind"));
    // Every --dynamic name is a dim_param of some input.
    std::set<std::string> params;
    for (const auto& vi : graph_.input()) {
      if (top().count(vi.name()) || !vi.type().has_tensor_type() ||
          !vi.type().tensor_type().has_shape())
        continue;
      for (const auto& d : vi.type().tensor_type().shape().dim())
        if (d.has_dim_param() && !d.dim_param().empty()) params.insert(d.dim_param());
    }
    std::set<std::string> seenDyn;
    for (const DimSymbol& sym : opts_.dynamic) {
      if (!seenDyn.insert(sym.name).second)
        return badInput("{}: --dynamic names '{}' twice", m_.path, sym.name);
      if (!params.count(sym.name))
        return badInput("{}: --dynamic names '{}', which is not a symbolic dimension (dim_param) "
                        "of any input (the model's: {})",
                        m_.path, sym.name,
                        joinNames(std::vector<std::string>(params.begin(), params.end())));
    }
    return Status::success();
  }

  Expected<TensorType> inputType(const onnx::ValueInfoProto& vi) {
    const std::string& name = vi.name();
    inputSym_.clear();
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
    bool symbolic = false;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      inputSym_.push_back(DimExpr(d.has_dim_value() ? d.dim_value() : 0));
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(d.dim_value());
        continue;
      }
      if (d.has_dim_param()) {
        const DimSymbol* sym = findDynamic(d.dim_param());
        if (sym) {
          dims.push_back(sym->hi);
          inputSym_.back() = DimExpr::symbol(sym->name);
          symbolic = true;
          continue;
        }
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
      return badInput("{}: input '{}' has {}; fix it with --shape {}={}{}", m_.path, name, problem,
                      name, example,
                      problem.find("symbolic") != std::string::npos
                          ? " or make it dynamic with --dynamic NAME=LO..HI"
                          : "");
    }
    if (!symbolic) inputSym_.clear();
    return TensorType{*dt, dims};
  }

  Status addInputs() {
    for (const auto& vi : graph_.input()) {
      const std::string& name = vi.name();
      if (top().count(name)) continue;  // an initializer listed as input (old-style models)
      auto bound = opts_.bindings.find(name);
      if (bound != opts_.bindings.end()) {
        MG_RETURN_IF_ERROR(checkBinding(vi, bound->second));
        top()[name] = g_->addConstant(name, bound->second);
        info_.notes.push_back(fmt::format("input '{}' bound to a constant {}", name,
                                          bound->second.type().str()));
        continue;
      }
      if (vi.type().has_sequence_type()) {
        auto given = opts_.sequenceInputs.find(name);
        MG_ASSIGN_OR_RETURN(top()[name],
                            sequenceInput(name, vi.type().sequence_type(),
                                          given == opts_.sequenceInputs.end() ? nullptr : &given->second));
        continue;
      }
      if (vi.type().has_optional_type()) {
        MG_RETURN_IF_ERROR(addOptionalInput(vi));
        continue;
      }
      MG_ASSIGN_OR_RETURN(TensorType type, inputType(vi));
      auto bytes = checkedByteSize(type);
      if (!bytes.ok()) return fail(bytes.status().withContext("input '" + name + "': "));
      top()[name] = g_->addInput(name, std::move(type));
      top()[name]->setSymDims(inputSym_);
    }
    return Status::success();
  }

  // A sequence graph input: one graph input per element (NAME[K]) of the types `given`
  // (ImportOptions::sequenceInputs; null: not given), and the sequence of them.
  Expected<Value*> sequenceInput(const std::string& name, const onnx::TypeProto::Sequence& st,
                                 const std::vector<TensorType>* given) {
    if (!given)
      return unsupported("{}: input '{}' is a sequence, and its length and element shapes are not "
                         "given: Magneto fixes a sequence input's length at compile time, as it "
                         "fixes shapes (magnetoc check takes them from the test data)",
                         m_.path, name);
    if (st.has_elem_type() && !st.elem_type().has_tensor_type() &&
        st.elem_type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
      return unsupported("{}: input '{}' is a sequence of non-tensors", m_.path, name);
    int32_t declared = st.has_elem_type() && st.elem_type().has_tensor_type()
                           ? st.elem_type().tensor_type().elem_type()
                           : 0;
    frontend::SeqValue s;
    if (declared != 0) {
      auto dt = frontend::dtypeFromOnnx(declared);
      if (!dt.ok()) return fail(dt.status().withContext("input '" + name + "': "));
      s.elem = *dt;
    }
    for (size_t k = 0; k < given->size(); ++k) {
      const TensorType& t = (*given)[k];
      if (declared != 0 && t.dtype != s.elem)
        return badInput("{}: input '{}' is a sequence of {}, but element {} is {}", m_.path, name,
                        dtypeName(s.elem), k, t.str());
      if (k == 0 && declared == 0) s.elem = t.dtype;
      auto bytes = checkedByteSize(t);
      if (!bytes.ok()) return fail(bytes.status().withContext("input '" + name + "': "));
      const std::string elem = sequenceElementName(name, k);
      if (reserved_.count(elem) || g_->findValue(elem))
        return badInput("{}: input '{}' is a sequence, and the name '{}' of its element {} is "
                        "taken",
                        m_.path, name, elem, k);
      reserved_.insert(elem);
      s.items.push_back(g_->addInput(elem, t));
    }
    info_.notes.push_back(fmt::format("input '{}': a sequence of {} tensor{}, inputs {}[K]", name,
                                      s.items.size(), s.items.size() == 1 ? "" : "s", name));
    return makeSequence(name + "/sequence", std::move(s));
  }

  // An optional graph input: what ImportOptions::optionalInputs says it holds (not given: a
  // tensor of its declared type, which must then be static), and the optional of that.
  Status addOptionalInput(const onnx::ValueInfoProto& vi) {
    const std::string& name = vi.name();
    const onnx::TypeProto& elem = vi.type().optional_type().elem_type();
    if (!elem.has_tensor_type() && !elem.has_sequence_type())
      return unsupported("{}: input '{}' is an optional of a map or sparse tensor (only tensors "
                         "and sequences of tensors are supported)",
                         m_.path, name);
    using Kind = OptionalInput::Kind;
    auto given = opts_.optionalInputs.find(name);
    const bool isGiven = given != opts_.optionalInputs.end();
    const Kind kind = isGiven                   ? given->second.kind
                      : elem.has_sequence_type() ? Kind::kSequence
                                                 : Kind::kTensor;
    if ((kind == Kind::kTensor && !elem.has_tensor_type()) ||
        (kind == Kind::kSequence && !elem.has_sequence_type()))
      return badInput("{}: input '{}' is an optional of {}, but it is given {}", m_.path, name,
                      elem.has_tensor_type() ? "a tensor" : "a sequence",
                      kind == Kind::kTensor ? "a tensor" : "a sequence");
    frontend::OptValue o;
    std::string what = "empty (no package input)";
    if (kind == Kind::kSequence) {
      MG_ASSIGN_OR_RETURN(o.content, sequenceInput(name, elem.sequence_type(),
                                                   isGiven ? &given->second.types : nullptr));
      what = "a sequence, inputs " + name + "[K]";
    } else if (kind == Kind::kTensor) {
      TensorType type;
      if (isGiven) {
        if (given->second.types.size() != 1)
          return badInput("{}: input '{}': an optional tensor is given {} types", m_.path, name,
                          given->second.types.size());
        type = given->second.types[0];
        int32_t declared = elem.tensor_type().elem_type();
        if (declared != 0 && declared != static_cast<int32_t>(type.dtype))
          return badInput("{}: input '{}' is an optional of {}, but it is given {}", m_.path, name,
                          frontend::onnxDTypeName(declared), type.str());
      } else {
        onnx::ValueInfoProto t;
        t.set_name(name);
        *t.mutable_type() = elem;
        MG_ASSIGN_OR_RETURN(type, inputType(t));
      }
      auto bytes = checkedByteSize(type);
      if (!bytes.ok()) return fail(bytes.status().withContext("input '" + name + "': "));
      o.content = g_->addInput(name, type);
      if (!isGiven) o.content->setSymDims(inputSym_);  // inputType's dynamic dims
      what = "a tensor " + type.str();
    }
    info_.notes.push_back(fmt::format("input '{}': an optional holding {}", name, what));
    top()[name] = makeOptional(name + "/optional", o);
    return Status::success();
  }

  const DimSymbol* findDynamic(const std::string& name) const {
    for (const DimSymbol& s : opts_.dynamic)
      if (s.name == name) return &s;
    return nullptr;
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

  // Imports one node into the current scope. Errors name the node, not the file (run() and the
  // control-flow specialisation add where it is).
  Status addNode(const onnx::NodeProto& np, int index) {
    const std::string name = scopes_.back().prefix + frontend::onnxNodeName(np, index);
    const std::string desc = frontend::describeOnnxNode(np, index);
    if (np.op_type() == "Constant") {
      if (np.output_size() != 1 || np.output(0).empty())
        return badInput("{}: a Constant needs one named result", desc);
      MG_ASSIGN_OR_RETURN(Tensor t, frontend::constantNodeValue(np, m_.dir, desc));
      bind(np.output(0), g_->addConstant(irName(np.output(0)), std::move(t)));
      return Status::success();
    }
    std::vector<Value*> inputs;
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      Value* v = lookup(in);
      if (!v)  // sortOnnxNodes guarantees definitions; keep the error anyway
        return badInput("{} reads undefined tensor '{}'", desc, in);
      inputs.push_back(v);
    }
    if (frontend::isOptionalOp(np.op_type()) ||
        (np.op_type() == "Identity" && inputs.size() == 1 && optionalOf(inputs[0]))) {
      Value* r = inputs.empty() ? nullptr : inputs[0];
      if (np.op_type() != "Identity") {
        MG_ASSIGN_OR_RETURN(r, frontend::importOptionalOp(*this, np, desc, inputs));
      }
      if (np.output_size() > 0 && !np.output(0).empty()) bind(np.output(0), r);
      return Status::success();
    }
    if (frontend::isSequenceOp(np.op_type()) ||
        (np.op_type() == "Identity" && inputs.size() == 1 && sequenceOf(inputs[0]))) {
      std::vector<Value*> results;
      if (np.op_type() == "Identity") {
        results = inputs;
      } else {
        MG_ASSIGN_OR_RETURN(results,
                            frontend::importSequenceOp(*this, np, name, desc, inputs));
      }
      for (int i = 0; i < np.output_size() && i < static_cast<int>(results.size()); ++i)
        if (!np.output(i).empty()) bind(np.output(i), results[i]);
      return Status::success();
    }
    if (frontend::isControlFlowOp(np.op_type())) {
      // Their control operands (If's condition, Loop's trip count and condition) are tensors;
      // carried values may be sequences.
      const size_t control = np.op_type() == "If" ? 1 : np.op_type() == "Loop" ? 2 : 0;
      for (size_t i = 0; i < control && i < inputs.size(); ++i)
        if (sequenceOf(inputs[i]) || optionalOf(inputs[i]))
          return unsupported("{}: operand {} is {}, where a tensor is expected", desc, i,
                             optionalOf(inputs[i]) ? "an optional" : "a sequence");
      MG_ASSIGN_OR_RETURN(std::vector<Value*> results,
                          frontend::specialiseControlFlow(*this, np, name, desc, inputs));
      for (int i = 0; i < np.output_size(); ++i)
        if (!np.output(i).empty()) bind(np.output(i), results[i]);
      return Status::success();
    }
    MG_RETURN_IF_ERROR(refusePlaceholderOperands(inputs, desc));
    frontend::NodeDraft d;
    d.kind = np.op_type();
    d.name = name;
    d.sourceOpset = m_.sourceOpset;
    d.freshName = [this](const std::string& base) { return freshName(base); };
    d.inputs = std::move(inputs);
    for (const auto& a : np.attribute()) {
      MG_ASSIGN_OR_RETURN(Attribute attr, frontend::convertAttribute(a, m_.dir, desc));
      d.attrs.set(a.name(), std::move(attr));
    }
    MG_RETURN_IF_ERROR(frontend::normalizeNode(*g_, m_.opset, d));

    std::vector<std::string> resultNames;
    for (int i = 0; i < np.output_size(); ++i)
      resultNames.push_back(np.output(i).empty()
                                ? freshName(name + "_unused" + std::to_string(i))
                                : irName(np.output(i)));
    std::vector<TensorType> types(resultNames.size());
    Node* n = g_->createNode(d.kind, d.inputs, types, std::move(d.attrs), name, nullptr,
                             resultNames);
    // A data-dependent extent (NonZero of a run-time tensor, ...) becomes a data symbol named
    // after the node (docs/DYNAMIC_SHAPES.md, "Data-dependent extents").
    std::vector<DataDim> dataDims;
    MG_RETURN_IF_ERROR(inferNode(*n, &dataDims));
    // A second producer of the same extent from the same operands (torchvision takes NonZero of
    // one mask twice: torch.where(mask) and x[mask]) is the first one: the two counts are one
    // data symbol, so that what reads both (a TopK of one's values by a K from the other's
    // count) fits at every count. Legal: the op is a pure function of its operands.
    if (!dataDims.empty())
      if (Node* twin = dataProducerTwin(n)) {
        g_->eraseNode(n);
        for (int i = 0; i < np.output_size(); ++i)
          if (!np.output(i).empty()) bind(np.output(i), twin->output(i));
        return Status::success();
      }
    MG_RETURN_IF_ERROR(declareDataSymbols(*g_, n, dataDims));
    MG_RETURN_IF_ERROR(inferSymbolicNode(*g_, n));
    MG_ASSIGN_OR_RETURN(std::vector<Value*> results, foldIfConstant(n));
    for (int i = 0; i < np.output_size(); ++i)
      if (!np.output(i).empty()) bind(np.output(i), results[i]);
    return Status::success();
  }

  // Folds `n` when its operands are constant (or its op reads only shapes) and folding on import
  // is on; returns its results: the folded constants, re-created under the results' names, or the
  // node's own.
  Expected<std::vector<Value*>> foldIfConstant(Node* n) {
    std::vector<Value*> results = n->outputs();
    if (!opts_.foldOnImport) return results;
    if (!g_->symbols().empty())
      for (Value* v : n->inputs())
        if (dependsOnSymbols(v)) return foldSymbolic(n);
    const OpSchema* s = n->schema();
    bool constant = true;
    for (Value* v : n->inputs())
      if (v && !(v->isConstant() && v->constant().hasData())) constant = false;
    if (!constant && !(s && s->has(kShapeOnly))) return results;
    // A quantized weight's DequantizeLinear stays a node: fuse-qdq (passes/fuse_qdq.cpp) reads the
    // integer weight through it, and the fold pass folds what fuse-qdq leaves.
    if (n->kind() == "DequantizeLinear") return results;
    const size_t nout = n->numOutputs();
    std::vector<std::string> names;
    for (Value* v : results) names.push_back(v->name());
    const std::string kind = n->kind();
    std::vector<Value*> constants;
    auto folded = foldNode(*g_, n, &constants, &foldBudget_);
    if (!folded.ok())  // the message names the node already
      return Status(folded.status().code(),
                    folded.status().message() + " (while folding constants on import)");
    if (!*folded) return results;
    // The results being unused so far, foldNode erased the node with its results.
    MG_CHECK(constants.size() == nout, "{} constants for {} results folding {}", constants.size(),
             nout, kind);
    for (size_t i = 0; i < nout; ++i) {
      MG_CHECK(constants[i]->isConstant(), "folded result {} of {} is not a constant", i, kind);
      // Re-create under the result's name (freed by the erase); the "_const" copy dies unused.
      results[i] = g_->addConstant(names[i], constants[i]->constant());
    }
    return results;
  }

  // An earlier node of n's kind, operands and attributes that produces data symbols; null if none.
  Node* dataProducerTwin(const Node* n) const {
    for (Node* m : g_->nodes())
      if (m != n && m->kind() == n->kind() && m->inputs() == n->inputs() &&
          m->numOutputs() == n->numOutputs() && m->attrs() == n->attrs() &&
          !producedDataSymbols(*g_, *m).empty())
        return m;
    return nullptr;
  }

  bool mentionsDataSymbol(const std::vector<std::string>& names) const {
    for (const std::string& name : names)
      if (const DimSymbol* s = g_->findSymbol(name); s && s->data) return true;
    return false;
  }

  // Shape data that depends on dynamic dimensions (Shape of a symbolic value, and Gather, Concat,
  // Mul, ... over such data): each element of each result is fitted as an expression of the symbols
  // from the node evaluated at probe bindings, and the node becomes an MgSymbolic (a constant when
  // no element depends on a symbol). Anything else (data, large results, symbolic result shapes)
  // stays a node computed at run time.
  Expected<std::vector<Value*>> foldSymbolic(Node* n) {
    std::vector<Value*> results = n->outputs();
    const OpSchema* s = n->schema();
    bool ok = s && !s->has(kNoFold) && hasReferenceKernel(n->kind());
    for (Value* v : n->inputs()) {
      if (!v || (v->isConstant() && v->constant().hasData())) continue;
      if (v->producer() && v->producer()->kind() == "MgSymbolic") continue;
      if (!(s && s->has(kShapeOnly))) ok = false;
    }
    for (Value* v : results)
      ok &= (v->dtype() == DType::kI64 || v->dtype() == DType::kI32 || v->dtype() == DType::kBool) &&
            !v->isSymbolic() &&
            v->type().numel() <= 64;
    if (!ok) return results;
    std::set<std::string> mentionedSet;
    for (Value* v : n->inputs())
      for (const std::string& sym : symbolsOf(v)) mentionedSet.insert(sym);
    std::vector<std::string> mentioned(mentionedSet.begin(), mentionedSet.end());
    const std::vector<DimExpr> coords = fitCoordinates(*n);
    std::map<DimBinding, Expected<std::vector<Tensor>>> memo;
    auto evalAt = [&](const DimBinding& b) -> Expected<std::vector<Tensor>> {
      auto it = memo.find(b);
      if (it != memo.end()) return it->second;
      auto compute = [&]() -> Expected<std::vector<Tensor>> {
        std::vector<TensorType> types;
        std::vector<Tensor> vals;
        MG_RETURN_IF_ERROR(operandsAtBinding(*n, b, &types, &vals));
        std::vector<const Tensor*> ptrs(n->numInputs(), nullptr);
        for (size_t i = 0; i < n->numInputs(); ++i) {
          if (!n->input(i)) continue;
          if (!vals[i].hasData()) vals[i] = Tensor::opaque(types[i], 0);  // shape-only operand
          ptrs[i] = &vals[i];
        }
        std::vector<TensorType> outTypes;
        MG_RETURN_IF_ERROR(inferNodeAt(*n, types, ptrs, &outTypes));
        return evaluateNode(*n, ptrs, outTypes);
      };
      return memo.emplace(b, compute()).first->second;
    };
    std::vector<std::vector<DimExpr>> exprs(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      const int64_t count = results[i]->type().numel();
      for (int64_t k = 0; k < count; ++k) {
        auto f = [&](const DimBinding& b) -> Expected<int64_t> {
          MG_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evalAt(b));
          if (outs[i].numel() != count)
            return unsupported("the number of elements changes with the dynamic dimensions");
          return outs[i].intAt(k);
        };
        auto e = fitDimExpr(g_->symbols(), mentioned, f, coords);
        // Shape data of a data-dependent extent that no expression fits (min(K, count), the
        // idiom of exported detectors) stays a node computed at run time: what reads it as a
        // shape operand (TopK's K) is then itself a data-dependent extent.
        // A comparison no expression fits stays a node too.
        if (!e.ok() && (mentionsDataSymbol(mentioned) || results[i]->dtype() == DType::kBool))
          return results;
        if (!e.ok())
          return e.status().withContext(fmt::format(
              "{}: shape data '{}' element {} depends on dynamic dimensions: ", n->describe(),
              results[i]->name(), k));
        // A comparison over shape data (torchvision's Equal(shape, -1) before a Where) folds
        // when it is the same at every binding; MgSymbolic carries integers only.
        if (results[i]->dtype() == DType::kBool && !e->isConstant()) return results;
        exprs[i].push_back(*e);
      }
    }
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (Value* v : results) {
      names.push_back(v->name());
      types.push_back(v->type());
    }
    const std::string nodeName = n->name();
    g_->eraseNode(n);
    for (size_t i = 0; i < names.size(); ++i) {
      bool constant = true;
      std::vector<std::string> texts;
      std::vector<int64_t> values;
      for (const DimExpr& e : exprs[i]) {
        constant &= e.isConstant();
        texts.push_back(e.str());
        if (e.isConstant()) values.push_back(e.constant());
      }
      if (constant) {
        Tensor t = types[i].dtype == DType::kI32
                       ? Tensor::fromVector(DType::kI32, types[i].dims,
                                            std::vector<int32_t>(values.begin(), values.end()))
                   : types[i].dtype == DType::kBool
                       ? Tensor::fromVector(DType::kBool, types[i].dims,
                                            std::vector<uint8_t>(values.begin(), values.end()))
                       : Tensor::fromVector(DType::kI64, types[i].dims, values);
        results[i] = g_->addConstant(names[i], std::move(t));
        continue;
      }
      AttrMap attrs;
      attrs.set("exprs", texts);
      attrs.set("to", static_cast<int64_t>(types[i].dtype));
      attrs.set("shape", types[i].dims);
      Node* sym = g_->createNode("MgSymbolic", {}, {types[i]}, std::move(attrs), nodeName, nullptr,
                                 {names[i]});
      MG_RETURN_IF_ERROR(inferNode(*sym));
      results[i] = sym->output(0);
    }
    return results;
  }

  Status addOutputs() {
    for (const auto& vi : graph_.output()) {
      Value* v = lookup(vi.name());
      if (!v)
        return badInput("{}: graph output '{}' is not computed by any node, input or initializer",
                        m_.path, vi.name());
      // An optional output is what it holds: nothing, a tensor, or a sequence's elements.
      if (const frontend::OptValue* o = optionalOf(v)) {
        if (!vi.type().has_optional_type())
          return unsupported("{}: graph output '{}' is an optional, but the model declares it {}",
                             m_.path, vi.name(), vi.type().has_sequence_type() ? "a sequence" : "a tensor");
        info_.notes.push_back(fmt::format("output '{}': an optional holding {}", vi.name(),
                                          !o->content ? "nothing (no package output)"
                                          : sequenceOf(o->content) ? "a sequence (outputs NAME[K])"
                                                                   : "a tensor"));
        if (!o->content) continue;
        v = o->content;
      }
      if (const frontend::SeqValue* s = sequenceOf(v)) {
        const onnx::TypeProto& declaredType =
            vi.type().has_optional_type() ? vi.type().optional_type().elem_type() : vi.type();
        if (!declaredType.has_sequence_type())
          return unsupported("{}: graph output '{}' is a sequence (of {} tensor{}), but the model "
                             "declares it a tensor",
                             m_.path, vi.name(), s->items.size(), s->items.size() == 1 ? "" : "s");
        // One output per element, NAME[K] (the length is known at compile time).
        for (size_t k = 0; k < s->items.size(); ++k) {
          const std::string elem = sequenceElementName(vi.name(), k);
          if (g_->findValue(elem) && g_->findValue(elem) != s->items[k])
            return badInput("{}: graph output '{}' is a sequence, and the name '{}' of its element "
                            "{} is taken",
                            m_.path, vi.name(), elem, k);
          Value* e = s->items[k];
          if (e->name() != elem) {
            if (e->isConstant()) {
              e = g_->addConstant(elem, e->constant());
            } else {
              Node* id = g_->createNode("Identity", {e}, {e->type()}, {}, elem, nullptr, {elem});
              e = id->output(0);
            }
          }
          g_->addOutput(e);
        }
        continue;
      }
      // A specialised If, Loop or Scan leaves its outputs bound to values of its body, named
      // after the body: the output gets its ONNX name back (it is the package's port name).
      if (v->name() != vi.name() && !g_->findValue(vi.name())) {
        if (v->isConstant()) {
          v = g_->addConstant(vi.name(), v->constant());
        } else {
          Node* id = g_->createNode("Identity", {v}, {v->type()}, {}, vi.name(), nullptr,
                                    {vi.name()});
          v = id->output(0);
        }
      }
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
    if (g_->outputs().empty())
      return unsupported("{}: every graph output is an empty sequence or an empty optional: the "
                         "package would have no outputs",
                         m_.path);
    return Status::success();
  }

  LoadedModel& m_;
  const onnx::GraphProto& graph_;
  const ImportOptions& opts_;
  ImportInfo& info_;
  std::unique_ptr<Graph> g_;
  FoldBudget foldBudget_{0};  // set from the initializers before the first node (fold_node.h)
  std::deque<Scope> scopes_;        // the top level first, then the bodies being imported
  std::set<std::string> reserved_;  // every tensor name the model uses, subgraphs included
  int64_t unrolledNodes_ = 0;       // body nodes imported so far (kMaxUnrolledNodes)
  std::vector<DimExpr> inputSym_;   // inputType's symbolic dims (empty: static)
  std::map<const Value*, frontend::SeqValue> seqs_;  // the placeholders of sequences (makeSequence)
  std::map<const Value*, frontend::OptValue> optionals_;  // and of optionals (makeOptional)

  std::map<std::string, Value*>& top() { return scopes_.front().values; }
};

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

}  // namespace magneto
