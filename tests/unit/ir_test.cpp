// IR core: graph building, use lists, textual round trip, verifier.
#include <gtest/gtest.h>

#include "magneto/ir/graph.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"

using namespace magneto;

TEST(Graph, UseListsFollowRewrites) {
  Graph g;
  Value* x = g.addInput("x", {DType::kF32, {2, 3}});
  Value* c = g.addConstant("c", Tensor::zeros({DType::kF32, {2, 3}}));
  Node* n = g.createNode("Add", {x, c}, {{DType::kF32, {2, 3}}}, {}, "add0");
  g.addOutput(n->output(0));
  ASSERT_EQ(x->uses().size(), 1u);
  g.replaceAllUsesWith(x, c);
  EXPECT_TRUE(x->uses().empty());
  EXPECT_EQ(c->uses().size(), 2u);
}

TEST(Graph, TopoSortIsStableAndDetectsOrder) {
  Graph g;
  Value* x = g.addInput("x", {DType::kF32, {4}});
  Node* a = g.createNode("Relu", {x}, {{DType::kF32, {4}}}, {}, "a");
  Node* b = g.createNode("Relu", {a->output(0)}, {{DType::kF32, {4}}}, {}, "b");
  g.moveBefore(b, a);  // out of order
  ASSERT_TRUE(g.topoSort());
  EXPECT_EQ(g.nodes()[0], a);
  EXPECT_EQ(g.nodes()[1], b);
}

TEST(Text, ParsePrintRoundTrip) {
  const char* text = R"(graph @t {
  input %x : f32[1,4]
  const %s : i64[2] = dense<[2, 2]>
  const %"w::1" : f32[1,4] = random<3>
  %y : f32[1,4] = Mul(%x, %"w::1") loc("mul/0")
  %z : f32[2,2] = Reshape(%y, %s)
  output %z
}
)";
  auto g = parseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::string once = printGraph(*g.value());
  auto g2 = parseGraph(once);
  ASSERT_TRUE(g2.ok()) << g2.status().message();
  EXPECT_EQ(printGraph(*g2.value()), once);
  EXPECT_TRUE(verifyGraph(*g2.value()).ok());
}

TEST(Text, ErrorsNameLineAndColumn) {
  auto g = parseGraph("graph @t {\n  input %x : f32[2]\n  %y = Relu(%nope)\n  output %y\n}\n", "t.mlir");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("t.mlir:3:"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("undefined value %nope"), std::string::npos);
}

TEST(Tensor, CheckedNumelCatchesOverflow) {
  EXPECT_FALSE(checkedNumel({int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_FALSE(checkedNumel({-1, 3}).ok());
  EXPECT_EQ(checkedNumel({2, 3}).value(), 6);
}
