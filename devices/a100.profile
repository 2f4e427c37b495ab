# NVIDIA A100 SXM4 80 GB (HBM2e), Ampere GA100, compute capability 8.0.
# Sources: NVIDIA A100 Tensor Core GPU datasheet (80GB SXM column); NVIDIA A100 Tensor Core GPU
# Architecture whitepaper; CUDA C++ Programming Guide, "Compute Capabilities" (8.0); NVIDIA Ampere
# Tuning Guide (164 KB shared memory per SM, 163 KB per block).
name = a100
kind = gpu
vendor = nvidia
arch = sm_80
description = NVIDIA A100 SXM4 80GB
sm_count = 108
clock_ghz = 1.41                 # boost
fp32_tflops = 19.5
fp16_tflops = 312                # FP16/BF16 tensor core, dense
mem_bandwidth_gbs = 2039         # HBM2e, 80GB SXM
l2_mb = 40
regs_per_sm = 65536
max_regs_per_thread = 255
smem_per_sm_kb = 164
max_smem_per_block_kb = 163
max_threads_per_sm = 2048
max_blocks_per_sm = 32
warp_size = 32
# Occupancy granularity (CUDA occupancy calculator, compute capability 8.x/9.x): registers are
# allocated per warp in units of 256 from one of 4 register files (one per scheduler), shared
# memory in units of 128 bytes plus 1 KB reserved by the system per resident block.
reg_alloc_unit = 256
reg_partitions = 4
smem_alloc_unit = 128
smem_reserved_per_block = 1024
launch_overhead_us = 4.5
graph_launch_overhead_us = 1.2
