// ONNX frontend: reading, validation errors, opsets, inputs and shapes, initializers, graph
// structure, whole models, TensorProto files. Models come from tests/data/frontend/make_models.py.
// Tests that need ops from the op families skip (with the missing op named) until those land.
// Control flow: frontend_control_flow_test.cpp; legacy op forms: frontend_normalize_test.cpp.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <filesystem>
#include <fstream>

#include "../../src/frontend/onnx_normalize.h"
#include "magneto/frontend/onnx_import.h"
#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "frontend_test_util.h"

using namespace magneto;
using namespace magneto::frontend_test;

// --- Reading -------------------------------------------------------------------------------------

TEST(Frontend, MissingFileIsAnError) {
  expectError(importStatus("no_such_model.onnx"), ErrorCode::kBadInput,
              {"no_such_model.onnx", "no such file"});
}

TEST(Frontend, EmptyFileIsAnError) {
  expectError(importStatus("empty.onnx"), ErrorCode::kBadInput, {"empty.onnx", "empty"});
}

TEST(Frontend, RandomBytesAreNotAModel) {
  expectError(importStatus("random.onnx"), ErrorCode::kBadInput,
              {"random.onnx: not a valid ONNX model (protobuf parse failed)"});
}

TEST(Frontend, TruncatedFileIsAnError) {
  expectError(importStatus("truncated.onnx"), ErrorCode::kBadInput,
              {"truncated.onnx: not a valid ONNX model"});
}

TEST(Frontend, FilesOver2GiBAreRefusedBeforeReading) {
  TempDir tmp;
  fs::path p = tmp.path / "huge.onnx";
  std::ofstream(p).put('x');
  std::error_code ec;
  fs::resize_file(p, (uintmax_t{1} << 31) + 16, ec);  // sparse: no disk space used
  if (ec) GTEST_SKIP() << "cannot create a sparse file here: " << ec.message();
  auto g = importOnnx(p.string(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(g.status().message().find("limited to 2 GiB"), std::string::npos)
      << g.status().message();
}

TEST(Frontend, DirectoryIsAnError) {
  auto g = importOnnx(kDir, {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("directory"), std::string::npos) << g.status().message();
}

// --- Opsets and domains --------------------------------------------------------------------------

TEST(Frontend, UnknownOpIsUnsupportedAndNamesTheNode) {
  // Opset 18: libonnx's checker does not run, so our op registry is what refuses it.
  ImportInfo info;
  expectError(importStatus("unknown_op.onnx", {}, &info), ErrorCode::kUnsupported,
              {"unknown_op.onnx: ", "node 'foo' (FooBar)", "FooBar"});
  EXPECT_FALSE(info.checkerRan);
  EXPECT_EQ(info.opsetVersion, 18);
}

TEST(Frontend, UnknownOpInCheckedOpsetIsRejectedByTheChecker) {
  expectError(importStatus("unknown_op_checked.onnx"), ErrorCode::kBadInput,
              {"unknown_op_checked.onnx: ONNX checker", "FooBar"});
}

TEST(Frontend, UnknownDomainIsUnsupported) {
  expectError(importStatus("unknown_domain.onnx"), ErrorCode::kUnsupported,
              {"unknown_domain.onnx: ", "node 'fg' (FusedGemm)", "com.microsoft"});
}

TEST(Frontend, OpsetNewerThanSupported) {
  expectError(importStatus("opset24.onnx"), ErrorCode::kUnsupported,
              {"opset 24 is newer than Magneto supports (max 23)"});
}

TEST(Frontend, Opset22Imports) {
  ImportInfo info;
  Status s = importStatus("opset22.onnx", {}, &info);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(info.opsetVersion, 22);
}

TEST(Frontend, Opset18ImportsUnchecked) {
  ImportInfo info;
  Status s = importStatus("opset18.onnx", {}, &info);
  EXPECT_FALSE(info.checkerRan);
  EXPECT_EQ(info.opsetVersion, 18);
  ASSERT_FALSE(info.notes.empty());
  SKIP_UNLESS_OPS({"Relu"});
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(Frontend, OldOpsetIsUpgradedByTheVersionConverter) {
  ImportInfo info;
  Status s = importStatus("opset6.onnx", {}, &info);
  EXPECT_TRUE(info.versionConverted) << s.message();
  EXPECT_EQ(info.opsetVersion, 6);
  SKIP_UNLESS_OPS({"Relu", "Add"});
  EXPECT_TRUE(s.ok()) << s.message();
}

// An If on a graph input imports both branches (tests/unit/frontend_control_flow_test.cpp has the
// selections); here both give x, so the If is x, and its condition decides no shape.
TEST(Frontend, IfOnDataImportsBothBranches) {
  auto g = importOnnx(model("subgraph.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (const Node* n : (*g)->nodes()) EXPECT_NE(n->kind(), "If");
  auto names = shapeDeterminingInputs(model("subgraph.onnx"));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_TRUE(names->empty());
}

// --- Inputs and shapes ---------------------------------------------------------------------------

TEST(Frontend, SymbolicDimensionNeedsShape) {
  expectError(importStatus("symbolic.onnx"), ErrorCode::kBadInput,
              {"symbolic.onnx: input 'x' has symbolic dimension 'batch' (dim 0); fix it with "
               "--shape x=1x3x8x8"});
}

TEST(Frontend, ShapeOptionFixesSymbolicDimension) {
  SKIP_UNLESS_OPS({"Relu"});
  ImportOptions opts;
  opts.shapes["x"] = {2, 3, 8, 8};
  auto g = importOnnx(model("symbolic.onnx"), opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->inputs()[0]->dims(), (Dims{2, 3, 8, 8}));
  EXPECT_EQ((*g)->outputs()[0]->dims(), (Dims{2, 3, 8, 8}));
}

TEST(Frontend, ShapeOptionWithWrongRank) {
  ImportOptions opts;
  opts.shapes["x"] = {1, 3};
  expectError(importStatus("valid.onnx", opts), ErrorCode::kBadInput,
              {"valid.onnx: ", "has rank 2, but input 'x' has rank 4"});
}

TEST(Frontend, ShapeOptionForUnknownNameOrInitializer) {
  ImportOptions opts;
  opts.shapes["nope"] = {1};
  expectError(importStatus("valid.onnx", opts), ErrorCode::kBadInput,
              {"--shape names 'nope', which is not a graph input (inputs: x)"});
  ImportOptions opts2;
  opts2.shapes["b"] = {4};
  expectError(importStatus("valid.onnx", opts2), ErrorCode::kBadInput,
              {"'b', which is an initializer"});
}

// --- Initializers --------------------------------------------------------------------------------

TEST(Frontend, InitializerTooShort) {
  expectError(importStatus("init_short.onnx"), ErrorCode::kBadInput,
              {"init_short.onnx: ", "initializer 'w'", "20 bytes", "24 bytes"});
}

TEST(Frontend, InitializerTooLongTypedData) {
  expectError(importStatus("init_long_typed.onnx"), ErrorCode::kBadInput,
              {"init_long_typed.onnx: ", "initializer 'w'", "7 elements", "needs 6"});
}

TEST(Frontend, ExternalDataEscapingTheFolder) {
  expectError(importStatus("external_escape.onnx"), ErrorCode::kBadInput,
              {"external_escape.onnx: ", "initializer 'w'", "outside the model's folder"});
}

TEST(Frontend, ExternalDataMissingFile) {
  expectError(importStatus("external_missing.onnx"), ErrorCode::kBadInput,
              {"external_missing.onnx: ", "no_such_file.bin"});
}

TEST(Frontend, ExternalDataSymlinkEscapingTheFolder) {
  TempDir tmp;
  fs::create_directories(tmp.path / "m");
  fs::copy_file(model("external_ok.onnx"), tmp.path / "m" / "external_ok.onnx");
  fs::copy_file(model("external_ok.bin"), tmp.path / "outside.bin");
  fs::create_symlink(tmp.path / "outside.bin", tmp.path / "m" / "external_ok.bin");
  auto g = importOnnx((tmp.path / "m" / "external_ok.onnx").string(), {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("outside the model's folder"), std::string::npos)
      << g.status().message();
}

TEST(Frontend, ExternalDataIsRead) {
  SKIP_UNLESS_OPS({"Add"});
  auto g = importOnnx(model("external_ok.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Value* w = (*g)->findValue("w");
  ASSERT_TRUE(w && w->isConstant());
  EXPECT_EQ(w->constant().toInts(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

// --- Graph structure -----------------------------------------------------------------------------

TEST(Frontend, CycleIsAnError) {
  expectError(importStatus("cycle.onnx"), ErrorCode::kBadInput,
              {"cycle.onnx: the graph has a cycle", "node 'a' (Add) -> 'p' -> node 'b' (Relu)",
               "node 'b' (Relu) -> 'q' -> node 'a' (Add)"});
}

TEST(Frontend, UndefinedInputIsAnError) {
  expectError(importStatus("undefined_input.onnx"), ErrorCode::kBadInput,
              {"undefined_input.onnx: node 'adder' (Add) reads 'ghost'"});
}

TEST(Frontend, DuplicateOutputIsAnError) {
  expectError(importStatus("duplicate_output.onnx"), ErrorCode::kBadInput,
              {"node 'r2' (Neg) writes 'y', which node 'r1' (Relu) already writes"});
}

TEST(Frontend, UnsortedGraphIsSorted) {
  SKIP_UNLESS_OPS({"Relu", "Neg"});
  auto g = importOnnx(model("unsorted.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto nodes = (*g)->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->name(), "first");
  EXPECT_EQ(nodes[1]->name(), "second");
}

// --- Whole models --------------------------------------------------------------------------------

TEST(Frontend, ValidModelImports) {
  SKIP_UNLESS_OPS({"Relu", "Add", "Mul"});
  ImportInfo info;
  auto g = importOnnx(model("valid.onnx"), {}, &info);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(info.checkerRan);
  EXPECT_EQ(info.opsetVersion, 9);
  EXPECT_EQ(info.producer, "make_models.py");
  // The old-style input 'b' is an initializer, not a graph input.
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "x");
  std::string text = printGraph(**g);
  EXPECT_NE(text.find("input %x : f32[1,3,4,4]"), std::string::npos) << text;
  EXPECT_NE(text.find("= Relu(%x)"), std::string::npos) << text;
  EXPECT_NE(text.find("= Add(%r, %b)"), std::string::npos) << text;
  EXPECT_NE(text.find("%y : f32[1,3,4,4] = Mul(%a, %two)"), std::string::npos) << text;
  EXPECT_NE(text.find("loc(\"relu1\")"), std::string::npos) << text;
  Status v = verifyGraph(**g);
  EXPECT_TRUE(v.ok()) << v.message();
}

TEST(Frontend, ShapeGatherReshapeFoldsOnImport) {
  SKIP_UNLESS_OPS({"Shape", "Gather", "Unsqueeze", "Concat", "Reshape"}, true);
  auto g = importOnnx(model("shape_reshape.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto nodes = (*g)->nodes();
  ASSERT_EQ(nodes.size(), 1u) << printGraph(**g);
  EXPECT_EQ(nodes[0]->kind(), "Reshape");
  ASSERT_TRUE(nodes[0]->input(1)->isConstant());
  EXPECT_EQ(nodes[0]->input(1)->constant().toInts(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ((*g)->outputs()[0]->dims(), (Dims{2, 12}));
}

TEST(Frontend, ShapeDeterminingInputsFollowsValues) {
  SKIP_UNLESS_OPS({"Reshape"});
  auto names = shapeDeterminingInputs(model("shape_input.onnx"));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"target"}));
  // Shape reads only x's shape: nothing to bind.
  auto none = shapeDeterminingInputs(model("shape_reshape.onnx"));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->empty());
  auto backend = shapeDeterminingInputs(
      "/usr/share/libonnx-testdata/data/node/test_reshape_reordered_all_dims/model.onnx");
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  EXPECT_EQ(*backend, (std::vector<std::string>{"shape"}));
}

TEST(Frontend, Dft20AxisOperandBecomesTheAttribute) {
  // dft20.onnx: DFT-20 with its axis absent (default -2), an initializer (1) and a graph input.
  auto names = shapeDeterminingInputs(model("dft20.onnx"));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"ax"}));
  expectError(importStatus("dft20.onnx"), ErrorCode::kUnsupported,
              {"node 'd2' (DFT)", "axis operand 'ax' must be a constant"});
  ImportOptions opts;
  opts.bindings["ax"] = Tensor::fromVector<int64_t>(DType::kI64, {}, {2});
  auto g = importOnnx(model("dft20.onnx"), opts);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto nodes = (*g)->nodes();
  ASSERT_EQ(nodes.size(), 3u);
  const int64_t want[] = {-2, 1, 2};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(nodes[i]->numInputs(), 1u) << i;  // the axis operand is gone
    EXPECT_EQ(nodes[i]->attrs().getInt("axis", 99), want[i]) << i;
    EXPECT_EQ(nodes[i]->output(0)->dims(), (Dims{1, 3, 4, 2})) << i;
  }
}

TEST(Frontend, ShapeDeterminingInputsOfTheSignalOps) {
  // The inputs that decide the signal ops' result shapes are bound by `magnetoc check`; the
  // signal itself, the window and MelWeightMatrix's rate and edges stay run-time inputs.
  const std::string dir = "/usr/share/libonnx-testdata/data/node/";
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {"test_hannwindow", {"x"}},
      {"test_stft", {"frame_step", "frame_length"}},
      {"test_stft_with_window", {"frame_step"}},
      {"test_dft", {}},
      {"test_melweightmatrix", {"num_mel_bins", "dft_length"}},
  };
  for (const auto& [test, want] : cases) {
    auto names = shapeDeterminingInputs(dir + test + "/model.onnx");
    ASSERT_TRUE(names.ok()) << test << ": " << names.status().message();
    EXPECT_EQ(*names, want) << test;
  }
}

TEST(Frontend, BoundInputBecomesConstant) {
  SKIP_UNLESS_OPS({"Cast", "Reshape"}, true);
  ImportOptions opts;
  opts.bindings["target"] = Tensor::fromVector<int32_t>(DType::kI32, {2}, {2, 12});
  ImportInfo info;
  auto g = importOnnx(model("shape_input.onnx"), opts, &info);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->outputs()[0]->dims(), (Dims{2, 12}));
  // A bound value of the wrong element type is an error.
  ImportOptions bad;
  bad.bindings["target"] = Tensor::fromVector<float>(DType::kF32, {2}, {2, 12});
  expectError(importStatus("shape_input.onnx", bad), ErrorCode::kBadInput, {"--bind target"});
}

TEST(Frontend, LegacyFormsImport) {
  SKIP_UNLESS_OPS({"Slice", "Pad", "Clip", "TopK", "Softmax", "Resize"});
  auto g = importOnnx(model("legacy.onnx"), {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<Dims> want = {{1, 2}, {2, 6}, {2, 4}, {2, 2}, {2, 4}, {1, 1, 4, 4}};
  ASSERT_EQ((*g)->outputs().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ((*g)->outputs()[i]->dims(), want[i]) << (*g)->outputs()[i]->name();
}

TEST(Frontend, ZooSqueezenetOpset9Imports) {
  const std::string path = std::string(MAGNETO_SOURCE_DIR) + "/models/light/light_squeezenet.onnx";
  ASSERT_TRUE(fs::exists(path)) << path << " is part of the repository (models/light)";
  SKIP_UNLESS_OPS({"Conv", "Relu", "MaxPool", "Concat", "Dropout", "GlobalAveragePool",
                   "Softmax", "ConstantOfShape"});
  auto g = importOnnx(path, {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ((*g)->inputs().size(), 1u);
  EXPECT_EQ((*g)->inputs()[0]->name(), "data_0");
  ASSERT_EQ((*g)->outputs().size(), 1u);
  EXPECT_EQ((*g)->outputs()[0]->type().numel(), 1000);
  Status v = verifyGraph(**g);
  EXPECT_TRUE(v.ok()) << v.message();
}

// Old-opset models of ONNX's test data, upgraded and normalized, against their expected outputs
// (PReLU-6's channel-wise slope, Gemm-6 upgraded with inferred shapes, Upsample-9).
TEST(Frontend, UpgradedModelsMatchExpectedOutputs) {
  const std::string root = "/usr/share/libonnx-testdata/data/";
  int checked = 0;
  for (const char* t : {"pytorch-converted/test_PReLU_2d_multiparam",
                        "pytorch-operator/test_operator_addmm", "node/test_upsample_nearest"}) {
    std::string dir = root + t + "/";
    if (!fs::exists(dir + "model.onnx")) continue;
    // Inputs that decide shapes (Upsample's scales) are bound; the rest are fed by position.
    auto bind = shapeDeterminingInputs(dir + "model.onnx");
    ASSERT_TRUE(bind.ok()) << bind.status().message();
    ImportOptions opts;
    std::vector<Tensor> fed;
    for (int k = 0; fs::exists(dir + "test_data_set_0/input_" + std::to_string(k) + ".pb"); ++k) {
      std::string name;
      auto in = readTensorProtoFile(dir + "test_data_set_0/input_" + std::to_string(k) + ".pb",
                                    &name);
      ASSERT_TRUE(in.ok()) << in.status().message();
      if (std::find(bind->begin(), bind->end(), name) != bind->end())
        opts.bindings[name] = *in;
      else
        fed.push_back(*in);
    }
    auto g = importOnnx(dir + "model.onnx", opts);
    if (!g.ok() && g.status().code() == ErrorCode::kUnsupported) {
      std::cout << t << ": skipped: " << g.status().message() << "\n";
      continue;
    }
    ASSERT_TRUE(g.ok()) << t << ": " << g.status().message();
    ASSERT_EQ(fed.size(), (*g)->inputs().size()) << t;
    std::map<std::string, Tensor> inputs;
    for (size_t k = 0; k < fed.size(); ++k) inputs[(*g)->inputs()[k]->name()] = fed[k];
    auto out = interpret(**g, inputs);
    ASSERT_TRUE(out.ok()) << t << ": " << out.status().message();
    auto want = readTensorProtoFile(dir + "test_data_set_0/output_0.pb");
    ASSERT_TRUE(want.ok()) << want.status().message();
    const Tensor& got = out->at((*g)->outputs()[0]->name());
    ASSERT_EQ(got.dims(), want->dims()) << t;
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.floatAt(i), want->floatAt(i), 1e-4 * (1 + std::abs(want->floatAt(i))))
          << t << " element " << i;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no test data or ops yet";
}

// --- TensorProto files and parseDims -------------------------------------------------------------

TEST(Frontend, ReadsBackendTestTensor) {
  std::string name;
  auto t = readTensorProtoFile(
      "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0/input_0.pb", &name);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(name, "x");
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_EQ(t->dims(), (Dims{3, 4, 5}));
  EXPECT_EQ(t->byteSize(), 60u * 4);
}

TEST(Frontend, TensorFileErrorsNameTheFile) {
  TempDir tmp;
  std::string p = (tmp.path / "junk.pb").string();
  std::ofstream(p, std::ios::binary) << "\xff\xff\xff\xff garbage";
  auto t = readTensorProtoFile(p);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("junk.pb: not a valid TensorProto"), std::string::npos)
      << t.status().message();
}

TEST(Frontend, TensorFileRoundTrip) {
  TempDir tmp;
  std::string p = (tmp.path / "t.pb").string();
  Tensor t = Tensor::fromVector<int16_t>(DType::kI16, {2, 2}, {1, -2, 3, -4});
  ASSERT_TRUE(writeTensorProtoFile(p, t, "small").ok());
  std::string name;
  auto back = readTensorProtoFile(p, &name);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(name, "small");
  EXPECT_TRUE(*back == t);
}

// Typed fields of every dtype decode to the same bytes as raw_data.
TEST(Frontend, TypedFieldsOfEveryDType) {
  TempDir tmp;
  struct Case {
    DType dtype;
    std::vector<uint8_t> bytes;  // expected, little endian
  };
  auto bytesOf = [](auto... v) {
    std::vector<uint8_t> out;
    for (auto x : {v...}) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&x);
      out.insert(out.end(), p, p + sizeof(x));
    }
    return out;
  };
  std::vector<Case> cases = {
      {DType::kF32, bytesOf(1.5f, -2.0f)},
      {DType::kF64, bytesOf(1.5, -2.0)},
      {DType::kI64, bytesOf(int64_t{7}, int64_t{-9})},
      {DType::kI32, bytesOf(int32_t{7}, int32_t{-9})},
      {DType::kI16, bytesOf(int16_t{7}, int16_t{-9})},
      {DType::kI8, bytesOf(int8_t{7}, int8_t{-9})},
      {DType::kU8, bytesOf(uint8_t{7}, uint8_t{250})},
      {DType::kU16, bytesOf(uint16_t{7}, uint16_t{65000})},
      {DType::kU32, bytesOf(uint32_t{7}, uint32_t{4000000000u})},
      {DType::kU64, bytesOf(uint64_t{7}, uint64_t{1} << 63)},
      {DType::kBool, bytesOf(uint8_t{1}, uint8_t{0})},
      {DType::kF16, bytesOf(uint16_t{0x3c00}, uint16_t{0xc000})},
      {DType::kBF16, bytesOf(uint16_t{0x3f80}, uint16_t{0xc000})},
  };
  for (const Case& c : cases) {
    onnx::TensorProto tp;
    tp.set_name("t");
    tp.set_data_type(static_cast<int32_t>(c.dtype));
    tp.add_dims(2);
    Tensor want(TensorType{c.dtype, {2}}, c.bytes);
    for (int i = 0; i < 2; ++i) {
      switch (c.dtype) {
        case DType::kF32: tp.add_float_data(want.data<float>()[i]); break;
        case DType::kF64: tp.add_double_data(want.data<double>()[i]); break;
        case DType::kI64: tp.add_int64_data(want.data<int64_t>()[i]); break;
        case DType::kU32: tp.add_uint64_data(want.data<uint32_t>()[i]); break;
        case DType::kU64: tp.add_uint64_data(want.data<uint64_t>()[i]); break;
        case DType::kF16: case DType::kBF16: case DType::kU16:
          tp.add_int32_data(want.data<uint16_t>()[i]); break;
        default: tp.add_int32_data(static_cast<int32_t>(want.intAt(i))); break;
      }
    }
    std::string p = (tmp.path / "typed.pb").string();
    std::ofstream(p, std::ios::binary | std::ios::trunc) << tp.SerializeAsString();
    auto got = readTensorProtoFile(p);
    ASSERT_TRUE(got.ok()) << dtypeName(c.dtype) << ": " << got.status().message();
    EXPECT_TRUE(*got == want) << dtypeName(c.dtype);
  }
  // Unsupported element type: a clear error.
  onnx::TensorProto tp;
  tp.set_data_type(onnx::TensorProto::STRING);
  tp.add_dims(1);
  tp.add_string_data("s");
  std::string p = (tmp.path / "str.pb").string();
  std::ofstream(p, std::ios::binary | std::ios::trunc) << tp.SerializeAsString();
  auto got = readTensorProtoFile(p);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(got.status().message().find("STRING"), std::string::npos) << got.status().message();
}

TEST(Frontend, ParseDims) {
  EXPECT_EQ(*parseDims("1x3x224x224"), (Dims{1, 3, 224, 224}));
  EXPECT_EQ(*parseDims("1,3,224,224"), (Dims{1, 3, 224, 224}));
  EXPECT_EQ(*parseDims("0x4"), (Dims{0, 4}));
  EXPECT_EQ(*parseDims("7"), (Dims{7}));
  EXPECT_EQ(*parseDims("scalar"), (Dims{}));
  for (const char* bad : {"", "1x-3", "1xa", "1xx2", "x", "1x", "2.5", "99999999999999999999"}) {
    auto d = parseDims(bad);
    EXPECT_FALSE(d.ok()) << bad;
  }
  EXPECT_NE(parseDims("1x-3").status().message().find("negative"), std::string::npos);
}

