// ONNX frontend: optional values resolved on import (src/frontend/onnx_optional.cpp), what an
// optional graph input holds (ImportOptions::optionalInputs), OptionalProto test data, and the
// queries `magnetoc check` makes. Models and data come from ONNX's backend node tests (Debian's
// libonnx-testdata, installed by scripts/setup.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "frontend_test_util.h"
#include "magneto/frontend/onnx_import.h"

namespace magneto {
namespace {

const std::string kNodeTests = "/usr/share/libonnx-testdata/data/node/";

// The folder of backend test `name`, or "" (and the caller skips, saying why) when it is missing.
std::string nodeTest(const std::string& name) {
  const std::string dir = kNodeTests + name;
  return std::filesystem::is_directory(dir) ? dir : "";
}

#define NODE_TEST_OR_SKIP(var, name)                                                         \
  const std::string var = nodeTest(name);                                                    \
  if (var.empty()) GTEST_SKIP() << "SKIPPED: " << kNodeTests << name                         \
                                << " is missing (Debian's libonnx-testdata; scripts/setup.sh)"

OptionalInput tensorInput(DType dt, Dims dims) {
  OptionalInput in;
  in.kind = OptionalInput::Kind::kTensor;
  in.types.push_back(TensorType{dt, std::move(dims)});
  return in;
}

bool constantBool(const Value* v) {
  EXPECT_TRUE(v->isConstant()) << v->name();
  return v->isConstant() && v->constant().data<uint8_t>()[0] != 0;
}

TEST(FrontendOptional, HasElementIsWhatTheInputHolds) {
  NODE_TEST_OR_SKIP(dir, "test_optional_has_element");
  ImportOptions empty;
  empty.optionalInputs["optional_input"] = OptionalInput{};
  auto g = importOnnx(dir + "/model.onnx", empty);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE((*g)->inputs().empty());  // an empty optional is no package input
  ASSERT_EQ((*g)->outputs().size(), 1u);
  EXPECT_FALSE(constantBool((*g)->outputs()[0]));

  ImportOptions held;
  held.optionalInputs["optional_input"] = tensorInput(DType::kF32, {4});
  g = importOnnx(dir + "/model.onnx", held);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "optional_input");
  EXPECT_EQ((*g)->inputs()[0]->dims(), (Dims{4}));
  EXPECT_TRUE(constantBool((*g)->outputs()[0]));

  // Not given: a tensor of the declared type, f32[4].
  g = importOnnx(dir + "/model.onnx", {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->type().str(), "f32[4]");
}

TEST(FrontendOptional, GetElementPassesTheTensorOnAndRefusesEmpty) {
  NODE_TEST_OR_SKIP(dir, "test_optional_get_element");
  ImportOptions held;
  held.optionalInputs["optional_input"] = tensorInput(DType::kF32, {4});
  auto g = importOnnx(dir + "/model.onnx", held);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->outputs().size(), 1u);
  EXPECT_EQ((*g)->outputs()[0]->dims(), (Dims{4}));
  EXPECT_FALSE((*g)->outputs()[0]->isConstant());

  ImportOptions empty;
  empty.optionalInputs["optional_input"] = OptionalInput{};
  frontend_test::expectError(importOnnx(dir + "/model.onnx", empty).status(), ErrorCode::kBadInput,
                             {"(OptionalGetElement): the optional 'optional_input' is empty"});

  // Given a tensor of another element type than the optional declares.
  ImportOptions wrong;
  wrong.optionalInputs["optional_input"] = tensorInput(DType::kI64, {4});
  frontend_test::expectError(importOnnx(dir + "/model.onnx", wrong).status(), ErrorCode::kBadInput,
                             {"input 'optional_input' is an optional of FLOAT, but it is given i64[4]"});
}

TEST(FrontendOptional, SequenceInsideAnOptionalIsOneInputPerElement) {
  NODE_TEST_OR_SKIP(dir, "test_optional_get_element_sequence");
  ImportOptions opts;
  OptionalInput in;
  in.kind = OptionalInput::Kind::kSequence;
  in.types = {TensorType{DType::kI32, {4}}, TensorType{DType::kI32, {4}}};
  opts.optionalInputs["optional_input"] = in;
  auto g = importOnnx(dir + "/model.onnx", opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 2u);
  EXPECT_EQ((*g)->inputs()[1]->name(), "optional_input[1]");
  ASSERT_EQ((*g)->outputs().size(), 2u);  // the sequence output, one per element
  EXPECT_EQ((*g)->outputs()[0]->name(), "output[0]");

  // Given a tensor where the optional holds a sequence.
  ImportOptions wrong;
  wrong.optionalInputs["optional_input"] = tensorInput(DType::kI32, {4});
  frontend_test::expectError(importOnnx(dir + "/model.onnx", wrong).status(), ErrorCode::kBadInput,
                             {"is an optional of a sequence, but it is given a tensor"});
}

TEST(FrontendOptional, ReadsOptionalProtoFiles) {
  NODE_TEST_OR_SKIP(empty, "test_optional_has_element_empty");
  NODE_TEST_OR_SKIP(tensor, "test_optional_get_element");
  NODE_TEST_OR_SKIP(seq, "test_optional_get_element_sequence");
  std::string name;
  auto e = readOptionalProtoFile(empty + "/test_data_set_0/input_0.pb", &name);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(name, "optional_input");
  EXPECT_EQ(e->kind, OptionalInput::Kind::kEmpty);
  EXPECT_TRUE(e->values.empty());

  auto t = readOptionalProtoFile(tensor + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kind, OptionalInput::Kind::kTensor);
  ASSERT_EQ(t->values.size(), 1u);
  EXPECT_EQ(t->values[0].type().str(), "f32[4]");

  auto s = readOptionalProtoFile(seq + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->kind, OptionalInput::Kind::kSequence);
  ASSERT_EQ(s->values.size(), 1u);
  EXPECT_EQ(s->values[0].type().str(), "i32[4]");

}

TEST(FrontendOptional, CheckSeesOptionalPortsAndTheConditionThatDecidesPresence) {
  NODE_TEST_OR_SKIP(identity, "test_identity_opt");
  NODE_TEST_OR_SKIP(ifOpt, "test_if_opt");
  auto ins = onnxModelInputs(identity + "/model.onnx");
  ASSERT_TRUE(ins.ok()) << ins.status().message();
  ASSERT_EQ(ins->size(), 1u);
  EXPECT_TRUE((*ins)[0].optional);
  EXPECT_FALSE((*ins)[0].sequence);
  auto outs = onnxModelOptionalOutputs(identity + "/model.onnx");
  ASSERT_TRUE(outs.ok()) << outs.status().message();
  EXPECT_EQ(*outs, std::vector<bool>{true});
  // Whether the If's optional output holds a sequence depends on the condition: check binds it.
  auto sdi = shapeDeterminingInputs(ifOpt + "/model.onnx");
  ASSERT_TRUE(sdi.ok()) << sdi.status().message();
  EXPECT_EQ(*sdi, std::vector<std::string>{"cond"});
}

}  // namespace
}  // namespace magneto
