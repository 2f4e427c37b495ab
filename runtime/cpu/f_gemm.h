// The SGEMM core of the optimized CPU kernels (f_*.cpp), and the fast kernels' entry points.
//
// sgemm computes C[M,N] = act(alpha * A[M,K] * B[K,N] + biasScale * bias + residual) in one pass:
// A and B are packed into cache-sized panels (A: MR-row panels, B: NR-column panels), a
// register-blocked micro-kernel (AVX-512 / AVX2+FMA / portable vector-extension variants, chosen at
// compile time from the target macros) accumulates a MR x NR tile over one KC slice, and the
// bias / residual / activation epilogue is applied in the tile write-back of the last K slice, so
// the output is written once. B may also be produced by a caller-supplied packing function, which
// is how convolution packs im2col panels straight from the input image without a scratch matrix.
// Work is split into (M block, N block) items run on the thread pool; packing buffers are
// thread-local, so one call is reentrant and any number of handles may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <new>

#include "mg_aligned.h"
#include "mg_kernels.h"
#include "mg_runtime.h"

namespace mgrt {
namespace fast {

// A strided matrix view: element (i, j) is p[i * rs + j * cs]. Zero strides broadcast.
struct MatRef {
  const float* p = nullptr;
  int64_t rs = 0, cs = 0;
};

// Fills dst with rows [k0, k0+kc) x columns [j0, j0+nc) of a virtual K x N matrix B, as
// ceil(nc / NR) consecutive panels: dst[p * kc * NR + k * NR + jj] = B(k0 + k, j0 + p * NR + jj),
// zero for columns at or beyond j0 + nc.
using PackBFn = void (*)(const void* self, float* dst, int64_t k0, int64_t kc, int64_t j0, int64_t nc);

struct GemmSpec {
  int64_t m = 0, n = 0, k = 0;
  MatRef a;                      // M x K
  MatRef b;                      // K x N, unless packB is set
  PackBFn packB = nullptr;       // optional custom B packer (see PackBFn)
  const void* packBSelf = nullptr;
  float* c = nullptr;            // M x N output, row stride ldc, column stride 1
  int64_t ldc = 0;
  float alpha = 1.f;
  MatRef bias;                   // optional addend (broadcast with zero strides), times biasScale
  float biasScale = 1.f;
  const float* res = nullptr;    // optional residual, row stride ldres, column stride 1; may be
                                 // C itself (same pointer and stride: an in-place residual)
  int64_t ldres = 0;
  Epilogue ep;                   // activation applied last
  // Optional operands already in the micro-kernel's layout (prepackA / prepackB), for weights
  // packed once per model handle instead of once per run. `a` / `b` must still describe the
  // same matrices (the matrix-vector paths read them).
  const float* aPacked = nullptr;
  const float* bPacked = nullptr;
};

// Pre-packing: A (M x K) as MR-high panels, B (K x N) as NR-wide panels, zero padded, slice by
// KC slice (the layout sgemm packs per call); sizes in floats.
int64_t prepackedASize(int64_t m, int64_t k);
int64_t prepackedBSize(int64_t k, int64_t n);
void prepackA(const MatRef& A, int64_t m, int64_t k, float* dst);
void prepackB(const MatRef& B, int64_t k, int64_t n, float* dst);
// Whether sgemm(s) takes the packed (blocked) path, i.e. reads aPacked / bPacked at all: matrix-
// vector shapes (N at most 4, B not custom-packed) use dot loops on a and b instead. With M at most
// 4, sgemm reads bPacked when given (a few-rows kernel on the panels) but never aPacked.
inline bool usesPanels(const GemmSpec& s) { return s.packB || s.n > 4; }
// 64-byte aligned scratch that only grows (its contents are not kept when it does); kept
// thread-local by its users: the GEMM's packing buffers, the depthwise kernel's bands.
struct Scratch {
  std::unique_ptr<float[]> mem;
  int64_t cap = 0;
  float* get(int64_t n) {
    if (n > cap) {
      mem.reset(new float[n + 16]);
      cap = n;
    }
    uintptr_t p = reinterpret_cast<uintptr_t>(mem.get());
    return reinterpret_cast<float*>((p + 63) & ~uintptr_t(63));
  }
};

// A pre-packed operand kept in a step's state (mg_runtime.h, StepState), 64-byte aligned like
// the packing scratch (the micro-kernel loads B panels with aligned vector loads), on huge pages
// when large (abi::alignedAllocUninit: a batch-1 fully connected layer streams its whole packed
// matrix every run).
class Prepacked {
 public:
  explicit Prepacked(int64_t floats)
      : mem_(abi::alignedAllocUninit(static_cast<uint64_t>(floats > 0 ? floats : 1) * sizeof(float))) {}
  // Packs with fill(data) into a new buffer; null when memory runs out (the caller then packs
  // per run as without a state).
  template <typename Fill>
  static Prepacked* make(int64_t floats, Fill fill) {
    auto* p = new (std::nothrow) Prepacked(floats);
    if (p && !p->mem_) {
      delete p;
      return nullptr;
    }
    if (p) fill(p->data());
    return p;
  }
  Prepacked(const Prepacked&) = delete;
  Prepacked& operator=(const Prepacked&) = delete;
  float* data() const { return reinterpret_cast<float*>(mem_.get()); }

 private:
  abi::AlignedBytes mem_;
};

// Register tile of the compiled micro-kernel (depends on the target ISA macros).
int gemmMR();
int gemmNR();

// Runs the GEMM, threaded over ctx's pool when pool is non-null.
void sgemm(const GemmSpec& s, ThreadPool* pool);

// Applies the epilogue of s to one output element (row i, column j) holding acc = A*B (no alpha).
inline float epilogueAt(const GemmSpec& s, int64_t i, int64_t j, float acc) {
  float v = acc * s.alpha;
  if (s.bias.p) v += s.biasScale * s.bias.p[i * s.bias.rs + j * s.bias.cs];
  if (s.res) v += s.res[i * s.ldres + j];
  return applyAct(s.ep, v);
}

// True when two tensors' buffers overlap (an in-place residual or Gemm C that the memory planner
// placed in the output: the kernels then read a copy, since partial sums are written to the output
// before the addend is read).
inline bool overlaps(const Tensor& a, const Tensor& b) {
  const char* pa = static_cast<const char*>(a.data);
  const char* pb = static_cast<const char*>(b.data);
  size_t na = a.numel() * dtypeSize(a.dtype), nb = b.numel() * dtypeSize(b.dtype);
  return pa && pb && pa < pb + nb && pb < pa + na;
}

// Calls the reference kernel of op (the fast kernels' answer to cases they do not cover).
int fallbackKernel(const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                   Ctx& ctx);

}  // namespace fast

// Fast kernels (same contract as the reference kernels), registered by f_table.cpp.
int fGemm(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fMatMul(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fConvTranspose(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);  // f_conv_transpose.cpp
int fQLinearConv(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);  // f_qconv.cpp (VNNI)
// f_quant.cpp: QuantizeLinear and DequantizeLinear per tensor.
int fQuantizeLinear(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fDequantizeLinear(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fMgQuantizedAdd(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fMaxPool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fAveragePool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fGlobalAveragePool(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fLSTM(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);  // f_recurrent.cpp
int fGRU(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fRNN(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
// f_elementwise.cpp: the fused chain and the standalone float32 elementwise ops it can run.
int fMgElementwise(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fSum(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fPRelu(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fExpand(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fLRN(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);  // f_lrn.cpp
#define MG_FAST_EW_DECL(NAME) int f##NAME(const Attrs&, const Tensor*, int, Tensor*, int, Ctx&);
MG_FAST_EW_DECL(Add) MG_FAST_EW_DECL(Sub) MG_FAST_EW_DECL(Mul) MG_FAST_EW_DECL(Div)
MG_FAST_EW_DECL(Pow) MG_FAST_EW_DECL(Exp) MG_FAST_EW_DECL(Erf) MG_FAST_EW_DECL(Sqrt)
MG_FAST_EW_DECL(Reciprocal) MG_FAST_EW_DECL(Abs) MG_FAST_EW_DECL(Neg) MG_FAST_EW_DECL(Relu)
MG_FAST_EW_DECL(Sigmoid) MG_FAST_EW_DECL(Tanh)
#undef MG_FAST_EW_DECL
// f_resize.cpp: nearest Resize.
int fResize(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
// f_rows.cpp: Transpose, and Softmax / LogSoftmax over contiguous rows.
int fTranspose(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fSoftmax(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fLogSoftmax(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
// f_attention.cpp: Attention (3-D or 4-D, no past, no softcap) in one pass per query block.
int fAttention(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
// f_norm.cpp: LayerNormalization and RMSNormalization over contiguous trailing axes.
int fLayerNormalization(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);
int fRMSNormalization(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx);

}  // namespace mgrt
