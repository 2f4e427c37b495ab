// recurrent-wavefront: stacked recurrent layers (LSTM -> Squeeze -> LSTM ..., as nn.LSTM with
// num_layers > 1 exports them) become one wavefront group: layer l's step t runs beside layer l-1's
// step t+1 instead of after all of layer l-1 (Rammer's wavefront over the layers' time steps).
//
// What it rewrites: nothing in the dataflow. A chain of 2..kMaxWavefrontLayers recurrent nodes of
// one kind, each unidirectional in the same direction and layout, without sequence_lens, where
// layer l's X is layer l-1's Y with its unit direction axis dropped (a Squeeze or Reshape: the
// same bytes), is recorded as a ParallelGroup of strategy "wavefront" (members: the layers' ONNX
// names; modeled latency before/after) and its nodes (layers and the views between them) are
// marked with the group and made contiguous in the schedule. The code generators then run the
// layers as one program: the cuda/hip targets as one co-resident launch whose blocks wait on
// progress flags (codegen/gpu/lower_recurrent.cpp, lowerRecurrentWavefront); the cpu target as one
// parallel region, each layer whole on one thread, layer l's steps waiting (acquire) on the step
// count layer l-1 publishes (release) (codegen/cpu/cpu_emitter.cpp, runtime/cpu/f_recurrent.cpp).
//
// Why it is legal: layer l's step t reads layer l-1's Y at time t only (X_t), so it may start once
// that step of layer l-1 is done; the wavefront program waits for exactly that (a flag layer l-1
// publishes after its step), and computes every value with the layer's own equations. The order of
// nodes changes only as parallel-co-optimize changes it (non-members that depend on a member move
// after the group), and only when the result is topological with every earlier group contiguous.
// Bidirectional layers are refused: the backward direction of layer l-1 finishes time t last.
//
// Decision: the cost model's estimateWavefront (src/target/cost_model.cpp) on the PassContext's
// device: wavefront when it is at least kMinGain faster than the layers one after another and its
// layers*batch blocks fit on the device at once (co-residency: the launch is refused otherwise);
// on a CPU profile, when each layer's step on one core beats the layer's steps split over all
// cores (one fork/join per step) and there are no more layers than cores. A chain that is not
// made a wavefront is recorded as "none" with why.
//
// Golden tests: tests/ir/recurrent_wavefront*.mlir (host decisions on tests/ir/host2.profile).
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "magneto/passes/parallel_co_optimize.h"
#include "magneto/passes/pass.h"
#include "magneto/passes/passes.h"
#include "magneto/target/cost_model.h"
#include "magneto/target/device_profile.h"

#include "group_order.h"

namespace magneto {
namespace {

constexpr const char* kWavefrontPass = "recurrent-wavefront";
constexpr size_t kWavefrontMaxLayers = 4;  // mgk::kMaxWavefrontLayers (runtime/gpu/kernels/mg_kparams.h)

bool wavefrontIsRecurrent(const Node* n) {
  return n && (n->kind() == "LSTM" || n->kind() == "GRU" || n->kind() == "RNN");
}

// A layer the wavefront program runs: unidirectional, no sequence_lens, f32, rank-3 X.
bool wavefrontLayerOk(const Node* n, std::string& why) {
  if (n->group() >= 0) return why = "already in a group", false;
  if (n->attrs().getString("direction", "forward") == "bidirectional")
    return why = "bidirectional (the backward direction of the layer below finishes time t last)", false;
  if (n->numInputs() > 4 && n->input(4)) return why = "sequence_lens", false;
  if (!n->input(0) || !n->input(1) || !n->input(2) || n->input(0)->rank() != 3)
    return why = "X, W and R of rank 3 are required", false;
  for (size_t i = 0; i < n->numInputs(); ++i)
    if (n->input(i) && n->input(i)->dtype() != DType::kF32) return why = "not float32", false;
  if (n->numOutputs() < 1 || !n->output(0)) return why = "no Y", false;
  return true;
}

// The next layer of `n`: the node whose X is n's Y without its direction axis, through one
// Squeeze or Reshape (bytes unchanged), of the same kind, direction and layout. Or null.
Node* wavefrontNextLayer(const Node* n, Node** link) {
  const Value* y = n->output(0);
  const bool layout1 = n->attrs().getInt("layout", 0) != 0;
  if (!y || y->rank() != 4) return nullptr;
  std::vector<int64_t> squeezed = y->dims();
  squeezed.erase(squeezed.begin() + (layout1 ? 2 : 1));
  for (const Use& u : y->uses()) {
    Node* s = u.node;
    if (!s || (s->kind() != "Squeeze" && s->kind() != "Reshape") || u.operand != 0) continue;
    const Value* x = s->output(0);
    if (!x || x->dims() != squeezed) continue;
    for (const Use& v : x->uses()) {
      Node* m = v.node;
      if (!wavefrontIsRecurrent(m) || v.operand != 0 || m->kind() != n->kind()) continue;
      if (m->attrs().getString("direction", "forward") != n->attrs().getString("direction", "forward")) continue;
      if ((m->attrs().getInt("layout", 0) != 0) != layout1) continue;
      *link = s;
      return m;
    }
  }
  return nullptr;
}

std::string wavefrontUs(double v) { return fmt::format("{:.2f} us", v); }

class WavefrontFormer {
 public:
  WavefrontFormer(Graph& g, PassContext& ctx, const DeviceProfile& p) : g_(g), ctx_(ctx), p_(p) {}

  bool run() {
    bool changed = false;
    std::set<std::vector<std::string>> recorded;
    for (const auto& [id, pg] : g_.groups()) recorded.insert(pg.members);
    std::unordered_set<const Node*> seen;
    const std::vector<Node*> order = g_.nodes();
    for (Node* n : order) {
      if (!wavefrontIsRecurrent(n) || seen.count(n)) continue;
      std::string why;
      if (!wavefrontLayerOk(n, why)) continue;
      // The chain from n upwards.
      std::vector<Node*> layers{n}, links;
      for (Node* cur = n; layers.size() < kWavefrontMaxLayers;) {
        Node* link = nullptr;
        Node* next = wavefrontNextLayer(cur, &link);
        if (!next) break;
        std::string nextWhy;
        if (!wavefrontLayerOk(next, nextWhy)) {
          log(fmt::format("{} -> {}: not stacked: {}", cur->describe(), next->describe(), nextWhy));
          break;
        }
        layers.push_back(next);
        links.push_back(link);
        cur = next;
      }
      for (Node* l : layers) seen.insert(l);
      if (layers.size() < 2) continue;
      std::vector<std::string> names;
      std::vector<const Node*> cl;
      for (Node* l : layers) names.push_back(l->name()), cl.push_back(l);
      if (recorded.count(names)) continue;
      ParallelGroup pg;
      pg.members = names;
      pg.kernelsBefore = static_cast<int>(layers.size());
      WavefrontEstimate w = estimateWavefront(cl, p_);
      pg.modeledUsBefore = w.sequentialUs;
      std::string list;
      for (Node* l : layers) list += (list.empty() ? "" : ", ") + l->name();
      if (!w.valid) {
        pg.strategy = "none";
        pg.reason = "wavefront refused: " + w.reason;
        pg.kernelsAfter = pg.kernelsBefore;
        pg.modeledUsAfter = w.sequentialUs;
      } else if (w.latencyUs > w.sequentialUs * (1 - kMinGain)) {
        pg.strategy = "none";
        pg.reason = fmt::format("wavefront {} vs layer by layer {}: gain below kMinGain {:.0f}%",
                                wavefrontUs(w.latencyUs), wavefrontUs(w.sequentialUs), 100 * kMinGain);
        pg.kernelsAfter = pg.kernelsBefore;
        pg.modeledUsAfter = w.sequentialUs;
      } else {
        std::vector<Node*> members;
        for (size_t i = 0; i < layers.size(); ++i) {
          members.push_back(layers[i]);
          if (i < links.size()) members.push_back(links[i]);
        }
        std::string cwhy;
        if (!group_order::makeContiguous(g_, members, cwhy)) {
          pg.strategy = "none";
          pg.reason = "wavefront refused: " + cwhy;
          pg.kernelsAfter = pg.kernelsBefore;
          pg.modeledUsAfter = w.sequentialUs;
        } else {
          pg.strategy = "wavefront";
          if (p_.isGpu())
            pg.reason = fmt::format(
                "{} layers x {} steps: {} steps of {} (slowest layer's step + flag handshake), {} blocks "
                "co-resident (device holds {}); wavefront {} vs layer by layer {} ({:+.1f}%)",
                layers.size(), w.steps, w.steps + static_cast<int64_t>(layers.size()) - 1, wavefrontUs(w.stepUs),
                w.blocks, w.capacity, wavefrontUs(w.latencyUs), wavefrontUs(w.sequentialUs),
                100.0 * (w.latencyUs - w.sequentialUs) / w.sequentialUs);
          else
            pg.reason = fmt::format(
                "{} layers x {} steps, each layer on one of {} cores, {} per step (slowest layer's "
                "step on one core + handshake); pipelined {} vs layer by layer on all cores {} ({:+.1f}%)",
                layers.size(), w.steps, w.capacity, wavefrontUs(w.stepUs), wavefrontUs(w.latencyUs),
                wavefrontUs(w.sequentialUs), 100.0 * (w.latencyUs - w.sequentialUs) / w.sequentialUs);
          pg.kernelsAfter = 1;
          pg.modeledUsAfter = w.latencyUs;
          const int id = g_.addGroup(pg);
          for (Node* m : members) m->setGroup(id);
          log(fmt::format("#{} [{}]: wavefront: {}", id, list, pg.reason));
          changed = true;
          continue;
        }
      }
      log(fmt::format("[{}]: none: {}", list, pg.reason));
      g_.addGroup(pg);
      changed = true;
    }
    return changed;
  }

 private:
  void log(const std::string& line) const { ctx_.trace(kWavefrontPass, line); }

  Graph& g_;
  PassContext& ctx_;
  const DeviceProfile& p_;
};

class RecurrentWavefrontPass : public Pass {
 public:
  const char* name() const override { return kWavefrontPass; }
  const char* summary() const override {
    return "run stacked recurrent layers as one wavefront (layer l step t beside layer l-1 step t+1)";
  }
  Expected<bool> run(Graph& g, PassContext& ctx) override {
    if (!ctx.parallelOpt) return false;
    MG_ASSIGN_OR_RETURN(const DeviceProfile* p, ctx.profile());
    return WavefrontFormer(g, ctx, *p).run();
  }
};

}  // namespace

std::unique_ptr<Pass> makeRecurrentWavefrontPass() { return std::make_unique<RecurrentWavefrontPass>(); }

}  // namespace magneto
