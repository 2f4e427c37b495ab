#!/usr/bin/env bash
# The CPU target's parallel regions (a joint group's members as the thread pool's work items, see
# docs/PARALLEL.md "Code generation"): the zoo models with joint groups on the host get regions in
# their NAME.cpp, and their outputs stay within tolerance of PyTorch's when run on 2 and 3 threads
# (regions run only with a pool: `check` defaults to one thread, where members run in order).
# Run by tests/e2e/run_zoo.sh once the zoo is exported (ZOO_DIR holds NAME/model.onnx folders).
#   tests/e2e/cpu_regions_test.sh MAGNETOC ZOO_DIR
set -uo pipefail
magnetoc="$1"; zoo="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-regions.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail=0
for m in multi_tower nasnet_a_mobile_small switch_moe_small; do
  d="$zoo/$m"
  [ -f "$d/model.onnx" ] || { echo "FAIL $m: $d/model.onnx missing (export the zoo first)"; fail=1; continue; }
  if ! "$magnetoc" compile "$d/model.onnx" -o "$work/$m" --name m -q > "$work/$m.log" 2>&1; then
    cat "$work/$m.log"; echo "FAIL $m: compile"; fail=1; continue
  fi
  regions="$(grep -o 'constexpr int kNumRegions = [0-9]*' "$work/$m/m.cpp" | grep -o '[0-9]*$')"
  if [ "${regions:-0}" -lt 1 ]; then echo "FAIL $m: no parallel region in m.cpp"; fail=1; fi
  for t in 2 3; do
    if "$magnetoc" check "$d/model.onnx" --data "$d/test_data_set_0" --threads "$t" \
         --work-dir "$work/check-$m-$t" > "$work/$m-$t.log" 2>&1; then
      echo "ok   $m: $regions region(s), --threads $t: $(grep -o 'PASS.*' "$work/$m-$t.log" | tail -1)"
    else
      tail -4 "$work/$m-$t.log"; echo "FAIL $m --threads $t"; fail=1
    fi
  done
done
exit $fail
