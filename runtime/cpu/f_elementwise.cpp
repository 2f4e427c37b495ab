// Fast MgElementwise (the fused elementwise chain; program format in k_fused.cpp).
//
// What the reference kernel does per element, this one does per run of elements:
//   - the program is parsed once per model handle (kept in the step's StepState with the
//     broadcast plan), not on every run;
//   - broadcasting is planned once: output dims are coalesced where every input steps through
//     them alike (a per-channel [C,1,1] operand of an NCHW output becomes "C runs of H*W equal
//     values"), and each block of the output is filled run by run (memcpy, a fill, or a strided
//     copy) instead of unravelling every element's index with divisions;
//   - an operand that covers the whole output is read in place, and the last instruction writes
//     straight into the output;
//   - exp, tanh, sigmoid, erf and GELU use the vectorizable approximations of f_vmath.h (a few
//     ulp, documented there), so each instruction's loop compiles to SIMD code.
// Ops without a vectorizable form here (Log, Pow with a general exponent, Softplus, Mish, ...)
// call the reference kernel's scalar function, so they compute exactly what it does.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "f_gemm.h"
#include "f_vmath.h"
#include "k_fused_program.h"
#include "mg_kernels.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

using fused::Code;
using fused::Instr;

constexpr int64_t kBlock = 1024;
// Below this many elements a chain runs on the calling thread: waking the pool costs more.
constexpr int64_t kParallelMin = 32768;

enum class Feed { kDirect, kScalar, kRuns };

struct Plan {
  std::vector<Instr> code;
  int64_t total = 0;
  // The coalesced iteration space: rank r, dims d[], and per input its strides over them.
  int r = 0;
  int64_t d[kMaxRank] = {0};
  std::vector<std::array<int64_t, kMaxRank>> strides;
  std::vector<Feed> feed;
  // Row mode: the innermost coalesced dim is long and every operand is either read in place or
  // constant along it (a per-channel [C,1,1] scale over an NCHW tensor): the chain then runs row
  // by row with those operands as scalars, instead of filling a block buffer with their runs.
  bool rowMode = false;
  // What the plan was made for: the inputs' and the output's dims (rebuilt if they change).
  std::vector<int64_t> key;
};

std::vector<int64_t> shapeKey(const Tensor* in, int nin, const Tensor& y) {
  std::vector<int64_t> k;
  for (int i = 0; i <= nin; ++i) {
    const Tensor& t = i < nin ? in[i] : y;
    k.push_back(t.rank);
    k.insert(k.end(), t.dims, t.dims + t.rank);
  }
  return k;
}

// Coalesces the output's dims for all inputs at once: dims d and d+1 merge when every input's
// stride over d equals its stride over d+1 times dim d+1 (contiguous, or both broadcast).
void planBroadcast(Plan& p, const Tensor* in, int nin, const Tensor& y) {
  const int rank = y.rank;
  std::vector<std::array<int64_t, kMaxRank>> full(nin);
  for (int i = 0; i < nin; ++i) broadcastStrides(in[i], y, full[i].data());
  // Walk from the innermost dim outwards, merging into the current coalesced dim.
  int64_t cd[kMaxRank];
  std::vector<std::array<int64_t, kMaxRank>> cs(nin);
  int r = 0;
  for (int dd = rank - 1; dd >= 0; --dd) {
    if (y.dims[dd] == 1) continue;
    bool merge = r > 0;
    for (int i = 0; i < nin && merge; ++i) merge = full[i][dd] == cs[i][r - 1] * cd[r - 1];
    if (merge) {
      cd[r - 1] *= y.dims[dd];
      continue;
    }
    cd[r] = y.dims[dd];
    for (int i = 0; i < nin; ++i) cs[i][r] = full[i][dd];
    ++r;
  }
  if (r == 0) {  // a single element
    cd[0] = 1;
    for (int i = 0; i < nin; ++i) cs[i][0] = 0;
    r = 1;
  }
  // Store outermost first.
  p.r = r;
  p.strides.assign(nin, {});
  for (int k = 0; k < r; ++k) {
    p.d[k] = cd[r - 1 - k];
    for (int i = 0; i < nin; ++i) p.strides[i][k] = cs[i][r - 1 - k];
  }
  p.feed.assign(nin, Feed::kRuns);
  for (int i = 0; i < nin; ++i) {
    bool direct = in[i].numel() == p.total, scalar = true;
    for (int k = 0; k < r; ++k) scalar = scalar && p.strides[i][k] == 0;
    p.feed[i] = direct ? Feed::kDirect : (scalar ? Feed::kScalar : Feed::kRuns);
  }
  p.rowMode = r >= 2 && p.d[r - 1] >= 16;
  for (int i = 0; i < nin; ++i)
    p.rowMode = p.rowMode && (p.feed[i] != Feed::kRuns || p.strides[i][r - 1] == 0);
}

// Copies elements [start, start + n) of input i's broadcast view into dst, run by run along the
// innermost coalesced dim.
void gatherRuns(const Plan& p, int i, const float* src, int64_t start, int64_t n, float* dst) {
  const int r = p.r;
  const auto& st = p.strides[i];
  int64_t idx[kMaxRank];
  int64_t flat = start;
  for (int k = r - 1; k >= 0; --k) {
    idx[k] = flat % p.d[k];
    flat /= p.d[k];
  }
  const int64_t inner = p.d[r - 1], is = st[r - 1];
  int64_t done = 0;
  while (done < n) {
    int64_t off = 0;
    for (int k = 0; k < r; ++k) off += idx[k] * st[k];
    const int64_t len = std::min(n - done, inner - idx[r - 1]);
    float* o = dst + done;
    if (is == 0) {
      const float v = src[off];
      for (int64_t e = 0; e < len; ++e) o[e] = v;
    } else if (is == 1) {
      std::memcpy(o, src + off, sizeof(float) * len);
    } else {
      for (int64_t e = 0; e < len; ++e) o[e] = src[off + e * is];
    }
    done += len;
    idx[r - 1] += len;
    for (int k = r - 1; k > 0 && idx[k] == p.d[k]; --k) idx[k] = 0, ++idx[k - 1];
  }
}

void runUnary(const Instr& ins, const float* x, float* o, int64_t n) {
  switch (ins.code) {
    case Code::kAbs: for (int64_t e = 0; e < n; ++e) o[e] = std::fabs(x[e]); return;
    case Code::kNeg: for (int64_t e = 0; e < n; ++e) o[e] = -x[e]; return;
#if defined(__AVX512F__)
    case Code::kExp: vm::v16::map(x, o, n, [](__m512 v) { return vm::v16::exp(v); }); return;
    case Code::kErf: vm::v16::map(x, o, n, [](__m512 v) { return vm::v16::erf(v); }); return;
#else
    case Code::kExp: for (int64_t e = 0; e < n; ++e) o[e] = vm::vexp(x[e]); return;
    case Code::kErf: for (int64_t e = 0; e < n; ++e) o[e] = vm::verf(x[e]); return;
#endif
    case Code::kSqrt: for (int64_t e = 0; e < n; ++e) o[e] = std::sqrt(x[e]); return;
    case Code::kRecip: for (int64_t e = 0; e < n; ++e) o[e] = 1.f / x[e]; return;
    case Code::kFloor: for (int64_t e = 0; e < n; ++e) o[e] = std::floor(x[e]); return;
    case Code::kCeil: for (int64_t e = 0; e < n; ++e) o[e] = std::ceil(x[e]); return;
    case Code::kAct: break;
    default: for (int64_t e = 0; e < n; ++e) o[e] = fused::unary(ins, x[e]); return;
  }
  vm::actRow(ins.act, x, o, n);
}

void runBinary(Code c, const float* x, const float* z, float* o, int64_t n) {
  switch (c) {
    case Code::kAdd: for (int64_t e = 0; e < n; ++e) o[e] = x[e] + z[e]; return;
    case Code::kSub: for (int64_t e = 0; e < n; ++e) o[e] = x[e] - z[e]; return;
    case Code::kMul: for (int64_t e = 0; e < n; ++e) o[e] = x[e] * z[e]; return;
    case Code::kDiv: for (int64_t e = 0; e < n; ++e) o[e] = x[e] / z[e]; return;
    case Code::kPow: {
      bool square = true;
      for (int64_t e = 0; e < n; ++e) square = square && z[e] == 2.f;
      if (square) {
        for (int64_t e = 0; e < n; ++e) o[e] = x[e] * x[e];
        return;
      }
      break;
    }
    default: break;
  }
  for (int64_t e = 0; e < n; ++e) o[e] = fused::binary(c, x[e], z[e]);
}

// o = x op s (sFirst: s op x) for a scalar operand s.
void runBinaryScalar(Code c, const float* x, float sv, bool sFirst, float* o, int64_t n) {
  switch (c) {
    case Code::kAdd: for (int64_t e = 0; e < n; ++e) o[e] = sFirst ? sv + x[e] : x[e] + sv; return;
    case Code::kSub:
      if (sFirst)
        for (int64_t e = 0; e < n; ++e) o[e] = sv - x[e];
      else
        for (int64_t e = 0; e < n; ++e) o[e] = x[e] - sv;
      return;
    case Code::kMul: for (int64_t e = 0; e < n; ++e) o[e] = sFirst ? sv * x[e] : x[e] * sv; return;
    case Code::kDiv:
      if (sFirst)
        for (int64_t e = 0; e < n; ++e) o[e] = sv / x[e];
      else
        for (int64_t e = 0; e < n; ++e) o[e] = x[e] / sv;
      return;
    case Code::kPow:
      if (!sFirst && sv == 2.f) {
        for (int64_t e = 0; e < n; ++e) o[e] = x[e] * x[e];
        return;
      }
      break;
    default: break;
  }
  for (int64_t e = 0; e < n; ++e) o[e] = sFirst ? fused::binary(c, sv, x[e]) : fused::binary(c, x[e], sv);
}

// The chain in row mode (Plan::rowMode): rows [r0, r1) of the coalesced output, each in blocks of
// at most kBlock; operands constant along a row are scalars (no fill pass), an instruction whose
// operands are all scalars yields a scalar.
void runRows(const Plan& p, const Tensor* in, int nin, float* dst, int64_t r0, int64_t r1) {
  const int ncode = static_cast<int>(p.code.size()), r = p.r;
  const int64_t inner = p.d[r - 1];
  std::unique_ptr<float[]> buf(new float[static_cast<size_t>(ncode) * kBlock]);
  std::vector<const float*> vec(nin + ncode);
  std::vector<float> sc(nin + ncode);
  std::vector<char> isScalar(nin + ncode);
  int64_t idx[kMaxRank];
  for (int64_t row = r0; row < r1; ++row) {
    int64_t flat = row;
    for (int k = r - 2; k >= 0; --k) {
      idx[k] = flat % p.d[k];
      flat /= p.d[k];
    }
    for (int i = 0; i < nin; ++i) {
      isScalar[i] = p.feed[i] != Feed::kDirect;
      if (p.feed[i] == Feed::kScalar) sc[i] = in[i].as<float>()[0];
      if (p.feed[i] == Feed::kRuns) {
        int64_t off = 0;
        for (int k = 0; k + 1 < r; ++k) off += idx[k] * p.strides[i][k];
        sc[i] = in[i].as<float>()[off];
      }
    }
    for (int64_t start = 0; start < inner; start += kBlock) {
      const int64_t n = std::min(kBlock, inner - start), at = row * inner + start;
      for (int i = 0; i < nin; ++i)
        if (!isScalar[i]) vec[i] = in[i].as<float>() + at;
      for (int k = 0; k < ncode; ++k) {
        const Instr& ins = p.code[k];
        const int t = nin + k;
        float* o = k == ncode - 1 ? dst + at : &buf[static_cast<size_t>(k) * kBlock];
        const bool bin = fused::isBinary(ins.code);
        const bool sa = isScalar[ins.a], sb = bin && isScalar[ins.b];
        if (sa && (!bin || sb)) {  // all operands scalar: a scalar result, by the same routines
          isScalar[t] = 1;
          if (bin)
            runBinary(ins.code, &sc[ins.a], &sc[ins.b], &sc[t], 1);
          else
            runUnary(ins, &sc[ins.a], &sc[t], 1);
          if (k == ncode - 1) std::fill(o, o + n, sc[t]);
          continue;
        }
        isScalar[t] = 0;
        if (!bin)
          runUnary(ins, vec[ins.a], o, n);
        else if (sa)
          runBinaryScalar(ins.code, vec[ins.b], sc[ins.a], true, o, n);
        else if (sb)
          runBinaryScalar(ins.code, vec[ins.a], sc[ins.b], false, o, n);
        else
          runBinary(ins.code, vec[ins.a], vec[ins.b], o, n);
        vec[t] = o;
      }
    }
  }
}

// Runs the chain `build` makes (called once per handle and shape) over in -> out[0].
template <typename Build>
int runChain(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
             Ctx& ctx, Build build) {
  const Tensor& y = out[0];
  bool f32 = y.dtype == kF32 && nin > 0;
  for (int i = 0; i < nin; ++i) f32 = f32 && in[i].dtype == kF32 && in[i].present();
  if (!f32) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  Plan local;
  Plan* plan = &local;
  if (ctx.state) plan = ctx.state->getOr<Plan>([] { return new Plan(); });
  std::vector<int64_t> key = shapeKey(in, nin, y);
  if (plan->code.empty() || plan->key != key) {
    plan->code.clear();
    if (int rc = build(plan->code)) return rc;
    plan->total = y.numel();
    planBroadcast(*plan, in, nin, y);
    plan->key = std::move(key);
  }
  const Plan& p = *plan;
  const int64_t total = p.total;
  if (total == 0) return 0;
  const int ncode = static_cast<int>(p.code.size());
  float* dst = y.as<float>();
  if (p.rowMode) {
    const int64_t rows = total / p.d[p.r - 1];
    auto rowsOf = [&](int64_t b, int64_t e) { runRows(p, in, nin, dst, b, e); };
    if (total < kParallelMin || !ctx.pool) rowsOf(0, rows);
    else parallelFor(ctx.pool, rows, std::max<int64_t>(1, kBlock / p.d[p.r - 1]), rowsOf);
    return 0;
  }
  const int64_t blocks = (total + kBlock - 1) / kBlock;
  auto work = [&](int64_t b0, int64_t b1) {
    // Per thread: one block buffer per input that is not read in place, one per temporary.
    std::unique_ptr<float[]> buf(new float[static_cast<size_t>(nin + ncode) * kBlock]);
    std::vector<const float*> slot(nin + ncode);
    for (int i = 0; i < nin; ++i)
      if (p.feed[i] == Feed::kScalar) {
        float* s = &buf[static_cast<size_t>(i) * kBlock];
        std::fill(s, s + kBlock, in[i].as<float>()[0]);
        slot[i] = s;
      }
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t start = blk * kBlock, n = std::min(kBlock, total - start);
      for (int i = 0; i < nin; ++i) {
        if (p.feed[i] == Feed::kDirect) slot[i] = in[i].as<float>() + start;
        if (p.feed[i] != Feed::kRuns) continue;
        float* s = &buf[static_cast<size_t>(i) * kBlock];
        gatherRuns(p, i, in[i].as<float>(), start, n, s);
        slot[i] = s;
      }
      for (int k = 0; k < ncode; ++k) {
        const Instr& ins = p.code[k];
        float* o = k == ncode - 1 ? dst + start : &buf[static_cast<size_t>(nin + k) * kBlock];
        if (fused::isBinary(ins.code)) runBinary(ins.code, slot[ins.a], slot[ins.b], o, n);
        else runUnary(ins, slot[ins.a], o, n);
        slot[nin + k] = o;
      }
    }
  };
  if (total < kParallelMin || !ctx.pool) work(0, blocks);
  else parallelFor(ctx.pool, blocks, 4, work);
  return 0;
}

// A standalone ONNX op of one instruction on float32 operands (other dtypes: the reference).
template <Code C>
int singleOp(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin != (fused::isBinary(C) ? 2 : 1)) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  return runChain(op, a, in, nin, out, nout, ctx, [&](std::vector<Instr>& code) {
    Instr ins;
    ins.code = C;
    ins.a = 0;
    ins.b = fused::isBinary(C) ? 1 : -1;
    code.push_back(ins);
    return 0;
  });
}

// A standalone activation without attributes (Relu, Sigmoid, Tanh).
template <Act A>
int singleAct(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin != 1) return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  return runChain(op, a, in, nin, out, nout, ctx, [&](std::vector<Instr>& code) {
    Instr ins;
    ins.code = Code::kAct;
    ins.act.act = A;
    ins.a = 0;
    code.push_back(ins);
    return 0;
  });
}

}  // namespace

// PRelu(x, slope) = x where x >= 0, slope * x elsewhere (slope broadcast to x): as the chain
// r = Relu(x); y = r + slope * (x - r), exact (x - r is x or 0, r + 0 and 0 + s*x round to
// themselves; only the sign of a zero result can differ from the reference's select).
int fPRelu(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin != 2) return fast::fallbackKernel("PRelu", a, in, nin, out, nout, ctx);
  return runChain("PRelu", a, in, nin, out, nout, ctx, [&](std::vector<Instr>& code) {
    Instr relu;
    relu.code = Code::kAct;
    relu.act.act = Act::kRelu;
    relu.a = 0;
    Instr neg, scaled, sum;
    neg.code = Code::kSub, neg.a = 0, neg.b = nin;              // t1 = x - r
    scaled.code = Code::kMul, scaled.a = 1, scaled.b = nin + 1;  // t2 = slope * t1
    sum.code = Code::kAdd, sum.a = nin, sum.b = nin + 2;         // y = r + t2
    code = {relu, neg, scaled, sum};
    return 0;
  });
}

// Expand(x, shape): x broadcast to the output's shape (which the compiler inferred from `shape`),
// as a one-instruction chain (an identity) through the broadcast planner: runs of equal values
// become fills and copies instead of an index computation per element.
int fExpand(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin != 2 || nout != 1) return fast::fallbackKernel("Expand", a, in, nin, out, nout, ctx);
  return runChain("Expand", a, in, 1, out, nout, ctx, [&](std::vector<Instr>& code) {
    Instr copy;
    copy.code = Code::kAct;  // act kNone: the identity
    copy.a = 0;
    code.push_back(copy);
    return 0;
  });
}

int fMgElementwise(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return runChain("MgElementwise", a, in, nin, out, nout, ctx,
                  [&](std::vector<Instr>& code) { return fused::parseProgram(a, nin, code, ctx); });
}

// Sum of float32 operands: Add folded left to right, as the reference kernel folds.
int fSum(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (nin < 2) return fast::fallbackKernel("Sum", a, in, nin, out, nout, ctx);
  return runChain("Sum", a, in, nin, out, nout, ctx, [&](std::vector<Instr>& code) {
    for (int k = 1; k < nin; ++k) {
      Instr ins;
      ins.code = Code::kAdd;
      ins.a = k == 1 ? 0 : nin + k - 2;
      ins.b = k;
      code.push_back(ins);
    }
    return 0;
  });
}

#define MG_FAST_EW(NAME, CALL) \
  int f##NAME(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) { \
    return CALL(#NAME, a, in, nin, out, nout, ctx);                                          \
  }
MG_FAST_EW(Add, singleOp<Code::kAdd>)
MG_FAST_EW(Sub, singleOp<Code::kSub>)
MG_FAST_EW(Mul, singleOp<Code::kMul>)
MG_FAST_EW(Div, singleOp<Code::kDiv>)
MG_FAST_EW(Pow, singleOp<Code::kPow>)
MG_FAST_EW(Exp, singleOp<Code::kExp>)
MG_FAST_EW(Erf, singleOp<Code::kErf>)
MG_FAST_EW(Sqrt, singleOp<Code::kSqrt>)
MG_FAST_EW(Reciprocal, singleOp<Code::kRecip>)
MG_FAST_EW(Abs, singleOp<Code::kAbs>)
MG_FAST_EW(Neg, singleOp<Code::kNeg>)
MG_FAST_EW(Relu, singleAct<Act::kRelu>)
MG_FAST_EW(Sigmoid, singleAct<Act::kSigmoid>)
MG_FAST_EW(Tanh, singleAct<Act::kTanh>)
#undef MG_FAST_EW

}  // namespace mgrt
