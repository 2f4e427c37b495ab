// recurrent: the time loop of ONNX LSTM, GRU and RNN (mg_kparams.h, RecurrentParams), float32,
// with the semantics of the CPU runtime's runtime/cpu/k_recurrent.cpp (which is checked against
// PyTorch and onnxruntime): every direction, activation (with alpha/beta), clip, peepholes,
// input_forget, linear_before_reset, sequence_lens, initial states, layouts 0 and 1.
//
// A recurrent node is two dependent phases, two launches in order (codegen/gpu/lower_recurrent.cpp):
//   phase 0: gx = X W^T + Wb for every time step and direction: one batched gemmBlock (the
//            time-parallel 2/3 of the work), and R transposed into rt (a mapBlock copy);
//   phase 1: recurrentBlock<HMAX, THREADS>: block (d, b) runs the whole sequence of direction d,
//            batch row b, step by step: gates = gx[t] + R h_{t-1} + Rb, then the cell.
//
//   recurrentBlock<HMAX, THREADS>(p, block, smem)
//     block = d*batch + b; thread t owns the hidden units j = t + u*THREADS (u < HMAX/THREADS),
//     hidden <= HMAX. Shared memory: h_{t-1} and h_t (double buffer) and, for GRU, r . h_{t-1}:
//     3*HMAX floats. The cell state c_j stays in the registers of the thread that owns unit j.
//
//   per step (LSTM, RNN, GRU with linear_before_reset):
//     acc[u][g] = sum_k rt[k][g*hidden + j] * h_{t-1}[k]    (j consecutive across threads:
//                                                             coalesced; h_{t-1}[k] a broadcast)
//     unit j: gates, c_j, h_t[j] -> the other buffer, Y    ; barrier
//   GRU without linear_before_reset needs r . h_{t-1} over every k before Rh applies:
//     acc over z, r; rh[j] = r_j h_{t-1}[j] ; barrier ; acc over Rh with rh; h_t[j] ; barrier
//
// Why it is correct: a step reads h_{t-1} (every unit) and writes only h_t, the other buffer,
// whose last readers were the previous step's, all finished before that step's closing barrier;
// rh is written in a step's first half, read in its second, and rewritten only after the closing
// barrier. Everything a thread reads without a barrier in between (c_j, h_{t-1}[j] for its own j,
// the final h for Y_h) it wrote itself. The loop trip count (the row's length) and the GRU branch
// are the same for every thread of the block, so idle threads (t >= THREADS, units j >= hidden)
// reach every barrier. No grid-wide synchronisation: the sequences of one launch are independent.
// sequence_lens: steps t >= len leave Y zero (this block writes those zeros, Y is not pre-zeroed),
// Y_h/Y_c hold the state after the row's last step, the backward direction starts at len - 1. A
// length outside [0, seq] (the CPU runtime reports an error) is clamped here.
//
// Speed: the recurrence is sequential, so a launch has only dirs*batch blocks; each step reads all
// of R (from L2 after the first step) and costs one or two barriers. The GEMM phase carries the
// input's share of the FLOPs at full width. Accumulation is float (the CPU reference uses double).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_kcommon.cuh"

namespace mgk {

// The recurrent ops' activation functions: table codes (mg_acts.h), as mgrt::applyRnnAct.
__device__ __forceinline__ float rnnAct(int a, float x, float alpha, float beta) {
  return mgrt::acts::applyCode<float>(a, x, alpha, beta);
}

// One of a direction's activation functions, with clip applied to its input.
struct RnnFn {
  int act;
  float alpha, beta, clip;
  MG_DEVICE float operator()(float x) const {
    x = x < -clip ? -clip : (x > clip ? clip : x);  // NaN passes, as in the CPU runtime
    return rnnAct(act, x, alpha, beta);
  }
  MG_DEVICE float noClip(float x) const { return rnnAct(act, x, alpha, beta); }
};

template <int HMAX, int THREADS>
struct RecurrentTile {
  static constexpr int kUnits = HMAX / THREADS;
  static_assert(isPow2(HMAX) && isPow2(THREADS), "HMAX and THREADS are powers of two");
  static_assert(HMAX >= THREADS, "every thread owns at least one unit slot");
};

template <int HMAX, int THREADS>
__host__ __device__ int64_t recurrentBlocks(const RecurrentParams& p) {
  return p.dirs * p.batch;
}

template <int HMAX, int THREADS>
__host__ __device__ constexpr int recurrentSmemBytes() {
  return 3 * HMAX * int(sizeof(float));
}

// acc[u][g] = sum_{k < h} rt[k*gh + (g0 + g)*h + j_u] * v[k] for the units j_u = t + u*THREADS
// below h (others stay 0). rt row k is the k-th column of R: consecutive j, consecutive words.
template <int NG, int U, int THREADS>
MG_DEVICE void rnnMatVec(const float* rt, int64_t gh, int64_t h, int g0, const float* v, int t,
                         float (&acc)[U][NG]) {
  MGK_UNROLL
  for (int u = 0; u < U; ++u)
    MGK_UNROLL
    for (int g = 0; g < NG; ++g) acc[u][g] = 0.f;
  const float* col = rt + g0 * h + t;
  MGK_NO_UNROLL
  for (int64_t k = 0; k < h; ++k, col += gh) {
    const float vk = v[k];
    MGK_UNROLL
    for (int u = 0; u < U; ++u) {
      if (t + u * THREADS < h) {
        MGK_UNROLL
        for (int g = 0; g < NG; ++g) acc[u][g] += col[g * h + u * THREADS] * vk;
      }
    }
  }
}

// Where a step's input gates (W x_t + Wb, G*hidden values) come from: gx of phase 0.
struct RnnGxFromMemory {
  const float* gxd;
  int64_t rowT, rowB, gh;
  // Every thread calls it once per step, before the matvec (it may hold barriers).
  MG_DEVICE const float* step(int64_t /*s*/, int64_t tt, int64_t b) const {
    return gxd + (tt * rowT + b * rowB) * gh;
  }
  // Every thread calls it after the step's closing barrier.
  MG_DEVICE void done(int64_t /*s*/) const {}
};

// The time loop of direction d, batch row b (one block), its step inputs from `in`.
template <int HMAX, int THREADS, typename In>
MG_DEVICE void recurrentRun(const RecurrentParams& p, int64_t d, int64_t b, char* smem, const In& in) {
  constexpr int U = RecurrentTile<HMAX, THREADS>::kUnits;
  float* hs = reinterpret_cast<float*>(smem);  // [2][HMAX]: h_{t-1} and h_t, alternating
  float* rh = hs + 2 * HMAX;                    // GRU: r . h_{t-1}
  const int t = int(threadIdx.x);
  const bool active = t < THREADS;
  const int64_t h = p.hidden;
  const int gates = p.cell == kRnnLstm ? 4 : p.cell == kRnnGru ? 3 : 1;
  const int64_t gh = gates * h;
  const bool backwards = d == 1 || p.reverse != 0;
  int64_t len = p.lens32 ? int64_t(p.lens32[b]) : p.lens64 ? p.lens64[b] : p.seq;
  len = len < 0 ? 0 : (len > p.seq ? p.seq : len);
  const float* rtd = p.rt + d * h * gh;
  const float* rb = p.rb ? p.rb + d * p.rbDir : nullptr;
  const float* peep = p.peep ? p.peep + d * 3 * h : nullptr;
  const int64_t state = d * p.stateD + b * p.stateB;
  const RnnFn f{p.act[d][0], p.actAlpha[d][0], p.actBeta[d][0], p.clip};
  const RnnFn g{p.act[d][1], p.actAlpha[d][1], p.actBeta[d][1], p.clip};
  const RnnFn hf{p.act[d][2], p.actAlpha[d][2], p.actBeta[d][2], p.clip};
  auto bias = [&](int64_t q) { return rb ? rb[q] : 0.f; };

  float c[U];
  float z[U];
  MGK_UNROLL
  for (int u = 0; u < U; ++u) {
    const int64_t j = t + u * THREADS;
    c[u] = 0.f;
    z[u] = 0.f;
    if (active && j < h) {
      hs[j] = p.h0 ? p.h0[state + j] : 0.f;
      c[u] = p.c0 ? p.c0[state + j] : 0.f;
    }
  }
  if (p.y && active)
    for (int64_t tt = len; tt < p.seq; ++tt) {
      float* yt = p.y + tt * p.yT + d * p.yD + b * p.yB;
      MGK_UNROLL
      for (int u = 0; u < U; ++u)
        if (t + u * THREADS < h) yt[t + u * THREADS] = 0.f;
    }
  __syncthreads();

  int cur = 0;
  MGK_NO_UNROLL
  for (int64_t s = 0; s < len; ++s) {
    const int64_t tt = backwards ? len - 1 - s : s;
    const float* x = in.step(s, tt, b);  // W x_t + Wb
    const float* hp = hs + cur * HMAX;
    float* hn = hs + (cur ^ 1) * HMAX;
    float* yt = p.y ? p.y + tt * p.yT + d * p.yD + b * p.yB : nullptr;
    if (p.cell == kRnnLstm) {
      if (active) {
        float acc[U][4];
        rnnMatVec<4, U, THREADS>(rtd, gh, h, 0, hp, t, acc);
        MGK_UNROLL
        for (int u = 0; u < U; ++u) {
          const int64_t j = t + u * THREADS;
          if (j >= h) continue;
          const float pi = peep ? peep[j] : 0.f, po = peep ? peep[h + j] : 0.f;
          const float pf = peep ? peep[2 * h + j] : 0.f;
          const float ig = f(x[j] + acc[u][0] + bias(j) + pi * c[u]);
          const float fg = p.inputForget ? 1.f - ig
                                         : f(x[2 * h + j] + acc[u][2] + bias(2 * h + j) + pf * c[u]);
          const float cg = g(x[3 * h + j] + acc[u][3] + bias(3 * h + j));
          const float cn = fg * c[u] + ig * cg;
          const float og = f(x[h + j] + acc[u][1] + bias(h + j) + po * cn);
          const float hv = og * hf.noClip(cn);
          c[u] = cn;
          hn[j] = hv;
          if (yt) yt[j] = hv;
        }
      }
    } else if (p.cell == kRnnGru && p.linearBeforeReset) {
      if (active) {
        float acc[U][3];
        rnnMatVec<3, U, THREADS>(rtd, gh, h, 0, hp, t, acc);
        MGK_UNROLL
        for (int u = 0; u < U; ++u) {
          const int64_t j = t + u * THREADS;
          if (j >= h) continue;
          const float zg = f(x[j] + acc[u][0] + bias(j));
          const float rg = f(x[h + j] + acc[u][1] + bias(h + j));
          const float hh = g(x[2 * h + j] + rg * (acc[u][2] + bias(2 * h + j)));
          const float hv = (1.f - zg) * hh + zg * hp[j];
          hn[j] = hv;
          if (yt) yt[j] = hv;
        }
      }
    } else if (p.cell == kRnnGru) {
      if (active) {
        float acc[U][2];
        rnnMatVec<2, U, THREADS>(rtd, gh, h, 0, hp, t, acc);
        MGK_UNROLL
        for (int u = 0; u < U; ++u) {
          const int64_t j = t + u * THREADS;
          if (j >= h) continue;
          z[u] = f(x[j] + acc[u][0] + bias(j));
          rh[j] = f(x[h + j] + acc[u][1] + bias(h + j)) * hp[j];
        }
      }
      __syncthreads();  // every r_k h_{t-1}[k] before Rh (r . h_{t-1})
      if (active) {
        float acc[U][1];
        rnnMatVec<1, U, THREADS>(rtd, gh, h, 2, rh, t, acc);
        MGK_UNROLL
        for (int u = 0; u < U; ++u) {
          const int64_t j = t + u * THREADS;
          if (j >= h) continue;
          const float hh = g(x[2 * h + j] + acc[u][0] + bias(2 * h + j));
          const float hv = (1.f - z[u]) * hh + z[u] * hp[j];
          hn[j] = hv;
          if (yt) yt[j] = hv;
        }
      }
    } else {  // RNN
      if (active) {
        float acc[U][1];
        rnnMatVec<1, U, THREADS>(rtd, gh, h, 0, hp, t, acc);
        MGK_UNROLL
        for (int u = 0; u < U; ++u) {
          const int64_t j = t + u * THREADS;
          if (j >= h) continue;
          const float hv = f(x[j] + acc[u][0] + bias(j));
          hn[j] = hv;
          if (yt) yt[j] = hv;
        }
      }
    }
    __syncthreads();  // h_t complete before the next step reads it
    in.done(s);
    cur ^= 1;
  }

  if (!active) return;
  MGK_UNROLL
  for (int u = 0; u < U; ++u) {
    const int64_t j = t + u * THREADS;
    if (j >= h) continue;
    if (p.yh) p.yh[state + j] = hs[cur * HMAX + j];
    if (p.yc) p.yc[state + j] = c[u];
  }
}

template <int HMAX, int THREADS>
MGK_PROGRAM void recurrentBlock(const RecurrentParams& p, int64_t block, char* smem) {
  const int64_t d = block / p.batch, b = block - d * p.batch;
  const int64_t gh = (p.cell == kRnnLstm ? 4 : p.cell == kRnnGru ? 3 : 1) * p.hidden;
  recurrentRun<HMAX, THREADS>(p, d, b, smem, RnnGxFromMemory{p.gx + d * p.gxDir, p.gxRowT, p.gxRowB, gh});
}

// ---- The wavefront of stacked layers (RecurrentWavefrontParams; one co-resident launch,
// mgLaunchCoResident): block l*batch + b runs layer l's sequence of batch row b, so layer l step t
// runs beside layer l-1 step t+1 instead of after all of layer l-1.
//   layer 0:   its gates' input from gx (phase 0's batched projection), as recurrentBlock;
//   layer l>0: waits until flags[l-1][b] >= s+1 (layer l-1 has written Y at this step's time),
//              reads that Y row (mgLoadCoherent: another block wrote it), and computes its own
//              input gates W_l y + Wb_l in shared memory (wt: W_l transposed, a coalesced matvec);
//   every layer below the top, after its step's closing barrier: its writers' fence, a barrier,
//              then one thread publishes flags[l][b] = s+1.
// Why it is correct: the layers run the same cell code as recurrentBlock on the same inputs; layer
// l reads Y_{l-1}[t] only after the flag says it is complete (each writer fenced before the
// barrier that precedes the publish; the reader's wait fences after seeing it), and Y_{l-1} is
// never written again. Waits go only downwards (layer l waits on l-1), so there is no cycle, and
// the launch is co-resident (all layers*batch blocks at once), so the waited-for block runs. The
// flags must be zero when the launch starts (wavefrontResetBlock, a launch before it).
// Shared memory: h_{t-1}, h_t, r . h_{t-1} (3*HMAX floats), the input row (HMAX), the input gates
// (4*HMAX): HMAX bounds every layer's hidden size and input size above layer 0.
template <int HMAX, int THREADS>
__host__ __device__ constexpr int recurrentWavefrontSmemBytes() {
  return 8 * HMAX * int(sizeof(float));
}
template <int HMAX, int THREADS>
__host__ __device__ int64_t recurrentWavefrontBlocks(const RecurrentWavefrontParams& p) {
  return p.layers * p.layer[0].batch;
}
// Zeroes the flags (one block: layers*batch <= kMaxWavefrontLayers * the co-resident limit).
template <int HMAX, int THREADS>
MGK_PROGRAM void wavefrontResetBlock(const RecurrentWavefrontParams& p, int64_t, char*) {
  const int64_t n = p.layers * p.layer[0].batch;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) p.flags[i] = 0u;
}
template <int HMAX, int THREADS>
__host__ __device__ int64_t wavefrontResetBlocks(const RecurrentWavefrontParams&) {
  return 1;
}
template <int HMAX, int THREADS>
__host__ __device__ constexpr int wavefrontResetSmemBytes() {
  return 0;
}

// Publishes flags[l][b] = s+1 after each step (layers below the top).
struct RnnWavePublish {
  unsigned* mine;  // null for the top layer
  MG_DEVICE void publish(int64_t s) const {
    if (!mine) return;
    __threadfence();  // this thread's Y stores, device-wide, before the barrier
    __syncthreads();
    if (threadIdx.x == 0) mgFlagPublish(mine, unsigned(s + 1));
  }
};

struct RnnWaveFromGx {
  RnnGxFromMemory gx;
  RnnWavePublish out;
  MG_DEVICE const float* step(int64_t s, int64_t tt, int64_t b) const { return gx.step(s, tt, b); }
  MG_DEVICE void done(int64_t s) const { out.publish(s); }
};

struct RnnWaveFromBelow {
  const RecurrentParams* below;
  const unsigned* wait;
  const float* wt;
  const float* wb;
  int64_t input, gh;
  float* xs;   // [HMAX] the input row
  float* gxs;  // [4*HMAX] the input gates
  RnnWavePublish out;
  MG_DEVICE const float* step(int64_t s, int64_t tt, int64_t b) const {
    if (threadIdx.x == 0) mgFlagWait(wait, unsigned(s + 1));
    __syncthreads();
    const float* row = below->y + tt * below->yT + b * below->yB;
    for (int64_t k = threadIdx.x; k < input; k += blockDim.x) xs[k] = mgLoadCoherent(row + k);
    __syncthreads();
    for (int64_t q = threadIdx.x; q < gh; q += blockDim.x) {
      float a = wb ? wb[q] : 0.f;
      const float* col = wt + q;
      MGK_NO_UNROLL
      for (int64_t k = 0; k < input; ++k, col += gh) a += *col * xs[k];
      gxs[q] = a;
    }
    __syncthreads();  // every gate's input before the cell reads it
    return gxs;
  }
  MG_DEVICE void done(int64_t s) const { out.publish(s); }
};

template <int HMAX, int THREADS>
MGK_PROGRAM void recurrentWavefrontBlock(const RecurrentWavefrontParams& p, int64_t block, char* smem) {
  const int64_t batch = p.layer[0].batch;
  const int l = int(block / batch);
  const int64_t b = block - l * batch;
  const RecurrentParams& q = p.layer[l];
  const int64_t gh = (q.cell == kRnnLstm ? 4 : q.cell == kRnnGru ? 3 : 1) * q.hidden;
  const RnnWavePublish out{l + 1 < p.layers ? p.flags + l * batch + b : nullptr};
  if (l == 0) {
    recurrentRun<HMAX, THREADS>(q, 0, b, smem, RnnWaveFromGx{RnnGxFromMemory{q.gx, q.gxRowT, q.gxRowB, gh}, out});
  } else {
    float* xs = reinterpret_cast<float*>(smem) + 3 * HMAX;
    recurrentRun<HMAX, THREADS>(q, 0, b, smem,
                                RnnWaveFromBelow{&p.layer[l - 1], p.flags + (l - 1) * batch + b, p.wt[l],
                                                 p.wb[l], p.input[l], gh, xs, xs + HMAX, out});
  }
}

}  // namespace mgk
