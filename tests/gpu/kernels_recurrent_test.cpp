// The recurrent block program (runtime/gpu/kernels/mg_recurrent.cuh) on the CPU emulation, run
// the way codegen/gpu/lower_recurrent.cpp composes it: phase 0 is one joint launch of the input
// projection (gemmBlock) and R's transpose (mapBlock copy), phase 1 the time loop
// (recurrentBlock), each checked against the ONNX equations in double (as runtime/cpu/
// k_recurrent.cpp writes them). Every case runs with a block larger than the program's THREADS
// (and not a multiple of the warp) under the strict barrier check, hidden sizes that are not
// powers of two, and sequence lengths from 0 to seq.
#include <algorithm>
#include <deque>

#include "kernels_test_util.h"

namespace {

__global__ void phase0Kernel(mgk::GemmParams g, mgk::MapParams m, int64_t gemmBlocks) {
  MG_DYNAMIC_SHARED(char, smem);
  const int64_t b = blockIdx.x;
  if (b < gemmBlocks)
    mgk::gemmBlock<64, 64, 128>(g, b, smem);
  else
    mgk::mapBlock<mgk::Copy<float>, 4, 256>(m, b - gemmBlocks, smem);
}
template <int HMAX, int T>
__global__ void loopKernel(mgk::RecurrentParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::recurrentBlock<HMAX, T>(p, blockIdx.x, smem);
}

struct Act {
  int code;
  float alpha = 0.f, beta = 0.f;
};

struct Case {
  int cell = mgk::kRnnLstm;
  int dirs = 1;
  bool reverse = false, layout1 = false;
  int64_t seq = 5, batch = 3, input = 7, hidden = 70;
  bool bias = true, lens = false, lens64 = false, h0 = false, c0 = false, peep = false;
  bool lbr = false, inputForget = false;
  float clip = INFINITY;
  std::vector<Act> acts;  // per direction; empty: the op's defaults
  int blockThreads = 200;
};

// The table's formula in double (runtime/common/mg_acts.h), as the CPU runtime's applyRnnAct.
double act(const Act& a, double x) {
  if (!mgrt::acts::byCode(a.code) || !mgrt::acts::byCode(a.code)->has(mgrt::acts::kR))
    ADD_FAILURE() << "not a recurrent activation " << a.code;
  return mgrt::acts::applyCode<double>(a.code, x, a.alpha, a.beta);
}

template <int HMAX, int T>
void run(Case c) {
  std::mt19937 rng(1234 + int(c.hidden) + c.cell * 7 + c.dirs);
  const int G = c.cell == mgk::kRnnLstm ? 4 : c.cell == mgk::kRnnGru ? 3 : 1;
  const int64_t nd = c.dirs, S = c.seq, B = c.batch, I = c.input, H = c.hidden, GH = G * H;
  const size_t perDir = G == 4 ? 3 : G == 3 ? 2 : 1;
  if (c.acts.empty()) {
    for (int64_t d = 0; d < nd; ++d) {
      if (G == 1) c.acts.push_back({mgk::kActTanh});
      else c.acts.push_back({mgk::kActSigmoid});
      if (G > 1) c.acts.push_back({mgk::kActTanh});
      if (G == 4) c.acts.push_back({mgk::kActTanh});
    }
  }
  ASSERT_EQ(c.acts.size(), perDir * nd);
  const float scale = 1.f / std::sqrt(float(H));
  std::vector<float> x = kt::randomVec(S * B * I, rng), w = kt::randomVec(nd * GH * I, rng, -scale, scale),
                     r = kt::randomVec(nd * GH * H, rng, -scale, scale), bias = kt::randomVec(nd * 2 * GH, rng),
                     peep = kt::randomVec(nd * 3 * H, rng), h0 = kt::randomVec(nd * B * H, rng),
                     c0 = kt::randomVec(nd * B * H, rng);
  std::vector<int64_t> lens(B, S);
  for (int64_t b = 0; b < B; ++b) lens[b] = c.lens ? (b * 5 + 2) % (S + 1) : S;
  if (c.lens) lens[0] = S;  // one full row at least
  std::vector<int32_t> lens32(lens.begin(), lens.end());

  // The reference, in double.
  auto xAt = [&](int64_t t, int64_t b) { return &x[(c.layout1 ? b * S + t : t * B + b) * I]; };
  auto yIdx = [&](int64_t t, int64_t d, int64_t b) {
    return c.layout1 ? ((b * S + t) * nd + d) * H : ((t * nd + d) * B + b) * H;
  };
  auto stIdx = [&](int64_t d, int64_t b) { return c.layout1 ? (b * nd + d) * H : (d * B + b) * H; };
  auto clipv = [&](double v) { return v < -c.clip ? -c.clip : (v > c.clip ? c.clip : v); };
  std::vector<double> Y(S * nd * B * H, 0.0), Yh(nd * B * H), Yc(nd * B * H);
  for (int64_t d = 0; d < nd; ++d) {
    const bool back = c.reverse || d == 1;
    const Act* fa = &c.acts[d * perDir];
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H), cs(H), hn(H), gx(GH), gr(GH);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = c.h0 ? h0[stIdx(d, b) + j] : 0.0;
        cs[j] = c.c0 ? c0[stIdx(d, b) + j] : 0.0;
      }
      for (int64_t s = 0; s < lens[b]; ++s) {
        const int64_t t = back ? lens[b] - 1 - s : s;
        for (int64_t q = 0; q < GH; ++q) {
          double ax = c.bias ? bias[d * 2 * GH + q] : 0.0, ar = c.bias ? bias[d * 2 * GH + GH + q] : 0.0;
          for (int64_t k = 0; k < I; ++k) ax += double(w[(d * GH + q) * I + k]) * xAt(t, b)[k];
          for (int64_t k = 0; k < H; ++k) ar += double(r[(d * GH + q) * H + k]) * h[k];
          gx[q] = ax, gr[q] = ar;
        }
        for (int64_t j = 0; j < H; ++j) {
          if (G == 4) {
            double pi = c.peep ? peep[d * 3 * H + j] : 0, po = c.peep ? peep[d * 3 * H + H + j] : 0,
                   pf = c.peep ? peep[d * 3 * H + 2 * H + j] : 0;
            double ig = act(fa[0], clipv(gx[j] + gr[j] + pi * cs[j]));
            double fg = act(fa[0], clipv(gx[2 * H + j] + gr[2 * H + j] + pf * cs[j]));
            if (c.inputForget) fg = 1 - ig;
            double cg = act(fa[1], clipv(gx[3 * H + j] + gr[3 * H + j]));
            cs[j] = fg * cs[j] + ig * cg;
            double og = act(fa[0], clipv(gx[H + j] + gr[H + j] + po * cs[j]));
            hn[j] = og * act(fa[2], cs[j]);
          } else if (G == 1) {
            hn[j] = act(fa[0], clipv(gx[j] + gr[j]));
          }
        }
        if (G == 3) {
          std::vector<double> z(H), rh(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = act(fa[0], clipv(gx[k] + gr[k]));
            rh[k] = act(fa[0], clipv(gx[H + k] + gr[H + k]));
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre;
            if (c.lbr) {
              pre = gx[2 * H + j] + rh[j] * gr[2 * H + j];
            } else {
              double a = c.bias ? bias[d * 2 * GH + GH + 2 * H + j] : 0.0;
              for (int64_t k = 0; k < H; ++k) a += double(r[(d * GH + 2 * H + j) * H + k]) * rh[k] * h[k];
              pre = gx[2 * H + j] + a;
            }
            hn[j] = (1 - z[j]) * act(fa[1], clipv(pre)) + z[j] * h[j];
          }
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) Y[yIdx(t, d, b) + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) Yh[stIdx(d, b) + j] = h[j], Yc[stIdx(d, b) + j] = cs[j];
    }
  }

  // The device: phase 0, then phase 1, with the params lower_recurrent.cpp writes.
  kt::Dev<float> dx(x), dw(w), dr(r), db(bias), dp(peep), dh0(h0), dc0(c0);
  kt::Dev<int32_t> dl32(lens32);
  kt::Dev<int64_t> dl64(lens);
  kt::Dev<float> gx(nd * S * B * GH), rt(nd * H * GH), dy(S * nd * B * H), dyh(nd * B * H), dyc(nd * B * H);
  mgk::GemmParams g{};
  g.batch = nd, g.M = S * B, g.N = GH, g.K = I;
  g.A = dx.get(), g.aBatch = 0, g.aM = I, g.aK = 1;
  g.B = dw.get(), g.bBatch = GH * I, g.bK = 1, g.bN = I;
  g.C = c.bias ? db.get() : nullptr, g.cBatch = 2 * GH, g.cM = 0, g.cN = 1, g.beta = 1.f;
  g.alpha = 1.f, g.Y = gx.get(), g.yBatch = S * B * GH, g.yM = GH, g.yN = 1;
  mgk::MapParams m{};
  m.n = nd * H * GH, m.rank = 3, m.nin = 1;
  const int64_t dims[3] = {nd, H, GH}, ins[3] = {GH * H, 1, H}, outs[3] = {H * GH, GH, 1};
  for (int i = 0; i < 3; ++i) m.dims[i] = dims[i], m.inStrides[0][i] = ins[i], m.outStrides[i] = outs[i];
  m.in[0] = dr.get(), m.out = rt.get();
  const int64_t gb = mgk::gemmBlocks<64, 64, 128>(g);
  kt::launch(phase0Kernel, gb + mgk::mapBlocks<mgk::Copy<float>, 4, 256>(m), 256,
             std::max(mgk::gemmSmemBytes<64, 64, 128>(), mgk::mapSmemBytes<mgk::Copy<float>, 4, 256>()),
             g, m, gb);

  mgk::RecurrentParams p{};
  p.cell = c.cell, p.dirs = c.dirs, p.reverse = c.reverse, p.linearBeforeReset = c.lbr;
  p.inputForget = c.inputForget, p.seq = S, p.batch = B, p.hidden = H;
  p.gx = gx.get(), p.gxDir = S * B * GH, p.gxRowT = c.layout1 ? 1 : B, p.gxRowB = c.layout1 ? S : 1;
  p.rt = rt.get(), p.rb = c.bias ? db.get() + GH : nullptr, p.rbDir = 2 * GH;
  p.peep = c.peep ? dp.get() : nullptr;
  p.lens32 = c.lens && !c.lens64 ? dl32.get() : nullptr;
  p.lens64 = c.lens && c.lens64 ? dl64.get() : nullptr;
  p.h0 = c.h0 ? dh0.get() : nullptr, p.c0 = c.c0 ? dc0.get() : nullptr;
  p.y = dy.get(), p.yh = dyh.get(), p.yc = G == 4 ? dyc.get() : nullptr;
  p.yT = c.layout1 ? nd * H : nd * B * H, p.yD = c.layout1 ? H : B * H, p.yB = c.layout1 ? S * nd * H : H;
  p.stateD = c.layout1 ? H : B * H, p.stateB = c.layout1 ? nd * H : H;
  for (int64_t d = 0; d < 2; ++d)
    for (size_t i = 0; i < 3; ++i) {
      const Act& a = c.acts[std::min<int64_t>(d, nd - 1) * perDir + std::min(i, perDir - 1)];
      p.act[d][i] = a.code, p.actAlpha[d][i] = a.alpha, p.actBeta[d][i] = a.beta;
    }
  p.clip = c.clip;
  kt::launch(loopKernel<HMAX, T>, mgk::recurrentBlocks<HMAX, T>(p), c.blockThreads,
             mgk::recurrentSmemBytes<HMAX, T>(), p);

  const double tol = 2e-5 * double(I + H + 8);
  EXPECT_TRUE(kt::near(dy.host(), Y, tol)) << "Y";
  EXPECT_TRUE(kt::near(dyh.host(), Yh, tol)) << "Y_h";
  if (G == 4) {
    EXPECT_TRUE(kt::near(dyc.host(), Yc, tol)) << "Y_c";
  }
}

TEST(RecurrentKernel, LstmForwardDefaults) {
  Case c;
  run<128, 128>(c);
}

TEST(RecurrentKernel, LstmBidirectionalEveryOperand) {
  Case c;
  c.dirs = 2, c.lens = true, c.h0 = true, c.c0 = true, c.peep = true, c.batch = 4;
  run<128, 128>(c);
}

TEST(RecurrentKernel, LstmReverseLayout1InputForgetClipInt64Lengths) {
  Case c;
  c.reverse = true, c.layout1 = true, c.inputForget = true, c.clip = 0.5f, c.lens = true, c.lens64 = true;
  c.h0 = true, c.hidden = 33, c.blockThreads = 96;
  run<64, 64>(c);
}

TEST(RecurrentKernel, GruLinearBeforeResetBidirectional) {
  // As PyTorch exports nn.GRU.
  Case c;
  c.cell = mgk::kRnnGru, c.lbr = true, c.dirs = 2, c.h0 = true, c.hidden = 300, c.blockThreads = 320;
  run<512, 256>(c);
}

TEST(RecurrentKernel, GruResetBeforeLinearLayout1Lengths) {
  Case c;
  c.cell = mgk::kRnnGru, c.layout1 = true, c.lens = true, c.h0 = true, c.dirs = 2, c.hidden = 300;
  c.blockThreads = 320;
  run<512, 256>(c);
}

TEST(RecurrentKernel, GruWithoutBiasOtherActivations) {
  Case c;
  c.cell = mgk::kRnnGru, c.bias = false, c.reverse = true, c.hidden = 20;
  c.acts = {{mgk::kActHardSigmoid, 0.2f, 0.5f}, {mgk::kActScaledTanh, 1.5f, 0.7f}};
  run<64, 64>(c);
}

TEST(RecurrentKernel, RnnEveryActivationFunction) {
  const std::vector<Act> acts = {{mgk::kActRelu},         {mgk::kActLeakyRelu, 0.1f},
                                 {mgk::kActAffine, 0.5f, 0.1f}, {mgk::kActThresholdedRelu, 0.2f},
                                 {mgk::kActElu, 0.9f},    {mgk::kActSoftsign},
                                 {mgk::kActSoftplus},     {mgk::kActTanh}};
  for (size_t i = 0; i + 1 < acts.size(); i += 2) {
    Case c;
    c.cell = mgk::kRnnPlain, c.dirs = 2, c.hidden = 40, c.h0 = true, c.lens = true;
    c.acts = {acts[i], acts[i + 1]};
    run<64, 64>(c);
  }
}

// The wavefront of stacked layers (recurrentWavefrontBlock, one co-resident launch with progress
// flags) against the same layers run one after another by the programs above (phase 0 and the
// time loop per layer, layer l's X being layer l-1's Y): same Y, Y_h, Y_c for every layer (the
// input gates of layers above the first are summed in another order, so up to rounding).
template <int HMAX, int T>
__global__ void wavefrontKernel(mgk::RecurrentWavefrontParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::recurrentWavefrontBlock<HMAX, T>(p, blockIdx.x, smem);
}
template <int HMAX, int T>
__global__ void wavefrontResetKernel(mgk::RecurrentWavefrontParams p) {
  MG_DYNAMIC_SHARED(char, smem);
  mgk::wavefrontResetBlock<HMAX, T>(p, blockIdx.x, smem);
}

struct StackCase {
  int cell = mgk::kRnnLstm;
  int layers = 2;
  bool reverse = false, lbr = false, states = false, layout1 = false;
  int64_t seq = 9, batch = 2, input = 11, hidden = 37;
  int blockThreads = 96;
};

template <int HMAX, int T>
void runStack(const StackCase& c) {
  std::mt19937 rng(99 + c.layers * 13 + int(c.hidden));
  const int G = c.cell == mgk::kRnnLstm ? 4 : c.cell == mgk::kRnnGru ? 3 : 1;
  const int64_t S = c.seq, B = c.batch, H = c.hidden, GH = G * H;
  const float scale = 1.f / std::sqrt(float(H));
  struct Layer {
    int64_t in;
    std::vector<float> w, r, bias, h0, c0;
  };
  std::vector<Layer> L(c.layers);
  for (int l = 0; l < c.layers; ++l) {
    L[l].in = l == 0 ? c.input : H;
    L[l].w = kt::randomVec(GH * L[l].in, rng, -scale, scale);
    L[l].r = kt::randomVec(GH * H, rng, -scale, scale);
    L[l].bias = kt::randomVec(2 * GH, rng);
    L[l].h0 = kt::randomVec(B * H, rng);
    L[l].c0 = kt::randomVec(B * H, rng);
  }
  std::vector<float> x = kt::randomVec(S * B * c.input, rng);
  auto params = [&](int l, const float* gx, const float* rt, const float* bias, const float* h0, const float* c0,
                    float* y, float* yh, float* yc) {
    mgk::RecurrentParams p{};
    p.cell = c.cell, p.dirs = 1, p.reverse = c.reverse, p.linearBeforeReset = c.lbr, p.inputForget = 0;
    p.seq = S, p.batch = B, p.hidden = H;
    p.gx = gx, p.gxDir = S * B * GH, p.gxRowT = c.layout1 ? 1 : B, p.gxRowB = c.layout1 ? S : 1;
    p.rt = rt, p.rb = bias + GH, p.rbDir = 2 * GH, p.peep = nullptr;
    p.h0 = c.states ? h0 : nullptr, p.c0 = c.states && G == 4 ? c0 : nullptr;
    p.y = y, p.yh = yh, p.yc = G == 4 ? yc : nullptr;
    p.yT = c.layout1 ? H : B * H, p.yD = c.layout1 ? H : B * H, p.yB = c.layout1 ? S * H : H;
    p.stateD = B * H, p.stateB = H;
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < 3; ++i) {
        p.act[d][i] = G == 1 ? mgk::kActTanh : (i == 0 ? mgk::kActSigmoid : mgk::kActTanh);
        p.actAlpha[d][i] = p.actBeta[d][i] = 0.f;
      }
    p.clip = INFINITY;
    (void)l;
    return p;
  };
  auto phase0 = [&](const float* xin, int64_t in, const float* w, const float* bias, const float* r, float* gx,
                    float* rt) {
    mgk::GemmParams g{};
    g.batch = 1, g.M = S * B, g.N = GH, g.K = in;
    g.A = xin, g.aBatch = 0, g.aM = in, g.aK = 1;
    g.B = w, g.bBatch = GH * in, g.bK = 1, g.bN = in;
    g.C = bias, g.cBatch = 2 * GH, g.cM = 0, g.cN = 1, g.beta = 1.f;
    g.alpha = 1.f, g.Y = gx, g.yBatch = S * B * GH, g.yM = GH, g.yN = 1;
    mgk::MapParams m{};
    m.n = H * GH, m.rank = 3, m.nin = 1;
    const int64_t dims[3] = {1, H, GH}, ins[3] = {GH * H, 1, H}, outs[3] = {H * GH, GH, 1};
    for (int i = 0; i < 3; ++i) m.dims[i] = dims[i], m.inStrides[0][i] = ins[i], m.outStrides[i] = outs[i];
    m.in[0] = r, m.out = rt;
    const int64_t gb = mgk::gemmBlocks<64, 64, 128>(g);
    kt::launch(phase0Kernel, gb + mgk::mapBlocks<mgk::Copy<float>, 4, 256>(m), 256,
               std::max(mgk::gemmSmemBytes<64, 64, 128>(), mgk::mapSmemBytes<mgk::Copy<float>, 4, 256>()), g, m,
               gb);
  };

  // One layer after another.
  std::deque<kt::Dev<float>> dw, dr, db, dh0, dc0;
  for (int l = 0; l < c.layers; ++l) {
    dw.emplace_back(L[l].w), dr.emplace_back(L[l].r), db.emplace_back(L[l].bias);
    dh0.emplace_back(L[l].h0), dc0.emplace_back(L[l].c0);
  }
  kt::Dev<float> dx(x);
  std::vector<std::vector<float>> refY, refYh, refYc;
  {
    std::deque<kt::Dev<float>> ys;
    for (int l = 0; l < c.layers; ++l) {
      ys.emplace_back(S * B * H);
      kt::Dev<float> gx(S * B * GH), rt(H * GH), yh(B * H), yc(B * H);
      phase0(l == 0 ? dx.get() : ys[l - 1].get(), L[l].in, dw[l].get(), db[l].get(), dr[l].get(), gx.get(), rt.get());
      mgk::RecurrentParams p =
          params(l, gx.get(), rt.get(), db[l].get(), dh0[l].get(), dc0[l].get(), ys[l].get(), yh.get(), yc.get());
      kt::launch(loopKernel<HMAX, T>, mgk::recurrentBlocks<HMAX, T>(p), c.blockThreads,
                 mgk::recurrentSmemBytes<HMAX, T>(), p);
      refY.push_back(ys[l].host()), refYh.push_back(yh.host()), refYc.push_back(yc.host());
    }
  }

  // The wavefront: layer 0's projection and every R transposed as before; W^T of the layers
  // above, then the flags reset and the co-resident launch.
  mgk::RecurrentWavefrontParams wp{};
  wp.layers = c.layers;
  std::deque<kt::Dev<float>> ys, yhs, ycs, rts, wts;
  kt::Dev<float> gx0(S * B * GH), unusedGx(S * B * GH);
  kt::Dev<unsigned> flags(c.layers * B);
  for (int l = 0; l < c.layers; ++l) {
    ys.emplace_back(S * B * H), yhs.emplace_back(B * H), ycs.emplace_back(B * H), rts.emplace_back(H * GH);
    std::vector<float> wt(L[l].in * GH);
    for (int64_t q = 0; q < GH; ++q)
      for (int64_t k = 0; k < L[l].in; ++k) wt[k * GH + q] = L[l].w[q * L[l].in + k];
    wts.emplace_back(wt);
  }
  for (int l = 0; l < c.layers; ++l) {
    phase0(l == 0 ? dx.get() : ys[l - 1].get(), L[l].in, dw[l].get(), db[l].get(), dr[l].get(),
           l == 0 ? gx0.get() : unusedGx.get(), rts[l].get());
    wp.layer[l] = params(l, l == 0 ? gx0.get() : nullptr, rts[l].get(), db[l].get(), dh0[l].get(), dc0[l].get(),
                         ys[l].get(), yhs[l].get(), ycs[l].get());
    wp.wt[l] = l == 0 ? nullptr : wts[l].get();
    wp.wb[l] = l == 0 ? nullptr : db[l].get();
    wp.input[l] = L[l].in;
  }
  // The layer outputs are poisoned again, so that the wavefront must write what it reads.
  for (int l = 0; l < c.layers; ++l) ASSERT_EQ(mgMemsetAsync(ys[l].get(), 0xff, S * B * H * 4, nullptr), mgSuccess);
  ASSERT_EQ(mgMemsetAsync(flags.get(), 0xff, c.layers * B * 4, nullptr), mgSuccess);
  wp.flags = flags.get();
  kt::launch(wavefrontResetKernel<HMAX, T>, 1, 64, 0, wp);
  mg_emu::config().strictSync = true;
  mgError_t e = mgLaunchCoResident(wavefrontKernel<HMAX, T>, dim3(unsigned(mgk::recurrentWavefrontBlocks<HMAX, T>(wp))),
                                   dim3(unsigned(c.blockThreads)), size_t(mgk::recurrentWavefrontSmemBytes<HMAX, T>()),
                                   mgStream_t(nullptr), wp);
  ASSERT_EQ(e, mgSuccess) << mgGetErrorString(e);
  ASSERT_EQ(e = mgDeviceSynchronize(), mgSuccess) << mgGetErrorString(e);
  auto asDouble = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  for (int l = 0; l < c.layers; ++l) {
    const double tol = 1e-5 * double(H + L[l].in + 8);
    EXPECT_TRUE(kt::near(ys[l].host(), asDouble(refY[l]), tol)) << "Y of layer " << l;
    EXPECT_TRUE(kt::near(yhs[l].host(), asDouble(refYh[l]), tol)) << "Y_h of layer " << l;
    if (G == 4) EXPECT_TRUE(kt::near(ycs[l].host(), asDouble(refYc[l]), tol)) << "Y_c of layer " << l;
  }
}

TEST(RecurrentKernel, WavefrontTwoLstmLayers) {
  StackCase c;
  runStack<64, 64>(c);
}

TEST(RecurrentKernel, WavefrontThreeGruLayersReverseWithStates) {
  StackCase c;
  c.cell = mgk::kRnnGru, c.layers = 3, c.reverse = true, c.states = true, c.hidden = 70, c.batch = 3;
  c.blockThreads = 160;
  runStack<128, 128>(c);
}

TEST(RecurrentKernel, WavefrontFourLayersLayout1LinearBeforeReset) {
  StackCase c;
  c.cell = mgk::kRnnGru, c.lbr = true, c.layers = 4, c.layout1 = true, c.seq = 6, c.states = true;
  runStack<64, 64>(c);
  StackCase r;
  r.cell = mgk::kRnnPlain, r.layers = 2, r.hidden = 20;
  runStack<64, 64>(r);
}

}  // namespace
