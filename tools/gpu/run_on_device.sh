#!/usr/bin/env bash
# One run on a lent GPU machine (issue #4): builds every zoo model's cuda package for sm_90, with
# and without --no-parallel-opt, checks each against PyTorch's CPU outputs, times it against
# PyTorch eager and torch.compile (CUDA events, median of 100 runs after 10 warm-up runs), tunes
# the models that time allows (magnetoc tune, then the --tuning package checked and timed), and
# prints one table last. The --fp16-models (default: six GEMM/conv-heavy ones) are also built with
# --precision fp16 (float16 activations and weights, tensor cores), checked and timed. It never changes the card's settings; it
# only reads them.
#
#   tools/gpu/run_on_device.sh [--models a,b|all] [--fp16-models a,b|none] [--deadline-s S]
#                              [--runs N] [--work DIR] [--magnetoc PATH] [--cpu-test]
#
# Before: on this machine, tools/gpu/pack_device_kit.sh (magnetoc and its shared libraries into
# build/device-kit), then the device tool with carry ["build/device-kit"] and this script as the
# command; nothing else travels (full-size weights are made there by models/export.py with the
# machine's own torch). Where the device tool sets $OUT, the results come back from there:
#   $OUT/table.md      the table (Markdown; also printed last)
#   $OUT/results.json  per model: check, max_abs_err, ms, launches, kernels, eager_ms, compile_ms
#   $OUT/log.txt       everything printed
# The format is documented in docs/PERFORMANCE.md ("GPU figures"). Default deadline: new work
# stops being started after 420 s, so that the whole run ends well inside the 10 minutes a call
# may take. --cpu-test: the same pipeline here without a GPU (small models, the CPU emulation,
# torch on the CPU; tests/gpu/device_script_test.sh); its figures mean nothing.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
models=all; fp16=(); deadline=420; runs=100; work="$root/build/device-run"; magnetoc=""; cpu=()
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --fp16-models) fp16=(--fp16-models "$2"); shift 2 ;;
    --deadline-s) deadline="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --cpu-test) cpu=(--cpu-test); shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run_on_device.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
results="${OUT:-$work/results}"
mkdir -p "$work" "$results"
exec > >(tee "$results/log.txt") 2>&1

echo "=== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
else
  echo "no nvidia-smi"
fi
nvcc=/usr/local/cuda/bin/nvcc
[ -x "$nvcc" ] && "$nvcc" --version | tail -1 || echo "no nvcc at $nvcc"
echo "$(nproc) cores"

if [ -z "$magnetoc" ]; then
  if [ -x "$root/build/device-kit/bin/magnetoc" ]; then magnetoc="$root/build/device-kit/bin/magnetoc"
  else magnetoc="$root/build/bin/magnetoc"; fi
fi
"$magnetoc" --version || { echo "run_on_device.sh: $magnetoc does not run (tools/gpu/pack_device_kit.sh packs it with its libraries)"; exit 2; }
export MAGNETO_HOME="$root" MAGNETO_CACHE_DIR="$work/cache"

# The machine's python with torch: $PYTHON, else Debian's, else the first python3 on PATH.
py="${PYTHON:-}"
if [ -z "$py" ]; then
  for c in /usr/bin/python3 python3; do
    if "$c" -c "import torch, onnx" 2>/dev/null; then py="$c"; break; fi
  done
fi
[ -n "$py" ] || { echo "run_on_device.sh: no python with torch and onnx"; exit 2; }
"$py" -c "import torch, onnx; print('torch', torch.__version__, 'onnx', onnx.__version__, 'cuda', torch.cuda.is_available())"

echo "=== zoo: export, build, check, time"
"$py" "$root/tools/gpu/device_bench.py" --out "$work" --magnetoc "$magnetoc" --models "$models" \
  --deadline-s "$deadline" --runs "$runs" --nvcc "$nvcc" "${fp16[@]}" "${cpu[@]}"
rc=$?
cp "$work/table.md" "$work/results.json" "$results/" 2>/dev/null
exit $rc
