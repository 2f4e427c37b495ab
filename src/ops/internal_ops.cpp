// Magneto's internal ops: produced by our passes, never by the frontend.
#include <sstream>

#include "families.h"

namespace magneto {

void registerInternalOps(OpRegistry& r) {
  OpSchema s;
  s.name = "MgElementwise";
  s.minInputs = 1;
  s.maxInputs = -1;
  s.attrs = {{"program", Attribute::Kind::kStrings, true}};
  s.traits = kElementwise | kBroadcasting;
  s.doc =
      "A fused chain of float32 elementwise ops (pass fuse-elementwise). `program` holds one "
      "instruction per op, \"<Op> <a> [<b>] [alpha=x] [beta=y]\", operands iK (input K, "
      "broadcast) or tK (result of instruction K); the last result is the output.";
  s.infer = [](InferContext& c) -> Status {
    Dims out = c.inputDims(0);
    for (size_t i = 0; i < c.numInputs(); ++i) {
      if (c.inputDType(i) != DType::kF32)
        return c.error("MgElementwise operands must be f32, operand " + std::to_string(i) + " is " +
                       std::string(dtypeName(c.inputDType(i))));
      MG_ASSIGN_OR_RETURN(out, broadcastDims(out, c.inputDims(i)));
    }
    auto program = c.attrs().getStrings("program");
    if (program.empty()) return c.error("MgElementwise needs a non-empty program");
    c.setOutput(0, {DType::kF32, out});
    return Status::success();
  };
  r.add(std::move(s));

  {
    OpSchema sy;
    sy.name = "MgSymbolic";
    sy.minInputs = 0;
    sy.maxInputs = 0;
    sy.attrs = {{"exprs", Attribute::Kind::kStrings, true},
                {"to", Attribute::Kind::kInt, true},
                {"shape", Attribute::Kind::kInts, true}};
    sy.traits = kNoFold;
    sy.doc =
        "Shape data that depends on dynamic dimensions (docs/DYNAMIC_SHAPES.md): element i is the "
        "dimension expression exprs[i] (\"2*N+1\"); `to` is the element type (int64 or int32), "
        "`shape` the result's dims. Not a constant: the package's runtime writes its elements "
        "when the input dims are set; shape inference reads them at the binding it infers for.";
    sy.infer = [](InferContext& c) -> Status {
      auto exprs = c.attrs().getStrings("exprs");
      Dims shape = c.attrs().getInts("shape");
      auto dt = static_cast<DType>(c.attrs().getInt("to", 0));
      if (dt != DType::kI64 && dt != DType::kI32)
        return c.error("MgSymbolic's `to` must be int64 or int32");
      int64_t n = 1;
      for (int64_t d : shape) {
        if (d < 0) return c.error("MgSymbolic's shape has a negative dim");
        n *= d;
      }
      if (n != static_cast<int64_t>(exprs.size()))
        return c.error(fmt::format("MgSymbolic has {} expressions for shape {}", exprs.size(),
                                   dimsStr(shape)));
      for (const std::string& e : exprs) {
        auto parsed = DimExpr::parse(e);
        if (!parsed.ok()) return parsed.status();
      }
      c.setOutput(0, {dt, shape});
      return Status::success();
    };
    r.add(std::move(sy));
  }

  {
    OpSchema cs;
    cs.name = "MgChannelSlice";
    cs.minInputs = 1;
    cs.maxInputs = 1;
    cs.attrs = {{"begin", Attribute::Kind::kInt, true},
                {"end", Attribute::Kind::kInt, true},
                {"materialize", Attribute::Kind::kInt, false}};
    cs.doc =
        "Channels [begin, end) of dim 1: x[:, begin:end, ...] (pass wide-merge). With batch 1 the "
        "memory planner makes it a byte-offset view of its operand (no step runs), unless "
        "materialize = 1 (pass place-concat-slices): then it copies, straight into its Concat.";
    cs.infer = [](InferContext& c) -> Status {
      Dims d = c.inputDims(0);
      if (d.size() < 2) return c.error("MgChannelSlice needs rank >= 2, got " + c.inputType(0).str());
      int64_t b = c.attrs().getInt("begin", -1), e = c.attrs().getInt("end", -1);
      if (b < 0 || e <= b || e > d[1])
        return c.error("MgChannelSlice [" + std::to_string(b) + ", " + std::to_string(e) +
                       ") is not a non-empty range of the " + std::to_string(d[1]) + " channels");
      d[1] = e - b;
      c.setOutput(0, {c.inputDType(0), d});
      return Status::success();
    };
    r.add(std::move(cs));
  }
}

}  // namespace magneto
