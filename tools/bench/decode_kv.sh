#!/usr/bin/env bash
# One decode step of a GPT-2-style decoder with a KV cache, Magneto (the copying path and the
# bound KV-cache path, docs/ABI.md "KV-cache binding") against onnxruntime-node (CPU EP), at
# several past lengths, in alternating rounds.
#
#   tools/bench/decode_kv.sh [--runs R] [--rounds K] [--threads T] [--past "0 128 512 1024"]
#                            [--magnetoc PATH] [--work DIR] [--export-args "..."]
#
# The model: tools/bench/decode_kv_export.py (models/zoo_models.py's GPT2KV, vocabulary 4096,
# hidden 256, 4 heads of 64, 4 layers, 1040 positions; --export-args passes other sizes), compiled
# once with `--dynamic seq=1..8 --dynamic past=0..1024 --shared` (package `dstep`). Each round
# runs, for every past length P in turn: onnxruntime-node on the model with its normal inputs (one
# token, a past of P positions: node tools/ort/run_ort.js --bench R), then
# tools/bench/decode_kv_step.c copy (past and present buffers: the package's Gather, Concat and
# stack write the whole cache every step) and bind (present_k/v bound to one buffer each, capacity
# P + 1: the step writes only its new position), each the median of R runs after warm-ups; every
# figure below is the median of its K rounds' medians, so a slow minute of a shared machine hits
# every side alike. The copy and bind steps must give the same logits bit for bit (checked: their
# FNV-1a hash). Prints a Markdown table: past | ort ms | copy ms | bind ms | ort/copy | ort/bind |
# copy/bind (a ratio above 1: the second is faster), and the machine's load before and after.
# Exit status 1 when a measurement failed or the two paths' logits differ.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/tools/bench/medians.sh"

runs=50
rounds=3
threads=1
pasts="0 128 512 1024"
magnetoc="${MAGNETOC:-$root/build/bin/magnetoc}"
work=""
export_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --past) pasts="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --export-args) export_args="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "decode_kv: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$magnetoc" ] || { echo "decode_kv: no magnetoc at $magnetoc (build first)" >&2; exit 2; }
(cd "$root/tools/ort" && node -e "require('onnxruntime-node')" >/dev/null 2>&1) ||
  { echo "decode_kv: onnxruntime-node does not load (run scripts/setup.sh)" >&2; exit 2; }
if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-decode-kv.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
longest=0
for p in $pasts; do [ "$p" -gt "$longest" ] && longest=$p; done
list="$(echo $pasts | tr ' ' ',')"

echo "== export (tools/bench/decode_kv_export.py) and compile (--dynamic seq=1..8 --dynamic past=0..$longest)" >&2
# shellcheck disable=SC2086
/usr/bin/python3 "$root/tools/bench/decode_kv_export.py" "$work" --past "$list" $export_args 2>&1 | grep -v Warning >&2
"$magnetoc" compile "$work/model.onnx" --name dstep -o "$work/pkg" --dynamic seq=1..8 \
  --dynamic "past=0..$longest" --shared -q >&2
cc -O2 -std=c99 -Wall -Wextra -I "$work/pkg" "$root/tools/bench/decode_kv_step.c" -L "$work/pkg" -ldstep \
  -Wl,-rpath,"$work/pkg" -o "$work/decode_kv_step"

declare -A ort copy bind
fail=0
for ((r = 1; r <= rounds; r++)); do
  for p in $pasts; do
    o="$(median_of "$work/ort.log" node "$root/tools/ort/run_ort.js" "$work/model.onnx" \
      --inputs "$work/past_$p/input_0.pb" "$work/past_$p/input_1.pb" "$work/past_$p/input_2.pb" \
      --threads "$threads" --bench "$runs" --quiet)"
    c="$(median_of "$work/copy.log" "$work/decode_kv_step" "$p" copy "$runs" "$threads")"
    b="$(median_of "$work/bind.log" "$work/decode_kv_step" "$p" bind "$runs" "$threads")"
    hc="$(grep -o 'logits_fnv=[0-9a-f]*' "$work/copy.log" || true)"
    hb="$(grep -o 'logits_fnv=[0-9a-f]*' "$work/bind.log" || true)"
    if [ -z "$hc" ] || [ "$hc" != "$hb" ]; then
      echo "decode_kv: past $p: the copy and bind steps' logits differ ($hc, $hb)" >&2
      tail -3 "$work/copy.log" "$work/bind.log" >&2
      fail=1
    fi
    ort[$p]+="$o "; copy[$p]+="$c "; bind[$p]+="$b "
    echo "round $r past $p: ort $o ms, copy $c ms, bind $b ms" >&2
  done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "error" || b == "error" || b <= 0) print "n/a"; else printf "%.2f", a / b }'; }
echo "| past | onnxruntime-node ms | Magneto copy ms | Magneto bind ms | ort/copy | ort/bind | copy/bind |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for p in $pasts; do
  # shellcheck disable=SC2086
  o="$(median_of_list ${ort[$p]})"; c="$(median_of_list ${copy[$p]})"; b="$(median_of_list ${bind[$p]})"
  [ "$o" = error ] || [ "$c" = error ] || [ "$b" = error ] && fail=1
  echo "| $p | $o | $c | $b | $(ratio "$o" "$c") | $(ratio "$o" "$b") | $(ratio "$c" "$b") |"
done
echo
echo "one decode step (seq 1), $threads thread(s); runs=$runs per measurement (median), rounds=$rounds" \
  "(median of the rounds' medians, the past lengths alternating within each round); $(nproc) cores;" \
  "load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after;" \
  "onnxruntime-node $(cd "$root/tools/ort" && node -p "require('onnxruntime-node/package.json').version")"
[ "$fail" = 0 ] && echo "copy and bind logits equal bit for bit at every past length"
exit "$fail"
