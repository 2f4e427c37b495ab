// Shared by the fast convolution kernels (f_conv.cpp: im2col GEMM and depthwise; f_conv_direct.cpp:
// direct convolution): the resolved geometry of one 2-D convolution, and the direct kernel's entry
// points.
#pragma once

#include <cstdint>

#include "mg_kernels.h"
#include "mg_runtime.h"

namespace mgrt {
namespace conv {

// NCHW input [n, c, h, w], weights [m, c / group, kh, kw], output [n, m, oh, ow]; strides sh/sw,
// dilations dh/dw, leading pads pt/pl (trailing pads are implied by oh/ow).
struct ConvGeom {
  int64_t n, c, h, w, m, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, group;
};

// The geometry of a 2-D (or 1-D: one row) convolution from its attributes and the input, weight
// and output tensors (any element types); false when it does not resolve or the output's dims
// disagree with it (the fast kernels then leave the case to the reference kernel).
bool resolveGeom(const Attrs& a, const Tensor& X, const Tensor& W, const Tensor& Y, ConvGeom* g);

// Weights [m][K] (K = C/group * kh * kw, ONNX's order) as blocks of `width` output channels:
// dst[(b * K + k) * width + j] = w[(b * width + j) * K + k], zero past the last channel. The
// direct kernels' layouts (stem: 8, channel-lane: 32, grouped direct: 8 per group).
inline void packChannelBlocks(const float* w, int64_t m, int64_t K, int width, float* dst) {
  for (int64_t b = 0; b * width < m; ++b)
    for (int64_t k = 0; k < K; ++k)
      for (int j = 0; j < width; ++j) {
        const int64_t c = b * width + j;
        dst[(b * K + k) * width + j] = c < m ? w[c * K + k] : 0.f;
      }
}

// Grouped convolutions with 16k output channels per group at stride 2 or on rows under 12
// (f_conv_direct.cpp, AVX-512): whether they apply, the packed weights' floats, the packing and
// the kernel (same contract as directConv below).
bool groupedC16Applies(const ConvGeom& g);
int64_t groupedC16PackedSize(const ConvGeom& g);
void groupedC16PackWeights(const ConvGeom& g, const float* w, float* dst);
void groupedC16Conv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias,
                    const float* res, float* y, const Epilogue& ep, ThreadPool* pool);
// Direct convolution (f_conv_direct.cpp): whether this build and this geometry take it.
bool directApplies(const ConvGeom& g);
// Floats of the weights in the direct kernel's layout, and the packing (done once per handle when
// the weights are constant).
int64_t directPackedSize(const ConvGeom& g);
void directPackWeights(const ConvGeom& g, const float* w, float* dst);
// Y = act(conv(X, W) + bias + res) with the weights packed by directPackWeights. res (or null) has
// Y's shape and must not alias Y.
void directConv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias,
                const float* res, float* y, const Epilogue& ep, ThreadPool* pool);

// Depthwise convolution with 16 channels per vector (f_conv_dw.cpp): whether this build and this
// geometry take it (one channel per group, at least 12 channels), and the kernel. res as above.
bool depthwiseC16Applies(const ConvGeom& g);
// Depthwise 3x3/5x5/7x7 layers at stride 1 or 2 with long enough rows, read in place (f_conv_dw.cpp).
bool depthwiseRowsApplies(const ConvGeom& g);
void depthwiseRows(const ConvGeom& g, const float* x, const float* w, const float* bias, const float* res,
                   float* y, const Epilogue& ep, ThreadPool* pool);
void depthwiseC16(const ConvGeom& g, const float* x, const float* w, const float* bias, const float* res,
                  float* y, const Epilogue& ep, ThreadPool* pool);

// Direct convolution for few input channels with the output channels in the vector lanes
// (f_conv_stem.cpp: a network's stem): whether this build and this geometry take it, its packed
// weights ([K][M rounded up to 16], packed once per handle when constant) and the kernel. res as
// above, or Y itself (read right before each write).
bool stemApplies(const ConvGeom& g);
int64_t stemPackedSize(const ConvGeom& g);
void stemPackWeights(const ConvGeom& g, const float* w, float* dst);
void stemConv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias, const float* res,
              float* y, const Epilogue& ep, ThreadPool* pool);

// Direct convolution with the output channels in the vector lanes and the pixels broadcast
// (f_conv_lanes.cpp: ungrouped spatial and strided layers, 1x1 layers on small planes): whether
// this build and this geometry take it, its packed weights ([block of 32 channels][K][32], packed
// once per handle when constant) and the kernel. res as for the stem kernel.
bool lanesApplies(const ConvGeom& g);
int64_t lanesPackedSize(const ConvGeom& g);
void lanesPackWeights(const ConvGeom& g, const float* w, float* dst);
void lanesConv(const ConvGeom& g, const float* x, const float* wPacked, const float* bias, const float* res,
               float* y, const Epilogue& ep, ThreadPool* pool);

}  // namespace conv
}  // namespace mgrt
