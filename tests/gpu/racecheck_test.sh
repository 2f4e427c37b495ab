#!/usr/bin/env bash
# The GPU emulation's race check (runtime/gpu/mg_emu_context.h): builds racecheck_cases.cpp with
# clang++ and ThreadSanitizer the way `magnetoc check --emulate --racecheck` builds a package, and
# runs each case in the forward, reverse and a random thread order. The racy cases (a copy of
# the runtime's blockReduce with its loop barrier removed, a read of a neighbour's shared slot
# before a barrier, two blocks storing to one global element) must be reported, naming the
# kernel, the source line and the emulated threads; the correct ones (the real blockReduce, the
# same stores as atomics, a shuffle reduction) must not, and must compute the right values. Then
# the emulator's own tests (gpu_emu_test) under the race check: only their deliberate race.
# Exit 77 (ctest: skipped, said loudly) when clang++ is missing.
#   tests/gpu/racecheck_test.sh REPO_ROOT [WORK_DIR]
set -uo pipefail
root="${1:?usage: racecheck_test.sh REPO_ROOT [WORK_DIR]}"
work="${2:-$(mktemp -d /tmp/magneto-racecheck.XXXXXX)}"
if ! command -v clang++ >/dev/null; then
  echo "SKIPPED: clang++ not found (the race check needs clang's ThreadSanitizer; scripts/setup.sh installs it)"
  exit 77
fi
mkdir -p "$work"
exe="$work/racecheck_cases"
# As magnetoc builds a package: the emulator's entry points compiled on their own
# (runtime/gpu/mg_emu_core.cpp), the cases against their declarations (MG_EMU_CORE_OBJECT).
# gpu_emu_test below takes the header-only form.
flags=(-std=c++17 -O1 -g -fsanitize=thread -DMG_GPU_EMULATE=1 -DMG_EMU_CORE_OBJECT=1 -Wall -Werror)
if ! { clang++ "${flags[@]}" -c "$root/runtime/gpu/mg_emu_core.cpp" -o "$work/mg_emu_core.o" &&
       clang++ "${flags[@]}" -I"$root/runtime/gpu" "$root/tests/gpu/racecheck_cases.cpp" \
         "$work/mg_emu_core.o" -o "$exe" -lpthread -rdynamic; } >"$work/build.log" 2>&1; then
  echo "FAIL: racecheck_cases did not build:"; cat "$work/build.log"; exit 1
fi
failed=0
# expect CASE race|clean KERNEL_PATTERN
expect() {
  local case=$1 want=$2 kernel=$3 order log rc
  for order in forward reverse random:5; do
    log="$work/$case-${order/:/_}.log"
    MG_EMU_ORDER=$order MG_EMU_THREADS=4 TSAN_OPTIONS="exitcode=66:halt_on_error=0" "$exe" "$case" >"$log" 2>&1
    rc=$?
    if [ "$want" = race ]; then
      if [ $rc -ne 66 ] || ! grep -q "WARNING: ThreadSanitizer: data race" "$log" ||
         ! grep -q "$kernel" "$log" || ! grep -q "'block (" "$log"; then
        echo "FAIL $case ($order): expected a race report naming $kernel and the emulated threads (exit $rc)"
        tail -20 "$log"; failed=1
      else
        echo "PASS $case ($order): race reported ($(grep -m1 -o "racecheck_cases.cpp:[0-9]*" "$log" | head -1))"
      fi
    else
      if [ $rc -ne 0 ] || grep -q "ThreadSanitizer" "$log"; then
        echo "FAIL $case ($order): expected no report and the right result (exit $rc)"
        grep -m1 -A12 "WARNING" "$log" || tail -5 "$log"; failed=1
      else
        echo "PASS $case ($order): no race, right result"
      fi
    fi
  done
}
expect block_reduce clean blockReduceReal
expect block_reduce_broken race blockReduceBroken
expect shared_no_publish race sharedNoPublish
expect global_two_blocks race globalStore
expect global_atomic clean globalAtomic
expect warp_reduce clean warpReduce
# The emulator's own test suite under the race check: every kernel of gpu_emu_test (tiled matmul,
# shuffles, atomics, dynamic shared memory, graphs, ...) must be race-free except the one with a
# deliberately removed barrier (shiftNoBarrier, GpuEmu.ThreadOrderExposesAMissingBarrier).
if ! clang++ -std=c++17 -O1 -gline-tables-only -fsanitize=thread -DMG_GPU_EMULATE=1 \
     -I"$root/runtime/gpu" -I"$root/tests/gpu" "$root/tests/gpu/gpu_emu_test.cpp" -o "$work/gpu_emu_test" \
     -lgtest -lgtest_main -lpthread -rdynamic >"$work/gpu_emu_test.build.log" 2>&1; then
  echo "FAIL: gpu_emu_test did not build with ThreadSanitizer:"; cat "$work/gpu_emu_test.build.log"; failed=1
else
  log="$work/gpu_emu_test.log"
  MG_EMU_THREADS=4 TSAN_OPTIONS="halt_on_error=0" "$work/gpu_emu_test" >"$log" 2>&1; rc=$?
  # clang 14's ThreadSanitizer runtime can fail to map its shadow memory under some random
  # address-space layouts ("FATAL: ThreadSanitizer: unexpected memory mapping"): that is the
  # sanitizer's own failure, not a finding, so run once more with the layout fixed (setarch -R).
  if grep -q "^FATAL: ThreadSanitizer" "$log" && command -v setarch >/dev/null; then
    echo "NOTE: ThreadSanitizer's runtime failed to start ($(grep -m1 '^FATAL: ThreadSanitizer' "$log")); again without address-space randomization"
    MG_EMU_THREADS=4 TSAN_OPTIONS="halt_on_error=0" setarch "$(uname -m)" -R "$work/gpu_emu_test" >"$log" 2>&1; rc=$?
  fi
  racy=$(grep "^SUMMARY: ThreadSanitizer" "$log" | grep -v "in shiftNoBarrier" | wc -l)
  if ! grep -q "PASSED" "$log" || grep -q "FAILED" "$log" || [ "$racy" -ne 0 ] ||
     ! grep -q "^SUMMARY: ThreadSanitizer: data race.*in shiftNoBarrier" "$log"; then
    echo "FAIL gpu_emu_test under the race check (exit status $rc): $racy unexpected report(s)," \
         "shiftNoBarrier's race $(grep -q 'SUMMARY: ThreadSanitizer: data race.*in shiftNoBarrier' "$log" && echo reported || echo NOT reported)"
    grep "^SUMMARY\|FAILED" "$log" | head; echo "the log's last lines ($log):"; tail -n 15 "$log"; failed=1
  else
    echo "PASS gpu_emu_test under the race check: only shiftNoBarrier's race reported"
  fi
fi
[ $failed -eq 0 ] && rm -rf "$work"
exit $failed
