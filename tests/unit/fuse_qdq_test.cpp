// fuse-qdq's account of what it left in float (floatBetweenQdq, printed by `magnetoc report`):
// each op between an activation's DequantizeLinear and a QuantizeLinear, with the reason, on cpu
// after the pass and on a GPU target (where the pass changes nothing).
#include <gtest/gtest.h>

#include <map>

#include "magneto/ir/text.h"
#include "magneto/passes/passes.h"

namespace magneto {
namespace {

const char* kQdq = R"(graph @q {
  input %xq : u8[1,2,4,4]
  const %xs : f32[] = dense<[0.0625]>
  const %xz : u8[] = dense<[128]>
  const %wq : i8[2,2,1,1] = dense<[1, -2, 3, -4]>
  const %wdq : i8[4,1,1,1] = dense<[3, -5, 2, 7]>
  const %ws4 : f32[4] = dense<[0.25, 0.25, 0.125, 0.5]>
  const %ws : f32[2] = dense<[0.25, 0.25]>
  const %bq : i32[2] = dense<[100, -37]>
  const %bs : f32[2] = dense<[0.015625, 0.015625]>
  const %ys : f32[] = dense<[0.5]>
  const %yz : u8[] = dense<[0]>
  %xd = DequantizeLinear(%xq, %xs, %xz)
  %w = DequantizeLinear(%wq, %ws) {axis = 0}
  %wd = DequantizeLinear(%wdq, %ws4) {axis = 0}
  %b = DequantizeLinear(%bq, %bs) {axis = 0}
  %c = Conv(%xd, %w, %b) loc("fused")
  %q = QuantizeLinear(%c, %ys, %yz)
  %c2 = Conv(%xd, %wd) {group = 2} loc("grouped")
  %q2 = QuantizeLinear(%c2, %ys, %yz)
  %s = Sigmoid(%xd) loc("sigmoid")
  %q3 = QuantizeLinear(%s, %ys, %yz)
  output %q
  output %q2
  output %q3
})";

std::map<std::string, QdqFloatOp> byNode(const std::vector<QdqFloatOp>& v) {
  std::map<std::string, QdqFloatOp> m;
  for (const QdqFloatOp& f : v) m[f.node] = f;
  return m;
}

TEST(FuseQdq, ReportsWhatStaysInFloatAndWhy) {
  auto g = parseGraph(kQdq, "<test>");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto changed = fuseQdq(**g, "cpu");
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  auto left = byNode(floatBetweenQdq(**g, "cpu"));
  EXPECT_EQ(left.size(), 2u);
  EXPECT_EQ(left.count("fused"), 0u) << "the fused Conv is a QLinearConv now";
  ASSERT_EQ(left.count("grouped"), 1u);  // two outputs per group: not depthwise
  EXPECT_NE(left["grouped"].why.find("grouped"), std::string::npos) << left["grouped"].why;
  ASSERT_EQ(left.count("sigmoid"), 1u);
  EXPECT_EQ(left["sigmoid"].why, "no integer program for Sigmoid");
}

TEST(FuseQdq, GpuTargetsKeepEveryQdqOpInFloat) {
  auto g = parseGraph(kQdq, "<test>");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto changed = fuseQdq(**g, "cuda");
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  auto left = byNode(floatBetweenQdq(**g, "cuda"));
  EXPECT_EQ(left.size(), 3u);
  for (const auto& [name, f] : left) EXPECT_NE(f.why.find("cuda target"), std::string::npos) << name << ": " << f.why;
}

}  // namespace
}  // namespace magneto
