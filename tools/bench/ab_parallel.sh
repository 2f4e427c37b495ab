#!/usr/bin/env bash
# Measures what the parallel passes buy on the CPU target, model by model, as precisely as a
# noisy shared machine allows: the package with the parallel passes (A) and the one built with
# --no-parallel-opt (B) are timed in alternating pairs (A B, B A, A B, ...), so that a slow minute
# hits both alike, and each pair gives one ratio B/A (above 1: the parallel passes are faster).
#
#   tools/bench/ab_parallel.sh [--pairs P] [--runs R] [--threads T] [--magnetoc PATH]
#                              [--tsv FILE] MODEL ...
#
# MODEL: a model.onnx, or a folder holding one (models/zoo/NAME). Defaults: 15 pairs of
# `magnetoc bench --runs 10` medians at 2 threads. Prints a Markdown table: model | joint/batch/
# wide groups | A ms | B ms (medians over all pairs) | gain (median of the pair ratios) | 90%
# interval of that median (bootstrap over the pairs, 2000 resamples, fixed seed) | verdict:
# "faster" (the interval lies above 1.03), "slower" (below 0.97: the cost model took a group that
# does not pay), "same (no groups)" for models the passes leave alone, else "within noise".
# Closing line: the geometric mean of the gains over the models with groups. Exit status 1 when a
# measurement failed, 0 otherwise (a "slower" verdict is a finding, not an error).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pairs=15
runs=10
threads=2
magnetoc="${MAGNETOC:-$root/build/bin/magnetoc}"
tsv=""
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --tsv) tsv="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "ab_parallel: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || { echo "ab_parallel: give at least one MODEL (see --help)" >&2; exit 2; }
[[ "$pairs" =~ ^[1-9][0-9]*$ && "$runs" =~ ^[1-9][0-9]*$ && "$threads" =~ ^[1-9][0-9]*$ ]] ||
  { echo "ab_parallel: --pairs, --runs and --threads take positive integers" >&2; exit 2; }
case "$magnetoc" in /*) ;; */*) magnetoc="$(pwd)/$magnetoc" ;; esac
[ -x "$magnetoc" ] || { echo "ab_parallel: magnetoc not found: $magnetoc (build it first)" >&2; exit 2; }
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
raw="$work/raw.tsv"
: > "$raw"
failed=0

bench() {  # bench MODEL VARIANT(A|B) -> median ms on stdout, or nothing
  local flags=()
  [ "$2" = B ] && flags=(--no-parallel-opt)
  "$magnetoc" bench "$1" --threads "$threads" --runs "$runs" --work-dir "$work/$2-$(basename "$(dirname "$1")")" \
    "${flags[@]}" 2>"$work/err" | awk -F= '/^median_ms=/ { print $2 }'
}

for m in "${models[@]}"; do
  [ -d "$m" ] && m="$m/model.onnx"
  [ -f "$m" ] || { echo "ab_parallel: no model at $m" >&2; failed=1; continue; }
  name="$(basename "$(dirname "$m")")"
  groups="$("$magnetoc" report "$m" --target cpu -q 2>/dev/null | awk -F': ' '/^parallel groups:/ && !seen { print $2; seen = 1 }')"
  # Build both packages (and warm the caches) before timing anything.
  if [ -z "$(bench "$m" A)" ] || [ -z "$(bench "$m" B)" ]; then
    echo "ab_parallel: $name: magnetoc bench failed: $(tail -2 "$work/err" | tr '\n' ' ')" >&2
    failed=1
    continue
  fi
  for ((p = 0; p < pairs; p++)); do
    if ((p % 2 == 0)); then a="$(bench "$m" A)"; b="$(bench "$m" B)"; else b="$(bench "$m" B)"; a="$(bench "$m" A)"; fi
    if [ -z "$a" ] || [ -z "$b" ]; then echo "ab_parallel: $name: a timing failed" >&2; failed=1; break; fi
    printf '%s\t%s\t%s\t%s\n' "$name" "${groups:-0}" "$a" "$b" >> "$raw"
  done
done
[ -n "$tsv" ] && cp "$raw" "$tsv"

/usr/bin/python3 - "$raw" "$threads" "$pairs" "$runs" <<'EOF'
import math, random, sys
from collections import OrderedDict
rows = OrderedDict()
for line in open(sys.argv[1]):
    name, groups, a, b = line.rstrip("\n").split("\t")
    rows.setdefault((name, groups), []).append((float(a), float(b)))
def median(v):
    v = sorted(v); n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
print(f"threads {sys.argv[2]}, {sys.argv[3]} alternating pairs of `magnetoc bench --runs {sys.argv[4]}` medians; "
      "A = with the parallel passes, B = --no-parallel-opt, gain = B/A")
print()
print("| model | parallel groups | A ms | B ms | gain | 90% interval | verdict |")
print("| --- | --- | --- | --- | --- | --- | --- |")
rng = random.Random(1)
logs = []
for (name, groups), ab in rows.items():
    ratios = [b / a for a, b in ab]
    g = median(ratios)
    boots = sorted(median([rng.choice(ratios) for _ in ratios]) for _ in range(2000))
    lo, hi = boots[int(0.05 * len(boots))], boots[int(0.95 * len(boots)) - 1]
    none = groups.startswith("0")
    if none: verdict = "same (no groups)"
    elif lo > 1.03: verdict = "faster"
    elif hi < 0.97: verdict = "slower"
    else: verdict = "within noise"
    if not none: logs.append(math.log(g))
    print(f"| {name} | {groups} | {median([a for a, _ in ab]):.3f} | {median([b for _, b in ab]):.3f} | "
          f"{g:.3f} | {lo:.3f}-{hi:.3f} | {verdict} |")
print()
if logs:
    print(f"geomean gain over the {len(logs)} models with groups: {math.exp(sum(logs) / len(logs)):.3f}")
else:
    print("geomean gain: no model with groups")
EOF
exit "$failed"
