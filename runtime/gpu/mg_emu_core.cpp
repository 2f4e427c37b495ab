// The CPU emulation's entry points compiled once (MG_EMU_CORE_OBJECT, runtime/gpu/mg_gpu_emu.h):
// the host API of mg_gpu.h (memory, streams, events, graph capture, launches) and the block's
// barrier and warp steps, with the grid and block runners, fibers and thread pool behind them.
//
// Who compiles it: magnetoc's emulated builds (`magnetoc check|bench|regress --emulate`) compile
// this file once per compiler, flags and runtime text into their cache and link it with every
// package built with -DMG_EMU_CORE_OBJECT=1, which then compiles only its kernels and tables. A
// package's own CMake build (NAME_EMULATE=ON) does not use it: without MG_EMU_CORE_OBJECT the
// same entry points are inline in every translation unit (header-only).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#ifndef MG_GPU_EMULATE
#define MG_GPU_EMULATE 1
#endif
#define MG_EMU_CORE_OBJECT 1
#define MG_EMU_CORE_IMPL 1
#include "mg_gpu.h"
