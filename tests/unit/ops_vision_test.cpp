// Vision op family (GridSample, RoiAlign, MaxUnpool) and Det: the reference kernels against
// hand-computed values (each derivation in a comment), the data errors (a batch index or an unpool
// index out of range fails the step with a message, never a crash) and shape inference's errors.
#include <gtest/gtest.h>

#include <string>

#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

// The message of a graph that infers but fails while it runs.
std::string runError(const std::string& text) {
  auto g = parseGraph(text);
  if (!g.ok()) return "parse: " + g.status().message();
  auto r = interpret(*g.value(), {});
  return r.ok() ? std::string() : r.status().message();
}

// ---- GridSample ------------------------------------------------------------------------------

// X = [[1, 2], [3, 4]]; grid points (-1, -1), (0, 0), (1, 1).
std::vector<double> gridSample2x2(const std::string& attrs) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,2,2] = dense<[1, 2, 3, 4]>
  const %g : f32[1,1,3,2] = dense<[-1, -1, 0, 0, 1, 1]>
  %y = GridSample(%x, %g) {)" + attrs + R"(}
  output %y
})");
  if (!r.count("y")) return {};
  EXPECT_EQ(r["y"].dims(), (Dims{1, 1, 1, 3}));
  return values(r["y"]);
}

TEST(VisionGridSample, BilinearPaddingModes) {
  // align_corners 0: pixel = ((g + 1) * 2 - 1) / 2, so -1 -> -0.5, 0 -> 0.5, 1 -> 1.5.
  // zeros: (-0.5, -0.5) weighs pixel (0, 0) by 0.25 and reads 0 for the rest: 0.25; (0.5, 0.5)
  // is the mean 2.5; (1.5, 1.5) weighs pixel (1, 1) = 4 by 0.25: 1.
  expectNear(gridSample2x2(""), {0.25, 2.5, 1});
  // border: -0.5 clamps to 0 and 1.5 to 1, the corner pixels.
  expectNear(gridSample2x2("padding_mode = \"border\""), {1, 2.5, 4});
  // reflection mirrors at -0.5 and 1.5 (the image's edges), then clamps: the corners too.
  expectNear(gridSample2x2("padding_mode = \"reflection\""), {1, 2.5, 4});
  // align_corners 1: pixel = (g + 1) / 2 * (2 - 1): the corners and the centre.
  expectNear(gridSample2x2("align_corners = 1"), {1, 2.5, 4});
}

TEST(VisionGridSample, NearestRoundsHalfToEven) {
  // X is one row [10, 20, 30, 40]; x pixel = ((g + 1) * 4 - 1) / 2: g = -0.5 -> 0.5 -> 0,
  // g = 0 -> 1.5 -> 2, g = 0.5 -> 2.5 -> 2, g = 0.8 -> 3.1 -> 3, g = 1.2 -> 3.9 -> 4 (outside: 0).
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,1,4] = dense<[10, 20, 30, 40]>
  const %g : f32[1,1,5,2] = dense<[-0.5, 0, 0, 0, 0.5, 0, 0.8, 0, 1.2, 0]>
  %y = GridSample(%x, %g) {mode = "nearest"}
  output %y
})");
  expectNear(values(r["y"]), {10, 30, 30, 40, 0});
}

TEST(VisionGridSample, BicubicZerosPadding) {
  // X = [[0, 1], [2, 3], [4, 5]] at grid (-1, -1): pixel (-0.5, -0.5), so x0 = y0 = -1 and
  // t = 0.5; taps -2..1 with the A = -0.75 weights [w2(1.5), w1(0.5), w1(0.5), w2(1.5)] =
  // [-0.09375, 0.59375, 0.59375, -0.09375]; only taps 0 and 1 are inside (zeros padding):
  // row 0: 0 * 0.59375 + 1 * -0.09375 = -0.09375, row 1: 2 * 0.59375 + 3 * -0.09375 = 0.90625,
  // y = 0.59375 * -0.09375 + -0.09375 * 0.90625 = -0.140625 (ONNX's test_gridsample_bicubic).
  auto r = evalText(R"(graph @t {
  const %x : f64[1,1,3,2] = dense<[0, 1, 2, 3, 4, 5]>
  const %g : f64[1,1,1,2] = dense<[-1, -1]>
  %y = GridSample(%x, %g) {mode = "bicubic"}
  output %y
})");
  EXPECT_EQ(r["y"].dtype(), DType::kF64);
  expectNear(values(r["y"]), {-0.140625}, 1e-12);
}

TEST(VisionGridSample, NonFiniteGridNeverCrashes) {
  // NaN, infinite and huge points in every mode and padding: zeros padding reads 0 for them,
  // border and reflection clamp them to an edge; the values just have to be defined.
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      auto r = evalText(std::string(R"(graph @t {
  const %x : f32[1,1,2,2] = dense<[1, 2, 3, 4]>
  const %g : f32[1,1,4,2] = dense<[nan, 0, inf, -inf, 1e30, -1e30, 3, 0.5]>
  %y = GridSample(%x, %g) {mode = ")") + mode + "\", padding_mode = \"" + pad + R"("}
  output %y
})");
      ASSERT_TRUE(r.count("y")) << mode << " " << pad;
      std::vector<double> y = values(r["y"]);
      if (std::string(pad) == "zeros") {
        expectNear(y, {0, 0, 0, 0});
      } else if (std::string(pad) == "border" && std::string(mode) == "nearest") {
        EXPECT_EQ(y[3], 4);  // (3, 0.5) -> pixel (3.5, 1) -> clamped to (1, 1)
      }
    }
}

TEST(VisionGridSample, ShapesAndErrors) {
  const char* head = "graph @t {\n  input %x : f32[2,3,4,5]\n  input %g : f32[2,6,7,2]\n"
                     "  input %g3 : f32[2,6,7,3]\n  input %gd : f64[2,6,7,2]\n";
  auto err = [&](const std::string& node) {
    return inferError(std::string(head) + "  " + node + "\n  output %y\n}\n");
  };
  EXPECT_EQ(err("%y = GridSample(%x, %g)"), "");
  auto g = parseGraph(std::string(head) + "  %y = GridSample(%x, %g)\n  output %y\n}\n");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value()->findValue("y")->dims(), (Dims{2, 3, 6, 7}));
  EXPECT_NE(err("%y = GridSample(%x, %g3)").find("grid must be [2, H_out, W_out, 2]"),
            std::string::npos);
  EXPECT_NE(err("%y = GridSample(%x, %gd)").find("grid has element type f64"), std::string::npos);
  EXPECT_NE(err("%y = GridSample(%x, %g) {mode = \"area\"}").find("mode must be one of"),
            std::string::npos);
  EXPECT_NE(err("%y = GridSample(%x, %g) {padding_mode = \"wrap\"}").find("padding_mode"),
            std::string::npos);
}

// ---- RoiAlign --------------------------------------------------------------------------------

// X [1, 1, 4, 4] with X[y, x] = x + 4 y, linear so that every bilinear sample is exact.
std::string roiGraph(const std::string& roi, const std::string& attrs, const char* batch = "[0]") {
  return std::string("graph @t {\n"
                     "  const %x : f32[1,1,4,4] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, "
                     "12, 13, 14, 15]>\n"
                     "  const %r : f32[1,4] = dense<") +
         roi + ">\n  const %b : i64[1] = dense<" + batch +
         ">\n  %y = RoiAlign(%x, %r, %b) {" + attrs + "}\n  output %y\n}\n";
}

std::vector<double> roiAlign(const std::string& roi, const std::string& attrs) {
  auto r = evalText(roiGraph(roi, attrs));
  return r.count("y") ? values(r["y"]) : std::vector<double>{};
}

TEST(VisionRoiAlign, AverageOfBilinearSamples) {
  // half_pixel (the default): region (0, 0, 2, 2) is [-0.5, 1.5]^2, one bin, 2 x 2 samples at
  // -0.5 + 0.5 = 0 and 1: pixels 0, 1, 4, 5, mean 2.5.
  expectNear(roiAlign("[0, 0, 2, 2]", "sampling_ratio = 2"), {2.5});
  // spatial_scale 0.5 maps (0, 0, 4, 4) to the same region.
  expectNear(roiAlign("[0, 0, 4, 4]", "sampling_ratio = 2, spatial_scale = 0.5"), {2.5});
  // 2 x 2 bins of size 1, samples at +-0.25 around the bin centres; bin (0, 0)'s at -0.25 clamp
  // to 0: x and y each average (0 + 0.25) / 2 = 0.125, so 0.125 + 4 * 0.125 = 0.625; bin (0, 1)
  // has x at 0.75 and 1.25 (mean 1): 1.5; bin (1, 0): 0.125 + 4 = 4.125; bin (1, 1): 5.
  auto y = roiAlign("[0, 0, 2, 2]",
                    "sampling_ratio = 2, output_height = 2, output_width = 2");
  expectNear(y, {0.625, 1.5, 4.125, 5});
  // output_half_pixel: no half-pixel shift, the region is [0, 2]^2, samples at 0.5 and 1.5:
  // the centre (1, 1) = 5. sampling_ratio 0 picks ceil(bin size 2) = 2 samples per side too.
  expectNear(roiAlign("[0, 0, 2, 2]",
                      "sampling_ratio = 2, coordinate_transformation_mode = \"output_half_pixel\""),
             {5});
  expectNear(roiAlign("[0, 0, 2, 2]", "coordinate_transformation_mode = \"output_half_pixel\""),
             {5});
}

TEST(VisionRoiAlign, MaxTakesTheLargestWeightedCorner) {
  // One sample at (1.5, 1.5), between pixels 5, 6, 9 and 10 with weight 0.25 each: max mode
  // gives max(0.25 * 10, ...) = 2.5 (onnxruntime's and ONNX's reference), avg gives 7.5.
  const char* box = "[1, 1, 2, 2]";
  const std::string base =
      "sampling_ratio = 1, coordinate_transformation_mode = \"output_half_pixel\"";
  expectNear(roiAlign(box, base + ", mode = \"max\""), {2.5});
  expectNear(roiAlign(box, base), {7.5});
}

TEST(VisionRoiAlign, SamplesFarOutsideReadZero) {
  // A region at (-10, -10)-(-8, -8): every sample is more than one pixel outside: 0.
  expectNear(roiAlign("[-10, -10, -8, -8]", "sampling_ratio = 2"), {0});
}

TEST(VisionRoiAlign, NonFiniteRegionsReadZero) {
  // A NaN or infinite region has no sample inside the image (adaptive or fixed sampling).
  for (const char* roi : {"[nan, 0, 2, 2]", "[0, 0, inf, 2]", "[-inf, -inf, inf, inf]"}) {
    expectNear(roiAlign(roi, ""), {0});
    expectNear(roiAlign(roi, "sampling_ratio = 2"), {0});
  }
}

TEST(VisionRoiAlign, TooManySamplesIsADataError) {
  // A 1e9-pixel region with sampling_ratio 0 would take ceil(1e9) samples per side per bin.
  std::string e = runError(roiGraph("[0, 0, 1e9, 1e9]", ""));
  EXPECT_NE(e.find("samples per bin, more than 2^24"), std::string::npos) << e;
  e = runError(roiGraph("[0, 0, 2, 2]", "sampling_ratio = 5000"));
  EXPECT_NE(e.find("5000 x 5000 samples per bin"), std::string::npos) << e;
}

TEST(VisionRoiAlign, BatchIndexOutOfRangeIsADataError) {
  for (const char* b : {"[1]", "[-1]"}) {
    std::string e = runError(roiGraph("[0, 0, 2, 2]", "", b));
    EXPECT_NE(e.find("batch_indices[0] = "), std::string::npos) << e;
    EXPECT_NE(e.find("is outside [0, 1)"), std::string::npos) << e;
  }
}

TEST(VisionRoiAlign, ShapesAndErrors) {
  const char* head = "graph @t {\n  input %x : f32[2,3,8,8]\n  input %r : f32[5,4]\n"
                     "  input %b : i64[5]\n  input %r5 : f32[5,5]\n  input %b4 : i64[4]\n"
                     "  input %bf : f32[5]\n";
  auto err = [&](const std::string& node) {
    return inferError(std::string(head) + "  " + node + "\n  output %y\n}\n");
  };
  EXPECT_EQ(err("%y = RoiAlign(%x, %r, %b) {output_height = 2, output_width = 3}"), "");
  auto g = parseGraph(std::string(head) +
                      "  %y = RoiAlign(%x, %r, %b) {output_height = 2, output_width = 3}\n"
                      "  output %y\n}\n");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value()->findValue("y")->dims(), (Dims{5, 3, 2, 3}));
  EXPECT_NE(err("%y = RoiAlign(%x, %r5, %b)").find("rois must be [num_rois, 4]"),
            std::string::npos);
  EXPECT_NE(err("%y = RoiAlign(%x, %r, %b4)").find("batch_indices must be [5]"),
            std::string::npos);
  EXPECT_NE(err("%y = RoiAlign(%x, %r, %bf)").find("batch_indices must be i64"),
            std::string::npos);
  EXPECT_NE(err("%y = RoiAlign(%x, %r, %b) {mode = \"sum\"}").find("mode must be one of"),
            std::string::npos);
  EXPECT_NE(err("%y = RoiAlign(%x, %r, %b) {output_height = 0}").find("must be positive"),
            std::string::npos);
}

// ---- MaxUnpool -------------------------------------------------------------------------------

std::string unpoolGraph(const char* x, const char* xi, const char* idx, const std::string& extra,
                        const std::string& attrs) {
  return std::string("graph @t {\n  const %x : f32") + x + " = dense<" + xi + ">\n" +
         "  const %i : i64" + x + " = dense<" + idx + ">\n" + extra + "  %y = MaxUnpool(%x, %i" +
         (extra.empty() ? "" : ", %s") + ") {" + attrs + "}\n  output %y\n}\n";
}

TEST(VisionMaxUnpool, ScattersToTheIndices) {
  // kernel 2, stride 2: 2 x 2 -> 4 x 4, values at flat positions 5, 7, 13, 15.
  auto r = evalText(unpoolGraph("[1,1,2,2]", "[1, 2, 3, 4]", "[5, 7, 13, 15]", "",
                                "kernel_shape = [2, 2], strides = [2, 2]"));
  EXPECT_EQ(r["y"].dims(), (Dims{1, 1, 4, 4}));
  expectNear(values(r["y"]), {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  // pads [1, 1, 1, 1] take 2 from each dim: (2 - 1) * 2 + 2 - 2 = 2.
  r = evalText(unpoolGraph("[1,1,2,2]", "[1, 2, 3, 4]", "[3, 2, 1, 0]", "",
                           "kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1]"));
  EXPECT_EQ(r["y"].dims(), (Dims{1, 1, 2, 2}));
  expectNear(values(r["y"]), {4, 3, 2, 1});
}

TEST(VisionMaxUnpool, OutputShapeKeepsTheIndicesOfTheInferredShape) {
  // Two channels: I indexes the inferred [1, 2, 2, 2] (4 elements per channel): 0 is channel 0's
  // (0, 0), 5 channel 1's (0, 1). output_shape [1, 2, 3, 3] puts that block at the start of each
  // 3 x 3 plane: 7 lands at 0, 8 at 9 + 1 = 10.
  auto r = evalText(unpoolGraph("[1,2,1,1]", "[7, 8]", "[0, 5]",
                                "  const %s : i64[4] = dense<[1, 2, 3, 3]>\n",
                                "kernel_shape = [2, 2], strides = [2, 2]"));
  EXPECT_EQ(r["y"].dims(), (Dims{1, 2, 3, 3}));
  expectNear(values(r["y"]), {7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0});
}

TEST(VisionMaxUnpool, IndexOutOfRangeIsADataError) {
  for (const char* idx : {"[0, 1, 2, 16]", "[-1, 1, 2, 3]"}) {
    std::string e = runError(unpoolGraph("[1,1,2,2]", "[1, 2, 3, 4]", idx, "",
                                         "kernel_shape = [2, 2], strides = [2, 2]"));
    EXPECT_NE(e.find("is outside [0, 16)"), std::string::npos) << e;
  }
}

TEST(VisionMaxUnpool, ShapesAndErrors) {
  const char* head = "graph @t {\n  input %x : f32[1,2,3,3]\n  input %i : i64[1,2,3,3]\n"
                     "  input %i32 : i32[1,2,3,3]\n  input %s : i64[4]\n"
                     "  const %small : i64[4] = dense<[1, 2, 5, 5]>\n"
                     "  const %big : i64[4] = dense<[1, 2, 7, 8]>\n";
  auto err = [&](const std::string& node) {
    return inferError(std::string(head) + "  " + node + "\n  output %y\n}\n");
  };
  const std::string k = " {kernel_shape = [2, 2], strides = [2, 2]}";
  EXPECT_EQ(err("%y = MaxUnpool(%x, %i)" + k), "");
  EXPECT_EQ(err("%y = MaxUnpool(%x, %i, %big)" + k), "");
  EXPECT_NE(err("%y = MaxUnpool(%x, %i, %small)" + k).find("at least the inferred 1x2x6x6"),
            std::string::npos)
      << err("%y = MaxUnpool(%x, %i, %small)" + k);
  EXPECT_NE(err("%y = MaxUnpool(%x, %i32)" + k).find("I must be i64"), std::string::npos);
  EXPECT_NE(err("%y = MaxUnpool(%x, %i, %s)" + k).find("must be known at compile time"),
            std::string::npos);
  EXPECT_NE(err("%y = MaxUnpool(%x, %i) {kernel_shape = [2]}").find("kernel_shape and strides"),
            std::string::npos);
}

// ---- Det -------------------------------------------------------------------------------------

TEST(Det, LUWithPivoting) {
  // [[1, 2], [3, 4]]: 4 - 6 = -2. [[0, 1, 2], [3, 4, 5], [6, 7, 9]] has a zero first pivot:
  // 0 - 1 * (27 - 30) + 2 * (21 - 24) = -3. [[1, 2], [2, 4]] is singular: 0.
  auto r = evalText(R"(graph @t {
  const %a : f32[2,2] = dense<[1, 2, 3, 4]>
  const %b : f64[3,3] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 9]>
  const %c : f32[2,2] = dense<[1, 2, 2, 4]>
  %da = Det(%a)
  %db = Det(%b)
  %dc = Det(%c)
  output %da, %db, %dc
})");
  EXPECT_EQ(r["da"].dims(), Dims{});
  expectNear(values(r["da"]), {-2});
  EXPECT_EQ(r["db"].dtype(), DType::kF64);
  expectNear(values(r["db"]), {-3}, 1e-12);
  expectNear(values(r["dc"]), {0});
}

TEST(Det, BatchedOverLeadingDims) {
  // [2, 1, 2, 2]: diag(2, 3) -> 6, [[0, 1], [1, 0]] (one swap) -> -1.
  auto r = evalText(R"(graph @t {
  const %x : f32[2,1,2,2] = dense<[2, 0, 0, 3, 0, 1, 1, 0]>
  %d = Det(%x)
  output %d
})");
  EXPECT_EQ(r["d"].dims(), (Dims{2, 1}));
  expectNear(values(r["d"]), {6, -1});
  EXPECT_NE(inferError("graph @t {\n  input %x : f32[2,3]\n  %d = Det(%x)\n  output %d\n}\n")
                .find("square matrices"),
            std::string::npos);
  EXPECT_NE(inferError("graph @t {\n  input %x : i32[2,2]\n  %d = Det(%x)\n  output %d\n}\n")
                .find("must be f32 or f64"),
            std::string::npos);
}

}  // namespace
