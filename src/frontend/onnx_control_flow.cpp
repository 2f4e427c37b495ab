// Control flow specialised away on import: If, Loop and Scan whose control is known at compile
// time, and If whose condition is computed at run time.
//
// Magneto's IR is a static dataflow graph: no op runs a subgraph. ONNX's If, Loop and Scan carry
// subgraphs, but when what decides their control is a constant at import (the importer folds
// constant subexpressions as it goes, and `magnetoc check` binds the graph inputs that feed the
// control, see shapeDeterminingInputs), each can be replaced by plain nodes computing the same
// values:
//
//   If     constant cond          -> the taken branch's nodes, imported in place; the If's outputs
//                                    are the branch's outputs; the other branch is never read.
//   If     run-time cond          -> both branches' nodes, imported in place (then/, else/), and
//                                    each output selected from the two branches' values:
//            same shape (every dim the same expression)
//                                 -> Where(cond, then_value, else_value), cond made a bool scalar;
//            shapes that differ in one dim d (torchvision's `if boxes.numel() == 0: return
//            empty` before NonMaxSuppression: [0] against [count])
//                                 -> Compress(Concat(then, else, d), Concat(Expand(cond, [n_then]),
//                                    Expand(Not(cond), [n_else])), d): the taken branch's slices, a
//                                    data-dependent extent the package computes at run time
//                                    (docs/DYNAMIC_SHAPES.md).
//   Loop   M (trip count) constant or absent; cond constant or absent at entry, and constant after
//          every iteration that the trip count does not already end
//                                 -> the body imported once per iteration: iteration_num bound to
//                                    an i64 scalar constant, cond_in to the current condition,
//                                    the carried values to the previous iteration's (the initial
//                                    values first). The final carried values are the first N
//                                    outputs; each scan output is the per-iteration values stacked
//                                    on a new axis 0 (Unsqueeze each, Concat). A trip count
//                                    over the cap is refused at once only when there is no
//                                    condition; with one (TorchScript exports a loop with `break`
//                                    as M = INT64_MAX and a condition computed in the body) the
//                                    iterations are counted as they unroll, so such a loop unrolls
//                                    when its condition ends it in time, and is refused for what
//                                    actually stops it (a condition on the data, or the cap).
//   Scan   (opset 9+) sequence length L from the scan inputs' static shapes
//                                 -> the body imported once per step t: scan input j's element is
//                                    Gather(x_j, t', axis_j), t' = t (direction 0) or L-1-t
//                                    (direction 1); states carried as in Loop; scan output k is
//                                    the steps' values stacked on its axis, in reverse step order
//                                    for direction 1 (prepending).
//   Scan-8 (a batch axis 0 on every operand, the scan axis 1, optional sequence_lens)
//                                 -> the above for each batch element (Gather on axis 0), the
//                                    results stacked on axis 0; sequence_lens must be absent or
//                                    constant and all the full length.
//
// Why that is legal: these ops have no side effects and their bodies are pure functions of their
// inputs and of outer-scope values, so running a body k times in a row computes what k copies of
// its nodes chained by the carried values compute, and a branch not taken contributes nothing:
// computing it too and dropping its values (the run-time If) changes no result. It costs the
// untaken branch's time, and an untaken branch that fails at run time (an index out of range
// on data it was never meant to see) fails the run: the branches of exported models guard
// emptiness, which every op here handles (docs/DYNAMIC_SHAPES.md, "Empty extents").
// Every copy reads the same outer-scope values (names a body does not define resolve in the
// enclosing scopes, BodyImporter::importBody) and gets its own IR names (prefix NODE/ITER/), so
// copies never clash; nested control flow specialises recursively, the inner prefix extending the
// outer one. Shapes need no care: each copy is inferred on its own, with static shapes.
//
//   %y, %s = Loop(%M = 2, %c = true, %y0) { body(%i, %c_in, %y_in): %y_out = Add(%y_in, %x) }
//   ->  %Loop_0/0/y_out = Add(%y0, %x)
//       %Loop_0/1/y_out = Add(%Loop_0/0/y_out, %x)
//       %s = Concat(Unsqueeze(%Loop_0/0/y_out, [0]), Unsqueeze(%Loop_0/1/y_out, [0])) {axis = 0}
//       %y = %Loop_0/1/y_out
//
// Refused with an error naming the node: a run-time If whose branches give values of different
// ranks, shapes that differ in more than one dim, or sequences and optionals; a Loop whose trip
// count or condition is not a compile-time constant (data-dependent iteration needs a runtime
// Magneto does not have); a Loop with neither a trip count nor a condition (it never ends);
// more than kMaxUnrolledIterations iterations of one node, or more than kMaxUnrolledNodes body nodes
// imported in all; bodies with the wrong number of inputs or outputs; Scan-8 with sequence
// lengths shorter than the scan axis. Sequence-typed values (carried values, branch outputs) pass
// through as the importer's placeholders of compile-time sequences (onnx_sequence.cpp); a scan
// output that is a sequence is refused by the op that would stack it.
#include "onnx_control_flow.h"

#include <algorithm>
#include <optional>

#include "tensor_proto.h"

namespace magneto {
namespace frontend {

namespace {

const onnx::GraphProto* subgraph(const onnx::NodeProto& np, const std::string& attr) {
  for (const auto& a : np.attribute())
    if (a.name() == attr && a.has_g()) return &a.g();
  return nullptr;
}

std::optional<std::vector<int64_t>> intsAttr(const onnx::NodeProto& np, const std::string& attr) {
  for (const auto& a : np.attribute())
    if (a.name() == attr) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return std::nullopt;
}

int64_t intAttr(const onnx::NodeProto& np, const std::string& attr, int64_t def) {
  for (const auto& a : np.attribute())
    if (a.name() == attr) return a.i();
  return def;
}

bool isKnown(const Value* v) { return v && v->isConstant() && v->constant().hasData(); }

class Specialiser {
 public:
  Specialiser(BodyImporter& imp, const onnx::NodeProto& np, const std::string& name,
              const std::string& desc, const std::vector<Value*>& inputs)
      : imp_(imp), np_(np), name_(name), desc_(desc), in_(inputs) {}

  Expected<std::vector<Value*>> run() {
    const std::string& op = np_.op_type();
    if (op == "If") return ifOp();
    if (op == "Loop") return loopOp();
    if (op == "Scan") return imp_.opset() < 9 ? scan8() : scan9();
    return unsupported("{}: not a control-flow op", desc_);
  }

 private:
  // --- helpers ---------------------------------------------------------------------------------

  // The subgraph attribute `attr`, with `nin` inputs and `nout` outputs.
  Expected<const onnx::GraphProto*> body(const std::string& attr, int nin, int nout) {
    const onnx::GraphProto* g = subgraph(np_, attr);
    if (!g) return badInput("{}: missing subgraph attribute '{}'", desc_, attr);
    if (g->input_size() != nin)
      return badInput("{}: subgraph '{}' has {} inputs, expected {}", desc_, attr,
                      g->input_size(), nin);
    if (g->output_size() != nout)
      return badInput("{}: subgraph '{}' has {} outputs, expected {}", desc_, attr,
                      g->output_size(), nout);
    return g;
  }

  // One pass through `g` with `inputs`; errors say which pass of which node.
  Expected<std::vector<Value*>> pass(const onnx::GraphProto& g, const std::vector<Value*>& inputs,
                                     const std::string& step, const std::string& where) {
    auto outs = imp_.importBody(g, inputs, name_ + "/" + step + "/");
    if (!outs.ok()) return outs.status().withContext(desc_ + ", " + where + ": ");
    return outs;
  }

  // The one element of operand `i` when it is a constant; nullopt when it is not. A constant of
  // another size is an error.
  Expected<std::optional<int64_t>> scalarOperand(size_t i, const char* what) {
    Value* v = in_[i];
    if (!isKnown(v)) return std::optional<int64_t>();
    if (v->constant().numel() != 1)
      return badInput("{}: {} must hold one element, got {}", desc_, what, v->type().str());
    return std::optional<int64_t>(v->constant().intAt(0));
  }

  Status tooMany(int64_t n, const char* what) const {
    return unsupported("{}: {} {} iterations, more than the {} Magneto unrolls at compile time",
                       desc_, what, n, kMaxUnrolledIterations);
  }

  Value* i64(const std::string& what, std::vector<int64_t> v, bool scalar) {
    Dims dims = scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())};
    return imp_.addConstant(name_ + "/" + what,
                            Tensor::fromVector<int64_t>(DType::kI64, dims, v));
  }

  // x's element `index` on `axis` (the axis dropped).
  Expected<Value*> take(Value* x, int64_t index, int64_t axis, const std::string& what) {
    AttrMap a;
    a.set("axis", axis);
    return imp_.addOp("Gather", {x, i64(what + "_index", {index}, true)}, std::move(a),
                      name_ + "/" + what);
  }

  // The values stacked on a new axis `axis` (-(rank+1) .. rank), in order.
  Expected<Value*> stack(const std::vector<Value*>& parts, int64_t axis, const std::string& what) {
    const int64_t r = parts[0]->rank();
    if (axis < -(r + 1) || axis > r)
      return badInput("{}: axis {} is out of range for stacking values of rank {} ({})", desc_,
                      axis, r, what);
    if (axis < 0) axis += r + 1;
    Value* axes = i64(what + "_axes", {axis}, false);
    std::vector<Value*> us;
    for (size_t i = 0; i < parts.size(); ++i) {
      MG_ASSIGN_OR_RETURN(Value* u, imp_.addOp("Unsqueeze", {parts[i], axes}, {},
                                               fmt::format("{}/{}_unsqueeze{}", name_, what, i)));
      us.push_back(u);
    }
    if (us.size() == 1) return us[0];
    AttrMap a;
    a.set("axis", axis);
    auto r2 = imp_.addOp("Concat", us, std::move(a), name_ + "/" + what);
    if (!r2.ok()) return r2.status().withContext(desc_ + ": stacking " + what + ": ");
    return r2;
  }

  // A scan output of zero iterations: an empty tensor of the body output's declared type with a
  // 0 inserted at `axis`.
  Expected<Value*> emptyStack(const onnx::ValueInfoProto& vi, int64_t axis) {
    auto refuse = [&](const std::string& why) {
      return unsupported("{}: runs zero iterations, and the body output '{}' {}, so the empty "
                         "scan output's shape is unknown",
                         desc_, vi.name(), why);
    };
    if (!vi.type().has_tensor_type()) return refuse("declares no tensor type");
    const auto& tt = vi.type().tensor_type();
    if (!tt.has_shape()) return refuse("declares no shape");
    Dims dims;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 0) return refuse("has a dynamic dimension");
      dims.push_back(d.dim_value());
    }
    auto dt = dtypeFromOnnx(tt.elem_type());
    if (!dt.ok()) return dt.status().withContext(desc_ + ": body output '" + vi.name() + "': ");
    const int64_t r = static_cast<int64_t>(dims.size());
    if (axis < -(r + 1) || axis > r)
      return badInput("{}: axis {} is out of range for stacking values of rank {}", desc_, axis, r);
    dims.insert(dims.begin() + (axis < 0 ? axis + r + 1 : axis), 0);
    return imp_.addConstant(name_ + "/" + vi.name() + "_empty",
                            Tensor(TensorType{*dt, dims}, {}));
  }

  // --- If --------------------------------------------------------------------------------------

  Expected<std::vector<Value*>> ifOp() {
    if (in_.size() != 1 || !in_[0]) return badInput("{}: If takes one operand (cond)", desc_);
    MG_ASSIGN_OR_RETURN(std::optional<int64_t> cond, scalarOperand(0, "the condition"));
    if (!cond) return selectIf();
    const char* taken = *cond ? "then_branch" : "else_branch";
    MG_ASSIGN_OR_RETURN(const onnx::GraphProto* g, body(taken, 0, np_.output_size()));
    imp_.note(fmt::format("{}: condition constant {}, {} imported in place", desc_,
                          *cond ? "true" : "false", taken));
    return pass(*g, {}, *cond ? "then" : "else", taken);
  }

  // An If whose condition is known only at run time: both branches imported in place, each
  // output selected from the two branches' values (see the header comment).
  Expected<std::vector<Value*>> selectIf() {
    Value* c = in_[0];
    if (c->type().numel() != 1)
      return badInput("{}: the condition must hold one element, got {}", desc_, c->type().str());
    const int nout = np_.output_size();
    MG_ASSIGN_OR_RETURN(const onnx::GraphProto* tg, body("then_branch", 0, nout));
    MG_ASSIGN_OR_RETURN(const onnx::GraphProto* eg, body("else_branch", 0, nout));
    MG_ASSIGN_OR_RETURN(std::vector<Value*> a, pass(*tg, {}, "then", "then_branch"));
    MG_ASSIGN_OR_RETURN(std::vector<Value*> b, pass(*eg, {}, "else", "else_branch"));
    if (c->dtype() != DType::kBool) {
      AttrMap cast;
      cast.set("to", static_cast<int64_t>(onnx::TensorProto::BOOL));
      MG_ASSIGN_OR_RETURN(c, imp_.addOp("Cast", {c}, std::move(cast), name_ + "/cond_bool"));
    }
    if (c->rank() != 0) {
      MG_ASSIGN_OR_RETURN(c, imp_.addOp("Reshape", {c, i64("cond_scalar_shape", {}, false)}, {},
                                        name_ + "/cond_scalar"));
    }
    Value* notC = nullptr;
    int wheres = 0, compresses = 0;
    std::vector<Value*> results;
    for (int i = 0; i < nout; ++i) {
      const std::string out = np_.output(i).empty() ? std::to_string(i) : np_.output(i);
      const std::string where = fmt::format("{}: output '{}' of an If whose condition is known "
                                            "only at run time",
                                            desc_, out);
      if (imp_.isPlaceholder(a[i]) || imp_.isPlaceholder(b[i]))
        return unsupported("{}: a branch gives a sequence or an optional; Magneto selects only "
                           "tensors at run time",
                           where);
      if (a[i] == b[i]) {
        results.push_back(a[i]);
        continue;
      }
      if (a[i]->dtype() != b[i]->dtype())
        return badInput("{}: then_branch gives {} and else_branch {}", where, a[i]->type().str(),
                        b[i]->type().str());
      if (a[i]->rank() != b[i]->rank())
        return unsupported("{}: then_branch gives rank {} and else_branch rank {}; Magneto selects "
                           "at run time only between values of one rank",
                           where, a[i]->rank(), b[i]->rank());
      std::vector<int64_t> differ;
      for (int64_t d = 0; d < a[i]->rank(); ++d)
        if (!(a[i]->dimExpr(static_cast<int>(d)) == b[i]->dimExpr(static_cast<int>(d))))
          differ.push_back(d);
      const std::string base = fmt::format("{}/select{}", name_, i);
      if (differ.empty()) {
        MG_ASSIGN_OR_RETURN(Value* r, imp_.addOp("Where", {c, a[i], b[i]}, {}, base));
        results.push_back(r);
        ++wheres;
        continue;
      }
      if (differ.size() > 1)
        return unsupported("{}: the branches' shapes differ in {} dimensions ({} and {}); Magneto "
                           "selects at run time between shapes that differ in at most one",
                           where, differ.size(), describeShape(a[i]), describeShape(b[i]));
      // The taken branch's slices of Concat(then, else) along the differing axis.
      const int64_t axis = differ[0];
      if (!notC) {
        MG_ASSIGN_OR_RETURN(notC, imp_.addOp("Not", {c}, {}, name_ + "/cond_not"));
      }
      auto extent = [&](Value* v, const std::string& what) -> Expected<Value*> {
        MG_ASSIGN_OR_RETURN(Value* shape, imp_.addOp("Shape", {v}, {}, base + "/" + what + "_shape"));
        return imp_.addOp("Slice",
                          {shape, i64(what + "_start", {axis}, false),
                           i64(what + "_end", {axis + 1}, false)},
                          {}, base + "/" + what + "_extent");
      };
      MG_ASSIGN_OR_RETURN(Value* la, extent(a[i], fmt::format("select{}_then", i)));
      MG_ASSIGN_OR_RETURN(Value* lb, extent(b[i], fmt::format("select{}_else", i)));
      MG_ASSIGN_OR_RETURN(Value* ma, imp_.addOp("Expand", {c, la}, {}, base + "/then_mask"));
      MG_ASSIGN_OR_RETURN(Value* mb, imp_.addOp("Expand", {notC, lb}, {}, base + "/else_mask"));
      auto onAxis = [](int64_t ax) {
        AttrMap attrs;
        attrs.set("axis", ax);
        return attrs;
      };
      MG_ASSIGN_OR_RETURN(Value* mask, imp_.addOp("Concat", {ma, mb}, onAxis(0), base + "/mask"));
      MG_ASSIGN_OR_RETURN(Value* both, imp_.addOp("Concat", {a[i], b[i]}, onAxis(axis),
                                                  base + "/both"));
      MG_ASSIGN_OR_RETURN(Value* r, imp_.addOp("Compress", {both, mask}, onAxis(axis), base));
      results.push_back(r);
      ++compresses;
    }
    imp_.note(fmt::format("{}: the condition is computed at run time: both branches imported, {} "
                          "output{} selected by Where, {} by Compress",
                          desc_, wheres, wheres == 1 ? "" : "s", compresses));
    return results;
  }

  static std::string describeShape(const Value* v) {
    std::vector<std::string> dims;
    for (int64_t d = 0; d < v->rank(); ++d) dims.push_back(v->dimExpr(static_cast<int>(d)).str());
    return fmt::format("[{}]", fmt::join(dims, ","));
  }

  // --- Loop ------------------------------------------------------------------------------------

  Expected<std::vector<Value*>> loopOp() {
    if (in_.size() < 2)
      return badInput("{}: Loop takes the operands M and cond (either may be empty), got {}",
                      desc_, in_.size());
    const bool hasCond = in_[1] != nullptr;
    const int n = static_cast<int>(in_.size()) - 2;  // loop-carried values
    const int k = np_.output_size() - n;              // scan outputs
    if (k < 0)
      return badInput("{}: {} loop-carried operands but only {} outputs", desc_, n,
                      np_.output_size());
    for (int i = 0; i < n; ++i)
      if (!in_[2 + i]) return badInput("{}: loop-carried operand {} is empty", desc_, 2 + i);
    MG_ASSIGN_OR_RETURN(const onnx::GraphProto* g, body("body", 2 + n, 1 + n + k));

    std::optional<int64_t> trip;
    if (in_[0]) {
      MG_ASSIGN_OR_RETURN(trip, scalarOperand(0, "the trip count M"));
      if (!trip)
        return unsupported("{}: the trip count M is not a compile-time constant (it depends on "
                           "the model's data): Magneto unrolls a Loop only when its control is "
                           "known at compile time",
                           desc_);
      // With a condition the loop may end sooner: counted as it unrolls (the cap below).
      if (*trip > kMaxUnrolledIterations && !hasCond)
        return tooMany(*trip, "the trip count M asks for");
    }
    bool cond = true;
    if (hasCond) {
      MG_ASSIGN_OR_RETURN(std::optional<int64_t> c, scalarOperand(1, "the condition"));
      if (!c)
        return unsupported("{}: the condition is not a compile-time constant at entry (it "
                           "depends on the model's data): Magneto unrolls a Loop only when its "
                           "control is known at compile time",
                           desc_);
      cond = *c != 0;
    }
    if (!trip && !hasCond)
      return badInput("{}: the Loop has neither a trip count nor a condition: it never ends",
                      desc_);

    Value* condValue = hasCond ? in_[1]
                               : imp_.addConstant(name_ + "/cond",
                                                  Tensor::fromVector<uint8_t>(DType::kBool, {}, {1}));
    std::vector<Value*> carried(in_.begin() + 2, in_.end());
    std::vector<std::vector<Value*>> scans(k);
    int64_t i = 0;
    for (; (!trip || i < *trip) && cond; ++i) {
      if (i >= kMaxUnrolledIterations)
        return unsupported("{}: the condition is still true after {} iterations, the most Magneto "
                           "unrolls at compile time",
                           desc_, i);
      std::vector<Value*> ins{i64(fmt::format("{}/iteration_num", i), {i}, true), condValue};
      ins.insert(ins.end(), carried.begin(), carried.end());
      MG_ASSIGN_OR_RETURN(std::vector<Value*> outs,
                          pass(*g, ins, std::to_string(i), fmt::format("iteration {}", i)));
      carried.assign(outs.begin() + 1, outs.begin() + 1 + n);
      for (int j = 0; j < k; ++j) scans[j].push_back(outs[1 + n + j]);
      if (!hasCond || (trip && i + 1 >= *trip)) continue;  // the body's cond is ignored / moot
      condValue = outs[0];
      if (!isKnown(condValue))
        return unsupported("{}: the condition after iteration {} is not a compile-time constant "
                           "(it depends on the model's data): Magneto unrolls a Loop only when "
                           "its control is known at compile time",
                           desc_, i);
      if (condValue->constant().numel() != 1)
        return badInput("{}: the body's condition must hold one element, got {}", desc_,
                        condValue->type().str());
      cond = condValue->constant().intAt(0) != 0;
    }
    imp_.note(fmt::format("{}: unrolled {} iteration{}", desc_, i, i == 1 ? "" : "s"));

    std::vector<Value*> results = carried;
    for (int j = 0; j < k; ++j) {
      Value* s = nullptr;
      if (scans[j].empty()) {
        MG_ASSIGN_OR_RETURN(s, emptyStack(g->output(1 + n + j), 0));
      } else {
        MG_ASSIGN_OR_RETURN(s, stack(scans[j], 0, "scan" + std::to_string(j)));
      }
      results.push_back(s);
    }
    return results;
  }

  // --- Scan ------------------------------------------------------------------------------------

  struct ScanPlan {
    const onnx::GraphProto* body = nullptr;
    int n = 0, m = 0, k = 0;  // states, scan inputs, scan outputs
    std::vector<int64_t> inAxes, inDirs, outAxes, outDirs;
  };

  // The per-node attributes of either Scan version, checked; `m` scan inputs, `n` states.
  Expected<ScanPlan> plan(int n, int m, const char* inDirsName, bool hasOutAttrs) {
    ScanPlan p;
    p.n = n;
    p.m = m;
    p.k = np_.output_size() - n;
    if (p.k < 0)
      return badInput("{}: {} state operands but only {} outputs", desc_, n, np_.output_size());
    MG_ASSIGN_OR_RETURN(p.body, body("body", n + m, n + p.k));
    auto list = [&](const char* attr, int count, bool directions,
                    std::vector<int64_t>& out) -> Status {
      auto v = intsAttr(np_, attr);
      out = v ? *v : std::vector<int64_t>(count, 0);
      if (static_cast<int>(out.size()) != count)
        return badInput("{}: attribute '{}' has {} values, expected {}", desc_, attr, out.size(),
                        count);
      for (int64_t d : out)
        if (directions && d != 0 && d != 1)
          return badInput("{}: attribute '{}' holds {}, expected 0 (forward) or 1 (reverse)",
                          desc_, attr, d);
      return Status::success();
    };
    MG_RETURN_IF_ERROR(list(inDirsName, m, true, p.inDirs));
    if (hasOutAttrs) {
      MG_RETURN_IF_ERROR(list("scan_input_axes", m, false, p.inAxes));
      MG_RETURN_IF_ERROR(list("scan_output_axes", p.k, false, p.outAxes));
      MG_RETURN_IF_ERROR(list("scan_output_directions", p.k, true, p.outDirs));
    } else {
      p.inAxes.assign(m, 0);
      p.outAxes.assign(p.k, 0);
      p.outDirs.assign(p.k, 0);
    }
    return p;
  }

  // The scan over `xs` (their axes normalized) of length `len`: N final states, then the K
  // stacked scan outputs.
  Expected<std::vector<Value*>> scanSteps(const ScanPlan& p, std::vector<Value*> states,
                                          const std::vector<Value*>& xs,
                                          const std::vector<int64_t>& axes, int64_t len,
                                          const std::string& step) {
    std::vector<std::vector<Value*>> scans(p.k);
    for (int64_t t = 0; t < len; ++t) {
      const std::string tag = step + std::to_string(t);
      std::vector<Value*> ins = states;
      for (int j = 0; j < p.m; ++j) {
        int64_t index = p.inDirs[j] ? len - 1 - t : t;
        MG_ASSIGN_OR_RETURN(Value* e, take(xs[j], index, axes[j], fmt::format("{}/x{}", tag, j)));
        ins.push_back(e);
      }
      MG_ASSIGN_OR_RETURN(std::vector<Value*> outs,
                          pass(*p.body, ins, tag, "step " + std::to_string(t)));
      states.assign(outs.begin(), outs.begin() + p.n);
      for (int j = 0; j < p.k; ++j) scans[j].push_back(outs[p.n + j]);
    }
    std::vector<Value*> results = states;
    for (int j = 0; j < p.k; ++j) {
      Value* s = nullptr;
      if (len == 0) {
        MG_ASSIGN_OR_RETURN(s, emptyStack(p.body->output(p.n + j), p.outAxes[j]));
      } else {
        std::vector<Value*> parts = scans[j];
        if (p.outDirs[j]) std::reverse(parts.begin(), parts.end());
        MG_ASSIGN_OR_RETURN(s, stack(parts, p.outAxes[j], step + "scan" + std::to_string(j)));
      }
      results.push_back(s);
    }
    return results;
  }

  // The common length of the scan inputs on their axes (normalized in place).
  Expected<int64_t> scanLength(const std::vector<Value*>& xs, std::vector<int64_t>& axes,
                               int operandBase) {
    int64_t len = -1;
    for (size_t j = 0; j < xs.size(); ++j) {
      if (!xs[j]) return badInput("{}: scan input {} is empty", desc_, operandBase + j);
      const int64_t r = xs[j]->rank();
      if (axes[j] < -r || axes[j] >= r)
        return badInput("{}: scan input {} ({}) has no axis {}", desc_, operandBase + j,
                        xs[j]->type().str(), axes[j]);
      if (axes[j] < 0) axes[j] += r;
      const int64_t l = xs[j]->dims()[axes[j]];
      if (len >= 0 && l != len)
        return badInput("{}: scan inputs have different sequence lengths ({} and {})", desc_, len,
                        l);
      len = l;
    }
    return len;
  }

  Expected<std::vector<Value*>> scan9() {
    const int64_t m = intAttr(np_, "num_scan_inputs", 0);
    if (m < 1 || m > static_cast<int64_t>(in_.size()))
      return badInput("{}: num_scan_inputs is {}, expected 1 to {} (the operand count)", desc_, m,
                      in_.size());
    const int n = static_cast<int>(in_.size() - m);
    MG_ASSIGN_OR_RETURN(ScanPlan p, plan(n, static_cast<int>(m), "scan_input_directions", true));
    std::vector<Value*> states(in_.begin(), in_.begin() + n), xs(in_.begin() + n, in_.end());
    for (int i = 0; i < n; ++i)
      if (!states[i]) return badInput("{}: state operand {} is empty", desc_, i);
    std::vector<int64_t> axes = p.inAxes;
    MG_ASSIGN_OR_RETURN(int64_t len, scanLength(xs, axes, n));
    if (len > kMaxUnrolledIterations) return tooMany(len, "the scan inputs' length asks for");
    imp_.note(fmt::format("{}: unrolled {} step{}", desc_, len, len == 1 ? "" : "s"));
    return scanSteps(p, states, xs, axes, len, "");
  }

  // Scan-8: operand 0 is sequence_lens; every other operand has a batch axis 0; the scan axis of
  // the scan inputs is 1.
  Expected<std::vector<Value*>> scan8() {
    const int64_t m = intAttr(np_, "num_scan_inputs", 0);
    if (in_.size() < 2 || m < 1 || m > static_cast<int64_t>(in_.size()) - 1)
      return badInput("{}: num_scan_inputs is {}, expected 1 to {} (the operands after "
                      "sequence_lens)",
                      desc_, m, in_.size() < 1 ? 0 : in_.size() - 1);
    const int n = static_cast<int>(in_.size() - 1 - m);
    MG_ASSIGN_OR_RETURN(ScanPlan p, plan(n, static_cast<int>(m), "directions", false));
    int64_t batch = -1;
    for (size_t i = 1; i < in_.size(); ++i) {
      Value* v = in_[i];
      if (!v) return badInput("{}: operand {} is empty", desc_, i);
      const int minRank = static_cast<int>(i) > n ? 2 : 1;
      if (v->rank() < minRank)
        return badInput("{}: operand {} ({}) lacks the batch{} axis of Scan-8", desc_, i,
                        v->type().str(), minRank == 2 ? " and sequence" : "");
      if (batch >= 0 && v->dims()[0] != batch)
        return badInput("{}: operands have different batch sizes ({} and {})", desc_, batch,
                        v->dims()[0]);
      batch = v->dims()[0];
    }
    const int64_t len = in_[1 + n]->dims()[1];
    for (int j = 1; j < m; ++j)
      if (in_[1 + n + j]->dims()[1] != len)
        return badInput("{}: scan inputs have different sequence lengths ({} and {})", desc_, len,
                        in_[1 + n + j]->dims()[1]);
    if (in_[0]) {
      if (!isKnown(in_[0]))
        return unsupported("{}: sequence_lens is not a compile-time constant: Magneto unrolls a "
                           "Scan only over lengths known at compile time",
                           desc_);
      for (int64_t l : in_[0]->constant().toInts())
        if (l != len)
          return unsupported("{}: sequence_lens holds {}, not the full length {}: shorter "
                             "sequences are not supported",
                             desc_, l, len);
    }
    if (batch * len > kMaxUnrolledIterations)
      return tooMany(batch * len, "batch x sequence length asks for");
    imp_.note(fmt::format("{}: unrolled {} batch element{} x {} step{}", desc_, batch,
                          batch == 1 ? "" : "s", len, len == 1 ? "" : "s"));
    std::vector<std::vector<Value*>> perBatch;
    for (int64_t b = 0; b < batch; ++b) {
      const std::string tag = fmt::format("b{}/", b);
      std::vector<Value*> states, xs;
      for (int i = 0; i < n; ++i) {
        MG_ASSIGN_OR_RETURN(Value* s, take(in_[1 + i], b, 0, fmt::format("{}state{}", tag, i)));
        states.push_back(s);
      }
      for (int j = 0; j < m; ++j) {
        MG_ASSIGN_OR_RETURN(Value* x, take(in_[1 + n + j], b, 0, fmt::format("{}x{}", tag, j)));
        xs.push_back(x);
      }
      MG_ASSIGN_OR_RETURN(std::vector<Value*> r,
                          scanSteps(p, states, xs, std::vector<int64_t>(m, 0), len, tag));
      perBatch.push_back(std::move(r));
    }
    std::vector<Value*> results;
    for (int o = 0; o < n + p.k; ++o) {
      std::vector<Value*> parts;
      for (const auto& r : perBatch) parts.push_back(r[o]);
      if (parts.empty())
        return unsupported("{}: the batch is empty (0): its outputs' shapes are unknown", desc_);
      MG_ASSIGN_OR_RETURN(Value* s, stack(parts, 0, "batch" + std::to_string(o)));
      results.push_back(s);
    }
    return results;
  }

  BodyImporter& imp_;
  const onnx::NodeProto& np_;
  const std::string& name_;
  const std::string& desc_;
  const std::vector<Value*>& in_;
};

}  // namespace

bool isControlFlowOp(const std::string& opType) {
  return opType == "If" || opType == "Loop" || opType == "Scan";
}

Expected<std::vector<Value*>> specialiseControlFlow(BodyImporter& imp, const onnx::NodeProto& np,
                                                    const std::string& name,
                                                    const std::string& desc,
                                                    const std::vector<Value*>& inputs) {
  Specialiser s(imp, np, name, desc, inputs);
  MG_ASSIGN_OR_RETURN(std::vector<Value*> outs, s.run());
  if (static_cast<int>(outs.size()) != np.output_size())
    return internalStatus("{}: specialised into {} results for {} outputs", desc, outs.size(),
                          np.output_size());
  return outs;
}

}  // namespace frontend
}  // namespace magneto
