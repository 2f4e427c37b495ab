#!/usr/bin/env bash
# Sanitizer and fuzzing jobs of Magneto (docs/RELIABILITY.md says what each one guarantees):
#   asan  the compiler and its tests under AddressSanitizer + UndefinedBehaviorSanitizer: unit
#         tests, golden IR tests and the bad-model corpus (ctest, without the slow e2e tests).
#         With clang++ the same build carries libFuzzer's instrumentation and the fuzz targets
#         (MAGNETO_FUZZ); with only g++ it is a MAGNETO_SANITIZE build and `fuzz` is skipped.
#   tsan  a generated package (tests/e2e/make_threads_model.py) built with -fsanitize=thread and
#         driven by tests/e2e/threads_test.cpp: handles run concurrently from several threads
#         with identical outputs, and one handle shared by three threads is refused, not raced.
#   leak  the same package under ASan + UBSan + LeakSanitizer: create/run/destroy in a loop, and
#         the misuse cases (null pointers, bad indices, use after destroy, missing, truncated,
#         over-long and corrupt weights files) each give a status and a message.
#   fuzz  each libFuzzer target (tests/fuzz) for MAGNETO_FUZZ_SECONDS from its seed corpus, both
#         at once (one core each).
# Each job prints PASS or FAIL with its figures; a summary ends the run; the exit status is
# non-zero when a job failed.
#
# usage: scripts/sanitize.sh [asan] [tsan] [leak] [fuzz]        (default: all four)
# env:   MAGNETO_SANITIZE_DIR  build folder (default build-sanitize; kept between runs, so later
#                              runs rebuild only what changed)
#        MAGNETO_FUZZ_SECONDS  seconds per fuzz target (default 60)
#        MAGNETO_TEST_JOBS     parallel jobs (default 2)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs_wanted="${*:-asan tsan leak fuzz}"
base="${MAGNETO_SANITIZE_DIR:-$root/build-sanitize}"
fuzz_seconds="${MAGNETO_FUZZ_SECONDS:-60}"
jobs="${MAGNETO_TEST_JOBS:-2}"
py=/usr/bin/python3
mkdir -p "$base"
base="$(cd "$base" && pwd)"
start_all=$(date +%s)
summary=()
failed=0
want() { [[ " $jobs_wanted " == *" $1 "* ]]; }
step() { printf '\n==== sanitize: %s ====\n' "$*"; }
result() {  # result NAME PASS|FAIL|SKIP DETAIL
  summary+=("$(printf '%-5s %-4s %s' "$1" "$2" "$3")")
  echo "sanitize $1: $2: $3"
  [ "$2" = FAIL ] && failed=$((failed + 1))
  return 0
}
secs() { echo $(( $(date +%s) - $1 )); }

# UBSan reports are errors; ASan checks leaks at exit; TSan stops at the first race.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

if command -v clang++ >/dev/null && command -v clang >/dev/null; then
  cc=clang cxx=clang++ fuzz_build=1
  config=(-DMAGNETO_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
else
  cc=gcc cxx=g++ fuzz_build=0
  config=(-DMAGNETO_SANITIZE=ON)
fi
abuild="$base/asan"

# --- The instrumented compiler (every job needs its magnetoc) ---------------------------------------
build_compiler() {
  local t0 targets=(magnetoc magneto-opt magneto_unit_tests)
  t0=$(date +%s)
  [ "$fuzz_build" = 1 ] && targets+=(fuzz_onnx_import fuzz_ir_parser)
  step "build (${cxx}, ASan+UBSan$([ "$fuzz_build" = 1 ] && echo ', libFuzzer instrumentation')): ${targets[*]}"
  # The compiler's passes, code generators and driver at -O0 (40% less compile time than -O1 under
  # the sanitizers); its kernels and what the fuzz targets run (IR, parser, folding, importer) keep
  # -O1 (CMakeLists.txt). No NDEBUG, so the IR verifier runs after every pass.
  cmake -S . -B "$abuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O0 -g1" \
    "${config[@]}" >"$base/configure.log" 2>&1 &&
    cmake --build "$abuild" -j "$jobs" --target "${targets[@]}" >"$base/build.log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    tail -30 "$base/build.log" "$base/configure.log"
    result build FAIL "the sanitizer build failed (logs: $base/build.log)"
    return 1
  fi
  result build PASS "$cxx ASan+UBSan build of ${targets[*]} in $(secs "$t0") s"
}

# --- (a) unit, golden IR and bad-model tests under ASan+UBSan --------------------------------------
run_asan() {
  local t0 log="$base/ctest.log"
  t0=$(date +%s)
  step "asan: unit, golden IR and bad-model tests (ctest, no e2e)"
  # Only what the build above made: gtest's tests (Suite.Name), golden.*, bad_models, fuzz.*.
  # 100 of the random parallel graphs (not 1000): with the compiler at -O0 under ASan, 250 of them
  # took 102 s in the GPU targets' test alone, the critical path of this job; the Release ctest
  # checks all 1000 (numerics, both GPU targets' code generation).
  (cd "$abuild" && MAGNETO_RANDOM_GRAPHS=100 ctest -j "$jobs" --output-on-failure --timeout 600 \
    -R '^(golden\.|bad_models$|fuzz\.|[A-Z][A-Za-z0-9_/]*\.[A-Za-z0-9_/]+$)' -E '^e2e\.') >"$log" 2>&1
  local rc=$?
  grep -E "tests passed|tests failed|Total Test time" "$log"
  local count
  count="$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -1)"
  if [ $rc -ne 0 ]; then
    grep -E "^\s*[0-9]+ - |ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer" "$log" | head -40
    result asan FAIL "${count:-ctest failed} (log: $log)"
  else
    result asan PASS "${count:-?} under ASan+UBSan in $(secs "$t0") s"
  fi
}

# --- The package of (b) and (c): compiled once by the instrumented magnetoc -----------------------
pkg="$base/pkg/mgsan"
# Copies the files of SRC that differ into DST and removes those SRC lacks, so that files whose
# content did not change keep their time stamps and the package builds below stay incremental.
sync_tree() {
  local src="$1" dst="$2" f
  mkdir -p "$dst"
  (cd "$src" && find . -type f) | while read -r f; do
    if ! cmp -s "$src/$f" "$dst/$f"; then mkdir -p "$(dirname "$dst/$f")" && cp "$src/$f" "$dst/$f"; fi
  done
  (cd "$dst" && find . -type f) | while read -r f; do [ -e "$src/$f" ] || rm -f "$dst/$f"; done
}
make_package() {
  step "generate the package for the tsan and leak jobs"
  rm -rf "$base/pkg/new" && mkdir -p "$base/pkg/new" &&
    $py tests/e2e/make_threads_model.py "$base/pkg/new" &&
    "$abuild/bin/magnetoc" compile "$base/pkg/new/model.onnx" -o "$base/pkg/new/mgsan" --name mgsan -q &&
    sync_tree "$base/pkg/new/mgsan" "$pkg" && rm -rf "$base/pkg/new"
}

# build_package KIND FLAGS: the package's own CMake with sanitizer flags, then threads_test.
build_package() {
  local kind="$1" flags="$2" dir="$base/pkg/build-$1"
  # mgsan_OPTIMIZE=OFF: the package at the -O1 below, not its default -O3 (a third of the CPU time).
  cmake -S "$pkg" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -Dmgsan_OPTIMIZE=OFF \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" >"$dir.log" 2>&1 &&
    cmake --build "$dir" -j "$jobs" --target mgsan >>"$dir.log" 2>&1 &&
    $cxx -std=c++17 -O1 -g1 $flags -DPKG=mgsan -include "$pkg/mgsan.h" -I "$pkg" \
      tests/e2e/threads_test.cpp "$dir/libmgsan.a" -lpthread -o "$base/pkg/threads_test_$kind" \
      >>"$dir.log" 2>&1 || { tail -20 "$dir.log"; return 1; }
}

# run_case LOG COMMAND...: runs, appends to LOG, prints the last line.
run_case() {
  local log="$1"
  shift
  "$@" >>"$log" 2>&1
  local rc=$?
  tail -1 "$log"
  return $rc
}

# --- (b) ThreadSanitizer --------------------------------------------------------------------------
run_tsan() {
  local t0 log="$base/pkg/tsan.log"
  t0=$(date +%s)
  step "tsan: concurrent handles of a generated package under ThreadSanitizer"
  if ! build_package tsan "-fsanitize=thread"; then
    result tsan FAIL "cannot build the package with -fsanitize=thread (log: $base/pkg/build-tsan.log)"
    return
  fi
  : >"$log"
  local ok=1
  run_case "$log" "$base/pkg/threads_test_tsan" threads - || ok=0
  run_case "$log" "$base/pkg/threads_test_tsan" threads "$pkg/mgsan_weights.bin" || ok=0
  if [ $ok = 1 ] && ! grep -q "ThreadSanitizer" "$log"; then
    result tsan PASS "2 runs (embedded weights, weights file) x (4 handles x 6 runs on their own \
threads, 4 handed over, 1 handle shared by 3 threads): no race, outputs identical, $(secs "$t0") s"
  else
    grep -A30 "WARNING: ThreadSanitizer" "$log" | head -60
    result tsan FAIL "see $log"
  fi
}

# --- (c) leaks and misuse under ASan+UBSan+LeakSanitizer ---------------------------------------------
run_leak() {
  local t0 log="$base/pkg/leak.log" w="$base/pkg/weights"
  t0=$(date +%s)
  step "leak: create/run/destroy loops and misuse of a generated package under ASan+LSan"
  # Without the UBSan checks the instrumented compiler's runtime also leaves out (CMakeLists.txt,
  # magneto_runtime_cpu: ASan covers them; they doubled the kernels' compile time).
  local ub="-fsanitize=address,undefined -fno-sanitize=pointer-overflow,alignment,null,object-size,vptr"
  if ! build_package asan "$ub -fno-omit-frame-pointer -fno-sanitize-recover=undefined"; then
    result leak FAIL "cannot build the package with -fsanitize=address (log: $base/pkg/build-asan.log)"
    return
  fi
  rm -rf "$w" && mkdir -p "$w" && cp "$pkg/mgsan_weights.bin" "$w/"
  : >"$log"
  local ok=1
  run_case "$log" "$base/pkg/threads_test_asan" leak - || ok=0
  run_case "$log" "$base/pkg/threads_test_asan" leak "$w/mgsan_weights.bin" || ok=0
  run_case "$log" "$base/pkg/threads_test_asan" misuse "$w/mgsan_weights.bin" || ok=0
  run_case "$log" "$base/pkg/threads_test_asan" threads - || ok=0
  if [ $ok = 1 ] && ! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log"; then
    result leak PASS "80 create/run/destroy cycles, the misuse cases and the threads test: no \
leak, no ASan/UBSan report, $(secs "$t0") s"
  else
    grep -E -A25 "ERROR: (Address|Leak)Sanitizer|runtime error:|threads_test: line" "$log" | head -60
    result leak FAIL "see $log"
  fi
}

# --- (d) fuzzing ----------------------------------------------------------------------------------
run_fuzz() {
  local t0
  t0=$(date +%s)
  step "fuzz: each target for ${fuzz_seconds} s from its seed corpus"
  if [ "$fuzz_build" != 1 ]; then
    result fuzz SKIP "clang++ not found: the fuzz targets need libFuzzer"
    return
  fi
  local pids=() names=(fuzz_onnx_import fuzz_ir_parser) seeds=(corpus_onnx corpus_ir)
  mkdir -p "$base/fuzz/artifacts"
  for i in 0 1; do
    local n="${names[$i]}" work="$base/fuzz/${names[$i]}-corpus"
    mkdir -p "$work"
    # New inputs go to a corpus in the build folder, which grows from run to run; the seeds in
    # the repository stay as they are.
    (cd "$base/fuzz" && "$abuild/bin/$n" "$work" "$root/tests/fuzz/${seeds[$i]}" \
      -max_total_time="$fuzz_seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$base/fuzz/artifacts/$n-" >"$base/fuzz/$n.log" 2>&1) &
    pids+=($!)
  done
  local detail="" ok=1
  for i in 0 1; do
    local n="${names[$i]}" log="$base/fuzz/${names[$i]}.log"
    wait "${pids[$i]}"
    local rc=$?
    local execs cov
    execs="$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | grep -Eo '[0-9]+$')"
    cov="$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+')"
    if [ $rc -ne 0 ]; then
      ok=0
      grep -E -B2 -A30 "ERROR: |fuzz_(onnx_import|ir_parser): |deadly signal|Test unit written" "$log" | head -60
      detail+="$n: FAILED after ${execs:-?} runs (inputs in $base/fuzz/artifacts); "
    else
      detail+="$n: ${execs:-?} runs, coverage ${cov:-?}, no crash; "
    fi
  done
  result fuzz "$([ $ok = 1 ] && echo PASS || echo FAIL)" "${detail}${fuzz_seconds} s per target, $(secs "$t0") s wall"
}

if build_compiler; then
  want asan && run_asan
  if want tsan || want leak; then
    if make_package; then
      want tsan && run_tsan
      want leak && run_leak
    else
      result package FAIL "the instrumented magnetoc could not compile tests/e2e/make_threads_model.py's model"
    fi
  fi
  want fuzz && run_fuzz
fi

printf '\n==== sanitize: summary ====\n'
printf '%s\n' "${summary[@]}"
echo "sanitize: $([ $failed = 0 ] && echo PASS || echo "FAIL ($failed job(s))") in $(secs "$start_all") s"
[ $failed = 0 ]
