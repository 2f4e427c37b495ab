// What this machine can do, probed when a profile is printed (MAGNETO_PROFILE=1, `magnetoc bench
// --profile`), so that each op kind's achieved GFLOP/s and GB/s can be read against a roof:
//  - the FMA peak of one thread: independent fused multiply-adds in registers at the widest
//    vector width the package was compiled for (AVX-512, AVX2+FMA, or what the compiler makes of
//    plain vectors), so "% of peak" is against what these kernels' instructions could reach;
//  - the memory bandwidth: a STREAM-like triad (a = b + s*c) over arrays far larger than the
//    caches, shared by the pool's threads (the bytes of the three arrays per pass; the best pass).
// A step whose data stays in cache can move more bytes per second than the memory bandwidth; its
// "% of bandwidth" then passes 100.
#pragma once

namespace mgrt {

class ThreadPool;

struct MachinePeaks {
  double fmaGflopsPerThread = 0;  // FP32, one thread
  double bandwidthGbs = 0;        // with the pool's threads
  int vectorFloats = 0;           // lanes of the probed FMA (16: AVX-512)
};

// Takes a few tens of milliseconds and about 100 MB while it runs.
MachinePeaks probeMachinePeaks(ThreadPool* pool);

}  // namespace mgrt
