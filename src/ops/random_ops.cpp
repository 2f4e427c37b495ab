// The random-generator op family: RandomUniform, RandomNormal, RandomUniformLike,
// RandomNormalLike, Bernoulli and Multinomial, schemas and shape inference. Reference kernels and
// the generator: runtime/cpu/k_random.cpp.
//
// Semantics (docs/USER_GUIDE.md, "Random operators"): with the `seed` attribute a node's values
// are a fixed function of the seed and the element index (the same on every run, in the
// interpreter and every package, at every thread count); without one, every execution draws new
// values. They are not pure functions of their operands, so every schema here carries kNoFold:
// the fold pass and the importer's folding leave them alone (tests/unit/ops_random_test.cpp
// checks that two unseeded RandomUniform nodes stay two nodes and are not folded).
//
// Element types: results of RandomUniform/RandomNormal(Like) are float32 or float64 (`dtype`; the
// Like forms default to their input's type); float16 and bfloat16 are refused by name. Bernoulli
// reads float32/float64 probabilities and writes any numeric type or bool (`dtype`, default the
// input's); Multinomial reads float32/float64 log-probabilities [batch, classes] and writes
// int32 (default) or int64 [batch, sample_size]. The cuda and hip targets have no lowering for
// them and refuse them by name (docs/GPU_TARGET.md).
#include <string>

#include "families.h"

namespace magneto {
namespace {

using K = Attribute::Kind;

bool isGenFloat(DType t) { return t == DType::kF32 || t == DType::kF64; }

// The result type of a float generator: attribute dtype, else `def`.
Expected<DType> genDType(const InferContext& c, const char* op, DType def) {
  if (!c.attrs().has("dtype")) {
    if (!isGenFloat(def))
      return unsupported("{}: the result type defaults to the input's, {}, which is not float32 or "
                         "float64; set dtype to 1 or 11",
                         op, dtypeName(def));
    return def;
  }
  int64_t code = c.attrs().getInt("dtype", 1);
  DType t = static_cast<DType>(code);
  if (!isGenFloat(t))
    return unsupported("{}: dtype {} is not supported (1 = float32 and 11 = float64 are)", op,
                       code);
  return t;
}

Status checkBounds(const InferContext& c, const char* op) {
  double low = c.attrs().getFloat("low", 0.0), high = c.attrs().getFloat("high", 1.0);
  if (!(low <= high)) return badInput("{}: low ({}) must not exceed high ({})", op, low, high);
  return Status::success();
}

// RandomUniform, RandomNormal: no operand, the result's shape is the attribute `shape`.
InferFn inferGenerator(const char* op, bool uniform) {
  return [op, uniform](InferContext& c) -> Status {
    if (!c.attrs().has("shape")) return badInput("{}: the attribute shape is required", op);
    Dims shape = c.attrs().getInts("shape");
    for (int64_t d : shape)
      if (d < 0) return badInput("{}: shape has a negative dim {}", op, d);
    if (uniform) MG_RETURN_IF_ERROR(checkBounds(c, op));
    MG_ASSIGN_OR_RETURN(DType t, genDType(c, op, DType::kF32));
    c.setOutput(0, {t, shape});
    return Status::success();
  };
}

// RandomUniformLike, RandomNormalLike: the input's shape; dtype, else the input's type.
InferFn inferLike(const char* op, bool uniform) {
  return [op, uniform](InferContext& c) -> Status {
    if (uniform) MG_RETURN_IF_ERROR(checkBounds(c, op));
    MG_ASSIGN_OR_RETURN(DType t, genDType(c, op, c.inputDType(0)));
    c.setOutput(0, {t, c.inputDims(0)});
    return Status::success();
  };
}

Status inferBernoulli(InferContext& c) {
  const char* op = "Bernoulli";
  DType in = c.inputDType(0);
  if (!isGenFloat(in))
    return unsupported("{}: input must be float32 or float64 probabilities, got {}", op,
                       dtypeName(in));
  DType t = in;
  if (c.attrs().has("dtype")) {
    int64_t code = c.attrs().getInt("dtype", 1);
    t = static_cast<DType>(code);
    if (!isGenFloat(t) && !isInteger(t) && t != DType::kBool)
      return unsupported("{}: dtype {} is not supported (float32, float64, the integer types and "
                         "bool are)",
                         op, code);
  }
  c.setOutput(0, {t, c.inputDims(0)});
  return Status::success();
}

Status inferMultinomial(InferContext& c) {
  const char* op = "Multinomial";
  if (!isGenFloat(c.inputDType(0)) || c.inputType(0).rank() != 2)
    return badInput("{}: input must be float32 or float64 [batch_size, class_size], got {}", op,
                    c.inputType(0).str());
  int64_t code = c.attrs().getInt("dtype", 6);
  DType t = static_cast<DType>(code);
  if (t != DType::kI32 && t != DType::kI64)
    return badInput("{}: dtype must be 6 (int32) or 7 (int64), got {}", op, code);
  int64_t samples = c.attrs().getInt("sample_size", 1);
  if (samples < 0) return badInput("{}: sample_size must not be negative, got {}", op, samples);
  const Dims& x = c.inputDims(0);
  if (x[1] < 1 && x[0] > 0 && samples > 0)
    return badInput("{}: class_size is 0, nothing to draw from", op);
  c.setOutput(0, {t, {x[0], samples}});
  return Status::success();
}

OpSchema schema(const char* name, int minIn, int maxIn, std::vector<AttrSpec> attrs, InferFn fn,
                int since, const char* doc) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.attrs = std::move(attrs);
  s.traits = kNoFold;
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = since;
  return s;
}

}  // namespace

void registerRandomOps(OpRegistry& r) {
  const AttrSpec dtype{"dtype", K::kInt}, seed{"seed", K::kFloat};
  const AttrSpec low{"low", K::kFloat, false, true, 0.0}, high{"high", K::kFloat, false, true, 1.0};
  const AttrSpec mean{"mean", K::kFloat, false, true, 0.0},
      scale{"scale", K::kFloat, false, true, 1.0};
  const AttrSpec shape{"shape", K::kInts, true};
  r.add(schema("RandomUniform", 0, 0, {dtype, high, low, seed, shape},
               inferGenerator("RandomUniform", true), 1,
               "uniform values in [low, high) of the given shape (seeded: deterministic)"));
  r.add(schema("RandomNormal", 0, 0, {dtype, mean, scale, seed, shape},
               inferGenerator("RandomNormal", false), 1,
               "normal values N(mean, scale^2) of the given shape (seeded: deterministic)"));
  r.add(schema("RandomUniformLike", 1, 1, {dtype, high, low, seed},
               inferLike("RandomUniformLike", true), 1,
               "uniform values in [low, high) of the input's shape"));
  r.add(schema("RandomNormalLike", 1, 1, {dtype, mean, scale, seed},
               inferLike("RandomNormalLike", false), 1,
               "normal values N(mean, scale^2) of the input's shape"));
  r.add(schema("Bernoulli", 1, 1, {dtype, seed}, inferBernoulli, 15,
               "1 with probability input[i], else 0"));
  r.add(schema("Multinomial", 1, 1, {dtype, {"sample_size", K::kInt}, seed}, inferMultinomial, 7,
               "sample_size class indices per row drawn from softmax(input)"));
}

}  // namespace magneto
