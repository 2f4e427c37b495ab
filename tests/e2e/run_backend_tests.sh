#!/usr/bin/env bash
# Runs ONNX's backend node tests (Debian libonnx-testdata) through `magnetoc check` on the CPU
# target and compares the outcome with tests/e2e/backend_known_failures.txt.
#
#   tests/e2e/run_backend_tests.sh [--magnetoc PATH] [--jobs N] [--filter REGEX] [--out results.tsv]
#                                  [--timeout SECONDS] [--data-root DIR] [--known FILE]
#                                  [--logs DIR] [--keep-work]
#
# Every folder of DATA_ROOT (default /usr/share/libonnx-testdata/data/node) is one test, except
# training tests (names containing "_train": BatchNormalization/Dropout in training mode) and
# tests whose model uses a non-default operator domain (ai.onnx.preview.training): those are
# recorded as `skip`. Each test runs
#   magnetoc check DIR/model.onnx --data DIR/test_data_set_0 [--data DIR/test_data_set_1 ...]
#                  --work-dir TMP
# under a timeout (default 60 s), N at a time (default 2). The runtime library is built once
# into MAGNETO_CACHE_DIR (default build/cache), warmed by the first test before the others start.
#
# results.tsv: one line per test, `test<TAB>pass|fail|known|skip|folded<TAB>first error line or
# reason`. folded: check exited 5, every output matched but the model folded to a constant once the
# inputs deciding its shapes were bound (a test of constant folding only): neither passed nor failed.
# A zero exit with fewer output lines than the test has outputs is a failure, not a pass.
# Logs of failing tests are kept in LOGS (default: beside results.tsv, NAME.logs/).
# Prints one line per unexpected result (FAIL: an unexpected failure; note: a known failure that
# now passes, or a stale entry), then `K known failures`, `F folded to a constant ...`, then
# exactly `N passed, M failed`
# (N: tests that pass, M: unexpected failures; known failures, folded tests and skips count in
# neither).
# Exit status: 0 when there is no unexpected failure, 1 when there is, 2 on a usage error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# ------------------------------------------------------------------ one test (internal mode)
# Called by xargs as: run_backend_tests.sh --run-one TEST; settings come from the environment.
if [ "${1:-}" = "--run-one" ]; then
  t="$2"
  dir="$BT_DATA_ROOT/$t"
  res="$BT_TMP/results/$t.tsv"
  log="$BT_TMP/logs/$t.log"
  work="$BT_TMP/work/$t"
  data=()
  for d in "$dir"/test_data_set_*; do
    [ -d "$d" ] && data+=(--data "$d")
  done
  mkdir -p "$work"
  # In a subshell with stderr closed off, so that bash's own "Segmentation fault" job report
  # does not clutter the output (the crash is recorded in results.tsv).
  rc="$( (timeout -k 5 "$BT_TIMEOUT" "$BT_MAGNETOC" check "$dir/model.onnx" "${data[@]}" \
    --work-dir "$work" >"$log" 2>&1 </dev/null; echo $?) 2>/dev/null )"
  [[ "$rc" =~ ^[0-9]+$ ]] || rc=1
  # `check` prints one line per output: a zero exit with fewer lines than the test has outputs
  # (a stub, a crash swallowed somewhere) is not a pass.
  n_out=$(find "$dir/test_data_set_0" -maxdepth 1 -name 'output_*.pb' 2>/dev/null | wc -l)
  n_lines=$(grep -c -vE '^[[:space:]]*$' "$log" || true)
  if [ "$rc" -eq 0 ] && [ "$n_lines" -lt "$n_out" ]; then
    printf '%s\tfail\tcheck exited 0 but printed %s lines for %s outputs\n' "$t" "$n_lines" "$n_out" >"$res"
  elif [ "$rc" -eq 0 ]; then
    printf '%s\tpass\t\n' "$t" >"$res"
  elif [ "$rc" -eq 5 ]; then
    # Every output matched, but check bound the inputs that decide shapes and the model folded to
    # a constant: the test exercised only constant folding. Neither a pass nor a failure.
    printf '%s\tfolded\t%s\n' "$t" "$(grep -m1 '^check: FOLDED' "$log" | cut -c1-300)" >"$res"
  else
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      msg="timeout after ${BT_TIMEOUT}s"
    else
      # The first line that reads like an error, else the first non-empty line.
      msg="$(grep -m1 -iE 'error|fail|mismatch|unsupported|not supported|not implemented|cannot|invalid|abort|exception' "$log" || true)"
      [ -n "$msg" ] || msg="$(grep -m1 -vE '^[[:space:]]*$' "$log" || true)"
      [ -n "$msg" ] || msg="exit code $rc, no output"
      if [ "$rc" -gt 128 ]; then msg="killed by signal $((rc - 128)): $msg"; fi
    fi
    msg="${msg//$dir\//}"            # paths inside the test folder: keep them short
    msg="${msg#magnetoc: }"
    msg="$(printf '%s' "$msg" | tr '\t\r' '  ' | cut -c1-300)"
    printf '%s\tfail\t%s\n' "$t" "$msg" >"$res"
  fi
  [ -n "${BT_KEEP_WORK:-}" ] || rm -rf "$work"
  exit 0
fi

# ------------------------------------------------------------------ arguments
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
  exit 2
}
magnetoc="${MAGNETOC:-$root/build/bin/magnetoc}"
jobs=2
filter=""
out="$root/build/backend_results.tsv"
timeout_s=60
data_root="/usr/share/libonnx-testdata/data/node"
known_file="$here/backend_known_failures.txt"
logs=""
keep_work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --jobs|-j) jobs="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --data-root) data_root="$2"; shift 2 ;;
    --known) known_file="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --keep-work) keep_work=1; shift ;;
    -h|--help) usage ;;
    *) echo "run_backend_tests: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run_backend_tests: --jobs must be a positive integer" >&2; exit 2; }
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || { echo "run_backend_tests: --timeout must be a positive integer" >&2; exit 2; }
case "$magnetoc" in /*) ;; */*) magnetoc="$(pwd)/$magnetoc" ;; esac
if [ ! -x "$magnetoc" ] && command -v "$magnetoc" >/dev/null 2>&1; then
  magnetoc="$(command -v "$magnetoc")"
fi
if [ ! -x "$magnetoc" ]; then
  echo "run_backend_tests: magnetoc not found or not executable: $magnetoc (build it first:" \
       "cmake -S . -B build -G Ninja && cmake --build build)" >&2
  exit 2
fi
if [ ! -d "$data_root" ]; then
  echo "run_backend_tests: no test data at $data_root (apt-get install libonnx-testdata)" >&2
  exit 2
fi
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
[ -n "$logs" ] || logs="${out%.tsv}.logs"
if [ -d "$logs" ]; then find "$logs" -maxdepth 1 -name '*.log' -type f -delete; fi
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
mkdir -p "$MAGNETO_CACHE_DIR"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/magneto-backend.XXXXXX")"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'echo "run_backend_tests: interrupted" >&2; exit 130' INT TERM
mkdir -p "$tmp/results" "$tmp/logs" "$tmp/work"

# ------------------------------------------------------------------ which tests
# Non-default operator domains, read from each model with a byte search (no Python needed):
# the only one in the suite is ai.onnx.preview.training (optimizer ops).
all_tests=()
for d in "$data_root"/*/; do
  t="$(basename "$d")"
  [ -f "$d/model.onnx" ] || continue
  if [ -n "$filter" ] && ! [[ "$t" =~ $filter ]]; then continue; fi
  all_tests+=("$t")
done
if [ ${#all_tests[@]} -eq 0 ]; then
  echo "run_backend_tests: no test matches '${filter}' in $data_root" >&2
  exit 2
fi
run_list="$tmp/run_list"
: >"$run_list"
for t in "${all_tests[@]}"; do
  if [[ "$t" == *_train* ]]; then
    printf '%s\tskip\ttraining-mode test\n' "$t" >"$tmp/results/$t.tsv"
  elif grep -q -a 'ai\.onnx\.preview\.training' "$data_root/$t/model.onnx" 2>/dev/null; then
    printf '%s\tskip\tnon-default operator domain (ai.onnx.preview.training)\n' "$t" >"$tmp/results/$t.tsv"
  else
    echo "$t" >>"$run_list"
  fi
done
n_run=$(wc -l <"$run_list")
echo "run_backend_tests: ${#all_tests[@]} tests ($n_run to run, $(( ${#all_tests[@]} - n_run )) skipped)," \
     "$jobs jobs, timeout ${timeout_s}s, magnetoc=$magnetoc, MAGNETO_CACHE_DIR=$MAGNETO_CACHE_DIR"

# ------------------------------------------------------------------ run
export BT_DATA_ROOT="$data_root" BT_TMP="$tmp" BT_TIMEOUT="$timeout_s" BT_MAGNETOC="$magnetoc"
export BT_KEEP_WORK="$keep_work"
self="$here/$(basename "${BASH_SOURCE[0]}")"
start=$(date +%s)
if [ "$n_run" -gt 0 ]; then
  # The first test alone, with a long timeout: it builds the runtime library into the cache for
  # all the others (minutes on two cores), which the per-test timeout must not count.
  first="$(head -n1 "$run_list")"
  BT_TIMEOUT=1800 bash "$self" --run-one "$first"
  tail -n +2 "$run_list" | xargs -r -P "$jobs" -n 1 bash "$self" --run-one
fi
elapsed=$(( $(date +%s) - start ))

# ------------------------------------------------------------------ compare with known failures
declare -A known=()
if [ -f "$known_file" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    name="${line%%#*}"
    name="$(printf '%s' "$name" | tr -d '[:space:]')"
    [ -n "$name" ] && known["$name"]=1
  done <"$known_file"
fi

: >"$out.tmp"
n_pass=0; n_fail=0; n_known=0; n_skip=0; n_missing=0; n_folded=0
unexpected=(); notes=(); known_list=()
for t in "${all_tests[@]}"; do
  r="$tmp/results/$t.tsv"
  if [ ! -f "$r" ]; then
    # The worker died without writing a result (should not happen): count it as a failure.
    printf '%s\tfail\tno result recorded (runner crashed)\n' "$t" >"$r"
    n_missing=$((n_missing + 1))
  fi
  IFS=$'\t' read -r name status msg <"$r" || true
  case "$status" in
    pass)
      n_pass=$((n_pass + 1))
      if [ -n "${known[$t]:-}" ]; then
        notes+=("note: $t passes but is listed in $(basename "$known_file"): remove it")
      fi ;;
    skip)
      n_skip=$((n_skip + 1)) ;;
    folded)
      n_folded=$((n_folded + 1))
      if [ -n "${known[$t]:-}" ]; then
        notes+=("note: $t no longer fails (it folds to a constant) but is listed in $(basename "$known_file"): remove it")
      fi ;;
    *)
      if [ -n "${known[$t]:-}" ]; then
        status=known; n_known=$((n_known + 1)); known_list+=("$t")
      else
        status=fail; n_fail=$((n_fail + 1)); unexpected+=("FAIL $t: $msg")
      fi
      [ -f "$tmp/logs/$t.log" ] && { mkdir -p "$logs"; cp "$tmp/logs/$t.log" "$logs/$t.log"; } ;;
  esac
  printf '%s\t%s\t%s\n' "$t" "$status" "${msg:-}" >>"$out.tmp"
done
mv "$out.tmp" "$out"
# Known-failure entries that name no test in the suite (only checked on unfiltered runs).
if [ -z "$filter" ]; then
  for k in "${!known[@]}"; do
    [ -d "$data_root/$k" ] || notes+=("note: $k is listed in $(basename "$known_file") but is not a test")
  done
fi

for l in "${unexpected[@]+"${unexpected[@]}"}"; do echo "$l"; done
for l in "${notes[@]+"${notes[@]}"}"; do echo "$l"; done
echo "results: $out ($n_skip skipped; logs of failures in $logs; ${elapsed}s)"
echo "$n_known known failures"
echo "$n_folded folded to a constant once their shape-deciding inputs were bound (not passes)"
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
