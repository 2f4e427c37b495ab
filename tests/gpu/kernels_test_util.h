// Shared by the kernel-library tests (tests/gpu/kernels_*.cpp): device buffers through mg_gpu.h,
// launching a block program the way codegen/gpu wraps it, random data and comparisons.
// Compiled with MG_GPU_EMULATE, so "device" memory and launches run on the CPU emulation.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../runtime/gpu/kernels/mg_kernels.cuh"

namespace kt {

// A device buffer holding a copy of a host vector (or `n` elements of never-written memory,
// which the emulation fills with NaN bytes).
template <typename T>
class Dev {
 public:
  explicit Dev(const std::vector<T>& h) : n_(h.size()) {
    alloc();
    if (n_) {
      EXPECT_EQ(mgMemcpyHtoD(p_, h.data(), bytes(), nullptr), mgSuccess);
      EXPECT_EQ(mgStreamSynchronize(nullptr), mgSuccess);
    }
  }
  explicit Dev(size_t n) : n_(n) { alloc(); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() { mgFree(p_); }
  T* get() const { return p_; }
  std::vector<T> host() const {
    std::vector<T> h(n_);
    if (n_) {
      EXPECT_EQ(mgMemcpyDtoH(h.data(), p_, bytes(), nullptr), mgSuccess);
      EXPECT_EQ(mgStreamSynchronize(nullptr), mgSuccess);
    }
    return h;
  }

 private:
  size_t bytes() const { return n_ * sizeof(T); }
  void alloc() {
    void* v = nullptr;
    EXPECT_EQ(mgMalloc(&v, n_ ? bytes() : 1), mgSuccess);
    p_ = static_cast<T*>(v);
  }
  size_t n_;
  T* p_ = nullptr;
};

// Launches `kernel(args...)` on `blocks` blocks of `threads` threads with `smem` bytes of dynamic
// shared memory (raising the kernel's limit when above the 48 KiB default), synchronizes and
// checks that nothing failed.
template <typename... P, typename... A>
void launch(void (*kernel)(P...), int64_t blocks, int threads, int smem, A&&... args) {
  ASSERT_GT(blocks, 0);
  // A thread that leaves while others wait at a barrier is an error, not ignored: the contract
  // says idle threads must reach every __syncthreads (a real GPU may hang or corrupt otherwise).
  mg_emu::config().strictSync = true;
  if (smem > 48 * 1024) {
    ASSERT_EQ(mgFuncSetMaxDynamicSharedMemory(kernel, smem), mgSuccess);
  }
  mgError_t e = mgLaunch(kernel, dim3(unsigned(blocks)), dim3(unsigned(threads)), size_t(smem),
                         mgStream_t(nullptr), std::forward<A>(args)...);
  ASSERT_EQ(e, mgSuccess) << mgGetErrorString(e);
  e = mgDeviceSynchronize();
  ASSERT_EQ(e, mgSuccess) << mgGetErrorString(e);
}
// The same as plain loops over the threads (mgLaunchNoSync): for programs without barriers.
template <typename... P, typename... A>
void launchNoSync(void (*kernel)(P...), int64_t blocks, int threads, int smem, A&&... args) {
  ASSERT_GT(blocks, 0);
  mgError_t e = mgLaunchNoSync(kernel, dim3(unsigned(blocks)), dim3(unsigned(threads)),
                               size_t(smem), mgStream_t(nullptr), std::forward<A>(args)...);
  ASSERT_EQ(e, mgSuccess) << mgGetErrorString(e);
  e = mgDeviceSynchronize();
  ASSERT_EQ(e, mgSuccess) << mgGetErrorString(e);
}

inline std::vector<float> randomVec(size_t n, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Every element within atol + rtol*|ref|; NaN only where the reference has NaN. Reports the
// first few mismatches with their index.
inline ::testing::AssertionResult near(const std::vector<float>& got,
                                       const std::vector<double>& ref, double atol,
                                       double rtol = 1e-4) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " != reference " << ref.size();
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref[i];
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(g);
    else if (std::isinf(r))
      ok = g == r;
    else
      ok = !std::isnan(g) && std::fabs(g - r) <= atol + rtol * std::fabs(r);
    if (!ok && bad++ < 5)
      first += " [" + std::to_string(i) + "] got " + std::to_string(g) + " want " +
               std::to_string(r) + ";";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " differ:" << first;
}

// The activations in double: the table's formulas (runtime/common/mg_acts.h), which the device
// computes in float. The formulas themselves are checked against ONNX's reference outputs by the
// backend node tests; these tests check the kernels' epilogue plumbing and precision.
inline double act(int a, double x, double alpha, double beta) {
  if (!mgrt::acts::byCode(a)) ADD_FAILURE() << "unknown activation " << a;
  return mgrt::acts::applyCode<double>(a, x, alpha, beta);
}

// The codes the sweeps run through: None and every epilogue activation of the table (flag E).
inline std::vector<int> epilogueActs() {
  std::vector<int> v;
  for (const mgrt::acts::ActInfo& e : mgrt::acts::kTable)
    if (e.code == mgrt::acts::kNone || e.has(mgrt::acts::kE)) v.push_back(e.code);
  return v;
}

}  // namespace kt
