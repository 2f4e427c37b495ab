// NN op family: shape inference (including the error messages for bad attributes and shapes) and
// the reference kernels against hand-checked values. NNConformance runs ONNX's backend node tests
// converted by tests/unit/data/onnx_node_to_ir.py when $MAGNETO_NN_IR_DIR names their directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include <set>

#include "magneto/frontend/onnx_import.h"
#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

// ---- Conv ---------------------------------------------------------------------------------

// x = 0..15 as 1x1x4x4, w = ones 1x1x3x3.
const char* kConvPrefix = R"(graph @t {
  const %x : f32[1,1,4,4] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]>
  const %w : f32[1,1,3,3] = splat<1>
)";

std::string convGraph(const std::string& attrs, const std::string& extraOperands = "") {
  return std::string(kConvPrefix) + "  %y = Conv(%x, %w" + extraOperands + ") {" + attrs +
         "}\n  output %y\n}\n";
}

TEST(NNConv, PadsAndStrides) {
  auto r = evalText(convGraph("pads = [1, 1, 1, 1], strides = [2, 2]"));
  ASSERT_EQ(r["y"].dims(), (Dims{1, 1, 2, 2}));
  // Windows centred on (0,0), (0,2), (2,0), (2,2) with zero padding.
  expectNear(values(r["y"]), {0 + 1 + 4 + 5, 1 + 2 + 3 + 5 + 6 + 7, 4 + 5 + 8 + 9 + 12 + 13,
                              5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15});
}

TEST(NNConv, Dilation) {
  // Dilated kernel extent 5 > 4 without padding: a clear error, not a crash.
  EXPECT_NE(inferError(convGraph("dilations = [2, 2]")).find("smaller than the dilated kernel 5"),
            std::string::npos);
  auto r = evalText(convGraph("dilations = [2, 2], pads = [1, 1, 1, 1]"));
  ASSERT_EQ(r["y"].dims(), (Dims{1, 1, 2, 2}));
  // Output (i,j) taps rows and cols {i-1, i+1, i+3}: (0,0) sums (1,1),(1,3),(3,1),(3,3).
  expectNear(values(r["y"]), {5 + 7 + 13 + 15, 4 + 6 + 12 + 14, 1 + 3 + 9 + 11, 0 + 2 + 8 + 10});
}


TEST(NNConv, GroupAndDepthwise) {
  // group 2: each output channel scales its own input channel.
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2,1,2] = dense<[1, 2, 5, 6]>
  const %w : f32[2,1,1,1] = dense<[2, 3]>
  %y = Conv(%x, %w) {group = 2}
  output %y
})");
  expectNear(values(r["y"]), {2, 4, 15, 18});
  // Depthwise with channel multiplier 2: outputs 0,1 read input 0; outputs 2,3 read input 1.
  auto d = evalText(R"(graph @t {
  const %x : f32[1,2,1,2] = dense<[1, 2, 5, 6]>
  const %w : f32[4,1,1,1] = dense<[1, -1, 10, 0.5]>
  const %b : f32[4] = dense<[0, 0, 1, 0]>
  %y = Conv(%x, %w, %b) {group = 2}
  output %y
})");
  ASSERT_EQ(d["y"].dims(), (Dims{1, 4, 1, 2}));
  expectNear(values(d["y"]), {1, 2, -1, -2, 51, 61, 2.5, 3});
}

TEST(NNConv, AutoPadSame) {
  // 2x2 ones kernel, stride 1: total padding 1 goes to the end (UPPER) or the beginning (LOWER).
  auto up = evalText(R"(graph @t {
  const %x : f32[1,1,4,4] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]>
  const %w : f32[1,1,2,2] = splat<1>
  %y = Conv(%x, %w) {auto_pad = "SAME_UPPER"}
  %z = Conv(%x, %w) {auto_pad = "SAME_LOWER"}
  output %y, %z
})");
  ASSERT_EQ(up["y"].dims(), (Dims{1, 1, 4, 4}));
  std::vector<double> y = values(up["y"]), z = values(up["z"]);
  EXPECT_EQ(y[0], 0 + 1 + 4 + 5);
  EXPECT_EQ(y[15], 15);
  EXPECT_EQ(z[0], 0);
  EXPECT_EQ(z[15], 10 + 11 + 14 + 15);
}

TEST(NNConv, EpilogueReluAndResidual) {
  // y = Relu(-x + 1 + residual): bias then residual then the activation.
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,1,4] = dense<[0, 1, 2, 3]>
  const %w : f32[1,1,1,1] = dense<[-1]>
  const %b : f32[1] = dense<[1]>
  const %r : f32[1,1,1,4] = dense<[0, 0, 0.5, 5]>
  %y = Conv(%x, %w, %b, %r) {mg_act = "Relu"}
  %l = Conv(%x, %w, %b) {mg_act = "LeakyRelu", mg_alpha = 0.5}
  output %y, %l
})");
  expectNear(values(r["y"]), {1, 0, 0, 3});
  expectNear(values(r["l"]), {1, 0, -0.5, -1});
}

TEST(NNConv, Conv1DAnd3D) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,5] = dense<[1, 2, 3, 4, 5]>
  const %w : f32[1,1,2] = dense<[1, -1]>
  %y = Conv(%x, %w) {strides = [2]}
  const %x3 : f32[1,1,2,2,2] = dense<[1, 2, 3, 4, 5, 6, 7, 8]>
  const %w3 : f32[1,1,2,2,2] = splat<1>
  %y3 = Conv(%x3, %w3)
  output %y, %y3
})");
  expectNear(values(r["y"]), {-1, -1});
  expectNear(values(r["y3"]), {36});
}

TEST(NNConv, ShapeErrors) {
  const char* head = "graph @t {\n  input %x : f32[1,3,8,8]\n  input %w : f32[4,4,3,3]\n";
  auto err = [&](const std::string& node) {
    return inferError(std::string(head) + "  %y = " + node + "\n  output %y\n}\n");
  };
  EXPECT_NE(err("Conv(%x, %w)").find("weight has 4 input channels per group, input has 3"),
            std::string::npos) << err("Conv(%x, %w)");
  std::string head2 = "graph @t {\n  input %x : f32[1,4,8,8]\n  input %w : f32[4,4,3,3]\n";
  auto err2 = [&](const std::string& node) {
    return inferError(head2 + "  %y = " + node + "\n  output %y\n}\n");
  };
  EXPECT_TRUE(err2("Conv(%x, %w)").empty());
  EXPECT_NE(err2("Conv(%x, %w) {strides = [0, 1]}").find("strides must be positive"), std::string::npos);
  EXPECT_NE(err2("Conv(%x, %w) {pads = [1, 1]}").find("pads has 2 values, expected 4"), std::string::npos);
  EXPECT_NE(err2("Conv(%x, %w) {kernel_shape = [3]}").find("kernel_shape [3] does not match"), std::string::npos);
  EXPECT_NE(err2("Conv(%x, %w) {group = 3}").find("group 3 does not divide the 4 input channels"), std::string::npos);
  EXPECT_NE(err2("Conv(%x, %w) {auto_pad = \"SAME\"}").find("auto_pad must be"), std::string::npos);
  EXPECT_NE(err2("Conv(%x, %w) {dilations = [1, -1]}").find("dilations must be positive"), std::string::npos);
  EXPECT_NE(err2("MaxPool(%x) {kernel_shape = [2, 2], strides = [0, 0]}").find("strides must be positive"), std::string::npos);
  EXPECT_NE(err2("MaxPool(%x) {kernel_shape = [2, 2, 2]}").find("kernel_shape has 3 values"), std::string::npos);
  EXPECT_NE(err2("Gemm(%x, %w)").find("must have rank 2"), std::string::npos);
}

// ---- ConvTranspose ----------------------------------------------------------------------------

TEST(NNConvTranspose, OutputPaddingAndStride) {
  // Scatter: x0 * [1,1,1] at 0..2, x1 * [1,1,1] at 2..4, then one extra (output_padding) column.
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,2] = dense<[1, 2]>
  const %w : f32[1,1,3] = splat<1>
  %y = ConvTranspose(%x, %w) {strides = [2], output_padding = [1]}
  %p = ConvTranspose(%x, %w) {strides = [2], pads = [1, 1]}
  output %y, %p
})");
  ASSERT_EQ(r["y"].dims(), (Dims{1, 1, 6}));
  expectNear(values(r["y"]), {1, 1, 3, 2, 2, 0});
  expectNear(values(r["p"]), {1, 3, 2});
}

TEST(NNConvTranspose, GroupsAndBias) {
  // group 2, one output channel per group, 1x1 kernel: y_c = w_c * x_c + b_c.
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2,1,1] = dense<[3, 4]>
  const %w : f32[2,1,1,1] = dense<[2, -1]>
  const %b : f32[2] = dense<[1, 1]>
  %y = ConvTranspose(%x, %w, %b) {group = 2, mg_act = "Relu"}
  output %y
})");
  expectNear(values(r["y"]), {7, 0});
}

// ---- Col2Im / DeformConv (opsets 18, 19) --------------------------------------------------

TEST(NNCol2Im, SumsOverlappingBlocks) {
  // 1-D image of 4, blocks of 2: rows are block offsets 0 and 1 (a = 1 2 3, b = 10 20 30), the 3
  // columns block positions. Position l, offset k lands on l + k: a0, a1 + b0, a2 + b1, b2. With
  // strides 2 and pads 1 the 3 positions start at -1, 1, 3: b0, a1, b1, a2 (a0 and b2 fall into
  // the padding).
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2,3] = dense<[1, 2, 3, 10, 20, 30]>
  const %im : i64[1] = dense<[4]>
  const %bl : i64[1] = dense<[2]>
  %y = Col2Im(%x, %im, %bl)
  %s = Col2Im(%x, %im, %bl) {strides = [2], pads = [1, 1]}
  output %y, %s
})");
  ASSERT_EQ(r["y"].dims(), (Dims{1, 1, 4}));
  expectNear(values(r["y"]), {1, 12, 23, 30});
  expectNear(values(r["s"]), {10, 2, 20, 3});

  std::string e = inferError(R"(graph @t {
  input %x : f32[1,2,4]
  const %im : i64[1] = dense<[4]>
  const %bl : i64[1] = dense<[2]>
  %y = Col2Im(%x, %im, %bl)
  output %y
})");
  EXPECT_NE(e.find("input must be [N, C * 2, 3]"), std::string::npos) << e;
  e = inferError(R"(graph @t {
  input %x : f32[1,2,3]
  const %im : i64[2] = dense<[4, 1]>
  const %bl : i64[1] = dense<[2]>
  %y = Col2Im(%x, %im, %bl)
  output %y
})");
  EXPECT_NE(e.find("must have the same, non-zero length"), std::string::npos) << e;
}

TEST(NNDeformConv, OffsetsAndMask) {
  // x = 0..8 as 3x3, 2x2 kernel of ones. Zero offsets: a plain convolution (window sums 8, 12,
  // 20, 24). Every tap moved down by half a pixel: each samples the mean of two rows, and the
  // rows below the image are zero: row 0 of the output gives (0+3 + 1+4 + 3+6 + 4+7) / 2 = 14 and
  // (1+4 + 2+5 + 4+7 + 5+8) / 2 = 18, row 1 gives (3+6 + 4+7 + 6 + 7) / 2 = 16.5 and 19.5. A mask
  // of 0.5 halves everything.
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,3,3] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8]>
  const %w : f32[1,1,2,2] = splat<1>
  const %zero : f32[1,8,2,2] = splat<0>
  const %down : f32[1,8,2,2] = dense<[0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0]>
  const %b : f32[1] = dense<[1]>
  const %half : f32[1,4,2,2] = splat<0.5>
  %plain = DeformConv(%x, %w, %zero)
  %moved = DeformConv(%x, %w, %down)
  %masked = DeformConv(%x, %w, %down, %b, %half)
  output %plain, %moved, %masked
})");
  ASSERT_EQ(r["plain"].dims(), (Dims{1, 1, 2, 2}));
  expectNear(values(r["plain"]), {8, 12, 20, 24});
  expectNear(values(r["moved"]), {14, 18, 16.5, 19.5});
  expectNear(values(r["masked"]), {8, 10, 9.25, 10.75});

  std::string e = inferError(R"(graph @t {
  input %x : f32[1,1,3,3]
  input %w : f32[1,1,2,2]
  input %o : f32[1,4,2,2]
  %y = DeformConv(%x, %w, %o)
  output %y
})");
  EXPECT_NE(e.find("offset must be 1x8x2x2"), std::string::npos) << e;
}

// ---- Gemm / MatMul ------------------------------------------------------------------------

TEST(NNGemm, TransposesAlphaBetaBroadcastC) {
  auto r = evalText(R"(graph @t {
  const %a : f32[3,2] = dense<[1, 2, 3, 4, 5, 6]>
  const %b : f32[2,3] = dense<[1, 0, 1, 0, 1, 0]>
  const %c : f32[2] = dense<[1, 2]>
  %y = Gemm(%a, %b, %c) {transA = 1, transB = 1, alpha = 2.0, beta = 0.5}
  %n = Gemm(%a, %b)
  output %y, %n
})");
  // A' = [[1,3,5],[2,4,6]], B' = [[1,0],[0,1],[1,0]]: A'B' = [[6,3],[8,4]].
  ASSERT_EQ(r["y"].dims(), (Dims{2, 2}));
  expectNear(values(r["y"]), {12.5, 7, 16.5, 9});
  expectNear(values(r["n"]), {1, 2, 1, 3, 4, 3, 5, 6, 5});
  EXPECT_NE(inferError("graph @t {\n input %a : f32[2,3]\n input %b : f32[2,3]\n %y = Gemm(%a, %b)\n output %y\n}\n")
                .find("inner dimensions differ"),
            std::string::npos);
}

TEST(NNMatMul, VectorsAndBatchBroadcast) {
  auto r = evalText(R"(graph @t {
  const %v : f32[3] = dense<[1, 2, 3]>
  const %m : f32[3,2] = dense<[1, 2, 3, 4, 5, 6]>
  %vm = MatMul(%v, %m)
  %vv = MatMul(%v, %v)
  const %mt : f32[2,3] = dense<[1, 0, 0, 0, 1, 0]>
  %mv = MatMul(%mt, %v)
  const %a : f32[2,1,2,2] = dense<[1, 0, 0, 1, 2, 0, 0, 2]>
  const %b : f32[3,2,2] = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]>
  %ab = MatMul(%a, %b)
  output %vm, %vv, %mv, %ab
})");
  EXPECT_EQ(r["vm"].dims(), (Dims{2}));
  expectNear(values(r["vm"]), {22, 28});
  EXPECT_EQ(r["vv"].dims(), (Dims{}));
  expectNear(values(r["vv"]), {14});
  expectNear(values(r["mv"]), {1, 2});
  ASSERT_EQ(r["ab"].dims(), (Dims{2, 3, 2, 2}));
  std::vector<double> ab = values(r["ab"]);
  // Batch (0, j) is B[j]; batch (1, j) is 2 * B[j].
  EXPECT_EQ(ab[4 * 2 + 3], 12);
  EXPECT_EQ(ab[4 * 5 + 0], 18);
}

// ---- Pools --------------------------------------------------------------------------------

TEST(NNPool, MaxPoolCeilModeAndIndices) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,4,4] = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]>
  %y, %i = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1}
  %yc, %ic = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1, storage_order = 1}
  %f = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2]}
  output %y, %i, %ic, %f
})");
  ASSERT_EQ(r["y"].dims(), (Dims{1, 1, 2, 2}));
  expectNear(values(r["y"]), {10, 11, 14, 15});
  EXPECT_EQ(r["i"].dtype(), DType::kI64);
  expectNear(values(r["i"]), {10, 11, 14, 15});
  expectNear(values(r["ic"]), {10, 14, 11, 15});  // column-major: h + w * H
  EXPECT_EQ(r["f"].dims(), (Dims{1, 1, 1, 1}));
}

TEST(NNPool, CeilModeDropsWindowStartingInPadding) {
  // in 4, kernel 2, stride 2, end pad 1: ceil gives 3 windows but the third would start in the
  // padding, so there are 2 (PyTorch and onnxruntime agree).
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,4] = dense<[1, 2, 3, 4]>
  %y = MaxPool(%x) {kernel_shape = [2], strides = [2], pads = [0, 1], ceil_mode = 1}
  output %y
})");
  ASSERT_EQ(r["y"].dims(), (Dims{1, 1, 2}));
}

TEST(NNPool, AveragePoolCountIncludePad) {
  const char* g = R"(graph @t {
  const %x : f32[1,1,3,3] = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9]>
  %e = AveragePool(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1]}
  %i = AveragePool(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1}
  output %e, %i
})";
  auto r = evalText(g);
  expectNear(values(r["e"]), {1, 2.5, 5.5, 7});
  expectNear(values(r["i"]), {0.25, 1.25, 2.75, 7});
}

TEST(NNPool, GlobalLpAndRoiPools) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2,1,2] = dense<[3, 4, -1, 5]>
  %ga = GlobalAveragePool(%x)
  %gm = GlobalMaxPool(%x)
  %gl = GlobalLpPool(%x)
  %lp = LpPool(%x) {kernel_shape = [1, 2], p = 1}
  const %rois : f32[1,5] = dense<[0, 0, 0, 1, 0]>
  %roi = MaxRoiPool(%x, %rois) {pooled_shape = [1, 1]}
  output %ga, %gm, %gl, %lp, %roi
})");
  EXPECT_EQ(r["ga"].dims(), (Dims{1, 2, 1, 1}));
  expectNear(values(r["ga"]), {3.5, 2});
  expectNear(values(r["gm"]), {4, 5});
  expectNear(values(r["gl"]), {5, std::sqrt(26.0)});
  expectNear(values(r["lp"]), {7, 6});
  expectNear(values(r["roi"]), {4, 5});
}

// ---- Normalizations -----------------------------------------------------------------------

TEST(NNNorm, BatchNormInference) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2,1,2] = dense<[1, 2, 3, 4]>
  const %s : f32[2] = dense<[1, 2]>
  const %b : f32[2] = dense<[0, 1]>
  const %m : f32[2] = dense<[1, 3]>
  const %v : f32[2] = dense<[4, 1]>
  %y = BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 0.0}
  output %y
})");
  expectNear(values(r["y"]), {0, 0.5, 1, 3});
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f32[1,2,1,2]
  input %s : f32[2]
  %y = BatchNormalization(%x, %s, %s, %s, %s) {training_mode = 1}
  output %y
})").find("training mode is not supported"), std::string::npos);
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f32[1,2,1,2]
  input %s : f32[3]
  %y = BatchNormalization(%x, %s, %s, %s, %s)
  output %y
})").find("scale must be [2] (one per channel), got f32[3]"), std::string::npos);
}

// Opset 23's transformer ops (src/ops/nn_ops_attention.cpp, runtime/cpu/k_nn_attention.cpp).
TEST(NNAttention, RMSNormalization) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,2] = dense<[3, 4]>
  const %s : f32[2] = dense<[1, 2]>
  %y = RMSNormalization(%x, %s) {epsilon = 0.0}
  output %y
})");
  // rms = sqrt((9 + 16) / 2) = 3.5355339
  expectNear(values(r["y"]), {0.8485281, 2.2627417});
}

TEST(NNAttention, RotaryEmbeddingQuarterTurn) {
  // cos 0, sin 1: (x1, x2) -> (-x2, x1) on the rotated dims; the last two dims are copied.
  auto r = evalText(R"(graph @t {
  const %x : f32[1,1,1,4] = dense<[1, 2, 5, 6]>
  const %c : f32[1,1,1] = dense<[0]>
  const %s : f32[1,1,1] = dense<[1]>
  %y = RotaryEmbedding(%x, %c, %s) {rotary_embedding_dim = 2}
  const %pos : i64[1,1] = dense<[1]>
  const %cc : f32[2,2] = dense<[1, 1, 0, 0]>
  const %sc : f32[2,2] = dense<[0, 0, 1, 1]>
  %yi = RotaryEmbedding(%x, %cc, %sc, %pos) {interleaved = 1}
  output %y, %yi
})");
  expectNear(values(r["y"]), {-2, 1, 5, 6});
  expectNear(values(r["yi"]), {-2, 1, -6, 5});
}

TEST(NNAttention, SoftmaxOverKeysCausalAndPast) {
  // One query, keys 0 and ln 3: weights 1/4 and 3/4 over values 4 and 8 -> 7. Causal without a
  // past sees only key 0 -> 4; with the second key as the past it sees both again -> 7.
  auto r = evalText(R"(graph @t {
  const %q : f32[1,1,1,1] = dense<[1]>
  const %k : f32[1,1,2,1] = dense<[0, 1.0986123]>
  const %v : f32[1,1,2,1] = dense<[4, 8]>
  %y = Attention(%q, %k, %v) {scale = 1.0}
  %yc = Attention(%q, %k, %v) {scale = 1.0, is_causal = 1}
  const %k1 : f32[1,1,1,1] = dense<[1.0986123]>
  const %v1 : f32[1,1,1,1] = dense<[8]>
  const %pk : f32[1,1,1,1] = dense<[0]>
  const %pv : f32[1,1,1,1] = dense<[4]>
  %yp, %pko, %pvo = Attention(%q, %k1, %v1, _, %pk, %pv) {scale = 1.0, is_causal = 1}
  output %y, %yc, %yp, %pko, %pvo
})");
  expectNear(values(r["y"]), {7});
  expectNear(values(r["yc"]), {4});
  expectNear(values(r["yp"]), {7});
  expectNear(values(r["pko"]), {0, 1.0986123});
  expectNear(values(r["pvo"]), {4, 8});
}

TEST(NNAttention, InconsistentHeadsAreErrors) {
  EXPECT_NE(inferError(R"(graph @t {
  input %q : f32[1,2,12]
  input %k : f32[1,2,8]
  %y = Attention(%q, %k, %k) {q_num_heads = 3, kv_num_heads = 2}
  output %y
})").find("q_num_heads 3 is not a multiple of kv_num_heads 2"), std::string::npos);
  EXPECT_NE(inferError(R"(graph @t {
  input %q : f32[1,2,3,4]
  input %k : f32[1,2,5,4]
  input %m : f32[3,3,5]
  %y = Attention(%q, %k, %k, %m)
  output %y
})").find("attn_mask f32[3,3,5] does not broadcast"), std::string::npos);
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f32[1,2,10]
  input %c : f32[1,2,3]
  %y = RotaryEmbedding(%x, %c, %c) {num_heads = 3}
  output %y
})").find("hidden size 10 of X f32[1,2,10] is not divisible by num_heads 3"), std::string::npos);
}

TEST(NNNorm, LayerNormWithStatistics) {
  auto r = evalText(R"(graph @t {
  const %x : f32[2,2] = dense<[1, 3, 2, 6]>
  const %s : f32[2] = dense<[2, 1]>
  const %b : f32[2] = dense<[0, 1]>
  %y, %mean, %inv = LayerNormalization(%x, %s, %b) {epsilon = 0.0}
  output %y, %mean, %inv
})");
  expectNear(values(r["y"]), {-2, 2, -2, 2});
  EXPECT_EQ(r["mean"].dims(), (Dims{2, 1}));
  expectNear(values(r["mean"]), {2, 4});
  expectNear(values(r["inv"]), {1, 0.5});
}

TEST(NNNorm, GroupInstanceLpNormAndLRN) {
  auto r = evalText(R"(graph @t {
  const %x : f32[1,4,1,1] = dense<[1, 2, 3, 4]>
  const %one : f32[4] = splat<1>
  const %zero : f32[4] = splat<0>
  %gn = GroupNormalization(%x, %one, %zero) {num_groups = 2, epsilon = 0.0}
  const %v : f32[1,2] = dense<[1, 3]>
  %l1 = LpNormalization(%v) {p = 1}
  %l2 = LpNormalization(%v)
  const %c : f32[1,3,1,1] = dense<[1, 2, 3]>
  %lrn = LRN(%c) {size = 3, alpha = 3.0, beta = 1.0, bias = 1.0}
  output %gn, %l1, %l2, %lrn
})");
  expectNear(values(r["gn"]), {-1, 1, -1, 1});
  expectNear(values(r["l1"]), {0.25, 0.75});
  expectNear(values(r["l2"]), {1 / std::sqrt(10.0), 3 / std::sqrt(10.0)});
  // alpha / size = 1: divisors 1 + (1+4), 1 + (1+4+9), 1 + (4+9).
  expectNear(values(r["lrn"]), {1.0 / 6, 2.0 / 15, 3.0 / 14});
}

TEST(NNKernel, DoublePrecision) {
  auto r = evalText(R"(graph @t {
  const %a : f64[1,2] = dense<[1, 2]>
  const %b : f64[2,1] = dense<[3, 4]>
  %y = MatMul(%a, %b)
  output %y
})");
  EXPECT_EQ(r["y"].dtype(), DType::kF64);
  expectNear(values(r["y"]), {11});
}


// Random (often invalid) attributes and shapes: every case either infers and runs or reports an
// error; none may crash. Deterministic seed, so a failure reproduces.
TEST(NNRobustness, RandomAttributesNeverCrash) {
  uint64_t state = 12345;
  auto rnd = [&](int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  };
  auto list = [&](int len, int lo, int hi) {
    std::string s = "[";
    for (int i = 0; i < len; ++i) s += (i ? ", " : "") + std::to_string(lo + rnd(hi - lo + 1));
    return s + "]";
  };
  const char* ops[] = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"};
  const char* pads[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER", "BOGUS"};
  int ran = 0;
  for (int iter = 0; iter < 400; ++iter) {
    int nsp = 1 + rnd(3);
    std::string op = ops[rnd(5)];
    int c = 1 + rnd(4), m = 1 + rnd(4), grp = 1 + rnd(3);
    std::string xs = "1," + std::to_string(c), ws = std::to_string(op == "ConvTranspose" ? c : m) +
                                                    "," + std::to_string(1 + rnd(3));
    for (int d = 0; d < nsp; ++d) {
      xs += "," + std::to_string(rnd(6));
      ws += "," + std::to_string(rnd(4));
    }
    std::vector<std::string> attrs;
    if (rnd(2)) attrs.push_back("strides = " + list(rnd(4) ? nsp : nsp + 1, -1, 3));
    if (rnd(2)) attrs.push_back("dilations = " + list(nsp, 0, 3));
    if (rnd(2)) attrs.push_back("pads = " + list(rnd(4) ? 2 * nsp : nsp, -1, 3));
    if (rnd(3) == 0) attrs.push_back(std::string("auto_pad = \"") + pads[rnd(5)] + "\"");
    if (op.find("Pool") != std::string::npos) {
      attrs.push_back("kernel_shape = " + list(rnd(5) ? nsp : nsp + 1, 0, 4));
      if (rnd(2)) attrs.push_back("ceil_mode = 1");
      if (op == "AveragePool" && rnd(2)) attrs.push_back("count_include_pad = 1");
    } else {
      if (rnd(2)) attrs.push_back("group = " + std::to_string(grp));
      if (op == "ConvTranspose" && rnd(2)) attrs.push_back("output_padding = " + list(nsp, 0, 2));
      if (op == "ConvTranspose" && rnd(3) == 0) attrs.push_back("output_shape = " + list(nsp, 1, 9));
    }
    std::string at;
    for (size_t i = 0; i < attrs.size(); ++i) at += (i ? ", " : "") + attrs[i];
    bool pool = op.find("Pool") != std::string::npos;
    std::string text = "graph @t {\n  const %x : f32[" + xs + "] = random<1>\n" +
                       (pool ? "" : "  const %w : f32[" + ws + "] = random<2>\n") + "  %y = " + op +
                       (pool ? "(%x)" : "(%x, %w)") + " {" + at + "}\n  output %y\n}\n";
    auto g = parseGraph(text);
    if (!g.ok()) {
      EXPECT_FALSE(g.status().message().empty());
      continue;
    }
    auto r = interpret(*g.value(), {});
    EXPECT_TRUE(r.ok()) << text << r.status().message();
    ++ran;
  }
  EXPECT_GT(ran, 20);
}

}  // namespace

// ---- ONNX backend node tests --------------------------------------------------------------

TEST(NNConformance, OnnxBackendNodeTests) {
  const char* dir = std::getenv("MAGNETO_NN_IR_DIR");
  if (!dir) GTEST_SKIP() << "set MAGNETO_NN_IR_DIR to the output of onnx_node_to_ir.py";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".mlir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int passed = 0, unsupportedCount = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string name = f.stem().string();
    auto g = parseGraph(ss.str(), name);
    if (!g.ok()) {
      const std::string& m = g.status().message();
      if (m.find("not supported") != std::string::npos || m.find("unknown op") != std::string::npos) {
        ++unsupportedCount;
        std::printf("  unsupported %s: %s\n", name.c_str(), g.status().message().c_str());
      } else {
        ADD_FAILURE() << name << ": " << g.status().message();
      }
      continue;
    }
    auto r = interpret(*g.value(), {});
    if (!r.ok()) {
      ADD_FAILURE() << name << ": " << r.status().message();
      continue;
    }
    bool ok = true;
    for (Value* o : g.value()->outputs()) {
      Value* want = g.value()->findValue("expected_" + o->name());
      if (!want || !want->isConstant()) {
        ADD_FAILURE() << name << ": no expected value for " << o->name();
        ok = false;
        continue;
      }
      const Tensor& got = r.value().at(o->name());
      const Tensor& exp = want->constant();
      if (got.type() != exp.type()) {
        ADD_FAILURE() << name << ": " << o->name() << " is " << got.type().str() << ", expected "
                      << exp.type().str();
        ok = false;
        continue;
      }
      for (int64_t i = 0; i < got.numel(); ++i) {
        double a = got.floatAt(i), b = exp.floatAt(i);
        if (std::fabs(a - b) > 1e-5 + 1e-4 * std::fabs(b)) {
          ADD_FAILURE() << name << ": " << o->name() << " element " << i << ": " << a << " vs "
                        << b;
          ok = false;
          break;
        }
      }
    }
    if (ok) ++passed;
  }
  std::printf("  %d of %zu passed, %d unsupported\n", passed, files.size(), unsupportedCount);
}

// ONNX's backend data (node/, pytorch-converted/, pytorch-operator/) for every model made only of
// this family's ops (plus shape plumbing), through the whole frontend and the reference
// interpreter. Training-mode BatchNormalization is expected to be reported as unsupported.
namespace {

namespace fs = std::filesystem;

const std::set<std::string>& nnFamilyOps() {
  static const std::set<std::string> k = {
      "Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "LpPool",
      "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "MaxRoiPool", "BatchNormalization",
      "InstanceNormalization", "LayerNormalization", "GroupNormalization", "LpNormalization",
      "MeanVarianceNormalization", "LRN", "LSTM", "GRU", "RNN"};
  return k;
}

// "" when the case passes; "skip: ..." when the model is out of scope.
std::string runBackendCase(const fs::path& dir) {
  onnx::ModelProto model;
  {
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!model.ParseFromIstream(&in)) return "skip: cannot parse model.onnx";
  }
  bool mine = false;
  for (const auto& n : model.graph().node()) {
    if (nnFamilyOps().count(n.op_type())) mine = true;
    else if (n.op_type() != "Constant" && n.op_type() != "Squeeze" && n.op_type() != "Unsqueeze" &&
             n.op_type() != "Transpose")
      return "skip: other ops";
  }
  if (!mine) return "skip: other ops";
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::map<std::string, Tensor> inputs;
  int k = 0;
  for (const auto& vi : model.graph().input()) {
    if (inits.count(vi.name())) continue;
    auto t = readTensorProtoFile((dir / "test_data_set_0" / ("input_" + std::to_string(k++) + ".pb")).string());
    if (!t.ok()) return "skip: " + t.status().message();
    inputs[vi.name()] = t.value();
  }
  ImportOptions opts;
  for (const auto& [name, t] : inputs) opts.shapes[name] = t.dims();
  auto g = importOnnx((dir / "model.onnx").string(), opts);
  if (!g.ok()) {
    const std::string& m = g.status().message();
    if (m.find("training mode is not supported") != std::string::npos) return "skip: " + m;
    // Old opsets that ONNX's own version converter cannot upgrade: the frontend's concern.
    if (m.find("version converter") != std::string::npos) return "skip: frontend: " + m;
    return "import: " + m;
  }
  std::map<std::string, Tensor> bound;
  for (Value* v : g.value()->inputs()) {
    if (!inputs.count(v->name())) return "no test data for input " + v->name();
    bound[v->name()] = inputs[v->name()];
  }
  auto r = interpret(*g.value(), bound);
  if (!r.ok()) return "interpret: " + r.status().message();
  const auto& outs = g.value()->outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    auto want = readTensorProtoFile((dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")).string());
    if (!want.ok()) return want.status().message();
    const Tensor& got = r.value().at(outs[i]->name());
    if (got.type() != want.value().type())
      return fmt::format("result {}: got {}, expected {}", i, got.type().str(), want.value().type().str());
    for (int64_t e = 0; e < got.numel(); ++e) {
      double a = got.floatAt(e), b = want.value().floatAt(e);
      if (!(std::fabs(a - b) <= 1e-5 + 1e-4 * std::fabs(b)))
        return fmt::format("result {} element {}: got {}, expected {}", i, e, a, b);
    }
  }
  return "";
}

}  // namespace

TEST(NNConformance, OnnxBackendDataThroughFrontend) {
  fs::path root = "/usr/share/libonnx-testdata/data";
  MG_SKIP_UNLESS_INSTALLED(fs::exists(root), "libonnx-testdata");
  std::vector<fs::path> dirs;
  for (const char* sub : {"node", "pytorch-converted", "pytorch-operator"}) {
    if (!fs::exists(root / sub)) continue;
    for (const auto& e : fs::directory_iterator(root / sub)) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  int passed = 0;
  std::vector<std::string> failures, skipped;
  for (const auto& d : dirs) {
    if (d.filename().string().find("_expanded") != std::string::npos) continue;
    std::string err = runBackendCase(d);
    std::string name = d.parent_path().filename().string() + "/" + d.filename().string();
    if (err.empty()) ++passed;
    else if (err.rfind("skip: other ops", 0) == 0) continue;
    else if (err.rfind("skip: ", 0) == 0) skipped.push_back(name + ": " + err);
    else failures.push_back(name + ": " + err);
  }
  std::string all;
  for (const auto& f : failures) all += "  " + f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures:\n" << all;
  EXPECT_GT(passed, 140);
  std::printf("ONNX backend data of the NN family: %d passed, %zu failed, %zu skipped\n", passed,
              failures.size(), skipped.size());
  for (const auto& s : skipped) std::printf("  %s\n", s.c_str());
}
