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

// The stride-phase copy of an image both f_qconv.cpp and f_qconv_dw.cpp read (f_qconv.cpp's
// gridOf and phaseSplit say how it is laid out): per channel, S = sh * sw phase planes of Rq x Wq
// bytes padded with the zero point, so that a tap's run of consecutive grid pixels is a run of
// consecutive bytes.
struct Grid {
  int64_t Wq, Rq, S, planeQ;  // columns, rows per phase plane, phases, plane bytes
  bool dense;                 // panels hold output pixels only (else grid pixels)
  int64_t P;                  // pixels computed: oh * ow dense, else oh * Wq
};
Grid gridOf(const QGeom& g);
// Copies one channel x (each byte XOR flip) into its phase planes at dst, fill elsewhere; only the
// phases with used[ph] set.
void phaseSplit(const QGeom& g, const Grid& q, const uint8_t* used, const uint8_t* x, uint8_t fill, uint8_t flip,
                uint8_t* dst);

// The depthwise kernel (f_qconv_dw.cpp; group == c == m, weights [m, 1, kh, kw]): whether it takes
// the geometry, and the layer over the whole batch. wf holds each channel's kh * kw weights as
// floats (shifted like the others), rq per channel as above.
bool depthwiseApplies(const QGeom& g);
void depthwiseConv(const QGeom& g, const float* wf, const uint8_t* x, uint8_t fill, uint8_t flip, const Requant& rq,
                   uint8_t* y, ThreadPool* pool);

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
