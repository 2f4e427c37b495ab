// CPU emulation of GPU kernels, layer 0: the CUDA language surface that needs no scheduler.
//
// Lets kernel sources written in plain CUDA syntax compile with a host C++17 compiler:
// the qualifiers (__global__, __device__, __shared__, ...), uint3/dim3 and the vector types,
// the built-in variables threadIdx/blockIdx/blockDim/gridDim/warpSize, __half, and the math and
// bit intrinsics that <cmath> lacks.
//
// __shared__ is `static thread_local`: all CUDA threads of a block run as fibers on one OS
// thread (mg_emu_block.h), so a thread-local static is exactly one copy per running block, while
// blocks running at the same time on other OS threads each see their own copy. The built-in
// index variables are thread-local too; the scheduler rewrites threadIdx on every fiber switch.
//
// Only overloads that CUDA itself provides are declared, so that kernel code that compiles here
// also compiles under nvcc (tests/gpu/compile_with_gpu_compilers.sh checks the same sources).
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#define MG_GPU_EMULATION 1

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
// __noinline__ is defined at the end of mg_gpu_emu.h (libstdc++ spells __attribute__((__noinline__))).
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
#define __shared__ static thread_local
// __restrict__ is a GNU C++ keyword already.

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// Vector types with CUDA's sizes and alignments (vectorised loads reinterpret_cast to them).
#define MG_EMU_VEC2(T, N, A) \
  struct __attribute__((aligned(A))) N##2 { T x, y; };                                         \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define MG_EMU_VEC4(T, N, A) \
  struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                                   \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
MG_EMU_VEC2(float, float, 8)
MG_EMU_VEC4(float, float, 16)
MG_EMU_VEC2(int, int, 8)
MG_EMU_VEC4(int, int, 16)
MG_EMU_VEC2(unsigned, uint, 8)
MG_EMU_VEC4(unsigned, uint, 16)
MG_EMU_VEC2(double, double, 16)
#undef MG_EMU_VEC2
#undef MG_EMU_VEC4
struct float3 {
  float x, y, z;
};
inline float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }
struct int3 {
  int x, y, z;
};
inline int3 make_int3(int x, int y, int z) { return int3{x, y, z}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }

// The built-in variables. Written by the scheduler: blockIdx/blockDim/gridDim once per block on
// the OS thread that runs it, threadIdx before each fiber switch. Fibers never migrate between
// OS threads, so a compiler caching the thread-local address across a switch stays correct.
inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};
constexpr int warpSize = 32;

// ---- __half: IEEE binary16 storage, arithmetic through float (as on the host side of CUDA).
namespace mg_emu {
inline uint16_t floatToHalfBits(float f) {  // round to nearest even
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return uint16_t(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (a < 0x38800000u) {                                   // below 2^-14: subnormal half
    if (a < 0x33000000u) return uint16_t(sign);            // <= 2^-25 rounds to zero
    uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126u - (a >> 23);
    uint32_t k = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (k & 1u))) ++k;
    return uint16_t(sign | k);
  }
  uint32_t h = (a - 0x38000000u) >> 13, rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}
inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0) {
    float v = float(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    std::memcpy(&x, &v, 4);
    x |= sign;
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
}  // namespace mg_emu

struct __half {
  uint16_t bits_;
  __half() = default;
  __half(float f) : bits_(mg_emu::floatToHalfBits(f)) {}
  __half(double d) : bits_(mg_emu::floatToHalfBits(float(d))) {}
  __half(int i) : bits_(mg_emu::floatToHalfBits(float(i))) {}
  operator float() const { return mg_emu::halfBitsToFloat(bits_); }
  __half& operator+=(__half o) { return *this = __half(float(*this) + float(o)); }
  __half& operator-=(__half o) { return *this = __half(float(*this) - float(o)); }
  __half& operator*=(__half o) { return *this = __half(float(*this) * float(o)); }
  __half& operator/=(__half o) { return *this = __half(float(*this) / float(o)); }
};
inline __half operator+(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half operator-(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half operator*(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half operator/(__half a, __half b) { return __half(float(a) / float(b)); }
inline __half operator-(__half a) {
  __half r = a;
  r.bits_ ^= 0x8000u;
  return r;
}
inline bool operator==(__half a, __half b) { return float(a) == float(b); }
inline bool operator!=(__half a, __half b) { return float(a) != float(b); }
inline bool operator<(__half a, __half b) { return float(a) < float(b); }
inline bool operator<=(__half a, __half b) { return float(a) <= float(b); }
inline bool operator>(__half a, __half b) { return float(a) > float(b); }
inline bool operator>=(__half a, __half b) { return float(a) >= float(b); }
struct __half2 {
  __half x, y;
};
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hneg(__half a) { return -a; }
inline __half __hfma(__half a, __half b, __half c) {
  return __half(std::fma(float(a), float(b), float(c)));
}
inline __half __hmax(__half a, __half b) { return float(a) < float(b) ? b : a; }
inline __half __hmin(__half a, __half b) { return float(b) < float(a) ? b : a; }
inline __half __ushort_as_half(unsigned short u) {
  __half h;
  h.bits_ = u;
  return h;
}
inline unsigned short __half_as_ushort(__half h) { return h.bits_; }
inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
inline __half2 __float2half2_rn(float f) { return __half2{__half(f), __half(f)}; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline float2 __half22float2(__half2 h) { return float2{float(h.x), float(h.y)}; }
inline __half2 __float22half2_rn(float2 f) { return __half2{__half(f.x), __half(f.y)}; }

// ---- Math intrinsics missing from <cmath> (fast variants are the accurate ones here).
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline void __sincosf(float x, float* s, float* c) {
  *s = sinf(x);
  *c = cosf(x);
}
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fsub_rn(float x, float y) { return x - y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
// C23 adds rsqrt/rsqrtf to <math.h> (glibc 2.41); define them only where the C library lacks them.
#if !defined(__GLIBC__) || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 41)
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
#endif
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }

// CUDA's overloaded min/max for device code.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a < b ? b : a; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// ---- Bit reinterpretation and bit counting.
template <typename To, typename From>
inline To mgEmuBitCast(From f) {
  static_assert(sizeof(To) == sizeof(From), "size mismatch");
  To t;
  std::memcpy(&t, &f, sizeof(To));
  return t;
}
inline int __float_as_int(float x) { return mgEmuBitCast<int>(x); }
inline unsigned __float_as_uint(float x) { return mgEmuBitCast<unsigned>(x); }
inline float __int_as_float(int x) { return mgEmuBitCast<float>(x); }
inline float __uint_as_float(unsigned x) { return mgEmuBitCast<float>(x); }
inline long long __double_as_longlong(double x) { return mgEmuBitCast<long long>(x); }
inline double __longlong_as_double(long long x) { return mgEmuBitCast<double>(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}
// The 24-bit multiplies use only the low 24 bits of each operand (sign-extended for __mul24).
inline int __mul24(int a, int b) {
  long long a24 = int32_t(uint32_t(a) << 8) >> 8, b24 = int32_t(uint32_t(b) << 8) >> 8;
  return int(uint32_t(uint64_t(a24 * b24)));
}
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return int(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) {
  return unsigned(((unsigned long long)a * b) >> 32);
}
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
