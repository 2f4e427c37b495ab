// CPU emulation of CUDA/HIP kernels: the one header to include (mg_gpu.h includes it when no GPU
// compiler is at work, or when MG_GPU_EMULATE is defined).
//
// Kernel sources in plain CUDA syntax compile with a host C++17 compiler against it and run on
// the CPU with the GPU's execution model: a grid's blocks spread over a pool of OS threads, the
// threads of a block as fibers so that __syncthreads works, per-block __shared__ memory, real
// atomics, warp intrinsics in lockstep. docs/DESIGN.md ("Testing without a GPU") says why: every
// generated kernel's index arithmetic is checked on machines without a GPU.
// docs/GPU_EMULATION.md describes the model, its limits and its settings.
//
// Layers, each its own header:
//   mg_emu_types.h    language surface: qualifiers, dim3, built-in variables, __half, math
//   mg_emu_context.h  fiber context switch, pooled stacks, settings from the environment
//   mg_emu_block.h    one block: fibers, __syncthreads, warp exchange, deadlock detection
//   mg_emu_device.h   device intrinsics: barriers, shuffles, votes, atomics, fences
//   mg_emu_grid.h     grid over a pool of OS threads, launch checks, error state
//   mg_emu_host.h     memory, streams, events, graph capture, launch
//   mg_emu_wmma.h     tensor-core fragments (nvcuda::wmma subset), one full tile per thread
//
// Part of runtime/gpu/, which generated packages copy verbatim: standard C++17, POSIX, pthreads.
#pragma once

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#error "mg_gpu_emu.h is the CPU emulation: compile it with a host compiler"
#endif

// The emulation's entry points: the host API of mg_gpu.h (memory, streams, events, graphs,
// launches) and the block's barrier and warp steps, behind which lies all of the emulator's
// machinery. By default every translation unit compiles them (inline: header-only, what a
// package's own CMake build does). With MG_EMU_CORE_OBJECT they are only declared, and
// mg_emu_core.cpp compiles them once: magnetoc's emulated builds keep that object in their cache
// and link it, so each package compiles its kernels and tables but not the emulator (test_relu's
// package: 2.4 -> 1.4 s of CPU, with the standard headers precompiled).
#if defined(MG_EMU_CORE_OBJECT) && !defined(MG_EMU_CORE_IMPL)
#define MG_EMU_ENTRY_BODIES 0
#else
#define MG_EMU_ENTRY_BODIES 1
#endif
#if defined(MG_EMU_CORE_OBJECT)
#define MG_EMU_API
#else
#define MG_EMU_API inline
#endif

#include "mg_emu_types.h"
#include "mg_emu_context.h"
#include "mg_emu_block.h"
#include "mg_emu_device.h"
#include "mg_emu_grid.h"
#include "mg_emu_host.h"
#include "mg_emu_wmma.h"

// Last, after every standard header the emulation needs (<memory> among them): libstdc++
// writes __attribute__((__noinline__)), which this macro would break if defined earlier.
#define __noinline__ __attribute__((noinline))
