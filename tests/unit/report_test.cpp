// parallel-co-optimize on GPU profiles and `magnetoc report` (library calls and the CLI) on a small
// Inception-like ONNX model that the test writes itself (no git-ignored files needed).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "magneto/driver/process.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/interp/interpreter.h"
#include "magneto/driver/report.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "magneto/passes/parallel_co_optimize.h"

namespace magneto {
namespace {

namespace fs = std::filesystem;

const char* kInceptionIr = R"(graph @inception {
  input %x : f32[1,64,28,28]
  const %w1 : f32[32,64,1,1] = random<1>
  const %w3 : f32[32,32,3,3] = random<2>
  const %w5 : f32[32,32,5,5] = random<3>
  %y0 = Conv(%x, %w1) loc("b0")
  %y1a = Conv(%x, %w1) loc("b1a")
  %y1b = Conv(%y1a, %w5) {pads = [2, 2, 2, 2]} loc("b1b")
  %y2a = Conv(%x, %w1) loc("b2a")
  %y2b = Conv(%y2a, %w3) {pads = [1, 1, 1, 1]} loc("b2b")
  %y3a = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} loc("b3a")
  %c = Concat(%y0, %y1b, %y2b, %y3a) {axis = 1} loc("join")
  output %c
})";

std::unique_ptr<Graph> parse(const char* text) {
  auto g = parseGraph(text, "<test>");
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

TEST(ParallelCoOptimize, SmallInceptionHeadsAreJointOnGpus) {
  for (const char* device : {"h200", "mi250x"}) {
    auto g = parse(kInceptionIr);
    PassContext ctx;
    ctx.device = device;
    auto changed = parallelCoOptimize(*g, ctx);
    ASSERT_TRUE(changed.ok()) << changed.status().message();
    EXPECT_TRUE(*changed);
    ASSERT_TRUE(verifyGraph(*g).ok()) << printGraph(*g);
    ASSERT_FALSE(g->groups().empty());
    const ParallelGroup& heads = g->groups().begin()->second;
    EXPECT_EQ(heads.strategy, "joint") << device << ": " << heads.reason;
    EXPECT_EQ(heads.members, (std::vector<std::string>{"b0", "b1a", "b2a", "b3a"}));
    EXPECT_EQ(heads.kernelsBefore, 4);
    EXPECT_EQ(heads.kernelsAfter, 1);
    EXPECT_LT(heads.modeledUsAfter, heads.modeledUsBefore * (1 - kMinGain));
  }
}

// Two big GEMMs that read the same tensor each fill the GPU: no joint kernel (negative case).
TEST(ParallelCoOptimize, BigGemmsAreNotJoint) {
  const char* ir = R"(graph @big {
  input %x : f32[4096,4096]
  const %wa : f32[4096,4096] = random<1>
  const %wb : f32[4096,4096] = random<2>
  %a = MatMul(%x, %wa) loc("mm_a")
  %b = MatMul(%x, %wb) loc("mm_b")
  %s = Add(%a, %b) loc("join")
  output %s
})";
  for (const char* device : {"h200", "mi250x"}) {
    auto g = parse(ir);
    PassContext ctx;
    ctx.device = device;
    ASSERT_TRUE(parallelCoOptimize(*g, ctx).ok());
    ASSERT_EQ(g->groups().size(), 1u);
    const ParallelGroup& pg = g->groups().begin()->second;
    EXPECT_NE(pg.strategy, "joint") << device << ": " << pg.reason;
    EXPECT_FALSE(pg.reason.empty());
    EXPECT_EQ(pg.kernelsAfter, 2);
    EXPECT_EQ(pg.kernelsBefore, 2);
    // MI250X's model overlaps the two GEMMs' tails on streams (about 7%); H200's gains 3%, under
    // kMinStreamsGain.
    if (std::string(device) == "mi250x") {
      EXPECT_EQ(pg.strategy, "streams") << pg.reason;
      EXPECT_NE(pg.reason.find("is slower than streams"), std::string::npos) << pg.reason;
    }
    if (std::string(device) != "mi250x") {
      EXPECT_EQ(pg.strategy, "none") << pg.reason;
    }
  }
}

// On the host a joint region runs each member whole on one core. Two equal big GEMMs: one per
// core beats splitting each over both (kCpuIntraOpEfficiency), so they are joint. A big GEMM
// beside a small one: the region would leave one core idle for most of the big GEMM, so the
// members stay sequential, each split over the cores (negative case).
TEST(ParallelCoOptimize, HostJointOnlyWhenMembersBalance) {
  const char* balanced = R"(graph @balanced {
  input %x : f32[1024,1024]
  const %wa : f32[1024,1024] = random<1>
  const %wb : f32[1024,1024] = random<2>
  %a = MatMul(%x, %wa) loc("mm_a")
  %b = MatMul(%x, %wb) loc("mm_b")
  %s = Add(%a, %b) loc("join")
  output %s
})";
  const char* unbalanced = R"(graph @unbalanced {
  input %x : f32[1024,1024]
  const %wa : f32[1024,1024] = random<1>
  const %wb : f32[1024,16] = random<2>
  %a = MatMul(%x, %wa) loc("mm_a")
  %b = MatMul(%x, %wb) loc("mm_b")
  %s = Concat(%a, %b) {axis = 1} loc("join")
  output %s
})";
  for (auto [ir, want] : {std::pair{balanced, "joint"}, std::pair{unbalanced, "none"}}) {
    auto g = parse(ir);
    PassContext ctx;
    ctx.device = "host";
    ASSERT_TRUE(parallelCoOptimize(*g, ctx).ok());
    ASSERT_EQ(g->groups().size(), 1u);
    const ParallelGroup& pg = g->groups().begin()->second;
    EXPECT_EQ(pg.strategy, want) << pg.reason;
    EXPECT_EQ(pg.kernelsAfter, std::string(want) == "joint" ? 1 : 2) << pg.reason;
  }
}

TEST(ParallelCoOptimize, DeterministicAndIdempotent) {
  auto a = parse(kInceptionIr), b = parse(kInceptionIr);
  PassContext ctx;
  ctx.device = "h200";
  ASSERT_TRUE(parallelCoOptimize(*a, ctx).ok());
  ASSERT_TRUE(parallelCoOptimize(*b, ctx).ok());
  EXPECT_EQ(printGraph(*a), printGraph(*b));
  size_t groups = a->groups().size();
  auto again = parallelCoOptimize(*a, ctx);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(a->groups().size(), groups);
}

TEST(ParallelCoOptimize, UnknownDeviceIsAnError) {
  auto g = parse(kInceptionIr);
  PassContext ctx;
  ctx.device = "no-such-device";
  EXPECT_FALSE(parallelCoOptimize(*g, ctx).ok());
}

// An Inception-like ONNX model: four heads reading x, a second conv on two branches, a Concat.
std::string writeInceptionModel(const fs::path& dir) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("report_test");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("inception_tiny");
  auto valueInfo = [](onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  valueInfo(g->add_input(), "x", {1, 16, 14, 14});
  valueInfo(g->add_output(), "y", {1, 40, 14, 14});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(dist(rng));
  };
  weight("w0", {8, 16, 1, 1});
  weight("w1a", {8, 16, 1, 1});
  weight("w1b", {8, 8, 3, 3});
  weight("w2a", {4, 16, 1, 1});
  weight("w2b", {8, 4, 5, 5});
  auto node = [&](const std::string& op, const std::string& name, std::vector<std::string> in,
                  const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto ints = [](onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  node("Conv", "branch0/conv", {"x", "w0"}, "b0");
  node("Conv", "branch1/conv_a", {"x", "w1a"}, "b1a");
  ints(node("Conv", "branch1/conv_b", {"b1a", "w1b"}, "b1b"), "pads", {1, 1, 1, 1});
  node("Conv", "branch2/conv_a", {"x", "w2a"}, "b2a");
  ints(node("Conv", "branch2/conv_b", {"b2a", "w2b"}, "b2b"), "pads", {2, 2, 2, 2});
  onnx::NodeProto* pool = node("MaxPool", "branch3/pool", {"x"}, "b3");
  ints(pool, "kernel_shape", {3, 3});
  ints(pool, "pads", {1, 1, 1, 1});
  auto* cat = node("Concat", "concat", {"b0", "b1b", "b2b", "b3"}, "y");
  auto* axis = cat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  fs::path p = dir / "inception_tiny.onnx";
  std::ofstream f(p, std::ios::binary);
  m.SerializeToOstream(&f);
  return p.string();
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = driver::makeTempDir("magneto-report-test");
    ASSERT_TRUE(d.ok());
    dir_ = d.value();
    model_ = writeInceptionModel(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string model_;
};

TEST_F(ReportTest, JsonHasTheKeysAndJointGroups) {
  driver::ReportOptions o;
  o.compile.model = model_;
  o.compile.target = "cuda";
  o.compile.common.verbosity = 0;
  // Without wide-merge, so that the same-input Convs are left to the co-optimization.
  o.compile.passes = "canonicalize,fold,fuse-epilogue,fuse-elementwise,dce,parallel-co-optimize";
  o.compile.passesGiven = true;
  o.resources = driver::ResourceMode::kEstimate;  // the cost model's tiles; no nvcc in unit tests
  auto r = driver::buildReport(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device, "h200");
  // Every launch of the generated program, with the cost model's resources: the joint group's
  // launch names all its members, and its occupancy is the one of the largest member's tile.
  ASSERT_TRUE(r->hasLaunches);
  EXPECT_EQ(r->resources.source, "estimate");
  ASSERT_FALSE(r->resources.launches.empty());
  bool jointSeen = false;
  for (const driver::LaunchResources& l : r->resources.launches) {
    EXPECT_EQ(l.source, "estimate");
    EXPECT_GT(l.threads, 0) << l.name;
    EXPECT_GT(l.occupancy, 0.0) << l.name;
    EXPECT_LE(l.occupancy, 1.0) << l.name;
    EXPECT_FALSE(l.members.empty()) << l.name;
    jointSeen |= l.members.size() > 1;
  }
  EXPECT_TRUE(jointSeen);
  ASSERT_FALSE(r->groups.empty());
  EXPECT_EQ(r->groups[0].group.strategy, "joint") << r->groups[0].group.reason;
  EXPECT_LT(r->kernelsFused, r->kernelsUnfused);
  EXPECT_LT(r->latencyFusedUs, r->latencyUnfusedUs);
  std::string json = driver::reportJson(*r);
  for (const char* key : {"\"model\"", "\"device\"", "\"kernels_unfused\"", "\"kernels_fused\"",
                          "\"modeled_latency_us\"", "\"unfused\"", "\"fused\"", "\"groups\"",
                          "\"id\"", "\"members\"", "\"strategy\"", "\"reason\"",
                          "\"modeled_us_before\"", "\"modeled_us_after\"", "\"branch0/conv\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << " missing in\n" << json;
  std::string dot = driver::graphDot(*r->graph);
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("#0 joint"), std::string::npos) << dot;
  EXPECT_NE(dot.find("rankdir=TB"), std::string::npos);
  std::string text = driver::formatReport(*r);
  EXPECT_NE(text.find("kernel launches"), std::string::npos) << text;
}

TEST_F(ReportTest, NoParallelOptHasNoGroups) {
  driver::ReportOptions o;
  o.compile.model = model_;
  o.compile.parallelOpt = false;
  o.compile.common.verbosity = 0;
  auto r = driver::buildReport(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->device, "host");
  EXPECT_TRUE(r->groups.empty());
  EXPECT_EQ(r->kernelsFused, r->kernelsUnfused);
  EXPECT_DOUBLE_EQ(r->latencyFusedUs, r->latencyUnfusedUs);
}

// Only the schedule changes: the reference interpreter gives bit-identical outputs before and
// after the pass, on the generated model and on the small zoo models when they are present.
TEST_F(ReportTest, NumericsUnchanged) {
  std::vector<std::string> models = {model_};
  for (const char* z : {"inception_block_small", "multi_tower_small", "mha_block_small"}) {
    fs::path p = fs::path(MAGNETO_SOURCE_DIR) / "models/zoo" / z / "model.onnx";
    if (fs::exists(p)) models.push_back(p.string());
  }
  for (const std::string& m : models) {
    for (const char* device : {"host", "h200"}) {
      auto g = importOnnx(m, ImportOptions{});
      ASSERT_TRUE(g.ok()) << m << ": " << g.status().message();
      auto passes = parsePipeline("canonicalize,fold,fold-batchnorm,fold-affine,fold-conv-scale,fold-pad,fuse-epilogue,"
                                  "fuse-elementwise,dce");
      ASSERT_TRUE(passes.ok());
      PassContext ctx;
      ctx.device = device;
      ASSERT_TRUE(runPipeline(**g, passes.value(), ctx).ok());
      std::unique_ptr<Graph> before = (*g)->clone();
      auto changed = parallelCoOptimize(**g, ctx);
      ASSERT_TRUE(changed.ok()) << changed.status().message();
      ASSERT_TRUE(verifyGraph(**g).ok()) << m;
      std::map<std::string, Tensor> inputs;
      uint64_t seed = 1;
      for (const Value* in : before->inputs()) inputs[in->name()] = randomTensor(in->type(), seed++);
      auto a = interpret(*before, inputs), b = interpret(**g, inputs);
      ASSERT_TRUE(a.ok() && b.ok()) << m;
      ASSERT_EQ(a->size(), b->size());
      for (const auto& [name, t] : *a) {
        const Tensor& u = b->at(name);
        ASSERT_EQ(t.type(), u.type()) << m << " " << name;
        for (int64_t i = 0; i < t.numel(); ++i)
          ASSERT_EQ(t.floatAt(i), u.floatAt(i)) << m << " " << device << " " << name << "[" << i << "]";
      }
    }
  }
}

// The CLI, when magnetoc sits next to this test binary (both go to the build's bin/).
TEST_F(ReportTest, Cli) {
  fs::path magnetoc = fs::read_symlink("/proc/self/exe").parent_path() / "magnetoc";
  if (!fs::exists(magnetoc)) GTEST_SKIP() << "no magnetoc next to the test binary";
  std::string json = (dir_ / "r.json").string(), dot = (dir_ / "r.dot").string();
  // --resources estimate: no nvcc here (the gpu stage checks the ptxas path on the zoo).
  std::vector<std::string> argv = {magnetoc.string(), "report", model_, "--target", "cuda",
                                   "--device", "h100", "--json", json, "--dot", dot, "-q",
                                   "--resources", "estimate"};
  bool haveDot = std::system("command -v dot >/dev/null 2>&1") == 0;
  std::string svg = (dir_ / "r.svg").string();
  if (haveDot) argv.insert(argv.end(), {"--svg", svg});
  auto pr = driver::runProcess(argv);
  ASSERT_TRUE(pr.ok());
  ASSERT_EQ(pr->exitCode, 0) << pr->output;
  EXPECT_NE(pr->output.find("modeled latency"), std::string::npos) << pr->output;
  auto text = driver::readFile(json);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\"device\": \"h100\""), std::string::npos) << *text;
  EXPECT_NE(text->find("\"kernels_fused\""), std::string::npos);
  for (const char* key : {"\"launches\": [", "\"spill_bytes\"", "\"smem_bytes\"", "\"occupancy\"",
                          "\"source\": \"estimate\""})
    EXPECT_NE(text->find(key), std::string::npos) << key << " missing in\n" << *text;
  EXPECT_NE(pr->output.find("lowest occupancy"), std::string::npos) << pr->output;
  EXPECT_TRUE(fs::exists(dot));
  if (haveDot) {
    auto s = driver::readFile(svg);
    ASSERT_TRUE(s.ok());
    EXPECT_NE(s->find("<svg"), std::string::npos);
  }
  // A bad device names the problem and fails.
  auto bad = driver::runProcess({magnetoc.string(), "report", model_, "--device", "nope", "-q"});
  ASSERT_TRUE(bad.ok());
  EXPECT_NE(bad->exitCode, 0);
}

}  // namespace
}  // namespace magneto
