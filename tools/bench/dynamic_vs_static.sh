#!/usr/bin/env bash
# Times one dynamic library against libraries compiled for the exact shape, and against
# onnxruntime-node, at several batch sizes (issue #17: "no slower than a library compiled for the
# exact shape at the sizes a user declares as important").
#
#   tools/bench/dynamic_vs_static.sh [--runs R] [--rounds K] [--threads T] [--batches "1 8 32"]
#                                    [--opt "1,8"] [--magnetoc PATH] DIR ...
#
# DIR: a dynamic export (models/export.py --dynamic: NAME_dynamic or NAME_small_dynamic, with
# meta.json's "axes" and "dynamic" ranges). Every input is taken at the shape of its
# test_data_set_0 with its "batch" axis set to each of --batches (other symbols, e.g. "seq", keep
# data set 0's value). Per model and batch, K rounds run in turn (so that a slow minute of a shared
# machine hits every side alike):
#   static:  magnetoc bench DIR/model.onnx --shape IN=DIMS ...            (compiled for that shape)
#   dynamic: magnetoc bench DIR/model.onnx --dynamic batch=LO..HI [other symbols' ranges]
#            --opt batch=OPT --shape IN=DIMS ...   (ONE library for the whole range, HI = the largest
#            of --batches and the export's range; timed at that shape through NAME_set_input_dims)
#   ort:     node tools/ort/run_ort.js DIR/model.onnx --inputs (data set 0 tiled to the batch)
# each `--runs R` timed runs on T threads (default 1); figures are the median of the K medians.
# Prints a Markdown table: model | batch | static ms | dynamic ms | ort ms | dynamic/static |
# ort/dynamic, and the geometric mean of dynamic/static per batch. Exit status 1 when a measurement
# failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

runs=10
rounds=3
threads=1
batches="1 8 32"
opt="1,8"
magnetoc="${MAGNETOC:-$root/build/bin/magnetoc}"
dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --opt) opt="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "dynamic_vs_static: unknown option $1" >&2; exit 2 ;;
    *) dirs+=("${1%/}"); shift ;;
  esac
done
[ ${#dirs[@]} -gt 0 ] || { echo "dynamic_vs_static: give at least one dynamic export folder" >&2; exit 2; }
case "$magnetoc" in /*) ;; */*) magnetoc="$(pwd)/$magnetoc" ;; esac
[ -x "$magnetoc" ] || { echo "dynamic_vs_static: magnetoc not found: $magnetoc (build it first)" >&2; exit 2; }
(cd "$root/tools/ort" && node -e "require('onnxruntime-node')" >/dev/null 2>&1) ||
  { echo "dynamic_vs_static: onnxruntime-node does not load (run scripts/setup.sh)" >&2; exit 2; }
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/magneto-dynbench.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

source "$root/tools/bench/medians.sh"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "error" || b == "error" || b <= 0) print "-"; else printf "%.3f", a / b }'; }

# For DIR and batch B: writes $tmp/in-B/input_K.pb (data set 0 tiled along the batch axis) and
# prints two lines: the --shape arguments, then the --dynamic/--opt arguments.
prepare() {
  /usr/bin/python3 - "$1" "$2" "$3" "$batches" "$opt" <<'EOF'
import glob, json, os, sys
import numpy as np
from onnx import numpy_helper, TensorProto
d, b, out, batches, opt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5]
meta = json.load(open(os.path.join(d, "meta.json")))
axes = meta["axes"]
os.makedirs(out, exist_ok=True)
shapes = []
for k, f in enumerate(sorted(glob.glob(os.path.join(d, "test_data_set_0", "input_*.pb")))):
    t = TensorProto()
    t.ParseFromString(open(f, "rb").read())
    a = numpy_helper.to_array(t)
    ax = [int(i) for i, s in axes.get(t.name, {}).items() if s == "batch"]
    for i in ax:
        reps = -(-b // a.shape[i])
        a = np.take(np.concatenate([a] * reps, axis=i), range(b), axis=i)
    with open(os.path.join(out, f"input_{k}.pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(np.ascontiguousarray(a), t.name).SerializeToString())
    shapes.append(f"--shape {t.name}=" + ("x".join(str(x) for x in a.shape) if a.ndim else "scalar"))
print(" ".join(shapes))
dyn = []
for sym, (lo, hi) in meta["dynamic"].items():
    if sym == "batch":
        hi = max(hi, max(int(x) for x in batches))
        dyn.append(f"--dynamic batch={lo}..{hi} --opt batch={opt}")
    else:
        dyn.append(f"--dynamic {sym}={lo}..{hi}")
print(" ".join(dyn))
EOF
}

status=0
echo "| model | batch | static ms | dynamic ms | ort ms | dynamic/static | ort/dynamic |"
echo "|---|---|---|---|---|---|---|"
: > "$tmp/ratios"
for dir in "${dirs[@]}"; do
  name="$(basename "$dir")"
  for b in $batches; do
    { read -r shape_args; read -r dyn_args; } < <(prepare "$dir" "$b" "$tmp/in-$name-$b") ||
      { echo "| $name | $b | input preparation failed | | | | |"; status=1; continue; }
    st=(); dy=(); ort=()
    for ((round = 0; round < rounds; round++)); do
      # shellcheck disable=SC2086  # the argument lines are words
      st+=("$(median_of "$tmp/st.log" "$magnetoc" bench "$dir/model.onnx" $shape_args --threads "$threads" --runs "$runs" --work-dir "$tmp/w-$name-static-$b")")
      # shellcheck disable=SC2086
      dy+=("$(median_of "$tmp/dy.log" "$magnetoc" bench "$dir/model.onnx" $dyn_args $shape_args --threads "$threads" --runs "$runs" --work-dir "$tmp/w-$name-dynamic")")
      ort+=("$(median_of "$tmp/ort.log" node "$root/tools/ort/run_ort.js" "$dir/model.onnx" --inputs "$tmp/in-$name-$b"/input_*.pb --threads "$threads" --bench "$runs" --quiet)")
    done
    s="$(median_of_list "${st[@]}")"; y="$(median_of_list "${dy[@]}")"; o="$(median_of_list "${ort[@]}")"
    for v in "$s:static:st" "$y:dynamic:dy" "$o:ort:ort"; do
      IFS=: read -r val what log <<< "$v"
      [ "$val" = error ] && { status=1; echo "dynamic_vs_static: $what failed on $name batch $b: $(tail -n3 "$tmp/$log.log" | tr '\n' ' ')" >&2; }
    done
    ds="$(ratio "$y" "$s")"
    echo "| $name | $b | $s | $y | $o | $ds | $(ratio "$o" "$y") |"
    [ "$ds" = - ] || echo "$b $ds" >> "$tmp/ratios"
  done
done
awk '{ s[$1] += log($2); n[$1]++ } END { for (b in s) printf "geomean dynamic/static at batch %s: %.3f over %d model(s)\n", b, exp(s[b] / n[b]), n[b] }' "$tmp/ratios" | sort -t' ' -k5 -g
exit $status
