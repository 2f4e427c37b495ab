#!/usr/bin/env python3
"""Turns kernel_bench's output into docs/PERFORMANCE.md's kernel tables (markdown):

    build/bin/kernel_bench --threads 1 --cpu-time --no-ref | /usr/bin/python3 tools/bench/kernel_table.py

One table for SGEMM, one for the convolutions (ms, GFLOP/s, % of the FMA peak kernel_bench
measured first on this core), one for the pools; the peak and the machine's CPU on top."""
import re
import sys


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def main():
    text = sys.stdin.read()
    peak = re.search(r"micro-kernel (\S+); measured single-core FMA peak ([0-9.]+) GFLOP/s", text)
    if not peak:
        print("kernel_table: no 'measured single-core FMA peak' line in the input", file=sys.stderr)
        return 1
    print("%s, micro-kernel %s, measured single-core FMA peak **%s GFLOP/s**.\n" % (
        cpu_name(), peak.group(1), peak.group(2)))
    gemm = re.findall(r"^sgemm +(\d+)x +(\d+)x +(\d+) +1 thread +([0-9.]+) GFLOP/s", text, re.M)
    if gemm:
        print("| SGEMM MxNxK | GFLOP/s | % of peak |\n| --- | --- | --- |")
        for m, n, k, g in gemm:
            print("| %sx%sx%s | %s | %.0f%% |" % (m, n, k, g, 100 * float(g) / float(peak.group(2))))
        print()
    convs = re.findall(r"^conv (.+?) +fast +([0-9.]+) ms +([0-9.]+) GFLOP/s +(\d+)% of peak", text, re.M)
    if convs:
        print("| convolution | ms | GFLOP/s | % of peak |\n| --- | --- | --- | --- |")
        seen = set()
        for name, ms, g, pct in convs:
            if name in seen:  # kernel_bench lists a few layers twice (two model families)
                continue
            seen.add(name)
            print("| %s | %s | %s | %s%% |" % (name.strip(), ms, g, pct))
        print()
    pools = re.findall(r"^(MaxPool|AveragePool) +(\S+) k(\d+) s(\d+) +fast +([0-9.]+) ms", text, re.M)
    if pools:
        print("| pool | ms |\n| --- | --- |")
        for op, shape, k, s, ms in pools:
            print("| %s %s k%s s%s | %s |" % (op, shape, k, s, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
