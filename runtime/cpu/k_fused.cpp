// MgElementwise: a chain of float32 elementwise ops fused into one pass over memory.
//
// Attributes: `program` (string list), one instruction each, evaluated in order per element:
//     "<Op> <a> [<b>] [alpha=<x>] [beta=<y>]"
// where operands are iK (fused input K, broadcast to the output shape) or tK (the result of
// instruction K). The last instruction's result is the output. Unary ops: the epilogue
// activations (Relu, LeakyRelu, Sigmoid, Tanh, Clip, HardSigmoid, HardSwish, Elu, Selu,
// Softplus, Gelu) and Abs Neg Exp Log Sqrt Reciprocal Floor Ceil Erf Softsign Mish;
// binary ops: Add Sub Mul Div Pow Max Min.
//
// Evaluation runs over blocks of kBlock elements, one instruction at a time over the whole
// block, so each instruction's loop is simple enough for the compiler to vectorize.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "mg_kernels.h"

namespace mgrt {
namespace {

constexpr int64_t kBlock = 512;

enum class Code { kAct, kAbs, kNeg, kExp, kLog, kSqrt, kRecip, kFloor, kCeil, kErf, kSoftsign, kMish,
                  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };

struct Instr {
  Code code;
  Epilogue act;
  int a = -1, b = -1;  // operand slots: [0, nin) inputs, nin + k temps
};

bool parseCode(const std::string& op, Instr& in) {
  static const struct { const char* name; Code code; } kCodes[] = {
      {"Abs", Code::kAbs}, {"Neg", Code::kNeg}, {"Exp", Code::kExp}, {"Log", Code::kLog},
      {"Sqrt", Code::kSqrt}, {"Reciprocal", Code::kRecip}, {"Floor", Code::kFloor},
      {"Ceil", Code::kCeil}, {"Erf", Code::kErf}, {"Softsign", Code::kSoftsign}, {"Mish", Code::kMish},
      {"Add", Code::kAdd}, {"Sub", Code::kSub}, {"Mul", Code::kMul}, {"Div", Code::kDiv},
      {"Pow", Code::kPow}, {"Max", Code::kMax}, {"Min", Code::kMin}};
  for (const auto& c : kCodes)
    if (op == c.name) return in.code = c.code, true;
  Act a = parseAct(op);
  if (a == Act::kNone) return false;
  in.code = Code::kAct;
  in.act.act = a;
  return true;
}

bool parseSlot(const std::string& tok, int nin, int& slot) {
  if (tok.size() < 2 || (tok[0] != 'i' && tok[0] != 't')) return false;
  slot = std::atoi(tok.c_str() + 1) + (tok[0] == 't' ? nin : 0);
  return true;
}

bool isBinary(Code c) { return c >= Code::kAdd; }

float unary(const Instr& in, float x) {
  switch (in.code) {
    case Code::kAct: return applyAct(in.act, x);
    case Code::kAbs: return std::fabs(x);
    case Code::kNeg: return -x;
    case Code::kExp: return std::exp(x);
    case Code::kLog: return std::log(x);
    case Code::kSqrt: return std::sqrt(x);
    case Code::kRecip: return 1.f / x;
    case Code::kFloor: return std::floor(x);
    case Code::kCeil: return std::ceil(x);
    case Code::kErf: return std::erf(x);
    case Code::kSoftsign: return x / (1.f + std::fabs(x));
    case Code::kMish: return x * std::tanh(x > 20.f ? x : std::log1p(std::exp(x)));
    default: return x;
  }
}

float binary(Code c, float x, float y) {
  switch (c) {
    case Code::kAdd: return x + y;
    case Code::kSub: return x - y;
    case Code::kMul: return x * y;
    case Code::kDiv: return x / y;
    case Code::kPow: return std::pow(x, y);
    case Code::kMax: return std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y);
    case Code::kMin: return std::isnan(x) || std::isnan(y) ? NAN : (x < y ? x : y);
    default: return x;
  }
}

int kMgElementwise(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  std::vector<std::string> program = a.strings("program");
  if (program.empty()) return ctx.fail("MgElementwise: empty program");
  std::vector<Instr> code;
  for (const std::string& line : program) {
    std::istringstream ss(line);
    std::string op, tok;
    ss >> op;
    Instr ins;
    if (!parseCode(op, ins)) return ctx.fail("MgElementwise: unknown op '%s'", op.c_str());
    int operands = 0;
    while (ss >> tok) {
      if (tok.rfind("alpha=", 0) == 0) ins.act.alpha = std::strtof(tok.c_str() + 6, nullptr);
      else if (tok.rfind("beta=", 0) == 0) ins.act.beta = std::strtof(tok.c_str() + 5, nullptr);
      else if (!parseSlot(tok, nin, operands++ == 0 ? ins.a : ins.b))
        return ctx.fail("MgElementwise: bad operand '%s'", tok.c_str());
    }
    int limit = nin + static_cast<int>(code.size());
    if (ins.a < 0 || ins.a >= limit || (isBinary(ins.code) && (ins.b < 0 || ins.b >= limit)))
      return ctx.fail("MgElementwise: instruction '%s' reads an undefined slot", line.c_str());
    code.push_back(ins);
  }
  const Tensor& y = out[0];
  const int rank = y.rank;
  int64_t total = y.numel();
  // Per-input strides over the output index space (0 where broadcast).
  std::vector<std::vector<int64_t>> strides(nin, std::vector<int64_t>(rank, 0));
  std::vector<bool> full(nin);
  for (int i = 0; i < nin; ++i) {
    int64_t s = 1;
    for (int d = rank - 1, k = in[i].rank - 1; d >= 0; --d, --k) {
      int64_t dim = k >= 0 ? in[i].dims[k] : 1;
      strides[i][d] = dim == 1 ? 0 : s;
      s *= dim;
    }
    full[i] = in[i].numel() == total;
  }
  float* dst = y.as<float>();
  const int nslots = nin + static_cast<int>(code.size());
  parallelFor(ctx.pool, (total + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> buf(static_cast<size_t>(nslots) * kBlock);
    for (int64_t blk = b0; blk < b1; ++blk) {
      int64_t start = blk * kBlock;
      int64_t n = std::min<int64_t>(kBlock, total - start);
      for (int i = 0; i < nin; ++i) {
        float* slot = &buf[static_cast<size_t>(i) * kBlock];
        const float* src = in[i].as<float>();
        if (full[i]) {
          std::memcpy(slot, src + start, sizeof(float) * n);
          continue;
        }
        for (int64_t e = 0; e < n; ++e) {
          int64_t flat = start + e, off = 0;
          for (int d = rank - 1; d >= 0; --d) {
            int64_t idx = flat % y.dims[d];
            flat /= y.dims[d];
            off += idx * strides[i][d];
          }
          slot[e] = src[off];
        }
      }
      for (size_t k = 0; k < code.size(); ++k) {
        const Instr& ins = code[k];
        float* r = &buf[(nin + k) * kBlock];
        const float* x = &buf[static_cast<size_t>(ins.a) * kBlock];
        if (isBinary(ins.code)) {
          const float* z = &buf[static_cast<size_t>(ins.b) * kBlock];
          switch (ins.code) {  // the common ones as plain loops, so they vectorize
            case Code::kAdd: for (int64_t e = 0; e < n; ++e) r[e] = x[e] + z[e]; break;
            case Code::kSub: for (int64_t e = 0; e < n; ++e) r[e] = x[e] - z[e]; break;
            case Code::kMul: for (int64_t e = 0; e < n; ++e) r[e] = x[e] * z[e]; break;
            case Code::kDiv: for (int64_t e = 0; e < n; ++e) r[e] = x[e] / z[e]; break;
            default: for (int64_t e = 0; e < n; ++e) r[e] = binary(ins.code, x[e], z[e]);
          }
        } else if (ins.code == Code::kAct && ins.act.act == Act::kRelu) {
          for (int64_t e = 0; e < n; ++e) r[e] = x[e] > 0.f ? x[e] : 0.f;
        } else {
          for (int64_t e = 0; e < n; ++e) r[e] = unary(ins, x[e]);
        }
      }
      std::memcpy(dst + start, &buf[(nslots - 1) * static_cast<size_t>(kBlock)], sizeof(float) * n);
    }
  });
  return 0;
}

// MgChannelSlice: channels [begin, end) of dim 1, copied (the planner makes it a view when it can).
int kMgChannelSlice(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  (void)nin, (void)nout;
  const Tensor& x = in[0];
  int64_t begin = a.i("begin", -1), end = a.i("end", -1);
  if (x.rank < 2 || begin < 0 || end <= begin || end > x.dims[1])
    return ctx.fail("MgChannelSlice: bad range [%lld, %lld)", static_cast<long long>(begin),
                    static_cast<long long>(end));
  int64_t inner = static_cast<int64_t>(dtypeSize(x.dtype));
  for (int d = 2; d < x.rank; ++d) inner *= x.dims[d];
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out[0].data);
  int64_t rows = end - begin;
  for (int64_t n = 0; n < x.dims[0]; ++n)
    std::memcpy(dst + n * rows * inner, src + (n * x.dims[1] + begin) * inner,
                static_cast<size_t>(rows * inner));
  return 0;
}

}  // namespace

const KernelEntry* fusedKernels() {
  static const KernelEntry kTable[] = {{"MgElementwise", kMgElementwise},
                                       {"MgChannelSlice", kMgChannelSlice},
                                       {nullptr, nullptr}};
  return kTable;
}

}  // namespace mgrt
