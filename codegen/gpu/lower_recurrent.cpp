// GPU lowering of the recurrent ops (see gpu_lowering.h; their entries in lowering_table.cpp):
// ONNX LSTM, GRU and RNN with the semantics of the CPU runtime (runtime/cpu/k_recurrent.cpp):
// every direction, the optional operands B, sequence_lens (int32/int64), initial_h, initial_c and
// P, every result (Y, Y_h, Y_c), layout 0 and 1, clip, input_forget, linear_before_reset and every
// activation function with its alpha/beta, decoded by the CPU runtime's own buildRnnActs.
// Refused (kUnsupported, naming the node): element types other than float32 (the CPU also runs
// f64), sequence_lens other than int32/int64 (which the CPU rejects at run time), hidden_size
// above kMaxHidden.
//
// A node is three items in two phases (GpuItem::phase), i.e. two launches that run in order:
//   phase 0  gemmBlock:  gx[d] = X W[d]^T + Wb[d] for all time steps at once, M = seq*batch rows
//                        of X as they lie in memory (layout 0: (t, b) at row t*batch + b;
//                        layout 1: b*seq + t), N = G*hidden, K = input_size, batch = directions
//            mapBlock:   rt[d] = R[d]^T (hidden x G*hidden), so that the time loop reads R with
//                        consecutive threads on consecutive words
//   phase 1  recurrentBlock<HMAX, THREADS>: one block per (direction, batch row) walks the
//            sequence (runtime/gpu/kernels/mg_recurrent.cuh), adding R h + Rb to gx.
// Why it is correct: the CPU reference computes, per step, gx = W x_t + Wb and gr = R h + Rb and
// then the cell from gx + gr (GRU's linear_before_reset scales gr's h-gate by r); phase 0 computes
// every step's gx up front (it does not depend on h), phase 1 the rest in the reference's order.
// Phase 1 starts only after every block of phase 0 is done, because it is a later launch on the
// same stream. gx and rt live in the launch's scratch memory (LowerContext::scratch), which the
// next launch group may reuse only after both phases have run.
//
// Tiles: the GEMM takes the node's tile from the cost model (which models LSTM/GRU/RNN as GEMMs,
// src/target/op_work.cpp); the time loop's HMAX is the hidden size rounded up to a power of two
// (shared memory 3*HMAX floats), THREADS = min(HMAX, 256).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "k_recurrent_act.h"
#include "gpu_lowering.h"

namespace magneto {
namespace gpu {
namespace {

// The largest hidden size the time loop holds in shared memory: 3*4096 floats = 48 KiB, within
// CUDA's default per-block limit and gfx90a's 64 KiB LDS. Larger states would need the state
// split over blocks, i.e. a grid-wide barrier per step.
constexpr int64_t kMaxHidden = 4096;
constexpr int kMaxRecurrentThreads = 256;
constexpr int kScratchAlign = 256;

bool needed(const Value* v) { return v && (v->hasUses() || v->isGraphOutput()); }

// A float copy over `dims` (n elements) from `in` read with `inStrides` to `out` written with
// `outStrides`: the map program the recurrent lowerings use to transpose R and W once per run.
GpuItem transposeItem(const std::string& what, int64_t n, const std::vector<int64_t>& dims,
                      const std::string& in, const std::vector<int64_t>& inStrides,
                      const std::string& out, const std::vector<int64_t>& outStrides) {
  GpuItem t;
  const std::string copy = "mgk::Copy<float>, 4, 256";
  t.paramsType = "mgk::MapParams";
  t.program = "mgk::mapBlock<" + copy + ">";
  t.blocks = "mgk::mapBlocks<" + copy + ">";
  t.smem = "mgk::mapSmemBytes<" + copy + ">";
  t.threads = 256;
  t.tile = "items4 " + what + " transposed";
  t.init = fmt::format(
      "p.n = {}; p.rank = {}; p.nin = 1; mgSet(p.dims, {});\n"
      "p.in[0] = {}; p.inOffset[0] = 0; mgSet(p.inStrides[0], {});\n"
      "p.out = {}; p.outOffset = 0; mgSet(p.outStrides, {});\n",
      n, dims.size(), intList(dims), in, intList(inStrides), out, intList(outStrides));
  return t;
}

struct Shape {
  int gates = 0;
  int64_t dirs = 1, seq = 0, batch = 0, input = 0, hidden = 0;
  bool layout1 = false;
};

// The activation code (runtime/common/mg_acts.h), alpha and beta of every (direction, function),
// as the CPU runtime reads the attributes (defaults per op, one list shared by both directions,
// alpha/beta consumed in order by the functions that take them).
Status activations(const Node& n, const Shape& s, std::string& init) {
  static const std::vector<std::string> kLstm = {"Sigmoid", "Tanh", "Tanh"}, kGru = {"Sigmoid", "Tanh"},
                                        kRnn = {"Tanh"};
  const std::vector<std::string>& defaults = s.gates == 4 ? kLstm : s.gates == 3 ? kGru : kRnn;
  std::vector<std::string> names = n.attrs().getStrings("activations");
  if (names.empty())
    for (int64_t d = 0; d < s.dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() == defaults.size() && s.dirs == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != defaults.size() * s.dirs)
    return unsupported("{}: {} activations for {} direction(s)", n.describe(), names.size(), s.dirs);
  std::vector<float> alphas, betas;
  for (double a : n.attrs().getFloats("activation_alpha")) alphas.push_back(static_cast<float>(a));
  for (double b : n.attrs().getFloats("activation_beta")) betas.push_back(static_cast<float>(b));
  std::vector<mgrt::RnnActFn> fns;
  int bad = mgrt::buildRnnActs(names, alphas, betas, &fns);
  if (bad >= 0) return unsupported("{}: activation '{}' on the cuda/hip targets", n.describe(), names[bad]);
  for (int64_t d = 0; d < 2; ++d)
    for (size_t i = 0; i < 3; ++i) {
      // Unused slots repeat a valid function, so the params never hold garbage.
      const mgrt::RnnActFn& f = fns[std::min<size_t>(d, s.dirs - 1) * defaults.size() +
                                    std::min(i, defaults.size() - 1)];
      init += fmt::format("p.act[{0}][{1}] = {2}; p.actAlpha[{0}][{1}] = {3}; p.actBeta[{0}][{1}] = {4};\n",
                          d, i, static_cast<int>(f.act), floatLiteral(f.alpha), floatLiteral(f.beta));
    }
  return Status::success();
}

// The three items of one node; projection false (a wavefront's layers above the first): no gx
// scratch and no projection item (proj left empty), the loop's p.gx null.
Expected<std::vector<GpuItem>> recurrentItems(const Node& n, const TileConfig& tile, LowerContext& cx,
                                              bool projection, Shape* shape);

}  // namespace

Expected<std::vector<GpuItem>> lowerRecurrent(const Node& n, const TileConfig& tile, LowerContext& cx) {
  Shape s;
  return recurrentItems(n, tile, cx, true, &s);
}

namespace {

Expected<std::vector<GpuItem>> recurrentItems(const Node& n, const TileConfig& tile, LowerContext& cx,
                                              bool projection, Shape* shape) {
  const std::string& k = n.kind();
  Shape s;
  s.gates = k == "LSTM" ? 4 : k == "GRU" ? 3 : 1;
  const Value *x = n.input(0), *w = n.input(1), *r = n.input(2);
  if (!x || !w || !r) return unsupported("{}: X, W and R are required", n.describe());
  for (const Value* v : n.inputs())
    if (v && v != n.input(4) && v->dtype() != DType::kF32)
      return unsupported("{}: {} on {} (the cuda/hip targets do f32)", n.describe(), k, dtypeName(v->dtype()));
  const Value* lens = n.input(4);
  if (lens && lens->dtype() != DType::kI32 && lens->dtype() != DType::kI64)
    return unsupported("{}: sequence_lens of type {} (int32 or int64)", n.describe(), dtypeName(lens->dtype()));
  std::string dir = n.attrs().getString("direction", "forward");
  s.dirs = dir == "bidirectional" ? 2 : 1;
  s.layout1 = n.attrs().getInt("layout", 0) != 0;
  if (x->rank() != 3 || r->rank() != 3) return unsupported("{}: X and R must be rank 3", n.describe());
  s.seq = s.layout1 ? x->dims()[1] : x->dims()[0];
  s.batch = s.layout1 ? x->dims()[0] : x->dims()[1];
  s.input = x->dims()[2];
  s.hidden = n.attrs().getInt("hidden_size", r->dims()[2]);
  if (s.hidden > kMaxHidden)
    return unsupported("{}: hidden_size {} (the cuda/hip time loop holds up to {} units in shared memory)",
                       n.describe(), s.hidden, kMaxHidden);
  const int64_t gh = s.gates * s.hidden, rows = s.seq * s.batch;
  std::string acts;
  MG_RETURN_IF_ERROR(activations(n, s, acts));

  // Scratch: gx [dirs][rows][gh], then rt [dirs][hidden][gh].
  const int64_t gxBytes = (s.dirs * rows * gh * 4 + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
  std::string gx = projection ? cx.scratch(gxBytes) : std::string("static_cast<char*>(nullptr)");
  std::string rt = cx.scratch(s.dirs * s.hidden * gh * 4);
  const Value* b = n.input(3);

  GpuItem proj = gemmItem(tile);
  proj.init = fmt::format(
      "p.batch = {}; p.M = {}; p.N = {}; p.K = {};\n"
      "p.A = {}; p.aBatch = 0; p.aM = {}; p.aK = 1;\n"
      "p.B = {}; p.bBatch = {}; p.bK = 1; p.bN = {};\n"
      "p.C = {}; p.cBatch = {}; p.cM = 0; p.cN = 1; p.beta = 1.f;\n"
      "p.alpha = 1.f; p.Y = reinterpret_cast<float*>({}); p.yBatch = {}; p.yM = {}; p.yN = 1; "
      "p.residual = nullptr;\np.act = 0; p.actAlpha = 0.f; p.actBeta = 0.f;\n",
      s.dirs, rows, gh, s.input, cx.typedPtr("float", x, true), s.input, cx.typedPtr("float", w, true),
      gh * s.input, s.input, b ? cx.typedPtr("float", b, true) : "nullptr", 2 * gh, gx, rows * gh, gh);
  proj.tile += " projection";

  // rt[d][kk][q] = R[d][q][kk]: a copy over rt's index space (d, kk, q).
  GpuItem transpose = transposeItem("R", s.dirs * s.hidden * gh, {s.dirs, s.hidden, gh}, cx.ptr(r),
                                     {gh * s.hidden, 1, s.hidden}, rt, {s.hidden * gh, gh, 1});

  int hmax = 64;
  while (hmax < s.hidden) hmax *= 2;
  const int threads = std::min(hmax, kMaxRecurrentThreads);
  GpuItem loop;
  const std::string args = fmt::format("{}, {}", hmax, threads);
  loop.paramsType = "mgk::RecurrentParams";
  loop.program = "mgk::recurrentBlock<" + args + ">";
  loop.blocks = "mgk::recurrentBlocks<" + args + ">";
  loop.smem = "mgk::recurrentSmemBytes<" + args + ">";
  loop.threads = threads;
  loop.syncs = true;
  loop.phase = 1;
  loop.tile = fmt::format("hidden<={} t{}", hmax, threads);
  const Value *h0 = n.input(5), *c0 = s.gates == 4 ? n.input(6) : nullptr, *peep = s.gates == 4 ? n.input(7) : nullptr;
  const Value* y = n.output(0);
  const Value* yh = n.numOutputs() > 1 ? n.output(1) : nullptr;
  const Value* yc = s.gates == 4 && n.numOutputs() > 2 ? n.output(2) : nullptr;
  auto in = [&](const Value* v) { return v ? cx.typedPtr("float", v, true) : std::string("nullptr"); };
  auto out = [&](const Value* v) { return needed(v) ? cx.typedPtr("float", v, false) : std::string("nullptr"); };
  const int64_t nd = s.dirs, bt = s.batch, hd = s.hidden;
  loop.init = fmt::format(
      "p.cell = {}; p.dirs = {}; p.reverse = {}; p.linearBeforeReset = {}; p.inputForget = {};\n"
      "p.seq = {}; p.batch = {}; p.hidden = {};\n"
      "p.gx = reinterpret_cast<const float*>({}); p.gxDir = {}; p.gxRowT = {}; p.gxRowB = {};\n"
      "p.rt = reinterpret_cast<const float*>({}); p.rb = {}; p.rbDir = {}; p.peep = {};\n"
      "p.lens32 = {}; p.lens64 = {}; p.h0 = {}; p.c0 = {};\n"
      "p.y = {}; p.yh = {}; p.yc = {};\n"
      "p.yT = {}; p.yD = {}; p.yB = {}; p.stateD = {}; p.stateB = {}; p.clip = {};\n{}",
      s.gates == 4 ? "mgk::kRnnLstm" : s.gates == 3 ? "mgk::kRnnGru" : "mgk::kRnnPlain", nd,
      dir == "reverse" ? 1 : 0, n.attrs().getInt("linear_before_reset", 0) != 0 ? 1 : 0,
      n.attrs().getInt("input_forget", 0) != 0 ? 1 : 0, s.seq, bt, hd, gx, rows * gh,
      s.layout1 ? 1 : bt, s.layout1 ? s.seq : 1, rt,
      b ? fmt::format("{} + {}", cx.typedPtr("float", b, true), gh) : "nullptr", 2 * gh, in(peep),
      lens && lens->dtype() == DType::kI32 ? cx.typedPtr("int32_t", lens, true) : "nullptr",
      lens && lens->dtype() == DType::kI64 ? cx.typedPtr("int64_t", lens, true) : "nullptr", in(h0), in(c0),
      out(y), out(yh), out(yc),
      // Y: layout 0 [seq, dirs, batch, hidden], layout 1 [batch, seq, dirs, hidden].
      s.layout1 ? nd * hd : nd * bt * hd, s.layout1 ? hd : bt * hd, s.layout1 ? s.seq * nd * hd : hd,
      // States: layout 0 [dirs, batch, hidden], layout 1 [batch, dirs, hidden].
      s.layout1 ? hd : bt * hd, s.layout1 ? nd * hd : hd,
      n.attrs().has("clip") ? floatLiteral(n.attrs().getFloat("clip", 0)) : std::string("INFINITY"), acts);
  *shape = s;
  if (!projection) proj = GpuItem{};
  return std::vector<GpuItem>{proj, transpose, loop};
}

// `init` with every `p.` field access written as `prefix` (the wavefront's p.layer[l].).
std::string wavefrontPrefixed(const std::string& init, const std::string& prefix) {
  std::string out;
  for (size_t i = 0; i < init.size(); ++i) {
    const bool start = i == 0 || !(std::isalnum(static_cast<unsigned char>(init[i - 1])) || init[i - 1] == '_' ||
                                   init[i - 1] == '.' || init[i - 1] == ':');
    if (start && init.compare(i, 2, "p.") == 0) {
      out += prefix;
      ++i;
      continue;
    }
    out += init[i];
  }
  return out;
}

}  // namespace

Expected<std::vector<GpuItem>> lowerRecurrentWavefront(const std::vector<const Node*>& layers, const TileConfig& tile0,
                                                       const DeviceProfile& device, LowerContext& cx) {
  constexpr size_t kMaxLayers = 4;  // mgk::kMaxWavefrontLayers
  if (layers.size() < 2 || layers.size() > kMaxLayers)
    return unsupported("a wavefront of {} recurrent layers (2 to {})", layers.size(), kMaxLayers);
  std::vector<GpuItem> phase0;
  std::string init = fmt::format("p.layers = {};\n", layers.size());
  int64_t hidden = 0, batch = -1, seq = -1;
  for (size_t l = 0; l < layers.size(); ++l) {
    const Node& n = *layers[l];
    Shape s;
    MG_ASSIGN_OR_RETURN(std::vector<GpuItem> items, recurrentItems(n, l == 0 ? tile0 : TileConfig{}, cx, l == 0, &s));
    if (s.dirs != 1 || n.input(4))
      return unsupported("{}: a wavefront layer must be unidirectional without sequence_lens", n.describe());
    if ((batch >= 0 && s.batch != batch) || (seq >= 0 && s.seq != seq))
      return unsupported("{}: its batch or sequence differs from the layer below", n.describe());
    if (l + 1 < layers.size() && !needed(n.output(0)))
      return unsupported("{}: a wavefront layer below the top must write Y", n.describe());
    batch = s.batch, seq = s.seq, hidden = std::max({hidden, s.hidden, l ? s.input : int64_t{0}});
    if (l == 0) phase0.push_back(items[0]);
    phase0.push_back(items[1]);  // R transposed
    init += wavefrontPrefixed(items[2].init, fmt::format("p.layer[{}].", l));
    if (l == 0) {
      init += "p.wt[0] = nullptr; p.wb[0] = nullptr; p.input[0] = 0;\n";
      continue;
    }
    // W^T: wt[kk][q] = W[0][q][kk], so that the per-step input product reads consecutive words.
    const int64_t gh = s.gates * s.hidden;
    std::string wt = cx.scratch(s.input * gh * 4);
    phase0.push_back(transposeItem("W", s.input * gh, {s.input, gh}, cx.ptr(n.input(1)), {1, s.input}, wt,
                                   {gh, 1}));
    const Value* b = n.input(3);
    init += fmt::format("p.wt[{0}] = reinterpret_cast<const float*>({1}); p.wb[{0}] = {2}; p.input[{0}] = {3};\n", l, wt,
                        b ? cx.typedPtr("float", b, true) : std::string("nullptr"), s.input);
  }
  int hmax = 64;
  while (hmax < hidden) hmax *= 2;
  if (hmax > 1024)
    return unsupported("{}: hidden size {} above the wavefront's 1024", layers[0]->describe(), hidden);
  const int threads = std::min(hmax, kMaxRecurrentThreads);
  const int smem = 8 * hmax * 4;  // mgk::recurrentWavefrontSmemBytes
  const int64_t blocks = static_cast<int64_t>(layers.size()) * batch;
  const int64_t fit = coResidentBlocks(threads, smem, device);
  if (blocks > fit)
    return unsupported("{}: a wavefront of {} blocks ({} threads, {} B shared memory) does not fit on {} at once ({})",
                       layers[0]->describe(), blocks, threads, smem, device.name, fit);
  const std::string flags = cx.scratch(blocks * 4);
  init += fmt::format("p.flags = reinterpret_cast<unsigned*>({});\n", flags);
  const std::string args = fmt::format("{}, {}", hmax, threads);

  GpuItem reset;
  reset.paramsType = "mgk::RecurrentWavefrontParams";
  reset.program = "mgk::wavefrontResetBlock<" + args + ">";
  reset.blocks = "mgk::wavefrontResetBlocks<" + args + ">";
  reset.smem = "mgk::wavefrontResetSmemBytes<" + args + ">";
  reset.threads = 64;
  reset.tile = "progress flags reset";
  reset.init = init;
  phase0.push_back(reset);

  GpuItem wave;
  wave.paramsType = "mgk::RecurrentWavefrontParams";
  wave.program = "mgk::recurrentWavefrontBlock<" + args + ">";
  wave.blocks = "mgk::recurrentWavefrontBlocks<" + args + ">";
  wave.smem = "mgk::recurrentWavefrontSmemBytes<" + args + ">";
  wave.threads = threads;
  wave.syncs = true;
  wave.coResident = true;
  wave.phase = 1;
  wave.tile = fmt::format("wavefront of {} layers, hidden<={} t{}", layers.size(), hmax, threads);
  wave.init = init;
  phase0.push_back(wave);
  return phase0;
}

}  // namespace gpu
}  // namespace magneto
