#!/usr/bin/env bash
# Runs every test of Magneto: the README's test command, and what CI (.ci/run) calls.
#   1. set-up (idempotent), 2. build, 3. unit + golden IR + CLI tests (ctest),
#   4. the ONNX backend node tests through the CPU target, 5. the model zoo through `magnetoc check`,
#   6. examples/: an application linking a generated package (add_subdirectory and find_package),
#   7. gpu: the cuda and hip targets through the CPU emulation, nvcc and hipcc,
#   8. sanitize: scripts/sanitize.sh (ASan/UBSan tests, TSan and leak runs of a package, fuzzing).
# Stages can be picked: scripts/test.sh [build] [unit] [backend] [zoo] [examples] [gpu] [sanitize]
# (default: all)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
stages="${*:-build unit backend zoo examples gpu sanitize}"
jobs="${MAGNETO_TEST_JOBS:-2}"
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
has() { [[ " $stages " == *" $1 "* ]]; }
# Each stage's wall time is printed when it ends and again in a table at the end (CI keeps the
# whole run under 35 minutes on a 2-core machine; the table shows where the time goes).
times=()
stage_name=""; stage_start=0
finish_stage() {
  if [ -n "$stage_name" ]; then
    local t=$(( $(date +%s) - stage_start ))
    times+=("$(printf '%6d s  %s' "$t" "$stage_name")")
    printf '==== %s: %d s ====\n' "$stage_name" "$t"
  fi
  stage_name=""
}
step() { finish_stage; stage_name="$1"; stage_start=$(date +%s); printf '\n==== %s ====\n' "$*"; }
start=$(date +%s)
print_times() {
  finish_stage
  echo
  echo "stage times:"
  printf '  %s\n' "${times[@]}"
}
# On failure too: the stages that did run say how long they took.
trap 'rc=$?; if [ $rc -ne 0 ]; then print_times; echo "FAILED after $(( $(date +%s) - start )) s"; fi' EXIT

step "set-up"
# Free disk: the stages need a few GB (the zoo's exported models, packages of up to 1.1 GB each
# while one is checked, the sanitizer build); a full disk shows up as a linker error far later.
free_kb=$(df -Pk . | awk 'NR == 2 {print $4}')
echo "free disk where the build goes: $((free_kb / 1024 / 1024)) GB"
[ "$free_kb" -ge $((6 * 1024 * 1024)) ] || echo "WARNING: under 6 GB free; the zoo and sanitize stages may run out of disk"
bash scripts/setup.sh
# setup.sh installed every tool the tests use (all but nvcc, which comes with the machine image):
# from here a missing one fails its test instead of skipping it (tests/lib/missing_tool.sh).
export MAGNETO_REQUIRE_TOOLS=1

if has build || has unit || has backend || has zoo || has examples || has gpu; then
  step "build"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "$jobs"
fi

if has unit; then
  step "unit, golden IR and CLI tests (ctest)"
  (cd build && ctest -j "$jobs" --output-on-failure)
fi

if has backend; then
  step "ONNX backend node tests through the CPU target"
  bash tests/e2e/run_backend_tests.sh --magnetoc build/bin/magnetoc --jobs "$jobs" \
    --out build/backend_results.tsv
fi

if has zoo; then
  step "model zoo: export with PyTorch, check through the CPU target"
  bash tests/e2e/run_zoo.sh
fi

if has examples; then
  step "examples: an application linking a generated package, with an installed magnetoc"
  bash examples/run_examples.sh
fi

if has gpu; then
  step "cuda and hip targets: CPU emulation, nvcc, hipcc (tests/e2e/run_gpu_targets.sh)"
  bash tests/e2e/run_gpu_targets.sh
fi

if has sanitize; then
  step "sanitizers and fuzzing (scripts/sanitize.sh, builds in build-sanitize)"
  bash scripts/sanitize.sh
fi

print_times
echo "all stages passed in $(( $(date +%s) - start )) s"
