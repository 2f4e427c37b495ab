// ONNX frontend: control flow specialised on import (If on a constant, Loop unrolled, Scan),
// and what is refused. Models come from tests/data/frontend/make_models.py.
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

// --- Control flow specialised on import (src/frontend/onnx_control_flow.cpp) -------------------

namespace {

Tensor f32s(Dims dims, std::vector<float> v) { return Tensor::fromVector<float>(DType::kF32, dims, v); }

Tensor boolScalar(bool b) { return Tensor::fromVector<uint8_t>(DType::kBool, {}, {b ? uint8_t{1} : uint8_t{0}}); }

// Imports `name` with `opts`, checks the graph, runs it on `inputs` with the reference
// interpreter; the outputs by name.
std::map<std::string, Tensor> importAndRun(const std::string& name, const ImportOptions& opts,
                                           const std::map<std::string, Tensor>& inputs,
                                           ImportInfo* info = nullptr) {
  auto g = importOnnx(model(name), opts, info);
  if (!g.ok()) {
    ADD_FAILURE() << name << ": " << g.status().message();
    return {};
  }
  Status v = verifyGraph(**g);
  EXPECT_TRUE(v.ok()) << name << ": " << v.message() << "\n" << printGraph(**g);
  auto out = interpret(**g, inputs);
  if (!out.ok()) {
    ADD_FAILURE() << name << ": " << out.status().message();
    return {};
  }
  return *out;
}

void expectValues(const Tensor& t, const Dims& dims, const std::vector<float>& want) {
  ASSERT_EQ(t.dims(), dims);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_FLOAT_EQ(static_cast<float>(t.floatAt(static_cast<int64_t>(i))), want[i])
        << "element " << i;
}

}  // namespace

TEST(ControlFlow, IfOnAConstantImportsTheTakenBranch) {
  SKIP_UNLESS_OPS({"Mul", "Neg"}, true);
  const Tensor x = f32s({3}, {1, -2, 3});
  for (bool c : {true, false}) {
    ImportOptions opts;
    opts.bindings["c"] = boolScalar(c);
    auto g = importOnnx(model("if_cond.onnx"), opts);
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto nodes = (*g)->nodes();
    ASSERT_EQ(nodes.size(), 2u) << printGraph(**g);  // the branch's op and the output's Identity
    EXPECT_EQ(nodes[0]->kind(), c ? "Mul" : "Neg");
    EXPECT_EQ((*g)->outputs()[0]->name(), "y");  // the If's output keeps its name
    auto out = importAndRun("if_cond.onnx", opts, {{"x", x}});
    if (c)
      expectValues(out["y"], {3}, {2, -4, 6});
    else
      expectValues(out["y"], {3}, {-1, 2, -3});
  }
}

// Unbound, the condition is data: both branches are imported and Where selects (the branches
// give one shape), and the condition decides no shape, so check binds nothing.
TEST(ControlFlow, IfOnTheDataSelectsBetweenBothBranches) {
  SKIP_UNLESS_OPS({"Mul", "Neg", "Where"}, true);
  ImportInfo info;
  auto g = importOnnx(model("if_cond.onnx"), {}, &info);
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<std::string> kinds;
  for (const Node* n : (*g)->nodes()) kinds.push_back(n->kind());
  for (const char* k : {"Mul", "Neg", "Where"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k << "\n" << printGraph(**g);
  bool noted = false;
  for (const auto& n : info.notes)
    noted |= n.find("node 'iff' (If): the condition is computed at run time: both branches "
                    "imported, 1 output selected by Where") != std::string::npos;
  EXPECT_TRUE(noted);
  const Tensor x = f32s({3}, {1, -2, 3});
  expectValues(importAndRun("if_cond.onnx", {}, {{"c", boolScalar(true)}, {"x", x}})["y"], {3},
               {2, -4, 6});
  expectValues(importAndRun("if_cond.onnx", {}, {{"c", boolScalar(false)}, {"x", x}})["y"], {3},
               {-1, 2, -3});
  auto names = shapeDeterminingInputs(model("if_cond.onnx"));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_TRUE(names->empty());
}

TEST(ControlFlow, LoopUnrollsCarriedValuesAndScanOutputs) {
  SKIP_UNLESS_OPS({"Add", "Cast", "Mul", "Unsqueeze", "Concat"}, true);
  ImportInfo info;
  // y0 = [1, -1]; y_k = y_{k-1} + x; s_k = y_k * k, for k = 0, 1, 2.
  auto out = importAndRun("loop.onnx", {}, {{"x", f32s({2}, {0.5f, 2})}}, &info);
  expectValues(out["y"], {2}, {2.5f, 5});
  expectValues(out["s"], {3, 2}, {0, 0, 2, 3, 5, 10});
  bool noted = false;
  for (const auto& n : info.notes) noted |= n.find("unrolled 3 iterations") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(ControlFlow, LoopConditionEndsItEarly) {
  SKIP_UNLESS_OPS({"Add", "Cast", "Mul", "Less", "Unsqueeze", "Concat"}, true);
  // M is 10 but the body's condition (i < 1) is false after iteration 1: two iterations.
  auto out = importAndRun("loop_cond.onnx", {}, {{"x", f32s({2}, {0.5f, 2})}});
  expectValues(out["y"], {2}, {2, 3});
  expectValues(out["s"], {2, 2}, {0, 0, 2, 3});
}

TEST(ControlFlow, LoopOnDataIsRefused) {
  expectError(importStatus("loop_data_cond.onnx"), ErrorCode::kUnsupported,
              {"node 'loop' (Loop)", "condition after iteration 0 is not a compile-time constant"});
  expectError(importStatus("loop_trip_input.onnx"), ErrorCode::kUnsupported,
              {"node 'loop' (Loop)", "trip count M is not a compile-time constant"});
}

TEST(ControlFlow, LoopPastTheCapIsRefused) {
  expectError(importStatus("loop_over_cap.onnx"), ErrorCode::kUnsupported,
              {"node 'loop' (Loop)", "5000 iterations", "more than the 1024"});
  expectError(importStatus("loop_forever.onnx"), ErrorCode::kBadInput,
              {"node 'loop' (Loop)", "never ends"});
}

// TorchScript exports a loop with `break` as M = INT64_MAX plus a condition the body computes:
// M alone does not refuse it, what ends (or fails to end) the loop decides.
TEST(ControlFlow, WhileFormLoopIsJudgedByItsCondition) {
  SKIP_UNLESS_OPS({"Add", "Cast", "Mul", "Less", "Unsqueeze", "Concat"}, true);
  auto out = importAndRun("loop_while.onnx", {}, {{"x", f32s({2}, {0.5f, 2})}});
  expectValues(out["y"], {2}, {2, 3});
  expectValues(out["s"], {2, 2}, {0, 0, 2, 3});
  expectError(importStatus("loop_while_data_cond.onnx"), ErrorCode::kUnsupported,
              {"node 'loop' (Loop)", "condition after iteration 0 is not a compile-time constant"});
  expectError(importStatus("loop_while_true.onnx"), ErrorCode::kUnsupported,
              {"node 'loop' (Loop)", "condition is still true after 1024 iterations"});
}

TEST(ControlFlow, BadBodiesAreErrorsNamingTheNode) {
  expectError(importStatus("loop_body_arity.onnx"), ErrorCode::kBadInput,
              {"node 'loop' (Loop)", "subgraph 'body' has 4 inputs, expected 3"});
  expectError(importStatus("loop_undefined.onnx"), ErrorCode::kBadInput,
              {"in subgraph 'body' of node 'loop' (Loop)", "reads 'nowhere'"});
}

// A sequence graph input has a length fixed at compile time (ImportOptions::sequenceInputs, from
// the test data in magnetoc check): one graph input per element, NAME[K]; a sequence output one
// output per element. SequenceMap's body is imported once per element (onnx_sequence.cpp).
TEST(ControlFlow, SequenceInputsAndOutputsArePerElement) {
  auto ins = onnxModelInputs(model("sequence_map.onnx"));
  ASSERT_TRUE(ins.ok()) << ins.status().message();
  ASSERT_EQ(ins->size(), 1u);
  EXPECT_TRUE((*ins)[0].sequence);
  auto seqOuts = onnxModelSequenceOutputs(model("sequence_map.onnx"));
  ASSERT_TRUE(seqOuts.ok());
  EXPECT_EQ(*seqOuts, std::vector<bool>{true});
  expectError(importStatus("sequence_map.onnx"), ErrorCode::kUnsupported,
              {"input 'xs' is a sequence", "length and element shapes are not given"});
  ImportOptions opts;
  opts.sequenceInputs["xs"] = {TensorType{DType::kF32, {2}}, TensorType{DType::kF32, {2}},
                               TensorType{DType::kF32, {2}}};
  auto out = importAndRun("sequence_map.onnx", opts,
                          {{"xs[0]", f32s({2}, {1, 2})}, {"xs[1]", f32s({2}, {3, 4})},
                           {"xs[2]", f32s({2}, {5, 6})}});
  ASSERT_EQ(out.size(), 3u);
  expectValues(out["ys[0]"], {2}, {1, 2});
  expectValues(out["ys[1]"], {2}, {3, 4});
  expectValues(out["ys[2]"], {2}, {5, 6});
  opts.sequenceInputs["xs"] = {TensorType{DType::kI64, {2}}};
  expectError(importStatus("sequence_map.onnx", opts), ErrorCode::kBadInput,
              {"input 'xs' is a sequence of f32, but element 0 is i64[2]"});
}

TEST(ControlFlow, TripCountFromAnInputIsShapeDetermining) {
  SKIP_UNLESS_OPS({"Add", "Cast"}, true);
  auto names = shapeDeterminingInputs(model("loop_trip_input.onnx"));
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"n"}));
  ImportOptions opts;
  opts.bindings["n"] = Tensor::fromVector<int32_t>(DType::kI32, {}, {2});
  auto out = importAndRun("loop_trip_input.onnx", opts,
                          {{"x", f32s({2}, {1, 2})}, {"y0", f32s({2}, {10, 20})}});
  expectValues(out["y"], {2}, {12, 24});
  // The backend tests' Range expansion: start, limit and delta decide the Loop's trip count.
  auto range = shapeDeterminingInputs(
      "/usr/share/libonnx-testdata/data/node/test_range_float_type_positive_delta_expanded/"
      "model.onnx");
  ASSERT_TRUE(range.ok()) << range.status().message();
  EXPECT_EQ(*range, (std::vector<std::string>{"start", "limit", "delta"}));
}

TEST(ControlFlow, LoopInsideIfSpecialisesRecursively) {
  SKIP_UNLESS_OPS({"Add"}, true);
  // then branch: a Loop of 2 iterations adding x to an accumulator that starts at x.
  auto out = importAndRun("if_loop.onnx", {}, {{"x", f32s({3}, {1, 2, -3})}});
  expectValues(out["y"], {3}, {3, 6, -9});
}

TEST(ControlFlow, ScanHonoursAxesAndDirections) {
  SKIP_UNLESS_OPS({"Add", "Gather", "Unsqueeze", "Concat"}, true);
  // Columns of x from the last (input direction 1), a running sum; the steps' sums prepended
  // (output direction 1) on axis 1.
  auto out = importAndRun("scan_reverse.onnx", {},
                          {{"init", f32s({2}, {0, 0})}, {"x", f32s({2, 3}, {1, 2, 3, 4, 5, 6})}});
  expectValues(out["final"], {2}, {6, 15});
  expectValues(out["z"], {2, 3}, {6, 5, 3, 15, 11, 6});
}

