#!/usr/bin/env bash
# Opset 23's transformer ops end to end (issue #40): the cases of tests/e2e/opset23_model.py
# (Attention 3-D and 4-D, grouped-query heads, is_causal, bool and additive masks, past/present
# KV, scale, softcap, the QK output modes; RotaryEmbedding interleaved or not, with and without
# position_ids, partial rotary; RMSNormalization on the last axis and on axis 1; a small decoder
# block of all three; opset 22's and 23's revised storage and NN operators on float32), each
# compiled and run with `magnetoc check` against onnxruntime-node's outputs on the same inputs:
# every case on the cpu target, and two each on the cuda and hip targets through the CPU emulation (--emulate); and four inconsistent Attention nodes (head counts,
# hidden size, missing heads, an unbroadcastable mask) and a bfloat16 Conv (opset 22) that compile
# must refuse naming the node.
#   tests/e2e/opset23_test.sh MAGNETOC [SOURCE_DIR]
# Exit 0 when all pass, 1 on a failure, 77 (SKIPPED, loudly) when node, onnxruntime-node or
# /usr/bin/python3 with onnx and numpy is missing.
set -uo pipefail
magnetoc="$1"
src="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
py=/usr/bin/python3
. "$src/tests/lib/missing_tool.sh"
have_ort "$src" ||
  missing_tool "node or onnxruntime-node is missing: the opset 23 cases did not run"
$py -c "import onnx, numpy" 2> /dev/null ||
  missing_tool "/usr/bin/python3 with onnx and numpy is missing: the opset 23 cases did not run" \
    "apt-get install python3-onnx python3-numpy"

work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-opset23.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$(dirname "$magnetoc")/../cache}"
listing="$($py "$src/tests/e2e/opset23_model.py" "$work")" || { echo "FAIL: the generator failed"; exit 1; }
cases="$(printf '%s\n' "$listing" | grep -v $'\t')"
failed=0 passed=0
for c in $cases; do
  d="$work/$c/test_data_set_0"
  # shellcheck disable=SC2046
  if ! node "$src/tools/ort/run_ort.js" "$work/$c/model.onnx" --inputs $(ls "$d"/input_*.pb | sort -V) \
      --outputs-dir "$d" --quiet > "$work/$c.ort.log" 2>&1; then
    echo "FAIL $c: onnxruntime-node failed on it:"; tail -3 "$work/$c.ort.log"; failed=$((failed + 1))
  fi
done

run() {  # run NAME [target args...]
  local c="$1"; shift
  local tag="${*:-cpu}"; tag="${tag// /_}"
  local log="$work/$c.$tag.log"
  [ -f "$work/$c/test_data_set_0/output_0.pb" ] || return 0
  local n_out; n_out=$(ls "$work/$c/test_data_set_0"/output_*.pb | wc -l)
  if "$magnetoc" check "$work/$c/model.onnx" --data "$work/$c/test_data_set_0" \
       --work-dir "$work/w.$c.$tag" "$@" > "$log" 2>&1 &&
     [ "$(grep -c -E '^output .*: max_abs_err=.* ok$' "$log")" -eq "$n_out" ]; then
    echo "PASS $c ${*:-}"; passed=$((passed + 1))
  else
    echo "FAIL $c ${*:-}:"; tail -5 "$log"; failed=$((failed + 1))
  fi
}
for c in $cases; do run "$c"; done
for c in attn_3d_gqa_causal llama_block; do run "$c" --target cuda --emulate; done
for c in attn_past_present rope_partial; do run "$c" --target hip --emulate; done
# Inconsistent graphs and a type Magneto lacks: compile refuses them (exit 1: bad input, 2: not
# supported) with an error naming the node, never a crash.
while IFS=$'\t' read -r c want msg; do
  "$magnetoc" compile "$work/$c/model.onnx" -o "$work/o.$c" > "$work/$c.log" 2>&1; rc=$?
  if [ "$rc" -eq "$want" ] && grep -qF "$msg" "$work/$c.log"; then
    echo "PASS $c (refused, exit $rc: $msg)"; passed=$((passed + 1))
  else
    echo "FAIL $c: exit $rc, expected $want and \"$msg\":"; tail -3 "$work/$c.log"; failed=$((failed + 1))
  fi
done < <(printf '%s\n' "$listing" | grep $'\t')
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
