// The tensor / data-movement op family: shape inference and the reference kernels, checked on
// hand-computed values through the reference interpreter, plus a conformance sweep over ONNX's
// backend test data (/usr/share/libonnx-testdata) for every op of the family.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "magneto/interp/interpreter.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

Tensor iota(DType dt, Dims dims) {
  int64_t n = TensorType{dt, dims}.numel();
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.f);
  return Tensor::fromVector(dt, dims, v);
}

}  // namespace

TEST(TensorOps, SliceNegativeStepsAndClamping) {
  auto out = evalText(R"(graph @t {
  input %x : f32[2,4]
  const %st : i64[1] = dense<[-1]>
  const %en : i64[1] = dense<[-1000]>
  const %ax : i64[1] = dense<[1]>
  const %sp : i64[1] = dense<[-2]>
  %y = Slice(%x, %st, %en, %ax, %sp)
  const %st2 : i64[2] = dense<[1, 1]>
  const %en2 : i64[2] = dense<[1000, 3]>
  %z = Slice(%x, %st2, %en2)
  output %y, %z
}
)", {{"x", iota(DType::kF32, {2, 4})}});
  EXPECT_EQ(out["y"].dims(), (Dims{2, 2}));
  EXPECT_EQ(values(out["y"]), (std::vector<double>{3, 1, 7, 5}));
  EXPECT_EQ(out["z"].dims(), (Dims{1, 2}));
  EXPECT_EQ(values(out["z"]), (std::vector<double>{5, 6}));
}

TEST(TensorOps, ReshapeZeroCopiesAndMinusOneInfers) {
  auto out = evalText(R"(graph @t {
  input %x : f32[2,3,4]
  const %s : i64[2] = dense<[0, -1]>
  %y = Reshape(%x, %s)
  const %s2 : i64[3] = dense<[-1, 0, 2]>
  %z = Reshape(%x, %s2)
  output %y, %z
}
)", {{"x", iota(DType::kF32, {2, 3, 4})}});
  EXPECT_EQ(out["y"].dims(), (Dims{2, 12}));
  EXPECT_EQ(out["z"].dims(), (Dims{4, 3, 2}));
  EXPECT_EQ(values(out["y"]), values(iota(DType::kF32, {24})));
  EXPECT_TRUE(OpRegistry::instance().find("Reshape")->has(kView));
}

TEST(TensorOps, PadModes) {
  auto out = evalText(R"(graph @t {
  input %x : f32[3]
  const %p : i64[2] = dense<[2, 1]>
  %r = Pad(%x, %p) {mode = "reflect"}
  %e = Pad(%x, %p) {mode = "edge"}
  %w = Pad(%x, %p) {mode = "wrap"}
  const %cv : f32[] = dense<[9]>
  %c = Pad(%x, %p, %cv)
  const %n : i64[2] = dense<[-1, 0]>
  %k = Pad(%x, %n)
  output %r, %e, %w, %c, %k
}
)", {{"x", Tensor::fromVector(DType::kF32, {3}, std::vector<float>{1, 2, 3})}});
  EXPECT_EQ(values(out["r"]), (std::vector<double>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(values(out["e"]), (std::vector<double>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(values(out["w"]), (std::vector<double>{2, 3, 1, 2, 3, 1}));
  EXPECT_EQ(values(out["c"]), (std::vector<double>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(values(out["k"]), (std::vector<double>{2, 3}));
}

TEST(TensorOps, GatherNegativeIndexAndOutOfRangeError) {
  const char* text = R"(graph @t {
  input %x : f32[3,2]
  input %i : i64[2]
  %y = Gather(%x, %i) {axis = 0}
  output %y
}
)";
  Tensor x = iota(DType::kF32, {3, 2});
  auto out = evalText(text, {{"x", x}, {"i", Tensor::fromVector(DType::kI64, {2}, std::vector<int64_t>{-1, 0})}});
  EXPECT_EQ(values(out["y"]), (std::vector<double>{4, 5, 0, 1}));

  auto g = parseGraph(text);
  ASSERT_TRUE(g.ok());
  auto bad = interpret(*g.value(), {{"x", x}, {"i", Tensor::fromVector(DType::kI64, {2}, std::vector<int64_t>{0, 3})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos) << bad.status().message();
}

TEST(TensorOps, ScatterNDAddAccumulatesDuplicates) {
  auto out = evalText(R"(graph @t {
  input %x : f32[8]
  const %i : i64[5,1] = dense<[4, 3, 1, 7, 1]>
  const %u : f32[5] = dense<[9, 10, 11, 12, 100]>
  %y = ScatterND(%x, %i, %u) {reduction = "add"}
  %z = ScatterND(%x, %i, %u)
  output %y, %z
}
)", {{"x", Tensor::fromVector(DType::kF32, {8}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8})}});
  EXPECT_EQ(values(out["y"]), (std::vector<double>{1, 113, 3, 14, 14, 6, 7, 20}));
  EXPECT_EQ(values(out["z"]), (std::vector<double>{1, 100, 3, 10, 9, 6, 7, 12}));
}

TEST(TensorOps, ResizeNearestAsymmetric) {
  auto out = evalText(R"(graph @t {
  input %x : f32[1,1,2,2]
  const %s : f32[4] = dense<[1, 1, 2, 2]>
  %y = Resize(%x, _, %s) {mode = "nearest", coordinate_transformation_mode = "asymmetric"}
  output %y
}
)", {{"x", Tensor::fromVector(DType::kF32, {1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4})}});
  EXPECT_EQ(out["y"].dims(), (Dims{1, 1, 4, 4}));
  EXPECT_EQ(values(out["y"]), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(TensorOps, ResizeLinearHalfPixel) {
  auto out = evalText(R"(graph @t {
  input %x : f32[1,1,2,2]
  const %s : f32[4] = dense<[1, 1, 2, 2]>
  %y = Resize(%x, _, %s) {mode = "linear"}
  output %y
}
)", {{"x", Tensor::fromVector(DType::kF32, {1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4})}});
  expectNear(values(out["y"]), {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(TensorOps, ResizeCubicBySizes) {
  // Half-pixel source coordinates 0.5, 2.5, 4.5, 6.5; Keys' cubic (A = -0.75) reproduces the
  // ramp inside and sees the clamped border at both ends.
  auto out = evalText(R"(graph @t {
  input %x : f32[1,1,1,8]
  const %z : f32[0] = dense<[]>
  const %sz : i64[4] = dense<[1, 1, 1, 4]>
  %y = Resize(%x, _, %z, %sz) {mode = "cubic"}
  output %y
}
)", {{"x", iota(DType::kF32, {1, 1, 1, 8})}});
  expectNear(values(out["y"]), {0.40625, 2.5, 4.5, 6.59375});
}

TEST(TensorOps, ResizeAxesOperandsListOnlySomeAxes) {
  // Opset 18: scales/sizes for the listed axes; the others keep their extent.
  auto out = evalText(R"(graph @t {
  input %x : f32[1,1,2,2]
  const %s : f32[1] = dense<[2]>
  const %z : f32[0] = dense<[]>
  const %sz : i64[2] = dense<[3, 1]>
  %y = Resize(%x, _, %s) {mode = "nearest", coordinate_transformation_mode = "asymmetric", axes = [3]}
  %n = Resize(%x, _, %z, %sz) {mode = "nearest", axes = [-1, 2]}
  output %y, %n
}
)", {{"x", Tensor::fromVector(DType::kF32, {1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4})}});
  EXPECT_EQ(out["y"].dims(), (Dims{1, 1, 2, 4}));
  EXPECT_EQ(values(out["y"]), (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  // Axis 3 to 3 columns, axis 2 to 1 row (source row 0.5 rounds down to 0, prefer floor).
  EXPECT_EQ(out["n"].dims(), (Dims{1, 1, 1, 3}));
}

TEST(TensorOps, ResizeKeepAspectRatioPolicyShapes) {
  // sizes [7, 7] for a 4 x 6 image: the ratios are 1.75 and 1.1667; not_larger takes the smaller
  // one for both axes (4 * 1.1667 = 4.67 -> 5, 6 * 1.1667 -> 7), not_smaller the larger
  // (4 * 1.75 = 7, 6 * 1.75 = 10.5 -> 11: rounding half away from zero, as onnxruntime).
  auto g = parseGraph(R"(graph @t {
  input %x : f32[1,1,4,6]
  const %z : f32[0] = dense<[]>
  const %sz : i64[2] = dense<[7, 7]>
  %small = Resize(%x, _, %z, %sz) {mode = "linear", axes = [2, 3], keep_aspect_ratio_policy = "not_larger"}
  %large = Resize(%x, _, %z, %sz) {mode = "linear", axes = [2, 3], keep_aspect_ratio_policy = "not_smaller"}
  %stretch = Resize(%x, _, %z, %sz) {mode = "linear", axes = [2, 3]}
  output %small, %large, %stretch
}
)");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g.value()->findValue("small")->dims(), (Dims{1, 1, 5, 7}));
  EXPECT_EQ(g.value()->findValue("large")->dims(), (Dims{1, 1, 7, 11}));
  EXPECT_EQ(g.value()->findValue("stretch")->dims(), (Dims{1, 1, 7, 7}));

  auto bad = parseGraph(R"(graph @t {
  input %x : f32[1,1,4,6]
  const %z : f32[0] = dense<[]>
  const %sz : i64[4] = dense<[1, 1, 7, 7]>
  %y = Resize(%x, _, %z, %sz) {axes = [2, 3]}
  output %y
}
)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sizes have 4 values, expected 2 (one per axis)"),
            std::string::npos) << bad.status().message();
  auto policy = parseGraph(R"(graph @t {
  input %x : f32[1,1,4,6]
  const %z : f32[0] = dense<[]>
  const %sz : i64[4] = dense<[1, 1, 7, 7]>
  %y = Resize(%x, _, %z, %sz) {keep_aspect_ratio_policy = "fit"}
  output %y
}
)");
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("keep_aspect_ratio_policy 'fit'"), std::string::npos)
      << policy.status().message();
}

TEST(TensorOps, ResizeAntialiasLinearDownscale) {
  // 0 1 2 3 halved with antialias: the triangle filter is stretched to 2 input pixels per side.
  // Output 0 sits at source 0.5: taps -1, 0, 1, 2 weigh 1, 3, 3, 1 (/ 8), tap -1 clamps to 0:
  // (0 * 4 + 1 * 3 + 2 * 1) / 8 = 0.625; output 1 at 2.5: (1 + 2 * 3 + 3 * 4) / 8 = 2.375.
  // Without antialias the two taps give 0.5 and 2.5. (onnxruntime computes the same values.)
  auto out = evalText(R"(graph @t {
  input %x : f32[1,1,1,4]
  const %z : f32[0] = dense<[]>
  const %sz : i64[4] = dense<[1, 1, 1, 2]>
  %aa = Resize(%x, _, %z, %sz) {mode = "linear", antialias = 1}
  %plain = Resize(%x, _, %z, %sz) {mode = "linear"}
  output %aa, %plain
}
)", {{"x", iota(DType::kF32, {1, 1, 1, 4})}});
  expectNear(values(out["aa"]), {0.625, 2.375});
  expectNear(values(out["plain"]), {0.5, 2.5});
}

TEST(TensorOps, ResizeHalfPixelSymmetric) {
  // 4 -> floor(4 * 0.6) = 2: the unrounded extent is 2.4, so half_pixel_symmetric shifts source
  // coordinates by 2 * (1 - 2 / 2.4) = 1/3 to keep the centre: (x + 0.5) / 0.6 - 0.5 + 1/3 gives
  // 2/3 and 7/3 (half_pixel: 1/3 and 2), which linear interpolation of 0 1 2 3 returns as is.
  auto out = evalText(R"(graph @t {
  input %x : f32[1,1,1,4]
  const %s : f32[4] = dense<[1, 1, 1, 0.6]>
  %sym = Resize(%x, _, %s) {mode = "linear", coordinate_transformation_mode = "half_pixel_symmetric"}
  %half = Resize(%x, _, %s) {mode = "linear"}
  output %sym, %half
}
)", {{"x", iota(DType::kF32, {1, 1, 1, 4})}});
  expectNear(values(out["sym"]), {2.0 / 3, 7.0 / 3});
  expectNear(values(out["half"]), {1.0 / 3, 2});
}

TEST(TensorOps, CenterCropPad) {
  // Crop 5 -> 3 from (5 - 3) / 2 = 1; pad 2 -> 5 with 1 zero before and 2 after; on a 3 x 4
  // tensor, only the last axis cropped to 2 (columns 1 and 2).
  auto out = evalText(R"(graph @t {
  input %x : f32[5]
  const %p : i32[2] = dense<[7, 8]>
  const %m : f32[3,4] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]>
  const %s3 : i64[1] = dense<[3]>
  const %s5 : i64[1] = dense<[5]>
  const %s2 : i64[1] = dense<[2]>
  %crop = CenterCropPad(%x, %s3)
  %pad = CenterCropPad(%p, %s5)
  %cols = CenterCropPad(%m, %s2) {axes = [-1]}
  output %crop, %pad, %cols
}
)", {{"x", iota(DType::kF32, {5})}});
  EXPECT_EQ(values(out["crop"]), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out["pad"].dtype(), DType::kI32);
  EXPECT_EQ(values(out["pad"]), (std::vector<double>{0, 7, 8, 0, 0}));
  EXPECT_EQ(out["cols"].dims(), (Dims{3, 2}));
  EXPECT_EQ(values(out["cols"]), (std::vector<double>{1, 2, 5, 6, 9, 10}));

  auto bad = parseGraph(R"(graph @t {
  input %x : f32[3,4]
  const %s : i64[1] = dense<[2]>
  %y = CenterCropPad(%x, %s)
  output %y
}
)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("shape has 1 values, expected 2 (one per axis)"),
            std::string::npos) << bad.status().message();
}

TEST(TensorOps, EinsumForms) {
  Tensor a = iota(DType::kF32, {2, 3}), b = iota(DType::kF32, {3, 2}), sq = iota(DType::kF32, {3, 3});
  Tensor ba = iota(DType::kF32, {2, 2, 3}), bb = iota(DType::kF32, {2, 3, 2});
  auto out = evalText(R"(graph @t {
  input %a : f32[2,3]
  input %b : f32[3,2]
  input %sq : f32[3,3]
  input %ba : f32[2,2,3]
  input %bb : f32[2,3,2]
  %mm = Einsum(%a, %b) {equation = "ij,jk->ik"}
  %mi = Einsum(%a, %b) {equation = "ij,jk"}
  %tr = Einsum(%a) {equation = "ij->ji"}
  %trace = Einsum(%sq) {equation = "ii"}
  %diag = Einsum(%sq) {equation = "ii->i"}
  %bm = Einsum(%ba, %bb) {equation = "bij,bjk->bik"}
  %el = Einsum(%ba, %bb) {equation = "...ij,...jk->...ik"}
  output %mm, %mi, %tr, %trace, %diag, %bm, %el
}
)", {{"a", a}, {"b", b}, {"sq", sq}, {"ba", ba}, {"bb", bb}});
  // [[0,1,2],[3,4,5]] x [[0,1],[2,3],[4,5]]
  EXPECT_EQ(values(out["mm"]), (std::vector<double>{10, 13, 28, 40}));
  EXPECT_EQ(values(out["mi"]), (std::vector<double>{10, 13, 28, 40}));
  EXPECT_EQ(out["tr"].dims(), (Dims{3, 2}));
  EXPECT_EQ(values(out["tr"]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(out["trace"].dims(), Dims{});
  EXPECT_EQ(values(out["trace"]), (std::vector<double>{12}));
  EXPECT_EQ(values(out["diag"]), (std::vector<double>{0, 4, 8}));
  // batch 1: [[6,7,8],[9,10,11]] x [[6,7],[8,9],[10,11]] = [[172,193],[244,274]]
  std::vector<double> bm = {10, 13, 28, 40, 172, 193, 244, 274};
  EXPECT_EQ(values(out["bm"]), bm);
  EXPECT_EQ(values(out["el"]), bm);
}

TEST(TensorOps, SplitNumOutputsAndSizes) {
  auto out = evalText(R"(graph @t {
  input %x : f32[7]
  %a, %b, %c = Split(%x) {num_outputs = 3}
  const %s : i64[2] = dense<[2, 5]>
  %d, %e = Split(%x, %s)
  %f, %g = Split(%x) {split = [6, 1]}
  output %a, %b, %c, %d, %e, %f, %g
}
)", {{"x", iota(DType::kF32, {7})}});
  EXPECT_EQ(values(out["a"]), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(out["b"]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(values(out["c"]), (std::vector<double>{6}));
  EXPECT_EQ(values(out["d"]), (std::vector<double>{0, 1}));
  EXPECT_EQ(out["e"].dims(), Dims{5});
  EXPECT_EQ(values(out["g"]), (std::vector<double>{6}));
}

TEST(TensorOps, DepthToSpaceBothModes) {
  const char* text = R"(graph @t {
  input %x : f32[1,8,2,3]
  %dcr = DepthToSpace(%x) {blocksize = 2}
  %crd = DepthToSpace(%x) {blocksize = 2, mode = "CRD"}
  %back = SpaceToDepth(%dcr) {blocksize = 2}
  output %dcr, %crd, %back
}
)";
  Tensor x = iota(DType::kF32, {1, 8, 2, 3});
  auto out = evalText(text, {{"x", x}});
  EXPECT_EQ(out["dcr"].dims(), (Dims{1, 2, 4, 6}));
  // The examples of the ONNX operator documentation.
  EXPECT_EQ(values(out["dcr"]),
            (std::vector<double>{0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4, 16, 5, 17, 27, 39, 28, 40, 29, 41,
                                 6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47}));
  EXPECT_EQ(values(out["crd"]),
            (std::vector<double>{0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23,
                                 24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47}));
  EXPECT_EQ(values(out["back"]), values(x));
}

TEST(TensorOps, DataMovementIsDtypeAgnostic) {
  // f16 and bool go through Transpose / Concat / Tile by byte size.
  Graph g;
  Value* h = g.addInput("h", {DType::kF16, {2, 3}});
  Value* b = g.addInput("b", {DType::kBool, {1, 2}});
  Node* t = g.createNode("Transpose", {h}, {TensorType{}}, {}, "t");
  ASSERT_TRUE(inferNode(*t).ok());
  Value* reps = g.addConstant("reps", Tensor::fromVector(DType::kI64, {2}, std::vector<int64_t>{2, 1}));
  Node* tile = g.createNode("Tile", {b, reps}, {TensorType{}}, {}, "tile");
  ASSERT_TRUE(inferNode(*tile).ok());
  AttrMap ax;
  ax.set("axis", int64_t{0});
  Node* cat = g.createNode("Concat", {tile->output(0), b}, {TensorType{}}, ax, "cat");
  ASSERT_TRUE(inferNode(*cat).ok());
  g.setOutputs({t->output(0), cat->output(0)});
  std::vector<uint16_t> hv = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};  // 1..6
  auto r = interpret(g, {{"h", Tensor::fromVector(DType::kF16, {2, 3}, hv)},
                         {"b", Tensor::fromVector(DType::kBool, {1, 2}, std::vector<uint8_t>{1, 0})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tensor& tt = r.value().at(t->output(0)->name());
  EXPECT_EQ(tt.dims(), (Dims{3, 2}));
  EXPECT_EQ(tt.data<uint16_t>()[1], 0x4400);  // element (0,1) = x(1,0) = 4
  EXPECT_EQ(values(r.value().at(cat->output(0)->name())), (std::vector<double>{1, 0, 1, 0, 1, 0}));
}

TEST(TensorOps, MiscKernels) {
  auto out = evalText(R"(graph @t {
  input %x : f32[2,3]
  const %sh : i64[2] = dense<[2, 2]>
  %co = ConstantOfShape(%sh) {dtype = 7, mg_value_i = 5}
  const %r0 : i32[] = dense<[10]>
  const %r1 : i32[] = dense<[4]>
  const %r2 : i32[] = dense<[-3]>
  %rg = Range(%r0, %r1, %r2)
  %tu = Trilu(%x)
  const %k : i64[] = dense<[-1]>
  %tl = Trilu(%x, %k) {upper = 0}
  %s = Shape(%x) {start = -1}
  %n = Size(%x)
  const %ax : i64[1] = dense<[0]>
  %u = Unsqueeze(%x, %ax)
  %sq = Squeeze(%u) {axes = [0]}
  %f = Flatten(%u) {axis = 2}
  const %es : i64[3] = dense<[2, 1, 3]>
  %ex = Expand(%x, %es)
  const %oi : i64[2] = dense<[1, -1]>
  const %od : i64[] = dense<[3]>
  const %ov : f32[2] = dense<[0, 7]>
  %oh = OneHot(%oi, %od, %ov) {axis = 0}
  output %co, %rg, %tu, %tl, %s, %n, %sq, %f, %ex, %oh
}
)", {{"x", iota(DType::kF32, {2, 3})}});
  EXPECT_EQ(out["co"].dtype(), DType::kI64);
  EXPECT_EQ(values(out["co"]), (std::vector<double>{5, 5, 5, 5}));
  EXPECT_EQ(values(out["rg"]), (std::vector<double>{10, 7}));
  EXPECT_EQ(values(out["tu"]), (std::vector<double>{0, 1, 2, 0, 4, 5}));
  EXPECT_EQ(values(out["tl"]), (std::vector<double>{0, 0, 0, 3, 0, 0}));
  EXPECT_EQ(values(out["s"]), (std::vector<double>{3}));
  EXPECT_EQ(values(out["n"]), (std::vector<double>{6}));
  EXPECT_EQ(out["sq"].dims(), (Dims{2, 3}));
  EXPECT_EQ(out["f"].dims(), (Dims{2, 3}));
  EXPECT_EQ(out["ex"].dims(), (Dims{2, 2, 3}));
  EXPECT_EQ(values(out["oh"]), (std::vector<double>{0, 0, 7, 0, 0, 7}));  // indices 1, 2 on axis 0
}

TEST(TensorOps, ShapeInferenceErrorsSayWhatWasExpected) {
  auto g = parseGraph(R"(graph @t {
  input %a : f32[2,3]
  input %b : f32[2,3,1]
  %y = Concat(%a, %b) {axis = 0}
  output %y
}
)");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("Concat operand 1 has rank 3, expected 2"), std::string::npos)
      << g.status().message();

  auto r = parseGraph(R"(graph @t {
  input %a : f32[2,3]
  const %s : i64[2] = dense<[4, -1]>
  %y = Reshape(%a, %s)
  output %y
}
)");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot infer the -1"), std::string::npos) << r.status().message();

  auto n = parseGraph(R"(graph @t {
  input %a : f32[4]
  %y = NonZero(%a)
  output %y
}
)");
  // A run-time operand: the count is a data symbol bounded by the element count.
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_NE(printGraph(**n).find("%y : i64[1,4] as [1,y_count] = NonZero(%a)"), std::string::npos)
      << printGraph(**n);

  auto e = parseGraph(R"(graph @t {
  input %a : f32[2,3]
  input %b : f32[4,2]
  %y = Einsum(%a, %b) {equation = "ij,jk->ik"}
  output %y
}
)");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("label 'j' has extent 3 and 4"), std::string::npos) << e.status().message();
}

// ---- ONNX backend test data ------------------------------------------------------------------

namespace {

namespace fs = std::filesystem;

Expected<Tensor> fromProto(const onnx::TensorProto& p) {
  DType dt = static_cast<DType>(p.data_type());
  Dims dims(p.dims().begin(), p.dims().end());
  TensorType type{dt, dims};
  if (!checkedNumel(dims).ok()) return badInput("bad dims");
  size_t esz = dtypeSize(dt);
  if (esz == 0) return unsupported("dtype {}", p.data_type());
  size_t n = static_cast<size_t>(type.numel());
  std::vector<uint8_t> bytes(n * esz);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != bytes.size()) return badInput("raw_data size");
    if (!bytes.empty()) std::memcpy(bytes.data(), p.raw_data().data(), bytes.size());
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint8_t* dst = bytes.data() + i * esz;
      switch (dt) {
        case DType::kF32: { float v = p.float_data(i); std::memcpy(dst, &v, 4); break; }
        case DType::kF64: { double v = p.double_data(i); std::memcpy(dst, &v, 8); break; }
        case DType::kI64: { int64_t v = p.int64_data(i); std::memcpy(dst, &v, 8); break; }
        case DType::kU64: case DType::kU32: { uint64_t v = p.uint64_data(i); std::memcpy(dst, &v, esz); break; }
        default: { int32_t v = p.int32_data(i); std::memcpy(dst, &v, esz); break; }
      }
    }
  }
  return Tensor(type, std::move(bytes));
}

Expected<Tensor> readTensorFile(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  onnx::TensorProto p;
  if (!p.ParseFromIstream(&in)) return badInput("cannot parse {}", f.string());
  return fromProto(p);
}

// Runs one single-node ONNX backend test through shape inference and the interpreter, all inputs
// bound as constants. Returns "" when the results match, else what differs.
std::string runOnnxCase(const fs::path& dir) {
  onnx::ModelProto model;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  if (!model.ParseFromIstream(&in)) return "cannot parse model.onnx";
  const onnx::GraphProto& gp = model.graph();
  if (gp.node_size() != 1) return "not a single-node test";
  const onnx::NodeProto& np = gp.node(0);
  Graph g;
  std::map<std::string, Value*> byName;
  for (int i = 0; i < gp.input_size(); ++i) {
    if (!gp.input(i).type().has_tensor_type()) return "not a tensor input";
    auto t = readTensorFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
    if (!t.ok()) return t.status().message();
    byName[gp.input(i).name()] = g.addConstant("in" + std::to_string(i), t.value());
  }
  for (const auto& init : gp.initializer()) {
    auto t = fromProto(init);
    if (!t.ok()) return t.status().message();
    byName[init.name()] = g.addConstant(g.uniqueName("init"), t.value());
  }
  std::vector<Value*> operands;
  for (const auto& name : np.input()) operands.push_back(name.empty() ? nullptr : byName.at(name));
  AttrMap attrs;
  for (const auto& a : np.attribute()) {
    using AP = onnx::AttributeProto;
    switch (a.type()) {
      case AP::INT: attrs.set(a.name(), Attribute(static_cast<int64_t>(a.i()))); break;
      case AP::FLOAT: attrs.set(a.name(), Attribute(static_cast<double>(a.f()))); break;
      case AP::STRING: attrs.set(a.name(), Attribute(a.s())); break;
      case AP::INTS: attrs.set(a.name(), Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()))); break;
      case AP::FLOATS: attrs.set(a.name(), Attribute(std::vector<double>(a.floats().begin(), a.floats().end()))); break;
      case AP::TENSOR: {
        auto t = fromProto(a.t());
        if (!t.ok()) return t.status().message();
        attrs.set(a.name(), Attribute(t.value()));
        if (np.op_type() == "ConstantOfShape" && a.name() == "value") {  // what the frontend does
          attrs.set("dtype", Attribute(static_cast<int64_t>(t.value().dtype())));
          if (isFloat(t.value().dtype())) attrs.set("mg_value", Attribute(t.value().floatAt(0)));
          else attrs.set("mg_value_i", Attribute(t.value().intAt(0)));
        }
        break;
      }
      default: return "unsupported attribute kind";
    }
  }
  std::vector<TensorType> types(np.output_size());
  Node* n = g.createNode(np.op_type(), operands, types, attrs, np.name());
  Status s = inferNode(*n);
  if (!s.ok()) return (s.code() == ErrorCode::kUnsupported ? "skip: " : "infer: ") + s.message();
  std::vector<Value*> outs(n->outputs().begin(), n->outputs().end());
  g.setOutputs(outs);
  auto r = interpret(g, {});
  if (!r.ok()) return "interpret: " + r.status().message();
  for (int i = 0; i < np.output_size(); ++i) {
    auto want = readTensorFile(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
    if (!want.ok()) return want.status().message();
    const Tensor& got = r.value().at(n->output(i)->name());
    if (got.type() != want.value().type())
      return fmt::format("result {}: got {}, expected {}", i, got.type().str(), want.value().type().str());
    for (int64_t k = 0; k < got.numel(); ++k) {
      double a = got.floatAt(k), b = want.value().floatAt(k);
      if (std::fabs(a - b) > 1e-4 + 1e-4 * std::fabs(b))
        return fmt::format("result {} element {}: got {}, expected {}", i, k, a, b);
    }
  }
  return "";
}

}  // namespace

TEST(TensorOps, OnnxBackendConformance) {
  fs::path root = "/usr/share/libonnx-testdata/data/node";
  MG_SKIP_UNLESS_INSTALLED(fs::exists(root), "libonnx-testdata");
  const std::set<std::string> ops = {
      "Identity", "Dropout", "Concat", "Split", "Slice", "Reshape", "Flatten", "Transpose",
      "Squeeze", "Unsqueeze", "Expand", "Tile", "Pad", "Gather", "GatherElements", "GatherND",
      "ScatterND", "ScatterElements", "Scatter", "Shape", "Size", "ConstantOfShape", "Range",
      "Resize", "Einsum", "DepthToSpace", "SpaceToDepth", "OneHot", "Trilu", "EyeLike",
      "ReverseSequence", "NonZero"};
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int passed = 0;
  std::vector<std::string> failures, skipped;
  for (const auto& dir : dirs) {
    onnx::ModelProto model;
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!model.ParseFromIstream(&in) || model.graph().node_size() != 1) continue;
    if (!ops.count(model.graph().node(0).op_type())) continue;
    bool tensorsOnly = true;
    for (const auto& v : model.graph().input()) tensorsOnly &= v.type().has_tensor_type();
    for (const auto& v : model.graph().output()) tensorsOnly &= v.type().has_tensor_type();
    if (!tensorsOnly) continue;  // sequence / optional tests are not the tensor family's
    std::string err = runOnnxCase(dir);
    if (err.empty()) ++passed;
    else if (err.rfind("skip: ", 0) == 0) skipped.push_back(dir.filename().string() + ": " + err);
    else failures.push_back(dir.filename().string() + ": " + err);
  }
  std::string all;
  for (const auto& f : failures) all += "  " + f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures:\n" << all;
  EXPECT_GT(passed, 150);
  // Only the random training-mode Dropout tests may be refused (as unsupported, not failed).
  for (const auto& sk : skipped) EXPECT_NE(sk.find("training"), std::string::npos) << sk;
  std::printf("ONNX backend tests of the tensor family: %d passed, %zu failed, %zu unsupported\n",
              passed, failures.size(), skipped.size());
}

// Bad input must give an error value from shape inference or the kernel, never a crash (run under
// MAGNETO_SANITIZE=ON to check for out-of-bounds accesses and overflow too).
TEST(TensorOps, OddInputsFailCleanly) {
  const std::vector<std::string> bad = {
      "input %x : f32[]\n  input %i : i64[2]\n  %y = Gather(%x, %i)",
      "input %x : f32[4]\n  const %s : i64[2] = dense<[-1, -1]>\n  %y = Reshape(%x, %s)",
      "input %x : f32[4]\n  const %s : i64[1] = dense<[-2]>\n  %y = Reshape(%x, %s)",
      "input %x : f32[2,3]\n  %y = Transpose(%x) {perm = [0, 0]}",
      "input %x : f32[0,3]\n  const %p : i64[4] = dense<[1, 0, 0, 0]>\n  %y = Pad(%x, %p) {mode = \"reflect\"}",
      "input %x : f32[3]\n  const %p : i64[2] = dense<[-2, -2]>\n  %y = Pad(%x, %p)",
      "input %x : f32[1,3,2,2]\n  %y = DepthToSpace(%x) {blocksize = 2}",
      "input %x : f32[1,4,2,2]\n  %y = DepthToSpace(%x) {blocksize = -3}",
      "input %x : f32[2,3]\n  %y = Einsum(%x) {equation = \"i.j\"}",
      "input %x : f32[2,3]\n  %y = Einsum(%x) {equation = \"ij,jk->ik\"}",
      "input %x : f32[2,3]\n  %y = Einsum(%x) {equation = \"ij->iij\"}",
      "input %x : f32[2,3]\n  %y = Einsum(%x) {equation = \"ijk->i\"}",
      "input %x : f32[1,1,2,2]\n  const %s : f32[2] = dense<[2, 2]>\n  %y = Resize(%x, _, %s)",
      "input %x : f32[1,1,2,2]\n  const %s : f32[4] = dense<[1, 1, 0, 2]>\n  %y = Resize(%x, _, %s)",
      "input %x : f32[1,1,2,2]\n  %y = Resize(%x)",
      "input %x : f32[2,3]\n  input %i : i64[2,3]\n  %y = GatherND(%x, %i) {batch_dims = 2}",
      "input %x : f32[2,3]\n  input %i : i64[2,3]\n  %y = GatherND(%x, %i)",
      "input %x : f32[2,3]\n  input %i : i64[3,3]\n  %y = GatherElements(%x, %i) {axis = 1}",
      "const %a : i64[] = dense<[0]>\n  const %b : i64[] = dense<[5]>\n  const %d : i64[] = dense<[0]>\n  %y = Range(%a, %b, %d)",
      "input %x : f32[6]\n  const %s : i64[2] = dense<[2, 3]>\n  %a, %b = Split(%x, %s)",
      "input %x : f32[7]\n  %a, %b = Split(%x)",
      "input %i : i64[2]\n  const %d : i64[] = dense<[0]>\n  const %v : f32[2] = dense<[0, 1]>\n  %y = OneHot(%i, %d, %v)",
      "input %x : f32[2,3]\n  %y = Squeeze(%x) {axes = [0]}",
      "input %x : f32[2,3]\n  %y = Unsqueeze(%x) {axes = [0, 0]}",
      "input %x : f32[2,3]\n  const %s : i64[2] = dense<[3, 3]>\n  %y = Expand(%x, %s)",
      "input %x : f32[2,3]\n  const %r : i64[1] = dense<[2]>\n  %y = Tile(%x, %r)",
      "input %x : f32[2,3]\n  const %s : i64[1] = dense<[0]>\n  const %e : i64[1] = dense<[1]>\n  const %a : i64[1] = dense<[5]>\n  %y = Slice(%x, %s, %e, %a)",
      "input %x : f32[2,3]\n  const %s : i64[1] = dense<[0]>\n  const %e : i64[1] = dense<[1]>\n  const %a : i64[1] = dense<[0]>\n  const %t : i64[1] = dense<[0]>\n  %y = Slice(%x, %s, %e, %a, %t)",
      "input %x : f32[4]\n  input %s : i64[1]\n  %y = Reshape(%x, %s)",
      "input %x : f32[2,3]\n  %y = Flatten(%x) {axis = 3}",
      "input %x : f32[2,3]\n  input %b : f32[2,4]\n  %y = Concat(%x, %b) {axis = 0}",
      "input %x : f32[2,3]\n  %y = Concat(%x)",
  };
  for (const std::string& body : bad) {
    std::string text = "graph @t {\n  " + body + "\n  output %y\n}\n";
    if (body.find("%a, %b") != std::string::npos) text = "graph @t {\n  " + body + "\n  output %a\n}\n";
    auto g = parseGraph(text);
    EXPECT_FALSE(g.ok()) << "expected an error for:\n" << text;
  }

  // Data-dependent errors come back from the kernels as errors.
  const std::vector<std::pair<std::string, std::map<std::string, Tensor>>> badData = {
      {"input %x : f32[2,3]\n  input %i : i64[2,3]\n  %y = GatherElements(%x, %i) {axis = 1}",
       {{"i", Tensor::fromVector(DType::kI64, {2, 3}, std::vector<int64_t>{0, 1, 2, 3, -4, 0})}}},
      {"input %x : f32[2,3]\n  input %i : i64[1,2]\n  %y = GatherND(%x, %i)",
       {{"i", Tensor::fromVector(DType::kI64, {1, 2}, std::vector<int64_t>{2, 0})}}},
      {"input %x : f32[2,3]\n  input %i : i64[1,1]\n  const %u : f32[1,3] = dense<[1, 2, 3]>\n  %y = ScatterND(%x, %i, %u)",
       {{"i", Tensor::fromVector(DType::kI64, {1, 1}, std::vector<int64_t>{-3})}}},
      {"input %x : f32[2,3]\n  input %i : i64[1,1]\n  const %u : f32[1,1] = dense<[1]>\n  %y = ScatterElements(%x, %i, %u) {axis = 1}",
       {{"i", Tensor::fromVector(DType::kI64, {1, 1}, std::vector<int64_t>{3})}}},
      {"input %x : f32[3,2]\n  input %i : i64[2]\n  %y = ReverseSequence(%x, %i)",
       {{"i", Tensor::fromVector(DType::kI64, {2}, std::vector<int64_t>{4, 1})}}},
  };
  for (const auto& [body, ins] : badData) {
    std::string text = "graph @t {\n  " + body + "\n  output %y\n}\n";
    auto g = parseGraph(text);
    ASSERT_TRUE(g.ok()) << g.status().message() << "\n" << text;
    std::map<std::string, Tensor> inputs = ins;
    inputs["x"] = Tensor::zeros(g.value()->findValue("x")->type());
    auto r = interpret(*g.value(), inputs);
    EXPECT_FALSE(r.ok()) << "expected a kernel error for:\n" << text;
  }
}

TEST(TensorOps, EmptyTensorsAndHugeSteps) {
  auto out = evalText(R"(graph @t {
  input %x : f32[0,3]
  input %z : f32[2,3]
  %c = Concat(%x, %z) {axis = 0}
  const %st : i64[1] = dense<[1000000000000000]>
  const %en : i64[1] = dense<[-1000000000000000]>
  const %sp : i64[1] = dense<[-9223372036854775808]>
  const %ax : i64[1] = dense<[1]>
  %s = Slice(%z, %st, %en, %ax, %sp)
  input %i : i64[0]
  %g = Gather(%z, %i) {axis = 1}
  %e = Slice(%z, %ax, %ax, %ax)
  output %c, %s, %g, %e
}
)", {{"x", Tensor::zeros({DType::kF32, {0, 3}})}, {"z", iota(DType::kF32, {2, 3})},
     {"i", Tensor::zeros({DType::kI64, {0}})}});
  EXPECT_EQ(values(out["c"]), values(iota(DType::kF32, {6})));
  EXPECT_EQ(out["s"].dims(), (Dims{2, 1}));
  EXPECT_EQ(values(out["s"]), (std::vector<double>{2, 5}));
  EXPECT_EQ(out["g"].dims(), (Dims{2, 0}));
  EXPECT_EQ(out["e"].dims(), (Dims{2, 0}));
}
