// Sequence-typed values (ONNX's seq(tensor)) resolved at import into the tensors they hold.
//
// Magneto's IR is a static dataflow graph of tensors: it has no sequence values. Exporters write
// sequences for things that are plain tensor code once their lengths are known: torch 1.13 exports
// `repeat_interleave` along a dim it does not know statically (grouped-query attention's K/V heads
// in a model exported with dynamic axes) as SplitToSequence -> Loop { SequenceAt, SequenceInsert }
// -> ConcatFromSequence, `unbind` / `torch.split` into a list as SplitToSequence, `stack` of a
// list as ConcatFromSequence(new_axis = 1), a Python list of tensors as SequenceConstruct. The
// importer already folds constants as it goes and unrolls a Loop whose trip count is a constant
// (onnx_control_flow.cpp), so it tracks a sequence as the list of its element values, and every
// sequence op whose length and positions are compile-time constants becomes tensor ops or
// nothing at all:
//
//   SplitToSequence(x, split) {axis}  -> Split(x, sizes) {axis} (sizes from the constant split:
//                                        a scalar chunk size, a list, or ones when absent); with
//                                        split absent and keepdims = 0 each part is Squeezed
//   ConcatFromSequence(s) {axis}      -> Concat(s[0], ..., s[n-1]) {axis}; with new_axis = 1 each
//                                        element is Unsqueezed at axis first (stack)
//   SequenceConstruct(a, b, ...)      -> the list [a, b, ...]            (no node)
//   SequenceEmpty {dtype}             -> the empty list                   (no node)
//   SequenceInsert(s, t, pos)         -> s with t inserted at pos (default: appended)
//   SequenceErase(s, pos)             -> s without element pos (default: the last)
//   SequenceAt(s, pos)                -> the element value s[pos]          (no node)
//   SequenceLength(s)                 -> an i64 scalar constant
//   Identity(s)                       -> s
//   SequenceMap(s, t...) {body}       -> the body imported once per element (as an unrolled
//                                        Loop), the outputs the sequences of its results
//
// A Loop whose carried values are sequences (the exporter's loop above: SequenceEmpty carried,
// SequenceInsert in the body) unrolls as any other: each iteration's body sees the previous
// iteration's list; its trip count (Shape -> Gather -> Unsqueeze) and iteration_num are constants
// by then, so SequenceAt's position in iteration i is the constant i. If branches and Scan states
// may yield sequences the same way.
//
// Why that is legal: sequence ops only move tensors around (no arithmetic); a sequence whose
// length and positions are known is exactly its list of element values, and SplitToSequence,
// ConcatFromSequence compute what Split and Concat compute over those elements. Negative positions
// count from the end as ONNX says. So the parallel passes see plain siblings (the parts of one
// Split, the operands of one Concat).
//
//   %s = SplitToSequence(%k, ones(2)) {axis = 1}      ->  %p0, %p1 = Split(%k, [1, 1]) {axis = 1}
//   %e = SequenceEmpty()
//   %r = Loop(2, true, %e) { SequenceInsert(%r_in, f(SequenceAt(%s, %i))) }
//                                                     ->  %f0 = f(%p0) ; %f1 = f(%p1)
//   %y = ConcatFromSequence(%r) {axis = 1}            ->  %y = Concat(%f0, %f1) {axis = 1}
//
// Refused with an error naming the node (never a crash): a position or split that is not a
// compile-time constant, a position out of range (SequenceAt past the length), a split axis whose
// extent is dynamic, splits that do not add up to it, ConcatFromSequence of an empty sequence,
// elements of another type than the sequence's; and, in onnx_import.cpp, any other op reading a
// sequence, a sequence graph output, a sequence graph input (no run-time sequences yet).
#include "onnx_sequence.h"

#include <algorithm>
#include <optional>

#include "tensor_proto.h"

namespace magneto {
namespace frontend {

namespace {

int64_t seqIntAttr(const onnx::NodeProto& np, const std::string& attr, int64_t def) {
  for (const auto& a : np.attribute())
    if (a.name() == attr) return a.i();
  return def;
}

bool seqHasAttr(const onnx::NodeProto& np, const std::string& attr) {
  for (const auto& a : np.attribute())
    if (a.name() == attr) return true;
  return false;
}

bool seqKnown(const Value* v) { return v && v->isConstant() && v->constant().hasData(); }

// The most tensors one sequence op makes (a SplitToSequence of a huge extent would otherwise
// build millions of parts).
constexpr int64_t kMaxSequenceParts = 65536;

class SeqImport {
 public:
  SeqImport(SequenceHost& h, const onnx::NodeProto& np, const std::string& name,
            const std::string& desc, const std::vector<Value*>& in)
      : h_(h), np_(np), name_(name), desc_(desc), in_(in) {}

  Expected<std::vector<Value*>> run() {
    const std::string& op = np_.op_type();
    if (op == "SequenceMap") return sequenceMap();
    if (np_.output_size() != 1)
      return badInput("{}: {} has one result, the node names {}", desc_, op, np_.output_size());
    Expected<Value*> r = Status::success();
    if (op == "SplitToSequence") r = splitToSequence();
    else if (op == "ConcatFromSequence") r = concatFromSequence();
    else if (op == "SequenceConstruct") r = construct();
    else if (op == "SequenceEmpty") r = empty();
    else if (op == "SequenceInsert") r = insert();
    else if (op == "SequenceErase") r = erase();
    else if (op == "SequenceAt") r = at();
    else if (op == "SequenceLength") r = length();
    else return unsupported("{}: not a sequence op", desc_);
    if (!r.ok()) return r.status();
    return std::vector<Value*>{*r};
  }

 private:
  Status arity(size_t lo, size_t hi) const {
    if (in_.size() < lo || in_.size() > hi || (lo > 0 && !in_[0]))
      return badInput("{}: takes {} to {} operands, got {}", desc_, lo, hi, in_.size());
    return Status::success();
  }

  Expected<const SeqValue*> seqOperand(size_t i) const {
    const SeqValue* s = i < in_.size() ? h_.sequenceOf(in_[i]) : nullptr;
    if (!s)
      return badInput("{}: operand {} ('{}') must be a sequence, it is a tensor", desc_, i,
                      i < in_.size() && in_[i] ? in_[i]->name() : std::string("absent"));
    return s;
  }

  Expected<Value*> tensorOperand(size_t i) const {
    Value* v = in_[i];
    if (h_.sequenceOf(v))
      return badInput("{}: operand {} must be a tensor, it is a sequence", desc_, i);
    return v;
  }

  // The constant scalar position of operand i (nullopt when absent); `n` the sequence's length,
  // `hi` the largest valid position (n - 1, or n for SequenceInsert).
  Expected<std::optional<int64_t>> position(size_t i, int64_t n, int64_t hi) const {
    if (i >= in_.size() || !in_[i]) return std::optional<int64_t>();
    Value* p = in_[i];
    if (h_.sequenceOf(p)) return badInput("{}: the position must be a tensor", desc_);
    if (!seqKnown(p))
      return unsupported("{}: the position '{}' is not a compile-time constant (it depends on the "
                         "model's data): Magneto resolves sequences at compile time only, and has "
                         "no run-time sequences",
                         desc_, p->name());
    if (p->constant().numel() != 1 || (p->dtype() != DType::kI64 && p->dtype() != DType::kI32))
      return badInput("{}: the position must be an int32 or int64 scalar, got {}", desc_,
                      p->type().str());
    const int64_t pos = p->constant().intAt(0);
    if (pos < -n || pos > hi)
      return badInput("{}: position {} is out of range for a sequence of {} tensor{} (valid: {} "
                      "to {})",
                      desc_, pos, n, n == 1 ? "" : "s", -n, hi);
    return std::optional<int64_t>(pos < 0 ? pos + n : pos);
  }

  Status checkElement(const SeqValue& s, const Value* t) const {
    if (t->dtype() != s.elem)
      return badInput("{}: the tensor is {}, the sequence holds {}", desc_,
                      dtypeName(t->dtype()), dtypeName(s.elem));
    return Status::success();
  }

  Value* i64(const std::string& what, std::vector<int64_t> v, bool scalar) {
    Dims dims = scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())};
    return h_.addConstant(name_ + "/" + what, Tensor::fromVector<int64_t>(DType::kI64, dims, v));
  }

  Value* result(SeqValue s) { return h_.makeSequence(h_.resultName(np_.output(0)), std::move(s)); }

  Expected<Value*> splitToSequence() {
    MG_RETURN_IF_ERROR(arity(1, 2));
    MG_ASSIGN_OR_RETURN(Value* x, tensorOperand(0));
    const int64_t r = x->rank();
    int64_t axis = seqIntAttr(np_, "axis", 0);
    if (axis < -r || axis >= r)
      return badInput("{}: axis {} is out of range for a tensor of rank {}", desc_, axis, r);
    if (axis < 0) axis += r;
    if (x->isSymbolic() && !x->dimExpr(static_cast<int>(axis)).isConstant())
      return unsupported("{}: the split axis {} of '{}' has a dynamic extent ({}), so the "
                         "sequence's length is not known at compile time",
                         desc_, axis, x->name(), x->dimExpr(static_cast<int>(axis)).str());
    const int64_t n = x->dims()[axis];
    std::vector<int64_t> sizes;
    auto tooMany = [&](int64_t parts) {
      return unsupported("{}: {} parts, more than the {} Magneto splits a sequence into", desc_,
                         parts, kMaxSequenceParts);
    };
    bool squeeze = false;
    Value* split = in_.size() > 1 ? in_[1] : nullptr;
    if (!split) {
      if (n > kMaxSequenceParts) return tooMany(n);
      sizes.assign(static_cast<size_t>(n), 1);
      squeeze = seqIntAttr(np_, "keepdims", 1) == 0;
    } else {
      if (h_.sequenceOf(split)) return badInput("{}: split must be a tensor", desc_);
      if (!seqKnown(split))
        return unsupported("{}: split '{}' is not a compile-time constant (it depends on the "
                           "model's data), so the sequence's length is not known at compile time",
                           desc_, split->name());
      const Tensor& t = split->constant();
      if (split->dtype() != DType::kI64 && split->dtype() != DType::kI32)
        return badInput("{}: split must be int32 or int64, got {}", desc_, split->type().str());
      if (split->rank() == 0) {
        const int64_t c = t.intAt(0);
        if (c <= 0) return badInput("{}: the chunk size split = {} must be positive", desc_, c);
        if ((n + c - 1) / c > kMaxSequenceParts) return tooMany((n + c - 1) / c);
        for (int64_t at = 0; at < n; at += c) sizes.push_back(std::min(c, n - at));
      } else if (split->rank() == 1) {
        if (t.numel() > kMaxSequenceParts) return tooMany(t.numel());
        int64_t sum = 0;
        for (int64_t i = 0; i < t.numel(); ++i) {
          const int64_t c = t.intAt(i);
          if (c < 0) return badInput("{}: split[{}] = {} is negative", desc_, i, c);
          sizes.push_back(c);
          if (c > n - sum)
            return badInput("{}: the splits add up to more than axis {} of '{}' has ({})", desc_,
                            axis, x->name(), n);
          sum += c;
        }
        if (sum != n)
          return badInput("{}: the splits add up to {}, but axis {} of '{}' has {}", desc_, sum,
                          axis, x->name(), n);
      } else {
        return badInput("{}: split must be a scalar or 1-D, got {}", desc_, split->type().str());
      }
    }
    SeqValue s;
    s.elem = x->dtype();
    if (!sizes.empty()) {
      AttrMap a;
      a.set("axis", axis);
      MG_ASSIGN_OR_RETURN(s.items, h_.addOpN("Split", {x, i64("split", sizes, false)}, std::move(a),
                                             name_, static_cast<int>(sizes.size())));
      if (squeeze) {
        Value* axes = i64("axes", {axis}, false);
        for (size_t i = 0; i < s.items.size(); ++i) {
          MG_ASSIGN_OR_RETURN(s.items[i],
                              h_.addOp("Squeeze", {s.items[i], axes}, {},
                                       fmt::format("{}/squeeze{}", name_, i)));
        }
      }
    }
    h_.note(fmt::format("{}: a sequence of {} tensor{} (Split on axis {})", desc_, sizes.size(),
                        sizes.size() == 1 ? "" : "s", axis));
    return result(std::move(s));
  }

  // SequenceMap(s, extra...) {body}: the body imported once per element (like an unrolled Loop,
  // onnx_control_flow.cpp): sequence operands give it their element k, tensor operands
  // themselves; output j is the sequence of the body's output j over the elements.
  Expected<std::vector<Value*>> sequenceMap() {
    if (in_.empty() || !in_[0]) return badInput("{}: SequenceMap takes a sequence", desc_);
    const onnx::GraphProto* body = nullptr;
    for (const auto& a : np_.attribute())
      if (a.name() == "body" && a.has_g()) body = &a.g();
    if (!body) return badInput("{}: missing subgraph attribute 'body'", desc_);
    if (body->input_size() != static_cast<int>(in_.size()) ||
        body->output_size() != np_.output_size())
      return badInput("{}: the body has {} inputs and {} outputs, the node {} operands and {} "
                      "results",
                      desc_, body->input_size(), body->output_size(), in_.size(),
                      np_.output_size());
    MG_ASSIGN_OR_RETURN(const SeqValue* first, seqOperand(0));
    const size_t n = first->items.size();
    for (size_t i = 0; i < in_.size(); ++i) {
      if (!in_[i]) return badInput("{}: operand {} is empty", desc_, i);
      const SeqValue* s = h_.sequenceOf(in_[i]);
      if (s && s->items.size() != n)
        return badInput("{}: the sequences have different lengths ({} and {})", desc_, n,
                        s->items.size());
    }
    std::vector<SeqValue> outs(static_cast<size_t>(np_.output_size()));
    for (size_t k = 0; k < n; ++k) {
      std::vector<Value*> ins;
      for (Value* v : in_) {
        const SeqValue* s = h_.sequenceOf(v);
        ins.push_back(s ? s->items[k] : v);
      }
      auto r = h_.importBody(*body, ins, fmt::format("{}/{}/", name_, k));
      if (!r.ok()) return r.status().withContext(fmt::format("{}, element {}: ", desc_, k));
      for (size_t j = 0; j < outs.size(); ++j) {
        Value* o = (*r)[j];
        if (h_.sequenceOf(o))
          return unsupported("{}: the body's output {} is a sequence (sequences of sequences are "
                             "not supported)",
                             desc_, j);
        if (k == 0) outs[j].elem = o->dtype();
        outs[j].items.push_back(o);
      }
    }
    for (size_t j = 0; j < outs.size() && n == 0; ++j) {
      const auto& t = body->output(static_cast<int>(j)).type();
      if (t.has_tensor_type() && t.tensor_type().elem_type() != 0) {
        auto dt = dtypeFromOnnx(t.tensor_type().elem_type());
        if (dt.ok()) outs[j].elem = *dt;
      }
    }
    h_.note(fmt::format("{}: body imported for each of {} element{}", desc_, n, n == 1 ? "" : "s"));
    std::vector<Value*> results;
    for (size_t j = 0; j < outs.size(); ++j)
      results.push_back(np_.output(static_cast<int>(j)).empty()
                            ? nullptr
                            : h_.makeSequence(h_.resultName(np_.output(static_cast<int>(j))),
                                              std::move(outs[j])));
    return results;
  }

  Expected<Value*> concatFromSequence() {
    MG_RETURN_IF_ERROR(arity(1, 1));
    MG_ASSIGN_OR_RETURN(const SeqValue* s, seqOperand(0));
    if (!seqHasAttr(np_, "axis")) return badInput("{}: the attribute 'axis' is required", desc_);
    int64_t axis = seqIntAttr(np_, "axis", 0);
    const bool newAxis = seqIntAttr(np_, "new_axis", 0) != 0;
    if (s->items.empty())
      return unsupported("{}: the sequence is empty: ConcatFromSequence of no tensors has no "
                         "defined shape",
                         desc_);
    const int64_t r = s->items[0]->rank() + (newAxis ? 1 : 0);
    if (axis < -r || axis >= r)
      return badInput("{}: axis {} is out of range for {} tensors of rank {}", desc_, axis,
                      newAxis ? "stacking" : "concatenating", s->items[0]->rank());
    if (axis < 0) axis += r;
    std::vector<Value*> parts = s->items;
    if (newAxis) {
      Value* axes = i64("axes", {axis}, false);
      for (size_t i = 0; i < parts.size(); ++i) {
        MG_ASSIGN_OR_RETURN(parts[i], h_.addOp("Unsqueeze", {parts[i], axes}, {},
                                               fmt::format("{}/unsqueeze{}", name_, i)));
      }
    }
    AttrMap a;
    a.set("axis", axis);
    return h_.addOp("Concat", parts, std::move(a), name_);
  }

  Expected<Value*> construct() {
    if (in_.empty()) return badInput("{}: SequenceConstruct takes at least one tensor", desc_);
    SeqValue s;
    for (size_t i = 0; i < in_.size(); ++i) {
      if (!in_[i]) return badInput("{}: operand {} is empty", desc_, i);
      MG_ASSIGN_OR_RETURN(Value* t, tensorOperand(i));
      if (i == 0) s.elem = t->dtype();
      MG_RETURN_IF_ERROR(checkElement(s, t));
      s.items.push_back(t);
    }
    return result(std::move(s));
  }

  Expected<Value*> empty() {
    if (!in_.empty()) return badInput("{}: SequenceEmpty takes no operands", desc_);
    SeqValue s;
    s.elem = DType::kF32;
    if (seqHasAttr(np_, "dtype")) {
      auto dt = dtypeFromOnnx(static_cast<int32_t>(seqIntAttr(np_, "dtype", 1)));
      if (!dt.ok()) return dt.status().withContext(desc_ + ": dtype: ");
      s.elem = *dt;
    }
    return result(std::move(s));
  }

  Expected<Value*> insert() {
    MG_RETURN_IF_ERROR(arity(2, 3));
    MG_ASSIGN_OR_RETURN(const SeqValue* s0, seqOperand(0));
    SeqValue s = *s0;
    if (!in_[1]) return badInput("{}: the tensor to insert is absent", desc_);
    MG_ASSIGN_OR_RETURN(Value* t, tensorOperand(1));
    MG_RETURN_IF_ERROR(checkElement(s, t));
    const int64_t n = static_cast<int64_t>(s.items.size());
    MG_ASSIGN_OR_RETURN(std::optional<int64_t> pos, position(2, n, n));
    s.items.insert(s.items.begin() + (pos ? *pos : n), t);
    return result(std::move(s));
  }

  Expected<Value*> erase() {
    MG_RETURN_IF_ERROR(arity(1, 2));
    MG_ASSIGN_OR_RETURN(const SeqValue* s0, seqOperand(0));
    SeqValue s = *s0;
    const int64_t n = static_cast<int64_t>(s.items.size());
    if (n == 0) return badInput("{}: erasing from an empty sequence", desc_);
    MG_ASSIGN_OR_RETURN(std::optional<int64_t> pos, position(1, n, n - 1));
    s.items.erase(s.items.begin() + (pos ? *pos : n - 1));
    return result(std::move(s));
  }

  Expected<Value*> at() {
    MG_RETURN_IF_ERROR(arity(2, 2));
    MG_ASSIGN_OR_RETURN(const SeqValue* s, seqOperand(0));
    if (!in_[1]) return badInput("{}: the position is required", desc_);
    const int64_t n = static_cast<int64_t>(s->items.size());
    MG_ASSIGN_OR_RETURN(std::optional<int64_t> pos, position(1, n, n - 1));
    return s->items[static_cast<size_t>(*pos)];
  }

  Expected<Value*> length() {
    MG_RETURN_IF_ERROR(arity(1, 1));
    MG_ASSIGN_OR_RETURN(const SeqValue* s, seqOperand(0));
    return h_.addConstant(h_.resultName(np_.output(0)),
                          Tensor::fromVector<int64_t>(DType::kI64, {},
                                                      {static_cast<int64_t>(s->items.size())}));
  }

  SequenceHost& h_;
  const onnx::NodeProto& np_;
  const std::string& name_;
  const std::string& desc_;
  const std::vector<Value*>& in_;
};

}  // namespace

bool isSequenceOp(const std::string& op) {
  return op == "SplitToSequence" || op == "ConcatFromSequence" || op == "SequenceConstruct" ||
         op == "SequenceEmpty" || op == "SequenceInsert" || op == "SequenceErase" ||
         op == "SequenceAt" || op == "SequenceLength" || op == "SequenceMap";
}

Expected<std::vector<Value*>> importSequenceOp(SequenceHost& host, const onnx::NodeProto& np,
                                               const std::string& name, const std::string& desc,
                                               const std::vector<Value*>& inputs) {
  return SeqImport(host, np, name, desc, inputs).run();
}

}  // namespace frontend
}  // namespace magneto
