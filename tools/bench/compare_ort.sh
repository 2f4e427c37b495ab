#!/usr/bin/env bash
# Times Magneto's CPU target against onnxruntime-node (CPU EP) on the same models, same machine,
# same run, at 1 and 2 threads.
#
#   tools/bench/compare_ort.sh [--runs R] [--rounds K] [--threads "1 2"] [--magnetoc PATH]
#                              [--no-parallel-opt] [--profile] [--light] [--svg FILE] [--tsv FILE]
#                              [--markdown] [--neighbour] [MODEL ...]
#
# MODEL: a zoo folder (models/zoo/NAME, holding model.onnx and test_data_set_0/input_*.pb) or a
# model.onnx inside one. Default: models/zoo/{inception_v3,squeezenet1_1,resnext50_32x4d} where
# exported (models/export.py). For each model and thread count it runs
#   magnetoc bench MODEL --threads T --runs R --work-dir TMP        (median_ms=X, last line)
#   node tools/ort/run_ort.js MODEL --inputs ... --threads T --bench R
# one after the other (--rounds K: K times in turn, each figure the median of its K medians, so
# that a slow minute of a shared machine hits every side alike), and prints: model | threads |
# magneto ms | ort ms | ratio (ort/magneto;
# above 1 means Magneto is faster). --no-parallel-opt adds a column: Magneto with the parallel
# co-optimization off. Closing lines: the geometric mean of the ratios per thread count (and of
# the parallel passes' gain, --no-parallel-opt ms / magneto ms). --svg FILE draws the latencies as
# a bar chart (tools/bench/bar_chart.py), --tsv FILE keeps the raw rows. Exit status 1 when any
# measurement failed.
# --profile: after the timings, each model is run once more under both profilers (`magnetoc bench
# --profile`, run_ort.js --profile) at each thread count, and a second table lists per model the
# five op families where Magneto loses most time against onnxruntime (tools/bench/op_kinds.py).
# --neighbour: a shared machine. While each model is measured (both sides, every round), a second
# instance of the same Magneto package runs beside it at 2 threads without pause (its own process,
# started before the model's first round and stopped after its last). A closing table lists per
# model Magneto's 1-thread and 2-thread medians and their ratio: a pool that copes with the
# neighbour keeps 2 threads at least as fast as 1 (ratio >= 1).
# --light: also the nine light model-zoo graphs (models/light, prepared with seeded weights and
# inputs by models/light.py into models/zoo/light_*; MAGNETO_LIGHT_DIR overrides the source folder).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

runs=20
rounds=1
threads="1 2"
magnetoc="${MAGNETOC:-$root/build/bin/magnetoc}"
ablation=""
profile=""
light=""
neighbour=""
svg=""
tsv=""
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --no-parallel-opt) ablation=1; shift ;;
    --profile) profile=1; shift ;;
    --light) light=1; shift ;;
    --neighbour|--neighbor) neighbour=1; shift ;;
    --svg) svg="$2"; shift 2 ;;
    --tsv) tsv="$2"; shift 2 ;;
    --markdown) shift ;;  # the table is always Markdown; kept for compatibility
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "compare_ort: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
if [ -n "$light" ]; then
  light_src="${MAGNETO_LIGHT_DIR:-$root/models/light}"
  [ -d "$light_src" ] || { echo "compare_ort: --light: no light models in $light_src (set MAGNETO_LIGHT_DIR)" >&2; exit 2; }
  /usr/bin/python3 "$root/models/light.py" --src "$light_src" --out "$root/models/zoo" >&2 ||
    { echo "compare_ort: models/light.py failed" >&2; exit 2; }
  for d in "$root"/models/zoo/light_*/; do models+=("${d%/}"); done
fi
if [ ${#models[@]} -eq 0 ]; then
  for m in inception_v3 squeezenet1_1 resnext50_32x4d; do
    [ -f "$root/models/zoo/$m/model.onnx" ] && models+=("$root/models/zoo/$m")
  done
  if [ ${#models[@]} -eq 0 ]; then
    echo "compare_ort: no model given and none exported (run /usr/bin/python3 models/export.py --out models/zoo)" >&2
    exit 2
  fi
fi
case "$magnetoc" in /*) ;; */*) magnetoc="$(pwd)/$magnetoc" ;; esac
[ -x "$magnetoc" ] || { echo "compare_ort: magnetoc not found: $magnetoc (build it first)" >&2; exit 2; }
(cd "$root/tools/ort" && node -e "require('onnxruntime-node')" >/dev/null 2>&1) ||
  { echo "compare_ort: onnxruntime-node does not load (run scripts/setup.sh)" >&2; exit 2; }
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/magneto-bench.XXXXXX")"
neighbour_pid=""
# The neighbour runs in its own process group (setsid), so that stopping it stops its runner too.
stop_neighbour() {
  if [ -n "$neighbour_pid" ]; then
    kill -TERM -- "-$neighbour_pid" 2>/dev/null || true
    wait "$neighbour_pid" 2>/dev/null || true
    neighbour_pid=""
  fi
}
trap 'stop_neighbour; rm -rf "$tmp"' EXIT

source "$root/tools/bench/medians.sh"

status=0
header="| model | threads | magneto ms | ort ms | ratio (ort/magneto) |"
sep="|---|---|---|---|---|"
if [ -n "$ablation" ]; then
  header="| model | threads | magneto ms | magneto --no-parallel-opt ms | ort ms | ratio (ort/magneto) |"
  sep="|---|---|---|---|---|---|"
fi
echo "$header"
echo "$sep"
for m in "${models[@]}"; do
  if [ -f "$m" ]; then onnx="$m"; dir="$(dirname "$m")"; else dir="${m%/}"; onnx="$dir/model.onnx"; fi
  name="$(basename "$dir")"
  inputs=()
  for f in "$dir"/test_data_set_0/input_*.pb; do [ -f "$f" ] && inputs+=("$f"); done
  if [ ! -f "$onnx" ] || [ ${#inputs[@]} -eq 0 ]; then
    echo "| $name | - | missing model.onnx or test_data_set_0/input_*.pb | | |"
    status=1; continue
  fi
  if [ -n "$neighbour" ]; then
    # Build the package once, then start its second instance: 2 threads, runs without end.
    "$magnetoc" bench "$onnx" --threads 1 --runs 1 --work-dir "$tmp/work-$name" >"$tmp/nb-build.log" 2>&1 ||
      { echo "compare_ort: --neighbour: magnetoc bench failed on $name: $(tail -n3 "$tmp/nb-build.log" | tr '\n' ' ')" >&2; status=1; continue; }
    # (bench runs at most 1e6 runs per call: the loop restarts it until the group is stopped)
    setsid bash -c 'while "$@"; do :; done' neighbour \
      "$magnetoc" bench "$onnx" --threads 2 --runs 1000000 --warmup 0 --work-dir "$tmp/work-$name" \
      >"$tmp/nb.log" 2>&1 &
    neighbour_pid=$!
    sleep 1
    kill -0 "$neighbour_pid" 2>/dev/null ||
      { echo "compare_ort: --neighbour: the neighbour of $name stopped: $(tail -n3 "$tmp/nb.log" | tr '\n' ' ')" >&2; status=1; neighbour_pid=""; continue; }
  fi
  for t in $threads; do
    mgs=(); mgns=(); orts=()
    for ((round = 0; round < rounds; round++)); do
      mgs+=("$(median_of "$tmp/mg.log" "$magnetoc" bench "$onnx" --threads "$t" --runs "$runs" --work-dir "$tmp/work-$name")")
      if [ -n "$ablation" ]; then
        mgns+=("$(median_of "$tmp/mgn.log" "$magnetoc" bench "$onnx" --threads "$t" --runs "$runs" --work-dir "$tmp/work-$name-np" --no-parallel-opt)")
      fi
      orts+=("$(median_of "$tmp/ort.log" node "$root/tools/ort/run_ort.js" "$onnx" --inputs "${inputs[@]}" --threads "$t" --bench "$runs" --quiet)")
    done
    mg="$(median_of_list "${mgs[@]}")"
    [ "$mg" = error ] && { status=1; echo "compare_ort: magnetoc bench failed on $name (threads $t): $(tail -n3 "$tmp/mg.log" | tr '\n' ' ')" >&2; }
    if [ -n "$ablation" ]; then
      mgn="$(median_of_list "${mgns[@]}")"
      [ "$mgn" = error ] && status=1
    fi
    ort="$(median_of_list "${orts[@]}")"
    [ "$ort" = error ] && { status=1; echo "compare_ort: onnxruntime failed on $name (threads $t): $(tail -n3 "$tmp/ort.log" | tr '\n' ' ')" >&2; }
    ratio="-"
    if [ "$mg" != error ] && [ "$ort" != error ]; then
      ratio="$(awk -v a="$ort" -v b="$mg" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$t" "$mg" "${mgn:-}" "$ort" >> "$tmp/rows.tsv"
    if [ -n "$profile" ]; then
      "$magnetoc" bench "$onnx" --threads "$t" --runs "$runs" --work-dir "$tmp/work-$name" --profile >"$tmp/mgp.log" 2>&1 || true
      node "$root/tools/ort/run_ort.js" "$onnx" --inputs "${inputs[@]}" --threads "$t" --profile "$runs" --quiet >"$tmp/ortp.log" 2>&1 || true
      /usr/bin/python3 "$root/tools/bench/op_kinds.py" "$tmp/mgp.log" "$tmp/ortp.log" --model "$name" --threads "$t" >> "$tmp/kinds.md" || true
    fi
    if [ -n "$ablation" ]; then
      echo "| $name | $t | $mg | $mgn | $ort | $ratio |"
    else
      echo "| $name | $t | $mg | $ort | $ratio |"
    fi
  done
  stop_neighbour
done
echo
if [ -n "$neighbour" ]; then
  echo "Beside a second instance of the same package running at 2 threads (--neighbour):"
  echo
  echo "| model | magneto 1 thread ms | magneto 2 threads ms | 1-thread / 2-thread (>= 1: 2 threads not slower) |"
  echo "|---|---|---|---|"
  awk -F'\t' '$3 != "error" { ms[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
    END { worst = ""; for (i = 1; i <= k; i++) { m = order[i]; a = ms[m, 1]; b = ms[m, 2];
            if (a != "" && b != "" && b > 0) { r = a / b; printf "| %s | %s | %s | %.2f |\n", m, a, b, r;
              if (worst == "" || r < worst) worst = r } }
          if (worst != "") printf "\nworst 1-thread / 2-thread beside the neighbour: %.2f\n", worst }' "$tmp/rows.tsv"
  echo
fi
# Geometric means over the models where both sides ran, per thread count.
awk -F'\t' '$3 != "error" && $5 != "error" && $3 > 0 { n[$2]++; s[$2] += log($5 / $3) }
  $4 != "" && $4 != "error" && $3 != "error" && $3 > 0 { m[$2]++; g[$2] += log($4 / $3) }
  END { for (t in n) printf "geomean ort/magneto at %s thread(s): %.2f over %d model(s)\n", t, exp(s[t] / n[t]), n[t];
        for (t in m) printf "geomean parallel-pass gain (--no-parallel-opt / magneto) at %s thread(s): %.2f\n", t, exp(g[t] / m[t]) }' \
  "$tmp/rows.tsv" 2>/dev/null | sort
if [ -n "$profile" ] && [ -f "$tmp/kinds.md" ]; then
  echo
  echo "Where Magneto loses most against onnxruntime (top 5 op families per model; ms per run from each side's profiler):"
  echo
  echo "| model | threads | op family | magneto ms | ort ms | loss ms | kinds (magneto / ort) |"
  echo "|---|---|---|---|---|---|---|"
  cat "$tmp/kinds.md"
  echo
fi
[ -n "$tsv" ] && cp "$tmp/rows.tsv" "$tsv"
if [ -n "$svg" ]; then
  /usr/bin/python3 "$root/tools/bench/bar_chart.py" "$tmp/rows.tsv" -o "$svg" \
    --title "Magneto vs onnxruntime-node, CPU, median of $runs runs ($(date +%Y-%m-%d))" && echo "wrote $svg"
fi
echo "runs=$runs per measurement (median), rounds=$rounds (median of the rounds' medians); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg);${neighbour:+ beside a 2-thread neighbour;}" \
     "onnxruntime-node $(cd "$root/tools/ort" && node -p "require('onnxruntime-node/package.json').version")"
exit $status
