#!/usr/bin/env bash
# Runs magnetoc on every model of the bad-model corpus (make_bad_models.py writes them) and
# checks each answer against expected.tsv: the exit code, that the error names the file, that it
# contains the row's substring (the ONNX node and op where one is at fault, what was expected),
# and that magnetoc neither crashed (a signal, exit >= 128) nor took longer than the time limit.
# Every model the generator writes must have a row, and every row a model.
#
# usage: run_bad_models.sh MAGNETOC [SOURCE_DIR]     (exit 77: skipped, no python3 with onnx)
# env:   BAD_MODELS_TIMEOUT (seconds per case, default 20), BAD_MODELS_KEEP=1 keeps the temp dir
set -uo pipefail
magnetoc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
srcdir="${2:-$(cd "$here/../.." && pwd)}"
limit="${BAD_MODELS_TIMEOUT:-20}"
py=/usr/bin/python3
table="$srcdir/tests/bad_models/expected.tsv"

source "$srcdir/tests/lib/missing_tool.sh"
if ! $py -c 'import onnx, numpy' 2>/dev/null; then
  missing_tool "$py with onnx and numpy is needed: the bad-model tests did not run"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-bad-models.XXXXXX")"
if [ "${BAD_MODELS_KEEP:-0}" = 1 ]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
$py "$srcdir/tests/bad_models/make_bad_models.py" "$work" || { echo "FAIL: the generator failed"; exit 1; }

pass=0
fails=0
seen=" "
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
while IFS=$'\t' read -r file cmd want substring args; do
  case "$file" in ''|'#'*) continue ;; esac
  seen+="$file "
  model="$work/models/$file"
  if [ ! -e "$model" ]; then
    fail "$file: in expected.tsv but the generator did not write it"
    continue
  fi
  case "$cmd" in
    compile) argv=(compile "$model" -o "$work/out/$file" -q) ;;
    check) argv=(check "$model" --data "$work/data" --work-dir "$work/out/$file" -q) ;;
    *) fail "$file: unknown command '$cmd' in expected.tsv"; continue ;;
  esac
  # shellcheck disable=SC2206  # the args column is split on spaces on purpose
  [ -n "${args:-}" ] && argv+=($args)
  start=$(date +%s%N)
  (cd "$work" && timeout -k 5 "$limit" "$magnetoc" "${argv[@]}") >"$work/stdout" 2>"$work/stderr"
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  msg="$(cat "$work/stderr")"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    fail "$file: timed out after ${limit}s"
  elif [ "$rc" -ge 128 ]; then
    fail "$file: crashed (exit $rc, signal $((rc - 128)))"
  elif [ "$rc" != "$want" ]; then
    fail "$file: exit $rc, expected $want"
  elif [[ "$msg" != *"$file"* ]]; then
    fail "$file: the message does not name the file"
  elif [[ "$msg" != *"$substring"* ]]; then
    fail "$file: the message lacks '$substring'"
  else
    pass=$((pass + 1))
    echo "ok   $file (exit $rc, ${ms} ms): $(head -c 200 "$work/stderr" | head -1)"
    continue
  fi
  sed 's/^/     | /' "$work/stderr" | head -12
done <"$table"

while read -r file; do
  [[ "$seen" == *" $file "* ]] || fail "$file: written by the generator but missing from expected.tsv"
done <"$work/index.txt"

total=$((pass + fails))
echo "bad models: $pass passed, $fails failed ($total cases)"
[ "$fails" -eq 0 ]
