#!/usr/bin/env bash
# tools/bench/compare_ort.sh end to end on one small exported zoo model (figures mean nothing
# here; the table's shape, the closing geomean lines, --rounds, --tsv and --profile's op-family
# table are what is checked).
# Run by tests/e2e/run_zoo.sh once the zoo is exported.
#   tests/e2e/compare_ort_test.sh MAGNETOC MODEL_DIR
set -uo pipefail
magnetoc="$1"; model="$2"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
name="$(basename "$model")"
command -v node > /dev/null && (cd "$src/tools/ort" && node -e "require('onnxruntime-node')" > /dev/null 2>&1) ||
  { echo "SKIPPED: node or onnxruntime-node missing (scripts/setup.sh installs them)"; exit 77; }
work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-cmp.XXXXXX")"
trap 'rm -rf "$work"' EXIT
out="$work/out.txt"
bash "$src/tools/bench/compare_ort.sh" --magnetoc "$magnetoc" --runs 2 --rounds 2 --threads 1 \
  --no-parallel-opt --profile --tsv "$work/rows.tsv" "$model" > "$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
grep -Eq "^\| ${name} \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|\$" "$out" || { echo "FAIL: no table row"; exit 1; }
grep -q '^geomean ort/magneto at 1 thread(s): [0-9.]* over 1 model(s)' "$out" || { echo "FAIL: no geomean line"; exit 1; }
grep -q 'rounds=2' "$out" || { echo "FAIL: rounds not reported"; exit 1; }
[ "$(wc -l < "$work/rows.tsv")" -eq 1 ] || { echo "FAIL: --tsv rows"; exit 1; }
grep -q '^| model | threads | op family | magneto ms | ort ms | loss ms |' "$out" || { echo "FAIL: no --profile table"; exit 1; }
grep -Eq "^\| ${name} \| 1 \| [^|]+ \|" "$out" || { echo "FAIL: no --profile row"; exit 1; }
grep -q '(no profile' "$out" && { echo "FAIL: a profiler printed nothing"; exit 1; }
echo "compare_ort: ok"
