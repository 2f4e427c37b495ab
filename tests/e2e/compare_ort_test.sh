#!/usr/bin/env bash
# tools/bench/compare_ort.sh end to end on one small zoo model (figures mean nothing here; the
# table's shape, the closing geomean lines, --rounds and --tsv are what is checked).
#   tests/e2e/compare_ort_test.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
command -v node > /dev/null && (cd "$src/tools/ort" && node -e "require('onnxruntime-node')" > /dev/null 2>&1) ||
  { echo "SKIPPED: node or onnxruntime-node missing (scripts/setup.sh installs them)"; exit 77; }
work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-cmp.XXXXXX")"
trap 'rm -rf "$work"' EXIT
out="$work/out.txt"
bash "$src/tools/bench/compare_ort.sh" --magnetoc "$bin/magnetoc" --runs 2 --rounds 2 --threads 1 \
  --no-parallel-opt --tsv "$work/rows.tsv" "$src/models/zoo/multi_tower_small" > "$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -Eq '^\| multi_tower_small \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' "$out" || { echo "FAIL: no table row"; exit 1; }
grep -q '^geomean ort/magneto at 1 thread(s): [0-9.]* over 1 model(s)' "$out" || { echo "FAIL: no geomean line"; exit 1; }
grep -q 'rounds=2' "$out" || { echo "FAIL: rounds not reported"; exit 1; }
[ "$(wc -l < "$work/rows.tsv")" -eq 1 ] || { echo "FAIL: --tsv rows"; exit 1; }
echo "compare_ort: ok"
