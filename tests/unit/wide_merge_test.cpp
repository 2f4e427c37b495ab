// wide-merge and the MgChannelSlice offset views it relies on: the pass on a small graph, the
// op's shape inference and kernel, and the memory planner's byte-offset aliasing.
#include <gtest/gtest.h>

#include "op_test_util.h"
#include "magneto/analysis/memory_plan.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "magneto/passes/parallel_co_optimize.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {


const ArenaBuffer* bufferOf(const MemoryPlan& p, const Value* v) {
  for (const ArenaBuffer& b : p.buffers)
    if (b.value == v) return &b;
  return nullptr;
}

// A merged conv %m (1x24x5x5) read through three slices; %m is otherwise dead after step 0.
const char* kSliced = R"(graph @main {
  input %x : f32[1,6,5,5]
  const %w : f32[24,6,1,1] = random<1>
  %m = Conv(%x, %w)
  %a = MgChannelSlice(%m) {begin = 0, end = 8}
  %b = MgChannelSlice(%m) {begin = 8, end = 12}
  %c = MgChannelSlice(%m) {begin = 12, end = 24}
  %ta = Tanh(%a)
  %u = Relu(%x)
  %v = Relu(%u)
  %tc = Sigmoid(%c)
  %w2 = Relu(%v)
  %tb = Tanh(%b)
  output %ta, %tc, %tb, %w2
})";

TEST(WideMergePlan, SlicesAliasTheMergedBufferAtTheirChannelOffset) {
  auto g = testing::parseVerified(kSliced);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->aliasedViews.size(), 3u);
  for (const Node* n : plan->steps) EXPECT_NE(n->kind(), "MgChannelSlice");
  const Storage* m = plan->find(testing::valueNamed(*g, "m"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->kind, StorageKind::kArena);
  const int64_t plane = 5 * 5 * 4;  // bytes of one channel
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "a"))->offset, m->offset + 0 * plane);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "b"))->offset, m->offset + 8 * plane);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "c"))->offset, m->offset + 12 * plane);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "b"))->kind, StorageKind::kArena);
}

TEST(WideMergePlan, MergedResultLivesUntilTheLastSliceIsRead) {
  auto g = testing::parseVerified(kSliced);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const ArenaBuffer* m = bufferOf(*plan, testing::valueNamed(*g, "m"));
  ASSERT_TRUE(m);
  // Steps: m, ta, u, v, tc, w2, tb: %tb (step 6, reading %b) is the last reader.
  EXPECT_EQ(m->first, 0);
  EXPECT_EQ(m->last, 6);
  // No other buffer live meanwhile may overlap the merged bytes.
  for (const ArenaBuffer& b : plan->buffers) {
    if (&b == m || b.bytes == 0) continue;
    bool liveTogether = b.first <= m->last && m->first <= b.last;
    bool overlap = b.offset < m->offset + m->bytes && m->offset < b.offset + b.bytes;
    EXPECT_FALSE(liveTogether && overlap) << b.value->name();
  }
}

TEST(WideMergePlan, SliceOfBatchTwoOrOfAnInputIsACopyStep) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[2,6,5,5]
  const %w : f32[8,6,1,1] = random<1>
  %m = Conv(%x, %w)
  %a = MgChannelSlice(%m) {begin = 0, end = 4}
  %b = MgChannelSlice(%x) {begin = 2, end = 4}
  %ta = Tanh(%a)
  %tb = Tanh(%b)
  output %ta, %tb
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->aliasedViews.empty());
  int slices = 0;
  for (const Node* n : plan->steps) slices += n->kind() == "MgChannelSlice";
  EXPECT_EQ(slices, 2);
}

TEST(WideMergePlan, ViewOfASliceAddsNoExtraOffset) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[1,6,4,4]
  const %w : f32[8,6,1,1] = random<1>
  const %s : i64[2] = dense<[1, 64]>
  %m = Conv(%x, %w)
  %a = MgChannelSlice(%m) {begin = 4, end = 8}
  %r = Reshape(%a, %s)
  %t = Tanh(%r)
  output %t
})");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->aliasedViews.size(), 2u);
  EXPECT_EQ(plan->find(testing::valueNamed(*g, "r"))->offset, plan->find(testing::valueNamed(*g, "m"))->offset + 4 * 16 * 4);
}

TEST(MgChannelSlice, ShapeInferenceChecksTheRange) {
  auto bad = parseGraph(R"(graph @main {
  input %x : f32[1,6,4,4]
  %a = MgChannelSlice(%x) {begin = 4, end = 7}
  output %a
})", "test");
  if (bad.ok()) EXPECT_FALSE(verifyGraph(*bad.value()).ok());
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[1,6,4,4]
  %a = MgChannelSlice(%x) {begin = 2, end = 5}
  output %a
})");
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::valueNamed(*g, "a")->dims(), (Dims{1, 3, 4, 4}));
}

// On the cpu target the FLOPs rule decides (the 1x1 padded to 3x3 is within its limit).
TEST(WideMerge, MergesHeadsAndRecordsTheGroup) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[1,6,5,5]
  const %wa : f32[4,6,1,1] = random<1>
  const %wb : f32[8,6,3,3] = random<2>
  %a = Conv(%x, %wa) loc("a")
  %b = Conv(%x, %wb) {pads = [1, 1, 1, 1]} loc("b")
  %cat = Concat(%a, %b) {axis = 1}
  output %cat
})");
  ASSERT_TRUE(g);
  auto changed = wideMerge(*g);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(changed.value());
  EXPECT_TRUE(verifyGraph(*g).ok());
  ASSERT_EQ(g->groups().size(), 1u);
  const ParallelGroup& pg = g->groups().begin()->second;
  EXPECT_EQ(pg.strategy, "wide");
  EXPECT_EQ(pg.members, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(pg.kernelsBefore, 2);
  EXPECT_EQ(pg.kernelsAfter, 1);
  int convs = 0;
  for (const Node* n : g->nodes())
    if (n->kind() == "Conv") {
      ++convs;
      EXPECT_EQ(n->group(), g->groups().begin()->first);
      EXPECT_EQ(n->input(1)->dims(), (Dims{12, 6, 3, 3}));
      // The 1x1 weights sit at the centre tap, zeros around them.
      const float* w = n->input(1)->constant().data<float>();
      EXPECT_EQ(w[0], 0.f);
      EXPECT_NE(w[4], 0.f);
    }
  EXPECT_EQ(convs, 1);
}

// The same pair at batch 8 as graph outputs: each slice would be a copy, which the h200 prices
// above the joint region of the two convs. The set is declined as an advisory "none" group that
// claims nothing, so parallel-co-optimize still decides the two convs.
TEST(WideMerge, DeclinedMergeIsAdvisoryAndLeftToCoOptimize) {
  auto g = testing::parseVerified(R"(graph @main {
  input %x : f32[8,6,5,5]
  const %wa : f32[4,6,1,1] = random<1>
  const %wb : f32[8,6,3,3] = random<2>
  %a = Conv(%x, %wa) loc("a")
  %b = Conv(%x, %wb) {pads = [1, 1, 1, 1]} loc("b")
  output %a, %b
})");
  ASSERT_TRUE(g);
  auto changed = wideMerge(*g, "cuda");
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed.value());
  ASSERT_EQ(g->groups().size(), 1u);
  const ParallelGroup declined = g->groups().begin()->second;
  EXPECT_EQ(declined.strategy, "none");
  EXPECT_TRUE(declined.advisory);
  EXPECT_EQ(declined.members, (std::vector<std::string>{"a", "b"}));
  EXPECT_NE(declined.reason.find("declined: merged"), std::string::npos) << declined.reason;
  EXPECT_NE(declined.reason.find("2 slice copies"), std::string::npos) << declined.reason;
  for (const Node* n : g->nodes()) EXPECT_EQ(n->group(), -1);
  PassContext ctx;
  ctx.target = "cuda";
  auto co = parallelCoOptimize(*g, ctx);
  ASSERT_TRUE(co.ok());
  ASSERT_EQ(g->groups().size(), 2u);
  const ParallelGroup& decided = g->groups().rbegin()->second;
  EXPECT_FALSE(decided.advisory);
  EXPECT_EQ(decided.members, (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace magneto
