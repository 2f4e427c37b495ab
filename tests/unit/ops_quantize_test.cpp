// Quantization op family (src/ops/quantize_ops.cpp, runtime/cpu/k_quantize.cpp): the reference
// kernels against hand-checked values (ties rounded to even, saturation at the int8 and uint8
// bounds, per-axis / per-row / per-column / per-channel scales and zero points) and shape
// inference's errors. Every expected number below is worked out in the comment beside it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "mg_quant.h"
#include "op_test_util.h"

using namespace magneto;
using namespace magneto::testing;

namespace {

// ---- the shared arithmetic ----------------------------------------------------------------

TEST(QuantArith, RoundHalfEven) {
  using mgrt::quant::roundHalfEven;
  EXPECT_EQ(roundHalfEven(0.5f), 0.f);
  EXPECT_EQ(roundHalfEven(1.5f), 2.f);
  EXPECT_EQ(roundHalfEven(2.5f), 2.f);
  EXPECT_EQ(roundHalfEven(-0.5f), 0.f);
  EXPECT_EQ(roundHalfEven(-1.5f), -2.f);
  EXPECT_EQ(roundHalfEven(-2.5f), -2.f);
  EXPECT_EQ(roundHalfEven(2.4999998f), 2.f);
  EXPECT_EQ(roundHalfEven(2.5000002f), 3.f);
  EXPECT_EQ(roundHalfEven(-3.7f), -4.f);
  EXPECT_EQ(roundHalfEven(16777216.f), 16777216.f);  // 2^24: already an integer
}

TEST(QuantArith, SaturateAndNaN) {
  using mgrt::quant::quantize;
  EXPECT_EQ(quantize(1e30f, 1.f, 0, -128, 127), 127);
  EXPECT_EQ(quantize(-1e30f, 1.f, 0, -128, 127), -128);
  EXPECT_EQ(quantize(std::numeric_limits<float>::infinity(), 1.f, 3, 0, 255), 255);
  EXPECT_EQ(quantize(std::numeric_limits<float>::quiet_NaN(), 1.f, 3, 0, 255), 3);
  EXPECT_EQ(quantize(127.5f, 1.f, 0, -128, 127), 127);  // 128 saturates
  EXPECT_EQ(quantize(-128.5f, 1.f, 0, -128, 127), -128);  // tie to -128, in range
}

// ---- QuantizeLinear -------------------------------------------------------------------------

TEST(QuantizeLinear, TiesToEvenInt8) {
  auto r = evalText(R"(graph @t {
  const %x : f32[8] = dense<[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.4, 3.6]>
  const %s : f32[] = dense<[1]>
  const %z : i8[] = dense<[0]>
  %y = QuantizeLinear(%x, %s, %z)
  output %y
})");
  ASSERT_EQ(r["y"].dtype(), DType::kI8);
  EXPECT_EQ(values<int8_t>(r["y"]), (std::vector<int8_t>{0, 2, 2, 0, -2, -2, 3, 4}));
}

TEST(QuantizeLinear, ScaleDividesBeforeRounding) {
  // x / 2 = 0.5, 1.5, 2.5, 3.5 -> 0, 2, 2, 4; plus zero point 7.
  auto r = evalText(R"(graph @t {
  const %x : f32[4] = dense<[1, 3, 5, 7]>
  const %s : f32[] = dense<[2]>
  const %z : u8[] = dense<[7]>
  %y = QuantizeLinear(%x, %s, %z)
  output %y
})");
  EXPECT_EQ(values<uint8_t>(r["y"]), (std::vector<uint8_t>{7, 9, 9, 11}));
}

TEST(QuantizeLinear, SaturatesUint8AndInt8) {
  // uint8, zero point 128: -200+128 -> 0, 200+128 -> 255, round(127.5) = 128, +128 -> 255,
  // round(-128.5) = -128, +128 -> 0.
  auto r = evalText(R"(graph @t {
  const %x : f32[4] = dense<[-200, 200, 127.5, -128.5]>
  const %s : f32[] = dense<[1]>
  const %zu : u8[] = dense<[128]>
  const %zi : i8[] = dense<[0]>
  %u = QuantizeLinear(%x, %s, %zu)
  %i = QuantizeLinear(%x, %s, %zi)
  output %u, %i
})");
  EXPECT_EQ(values<uint8_t>(r["u"]), (std::vector<uint8_t>{0, 255, 255, 0}));
  EXPECT_EQ(values<int8_t>(r["i"]), (std::vector<int8_t>{-128, 127, 127, -128}));
}

TEST(QuantizeLinear, NoZeroPointMeansUint8) {
  // -3 saturates to 0; 2.5 -> 2; 300 -> 255.
  auto r = evalText(R"(graph @t {
  const %x : f32[3] = dense<[-3, 2.5, 300]>
  const %s : f32[] = dense<[1]>
  %y = QuantizeLinear(%x, %s)
  output %y
})");
  ASSERT_EQ(r["y"].dtype(), DType::kU8);
  EXPECT_EQ(values<uint8_t>(r["y"]), (std::vector<uint8_t>{0, 2, 255}));
}

TEST(QuantizeLinear, PerAxis) {
  // axis 1 (default): columns scaled by 1, 2, 4 with zero points 0, 10, 100.
  //   row 0: 2/1 = 2; 2/2 = 1 + 10 = 11; 2/4 = 0.5 -> 0 + 100 = 100
  //   row 1: 8; -8/2 = -4 + 10 = 6; -400/4 = -100 + 100 = 0
  // axis 0: rows scaled by 1 and 0.5 with zero points 0 and -10:
  //   row 0: 1, 2, 3; row 1: 2 - 10 = -8, 4 - 10 = -6, 6 - 10 = -4
  auto r = evalText(R"(graph @t {
  const %x : f32[2,3] = dense<[2, 2, 2, 8, -8, -400]>
  const %s : f32[3] = dense<[1, 2, 4]>
  const %z : u8[3] = dense<[0, 10, 100]>
  %y = QuantizeLinear(%x, %s, %z)
  const %x0 : f32[2,3] = dense<[1, 2, 3, 1, 2, 3]>
  const %s0 : f32[2] = dense<[1, 0.5]>
  const %z0 : i8[2] = dense<[0, -10]>
  %y0 = QuantizeLinear(%x0, %s0, %z0) {axis = 0}
  output %y, %y0
})");
  EXPECT_EQ(values<uint8_t>(r["y"]), (std::vector<uint8_t>{2, 11, 100, 8, 6, 0}));
  EXPECT_EQ(values<int8_t>(r["y0"]), (std::vector<int8_t>{1, 2, 3, -8, -6, -4}));
}

TEST(QuantizeLinear, ShapeErrors) {
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f32[2,3]
  const %s : f32[2] = dense<[1, 2]>
  %y = QuantizeLinear(%x, %s)
  output %y
})").find("y_scale must be a scalar or a vector of 3"),
            std::string::npos);
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f32[2,4]
  const %s : f32[2,2] = dense<[1, 2, 3, 4]>
  %y = QuantizeLinear(%x, %s) {axis = 1, block_size = 2}
  output %y
})").find("block quantization (block_size 2) is not supported"),
            std::string::npos);
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f64[2]
  const %s : f32[] = dense<[1]>
  %y = QuantizeLinear(%x, %s)
  output %y
})").find("x must be f32 or i32, got f64"),
            std::string::npos);
  EXPECT_NE(inferError(R"(graph @t {
  input %x : f32[2]
  const %s : f32[] = dense<[1]>
  const %z : i16[] = dense<[0]>
  %y = QuantizeLinear(%x, %s, %z)
  output %y
})").find("y_zero_point must be uint8 or int8, got i16"),
            std::string::npos);
}

// ---- DequantizeLinear -----------------------------------------------------------------------

TEST(DequantizeLinear, PerTensorAndInt32) {
  // int8: (-128 - (-1)) * 0.5 = -63.5, (127 + 1) * 0.5 = 64; int32 without zero point: x * 0.5.
  auto r = evalText(R"(graph @t {
  const %x : i8[2] = dense<[-128, 127]>
  const %s : f32[] = dense<[0.5]>
  const %z : i8[] = dense<[-1]>
  %y = DequantizeLinear(%x, %s, %z)
  const %w : i32[2] = dense<[1000, -1001]>
  %v = DequantizeLinear(%w, %s)
  output %y, %v
})");
  ASSERT_EQ(r["y"].dtype(), DType::kF32);
  expectNear(values(r["y"]), {-63.5, 64});
  expectNear(values(r["v"]), {500, -500.5});
}

TEST(DequantizeLinear, PerAxis) {
  // columns: scales 1, 0.5, 2 and zero points 0, 10, 255.
  //   row 0: 0, (10-10)*0.5 = 0, (255-255)*2 = 0; row 1: 128, (1-10)*0.5 = -4.5, (2-255)*2 = -506
  auto r = evalText(R"(graph @t {
  const %x : u8[2,3] = dense<[0, 10, 255, 128, 1, 2]>
  const %s : f32[3] = dense<[1, 0.5, 2]>
  const %z : u8[3] = dense<[0, 10, 255]>
  %y = DequantizeLinear(%x, %s, %z) {axis = -1}
  output %y
})");
  expectNear(values(r["y"]), {0, 0, 0, 128, -4.5, -506});
}

TEST(DequantizeLinear, ZeroPointTypeMustMatch) {
  EXPECT_NE(inferError(R"(graph @t {
  input %x : u8[2]
  const %s : f32[] = dense<[1]>
  const %z : i8[] = dense<[0]>
  %y = DequantizeLinear(%x, %s, %z)
  output %y
})").find("x_zero_point has element type i8, x has u8"),
            std::string::npos);
}

// ---- DynamicQuantizeLinear ------------------------------------------------------------------

TEST(DynamicQuantizeLinear, ExactScaleAndTies) {
  // range [-51, 204] spans 255: scale 1, zero point 51. 0.5 -> 0, 1.5 -> 2, -0.5 -> 0, 2.5 -> 2.
  auto r = evalText(R"(graph @t {
  const %x : f32[6] = dense<[-51, 204, 0.5, 1.5, -0.5, 2.5]>
  %y, %s, %z = DynamicQuantizeLinear(%x)
  output %y, %s, %z
})");
  EXPECT_EQ(values<uint8_t>(r["y"]), (std::vector<uint8_t>{0, 255, 51, 53, 51, 53}));
  expectNear(values(r["s"]), {1});
  EXPECT_EQ(values<uint8_t>(r["z"]), (std::vector<uint8_t>{51}));
}

TEST(DynamicQuantizeLinear, RangeWidenedToZeroAndZeroPointTie) {
  // Positive only: the range is [0, 510], scale 2, zero point 0; 1 / 2 = 0.5 -> 0, 3 / 2 -> 2.
  // [-127.5, 127.5]: scale 1, zero point round(127.5) = 128; y = -128 + 128 = 0 and 128 + 128
  // saturated to 255. All zeros: scale 1 (onnxruntime's choice), zero point 0.
  auto r = evalText(R"(graph @t {
  const %p : f32[3] = dense<[1, 3, 510]>
  %py, %ps, %pz = DynamicQuantizeLinear(%p)
  const %t : f32[2] = dense<[-127.5, 127.5]>
  %ty, %ts, %tz = DynamicQuantizeLinear(%t)
  const %o : f32[2] = dense<[0, 0]>
  %oy, %os, %oz = DynamicQuantizeLinear(%o)
  output %py, %ps, %pz, %ty, %ts, %tz, %oy, %os, %oz
})");
  EXPECT_EQ(values<uint8_t>(r["py"]), (std::vector<uint8_t>{0, 2, 255}));
  expectNear(values(r["ps"]), {2});
  EXPECT_EQ(values<uint8_t>(r["pz"]), (std::vector<uint8_t>{0}));
  EXPECT_EQ(values<uint8_t>(r["ty"]), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(values<uint8_t>(r["tz"]), (std::vector<uint8_t>{128}));
  EXPECT_EQ(values<uint8_t>(r["oy"]), (std::vector<uint8_t>{0, 0}));
  expectNear(values(r["os"]), {1});
}

// ---- MatMulInteger / QLinearMatMul ----------------------------------------------------------

TEST(MatMulInteger, PerTensorPerRowPerColumnZeroPoints) {
  // B - b_zp (per column 1, -2) = [[0, 0], [2, 6]].
  // a_zp 10:        A' = [[0, 10], [20, 30]] -> [[20, 60], [60, 180]]
  // a_zp [10, 30]:  A' = [[0, 10], [0, 10]]  -> [[20, 60], [20, 60]]
  auto r = evalText(R"(graph @t {
  const %a : u8[2,2] = dense<[10, 20, 30, 40]>
  const %b : i8[2,2] = dense<[1, -2, 3, 4]>
  const %az : u8[] = dense<[10]>
  const %ar : u8[2] = dense<[10, 30]>
  const %bz : i8[2] = dense<[1, -2]>
  %y = MatMulInteger(%a, %b, %az, %bz)
  %yr = MatMulInteger(%a, %b, %ar, %bz)
  output %y, %yr
})");
  ASSERT_EQ(r["y"].dtype(), DType::kI32);
  EXPECT_EQ(values<int32_t>(r["y"]), (std::vector<int32_t>{20, 60, 60, 180}));
  EXPECT_EQ(values<int32_t>(r["yr"]), (std::vector<int32_t>{20, 60, 20, 60}));
}

TEST(MatMulInteger, BatchBroadcastAndInt8Extremes) {
  // -128 * -128 * 2 = 32768 per row; the batch of A broadcasts against one B.
  auto r = evalText(R"(graph @t {
  const %a : i8[2,1,2] = dense<[-128, -128, 1, 2]>
  const %b : i8[2,1] = dense<[-128, -128]>
  %y = MatMulInteger(%a, %b)
  output %y
})");
  ASSERT_EQ(r["y"].dims(), (Dims{2, 1, 1}));
  EXPECT_EQ(values<int32_t>(r["y"]), (std::vector<int32_t>{32768, -384}));
}

TEST(QLinearMatMul, PerColumnScaleTiesAndSaturation) {
  // b = identity, so acc = [5, 3]; multipliers a_scale * b_scale / y_scale = [0.5, 1.5] per
  // column: [2.5, 4.5] -> ties to even [2, 4], + 10.
  // int8 y with zero point 100: acc 200 * 1 = 200 + 100 saturates at 127.
  auto r = evalText(R"(graph @t {
  const %a : u8[1,2] = dense<[5, 3]>
  const %as : f32[] = dense<[0.5]>
  const %az : u8[] = dense<[0]>
  const %b : u8[2,2] = dense<[1, 0, 0, 1]>
  const %bs : f32[2] = dense<[1, 3]>
  const %bz : u8[2] = dense<[0, 0]>
  const %ys : f32[] = dense<[1]>
  const %yz : u8[] = dense<[10]>
  %y = QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %ys, %yz)
  const %c : u8[1,1] = dense<[200]>
  const %one : f32[] = dense<[1]>
  const %d : u8[1,1] = dense<[1]>
  const %iz : i8[] = dense<[100]>
  %s = QLinearMatMul(%c, %one, %az, %d, %one, %az, %one, %iz)
  output %y, %s
})");
  ASSERT_EQ(r["y"].dtype(), DType::kU8);
  EXPECT_EQ(values<uint8_t>(r["y"]), (std::vector<uint8_t>{12, 14}));
  EXPECT_EQ(values<int8_t>(r["s"]), (std::vector<int8_t>{127}));
}

// ---- ConvInteger / QLinearConv --------------------------------------------------------------

TEST(ConvInteger, ZeroPointPadding) {
  // x - 1 = [[0,1,2],[3,4,5],[6,7,8]], a 2x2 window of ones. Padding reads the zero point (adds
  // 0): with pads 1, output (i, j) sums x'[i-1..i][j-1..j] where inside.
  auto r = evalText(R"(graph @t {
  const %x : u8[1,1,3,3] = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9]>
  const %w : u8[1,1,2,2] = splat<1>
  const %xz : u8[] = dense<[1]>
  %y = ConvInteger(%x, %w, %xz)
  %p = ConvInteger(%x, %w, %xz) {pads = [1, 1, 1, 1]}
  output %y, %p
})");
  ASSERT_EQ(r["y"].dtype(), DType::kI32);
  EXPECT_EQ(values<int32_t>(r["y"]), (std::vector<int32_t>{8, 12, 20, 24}));
  ASSERT_EQ(r["p"].dims(), (Dims{1, 1, 4, 4}));
  EXPECT_EQ(values<int32_t>(r["p"]),
            (std::vector<int32_t>{0, 1, 3, 2, 3, 8, 12, 7, 9, 20, 24, 13, 6, 13, 15, 8}));
}

TEST(ConvInteger, PerChannelWeightZeroPoint) {
  // w - w_zp = [3 - 1, 5 - 5] = [2, 0]; x - x_zp = [0, 11].
  auto r = evalText(R"(graph @t {
  const %x : i8[1,1,1,2] = dense<[-4, 7]>
  const %w : i8[2,1,1,1] = dense<[3, 5]>
  const %xz : i8[] = dense<[-4]>
  const %wz : i8[2] = dense<[1, 5]>
  %y = ConvInteger(%x, %w, %xz, %wz)
  output %y
})");
  EXPECT_EQ(values<int32_t>(r["y"]), (std::vector<int32_t>{0, 22, 0, 0}));
}

TEST(QLinearConv, PerChannelRequantizationWithBias) {
  // x' = [0, 10, 20]; w' = [2 - 0, 3 - 1] = [2, 2]: acc = [0, 20, 40] for both channels.
  // channel 0: + 1 = [1, 21, 41] * (0.5 * 1 / 1) = [0.5, 10.5, 20.5] -> [0, 10, 20] + 5
  // channel 1: - 10 = [-10, 10, 30] * (0.5 * 0.25) = [-1.25, 1.25, 3.75] -> [-1, 1, 4] + 5
  auto r = evalText(R"(graph @t {
  const %x : u8[1,1,1,3] = dense<[10, 20, 30]>
  const %xs : f32[] = dense<[0.5]>
  const %xz : u8[] = dense<[10]>
  const %w : u8[2,1,1,1] = dense<[2, 3]>
  const %ws : f32[2] = dense<[1, 0.25]>
  const %wz : u8[2] = dense<[0, 1]>
  const %ys : f32[] = dense<[1]>
  const %yz : u8[] = dense<[5]>
  const %b : i32[2] = dense<[1, -10]>
  %y = QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b)
  output %y
})");
  ASSERT_EQ(r["y"].dtype(), DType::kU8);
  EXPECT_EQ(values<uint8_t>(r["y"]), (std::vector<uint8_t>{5, 15, 25, 4, 6, 9}));
}

TEST(QLinearConv, ScaleShapeErrors) {
  EXPECT_NE(inferError(R"(graph @t {
  input %x : u8[1,1,3,3]
  const %xs : f32[2] = dense<[1, 1]>
  const %z : u8[] = dense<[0]>
  const %w : u8[1,1,1,1] = dense<[1]>
  const %s : f32[] = dense<[1]>
  %y = QLinearConv(%x, %xs, %z, %w, %s, %z, %s, %z)
  output %y
})").find("x_scale must be a scalar (per-tensor)"),
            std::string::npos);
}

}  // namespace
