# NVIDIA H100 SXM5 80 GB (HBM3), Hopper GH100, compute capability 9.0.
# Sources: NVIDIA H100 Tensor Core GPU datasheet; NVIDIA H100 Tensor Core GPU Architecture whitepaper;
# CUDA C++ Programming Guide, "Compute Capabilities" (9.0); NVIDIA Hopper Tuning Guide.
name = h100
kind = gpu
vendor = nvidia
arch = sm_90
description = NVIDIA H100 SXM5 80GB
sm_count = 132
clock_ghz = 1.98                 # max boost
fp32_tflops = 67                 # datasheet FP32 (non-tensor)
fp16_tflops = 989                # FP16/BF16 tensor core, dense
mem_bandwidth_gbs = 3350         # HBM3, 3.35 TB/s
l2_mb = 50
regs_per_sm = 65536
max_regs_per_thread = 255
smem_per_sm_kb = 228
max_smem_per_block_kb = 227
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
launch_overhead_us = 4.0
graph_launch_overhead_us = 1.0
