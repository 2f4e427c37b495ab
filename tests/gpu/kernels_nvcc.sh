#!/bin/bash
# Compiles tests/gpu/kernels_instantiate.cu (every block program of runtime/gpu/kernels/ in every
# tile configuration, plus a joint kernel) with the real GPU compilers, warnings as errors:
#   nvcc to PTX for compute_90 (-Werror all-warnings), and a part of it (MG_PTXAS_SET: GEMM, GEMV, conv,
#   recurrent and joint kernels) optimized through ptxas for sm_90: its register and spill figures;
#   the fp16 tensor-core programs (kernels_fp16_instantiate.cu) to PTX for compute_80, and their
#   MG_PTXAS_SET part (the smallest tile, the joint kernel) through ptxas for sm_80;
#   hipcc --offload-arch=gfx90a -Werror, front end only (-fsyntax-only: see below; wavefront of
#   64: nothing in the library may assume a warp of 32).
# Other architectures are left to the packages (tests/e2e/run_gpu_targets.sh part 2 and the
# examples stage build whole packages for sm_80;sm_90 and gfx90a): a second architecture here
# doubled this test's ten minutes for instantiations that differ only in ptxas' register allocation.
# Each part prints SKIPPED loudly when its compiler is missing. Exit status: 1 when any compile
# fails, else 77 (ctest's skip) when nvcc is missing, else 0 (hipcc missing is only reported, or a
# failure under MAGNETO_REQUIRE_TOOLS=1, which scripts/test.sh sets after scripts/setup.sh).
# Usage: kernels_nvcc.sh SOURCE_DIR [WORK_DIR]
set -u
src=${1:?usage: kernels_nvcc.sh SOURCE_DIR [WORK_DIR]}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
cu="$src/tests/gpu/kernels_instantiate.cu"
nvcc=${NVCC:-$(command -v nvcc || true)}
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
hipcc=${HIPCC:-$(command -v hipcc || true)}

failed=0
pids=()
names=()

# Runs one compile in the background (two compilers on two cores halve the wall time); its log
# is printed when it fails.
start() {
  local name=$1
  shift
  echo "kernels_nvcc: $name: $*"
  ("$@" >"$work/$name.log" 2>&1) &
  pids+=($!)
  names+=("$name")
}

if [ -n "$nvcc" ]; then
  # Every instantiation through nvcc's front end (where its warnings come from) down to PTX for
  # compute_90 with cicc's optimizer off (-Xcicc -O0: 10 CPU-s instead of 82), then the
  # MG_PTXAS_SET part of the file optimized and through ptxas for sm_90, for the register and
  # spill figures below: the smallest and the skinny GEMM and conv tiles, two GEMV ones, the smallest and the
  # largest recurrent programs, and the joint kernels. ptxas on all 188 entries was 170 of this
  # test's 250 CPU-s; ptxas also sees whole packages' kernels, the largest tiles included
  # (tests/e2e/run_gpu_targets.sh part 2, the examples stage).
  nvcc_ptx_and_ptxas() {
    "$nvcc" -std=c++17 -O3 -Werror all-warnings -arch=compute_90 --ptx -Xcicc -O0 "$cu" \
      -o "$work/kernels_cuda.ptx" &&
      "$nvcc" -std=c++17 -O3 -Werror all-warnings -DMG_PTXAS_SET -gencode arch=compute_90,code=sm_90 \
        -Xptxas -v -c "$cu" -o "$work/kernels_cuda.o"
  }
  start nvcc nvcc_ptx_and_ptxas
  # --precision fp16: the tensor-core (wmma) programs for sm_80, the oldest architecture the
  # packages target (sm_90 doubled the time: 4.4 min for both on a loaded machine).
  # As above: every tile to PTX with cicc's optimizer off, then the MG_PTXAS_SET part (the smallest
  # tile and the joint kernel) optimized and through ptxas; all 19 kernels through both took
  # 72 CPU-s of this test's 160.
  nvcc_fp16_ptx_and_ptxas() {
    local f16="$src/tests/gpu/kernels_fp16_instantiate.cu"
    "$nvcc" -std=c++17 -O3 -Werror all-warnings -arch=compute_80 --ptx -Xcicc -O0 "$f16" \
      -o "$work/kernels_fp16_cuda.ptx" &&
      "$nvcc" -std=c++17 -O3 -Werror all-warnings -DMG_PTXAS_SET -gencode arch=compute_80,code=sm_80 \
        -c "$f16" -o "$work/kernels_fp16_cuda.o"
  }
  start nvcc_fp16 nvcc_fp16_ptx_and_ptxas
else
  echo "=================================================================="
  echo "SKIPPED: nvcc not found (PATH, /usr/local/cuda/bin, \$NVCC):"
  echo "SKIPPED: the CUDA compile check of the kernel library did not run"
  echo "=================================================================="
fi

if [ -n "$hipcc" ]; then
  # Clang's semantic analysis of every instantiation for gfx90a (where its warnings and the
  # wavefront-64 static_asserts come from), without the AMDGPU back end: the back end was 120 of
  # the 126 CPU-s, and the kernels use only dynamic shared memory, so no tile configuration can
  # fail there alone. The back end still compiles two whole zoo packages for gfx90a in
  # tests/e2e/run_gpu_targets.sh part 2.
  start hipcc "$hipcc" -x hip -std=c++17 -O3 --offload-arch=gfx90a -Werror -Wall \
    -Wno-unused-command-line-argument -fsyntax-only "$cu"
elif [ "${MAGNETO_REQUIRE_TOOLS:-0}" = 1 ]; then
  # scripts/setup.sh installs hipcc: under scripts/test.sh its absence is a failure.
  echo "FAILED: hipcc not found (PATH, \$HIPCC) though scripts/setup.sh installs it (MAGNETO_REQUIRE_TOOLS=1)"
  failed=1
else
  echo "=================================================================="
  echo "SKIPPED: hipcc not found (PATH, \$HIPCC): the HIP (gfx90a) compile check did not run"
  echo "=================================================================="
fi

for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then
    echo "kernels_nvcc: ${names[$i]}: OK"
  else
    echo "kernels_nvcc: ${names[$i]}: FAILED"
    cat "$work/${names[$i]}.log"
    failed=1
  fi
done

# Registers and spills of the GEMM, GEMV, conv, recurrent and joint kernels on sm_90 (docs/GPU_KERNELS.md).
if [ -n "$nvcc" ] && [ -f "$work/nvcc.log" ]; then
  awk '/Compiling entry function/ {
         name = $0; sub(/.*function ./, "", name); sub(/. for .*/, "", name)
         sm90 = ($0 ~ /sm_90/) }
       /spill stores/ { spill = $5 }
       /Used [0-9]+ registers/ && sm90 && name ~ /(gemmK|gemvK|convK|jointK|recurrentK|jointRecurrentK)/ {
         match($0, /Used [0-9]+/); print name, substr($0, RSTART + 5, RLENGTH - 5), spill }' \
    "$work/nvcc.log" | c++filt | sed 's/(anonymous namespace):://' |
    awk '{ spill = $NF; regs = $(NF-1); $NF = ""; $(NF-1) = "";
           printf "kernels_nvcc: sm_90 %-45s %3d registers, %s bytes spilled\n", $0, regs, spill }'
fi

[ "$failed" = 1 ] && exit 1
[ -z "$nvcc" ] && exit 77  # without nvcc the main part of this check did not run
exit 0
