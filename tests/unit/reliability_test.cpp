// Regression tests of the reliability work (docs/RELIABILITY.md): the from-memory import entry of
// the fuzzer, byte-size limits that keep offsets inside int64, folding of shape-only ops on inputs
// too big to allocate. The bad-model corpus (tests/bad_models) covers the same paths through
// magnetoc; these pin the library-level behaviour.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "magneto/analysis/memory_plan.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/interp/fold_node.h"
#include "magneto/ir/text.h"
#include "magneto/passes/passes.h"

using namespace magneto;

namespace {

const std::string kFrontendDir = std::string(MAGNETO_SOURCE_DIR) + "/tests/data/frontend/";

std::string readBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void expectError(const Status& s, ErrorCode code, const std::string& part) {
  ASSERT_FALSE(s.ok()) << "expected an error containing '" << part << "'";
  EXPECT_EQ(static_cast<int>(s.code()), static_cast<int>(code)) << s.message();
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(ImportFromMemory, SameGraphAsFromTheFile) {
  const std::string path = kFrontendDir + "valid.onnx";
  std::string bytes = readBytes(path);
  ASSERT_FALSE(bytes.empty());
  auto fromFile = importOnnx(path, {});
  auto fromMemory = importOnnxFromMemory(bytes.data(), bytes.size(), "valid.onnx", {});
  ASSERT_TRUE(fromFile.ok()) << fromFile.status().message();
  ASSERT_TRUE(fromMemory.ok()) << fromMemory.status().message();
  EXPECT_EQ(printGraph(**fromFile), printGraph(**fromMemory));
}

TEST(ImportFromMemory, ErrorsNameTheGivenName) {
  auto empty = importOnnxFromMemory("", 0, "bytes.onnx", {});
  expectError(empty.status(), ErrorCode::kBadInput, "bytes.onnx: no bytes");
  std::string bytes = readBytes(kFrontendDir + "valid.onnx");
  auto cut = importOnnxFromMemory(bytes.data(), bytes.size() / 2, "cut.onnx", {});
  expectError(cut.status(), ErrorCode::kBadInput, "cut.onnx: not a valid ONNX model");
}

TEST(ImportFromMemory, ExternalDataIsRefusedWithoutAFolder) {
  // external_ok.onnx reads external_ok.bin next to it: from memory there is no "next to it".
  std::string bytes = readBytes(kFrontendDir + "external_ok.onnx");
  auto g = importOnnxFromMemory(bytes.data(), bytes.size(), "ext.onnx", {});
  expectError(g.status(), ErrorCode::kBadInput, "the model was given as bytes");
}

TEST(TextConstants, IntegersAreExactAndRangeChecked) {
  // int64 values past 2^53 once went through a double; out-of-range values were converted with
  // undefined behaviour (found by fuzz_ir_parser).
  auto g = parseGraph(R"(graph @g {
  const %a : i64[3] = dense<[9007199254740993, -9223372036854775808, 7]>
  const %b : u16[2] = dense<[65535, 2.0]>
  output %a, %b
})");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->findValue("a")->constant().toInts(),
            (std::vector<int64_t>{9007199254740993, INT64_MIN, 7}));
  EXPECT_EQ((*g)->findValue("b")->constant().toInts(), (std::vector<int64_t>{65535, 2}));
  std::string printed = printGraph(**g);
  auto again = parseGraph(printed);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
  EXPECT_EQ(printGraph(**again), printed);
  for (const char* bad : {"i8[1] = dense<[300]>", "i64[1] = dense<[1e300]>", "u8[1] = dense<[-1]>",
                          "i32[1] = dense<[0.5]>", "bool[1] = splat<2>", "i64[1] = dense<[nan]>"}) {
    auto e = parseGraph(std::string("graph @g {\n  const %c : ") + bad + "\n  output %c\n}");
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) EXPECT_EQ(static_cast<int>(e.status().code()), 1) << e.status().message();
  }
  // Inline constants are materialized while parsing: their size is bounded.
  auto big = parseGraph("graph @g {\n  const %c : f32[1048576,1024] = splat<1>\n  output %c\n}");
  expectError(big.status(), ErrorCode::kBadInput, "too large for splat<>");
}

TEST(TextParser, ResultNamedTwiceInOneNodeIsAnError) {
  // Once an internal check (exit 3) in the graph's naming; found by fuzz_ir_parser.
  auto g = parseGraph("graph @g {\n  input %x : f32[4]\n  %d, %d = Split(%x)\n  output %d\n}");
  expectError(g.status(), ErrorCode::kBadInput, "value %d is defined twice");
}

TEST(TensorLimits, ByteSizeStaysWithinInt64) {
  EXPECT_EQ(*checkedByteSize({DType::kF32, {1 << 20, 1 << 20, 1 << 20}}), int64_t{1} << 62);
  // 2^62 elements pass checkedNumel, but 2^62 doubles are 2^65 bytes.
  auto f64 = checkedByteSize({DType::kF64, {int64_t{1} << 31, int64_t{1} << 31}});
  expectError(f64.status(), ErrorCode::kBadInput, "more than 2^62 bytes");
  expectError(checkedByteSize({DType::kF32, {-1, 2}}).status(), ErrorCode::kBadInput,
              "negative dimension");
}

TEST(TensorLimits, ShapeOfAnInputTooBigToAllocateFolds) {
  // Folding Shape once allocated a zero-filled stand-in for its operand: 2^52 bytes here.
  auto g = parseGraph(R"(graph @g {
  input %x : f32[1048576,1048576,1024]
  %s = Shape(%x)
  output %s
})");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto changed = foldConstants(**g);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const Value* s = (*g)->outputs().at(0);
  ASSERT_TRUE(s->isConstant());
  EXPECT_EQ(s->constant().toInts(), (std::vector<int64_t>{1048576, 1048576, 1024}));
}

// A 410-byte Loop folding a 16 MiB ConstantOfShape in each of its 1024 iterations once held 16 GiB
// of folded constants before the import ended (killed for memory; found by fuzz_onnx_import). The
// folds past the budget stay nodes. A 49 MiB budget keeps the test fast; the default budget's size
// is checked below without folding hundreds of MiB.
TEST(TensorLimits, FoldingOnImportStopsAtItsBudget) {
  ImportOptions opts;
  opts.foldBudgetBytes = 49 << 20;  // three 16 MiB folds and the small ones (Identity of c)
  auto g = importOnnx(kFrontendDir + "loop_fold_budget.onnx", opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  int64_t constantBytes = 0;
  for (const Value* v : (*g)->constants()) constantBytes += *checkedByteSize(v->type());
  EXPECT_LE(constantBytes, int64_t{49} << 20);
  int unfolded = 0;
  for (const Node* n : (*g)->nodes()) unfolded += n->kind() == "ConstantOfShape";
  EXPECT_EQ(unfolded, 1024 - 3);
  EXPECT_EQ((*g)->outputs().at(1)->type().dims, (Dims{1024, 4 << 20}));
}

TEST(TensorLimits, FoldBudgetDoublesTheConstantsOrReaches256MiB) {
  auto small = parseGraph("graph @g {\n  const %c : f32[1024] = splat<1>\n  output %c\n}");
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(FoldBudget::forGraph(**small).left(), (int64_t{256} << 20) - 4096);
  auto big = parseGraph("graph @g {\n  input %x : f32[1]\n  const %c : f32[60000000] = splat<1>\n"
                        "  %y = Add(%x, %c)\n  output %y\n}");
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(FoldBudget::forGraph(**big).left(), int64_t{240000000});
  FoldBudget b(100);
  EXPECT_TRUE(b.take(60));
  EXPECT_FALSE(b.take(41));
  EXPECT_EQ(b.left(), 40);
}

TEST(TensorLimits, ArenaPastInt64IsAnErrorNotAnOverflow) {
  // Two live 2^62-byte intermediates: the second would start at byte 2^62.
  auto g = parseGraph(R"(graph @g {
  input %x : f32[1]
  const %s : i64[1] = dense<[1152921504606846976]>
  %a = Expand(%x, %s)
  %b = Expand(%x, %s)
  %y = Add(%a, %b)
  output %y
})");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto plan = planMemory(**g);
  expectError(plan.status(), ErrorCode::kBadInput, "more than 2^62 bytes of memory at once");
}

}  // namespace
