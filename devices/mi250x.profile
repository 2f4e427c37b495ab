# AMD Instinct MI250X, CDNA2, gfx90a: ONE GCD (graphics compute die). The card holds two GCDs and the
# runtime shows each as its own HIP device, so a kernel runs on one: the figures below are half the
# card's (220 CUs, 47.9 TFLOPS FP32 vector, 383 TFLOPS FP16 matrix, 3.2 TB/s).
# Sources: AMD Instinct MI250X accelerator data sheet; AMD CDNA 2 architecture whitepaper; AMD
# "AMD Instinct MI200 Series Instruction Set Architecture" (512 VGPRs+AGPRs per lane, 64 KB LDS per CU);
# HIP programming guide (wavefront size 64).
name = mi250x
kind = gpu
vendor = amd
arch = gfx90a
description = AMD Instinct MI250X, one GCD (of two)
sm_count = 110                   # compute units of one GCD
clock_ghz = 1.70                 # peak engine clock
fp32_tflops = 23.95              # FP32 vector (packed FP32 / matrix doubles this; not modeled)
fp16_tflops = 191.5              # FP16 matrix core, dense
mem_bandwidth_gbs = 1638         # HBM2e, 3.2 TB/s per card over two GCDs
l2_mb = 8
regs_per_sm = 131072             # 4 SIMDs x 512 VGPR x 64 lanes (arch VGPRs + AGPRs), 32-bit
max_regs_per_thread = 512
smem_per_sm_kb = 64              # LDS per CU
max_smem_per_block_kb = 64
max_threads_per_sm = 2048        # 8 waves per SIMD x 4 SIMDs x 64
max_blocks_per_sm = 32
warp_size = 64
# Occupancy granularity (CDNA2/3 ISA: a wave's VGPRs + AGPRs come from its SIMD's 512-entry file in
# blocks of 8, i.e. 8 x 64 lanes; LDS is allocated in blocks of 128 dwords). Checked against hipcc's
# own "Occupancy [waves/SIMD]" remark (docs/GPU_TARGET.md, resource feedback).
reg_alloc_unit = 512
reg_partitions = 4
smem_alloc_unit = 512
launch_overhead_us = 6.0         # hipLaunchKernel, typical measured figure
graph_launch_overhead_us = 1.5
