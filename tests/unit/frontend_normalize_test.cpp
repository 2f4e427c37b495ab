// ONNX frontend: normalization of legacy op forms into the registered schemas
// (src/frontend/onnx_normalize.cpp), on drafted nodes: no model files, no op registry needed.
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

// --- Normalization (no op registry needed) -------------------------------------------------------

namespace {
struct DraftFixture {
  Graph g;
  Value* x = g.addInput("x", {DType::kF32, {2, 4}});
  frontend::NodeDraft d;
  DraftFixture(const std::string& kind) {
    d.kind = kind;
    d.name = "n";
    d.inputs = {x};
  }
  std::vector<int64_t> ints(size_t i) { return d.inputs.at(i)->constant().toInts(); }
};
}  // namespace

TEST(FrontendNormalize, SliceAttributesBecomeOperands) {
  DraftFixture f("Slice");
  f.d.attrs.set("starts", std::vector<int64_t>{0, 1});
  f.d.attrs.set("ends", std::vector<int64_t>{1, 3});
  ASSERT_TRUE(frontend::normalizeNode(f.g, 9, f.d).ok());
  ASSERT_EQ(f.d.inputs.size(), 3u);  // no axes: operand omitted
  EXPECT_EQ(f.ints(1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(f.ints(2), (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(f.d.attrs.empty());
  DraftFixture g10("Slice");  // opset 10: already operands, untouched
  ASSERT_TRUE(frontend::normalizeNode(g10.g, 10, g10.d).ok());
  EXPECT_EQ(g10.d.inputs.size(), 1u);
}

TEST(FrontendNormalize, PadClipTopK) {
  DraftFixture pad("Pad");
  pad.d.attrs.set("pads", std::vector<int64_t>{0, 1, 0, 1});
  pad.d.attrs.set("value", 0.5);
  pad.d.attrs.set("mode", "constant");
  ASSERT_TRUE(frontend::normalizeNode(pad.g, 2, pad.d).ok());
  ASSERT_EQ(pad.d.inputs.size(), 3u);
  EXPECT_EQ(pad.ints(1), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(pad.d.inputs[2]->dtype(), DType::kF32);
  EXPECT_EQ(pad.d.inputs[2]->constant().floatAt(0), 0.5);
  EXPECT_EQ(pad.d.attrs.getString("mode", ""), "constant");
  EXPECT_FALSE(pad.d.attrs.has("pads"));

  DraftFixture clip("Clip");
  clip.d.attrs.set("max", 6.0);
  ASSERT_TRUE(frontend::normalizeNode(clip.g, 6, clip.d).ok());
  ASSERT_EQ(clip.d.inputs.size(), 3u);
  EXPECT_EQ(clip.d.inputs[1], nullptr);  // min absent
  EXPECT_EQ(clip.d.inputs[2]->constant().floatAt(0), 6.0);
  EXPECT_TRUE(clip.d.attrs.empty());

  DraftFixture topk("TopK");
  topk.d.attrs.set("k", int64_t{3});
  topk.d.attrs.set("axis", int64_t{-1});
  ASSERT_TRUE(frontend::normalizeNode(topk.g, 9, topk.d).ok());
  ASSERT_EQ(topk.d.inputs.size(), 2u);
  EXPECT_EQ(topk.ints(1), (std::vector<int64_t>{3}));
  EXPECT_EQ(topk.d.inputs[1]->dims(), (Dims{1}));
  EXPECT_EQ(topk.d.attrs.getInt("axis", 0), -1);
}

TEST(FrontendNormalize, UpsampleAndResize10BecomeResize11) {
  DraftFixture up7("Upsample");
  up7.d.attrs.set("scales", std::vector<double>{1, 1, 2, 2});
  up7.d.attrs.set("mode", "bilinear");
  ASSERT_TRUE(frontend::normalizeNode(up7.g, 7, up7.d).ok());
  EXPECT_EQ(up7.d.kind, "Resize");
  ASSERT_EQ(up7.d.inputs.size(), 3u);
  EXPECT_EQ(up7.d.inputs[1], nullptr);
  EXPECT_EQ(up7.d.inputs[2]->dtype(), DType::kF32);
  EXPECT_EQ(up7.d.inputs[2]->constant().floatAt(2), 2.0);
  EXPECT_EQ(up7.d.attrs.getString("mode", ""), "linear");
  EXPECT_EQ(up7.d.attrs.getString("coordinate_transformation_mode", ""), "asymmetric");
  EXPECT_EQ(up7.d.attrs.getString("nearest_mode", ""), "floor");
  EXPECT_FALSE(up7.d.attrs.has("scales"));

  DraftFixture up9("Upsample");
  Value* scales = up9.g.addConstant("s", Tensor::fromVector<float>(DType::kF32, {2}, {1, 2}));
  up9.d.inputs.push_back(scales);
  ASSERT_TRUE(frontend::normalizeNode(up9.g, 9, up9.d).ok());
  EXPECT_EQ(up9.d.inputs, (std::vector<Value*>{up9.x, nullptr, scales}));
  EXPECT_EQ(up9.d.attrs.getString("mode", ""), "nearest");

  DraftFixture r10("Resize");
  r10.d.inputs.push_back(scales);
  r10.d.attrs.set("mode", "linear");
  ASSERT_TRUE(frontend::normalizeNode(r10.g, 10, r10.d).ok());
  EXPECT_EQ(r10.d.inputs, (std::vector<Value*>{r10.x, nullptr, scales}));
  EXPECT_EQ(r10.d.attrs.getString("mode", ""), "linear");
  EXPECT_EQ(r10.d.attrs.getString("coordinate_transformation_mode", ""), "asymmetric");

  DraftFixture r13("Resize");  // current form: untouched
  ASSERT_TRUE(frontend::normalizeNode(r13.g, 13, r13.d).ok());
  EXPECT_FALSE(r13.d.attrs.has("coordinate_transformation_mode"));
  EXPECT_EQ(frontend::onnxShapeOperands("Upsample", 9), (std::vector<int>{1}));
  EXPECT_EQ(frontend::onnxShapeOperands("Resize", 10), (std::vector<int>{1}));
  EXPECT_TRUE(frontend::onnxShapeOperands("Slice", 9).empty());
}

TEST(FrontendNormalize, SoftmaxDropoutGemm) {
  DraftFixture sm("Softmax");
  ASSERT_TRUE(frontend::normalizeNode(sm.g, 11, sm.d).ok());
  EXPECT_EQ(sm.d.attrs.getInt("axis", -7), 1);
  EXPECT_EQ(sm.d.attrs.getInt("mg_coerce_2d", 0), 1);
  DraftFixture sm13("LogSoftmax");
  ASSERT_TRUE(frontend::normalizeNode(sm13.g, 13, sm13.d).ok());
  EXPECT_TRUE(sm13.d.attrs.empty());

  DraftFixture drop("Dropout");
  drop.d.attrs.set("ratio", 0.3);
  ASSERT_TRUE(frontend::normalizeNode(drop.g, 9, drop.d).ok());
  EXPECT_TRUE(drop.d.attrs.empty());
  DraftFixture gemm("Gemm");
  gemm.d.attrs.set("broadcast", int64_t{1});
  gemm.d.attrs.set("transB", int64_t{1});
  ASSERT_TRUE(frontend::normalizeNode(gemm.g, 7, gemm.d).ok());
  EXPECT_FALSE(gemm.d.attrs.has("broadcast"));
  EXPECT_TRUE(gemm.d.attrs.has("transB"));
}

TEST(FrontendNormalize, RoiAlignBefore16KeepsOutputHalfPixel) {
  // RoiAlign-10 had no coordinate_transformation_mode and behaved as output_half_pixel; 16's
  // default is half_pixel, so the old behaviour is made explicit. A written mode, or opset 16, is
  // left alone; so is a model the version converter lifted from 10 (sourceOpset says so).
  DraftFixture r10("RoiAlign");
  ASSERT_TRUE(frontend::normalizeNode(r10.g, 10, r10.d).ok());
  EXPECT_EQ(r10.d.attrs.getString("coordinate_transformation_mode", ""), "output_half_pixel");
  DraftFixture lifted("RoiAlign");
  lifted.d.sourceOpset = 10;
  ASSERT_TRUE(frontend::normalizeNode(lifted.g, 17, lifted.d).ok());
  EXPECT_EQ(lifted.d.attrs.getString("coordinate_transformation_mode", ""), "output_half_pixel");
  DraftFixture r16("RoiAlign");
  ASSERT_TRUE(frontend::normalizeNode(r16.g, 16, r16.d).ok());
  EXPECT_FALSE(r16.d.attrs.has("coordinate_transformation_mode"));
  DraftFixture written("RoiAlign");
  written.d.attrs.set("coordinate_transformation_mode", std::string("half_pixel"));
  ASSERT_TRUE(frontend::normalizeNode(written.g, 10, written.d).ok());
  EXPECT_EQ(written.d.attrs.getString("coordinate_transformation_mode", ""), "half_pixel");
}

TEST(FrontendNormalize, GroupNormScaleFollowsOpset) {
  // x is [2, 4]: 4 channels in 2 groups. Opsets 18-20 take scale/bias per group, 21 per channel.
  auto draft = [](int64_t n) {
    auto f = std::make_unique<DraftFixture>("GroupNormalization");
    f->d.attrs.set("num_groups", int64_t{2});
    Value* s = f->g.addInput("s", {DType::kF32, {n}});
    Value* b = f->g.addInput("b", {DType::kF32, {n}});
    f->d.inputs = {f->x, s, b};
    return f;
  };
  auto perGroup = draft(2), perChannel = draft(4);
  EXPECT_TRUE(frontend::normalizeNode(perGroup->g, 18, perGroup->d).ok());
  EXPECT_TRUE(frontend::normalizeNode(perChannel->g, 21, perChannel->d).ok());
  expectError(frontend::normalizeNode(perGroup->g, 21, perGroup->d), ErrorCode::kBadInput,
              {"GroupNormalization-21 takes scale per channel ([4]), got f32[2]"});
  expectError(frontend::normalizeNode(perChannel->g, 20, perChannel->d), ErrorCode::kBadInput,
              {"GroupNormalization-18 takes scale per group ([2]), got f32[4]"});
}

TEST(FrontendNormalize, ConstantOfShapeValue) {
  DraftFixture def("ConstantOfShape");
  ASSERT_TRUE(frontend::normalizeNode(def.g, 9, def.d).ok());
  EXPECT_EQ(def.d.attrs.getInt("dtype", 0), 1);
  EXPECT_EQ(def.d.attrs.getFloat("mg_value", 9), 0.0);

  DraftFixture f("ConstantOfShape");
  f.d.attrs.set("value", Tensor::fromVector<float>(DType::kF32, {1}, {0.02f}));
  ASSERT_TRUE(frontend::normalizeNode(f.g, 9, f.d).ok());
  EXPECT_EQ(f.d.attrs.getInt("dtype", 0), 1);
  EXPECT_FLOAT_EQ(static_cast<float>(f.d.attrs.getFloat("mg_value", 0)), 0.02f);

  DraftFixture i("ConstantOfShape");
  i.d.attrs.set("value", Tensor::fromVector<int64_t>(DType::kI64, {1}, {-3}));
  ASSERT_TRUE(frontend::normalizeNode(i.g, 9, i.d).ok());
  EXPECT_EQ(i.d.attrs.getInt("dtype", 0), 7);
  EXPECT_EQ(i.d.attrs.getInt("mg_value_i", 0), -3);
  EXPECT_FALSE(i.d.attrs.has("mg_value"));

  DraftFixture h("ConstantOfShape");
  h.d.attrs.set("value", Tensor::fromVector<uint16_t>(DType::kF16, {1}, {0x3e00}));  // 1.5
  ASSERT_TRUE(frontend::normalizeNode(h.g, 9, h.d).ok());
  EXPECT_EQ(h.d.attrs.getFloat("mg_value", 0), 1.5);

  DraftFixture bad("ConstantOfShape");
  bad.d.attrs.set("value", Tensor::fromVector<float>(DType::kF32, {2}, {1, 2}));
  Status s = frontend::normalizeNode(bad.g, 9, bad.d);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 'n' (ConstantOfShape)"), std::string::npos) << s.message();
}

TEST(FrontendNormalize, HalfConversions) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.1f}) {
    float back = frontend::halfToFloat(frontend::floatToHalf(v));
    EXPECT_NEAR(back, v, std::abs(v) * 1e-3 + 1e-8) << v;
  }
  EXPECT_EQ(frontend::floatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(frontend::floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(frontend::floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(frontend::bf16ToFloat(0xc000), -2.0f);
}

