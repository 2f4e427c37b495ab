// Fast LSTM / GRU / RNN (float32): the reference kernels' equations (k_recurrent.cpp) over GEMMs.
//   1. The input projection of every time step at once, per direction:
//        GX[rows, G*h] = X[rows, isz] * W_d^T + Wb_d        (one sgemm, threaded; rows = seq*batch)
//   2. The recurrence, per direction and step, every batch row at once: GR = H R_d^T + Rb_d (on
//      R pre-packed once per handle as GEMM panels when it is constant, up to 4 rows by sgemm's
//      few-rows kernel, threaded over fixed panel ranges; otherwise dot products of R's rows for up
//      to 4 rows, R transposed once per call for more), then the gates element by element
//      (GRU without linear_before_reset needs r . H first, so its third gate's product comes after
//      the first two). A row whose sequence_lens has ended keeps its state. With the default
//      activations (sigmoid / tanh) the gates run in float through f_vmath.h, vectorized; other
//      activations in double like the reference.
// Operands and attributes are parsed by the reference's parser (k_recurrent.h), so both kernels
// accept and refuse the same. float64 goes to the reference kernel.
//
// Pipelined (a layer of a wavefront region, attribute `wavefront_stage` > 0 set by the CPU code
// generator, with Ctx::upstream the layer below's progress): X is the layer below's Y, still being
// written. Step 1's single GEMM becomes one GEMM per chunk of kWavefrontChunkRows rows (whole time
// steps), each run once the layer below has published those steps (acquire); every layer of a
// region publishes its completed steps (release) through Ctx::progress. Each value is computed by
// the same code as unpipelined; only when it is computed changes.
#include <atomic>
#include <thread>
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "f_gemm.h"
#include "f_vmath.h"
#include "k_recurrent.h"
#include "mg_kernels.h"
#include "mg_threadpool.h"

namespace mgrt {
namespace {

// out[b, 0..n) = vecs[b] (k floats, rows `ld` apart) times the rows [0, n) of M (row-major, k
// columns), plus bias, for every b < m. With `packed` (M's rows [0, n) pre-packed as GEMM B
// panels, see RecurrentState) sgemm reads the panels, for any m. Without: M's rows are read as
// GEMM columns, for m <= 4 by sgemm's dot-product path (each chunk of rows is read from memory
// once and reused from cache by the other rows); a larger m reads Mt, M transposed.
void rowsTimesMatrix(const float* vecs, int64_t m, int64_t ld, const float* M, const float* Mt,
                     int64_t ldMt, int64_t n, int64_t k, const float* bias, float* out, int64_t ldo,
                     ThreadPool* pool, const float* packed = nullptr) {
  fast::GemmSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a = fast::MatRef{vecs, ld, 1};
  s.b = Mt ? fast::MatRef{Mt, ldMt, 1} : fast::MatRef{M, 1, k};
  if (packed && fast::usesPanels(s)) s.bPacked = packed;
  s.c = out;
  s.ldc = ldo;
  if (bias) s.bias = fast::MatRef{bias, 0, 1};
  fast::sgemm(s, pool);
}

// Gate activations in float through f_vmath.h (vectorized) when they are the ONNX defaults:
// sigmoid for the gates, tanh for the cell and hidden state; otherwise the double-precision path.
bool defaultActs(RnnCell cell, const RnnActFn* fa) {
  if (fa[0].act != acts::kSigmoid && cell != RnnCell::kRnn) return false;
  if (cell == RnnCell::kRnn) return fa[0].act == acts::kTanh;
  if (fa[1].act != acts::kTanh) return false;
  return cell == RnnCell::kGru || fa[2].act == acts::kTanh;
}

inline float clipf(float v, float c) { return v < -c ? -c : (v > c ? c : v); }

// Rows of X per input-projection GEMM of a pipelined layer: enough time steps for the GEMM to
// reuse each W panel over several rows, few enough that the layer starts soon after the one below.
constexpr int64_t kWavefrontChunkRows = 16;

// A bidirectional layer runs its two time loops side by side on a pool of 4 or more threads only
// when one step of one direction (batch x gates*hidden x hidden multiply-adds) is at most this:
// larger steps are split over the whole pool instead, one direction after the other.
constexpr int64_t kConcurrentDirsMaxStepMacs = int64_t{1} << 18;

inline void recurrentRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits until the layer below has completed `steps` steps (or returned): spins briefly, then
// yields the core (on a machine with fewer cores than layers the producer needs it).
void waitForUpstream(const std::atomic<int64_t>* up, int64_t steps) {
  for (int spins = 0; up->load(std::memory_order_acquire) < steps;)
    if (++spins < 4000) recurrentRelax(); else std::this_thread::yield();
}

// One LSTM step of one batch row in float: gates from the input projection g and the recurrent
// product r (i, o, f, c order), peepholes p (or null), state C and H updated in place.
void lstmRowF(const float* __restrict g, const float* __restrict r, const float* __restrict p, float clip,
              bool inputForget, int64_t h, float* __restrict C, float* __restrict H) {
  if (!p && !inputForget) {  // the common cell: a loop without conditional loads, vectorized
    for (int64_t j = 0; j < h; ++j) {
      const float ig = vm::vsigmoid(clipf(g[j] + r[j], clip));
      const float fg = vm::vsigmoid(clipf(g[2 * h + j] + r[2 * h + j], clip));
      const float cg = vm::vtanh(clipf(g[3 * h + j] + r[3 * h + j], clip));
      const float cn = fg * C[j] + ig * cg;
      const float og = vm::vsigmoid(clipf(g[h + j] + r[h + j], clip));
      C[j] = cn;
      H[j] = og * vm::vtanh(cn);
    }
    return;
  }
  for (int64_t j = 0; j < h; ++j) {
    const float pi = p ? p[j] : 0.f, po = p ? p[h + j] : 0.f, pf = p ? p[2 * h + j] : 0.f;
    const float ig = vm::vsigmoid(clipf(g[j] + r[j] + pi * C[j], clip));
    float fg = vm::vsigmoid(clipf(g[2 * h + j] + r[2 * h + j] + pf * C[j], clip));
    fg = inputForget ? 1.f - ig : fg;
    const float cg = vm::vtanh(clipf(g[3 * h + j] + r[3 * h + j], clip));
    const float cn = fg * C[j] + ig * cg;
    const float og = vm::vsigmoid(clipf(g[h + j] + r[h + j] + po * cn, clip));
    C[j] = cn;
    H[j] = og * vm::vtanh(cn);
  }
}

// Weights packed once per model handle (when W and R are constant operands), per direction: W for
// the input projection (GEMM B = W^T), and R's gate rows for the recurrent product (first: the
// rows multiplied by H; second: GRU's third gate, by r.H), read as panels whatever the batch
// (sgemm's few-rows kernel streams them for up to 4 batch rows).
// Without them every run packed W (and transposed R) again: for a 650-unit LSTM, 13.6 MB a run.
struct RecurrentState {
  std::vector<std::unique_ptr<fast::Prepacked>> w, rFirst, rSecond;
};

std::unique_ptr<fast::Prepacked> packB(const float* m, int64_t k, int64_t n) {
  // B(kk, j) = m[j * k + kk]: the GEMM B that multiplies by the transpose of row-major m[n, k].
  return std::unique_ptr<fast::Prepacked>(fast::Prepacked::make(
      fast::prepackedBSize(k, n), [&](float* d) { fast::prepackB(fast::MatRef{m, 1, k}, k, n, d); }));
}

int fastRecurrent(RnnCell cell, const char* op, const Attrs& a, const Tensor* in, int nin, Tensor* out,
                  int nout, Ctx& ctx) {
  if (nin < 1 || !in[0].present() || in[0].dtype != kF32)
    return fast::fallbackKernel(op, a, in, nin, out, nout, ctx);
  RecurrentProblem<float> P;
  if (int rc = parseRecurrent(cell, a, in, nin, out, nout, ctx, &P)) return rc;
  const int64_t nd = P.nd, h = P.h, gh = P.gh, isz = P.isz, nb = P.batch, rows = P.seq * nb;
  int64_t maxLen = 0;
  for (int64_t len : P.lens) maxLen = std::max(maxLen, len);
  // Per direction: the input projection gx, the recurrent product gr, state H and C, scratch.
  struct DirScratch {
    std::vector<float> gx, gr, H, C, rH, z, rg, rt;  // rt: R_d transposed (more than 4 rows, no state)
  };

  const bool lbr = P.linearBeforeReset;
  const int64_t firstRows = cell == RnnCell::kGru && !lbr ? 2 * h : gh;  // gate rows of R H per step
  RecurrentState* packed = nullptr;
  if (ctx.constant(1) && ctx.constant(2)) {
    packed = ctx.state->getOr<RecurrentState>([&] {
      auto* st = new RecurrentState;
      for (int64_t d = 0; d < nd; ++d) {
        if (gh > 4) st->w.push_back(packB(P.w + d * gh * isz, isz, gh));
        const float* rd = P.r + d * gh * h;
        st->rFirst.push_back(packB(rd, h, firstRows));
        if (firstRows < gh) st->rSecond.push_back(packB(rd + 2 * h * h, h, h));
      }
      return st;
    });
  }
  auto packedAt = [](const std::vector<std::unique_ptr<fast::Prepacked>>& v, int64_t d) -> const float* {
    return d < static_cast<int64_t>(v.size()) && v[d] ? v[d]->data() : nullptr;
  };
  // Pipelined: the layer below (ctx.upstream) is still writing X. Step by step when this layer is
  // unidirectional and every row runs all steps (what the wavefront pass admits); otherwise wait
  // for the layer below to finish.
  const std::atomic<int64_t>* upstream = a.i("wavefront_stage", 0) > 0 ? ctx.upstream : nullptr;
  bool pipelined = upstream && nd == 1 && rows > 0;
  for (int64_t len : P.lens) pipelined = pipelined && len == P.seq;
  if (upstream && !pipelined) waitForUpstream(upstream, Ctx::kProgressDone);
  const int64_t chunkSteps = std::max<int64_t>(1, std::min<int64_t>(P.seq, kWavefrontChunkRows / std::max<int64_t>(nb, 1)));
  int64_t projectedSteps = 0;  // pipelined: steps whose input projection is in gx
  // Both directions of a bidirectional layer are independent: with two or more threads their
  // projections run first (each GEMM split over the pool), then their time loops side by side,
  // each on one thread (no fork/join per step), when the pool has 2 or 3 threads or a step is
  // small enough that splitting it over more would not pay (kConcurrentDirsMaxStepMacs); the cost
  // model prices the same (src/target/cost_model.cpp, cpuJoint). Each value is computed by the
  // same code either way.
  const bool concurrentDirs = nd == 2 && !upstream && ctx.pool && ctx.pool->threads() >= 2 &&
                              (ctx.pool->threads() <= 3 || nb * gh * h <= kConcurrentDirsMaxStepMacs);
  std::vector<DirScratch> scratch(concurrentDirs ? 2 : 1);
  for (DirScratch& S : scratch) {
    S.gx.resize(static_cast<size_t>(rows * gh));
    S.gr.resize(static_cast<size_t>(nb * gh));
    for (auto* v : {&S.H, &S.C, &S.rH, &S.z, &S.rg}) v->resize(static_cast<size_t>(nb * h));
  }
  auto runDirection = [&](int64_t d, DirScratch& S, ThreadPool* pool, bool doProject, bool doRecur) {
    std::vector<float>&gx = S.gx, &gr = S.gr, &H = S.H, &C = S.C, &rH = S.rH, &z = S.z, &rg = S.rg, &rt = S.rt;
    const float* wd = P.w + d * gh * isz;
    const float* rd = P.r + d * gh * h;
    const float* wb = P.bias ? P.bias + d * 2 * gh : nullptr;
    const float* rb = P.bias ? P.bias + d * 2 * gh + gh : nullptr;
    const float* pd = P.peep ? P.peep + d * 3 * h : nullptr;
    const RnnActFn* fa = &P.acts[d * P.perDir];
    const bool fastActs = defaultActs(cell, fa);
    const float clipF = static_cast<float>(P.clip);
    // GX rows [row0, row0 + m) = X rows times W_d^T + Wb_d.
    auto project = [&](int64_t row0, int64_t m) {
      fast::GemmSpec s;
      s.m = m;
      s.n = gh;
      s.k = isz;
      s.a = fast::MatRef{P.x + row0 * isz, isz, 1};
      s.b = fast::MatRef{wd, 1, isz};
      s.c = gx.data() + row0 * gh;
      s.ldc = gh;
      if (wb) s.bias = fast::MatRef{wb, 0, 1};
      if (packed && fast::usesPanels(s)) s.bPacked = packedAt(packed->w, d);
      fast::sgemm(s, pool);
    };
    // Pipelined: the projection of steps [s0, s1) (times [t0, t1)), once the layer below has them.
    auto projectSteps = [&](int64_t s0, int64_t s1) {
      waitForUpstream(upstream, s1);
      const int64_t t0 = P.reverse(d) ? P.seq - s1 : s0, t1 = P.reverse(d) ? P.seq - s0 : s1;
      if (!P.layout1) {
        project(t0 * nb, (t1 - t0) * nb);
      } else {
        for (int64_t b = 0; b < nb; ++b) project(b * P.seq + t0, t1 - t0);
      }
    };
    if (doProject && rows > 0 && !pipelined) project(0, rows);
    if (!doRecur) return;
    const float* rFirst = packed ? packedAt(packed->rFirst, d) : nullptr;
    const float* rSecond = packed ? packedAt(packed->rSecond, d) : nullptr;
    const float* rtd = nullptr;
    if (nb > 4 && !(rFirst && (firstRows == gh || rSecond))) {
      rt.resize(static_cast<size_t>(gh * h));
      for (int64_t q = 0; q < gh; ++q)
        for (int64_t k = 0; k < h; ++k) rt[k * gh + q] = rd[q * h + k];
      rtd = rt.data();
    }
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t j = 0; j < h; ++j) {
        H[b * h + j] = P.h0 ? P.h0[P.stateIdx(d, b) + j] : 0.f;
        C[b * h + j] = P.c0 ? P.c0[P.stateIdx(d, b) + j] : 0.f;
      }
    // Step st of every batch row at once; a row whose sequence has ended keeps its state.
    for (int64_t st = 0; st < maxLen; ++st) {
      if (pipelined && st >= projectedSteps) {
        const int64_t s1 = std::min(P.seq, st + chunkSteps);
        projectSteps(st, s1);
        projectedSteps = s1;
      }
      rowsTimesMatrix(H.data(), nb, h, rd, rtd, gh, firstRows, h, rb, gr.data(), gh, pool, rFirst);
      if (cell == RnnCell::kGru) {
        for (int64_t b = 0; b < nb; ++b) {
          if (st >= P.lens[b]) continue;
          const int64_t t = P.reverse(d) ? P.lens[b] - 1 - st : st;
          const float* g = gx.data() + P.xRow(t, b) * gh;
          const float* grb = gr.data() + b * gh;
          if (fastActs) {
            float* zb = z.data() + b * h;
            float* rgb = rg.data() + b * h;
            float* rHb = rH.data() + b * h;
            const float* Hb = H.data() + b * h;
            for (int64_t k = 0; k < h; ++k) {
              zb[k] = vm::vsigmoid(clipf(g[k] + grb[k], clipF));
              rgb[k] = vm::vsigmoid(clipf(g[h + k] + grb[h + k], clipF));
              rHb[k] = rgb[k] * Hb[k];
            }
            continue;
          }
          for (int64_t k = 0; k < h; ++k) {
            z[b * h + k] = static_cast<float>(applyRnnAct(fa[0], P.clipv(double(g[k]) + grb[k])));
            rg[b * h + k] = static_cast<float>(applyRnnAct(fa[0], P.clipv(double(g[h + k]) + grb[h + k])));
            rH[b * h + k] = rg[b * h + k] * H[b * h + k];
          }
        }
        if (!lbr)  // h~ = g(Wh x + Rh (r . H) + Rbh + Wbh)
          rowsTimesMatrix(rH.data(), nb, h, rd + 2 * h * h, rtd ? rtd + 2 * h : nullptr, gh, h, h,
                          rb ? rb + 2 * h : nullptr, gr.data() + 2 * h, gh, pool, rSecond);
      }
      for (int64_t b = 0; b < nb; ++b) {
        if (st >= P.lens[b]) continue;
        const int64_t t = P.reverse(d) ? P.lens[b] - 1 - st : st;
        const float* g = gx.data() + P.xRow(t, b) * gh;
        const float* grb = gr.data() + b * gh;
        float* Hb = H.data() + b * h;
        float* Cb = C.data() + b * h;
        if (cell == RnnCell::kLstm && fastActs) {
          lstmRowF(g, grb, pd, clipF, P.inputForget, h, Cb, Hb);
        } else if (cell == RnnCell::kLstm) {
          for (int64_t j = 0; j < h; ++j) {
            double pi = pd ? pd[j] : 0.0, po = pd ? pd[h + j] : 0.0, pf = pd ? pd[2 * h + j] : 0.0;
            double ig = applyRnnAct(fa[0], P.clipv(double(g[j]) + grb[j] + pi * Cb[j]));
            double fg = applyRnnAct(fa[0], P.clipv(double(g[2 * h + j]) + grb[2 * h + j] + pf * Cb[j]));
            if (P.inputForget) fg = 1.0 - ig;
            double cg = applyRnnAct(fa[1], P.clipv(double(g[3 * h + j]) + grb[3 * h + j]));
            double cn = fg * Cb[j] + ig * cg;
            double og = applyRnnAct(fa[0], P.clipv(double(g[h + j]) + grb[h + j] + po * cn));
            Cb[j] = static_cast<float>(cn);
            Hb[j] = static_cast<float>(og * applyRnnAct(fa[2], cn));
          }
        } else if (cell == RnnCell::kRnn && fastActs) {
          for (int64_t j = 0; j < h; ++j) Hb[j] = vm::vtanh(clipf(g[j] + grb[j], clipF));
        } else if (cell == RnnCell::kGru && fastActs) {
          const float* zb = z.data() + b * h;
          const float* rgb = rg.data() + b * h;
          for (int64_t j = 0; j < h; ++j) {
            const float pre = lbr ? g[2 * h + j] + rgb[j] * grb[2 * h + j] : g[2 * h + j] + grb[2 * h + j];
            const float hh = vm::vtanh(clipf(pre, clipF));
            Hb[j] = (1.f - zb[j]) * hh + zb[j] * Hb[j];
          }
        } else if (cell == RnnCell::kRnn) {
          for (int64_t j = 0; j < h; ++j)
            Hb[j] = static_cast<float>(applyRnnAct(fa[0], P.clipv(double(g[j]) + grb[j])));
        } else {
          for (int64_t j = 0; j < h; ++j) {
            double pre = lbr ? double(g[2 * h + j]) + double(rg[b * h + j]) * grb[2 * h + j]
                             : double(g[2 * h + j]) + grb[2 * h + j];
            double hh = applyRnnAct(fa[1], P.clipv(pre));
            Hb[j] = static_cast<float>((1.0 - z[b * h + j]) * hh + z[b * h + j] * double(Hb[j]));
          }
        }
        if (P.Y) std::copy(Hb, Hb + h, P.Y + P.yIdx(t, d, b));
      }
      // Step st of every row is in Y: the layer above may read it (unidirectional layers only;
      // a bidirectional layer's time t is complete only after its backward direction).
      if (ctx.progress && nd == 1) ctx.progress->store(st + 1, std::memory_order_release);
    }
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t j = 0; j < h; ++j) {
        if (P.Yh) P.Yh[P.stateIdx(d, b) + j] = H[b * h + j];
        if (P.Yc) P.Yc[P.stateIdx(d, b) + j] = C[b * h + j];
      }
  };
  if (concurrentDirs) {
    for (int64_t d = 0; d < nd; ++d) runDirection(d, scratch[d], ctx.pool, true, false);
    ctx.pool->runInOrder(nd, [&](int64_t begin, int64_t end) {
      for (int64_t d = begin; d < end; ++d) runDirection(d, scratch[d], nullptr, false, true);
    });
  } else {
    for (int64_t d = 0; d < nd; ++d) runDirection(d, scratch[0], ctx.pool, true, true);
  }
  return 0;
}

}  // namespace

int fLSTM(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return fastRecurrent(RnnCell::kLstm, "LSTM", a, in, nin, out, nout, ctx);
}
int fGRU(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return fastRecurrent(RnnCell::kGru, "GRU", a, in, nin, out, nout, ctx);
}
int fRNN(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  return fastRecurrent(RnnCell::kRnn, "RNN", a, in, nin, out, nout, ctx);
}

}  // namespace mgrt
