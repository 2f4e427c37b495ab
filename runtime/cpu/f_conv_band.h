// A band of a convolution's input rows, copied zero-padded and split by column phase: the input
// side of the direct kernels that read the image itself (f_conv_stem.cpp: pixels in the vector
// lanes; f_conv_lanes.cpp: output channels in the lanes, pixels broadcast).
//
// Column cx of a padded row (cx = 0 is the first left-padding column) goes to phase cx % sw at
// index cx / sw. Output pixel ox reads padded column ox * sw + kx * dw for tap kx, which is phase
// (kx * dw) % sw, index ox + (kx * dw) / sw: for any stride, the inputs of one tap for consecutive
// output pixels are consecutive floats, and no read leaves the buffer (no bounds tests, no masks
// in the kernels' loops). Rows outside the image are zero rows. AVX-512 builds only (the users are).
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "f_conv.h"

namespace mgrt {
namespace conv {

struct PaddedBand {
  int64_t extra = 0;     // input rows one output row reads: (kh - 1) * dh + 1
  int64_t rows = 0;      // buffer rows per channel for a band of `band` output rows
  int64_t phaseLen = 0;  // floats per phase of a buffer row
  int64_t rowLen = 0;    // floats per buffer row (sw phases)
  int64_t pplane = 0;    // floats per channel (rows * rowLen)

  // A band of up to `band` output rows whose row tiles may read up to `overrun` output pixels past
  // the row's end (the stem's last 48-pixel tile; those columns read as zero).
  PaddedBand(const ConvGeom& g, int64_t band, int64_t overrun) {
    extra = (g.kh - 1) * g.dh + 1;
    rows = (band - 1) * g.sh + extra;
    const int64_t cols = (g.ow + overrun - 1) * g.sw + (g.kw - 1) * g.dw + 1;
    phaseLen = (cols + g.sw - 1) / g.sw;
    rowLen = phaseLen * g.sw;
    pplane = rows * rowLen;
  }

  // Offset of tap (c, ky, kx) from an output pixel's first input, in floats of the buffer, for the
  // pixel's row at buffer row 0 (output row oy of a band starting at oy0 adds (oy - oy0) * sh rows).
  int64_t tapOffset(const ConvGeom& g, int64_t c, int64_t ky, int64_t kx) const {
    const int64_t cx = kx * g.dw;
    return c * pplane + ky * g.dh * rowLen + (cx % g.sw) * phaseLen + cx / g.sw;
  }

  // Copies input rows [iy0, iy0 + nin) of image xn (all g.c channels, rows outside the image as
  // zeros) into dst (g.c * pplane floats). tmp: rowLen floats of scratch (strided rows only).
  void copy(const ConvGeom& g, const float* xn, int64_t iy0, int64_t nin, float* dst, float* tmp) const {
    const int64_t plane = g.h * g.w, sw = g.sw;
    const int64_t lo = std::min(g.pl, rowLen), hi = std::clamp<int64_t>(g.pl + g.w, lo, rowLen);
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = 0; r < nin; ++r) {
        const int64_t iy = iy0 + r;
        float* d = dst + c * pplane + r * rowLen;
        if (iy < 0 || iy >= g.h) {
          std::memset(d, 0, sizeof(float) * rowLen);
          continue;
        }
        float* row = sw == 1 ? d : tmp;
        std::memset(row, 0, sizeof(float) * lo);
        std::memcpy(row + lo, xn + c * plane + iy * g.w + (lo - g.pl), sizeof(float) * (hi - lo));
        std::memset(row + hi, 0, sizeof(float) * (rowLen - hi));
        if (sw == 1) continue;
        int64_t j = 0;
        if (sw == 2) {  // even and odd columns, 16 of each per step
          const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
          const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
          for (; j + 16 <= phaseLen; j += 16) {
            const __m512 a = _mm512_loadu_ps(tmp + 2 * j), b = _mm512_loadu_ps(tmp + 2 * j + 16);
            _mm512_storeu_ps(d + j, _mm512_permutex2var_ps(a, ev, b));
            _mm512_storeu_ps(d + phaseLen + j, _mm512_permutex2var_ps(a, od, b));
          }
        }
        for (; j < phaseLen; ++j)
          for (int64_t q = 0; q < sw; ++q) d[q * phaseLen + j] = tmp[j * sw + q];
      }
  }
};

}  // namespace conv
}  // namespace mgrt

#endif
