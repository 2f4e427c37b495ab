#!/usr/bin/env bash
# Compiles the GPU test kernels and their host drivers (tests/gpu/gpu_test_kernels.cuh,
# gpu_test_host.cuh: the very sources the CPU emulation runs in gpu_emu_test) with a real GPU
# compiler, warnings as errors, compile only (-c): what the emulation accepts must also be CUDA
# and HIP. Also compiles gpu_host_only_check.cpp with the host compiler against the vendor
# runtime headers (mg_gpu.h's MG_GPU_CUDA / MG_GPU_HIP path).
#   usage: compile_with_gpu_compilers.sh nvcc|hipcc SOURCE_DIR
#   nvcc:  /usr/local/cuda/bin/nvcc, -arch=sm_80 and -arch=sm_90
#   hipcc: hipcc from PATH (Debian: hipcc, libamdhip64-dev, rocm-device-libs), gfx90a
#          (Debian's hipcc 5.2 rejects gfx942)
# Exits 77 (ctest's SKIP_RETURN_CODE) with a loud SKIPPED line when the compiler is missing.
set -euo pipefail
compiler=${1:?nvcc or hipcc}
src=$(cd "${2:?source dir}" && pwd)
tests="$src/tests/gpu"
includes=(-I "$src/runtime/gpu" -I "$tests")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
  echo "+ $*"
  "$@"
}

case "$compiler" in
  nvcc)
    nvcc=/usr/local/cuda/bin/nvcc
    if [ ! -x "$nvcc" ]; then
      echo "SKIPPED: nvcc not found at $nvcc: CUDA compile check not run" >&2
      exit 77
    fi
    for arch in sm_80 sm_90; do
      run "$nvcc" -std=c++17 -arch="$arch" -Werror all-warnings \
        -Xcompiler=-Wall,-Wextra,-Werror "${includes[@]}" \
        -c "$tests/gpu_compile_check.cu" -o "$tmp/kernels_$arch.o"
    done
    run g++ -std=c++17 -Wall -Wextra -Werror -DMG_GPU_CUDA -I /usr/local/cuda/include \
      "${includes[@]}" -c "$tests/gpu_host_only_check.cpp" -o "$tmp/host_only.o"
    ;;
  hipcc)
    hipcc=$(command -v hipcc || true)
    if [ -z "$hipcc" ]; then
      source "$src/tests/lib/missing_tool.sh"
      missing_tool "hipcc not found: HIP compile check not run" \
        "scripts/setup.sh installs hipcc libamdhip64-dev rocm-device-libs"
    fi
    run "$hipcc" -std=c++17 --offload-arch=gfx90a -Wall -Wextra -Werror "${includes[@]}" \
      -x hip -c "$tests/gpu_compile_check.cu" -o "$tmp/kernels_gfx90a.o"
    run g++ -std=c++17 -Wall -Wextra -Werror -DMG_GPU_HIP -D__HIP_PLATFORM_AMD__ \
      "${includes[@]}" -c "$tests/gpu_host_only_check.cpp" -o "$tmp/host_only.o"
    ;;
  *)
    echo "unknown compiler: $compiler" >&2
    exit 2
    ;;
esac
echo "OK: $compiler compiled the GPU test kernels and host drivers"
