// Reference kernels: LSTM, GRU and RNN with ONNX's full semantics, written as the equations of the
// ONNX operator documents (one batch row and one time step at a time, double accumulation): the
// numeric oracle, not fast.
//   LSTM (gates i, o, f, c):  i = f(Wi x + Ri H + Pi . C + Wbi + Rbi)   f likewise with Pf
//                             c~ = g(Wc x + Rc H + Wbc + Rbc);  C' = f . C + i . c~
//                             o = f(Wo x + Ro H + Po . C' + Wbo + Rbo);  H' = o . h(C')
//                             input_forget: f = 1 - i
//   GRU (gates z, r, h):      z, r = f(W x + R H + Wb + Rb)
//                             h~ = g(Wh x + Rh (r . H) + Rbh + Wbh)      (linear_before_reset = 0)
//                             h~ = g(Wh x + r . (Rh H + Rbh) + Wbh)      (linear_before_reset = 1)
//                             H' = (1 - z) . h~ + z . H
//   RNN:                      H' = f(Wi x + Ri H + Wbi + Rbi)
// clip bounds every activation's input to [-clip, clip]. With sequence_lens, steps past a batch
// row's length leave Y zero and Y_h/Y_c hold the state after its last step; the reverse direction
// runs from the row's last valid step back to 0.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "k_recurrent.h"
#include "k_recurrent_act.h"
#include "mg_kernels.h"

namespace mgrt {
namespace {

using Cell = RnnCell;

struct CellInfo {
  const char* op;
  int gates;
  std::vector<std::string> defaultActs;
};

CellInfo infoOf(Cell c) {
  switch (c) {
    case Cell::kLstm: return {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh"}};
    case Cell::kGru: return {"GRU", 3, {"Sigmoid", "Tanh"}};
    case Cell::kRnn: break;
  }
  return {"RNN", 1, {"Tanh"}};
}

bool present(const Tensor* in, int nin, int i) { return i < nin && in[i].present(); }

bool hasDims(const Tensor& t, std::initializer_list<int64_t> d) {
  if (t.rank != static_cast<int>(d.size())) return false;
  int i = 0;
  for (int64_t v : d)
    if (t.dims[i++] != v) return false;
  return true;
}

}  // namespace

template <typename T>
int parseRecurrent(Cell cell, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                   Ctx& ctx, RecurrentProblem<T>* pp) {
  RecurrentProblem<T>& P = *pp;
  CellInfo info = infoOf(cell);
  const char* op = info.op;
  const int G = info.gates;
  P.cell = cell;
  P.op = op;
  if (nin < 3 || !in[0].present() || !in[1].present() || !in[2].present())
    return ctx.fail("%s: X, W and R are required", op);
  const Tensor &X = in[0], &W = in[1], &R = in[2];
  P.dir = a.s("direction", "forward");
  const std::string& dir = P.dir;
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return ctx.fail("%s: unknown direction '%s'", op, dir.c_str());
  const int64_t nd = P.nd = dir == "bidirectional" ? 2 : 1;
  const bool layout1 = P.layout1 = a.i("layout", 0) == 1;
  if (X.rank != 3 || R.rank != 3) return ctx.fail("%s: X and R must be rank 3", op);
  const int64_t seq = P.seq = layout1 ? X.dims[1] : X.dims[0];
  const int64_t batch = P.batch = layout1 ? X.dims[0] : X.dims[1];
  const int64_t isz = P.isz = X.dims[2], h = P.h = a.i("hidden_size", R.dims[2]), gh = P.gh = G * h;
  if (h <= 0 || !hasDims(W, {nd, gh, isz}) || !hasDims(R, {nd, gh, h}) || W.dtype != X.dtype ||
      R.dtype != X.dtype)
    return ctx.fail("%s: W must be [%lld,%lld,%lld] and R [%lld,%lld,%lld] of X's type", op,
                    (long long)nd, (long long)gh, (long long)isz, (long long)nd, (long long)gh,
                    (long long)h);
  if (present(in, nin, 3)) {
    if (!hasDims(in[3], {nd, 2 * gh}) || in[3].dtype != X.dtype)
      return ctx.fail("%s: B must be [%lld,%lld]", op, (long long)nd, (long long)(2 * gh));
    P.bias = in[3].as<T>();
  }
  P.lens.assign(static_cast<size_t>(batch), seq);
  if (present(in, nin, 4)) {
    const Tensor& L = in[4];
    if (!hasDims(L, {batch}) || (L.dtype != kI32 && L.dtype != kI64))
      return ctx.fail("%s: sequence_lens must be an integer [%lld]", op, (long long)batch);
    for (int64_t b = 0; b < batch; ++b) {
      P.lens[b] = L.dtype == kI32 ? L.as<int32_t>()[b] : L.as<int64_t>()[b];
      if (P.lens[b] < 0 || P.lens[b] > seq)
        return ctx.fail("%s: sequence_lens[%lld] = %lld is outside [0, %lld]", op, (long long)b,
                        (long long)P.lens[b], (long long)seq);
    }
  }
  auto checkState = [&](const Tensor& t) {
    return layout1 ? hasDims(t, {batch, nd, h}) : hasDims(t, {nd, batch, h});
  };
  if (present(in, nin, 5)) {
    if (!checkState(in[5]) || in[5].dtype != X.dtype) return ctx.fail("%s: initial_h has the wrong shape", op);
    P.h0 = in[5].as<T>();
  }
  if (cell == Cell::kLstm && present(in, nin, 6)) {
    if (!checkState(in[6]) || in[6].dtype != X.dtype) return ctx.fail("%s: initial_c has the wrong shape", op);
    P.c0 = in[6].as<T>();
  }
  if (cell == Cell::kLstm && present(in, nin, 7)) {
    if (!hasDims(in[7], {nd, 3 * h}) || in[7].dtype != X.dtype) return ctx.fail("%s: P must be [%lld,%lld]", op, (long long)nd, (long long)(3 * h));
    P.peep = in[7].as<T>();
  }
  // Activations, per direction.
  const size_t perDir = P.perDir = info.defaultActs.size();
  std::vector<std::string> names = a.strings("activations");
  if (names.empty())
    for (int64_t d = 0; d < nd; ++d) names.insert(names.end(), info.defaultActs.begin(), info.defaultActs.end());
  if (names.size() == perDir && nd == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != perDir * nd) return ctx.fail("%s: expected %d activations", op, (int)(perDir * nd));
  int bad = buildRnnActs(names, a.floats("activation_alpha"), a.floats("activation_beta"), &P.acts);
  if (bad >= 0) return ctx.fail("%s: unknown activation '%s'", op, names[bad].c_str());
  P.clip = a.has("clip") ? a.f("clip", 0.f) : std::numeric_limits<double>::infinity();
  P.inputForget = a.i("input_forget", 0) != 0;
  P.linearBeforeReset = a.i("linear_before_reset", 0) != 0;
  // Results.
  if (nout > 0 && out[0].present()) {
    bool ok = layout1 ? hasDims(out[0], {batch, seq, nd, h}) : hasDims(out[0], {seq, nd, batch, h});
    if (!ok) return ctx.fail("%s: Y buffer has the wrong shape", op);
    P.Y = out[0].as<T>();
    for (int64_t i = 0; i < out[0].numel(); ++i) P.Y[i] = T(0);
  }
  for (int i = 1; i < nout && i < (cell == Cell::kLstm ? 3 : 2); ++i) {
    if (!out[i].present()) continue;
    if (!checkState(out[i])) return ctx.fail("%s: result %d has the wrong shape", op, i);
    (i == 1 ? P.Yh : P.Yc) = out[i].as<T>();
  }
  P.x = X.as<T>();
  P.w = W.as<T>();
  P.r = R.as<T>();
  return 0;
}

template int parseRecurrent<float>(Cell, const Attrs&, const Tensor*, int, Tensor*, int, Ctx&,
                                   RecurrentProblem<float>*);
template int parseRecurrent<double>(Cell, const Attrs&, const Tensor*, int, Tensor*, int, Ctx&,
                                    RecurrentProblem<double>*);

namespace {

template <typename T>
int recurrentT(Cell cell, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
               Ctx& ctx) {
  RecurrentProblem<T> P;
  if (int rc = parseRecurrent(cell, a, in, nin, out, nout, ctx, &P)) return rc;
  const int64_t nd = P.nd, h = P.h, gh = P.gh, isz = P.isz, batch = P.batch;
  const T *w = P.w, *r = P.r, *bias = P.bias, *h0 = P.h0, *c0 = P.c0, *peep = P.peep;
  T *Y = P.Y, *Yh = P.Yh, *Yc = P.Yc;
  const size_t perDir = P.perDir;
  const std::vector<int64_t>& lens = P.lens;
  const std::vector<RnnActFn>& acts = P.acts;
  const bool inputForget = P.inputForget, linearBeforeReset = P.linearBeforeReset;
  auto stateIdx = [&](int64_t d, int64_t b) { return P.stateIdx(d, b); };
  auto xAt = [&](int64_t t, int64_t b) { return P.x + P.xRow(t, b) * isz; };
  auto yIdx = [&](int64_t t, int64_t d, int64_t b) { return P.yIdx(t, d, b); };
  auto clipv = [&](double v) { return P.clipv(v); };

  std::vector<double> H(h), C(h), Hn(h), Cn(h), gx(gh), gr(gh);
  for (int64_t d = 0; d < nd; ++d) {
    const bool reverse = P.reverse(d);
    const T* wd = w + d * gh * isz;
    const T* rd = r + d * gh * h;
    const T* wb = bias ? bias + d * 2 * gh : nullptr;
    const T* rb = bias ? bias + d * 2 * gh + gh : nullptr;
    const T* pd = peep ? peep + d * 3 * h : nullptr;
    const RnnActFn* fa = &acts[d * perDir];
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < h; ++j) {
        H[j] = h0 ? static_cast<double>(h0[stateIdx(d, b) + j]) : 0.0;
        C[j] = c0 ? static_cast<double>(c0[stateIdx(d, b) + j]) : 0.0;
      }
      for (int64_t s = 0; s < lens[b]; ++s) {
        const int64_t t = reverse ? lens[b] - 1 - s : s;
        const T* xt = xAt(t, b);
        // gx = W x + Wb ; gr = R H + Rb (per gate row)
        for (int64_t q = 0; q < gh; ++q) {
          double accx = wb ? static_cast<double>(wb[q]) : 0.0;
          for (int64_t k = 0; k < isz; ++k) accx += static_cast<double>(wd[q * isz + k]) * static_cast<double>(xt[k]);
          double accr = rb ? static_cast<double>(rb[q]) : 0.0;
          for (int64_t k = 0; k < h; ++k) accr += static_cast<double>(rd[q * h + k]) * H[k];
          gx[q] = accx;
          gr[q] = accr;
        }
        for (int64_t j = 0; j < h && cell != Cell::kGru; ++j) {
          if (cell == Cell::kLstm) {
            double pi = pd ? static_cast<double>(pd[j]) : 0.0;
            double po = pd ? static_cast<double>(pd[h + j]) : 0.0;
            double pf = pd ? static_cast<double>(pd[2 * h + j]) : 0.0;
            double ig = applyRnnAct(fa[0], clipv(gx[j] + gr[j] + pi * C[j]));
            double fg = applyRnnAct(fa[0], clipv(gx[2 * h + j] + gr[2 * h + j] + pf * C[j]));
            if (inputForget) fg = 1.0 - ig;
            double cg = applyRnnAct(fa[1], clipv(gx[3 * h + j] + gr[3 * h + j]));
            Cn[j] = fg * C[j] + ig * cg;
            double og = applyRnnAct(fa[0], clipv(gx[h + j] + gr[h + j] + po * Cn[j]));
            Hn[j] = og * applyRnnAct(fa[2], Cn[j]);
          } else {
            Hn[j] = applyRnnAct(fa[0], clipv(gx[j] + gr[j]));
          }
        }
        if (cell == Cell::kGru) {
          // h~ needs r . H over every k before any row of Rh is applied.
          std::vector<double> rH(h), z(h), rgate(h);
          for (int64_t k = 0; k < h; ++k) {
            z[k] = applyRnnAct(fa[0], clipv(gx[k] + gr[k]));
            rgate[k] = applyRnnAct(fa[0], clipv(gx[h + k] + gr[h + k]));
            rH[k] = rgate[k] * H[k];
          }
          for (int64_t j = 0; j < h; ++j) {
            double pre;
            if (linearBeforeReset) {
              pre = gx[2 * h + j] + rgate[j] * gr[2 * h + j];
            } else {
              double acc = rb ? static_cast<double>(rb[2 * h + j]) : 0.0;
              for (int64_t k = 0; k < h; ++k) acc += static_cast<double>(rd[(2 * h + j) * h + k]) * rH[k];
              pre = gx[2 * h + j] + acc;
            }
            double hh = applyRnnAct(fa[1], clipv(pre));
            Hn[j] = (1.0 - z[j]) * hh + z[j] * H[j];
          }
        }
        H.swap(Hn);
        if (cell == Cell::kLstm) C.swap(Cn);
        if (Y)
          for (int64_t j = 0; j < h; ++j) Y[yIdx(t, d, b) + j] = static_cast<T>(H[j]);
      }
      for (int64_t j = 0; j < h; ++j) {
        if (Yh) Yh[stateIdx(d, b) + j] = static_cast<T>(H[j]);
        if (Yc) Yc[stateIdx(d, b) + j] = static_cast<T>(C[j]);
      }
    }
  }
  return 0;
}

template <Cell kCell>
int kRecurrent(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = infoOf(kCell).op;
  if (nin < 1 || !in[0].present()) return ctx.fail("%s: X is required", op);
  if (in[0].dtype == kF32) return recurrentT<float>(kCell, a, in, nin, out, nout, ctx);
  if (in[0].dtype == kF64) return recurrentT<double>(kCell, a, in, nin, out, nout, ctx);
  return ctx.fail("%s: unsupported element type %d (expected f32 or f64)", op, static_cast<int>(in[0].dtype));
}

}  // namespace

const KernelEntry* recurrentKernels() {
  static const KernelEntry kTable[] = {
      {"LSTM", kRecurrent<Cell::kLstm>},
      {"GRU", kRecurrent<Cell::kGru>},
      {"RNN", kRecurrent<Cell::kRnn>},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
