// Host drivers for gpu_test_kernels.cuh, written only against mg_gpu.h's portable API.
//
// Each driver uploads inputs, launches, downloads outputs and returns the first error, so the
// same code runs on the emulation (gpu_emu_test.cpp) and compiles under nvcc and hipcc
// (compile_with_gpu_compilers.sh), which checks mgLaunch's instantiation on every backend.
#pragma once

#include <cstddef>
#include <vector>

#include "gpu_test_kernels.cuh"

#define MGT_TRY(expr)                   \
  do {                                  \
    mgError_t mgt_e_ = (expr);          \
    if (mgt_e_ != mgSuccess) return mgt_e_; \
  } while (0)

// Device memory for n values of T, freed on scope exit.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) { status_ = mgMalloc(&p_, n * sizeof(T)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { (void)mgFree(p_); }
  T* get() const { return p_; }
  mgError_t status() const { return status_; }
  mgError_t upload(const std::vector<T>& h, mgStream_t s) {
    return mgMemcpyHtoD(p_, h.data(), n_ * sizeof(T), s);
  }
  mgError_t download(std::vector<T>& h, mgStream_t s) {
    h.resize(n_);
    return mgMemcpyDtoH(h.data(), p_, n_ * sizeof(T), s);
  }

 private:
  T* p_ = nullptr;
  size_t n_;
  mgError_t status_;
};

inline unsigned ceilDiv(size_t a, unsigned b) { return unsigned((a + b - 1) / b); }

inline mgError_t runVecAdd(const std::vector<float>& a, const std::vector<float>& b,
                           std::vector<float>& c, bool noSync) {
  const int n = int(a.size());
  DeviceBuffer<float> da(n), db(n), dc(n);
  MGT_TRY(dc.status());
  MGT_TRY(da.upload(a, nullptr));
  MGT_TRY(db.upload(b, nullptr));
  const unsigned threads = 128;
  if (noSync)
    MGT_TRY(mgLaunchNoSync(vecAdd, dim3(ceilDiv(n, threads)), dim3(threads), 0, nullptr,
                           da.get(), db.get(), dc.get(), n));
  else
    MGT_TRY(mgLaunch(vecAdd, dim3(ceilDiv(n, threads)), dim3(threads), 0, nullptr, da.get(),
                     db.get(), dc.get(), n));
  MGT_TRY(dc.download(c, nullptr));
  return mgStreamSynchronize(nullptr);
}

// tiled: matmulTiled<16> with fibers; otherwise matmulNaive, through mgLaunchNoSync if noSync.
inline mgError_t runMatmul(const std::vector<float>& A, const std::vector<float>& B,
                           std::vector<float>& C, int M, int N, int K, bool tiled, bool noSync) {
  DeviceBuffer<float> dA(size_t(M) * K), dB(size_t(K) * N), dC(size_t(M) * N);
  MGT_TRY(dC.status());
  MGT_TRY(dA.upload(A, nullptr));
  MGT_TRY(dB.upload(B, nullptr));
  const dim3 block(16, 16), grid(ceilDiv(N, 16), ceilDiv(M, 16));
  if (tiled)
    MGT_TRY(mgLaunch(matmulTiled<16>, grid, block, 0, nullptr, dA.get(), dB.get(), dC.get(), M,
                     N, K));
  else if (noSync)
    MGT_TRY(mgLaunchNoSync(matmulNaive, grid, block, 0, nullptr, dA.get(), dB.get(), dC.get(), M,
                           N, K));
  else
    MGT_TRY(mgLaunch(matmulNaive, grid, block, 0, nullptr, dA.get(), dB.get(), dC.get(), M, N,
                     K));
  MGT_TRY(dC.download(C, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runBlockReduce(const std::vector<float>& x, unsigned blocks, unsigned threads,
                                std::vector<float>& partial, bool noSync) {
  DeviceBuffer<float> dx(x.size()), dp(blocks);
  MGT_TRY(dp.status());
  MGT_TRY(dx.upload(x, nullptr));
  if (noSync)
    MGT_TRY(mgLaunchNoSync(blockReduceSum, dim3(blocks), dim3(threads), 0, nullptr, dx.get(),
                           dp.get(), int(x.size())));
  else
    MGT_TRY(mgLaunch(blockReduceSum, dim3(blocks), dim3(threads), 0, nullptr, dx.get(), dp.get(),
                     int(x.size())));
  MGT_TRY(dp.download(partial, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runHistogram(const std::vector<int>& x, int nbins, std::vector<unsigned>& bins) {
  mgStream_t s;
  MGT_TRY(mgStreamCreate(&s));
  DeviceBuffer<int> dx(x.size());
  DeviceBuffer<unsigned> db(nbins);
  MGT_TRY(db.status());
  MGT_TRY(dx.upload(x, s));
  MGT_TRY(mgMemsetAsync(db.get(), 0, nbins * sizeof(unsigned), s));
  MGT_TRY(mgLaunch(histogram, dim3(64), dim3(256), 0, s, dx.get(), int(x.size()), db.get(),
                   nbins));
  MGT_TRY(db.download(bins, s));
  MGT_TRY(mgStreamSynchronize(s));
  return mgStreamDestroy(s);
}

inline mgError_t runAtomicsMix(const std::vector<int>& v, AtomicResults init, AtomicResults* out) {
  DeviceBuffer<int> dv(v.size());
  DeviceBuffer<AtomicResults> dr(1);
  MGT_TRY(dr.status());
  MGT_TRY(dv.upload(v, nullptr));
  MGT_TRY(mgMemcpyHtoD(dr.get(), &init, sizeof init, nullptr));
  MGT_TRY(mgLaunch(atomicsMix, dim3(ceilDiv(v.size(), 64)), dim3(64), 0, nullptr, dv.get(),
                   int(v.size()), dr.get()));
  MGT_TRY(mgMemcpyDtoH(out, dr.get(), sizeof *out, nullptr));
  return mgDeviceSynchronize();
}

struct WarpOpsOut {
  std::vector<int> sum, scan, bcast, halfDown;
  std::vector<unsigned> ballot;
};
inline mgError_t runWarpOps(const std::vector<int>& x, unsigned threads, WarpOpsOut* o) {
  const size_t n = x.size();
  DeviceBuffer<int> dx(n), sum(n), scan(n), bcast(n), half(n);
  DeviceBuffer<unsigned> ballot(n / 32);
  MGT_TRY(ballot.status());
  MGT_TRY(dx.upload(x, nullptr));
  MGT_TRY(mgLaunch(warpOps, dim3(unsigned(n / threads)), dim3(threads), 0, nullptr, dx.get(),
                   sum.get(), scan.get(), bcast.get(), ballot.get(), half.get()));
  MGT_TRY(sum.download(o->sum, nullptr));
  MGT_TRY(scan.download(o->scan, nullptr));
  MGT_TRY(bcast.download(o->bcast, nullptr));
  MGT_TRY(half.download(o->halfDown, nullptr));
  MGT_TRY(ballot.download(o->ballot, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runReverse(const std::vector<int>& in, unsigned threads, std::vector<int>& out) {
  DeviceBuffer<int> di(in.size()), dout(in.size());
  MGT_TRY(dout.status());
  MGT_TRY(di.upload(in, nullptr));
  MGT_TRY(mgLaunch(reverseInBlock, dim3(ceilDiv(in.size(), threads)), dim3(threads),
                   threads * sizeof(int), nullptr, di.get(), dout.get(), int(in.size())));
  MGT_TRY(dout.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runShiftNoBarrier(const std::vector<int>& in, unsigned threads, std::vector<int>& out) {
  DeviceBuffer<int> di(in.size()), dout(in.size());
  MGT_TRY(dout.status());
  MGT_TRY(di.upload(in, nullptr));
  MGT_TRY(mgLaunch(shiftNoBarrier, dim3(ceilDiv(in.size(), threads)), dim3(threads), 0, nullptr,
                   di.get(), dout.get(), int(in.size())));
  MGT_TRY(dout.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

// raiseLimit: call mgFuncSetMaxDynamicSharedMemory first (required above 48 KiB).
inline mgError_t runBigShared(const std::vector<float>& in, bool raiseLimit, float* sum) {
  const size_t bytes = in.size() * sizeof(float);
  DeviceBuffer<float> di(in.size()), dout(2);
  MGT_TRY(dout.status());
  MGT_TRY(di.upload(in, nullptr));
  if (raiseLimit) MGT_TRY(mgFuncSetMaxDynamicSharedMemory(bigSharedSum, bytes));
  MGT_TRY(mgLaunch(bigSharedSum, dim3(2), dim3(128), bytes, nullptr, di.get(), dout.get(),
                   int(in.size())));
  std::vector<float> out;
  MGT_TRY(dout.download(out, nullptr));
  MGT_TRY(mgStreamSynchronize(nullptr));
  *sum = out[0] + out[1];
  return mgSuccess;
}

inline mgError_t runDivergentBarrier(std::vector<int>& out) {
  DeviceBuffer<int> d(3 * 64);
  MGT_TRY(d.status());
  MGT_TRY(mgLaunch(divergentBarrier, dim3(3), dim3(64), 0, nullptr, d.get()));
  MGT_TRY(d.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runEarlyExit(const std::vector<int>& in, int n, std::vector<int>& out) {
  DeviceBuffer<int> di(64), dout(64);
  MGT_TRY(dout.status());
  MGT_TRY(di.upload(in, nullptr));
  MGT_TRY(mgMemsetAsync(dout.get(), 0, 64 * sizeof(int), nullptr));
  MGT_TRY(mgLaunch(earlyExitBarrier, dim3(1), dim3(64), 0, nullptr, di.get(), dout.get(), n));
  MGT_TRY(dout.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runIndices(dim3 grid, dim3 block, std::vector<unsigned>& out) {
  const size_t n = size_t(grid.x) * grid.y * grid.z * block.x * block.y * block.z;
  DeviceBuffer<unsigned> d(n);
  MGT_TRY(d.status());
  MGT_TRY(mgLaunch(writeIndices, grid, block, 0, nullptr, d.get()));
  MGT_TRY(d.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runSharedPerBlock(unsigned blocks, int* mismatches) {
  DeviceBuffer<int> d(1);
  MGT_TRY(d.status());
  MGT_TRY(mgMemsetAsync(d.get(), 0, sizeof(int), nullptr));
  MGT_TRY(mgLaunch(sharedPerBlock, dim3(blocks), dim3(96), 0, nullptr, d.get()));
  MGT_TRY(mgMemcpyDtoH(mismatches, d.get(), sizeof(int), nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runBarrierVotes(unsigned threads, std::vector<int>& out) {
  DeviceBuffer<int> d(8);
  MGT_TRY(d.status());
  MGT_TRY(mgLaunch(barrierVotes, dim3(2), dim3(threads), 0, nullptr, d.get()));
  MGT_TRY(d.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runHalfAxpb(const std::vector<mg_half>& in, std::vector<mg_half>& out) {
  DeviceBuffer<mg_half> di(in.size()), dout(in.size());
  MGT_TRY(dout.status());
  MGT_TRY(di.upload(in, nullptr));
  MGT_TRY(mgLaunch(halfAxpb, dim3(ceilDiv(in.size(), 64)), dim3(64), 0, nullptr, di.get(),
                   dout.get(), int(in.size())));
  MGT_TRY(dout.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

inline mgError_t runPortableWarpSum(const std::vector<float>& x, std::vector<float>& out) {
  DeviceBuffer<float> dx(x.size()), dout(2 * x.size());
  MGT_TRY(dout.status());
  MGT_TRY(dx.upload(x, nullptr));
  MGT_TRY(mgLaunch(portableWarpSum, dim3(unsigned(x.size() / 64)), dim3(64), 0, nullptr,
                   dx.get(), dout.get()));
  MGT_TRY(dout.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}

// Captures upload -> x += 1 on stream a, forked to stream b (x += 10 on a second buffer y)
// and joined back, -> download; then replays the graph `replays` times. Nothing may run
// during capture: `out` and `outY` only change when the graph is launched.
inline mgError_t runGraph(std::vector<float>& x, std::vector<float>& out, std::vector<float>& outY,
                          int replays) {
  const int n = int(x.size());
  DeviceBuffer<float> dx(n), dy(n);
  MGT_TRY(dy.status());
  MGT_TRY(mgMemsetAsync(dy.get(), 0, n * sizeof(float), nullptr));
  MGT_TRY(mgStreamSynchronize(nullptr));
  mgStream_t a, b;
  mgEvent_t fork, join;
  MGT_TRY(mgStreamCreate(&a));
  MGT_TRY(mgStreamCreate(&b));
  MGT_TRY(mgEventCreate(&fork));
  MGT_TRY(mgEventCreate(&join));
  mgGraph_t graph;
  mgGraphExec_t exec;
  MGT_TRY(mgStreamBeginCapture(a));
  MGT_TRY(mgMemcpyHtoD(dx.get(), x.data(), n * sizeof(float), a));
  MGT_TRY(mgEventRecord(fork, a));
  MGT_TRY(mgStreamWaitEvent(b, fork));
  MGT_TRY(mgLaunch(addScalar, dim3(ceilDiv(n, 64)), dim3(64), 0, b, dy.get(), 10.0f, n));
  MGT_TRY(mgEventRecord(join, b));
  MGT_TRY(mgLaunch(addScalar, dim3(ceilDiv(n, 64)), dim3(64), 0, a, dx.get(), 1.0f, n));
  MGT_TRY(mgStreamWaitEvent(a, join));
  MGT_TRY(mgMemcpyDtoH(out.data(), dx.get(), n * sizeof(float), a));
  MGT_TRY(mgMemcpyDtoH(outY.data(), dy.get(), n * sizeof(float), a));
  MGT_TRY(mgStreamEndCapture(a, &graph));
  MGT_TRY(mgGraphInstantiate(&exec, graph));
  for (int r = 0; r < replays; ++r) {
    MGT_TRY(mgGraphLaunch(exec, a));
    MGT_TRY(mgStreamSynchronize(a));
    for (float& v : x) v += 100.0f;  // the graph copies from x when it runs, not at capture
  }
  MGT_TRY(mgGraphExecDestroy(exec));
  MGT_TRY(mgGraphDestroy(graph));
  MGT_TRY(mgEventDestroy(fork));
  MGT_TRY(mgEventDestroy(join));
  MGT_TRY(mgStreamDestroy(a));
  return mgStreamDestroy(b);
}

// flagPipeline on `blocks` co-resident blocks of 64 threads (coResident false: a plain launch).
inline mgError_t runFlagPipeline(int blocks, int steps, bool broken, bool coResident, std::vector<float>& out) {
  DeviceBuffer<float> d(size_t(blocks) * steps);
  DeviceBuffer<unsigned> flags(blocks);
  MGT_TRY(d.status());
  MGT_TRY(flags.status());
  MGT_TRY(mgMemsetAsync(flags.get(), 0, blocks * sizeof(unsigned), nullptr));
  if (coResident)
    MGT_TRY(mgLaunchCoResident(flagPipeline, dim3(blocks), dim3(64), 0, nullptr, d.get(), flags.get(), steps,
                               broken ? 1 : 0));
  else
    MGT_TRY(mgLaunch(flagPipeline, dim3(blocks), dim3(64), 0, nullptr, d.get(), flags.get(), steps, broken ? 1 : 0));
  MGT_TRY(d.download(out, nullptr));
  return mgStreamSynchronize(nullptr);
}
