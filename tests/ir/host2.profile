# devices/host.profile with its core count fixed at 2 (the CI machine's), so that golden tests of
# host decisions that depend on the cores do not change with the machine running them.
name = host2
kind = cpu
vendor = intel
arch = x86-64
description = the host profile with 2 cores (golden tests: the CI machine's count, fixed)
sm_count = 2
clock_ghz = 2.1
fp32_flops_per_cycle = 32
fp32_tflops = auto
mem_bandwidth_gbs = 20           # sustained per-VM share of DRAM bandwidth (STREAM-like), a guess
l2_mb = 4
launch_overhead_us = 5.0         # one parallel region: fork/join of the thread pool
