// The contract between Magneto's GPU code generator (codegen/gpu) and the kernel library
// (runtime/gpu/kernels/*.cuh): one plain parameter struct per kernel family, filled on the host
// when a package's handle is created, and one *block program* per family.
//
// Block programs. Every kernel is written as
//     template <Config...> MG_DEVICE void xxxBlock(const XxxParams& p, int64_t block, char* smem);
//     int64_t xxxBlocks<Config...>(const XxxParams& p);         // host and device
//     int xxxSmemBytes<Config...>();                             // dynamic shared memory it needs
// i.e. "run tile number `block` of this op", not a __global__ function. The generated NAME.cu wraps
// one block program in a __global__ kernel per step, or several in ONE joint kernel whose blocks
// [b0, b1) run member 0's program, [b1, b2) member 1's, and so on (docs/DESIGN.md). So:
//   - A block program must work for ANY blockDim.x >= its own thread count kThreads (the joint
//     kernel's block has the max over its members): threads with threadIdx.x >= kThreads take no
//     tile work but MUST still reach every __syncthreads the program executes (a barrier counts
//     all threads of the block). Blocks are 1-D.
//   - Shared memory is the dynamic buffer `smem` (the joint kernel gets the max over members);
//     no static __shared__ arrays, so that members of one launch overlay the same bytes.
//   - No grid-wide assumptions: gridDim and blockIdx are the joint kernel's; use `block`.
//   - Shapes are runtime fields here, tile sizes are template parameters (chosen by co-tuning).
//
// Pointers are device pointers. Element strides are in elements, not bytes. Ranks are at most
// kMaxRank; a dimension of extent 1 may have any stride.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include <stdint.h>

// The activation table: in a generated package runtime/common's files sit beside runtime/kernels/;
// in the source tree they are runtime/common (the runtime_common layer).
#if __has_include("../mg_acts.h")
#include "../mg_acts.h"
#else
#include "../../common/mg_acts.h"
#endif

namespace mgk {

constexpr int kMaxRank = 8;
constexpr int kMaxMapInputs = 6;  // BatchNormalization: x, scale, bias, mean, var

// Activations (epilogues, MgElementwise and recurrent functions), numbered as the table of
// runtime/common/mg_acts.h: kAct<Id> is the table's code, with the table's alpha/beta meanings.
#define MG_ACT_DEVICE_ENUM(id, name, code, params, an, ad, bn, bd, flags, f) kAct##id = code,
enum Act : int32_t { MG_ACTS(MG_ACT_DEVICE_ENUM) };
#undef MG_ACT_DEVICE_ENUM

// ---- map: elementwise with numpy broadcasting, copies and strided views -------------------------
// out[o] = F(in_0[i_0], ..., in_{nin-1}[i_{nin-1}]) for every index o of the output shape `dims`;
// i_k = inOffset[k] + sum_d o_d * inStrides[k][d] (0 on broadcast dims, negative for reversed
// slices), and the output element lives at outOffset + sum_d o_d * outStrides[d] (contiguous
// row-major unless the result is a strided view, e.g. a slice of a Concat output).
// Transpose, Slice, Expand, Tile (as rank-doubled dims with stride 0), Concat/Split parts,
// DepthToSpace, Identity are maps with F = copy. F is a functor generated per step:
//   struct F { MG_DEVICE void operator()(const void* const* in, const int64_t* idx,
//                                        void* out, int64_t outIdx) const; };
struct MapParams {
  int64_t n;  // output elements
  int32_t rank;
  int32_t nin;
  int64_t dims[kMaxRank];
  const void* in[kMaxMapInputs];
  int64_t inOffset[kMaxMapInputs];
  int64_t inStrides[kMaxMapInputs][kMaxRank];
  void* out;
  int64_t outOffset;
  int64_t outStrides[kMaxRank];
};

// ---- gemm: Y[b] = act(alpha * A[b] x B[b] + beta * C + residual) --------------------------------
// A element (b, m, k) at A[b*aBatch + m*aM + k*aK] (a transposed A is just other strides), B (b,k,n)
// at B[b*bBatch + k*bK + n*bN], C (m, n) at C[b*cBatch + m*cM + n*cN] (strides 0 broadcast a bias
// row or column; C may be null), Y (b, m, n) at Y[b*yBatch + m*yM + n*yN], residual like Y (or null).
// Covers Gemm, MatMul (batched, broadcast batch via aBatch/bBatch = 0) and Linear layers.
struct GemmParams {
  int64_t batch, M, N, K;
  const float* A;
  int64_t aBatch, aM, aK;
  const float* B;
  int64_t bBatch, bK, bN;
  const float* C;
  int64_t cBatch, cM, cN;
  float alpha, beta;
  float* Y;
  int64_t yBatch, yM, yN;
  const float* residual;
  int32_t act;
  float actAlpha, actBeta;
};

// ---- conv: 2-D convolution (1-D as H = 1), NCHW, groups, as an implicit GEMM -----------------
// y[n, yChannelOffset + g*Kg + k, oh, ow] = act(bias + sum_{c,r,s} x[n, g*Cg + c, ih, iw] *
// w[g*Kg + k, c, r, s] + residual[...]) with ih = oh*strideH - padTop + r*dilationH (zero outside).
// The output may be a channel range [yChannelOffset, yChannelOffset + K) of a tensor with
// yChannels channels (a branch writing into its slice of a Concat: concat elision).
struct ConvParams {
  int64_t N, C, H, W;  // input
  int64_t K, R, S;     // output channels, kernel height and width (weights K x C/group x R x S)
  int64_t group;
  int64_t strideH, strideW, padTop, padLeft, dilationH, dilationW;
  int64_t OH, OW;
  const float* x;
  const float* w;
  const float* bias;      // K or null
  const float* residual;  // shaped like y's own K channels (N x K x OH x OW, contiguous) or null
  float* y;
  int64_t yChannels, yChannelOffset;
  int32_t act;
  float actAlpha, actBeta;
};

// ---- pool: 2-D max / average pooling (1-D as H = 1), NCHW -------------------------------------
struct PoolParams {
  int64_t N, C, H, W, OH, OW;
  int64_t kernelH, kernelW, strideH, strideW, padTop, padLeft, dilationH, dilationW;
  int32_t isMax;
  int32_t countIncludePad;  // average pooling: divide by the full window, pads included
  const float* x;
  float* y;
  int64_t yChannels, yChannelOffset;  // as ConvParams
};

// ---- reduce: out[o] = R over the reduced index space ----------------------------------------
// Input offset of (o, r) = sum_d o_d * outInStrides[d] + sum_e r_e * redStrides[e]; out contiguous.
// Ops: sum, mean, max, min, prod, l1, l2, logsum, logsumexp, sumsquare (ReduceXxx, GlobalAvg/MaxPool).
enum ReduceOp : int32_t {
  kRedSum = 0, kRedMean, kRedMax, kRedMin, kRedProd, kRedL1, kRedL2, kRedLogSum, kRedLogSumExp,
  kRedSumSquare,
};
struct ReduceParams {
  int64_t outN, redN;
  int32_t outRank, redRank;
  int64_t outDims[kMaxRank], outInStrides[kMaxRank];
  int64_t redDims[kMaxRank], redStrides[kMaxRank];
  int32_t op;
  const float* x;
  float* y;
};

// ---- rows: softmax / log-softmax / layer normalization over the rows of x ----------------------
// x viewed as [outer, len, inner]: row r = (o, i) with o = r / inner, i = r % inner holds the len
// elements x[(o * len + j) * inner + i], j < len (inner 0 or 1: contiguous rows, the trailing
// axes; Softmax/LogSoftmax over an inner axis, e.g. YOLOv8's DFL softmax over axis 1 of a rank-4
// tensor, has inner = the product of the dims after the axis). LayerNorm (contiguous rows only): y = (x - mean) / sqrt(var + epsilon) * scale
// + bias, scale/bias of length len (or null).
enum RowOp : int32_t { kRowSoftmax = 0, kRowLogSoftmax = 1, kRowLayerNorm = 2 };
struct RowParams {
  int64_t rows, len;
  int64_t inner;  // stride between a row's elements (0 or 1: contiguous)
  int32_t op;
  float epsilon;
  const float* x;
  const float* scale;
  const float* bias;
  float* y;
};

// ---- recurrent: the time loop of LSTM, GRU and RNN, one (direction, batch row) per block -------
// ONNX semantics as the CPU runtime's runtime/cpu/k_recurrent.cpp (mg_recurrent.cuh says how).
// The input projection is done before, by a GEMM (phase 0 of the node): gx holds, per direction
// d and row r of X ((t, b) at row t*gxRowT + b*gxRowB), the G*hidden values W x + Wb at
// gx[d*gxDir + r*G*hidden + q]. rt is R transposed, [dirs][hidden][G*hidden]. Gate order per
// ONNX: LSTM i, o, f, c; GRU z, r, h. States (d, b, j) live at d*stateD + b*stateB + j, Y's
// (t, d, b, j) at t*yT + d*yD + b*yB + j (layout 0 or 1 is only other strides).
enum RnnCell : int32_t { kRnnLstm = 0, kRnnGru = 1, kRnnPlain = 2 };
struct RecurrentParams {
  int32_t cell;               // RnnCell
  int32_t dirs;               // 1 or 2 (bidirectional: direction 1 runs backwards)
  int32_t reverse;            // direction 0 runs backwards ("reverse")
  int32_t linearBeforeReset;  // GRU
  int32_t inputForget;        // LSTM: f = 1 - i
  int64_t seq, batch, hidden;
  const float* gx;
  int64_t gxDir, gxRowT, gxRowB;
  const float* rt;
  const float* rb;            // Rb: [dirs][G*hidden] at rb + d*rbDir, or null
  int64_t rbDir;
  const float* peep;          // LSTM P: [dirs][3*hidden] (i, o, f), or null
  const int32_t* lens32;      // sequence_lens, int32 or int64, or both null (every row is seq long)
  const int64_t* lens64;
  const float* h0;            // initial_h, initial_c, or null (zeros)
  const float* c0;
  float* y;                   // Y (zero past a row's length), Y_h, Y_c, each or null
  float* yh;
  float* yc;
  int64_t yT, yD, yB;
  int64_t stateD, stateB;
  int32_t act[2][3];          // per direction: f, g, h (LSTM), f, g (GRU), f (RNN): Act codes
  float actAlpha[2][3], actBeta[2][3];
  float clip;                 // activations' inputs are clamped to [-clip, clip]; INFINITY: none
};

// Stacked unidirectional layers run as one wavefront (mg_recurrent.cuh, recurrentWavefrontBlock):
// every layer's RecurrentParams (dirs 1, no sequence_lens; layer 0's gx from its projection, the
// others' gx unused), W^T and Wb of the layers above the first, and the progress flags.
constexpr int kMaxWavefrontLayers = 4;
struct RecurrentWavefrontParams {
  int32_t layers;
  RecurrentParams layer[kMaxWavefrontLayers];
  const float* wt[kMaxWavefrontLayers];  // layers >= 1: W transposed, [input][G*hidden]
  const float* wb[kMaxWavefrontLayers];  // layers >= 1: Wb [G*hidden], or null
  int64_t input[kMaxWavefrontLayers];    // layers >= 1: input size (the hidden size below)
  unsigned* flags;                       // [layers][batch]: steps whose Y is written
};

}  // namespace mgk
