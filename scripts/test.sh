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
# The sanitize stage's asan, tsan and leak jobs build and test in their own folder (build-sanitize)
# and need nothing from the others. MAGNETO_SANITIZE_BESIDE=1 starts them right after the build,
# beside stages 3-7, with fuzz (a fixed time) at the end; by default they run in turn, at the end.
# Measured on the 2-core CI VM (docs/PERFORMANCE.md, session 15): beside, they did finish within
# the ctest and backend stages, but those went from 376 to 1001 s and from 217 to 358 s, more than
# the 562 s the sanitizers take alone: the two vCPUs do not absorb a second -j2 job. Each stage's
# line gives its wall time and the CPU time of its processes (100% = both cores busy throughout).
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
  echo "  $(usage "$(( $(date +%s) - start ))" "$(( $(cpu_now) + ${san_cpu:-0} ))")  in all"
}
# The sanitizers beside the other stages: a process group of its own (setsid), started from a
# subshell so that it is not this shell's child: its CPU time is not counted in the stage during
# which it happens to end, and it reports its own.
san_dir="$root/build-sanitize"
san_log="$san_dir/beside.log"
san_pgid=""
stop_beside() { if [ -n "$san_pgid" ]; then kill -- "-$san_pgid" 2>/dev/null; san_pgid=""; fi; }
# On failure too: the stages that did run say how long they took.
trap 'rc=$?; stop_beside; if [ $rc -ne 0 ]; then print_times; echo "FAILED after $(( $(date +%s) - start )) s"; fi' EXIT

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

beside=0
if has sanitize && [ "${MAGNETO_SANITIZE_BESIDE:-0}" = 1 ] &&
   { has unit || has backend || has zoo || has examples || has gpu; }; then
  beside=1
  mkdir -p "$san_dir"
  rm -f "$san_log.done" "$san_dir/beside.pgid"
  echo
  echo "==== sanitizers asan, tsan, leak: started beside the stages below (log: $san_log) ===="
  # shellcheck disable=SC2016  # expanded by the inner bash
  ( setsid bash -c 'echo $$ > "$1/beside.pgid"; s=$(date +%s)
      bash scripts/sanitize.sh asan tsan leak > "$2" 2>&1; rc=$?
      read -r -a t < /proc/$$/stat
      echo "$rc $(( $(date +%s) - s )) $(( (t[15] + t[16]) * 100 / $3 ))" > "$2.done"' \
      _ "$san_dir" "$san_log" "$tick" < /dev/null > /dev/null 2>&1 & )
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$san_dir/beside.pgid" ] && break; sleep 0.2; done
  san_pgid="$(cat "$san_dir/beside.pgid" 2>/dev/null || true)"
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

if has sanitize && [ "$beside" = 1 ]; then
  step "sanitizers: the end of asan, tsan and leak (started after the build), then fuzz"
  while [ ! -e "$san_log.done" ]; do sleep 2; done
  san_pgid=""
  read -r san_rc san_wall san_cpu < "$san_log.done"
  sed -n '/^==== sanitize: summary ====/,$p' "$san_log"
  times+=("$(usage "$san_wall" "$san_cpu")  sanitizers asan, tsan, leak (beside stages 3-7)")
  echo "asan, tsan and leak took $san_wall s beside the other stages (log: $san_log)"
  if [ "$san_rc" != 0 ]; then
    grep -E "FAIL|ERROR|runtime error" "$san_log" | head -40
    echo "FAILED: sanitizers (asan, tsan, leak); the whole log is $san_log"
    exit 1
  fi
  bash scripts/sanitize.sh fuzz
elif has sanitize; then
  step "sanitizers and fuzzing (scripts/sanitize.sh, builds in build-sanitize)"
  bash scripts/sanitize.sh
fi

print_times
echo "all stages passed in $(( $(date +%s) - start )) s"
