// MgElementwise: a chain of float32 elementwise ops fused into one pass over memory.
//
// Attributes: `program` (string list), one instruction each, evaluated in order per element:
//     "<Op> <a> [<b>] [alpha=<x>] [beta=<y>]"
// where operands are iK (fused input K, broadcast to the output shape) or tK (the result of
// instruction K). The last instruction's result is the output. Unary ops: every activation of
// the table (runtime/common/mg_acts.h, by name, alpha/beta as there) and Abs Neg Exp Log Sqrt
// Reciprocal Floor Ceil Erf;
// binary ops: Add Sub Mul Div Pow Max Min.
//
// Evaluation runs over blocks of kBlock elements, one instruction at a time over the whole
// block, so each instruction's loop is simple enough for the compiler to vectorize.
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "k_fused_program.h"
#include "mg_kernels.h"

namespace mgrt {
namespace {

constexpr int64_t kBlock = 512;

using namespace fused;

int kMgElementwise(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  std::vector<Instr> code;
  if (int rc = parseProgram(a, nin, code, ctx)) return rc;
  const Tensor& y = out[0];
  const int rank = y.rank;
  int64_t total = y.numel();
  // Per-input strides over the output index space (0 where broadcast).
  std::vector<std::array<int64_t, kMaxRank>> strides(nin);
  std::vector<bool> full(nin);
  for (int i = 0; i < nin; ++i) {
    broadcastStrides(in[i], y, strides[i].data());
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
