// CPU emulation of GPU kernels: the tensor-core fragments of CUDA's nvcuda::wmma (<mma.h>), the
// subset that Magneto's fp16 kernels use (mgk::gemmF16Block / convF16Block, mg_gemm.cuh):
//
//   fragment<matrix_a | matrix_b, 16, 16, 16, __half, row_major | col_major>
//   fragment<accumulator, 16, 16, 16, float>
//   fill_fragment, load_matrix_sync, mma_sync (half inputs, float accumulation), store_matrix_sync
//   (accumulators with mem_row_major / mem_col_major).
//
// mg_gpu.h names the namespace mg_wmma on both sides (nvcuda::wmma under nvcc, mg_emu::wmma
// here), so a kernel's source is the same for nvcc and the emulation.
//
// Model. On a GPU a fragment is spread over the 32 lanes of a warp and each operation is a
// warp-collective: every lane calls it with the same arguments. Here every emulated thread holds
// the WHOLE 16x16 tile in its fragment and does the whole operation itself (32 times the work of
// one warp, no exchange between lanes, no barrier): a kernel that treats fragments as opaque, as
// CUDA requires (the mapping of x[] to matrix elements is unspecified there), cannot tell. What
// it can observe matches CUDA: matrix_a/b elements are halfs (what was stored), the products of
// two halfs are exact in float, and mma_sync accumulates them in float, D = A*B + C, in k order
// (the hardware's order and internal rounding of the sum are unspecified; tests compare with a
// tolerance). num_elements is 256 and x[] is row-major here; kernels must not rely on either.
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "mg_emu_types.h"

namespace mg_emu {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

// A misuse that CUDA leaves undefined: stop with a message rather than compute garbage.
[[noreturn]] inline void fatal(const char* what) {
  std::fprintf(stderr, "mg_emu: %s\n", what);
  std::abort();
}

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulation has the 16x16x16 shape only");
  static constexpr int num_elements = 256;
  T x[256];  // row-major: element (r, c) at x[r*16 + c] (rows m or k, columns k or n)
};

template <typename Use, int M, int N, int K, typename T, typename Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const T& v) {
  for (int i = 0; i < 256; ++i) f.x[i] = v;
}

// matrix_a (m, k) / matrix_b (k, n): row_major puts element (r, c) at p[r*ldm + c], col_major at
// p[c*ldm + r]. ldm must be a multiple of 8 for __half (CUDA's rule, checked here too).
template <typename Use, typename T, typename Layout>
inline void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout>& f, const T* p, unsigned ldm) {
  static_assert(std::is_same<Layout, row_major>::value || std::is_same<Layout, col_major>::value,
                "matrix_a / matrix_b fragments have a row_major or col_major layout");
  if (ldm % 8 != 0) fatal("wmma::load_matrix_sync: ldm must be a multiple of 8 for half operands");
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      f.x[r * 16 + c] = std::is_same<Layout, row_major>::value ? p[r * ldm + c] : p[c * ldm + r];
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float>& f, const float* p,
                             unsigned ldm, layout_t layout) {
  if (ldm % 4 != 0) fatal("wmma::load_matrix_sync: ldm must be a multiple of 4 for float");
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      f.x[r * 16 + c] = layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r];
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& f,
                              unsigned ldm, layout_t layout) {
  if (ldm % 4 != 0) fatal("wmma::store_matrix_sync: ldm must be a multiple of 4 for float");
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      (layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[r * 16 + c];
}

// d = a*b + c; d may be c.
template <typename LA, typename LB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float>& d,
                     const fragment<matrix_a, 16, 16, 16, __half, LA>& a,
                     const fragment<matrix_b, 16, 16, 16, __half, LB>& b,
                     const fragment<accumulator, 16, 16, 16, float>& c) {
  float fa[256], fb[256];
  for (int i = 0; i < 256; ++i) {
    fa[i] = float(a.x[i]);
    fb[i] = float(b.x[i]);
  }
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float acc = c.x[m * 16 + n];
      for (int k = 0; k < 16; ++k) acc += fa[m * 16 + k] * fb[k * 16 + n];
      d.x[m * 16 + n] = acc;
    }
}

}  // namespace wmma
}  // namespace mg_emu
