#!/usr/bin/env bash
# Registers per thread of the GEMM-tile block programs (mgk::gemmBlock, mgk::convBlock) for every
# tile of the cost model (kGemmTiles in src/target/cost_model.cpp), from the device compilers:
# ptxas for sm_90 (nvcc -O3 -Xptxas -v) and the AMDGPU back end for gfx90a (hipcc -O3
# -Rpass-analysis=kernel-resource-usage: VGPRs rounded up to 4, plus AGPRs). Each program is a
# kernel of its own, written as the GPU emitter writes a one-member launch. Prints the table that
# kRegisterTable in src/target/cost_model.cpp holds (docs/GPU_TARGET.md, "Register-aware
# co-tuning"); rerun it when the block programs change.
#   tools/calibrate_registers.sh [--magnetoc PATH] [--zoo DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
magnetoc="$root/build/bin/magnetoc"
zoo="$root/build/zoo"
while [ $# -gt 0 ]; do
  case "$1" in
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --zoo) zoo="$2"; shift 2 ;;
    *) echo "calibrate_registers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Any cuda package carries runtime/ as the kernels include it.
"$magnetoc" compile "$zoo/squeezenet1_1_small/model.onnx" --target cuda -o "$work/pkg" >/dev/null
# Tiles of the cost model: tileM x tileN (output rows x columns), threads. convBlock<BM, BN> is the
# transpose (BM output channels x BN pixels = the cost model's tileN x tileM).
tiles="32,32,128 64,32,128 32,64,128 64,64,128 128,64,256 64,128,256 128,128,256 128,16,128 16,128,128"
{
  echo '#include <cstddef>'
  echo '#include <cstdint>'
  echo '#include "runtime/kernels/mg_kernels.cuh"'
  for t in $tiles; do
    IFS=, read -r m n th <<< "$t"
    echo "__global__ void __launch_bounds__($th) cal_gemm_${m}_${n}_${th}(const mgk::GemmParams* __restrict__ a) {"
    echo "  MG_DYNAMIC_SHARED(char, smem);"
    echo "  mgk::gemmBlock<$m, $n, $th>(*a, blockIdx.x, smem);"
    echo "}"
    echo "__global__ void __launch_bounds__($th) cal_conv_${m}_${n}_${th}(const mgk::ConvParams* __restrict__ a) {"
    echo "  MG_DYNAMIC_SHARED(char, smem);"
    echo "  mgk::convBlock<$n, $m, $th>(*a, blockIdx.x, smem);"
    echo "}"
  done
} > "$work/cal.cu"
"$nvcc" -arch=sm_90 -cubin -O3 -DNDEBUG -std=c++17 -Xptxas -v -I"$work/pkg" -o "$work/cal.cubin" \
  "$work/cal.cu" > "$work/nvcc.txt" 2>&1
hipcc --offload-arch=gfx90a -x hip --cuda-device-only -c -O3 -DNDEBUG -std=c++17 \
  -Wno-unused-command-line-argument -Rpass-analysis=kernel-resource-usage -I"$work/pkg" \
  -o "$work/cal.o" "$work/cal.cu" > "$work/hipcc.txt" 2>&1
/usr/bin/python3 - "$work/nvcc.txt" "$work/hipcc.txt" <<'PY'
import re, sys
nv, amd = {}, {}
cur = None
for line in open(sys.argv[1]):
    m = re.search(r"Compiling entry function '_Z\d+(cal_\w+?)P", line)
    if m: cur = m.group(1)
    m = re.search(r"Used (\d+) registers", line)
    if m and cur: nv[cur] = int(m.group(1)); cur = None
fn, v = None, {}
for line in open(sys.argv[2]):
    m = re.search(r"Function Name: _Z\d+(cal_\w+?)P", line)
    if m: fn = m.group(1); v[fn] = {}
    m = re.search(r"remark:\s+(VGPRs|AGPRs|VGPRs Spill|ScratchSize \[bytes/lane\]): (\d+)", line)
    if m and fn: v[fn][m.group(1)] = int(m.group(2))
for f, d in v.items(): amd[f] = (d.get("VGPRs", 0) + 3) // 4 * 4 + d.get("AGPRs", 0)
print("// program, tileM, tileN, threads, sm_90 registers, gfx90a registers")
for f in sorted(nv, key=lambda s: (s.split("_")[1], [int(x) for x in s.split("_")[2:]])):
    kind, m, n, th = f.split("_")[1:]
    print(f'{{"{kind}", {m}, {n}, {th}, {nv[f]}, {amd.get(f, 0)}}},')
PY
