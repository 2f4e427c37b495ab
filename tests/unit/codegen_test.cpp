// Code generator tests: the memory planner (no two live intermediates share bytes, views alias,
// 64-byte alignment, outputs and copies), template rendering, and determinism of whole packages
// (the same graph written twice gives byte-identical files).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "op_test_util.h"
#include "magneto/codegen/cpu_emitter.h"
#include "magneto/analysis/memory_plan.h"
#include "magneto/codegen/package.h"
#include "magneto/codegen/template.h"
#include "magneto/driver/compare.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "magneto/target/device_profile.h"

namespace magneto {
namespace {

namespace fs = std::filesystem;


// Every pair of arena buffers live at the same step occupies disjoint bytes.
void expectNoLiveOverlap(const MemoryPlan& plan) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const ArenaBuffer& a = plan.buffers[i];
    EXPECT_EQ(a.offset % kTensorAlignment, 0) << a.value->name();
    EXPECT_LE(a.offset + a.bytes, plan.arenaBytes) << a.value->name();
    for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
      const ArenaBuffer& b = plan.buffers[j];
      bool liveTogether = a.first <= b.last && b.first <= a.last;
      bool share = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      if (a.bytes && b.bytes && liveTogether)
        EXPECT_FALSE(share) << a.value->name() << " and " << b.value->name() << " overlap";
    }
  }
}

const char* kChain = R"(graph @main {
  input %x : f32[4,100]
  %a = Relu(%x)
  %b = Relu(%a)
  %c = Relu(%b)
  %d = Relu(%c)
  %e = Add(%d, %b)
  %f = Relu(%e)
  output %f
})";

TEST(MemoryPlan, NoTwoLiveIntermediatesOverlap) {
  auto g = testing::parseVerified(kChain);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->steps.size(), 6u);
  EXPECT_EQ(plan->buffers.size(), 5u);  // a..e; f is the graph output
  expectNoLiveOverlap(plan.value());
  // 400 floats = 1600 bytes, aligned to 1600 (25 * 64). %b lives across %c and %d, so at most
  // three buffers are live at once.
  EXPECT_LE(plan->arenaBytes, 3 * 1600);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "f"))->kind, StorageKind::kOutput);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "x"))->kind, StorageKind::kInput);
}

TEST(MemoryPlan, ResultNeverSharesBytesWithItsOperand) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[16]
  %a = Relu(%x)
  %b = Relu(%a)
  %c = Relu(%b)
  output %c
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok());
  EXPECT_NE(plan->find(testing::valueNamed(*g, "a"))->offset, plan->find(testing::valueNamed(*g, "b"))->offset);
  EXPECT_EQ(plan->arenaBytes, 128);  // two 64-byte slots, reused
}

// The members of a joint group run as one GPU kernel: a member's result must not take the bytes
// of another member's operand even though, in schedule order, that operand's last use came first.
// (Found by the CPU emulation of the cuda target on Inception v3: without this, %d reused %a.)
TEST(MemoryPlan, JointGroupMembersShareOneLifetimeStep) {
  const char* text = R"(graph @main {
  input %x : f32[16]
  %a = Relu(%x)
  %b = Sigmoid(%x)
  parallel #0 "joint" "test" {
    %c = Relu(%a)
    %d = Relu(%b)
  }
  %e = Add(%c, %d)
  output %e
})";
  auto g = testing::parseVerified(text);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  int64_t a = plan->find(testing::valueNamed(*g, "a"))->offset;
  int64_t b = plan->find(testing::valueNamed(*g, "b"))->offset;
  int64_t c = plan->find(testing::valueNamed(*g, "c"))->offset;
  int64_t d = plan->find(testing::valueNamed(*g, "d"))->offset;
  EXPECT_NE(d, a);
  EXPECT_NE(c, b);
  EXPECT_NE(c, d);
  expectNoLiveOverlap(plan.value());

  // The same graph without the group: the planner may reuse %a's bytes for %d (one step later).
  std::string plain = text;
  plain.replace(plain.find("  parallel #0"), plain.find("{\n    %c") + 2 - plain.find("  parallel #0"), "");
  plain.replace(plain.find("  }\n  %e"), 4, "");
  auto g2 = testing::parseVerified(plain);
  ASSERT_TRUE(g2);
  auto plan2 = planMemory(*g2);
  ASSERT_TRUE(plan2.ok());
  EXPECT_EQ(plan2->find(testing::valueNamed(*g2, "d"))->offset,
            plan2->find(testing::valueNamed(*g2, "a"))->offset);
}

TEST(MemoryPlan, ViewOfIntermediateAliases) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[2,8]
  const %s : i64[2] = dense<[4, 4]>
  %a = Relu(%x)
  %r = Reshape(%a, %s)
  %b = Relu(%x)
  %c = Relu(%b)
  %d = Relu(%r)
  output %c, %d
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->aliasedViews.size(), 1u);
  EXPECT_EQ(plan->steps.size(), 4u);
  const Storage* a = plan->find(testing::valueNamed(*g, "a"));
  const Storage* r = plan->find(testing::valueNamed(*g, "r"));
  ASSERT_TRUE(a && r);
  EXPECT_EQ(r->kind, StorageKind::kArena);
  EXPECT_EQ(r->offset, a->offset);
  // %a's buffer lives until %d reads the alias (the last step), so %b may not take its bytes.
  for (const ArenaBuffer& b : plan->buffers)
    if (b.value == testing::valueNamed(*g, "a")) EXPECT_EQ(b.last, 3);
  EXPECT_NE(plan->find(testing::valueNamed(*g, "b"))->offset, a->offset);
  expectNoLiveOverlap(plan.value());
}

TEST(MemoryPlan, ViewsOfInputsAndViewsThatAreOutputsRun) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[2,8]
  const %s : i64[2] = dense<[4, 4]>
  %r = Reshape(%x, %s)
  %a = Relu(%r)
  %o = Reshape(%a, %s)
  output %o
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->aliasedViews.empty());
  EXPECT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "o"))->kind, StorageKind::kOutput);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "s"))->kind, StorageKind::kWeights);
}

// Concat elision: operands whose producers can write straight into their slice of the result.
TEST(MemoryPlan, ConcatOperandsAreWrittenInPlace) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[1,16,4,4]
  %a = Relu(%x)
  %b = Sigmoid(%x)
  %c = Concat(%a, %b) {axis = 1}
  %d = Relu(%c)
  %e = Tanh(%a)
  output %d, %e
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const Value* c = testing::valueNamed(*g, "c");
  ASSERT_EQ(plan->concats.elided.size(), 1u);
  EXPECT_EQ(plan->concats.elided[0], c->producer());
  EXPECT_EQ(plan->steps.size(), 4u);  // a, b, d, e: the Concat runs no step
  int64_t at = plan->find(c)->offset;
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "a"))->offset, at);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "b"))->offset, at + 16 * 16 * 4);
  // One buffer: the Concat's result, live from a's step to e's (e reads a, which lives inside it).
  ASSERT_EQ(plan->buffers.size(), 1u);
  EXPECT_EQ(plan->buffers[0].value, c);
  EXPECT_EQ(plan->buffers[0].first, 0);
  EXPECT_EQ(plan->buffers[0].last, 3);
  expectNoLiveOverlap(plan.value());
}

TEST(MemoryPlan, ConcatElisionLeavesWhatCannotMove) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[1,16,4,4]
  input %s : f32[1,1,3,3]
  input %xb : f32[2,16,4,4]
  %a = Relu(%x)
  %c1 = Concat(%a, %x) {axis = 1}
  %o1 = Relu(%c1)
  %p = Relu(%s)
  %q = Sigmoid(%s)
  %c2 = Concat(%p, %q) {axis = 1}
  %o2 = Relu(%c2)
  %r = Relu(%x)
  %c3 = Concat(%r, %r) {axis = 1}
  %o3 = Relu(%c3)
  %u = Relu(%xb)
  %v = Sigmoid(%xb)
  %c4 = Concat(%u, %v) {axis = 1}
  %o4 = Relu(%c4)
  %c5 = Concat(%u, %v) {axis = 0}
  %o5 = Relu(%c5)
  %w = Relu(%x)
  %c6 = Concat(%w, %a) {axis = 1}
  %o6 = Relu(%c6)
  output %o1, %o2, %o3, %o4, %o5, %o6
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto in = [&](const char* v, const char* concat) {
    return plan->concats.isInPlace(testing::valueNamed(*g, concat)->producer(), testing::valueNamed(*g, v));
  };
  EXPECT_TRUE(in("a", "c1"));    // a graph input beside it is copied by the Concat, which still runs
  EXPECT_FALSE(in("x", "c1"));
  EXPECT_TRUE(in("p", "c2"));    // offset 0
  EXPECT_FALSE(in("q", "c2"));   // 36 bytes in: not 64-byte aligned
  EXPECT_FALSE(in("r", "c3"));   // read twice by one Concat
  EXPECT_FALSE(in("u", "c4"));   // batch 2 along channels: not one contiguous range
  EXPECT_FALSE(in("v", "c4"));
  EXPECT_TRUE(in("u", "c5"));    // along the batch axis it is
  EXPECT_TRUE(in("v", "c5"));
  EXPECT_FALSE(in("a", "c6"));   // already placed inside c1
  EXPECT_TRUE(in("w", "c6"));
  EXPECT_EQ(plan->concats.elided.size(), 1u);  // c5
  int concatSteps = 0;
  for (const Node* n : plan->steps) concatSteps += n->kind() == "Concat";
  EXPECT_EQ(concatSteps, 5);
  expectNoLiveOverlap(plan.value());
}

TEST(MemoryPlan, OutputsThatNoStepWritesAreCopies) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[3]
  const %k : f32[3] = dense<[1.0, 2.0, 3.0]>
  %a = Add(%x, %k)
  output %a, %x, %k, %a
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->copies.size(), 3u);
  EXPECT_EQ(plan->copies[0].output, 1);
  EXPECT_EQ(plan->copies[1].output, 2);
  EXPECT_EQ(plan->copies[2].output, 3);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "a"))->index, 0);
  EXPECT_EQ(plan->weightsBytes, 64);
}

TEST(Template, RendersKeysAndSections) {
  TemplateVars v{{"NAME", "m"}, {"ON", "1"}, {"OFF", "0"}, {"ROWS", "r1\nr2\n"}};
  auto r = renderTemplate("a {{NAME}} ${{{NAME}}_X} {{#ON}}yes{{/ON}}{{^ON}}no{{/ON}}\n"
                          "  {{#OFF}}\nhidden\n  {{/OFF}}\n  {{ROWS}}\nend {{{x}}}\n",
                          v, "t");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value(), "a m ${m_X} yes\nr1\nr2\nend {{{x}}}\n");
  EXPECT_FALSE(renderTemplate("{{MISSING}}", v, "t").ok());
  EXPECT_FALSE(renderTemplate("{{#ON}} open", v, "t").ok());
}

TEST(CpuEmitter, EscapesStrings) {
  EXPECT_EQ(cStringLiteral("a\"b\\c?\n"), "\"a\\\"b\\\\c\\?\\012\"");
  EXPECT_EQ(commentSafe("x\ny\\"), "x?y?");
  EXPECT_TRUE(isValidPackageName("tiny_1"));
  EXPECT_FALSE(isValidPackageName("1tiny"));
  EXPECT_FALSE(isValidPackageName("a-b"));
  EXPECT_EQ(packageNameFromPath("/m/resnet-50.v1.onnx"), "resnet_50_v1");
  EXPECT_EQ(packageNameFromPath("3d.onnx"), "m_3d");
}

// A joint group becomes one region row (its steps, consecutive) and its members' pickup order,
// biggest first; steps outside groups get none.
TEST(CpuEmitter, JointGroupIsOneRegionBiggestFirst) {
  const char* text = R"(graph @regions {
  input %x : f32[4,64]
  const %wa : f32[64,8] = random<1>
  const %wb : f32[64,64] = random<2>
  const %wc : f32[64,32] = random<3>
  parallel #0 "joint" "test" {
    %a = MatMul(%x, %wa) loc("small")
    %b = MatMul(%x, %wb) loc("big")
    %c = MatMul(%x, %wc) loc("middle")
  }
  %ab = Concat(%a, %b, %c) {axis = 1} loc("join")
  %r = Relu(%ab)
  output %r
})";
  auto g = testing::parseVerified(text);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  TemplateVars vars;
  ASSERT_TRUE(emitCpuProgram(*g, *plan, vars).ok());
  EXPECT_EQ(vars["NUM_REGIONS"], "1");
  EXPECT_NE(vars["REGION_TABLE"].find("{0, 3, 0},  // region 0: steps #0..#2 of joint group 0"),
            std::string::npos)
      << vars["REGION_TABLE"];
  EXPECT_NE(vars["REGION_ORDER"].find("/* region 0 */ 1, 2, 0,"), std::string::npos)
      << vars["REGION_ORDER"];
  // Without the group: no region.
  auto flat = testing::parseVerified(R"(graph @flat {
  input %x : f32[4,64]
  const %wa : f32[64,8] = random<1>
  %a = MatMul(%x, %wa)
  output %a
})");
  ASSERT_TRUE(flat);
  auto flatPlan = planMemory(*flat);
  ASSERT_TRUE(flatPlan.ok());
  TemplateVars flatVars;
  ASSERT_TRUE(emitCpuProgram(*flat, *flatPlan, flatVars).ok());
  EXPECT_EQ(flatVars["NUM_REGIONS"], "0");
  EXPECT_EQ(flatVars["REGION_TABLE"], "");
}

// Each step carries the cost model's thread count (StepDesc::threads): a step too small to split
// runs on the calling thread (1), a small GEMM on a few threads, a big one on the whole pool (0).
// Without a host profile every step may use the whole pool.
TEST(CpuEmitter, StepsCarryTheirThreadCount) {
  auto g = testing::parseVerified(R"(graph @threads {
  input %x : f32[4,100]
  input %a : f32[64,64]
  input %b : f32[256,512]
  const %w : f32[512,512] = random<1>
  %r = Relu(%x) loc("tiny")
  %m = MatMul(%a, %a) loc("small")
  %big = MatMul(%b, %w) loc("big")
  output %r
  output %m
  output %big
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // 2 cores at 64 GFLOP/s each: a GEMM runs at 0.6 of it, so the 64x64x64 MatMul (0.52 MFLOP)
  // is 13.7 us of one core, 6 chunks of 2 us; the Relu's 400 elements are far under one chunk.
  auto host = parseDeviceProfile(R"(name = test_host
kind = cpu
vendor = intel
arch = x86-64
description = two cores
sm_count = 2
clock_ghz = 2.0
fp32_flops_per_cycle = 32
fp32_tflops = 0.128
mem_bandwidth_gbs = 20
l2_mb = 4
launch_overhead_us = 5
)", "test_host.profile");
  ASSERT_TRUE(host.ok()) << host.status().message();
  TemplateVars vars;
  ASSERT_TRUE(emitCpuProgram(*g, *plan, vars, {}, {}, &host.value()).ok());
  const std::string& steps = vars["STEP_TABLE"];
  EXPECT_NE(steps.find("\"tiny\", \"\", 0, 1, 1, 1, 400, 3200},  // #0 tiny"), std::string::npos) << steps;
  EXPECT_NE(steps.find("(one thread)"), std::string::npos) << steps;
  EXPECT_NE(steps.find("\"small\", \"\", 2, 2, 1, 6, 524288,"), std::string::npos) << steps;
  EXPECT_NE(steps.find("\"big\", \"\", 5, 2, 1, 0, 1.34218e+08,"), std::string::npos) << steps;
  TemplateVars noHost;
  ASSERT_TRUE(emitCpuProgram(*g, *plan, noHost).ok());
  EXPECT_NE(noHost["STEP_TABLE"].find("\"tiny\", \"\", 0, 1, 1, 0, 400,"), std::string::npos)
      << noHost["STEP_TABLE"];
}

// KV-cache outputs (docs/ABI.md, "KV-cache binding"): the stacked per-layer form (GPT-2's export:
// Concat_0 of Unsqueezes of Concat(Gather(past, j), new_j)) and the direct form are found, with
// their axis, pieces and skipped steps; layers out of order, a static cache axis and an output that
// is no Concat of a past input are not.
TEST(CpuEmitter, FindsKvCacheOutputs) {
  auto g = testing::parseVerified(R"(graph @kv {
  symbol T [1, 4]
  symbol P [0, 8]
  input %new0 : f32[1,2,4,4] as [1,2,T,4]
  input %new1 : f32[1,2,4,4] as [1,2,T,4]
  input %past : f32[2,1,2,8,4] as [2,1,2,P,4]
  input %dpast : f32[1,2,8,4] as [1,2,P,4]
  input %spast : f32[1,2,3,4]
  input %snew : f32[1,2,1,4]
  const %i0 : i64[] = dense<[0]>
  const %i1 : i64[] = dense<[1]>
  const %ax : i64[1] = dense<[0]>
  %g0 : f32[1,2,8,4] as [1,2,P,4] = Gather(%past, %i0) {axis = 0}
  %g1 : f32[1,2,8,4] as [1,2,P,4] = Gather(%past, %i1) {axis = 0}
  %f0 : f32[1,2,12,4] as [1,2,P+T,4] = Concat(%g0, %new0) {axis = 2}
  %f1 : f32[1,2,12,4] as [1,2,P+T,4] = Concat(%g1, %new1) {axis = 2}
  %u0 : f32[1,1,2,12,4] as [1,1,2,P+T,4] = Unsqueeze(%f0, %ax)
  %u1 : f32[1,1,2,12,4] as [1,1,2,P+T,4] = Unsqueeze(%f1, %ax)
  %present : f32[2,1,2,12,4] as [2,1,2,P+T,4] = Concat(%u0, %u1) {axis = 0}
  %v0 : f32[1,1,2,12,4] as [1,1,2,P+T,4] = Unsqueeze(%f0, %ax)
  %v1 : f32[1,1,2,12,4] as [1,1,2,P+T,4] = Unsqueeze(%f1, %ax)
  %swapped : f32[2,1,2,12,4] as [2,1,2,P+T,4] = Concat(%v1, %v0) {axis = 0}
  %direct : f32[1,2,12,4] as [1,2,P+T,4] = Concat(%dpast, %new0) {axis = 2}
  %static : f32[1,2,4,4] = Concat(%spast, %snew) {axis = 2}
  %relu : f32[1,2,12,4] as [1,2,P+T,4] = Relu(%f0)
  output %present, %swapped, %direct, %static, %relu
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::vector<KvCache> kvs = findKvCaches(*g, *plan);
  ASSERT_EQ(kvs.size(), 2u);
  EXPECT_EQ(kvs[0].output, 0);
  EXPECT_EQ(kvs[0].input, 2);
  EXPECT_EQ(kvs[0].axis, 3);
  ASSERT_EQ(kvs[0].pieces.size(), 2u);
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(kvs[0].pieces[j].slab, j);
    EXPECT_EQ(kvs[0].pieces[j].axis, 2);
    EXPECT_EQ(kvs[0].pieces[j].full->name(), j ? "f1" : "f0");
    EXPECT_EQ(kvs[0].pieces[j].fresh->name(), j ? "new1" : "new0");
    // %swapped's Unsqueezes are aliased views of f0 and f1 (they read the arena): written densely
    EXPECT_TRUE(kvs[0].pieces[j].dense) << j;
  }
  // The stack and the Gathers whose only reader is their Concat are skipped.
  std::vector<std::string> skipped;
  for (const Node* n : kvs[0].skipped) skipped.push_back(n->output(0)->name());
  EXPECT_NE(std::find(skipped.begin(), skipped.end(), "present"), skipped.end());
  EXPECT_NE(std::find(skipped.begin(), skipped.end(), "g0"), skipped.end());
  EXPECT_NE(std::find(skipped.begin(), skipped.end(), "g1"), skipped.end());
  EXPECT_EQ(kvs[1].output, 2);
  EXPECT_EQ(kvs[1].input, 3);
  EXPECT_EQ(kvs[1].axis, 2);
  ASSERT_EQ(kvs[1].pieces.size(), 1u);
  EXPECT_EQ(kvs[1].pieces[0].full->name(), "direct");
  EXPECT_TRUE(kvs[1].skipped.empty());
  // The emitted tables name them; a graph without symbols has none.
  TemplateVars vars;
  ASSERT_TRUE(emitCpuProgram(*g, *plan, vars).ok());
  EXPECT_EQ(vars["KV"], "1");
  EXPECT_NE(vars["KV_TABLE"].find("output 0 %present appends to input 2 %past along axis 3"), std::string::npos)
      << vars["KV_TABLE"];
  EXPECT_NE(vars["KV_TABLE"].find("output 2 %direct appends to input 3 %dpast along axis 2"), std::string::npos)
      << vars["KV_TABLE"];
}

std::map<std::string, std::string> readTree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    files[fs::relative(e.path(), dir).string()] = ss.str();
  }
  return files;
}

TEST(Package, DeterministicAndComplete) {
  const char* text = R"(graph @main {
  input %x : f32[2,8]
  const %s : i64[2] = dense<[4, 4]>
  const %w : f32[2,8] = random<3>
  %a = Relu(%x)
  %b = Add(%a, %w)
  %c = Reshape(%b, %s)
  %d = Relu(%c)
  output %d
})";
  fs::path root = fs::temp_directory_path() / ("magneto_codegen_test_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::map<std::string, std::string> trees[2];
  for (int i = 0; i < 2; ++i) {
    auto g = testing::parseVerified(text);
    ASSERT_TRUE(g);
    auto plan = planMemory(*g);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    PackageOptions o;
    o.name = "tiny";
    o.model = "tiny.mlir";
    o.passes = "fold,dce";
    fs::path out = root / std::to_string(i);
    auto sum = writePackage(*g, plan.value(), o, out.string());
    ASSERT_TRUE(sum.ok()) << sum.status().message();
    EXPECT_EQ(sum->steps, 3);
    EXPECT_EQ(sum->aliasedViews, 1);
    trees[i] = readTree(out);
  }
  EXPECT_EQ(trees[0].size(), trees[1].size());
  for (const auto& [name, content] : trees[0]) {
    ASSERT_TRUE(trees[1].count(name)) << name;
    EXPECT_EQ(content, trees[1].at(name)) << name << " differs between two writes";
  }
  for (const char* f : {"tiny.h", "tiny.cpp", "tiny_weights.bin", "tiny_weights.S", "CMakeLists.txt",
                        "README.md", "report.json", "tiny_runner.cpp", "tiny-config.cmake", "tiny.py",
                        "runtime/mg_runtime.h"})
    EXPECT_TRUE(trees[0].count(f)) << f;
  const std::string& cpp = trees[0]["tiny.cpp"];
  EXPECT_NE(cpp.find("{\"Add\", "), std::string::npos);
  EXPECT_EQ(cpp.find("{{NAME}}"), std::string::npos);
  // Only %w: the shape operand of the aliased Reshape is read by no step.
  EXPECT_EQ(trees[0]["tiny_weights.bin"].size(), 64u);
  EXPECT_EQ(trees[0]["report.json"].find(root.string()), std::string::npos);  // no absolute paths
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

TEST(Package, RejectsBadNames) {
  auto g = testing::parseVerified(kChain);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok());
  PackageOptions o;
  o.name = "bad-name";
  auto sum = writePackage(*g, plan.value(), o, (fs::temp_directory_path() / "magneto_bad").string());
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.status().code(), ErrorCode::kBadInput);
}

}  // namespace
}  // namespace magneto

// `magnetoc check`'s comparison: tolerance formula, NaN equals NaN, integers exact, shape and
// dtype mismatches reported as problems.
namespace magneto {
namespace {
TEST(CheckCompare, ToleranceNaNAndExactIntegers) {
  auto f = [](std::vector<float> v) { return Tensor::fromVector(DType::kF32, {(int64_t)v.size()}, v); };
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(driver::compareTensors(f({1.0f, nan}), f({1.0005f, nan}), 1e-3, 1e-4).ok);
  auto bad = driver::compareTensors(f({1.0f, 2.0f}), f({1.0f, 2.1f}), 1e-3, 1e-4);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.firstBad, 1);
  EXPECT_FALSE(driver::compareTensors(f({nan}), f({0.0f}), 1e-3, 1e-4).ok);
  auto i = [](std::vector<int64_t> v) { return Tensor::fromVector(DType::kI64, {(int64_t)v.size()}, v); };
  EXPECT_TRUE(driver::compareTensors(i({3, 4}), i({3, 4}), 1, 1).ok);
  EXPECT_FALSE(driver::compareTensors(i({3, 4}), i({3, 5}), 1, 1).ok);  // exact despite tolerances
  auto shape = driver::compareTensors(f({1.0f}), f({1.0f, 2.0f}), 1e-3, 1e-4);
  EXPECT_FALSE(shape.ok);
  EXPECT_FALSE(shape.problem.empty());
}

// --unordered-rows: detections (boxes [n,4], scores [n], labels [n]) whose near-equal scores put
// them in another order pair up; a row no computed row matches stays unpaired and fails.
TEST(CheckCompare, UnorderedRowsPairDetectionsInAnyOrder) {
  auto boxes = [](std::vector<float> v) {
    return Tensor::fromVector(DType::kF32, {(int64_t)v.size() / 4, 4}, v);
  };
  auto f = [](std::vector<float> v) { return Tensor::fromVector(DType::kF32, {(int64_t)v.size()}, v); };
  auto i = [](std::vector<int64_t> v) { return Tensor::fromVector(DType::kI64, {(int64_t)v.size()}, v); };
  // Expected rows 0, 1, 2; computed 0, 2, 1 (rows 1 and 2 swapped, a score 1e-7 apart).
  Tensor eb = boxes({0, 0, 1, 1, 2, 2, 3, 3, 5, 5, 6, 6}), es = f({0.9f, 0.5f, 0.4999999f});
  Tensor el = i({1, 2, 3});
  Tensor gb = boxes({0, 0, 1, 1, 5, 5, 6, 6, 2, 2, 3, 3}), gs = f({0.9f, 0.4999999f, 0.5f});
  Tensor gl = i({1, 3, 2});
  int64_t moved = -1;
  auto perm = driver::matchRows({&gb, &gs, &gl}, {&eb, &es, &el}, {1e-3, 1e-3, 1e-3},
                                {1e-4, 1e-4, 1e-4}, &moved);
  EXPECT_EQ(perm, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(moved, 2);
  EXPECT_FALSE(driver::compareTensors(gl, el, 1e-3, 1e-4).ok);
  EXPECT_TRUE(driver::compareTensors(driver::permuteRows(gb, perm), eb, 1e-3, 1e-4).ok);
  EXPECT_TRUE(driver::compareTensors(driver::permuteRows(gl, perm), el, 1e-3, 1e-4).ok);
  // A label that differs: that row pairs with nothing, and the reordered comparison fails.
  Tensor wrong = i({1, 3, 4});
  perm = driver::matchRows({&gb, &gs, &wrong}, {&eb, &es, &el}, {1e-3, 1e-3, 1e-3},
                           {1e-4, 1e-4, 1e-4}, &moved);
  ASSERT_EQ(perm.size(), 3u);
  EXPECT_FALSE(driver::compareTensors(driver::permuteRows(wrong, perm), el, 1e-3, 1e-4).ok);
  // Row counts that disagree: no pairing (the shapes are reported).
  Tensor two = f({0.9f, 0.5f});
  EXPECT_TRUE(driver::matchRows({&gb, &two}, {&eb, &es}, {1e-3, 1e-3}, {1e-4, 1e-4}, &moved).empty());
}
}  // namespace
}  // namespace magneto
