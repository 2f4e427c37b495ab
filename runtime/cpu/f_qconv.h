// Shared by the two VNNI QLinearConv kernels: f_qconv.cpp (pixels in the vector lanes, im2col
// panels; wide planes) and f_qconv_lanes.cpp (output channels in the lanes, the image transposed
// to channels-last; planes of 16 or fewer output columns). f_qconv.cpp's header gives the
// arithmetic both compute, byte for byte the reference kernel's.
#pragma once

#include <cstdint>
#include <vector>

#include "f_conv.h"
#include "mg_runtime.h"

namespace mgrt {
namespace qconv {

// The convolution's geometry (conv::ConvGeom; group 1): NCHW input [n, c, h, w] (uint8 after the
// int8 shift), weights [m, c, kh, kw], output [n, m, oh, ow].
struct QGeom : conv::ConvGeom {
  int64_t K() const { return c * kh * kw; }
  int64_t K4() const { return (K() + 3) / 4; }
};

// Per output channel: bias - x_zp * (sum of the channel's weights) modulo 2^32, and the
// multiplier x_scale * w_scale / y_scale; the output zero point and range as floats. corr and
// mult hold at least as many entries as the kernel's channel blocks cover (zero padded).
struct Requant {
  const int32_t* corr;
  const float* mult;
  float zp, lo, hi;
};

// The channels-in-lanes kernel (f_qconv_lanes.cpp): whether it takes the geometry, its weights
// ([block of 64 channels][kh * kw][c rounded up to 4 / 4][64][4] signed bytes, zero padded), and
// one image: x is the image's input (the int8 shift applied through flip), y its output.
bool lanesApplies(const QGeom& g);
int64_t lanesChannels(const QGeom& g);  // m rounded up to the kernel's channel block
void lanesPackWeights(const QGeom& g, const Tensor& W, int wShift, std::vector<int8_t>* dst);
void lanesConv(const QGeom& g, const int8_t* w, const uint8_t* x, uint8_t fill, uint8_t flip, const Requant& rq,
               uint8_t* y, ThreadPool* pool);

}  // namespace qconv
}  // namespace mgrt
