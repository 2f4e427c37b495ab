# The host CPU that runs the compiler and the CPU target. Cores are detected when the profile is
# loaded (std::thread::hardware_concurrency); the FP32 peak is clock * cores * fp32_flops_per_cycle.
# 32 FLOP/cycle = one 512-bit FMA per cycle (16 lanes x 2); Xeon Gold/Platinum parts with two FMA
# ports reach 64: write a copy of this file with the right numbers for a known machine.
# Sources: Intel 64 and IA-32 Architectures Optimization Reference Manual (AVX-512 FMA throughput);
# this machine's lscpu (Sapphire Rapids class Xeon, 2.1 GHz, AVX-512, 2 vCPUs under KVM).
name = host
kind = cpu
vendor = intel
arch = x86-64
description = host CPU (cores detected at load)
sm_count = auto
clock_ghz = 2.1
fp32_flops_per_cycle = 32
fp32_tflops = auto
mem_bandwidth_gbs = 20           # sustained per-VM share of DRAM bandwidth (STREAM-like), a guess
l2_mb = 4
launch_overhead_us = 5.0         # one parallel region: fork/join of the thread pool
