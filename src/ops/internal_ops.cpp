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
}

}  // namespace magneto
