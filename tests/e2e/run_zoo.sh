#!/usr/bin/env bash
# The model-zoo regression: exports the zoo with Debian's PyTorch (seeded random weights, BatchNorm
# statistics settled, PyTorch's outputs saved as test_data_set_0), then checks every model
# through the CPU target against PyTorch's outputs and against onnxruntime-node's outputs on the
# same input (an independent second reference). Closing line: "N passed, M failed".
#   tests/e2e/run_zoo.sh [--models a,b,c] [--small-models a,b,c] [--out DIR] [--work-dir DIR]
#                        [--magnetoc PATH] [--light-models a,b|none] [--ort-models a,b|none]
#                        [--dynamic-models a,b|none]
# --models run at full size (default: the three torchvision CNNs and the three parallel blocks),
# --small-models at their --small size, folders NAME_small (default: the models of
# models/zoo_models.py, whose full sizes are too slow for CI); an empty list skips that part.
# --light-models: the light model-zoo graphs (ONNX's backend-test copies of AlexNet, DenseNet-121,
# ..., in models/light or $MAGNETO_LIGHT_DIR), given seeded weights and inputs by models/light.py
# and checked against onnxruntime-node's outputs (their only reference), with the parallel passes
# on 2 threads; "none" skips them. Default: all nine.
# --ort-models: models built by their own scripts (models/NAME.py --out OUT) whose reference is
# onnxruntime-node's outputs, with their tolerance in meta.json (models/ort_reference.py):
# resnet_qdq (QDQ-quantized, a few output quantization steps), resnet18_int8 (torchvision's
# ResNet-18 quantized by tools/quantize/quantize.py; reference: onnxruntime with its graph
# optimizations off, 4 output steps), mobilenet_v2_int8 (the same for MobileNet v2: depthwise
# integer convolutions, 12 steps) and detect_postprocess (NonMaxSuppression and Gathers, exact);
# "none" skips them. Default: all four.
# --dynamic-models: exported at their --small size with symbolic batch (and sequence) axes
# (models/export.py --dynamic, folders NAME_small_dynamic): each is compiled ONCE with the
# --dynamic ranges of its meta.json and run at three shapes (batch 1, 3, 8 and, for the sequence
# models, three lengths) against PyTorch (issue #17). Default: inception_v3, resnext50_32x4d,
# bert_layers, seq2seq, gpt2_kv (a KV-cache decoder, --dynamic past=0..64: a prefill at past 0 and
# decodes; issue #40); "none" skips them.
# A passing model's work folder (its package, runner and weights: up to 1.1 GB for VGG-19) is
# removed as soon as it passes, so the stage's disk peak is one model, not the zoo; a failing one is
# kept for its logs. MAGNETO_KEEP_ZOO_WORK=1 keeps them all.
# After the checks, every exported model is compiled for cuda and hip (code generation only,
# tests/e2e/targets_accept_zoo_test.sh): a model either GPU target refuses fails the stage.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
models="inception_v3,squeezenet1_1,resnext50_32x4d,inception_block,mha_block,multi_tower"
small_models="nasnet_a_mobile,lstm_lm,seq2seq,deepspeech2,bert_layers,switch_moe,yolox_heads,yolov8,din,gru_greedy_decoder,llama_layer,mixtral_moe,vit"
out="$root/build/zoo"
work="$root/build/zoo-work"
magnetoc="$root/build/bin/magnetoc"
light_models="bvlc_alexnet,densenet121,inception_v1,inception_v2,resnet50,shufflenet,squeezenet,vgg19,zfnet512"
light_src="${MAGNETO_LIGHT_DIR:-$root/models/light}"
ort_models="resnet_qdq,resnet18_int8,mobilenet_v2_int8,detect_postprocess"
dynamic_models="inception_v3,resnext50_32x4d,bert_layers,seq2seq,gpt2_kv"
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --small-models) small_models="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --work-dir) work="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --light-models) light_models="$2"; shift 2 ;;
    --ort-models) ort_models="$2"; shift 2 ;;
    --dynamic-models) dynamic_models="$2"; shift 2 ;;
    *) echo "run_zoo.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
passed_work() { [ "${MAGNETO_KEEP_ZOO_WORK:-0}" = 1 ] || rm -rf "$1"; }

# The exports (full size, small size, the light graphs' weights) run side by side: each is mostly
# one Python thread. Their output is kept in logs and shown when one fails.
folders=()
exports=()
export_log="$work/exports"
mkdir -p "$export_log"
if [ -n "$models" ]; then
  echo "exporting $models to $out"
  /usr/bin/python3 "$root/models/export.py" --out "$out" --models "$models" > "$export_log/full.log" 2>&1 &
  exports+=("$!:full")
  IFS=',' read -ra names <<< "$models"
  folders+=("${names[@]}")
fi
if [ -n "$small_models" ]; then
  echo "exporting $small_models (--small) to $out"
  /usr/bin/python3 "$root/models/export.py" --out "$out" --models "$small_models" --small > "$export_log/small.log" 2>&1 &
  exports+=("$!:small")
  IFS=',' read -ra names <<< "$small_models"
  for m in "${names[@]}"; do folders+=("${m}_small"); done
fi
light=()
light_problem=""
if [ "$light_models" != none ] && [ -n "$light_models" ]; then
  if [ -d "$light_src" ]; then
    echo "preparing the light models ($light_models) from $light_src"
    /usr/bin/python3 "$root/models/light.py" --src "$light_src" --out "$out" --models "$light_models" \
      > "$export_log/light.log" 2>&1 &
    exports+=("$!:light")
    IFS=',' read -ra light <<< "$light_models"
  else
    light_problem="light models: $light_src not found (MAGNETO_LIGHT_DIR)"
  fi
fi
dynamic=()
if [ "$dynamic_models" != none ] && [ -n "$dynamic_models" ]; then
  echo "exporting $dynamic_models (--small --dynamic) to $out"
  /usr/bin/python3 "$root/models/export.py" --out "$out" --models "$dynamic_models" --small --dynamic \
    > "$export_log/dynamic.log" 2>&1 &
  exports+=("$!:dynamic")
  IFS=',' read -ra dynamic <<< "$dynamic_models"
fi
ort=()
ort_problem=""
if [ "$ort_models" != none ] && [ -n "$ort_models" ]; then
  echo "building the models checked against onnxruntime ($ort_models)"
  IFS=',' read -ra ort <<< "$ort_models"
  # One job, the scripts in turn (each ~1-2 s of CPU).
  ( for m in "${ort[@]}"; do /usr/bin/python3 "$root/models/$m.py" --out "$out" || exit 1; done ) \
    > "$export_log/ort.log" 2>&1 &
  exports+=("$!:ort")
fi
for e in "${exports[@]}"; do
  if ! wait "${e%%:*}"; then
    cat "$export_log/${e#*:}.log"
    if [ "${e#*:}" = light ]; then light=(); light_problem="light models: models/light.py failed"
    elif [ "${e#*:}" = ort ]; then ort=(); ort_problem="onnxruntime-reference models: a models/NAME.py failed"
    else echo "run_zoo.sh: the ${e#*:} export failed" >&2; exit 1; fi
  fi
done
cat "$export_log"/full.log "$export_log"/small.log "$export_log"/dynamic.log "$export_log"/ort.log 2>/dev/null | grep -v '^$' || true

passed=0; failed=0; failures=()
[ -n "$light_problem" ] && { echo "FAIL $light_problem"; failed=$((failed + 1)); failures+=("$light_problem"); }
[ -n "$ort_problem" ] && { echo "FAIL $ort_problem"; failed=$((failed + 1)); failures+=("$ort_problem"); }
# The checks: "LABEL|MODEL DIR|WORK DIR|ARGS", run two at a time (a check is one compiler process,
# then the model's runs; the parallel variant's 2 threads share the cores with the other check, which
# changes its speed, never its results), reported in queue order.
queue=()
for m in "${folders[@]}"; do
  dir="$out/$m"
  # onnxruntime-node's outputs on the same input, as a second test data set (redone after a
  # re-export).
  ort_dir="$dir/test_data_set_ort"
  if [ ! -f "$ort_dir/output_0.pb" ] || [ "$dir/model.onnx" -nt "$ort_dir/output_0.pb" ]; then
    rm -rf "$ort_dir"; mkdir -p "$ort_dir"
    cp "$dir"/test_data_set_0/input_*.pb "$ort_dir/"
    node "$root/tools/ort/run_ort.js" "$dir/model.onnx" --inputs "$ort_dir"/input_*.pb \
      --outputs-dir "$ort_dir" --threads 2 >/dev/null
  fi
  # Tolerance from the export (meta.json): rtol 1e-3, atol 1e-3 x the output's standard deviation,
  # because onnxruntime and PyTorch themselves differ by up to ~3e-4 on Inception v3's logits.
  # A detector's sorted outputs are compared as sets of rows (meta.json's unordered_rows).
  read -r rtol atol rows < <(/usr/bin/python3 -c "import json,sys; m=json.load(open(sys.argv[1])); t=m.get('tolerance',{}); print(t.get('rtol',1e-3), t.get('atol',1e-4), ' '.join('--unordered-rows ' + ','.join(g) for g in m.get('unordered_rows', [])))" "$dir/meta.json")
  # With the parallel passes on 2 threads, so that joint groups run as parallel regions of the
  # thread pool (docs/PARALLEL.md); without them on the default one thread.
  queue+=("$m|$dir|$work/$m|--data $ort_dir --threads 2 --rtol $rtol --atol $atol $rows")
  queue+=("$m --no-parallel-opt|$dir|$work/$m-noparallel|--data $ort_dir --threads 1 --rtol $rtol --atol $atol $rows --no-parallel-opt")
done
# Models whose only reference is onnxruntime: their test_data_set_0 holds its outputs and their
# meta.json the tolerance: rtol, atol, then --atol NAME=A for each output (output_atol).
ort_tolerance() {
  /usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['tolerance']; print(t['rtol'], t['atol'], ' '.join('--atol %s=%r' % kv for kv in t.get('output_atol', {}).items()))" "$1/meta.json"
}
# The light model-zoo graphs (models/light.py).
for m in "${light[@]}"; do
  dir="$out/light_$m"
  read -r rtol atol per_output < <(ort_tolerance "$dir")
  queue+=("light_$m|$dir|$work/light_$m|--threads 2 --rtol $rtol --atol $atol $per_output")
done
# The models built by models/NAME.py: a QDQ-quantized ResNet (onnxruntime fuses QDQ into integer
# kernels, Magneto computes in float: a few output steps), a NonMaxSuppression post-processing
# graph (on the cpu its selection is a run-time extent: see models/detect_postprocess.py).
for m in "${ort[@]}"; do
  dir="$out/$m"
  read -r rtol atol per_output < <(ort_tolerance "$dir")
  queue+=("$m|$dir|$work/$m|--threads 2 --rtol $rtol --atol $atol $per_output")
done
# The dynamic models: one compile with the ranges of meta.json (--dynamic NAME=LO..HI), then every
# test data set at its own shape (PyTorch's outputs), with and without the parallel passes.
for m in "${dynamic[@]}"; do
  dir="$out/${m}_small_dynamic"
  read -r rtol atol flags < <(/usr/bin/python3 -c "import json,sys; m=json.load(open(sys.argv[1])); t=m['tolerance']; print(t['rtol'], t['atol'], ' '.join(m['dynamic_flags']))" "$dir/meta.json")
  sets=""
  for d in "$dir"/test_data_set_*; do [ "$d" = "$dir/test_data_set_0" ] || sets+=" --data $d"; done
  queue+=("${m}_small_dynamic|$dir|$work/${m}_small_dynamic|$sets $flags --threads 2 --rtol $rtol --atol $atol")
  queue+=("${m}_small_dynamic --no-parallel-opt|$dir|$work/${m}_small_dynamic-noparallel|$sets $flags --threads 1 --rtol $rtol --atol $atol --no-parallel-opt")
done
# One queued check; its exit status goes to WORK.rc (beside the work folder, which a pass removes).
check_one() {
  local label dir w args
  IFS='|' read -r label dir w args <<< "$1"
  mkdir -p "$(dirname "$w")"
  local rc=0
  # shellcheck disable=SC2086  # ARGS are words
  "$magnetoc" check "$dir/model.onnx" --data "$dir/test_data_set_0" $args --work-dir "$w" -q > "$w.log" 2>&1 || rc=$?
  echo $rc > "$w.rc"
  if [ $rc -eq 0 ]; then passed_work "$w"; fi
}
source "$root/tests/lib/two_at_a_time.sh"
two_at_a_time check_one "${queue[@]}"
for item in "${queue[@]}"; do
  IFS='|' read -r label _ w _ <<< "$item"
  cat "$w.log"
  if [ "$(cat "$w.rc" 2>/dev/null)" = 0 ]; then
    echo "PASS $label"; passed=$((passed + 1))
  else
    echo "FAIL $label"; failed=$((failed + 1)); failures+=("$label")
  fi
done
# Every exported model compiles for the GPU targets too (code generation only, about 24 CPU-s, most
# of it reading and writing the light VGG-19's, ZFNet's and AlexNet's weights): no model is refused
# by cuda or hip after the default pipeline (issue #16). The checks above compiled them for cpu.
accept_dirs=()
for m in "${folders[@]}"; do accept_dirs+=("$out/$m"); done
for m in "${light[@]}"; do accept_dirs+=("$out/light_$m"); done
for m in "${ort[@]}"; do accept_dirs+=("$out/$m"); done
if [ "${#accept_dirs[@]}" -gt 0 ]; then
  if bash "$root/tests/e2e/targets_accept_zoo_test.sh" "$magnetoc" --targets cuda,hip "${accept_dirs[@]}"; then
    echo "PASS targets_accept_zoo"; passed=$((passed + 1))
  else
    echo "FAIL targets_accept_zoo"; failed=$((failed + 1)); failures+=("targets_accept_zoo")
  fi
fi
# The CPU target's parallel regions on 2 and 3 threads, and the benchmark script's output format,
# where the models they need were exported above.
if [ -f "$out/multi_tower/model.onnx" ] && [ -f "$out/nasnet_a_mobile_small/model.onnx" ] &&
   [ -f "$out/switch_moe_small/model.onnx" ]; then
  if bash "$root/tests/e2e/cpu_regions_test.sh" "$magnetoc" "$out"; then
    echo "PASS cpu_regions"; passed=$((passed + 1))
  else
    echo "FAIL cpu_regions"; failed=$((failed + 1)); failures+=("cpu_regions")
  fi
fi
if [ -f "$out/multi_tower/model.onnx" ]; then
  if bash "$root/tests/e2e/compare_ort_test.sh" "$magnetoc" "$out/multi_tower"; then
    echo "PASS compare_ort"; passed=$((passed + 1))
  else
    echo "FAIL compare_ort"; failed=$((failed + 1)); failures+=("compare_ort")
  fi
fi
[ "$failed" -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
