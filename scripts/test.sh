#!/usr/bin/env bash
# Runs every test of Magneto: the README's test command, and what CI (.ci/run) calls.
#   1. set-up (idempotent), 2. build, 3. unit + golden IR + CLI tests (ctest),
#   4. the ONNX backend node tests through the CPU target, 5. the model zoo through `magnetoc check`,
#   6. examples/: an application linking a generated package (add_subdirectory and find_package),
#   7. gpu: the cuda and hip targets through the CPU emulation, nvcc and hipcc,
#   8. sanitize: scripts/sanitize.sh (ASan/UBSan tests, TSan and leak runs of a package, fuzzing).
# Stages can be picked: scripts/test.sh [build] [unit] [backend] [zoo] [examples] [gpu] [sanitize]
# (default: all)
#
# Each stage's line gives its wall time and the CPU time of its processes (100% = both cores busy
# throughout). Stages run one after another: the sanitizers beside stages 3-7 were tried and
# made the run longer on the 2-core CI VM.
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
stage_name=""; stage_start=0; stage_cpu=0
# CPU seconds (x100) used so far by this shell's finished children: user + system (cutime and
# cstime of /proc/PID/stat, in clock ticks).
tick=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_now() {
  local st
  read -r -a st < "/proc/$$/stat"
  # Fields after the command name (which is in parentheses and has no spaces for bash).
  echo $(( (st[15] + st[16]) * 100 / tick ))
}
# "W s  (CPU C s, U%)": U is the share of two cores' time.
usage() {  # usage WALL_SECONDS CPU_CENTISECONDS
  local w=$1 c=$2
  printf '%6d s  (CPU %5d s, %3d%%)' "$w" $((c / 100)) $(( w > 0 ? c / (2 * w) : 0 ))
}
finish_stage() {
  if [ -n "$stage_name" ]; then
    local t=$(( $(date +%s) - stage_start )) c=$(( $(cpu_now) - stage_cpu ))
    times+=("$(usage "$t" "$c")  $stage_name")
    printf '==== %s: %s ====\n' "$stage_name" "$(usage "$t" "$c" | sed 's/^ *//')"
  fi
  stage_name=""
}
step() {
  finish_stage; stage_name="$1"; stage_start=$(date +%s); stage_cpu=$(cpu_now)
  printf '\n==== %s ====\n' "$*"
}
start=$(date +%s)
print_times() {
  finish_stage
  echo
  echo "stage times (wall, and the CPU time of the stage's processes; 100% = two cores busy):"
  printf '  %s\n' "${times[@]}"
  echo "  $(usage "$(( $(date +%s) - start ))" "$(cpu_now)")  in all"
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
  # A unity build (several sources per compiler call): 35% less CPU than one call per file
  # (410 against 650 CPU-s for the tree when measured). The sanitize stage builds file by file, so a source that
  # compiles only beside its batch-mates (a missing include) still fails there.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON >/dev/null
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
