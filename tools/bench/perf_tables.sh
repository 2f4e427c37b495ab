#!/usr/bin/env bash
# Regenerates the CPU table of docs/PERFORMANCE.md ("CPU latency against onnxruntime-node"):
# Magneto's CPU target against onnxruntime-node 1.30 at 1 and 2 threads over the model classes
# of issue #41, in alternating rounds (tools/bench/compare_ort.sh), then writes the table, the
# per-class and overall geomeans and the command into the document between its markers
# (tools/bench/perf_doc.py).
#
#   tools/bench/perf_tables.sh [--runs R] [--rounds K] [--quick] [--no-doc] [--out DIR]
#
# Models (exported by models/export.py into models/zoo when missing, the light graphs prepared
# by models/light.py): the zoo at full size (CNNs with parallel branches, parallel blocks,
# transformers, recurrent and recommendation models, detectors' heads, YOLOv8), the torchvision
# classifiers of issue #41 and the nine light model-zoo graphs. --quick: one model per class
# (a minute or two, for checking the script). DIR (default build/perf) keeps cpu.tsv (raw rows:
# class, model, threads, magneto ms, ort ms) and cpu.md (the table). Takes about 20 minutes on the
# 2-core VM with the defaults (20 runs, 3 rounds); run it on an otherwise idle machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
runs=20
rounds=3
quick=""
doc=1
out="$root/build/perf"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-doc) doc=""; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "perf_tables: unknown argument $1" >&2; exit 2 ;;
  esac
done
# class|models (comma separated; light_* are the light graphs)
classes=(
  "parallel CNNs|inception_v3,squeezenet1_1,resnext50_32x4d,nasnet_a_mobile"
  "parallel blocks|inception_block,mha_block,multi_tower"
  "torchvision classifiers|resnet18,mobilenet_v2,mobilenet_v3_large,efficientnet_b0,efficientnet_b1,mnasnet1_0,regnet_x_400mf,shufflenet_v2_x1_0,convnext_tiny,densenet121"
  "transformers and MoE|bert_layers,llama_layer,vit,switch_moe,mixtral_moe"
  "recurrent and recommendation|lstm_lm,seq2seq,deepspeech2,din"
  "detection|yolox_heads,yolov8"
  "light model zoo|light_bvlc_alexnet,light_densenet121,light_inception_v1,light_inception_v2,light_resnet50,light_shufflenet,light_squeezenet,light_vgg19,light_zfnet512"
)
if [ -n "$quick" ]; then
  classes=("parallel blocks|mha_block" "torchvision classifiers|resnet18" "light model zoo|light_squeezenet")
fi
mkdir -p "$out"
exports=""
for c in "${classes[@]}"; do
  for m in $(echo "${c#*|}" | tr ',' ' '); do
    case "$m" in light_*) ;; *) exports="${exports:+$exports,}$m" ;; esac
  done
done
echo "perf_tables: exporting what models/zoo lacks ($exports)" >&2
/usr/bin/python3 models/export.py --out models/zoo --models "$exports" >"$out/export.log" 2>&1 ||
  { tail -20 "$out/export.log" >&2; echo "perf_tables: export failed (log: $out/export.log)" >&2; exit 1; }
/usr/bin/python3 models/light.py --src models/light --out models/zoo >"$out/light.log" 2>&1 ||
  { tail -20 "$out/light.log" >&2; echo "perf_tables: models/light.py failed" >&2; exit 1; }

: >"$out/cpu.tsv"
status=0
for c in "${classes[@]}"; do
  cls="${c%%|*}"
  dirs=()
  for m in $(echo "${c#*|}" | tr ',' ' '); do dirs+=("models/zoo/$m"); done
  echo "perf_tables: $cls: ${dirs[*]}" >&2
  bash tools/bench/compare_ort.sh --runs "$runs" --rounds "$rounds" --tsv "$out/class.tsv" "${dirs[@]}" \
    >"$out/class.md" 2>"$out/class.err" || status=1
  cat "$out/class.err" >&2
  awk -F'\t' -v c="$cls" '{ print c "\t" $1 "\t" $2 "\t" $3 "\t" $5 }' "$out/class.tsv" >>"$out/cpu.tsv"
done
when="$(date -u '+%Y-%m-%d %H:%M UTC')"
cmd="tools/bench/perf_tables.sh --runs $runs --rounds $rounds${quick:+ --quick}"
splice=()
[ -n "$doc" ] && [ -z "$quick" ] && splice=(--splice docs/PERFORMANCE.md)
/usr/bin/python3 tools/bench/perf_doc.py "$out/cpu.tsv" --command "$cmd" --when "$when" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" "${splice[@]}" >"$out/cpu.md"
cat "$out/cpu.md"
exit $status
