#!/usr/bin/env bash
# Runs Magneto's opset 18-21 test set (issue #8) through `magnetoc check`, on the CPU target by
# default, or on the cuda/hip targets (`--target cuda|hip --emulate`: the generated GPU code on the
# CPU emulation of runtime/gpu; without --emulate the package is built with nvcc/hipcc and needs
# that GPU).
#
#   tests/opset/run_opset_tests.sh [--magnetoc PATH] [--out DIR] [--jobs N] [--filter REGEX]
#                                  [--timeout SECONDS] [--results FILE] [--regenerate]
#                                  [--target cpu|cuda|hip] [--emulate]
#
# The set is generated into DIR (default build/opset_tests) by tests/opset/make_opset_tests.py,
# with expected outputs from onnxruntime-node, when DIR is missing or was written by another
# version of the generator (DIR/.stamp holds the checksum of the generator and of run_ort.js).
# Every case runs
#   magnetoc check DIR/NAME/model.onnx --data DIR/NAME/test_data_set_0 --work-dir TMP
#                  [--target T] [--emulate]
# under a timeout (default 120 s), N at a time (default 2). Prints one line per case
# (`PASS NAME` or `FAIL NAME: first error line`), then exactly `N passed, M failed`.
# RESULTS (default DIR/results.tsv for the CPU target, DIR/results-T[-emulate].tsv otherwise, so
# that one target's run never overwrites another's): `NAME<TAB>pass|fail<TAB>reason`, read by
# tools/conformance/gen_conformance.py. Logs of failures are kept in DIR/logs/ (CPU) or
# DIR/logs-T[-emulate]/. The runtime library is cached in MAGNETO_CACHE_DIR (default: DIR's
# parent folder/cache, i.e. build/cache).
#
# Exit status: 0 when every case passes, 1 when one fails, 2 on a usage error, 77 (SKIPPED) when
# node or onnxruntime-node is missing (scripts/setup.sh installs them).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# ------------------------------------------------------------------ one case (internal mode)
if [ "${1:-}" = "--run-one" ]; then
  t="$2"
  dir="$OT_DIR/$t"
  log="$OT_TMP/logs/$t.log"
  work="$OT_TMP/work/$t"
  mkdir -p "$work"
  target_args=()
  [ "$OT_TARGET" = cpu ] || target_args+=(--target "$OT_TARGET")
  [ -z "$OT_EMULATE" ] || target_args+=(--emulate)
  rc="$( (timeout -k 5 "$OT_TIMEOUT" "$OT_MAGNETOC" check "$dir/model.onnx" \
    --data "$dir/test_data_set_0" --work-dir "$work" "${target_args[@]}" >"$log" 2>&1 </dev/null; echo $?) 2>/dev/null )"
  [[ "$rc" =~ ^[0-9]+$ ]] || rc=1
  # `check` prints one line per output: a zero exit with fewer lines is not a pass.
  n_out=$(find "$dir/test_data_set_0" -maxdepth 1 -name 'output_*.pb' | wc -l)
  n_ok=$(grep -c -E '^output .*: max_abs_err=.* ok$' "$log" || true)
  if [ "$rc" -eq 0 ] && [ "$n_ok" -lt "$n_out" ]; then
    msg="check exited 0 but reported $n_ok of $n_out outputs ok"
    rc=1
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    msg="timeout after ${OT_TIMEOUT}s"
  else
    msg="$(grep -m1 -E '\[FAIL\]|FAIL \(|error|unsupported|not supported|cannot|invalid' "$log" || true)"
    [ -n "$msg" ] || msg="$(grep -m1 -vE '^[[:space:]]*$' "$log" || true)"
    [ -n "$msg" ] || msg="exit code $rc, no output"
  fi
  msg="${msg//$dir\//}"
  msg="$(printf '%s' "$msg" | tr '\t\r' '  ' | cut -c1-300)"
  if [ "$rc" -eq 0 ]; then
    printf '%s\tpass\t\n' "$t" >"$OT_TMP/results/$t.tsv"
  else
    printf '%s\tfail\t%s\n' "$t" "$msg" >"$OT_TMP/results/$t.tsv"
  fi
  rm -rf "$work"
  exit 0
fi

# ------------------------------------------------------------------ arguments
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
  exit 2
}
magnetoc="${MAGNETOC:-$root/build/bin/magnetoc}"
out="$root/build/opset_tests"
jobs=2
filter=""
timeout_s=120
results=""
regenerate=""
target=cpu
emulate=""
while [ $# -gt 0 ]; do
  case "$1" in
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs|-j) jobs="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --results) results="$2"; shift 2 ;;
    --regenerate) regenerate=1; shift ;;
    --target) target="$2"; shift 2 ;;
    --emulate) emulate=1; shift ;;
    -h|--help) usage ;;
    *) echo "run_opset_tests: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run_opset_tests: --jobs must be a positive integer" >&2; exit 2; }
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || { echo "run_opset_tests: --timeout must be a positive integer" >&2; exit 2; }
case "$target" in cpu|cuda|hip) ;; *) echo "run_opset_tests: --target must be cpu, cuda or hip" >&2; exit 2 ;; esac
if [ -n "$emulate" ] && [ "$target" = cpu ]; then
  echo "run_opset_tests: --emulate needs --target cuda or hip" >&2; exit 2
fi
# Results and logs per target, so that a GPU run never overwrites the CPU results.
suffix=""
[ "$target" = cpu ] || suffix="-$target${emulate:+-emulate}"
case "$magnetoc" in /*) ;; */*) magnetoc="$(pwd)/$magnetoc" ;; esac
if [ ! -x "$magnetoc" ]; then
  echo "run_opset_tests: magnetoc not found or not executable: $magnetoc" >&2
  exit 2
fi

# onnxruntime-node computes the expected outputs: without it there is nothing to compare with.
if ! command -v node >/dev/null 2>&1 || \
   ! (cd "$root/tools/ort" && node -e "require('onnxruntime-node')" >/dev/null 2>&1); then
  source "$root/tests/lib/missing_tool.sh"
  missing_tool "run_opset_tests needs node and onnxruntime-node (tools/ort/node_modules) for the expected outputs"
fi
py=/usr/bin/python3
if ! "$py" -c 'import onnx, numpy' >/dev/null 2>&1; then
  echo "run_opset_tests: $py cannot import onnx and numpy (apt-get install python3-onnx python3-numpy)" >&2
  exit 2
fi

# ------------------------------------------------------------------ the test set
gen="$here/make_opset_tests.py"
stamp="$(cat "$gen" "$root/tools/ort/run_ort.js" | sha256sum | cut -d' ' -f1)"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
if [ -n "$regenerate" ] || [ ! -f "$out/.stamp" ] || [ "$(cat "$out/.stamp")" != "$stamp" ]; then
  echo "run_opset_tests: generating the test set into $out (expected outputs from onnxruntime-node)"
  rm -rf "$out"
  mkdir -p "$out"
  "$py" "$gen" "$out" --jobs "$jobs" >"$out/generate.log" 2>&1 || {
    cat "$out/generate.log" >&2
    echo "run_opset_tests: generating the test set failed" >&2
    exit 1
  }
  echo "$stamp" >"$out/.stamp"
fi
cases=()
while IFS=$'\t' read -r name _; do
  if [ -n "$filter" ] && ! [[ "$name" =~ $filter ]]; then continue; fi
  cases+=("$name")
done < <("$py" "$gen" --list)
if [ ${#cases[@]} -eq 0 ]; then
  echo "run_opset_tests: no case matches '$filter'" >&2
  exit 2
fi

# ------------------------------------------------------------------ run
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$(dirname "$out")/cache}"
mkdir -p "$MAGNETO_CACHE_DIR"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/magneto-opset.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'echo "run_opset_tests: interrupted" >&2; exit 130' INT TERM
mkdir -p "$tmp/results" "$tmp/logs" "$tmp/work"
export OT_DIR="$out" OT_TMP="$tmp" OT_TIMEOUT="$timeout_s" OT_MAGNETOC="$magnetoc"
export OT_TARGET="$target" OT_EMULATE="$emulate"
self="$here/$(basename "${BASH_SOURCE[0]}")"
echo "run_opset_tests: ${#cases[@]} cases, $jobs jobs, target $target${emulate:+ (emulated)}, magnetoc=$magnetoc, MAGNETO_CACHE_DIR=$MAGNETO_CACHE_DIR"
# The first case alone with a long timeout: it may build the runtime library into the cache.
OT_TIMEOUT=1800 bash "$self" --run-one "${cases[0]}"
printf '%s\n' "${cases[@]:1}" | xargs -r -P "$jobs" -n 1 bash "$self" --run-one

[ -n "$results" ] || results="$out/results$suffix.tsv"
logs="$out/logs$suffix"
rm -rf "$logs"
: >"$results.tmp"
n_pass=0; n_fail=0
for t in "${cases[@]}"; do
  r="$tmp/results/$t.tsv"
  [ -f "$r" ] || printf '%s\tfail\tno result recorded (runner crashed)\n' "$t" >"$r"
  IFS=$'\t' read -r name status msg <"$r" || true
  if [ "$status" = pass ]; then
    n_pass=$((n_pass + 1))
    echo "PASS $t"
  else
    n_fail=$((n_fail + 1))
    echo "FAIL $t: $msg"
    mkdir -p "$logs"
    [ -f "$tmp/logs/$t.log" ] && cp "$tmp/logs/$t.log" "$logs/$t.log"
  fi
  cat "$r" >>"$results.tmp"
done
mv "$results.tmp" "$results"
[ "$n_fail" -eq 0 ] || echo "logs of failures: $logs"
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
