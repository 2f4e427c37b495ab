# AMD Instinct MI300X, CDNA3, gfx942 (8 XCDs shown as one device in SPX mode).
# Sources: AMD Instinct MI300X accelerator data sheet; AMD CDNA 3 architecture whitepaper
# (304 CUs, 4 MB L2 per XCD, 256 MB Infinity Cache); AMD CDNA3 ISA reference (VGPR file, 64 KB LDS).
name = mi300x
kind = gpu
vendor = amd
arch = gfx942
description = AMD Instinct MI300X 192GB
sm_count = 304
clock_ghz = 2.10                 # peak engine clock
fp32_tflops = 81.7               # FP32 vector (matrix FP32 163.4, not modeled)
fp16_tflops = 1307.4             # FP16 matrix, dense
mem_bandwidth_gbs = 5300         # HBM3, 5.3 TB/s
l2_mb = 32                       # 8 x 4 MB L2 (the 256 MB Infinity Cache is not modeled)
regs_per_sm = 131072
max_regs_per_thread = 512
smem_per_sm_kb = 64
max_smem_per_block_kb = 64
max_threads_per_sm = 2048
max_blocks_per_sm = 32
warp_size = 64
# Occupancy granularity (CDNA2/3 ISA: a wave's VGPRs + AGPRs come from its SIMD's 512-entry file in
# blocks of 8, i.e. 8 x 64 lanes; LDS is allocated in blocks of 128 dwords). Checked against hipcc's
# own "Occupancy [waves/SIMD]" remark (docs/GPU_TARGET.md, resource feedback).
reg_alloc_unit = 512
reg_partitions = 4
smem_alloc_unit = 512
launch_overhead_us = 6.0
graph_launch_overhead_us = 1.5
