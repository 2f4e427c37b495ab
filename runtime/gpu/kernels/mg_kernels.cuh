// Magneto's GPU kernel library: the block programs that generated CUDA/HIP packages wrap in their
// __global__ kernels, one per step or several in one joint kernel. The contract between them and
// the code generator is mg_kparams.h; docs/GPU_KERNELS.md describes each family, its tiles and
// its limits. The same sources compile with nvcc, with hipcc, and with a host C++17 compiler
// against the CPU emulation (mg_gpu.h with MG_GPU_EMULATE).
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "../mg_gpu.h"
#include "mg_kparams.h"
#include "mg_kcommon.cuh"
#include "mg_map.cuh"
#include "mg_gemm.cuh"
#include "mg_gemv.cuh"
#include "mg_conv.cuh"
#include "mg_pool.cuh"
#include "mg_reduce.cuh"
#include "mg_rows.cuh"
#include "mg_opset.cuh"
#include "mg_conv_nd.cuh"
#include "mg_recurrent.cuh"
