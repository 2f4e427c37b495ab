#!/usr/bin/env bash
# The model-zoo regression: exports the zoo with Debian's PyTorch (seeded random weights, BatchNorm
# statistics settled, PyTorch's outputs saved as test_data_set_0), then checks every model
# through the CPU target against PyTorch's outputs and against onnxruntime-node's outputs on the
# same input (an independent second reference). Closing line: "N passed, M failed".
#   tests/e2e/run_zoo.sh [--models a,b,c] [--small-models a,b,c] [--out DIR] [--work-dir DIR]
#                        [--magnetoc PATH]
# --models run at full size (default: the three torchvision CNNs and the three parallel blocks),
# --small-models at their --small size, folders NAME_small (default: the models of
# models/zoo_models.py, whose full sizes are too slow for CI); an empty list skips that part.
# --light-models: the light model-zoo graphs (ONNX's backend-test copies of AlexNet, DenseNet-121,
# ..., in models/light or $MAGNETO_LIGHT_DIR), given seeded weights and inputs by models/light.py
# and checked against onnxruntime-node's outputs (their only reference), with the parallel passes
# on 2 threads; "none" skips them. Default: all nine.
# A passing model's work folder (its package, runner and weights: up to 1.1 GB for VGG-19) is
# removed as soon as it passes, so the stage's disk peak is one model, not the zoo; a failing one is
# kept for its logs. MAGNETO_KEEP_ZOO_WORK=1 keeps them all.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
models="inception_v3,squeezenet1_1,resnext50_32x4d,inception_block,mha_block,multi_tower"
small_models="nasnet_a_mobile,lstm_lm,seq2seq,deepspeech2,bert_layers,switch_moe,yolox_heads,din"
out="$root/build/zoo"
work="$root/build/zoo-work"
magnetoc="$root/build/bin/magnetoc"
light_models="bvlc_alexnet,densenet121,inception_v1,inception_v2,resnet50,shufflenet,squeezenet,vgg19,zfnet512"
light_src="${MAGNETO_LIGHT_DIR:-$root/models/light}"
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --small-models) small_models="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --work-dir) work="$2"; shift 2 ;;
    --magnetoc) magnetoc="$2"; shift 2 ;;
    --light-models) light_models="$2"; shift 2 ;;
    *) echo "run_zoo.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$root/build/cache}"
passed_work() { [ "${MAGNETO_KEEP_ZOO_WORK:-0}" = 1 ] || rm -rf "$1"; }

folders=()
if [ -n "$models" ]; then
  echo "exporting $models to $out"
  /usr/bin/python3 "$root/models/export.py" --out "$out" --models "$models"
  IFS=',' read -ra names <<< "$models"
  folders+=("${names[@]}")
fi
if [ -n "$small_models" ]; then
  echo "exporting $small_models (--small) to $out"
  /usr/bin/python3 "$root/models/export.py" --out "$out" --models "$small_models" --small
  IFS=',' read -ra names <<< "$small_models"
  for m in "${names[@]}"; do folders+=("${m}_small"); done
fi

passed=0; failed=0; failures=()
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
  read -r rtol atol < <(/usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1])).get('tolerance',{}); print(t.get('rtol',1e-3), t.get('atol',1e-4))" "$dir/meta.json")
  # With the parallel passes on 2 threads, so that joint groups run as parallel regions of the
  # thread pool (docs/PARALLEL.md); without them on the default one thread.
  for variant in "" "--no-parallel-opt"; do
    label="$m${variant:+ $variant}"
    threads=2; [ -n "$variant" ] && threads=1
    if "$magnetoc" check "$dir/model.onnx" --data "$dir/test_data_set_0" --data "$ort_dir" --threads "$threads" \
         --work-dir "$work/$m${variant:+-noparallel}" --rtol "$rtol" --atol "$atol" -q $variant; then
      echo "PASS $label"; passed=$((passed + 1)); passed_work "$work/$m${variant:+-noparallel}"
    else
      echo "FAIL $label"; failed=$((failed + 1)); failures+=("$label")
    fi
  done
done
# The light model-zoo graphs: onnxruntime's outputs are their reference (models/light.py).
if [ "$light_models" != none ] && [ -n "$light_models" ]; then
  if [ -d "$light_src" ]; then
    echo "preparing the light models ($light_models) from $light_src"
    if /usr/bin/python3 "$root/models/light.py" --src "$light_src" --out "$out" --models "$light_models"; then
      IFS=',' read -ra names <<< "$light_models"
      for m in "${names[@]}"; do
        dir="$out/light_$m"
        read -r rtol atol < <(/usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['tolerance']; print(t['rtol'], t['atol'])" "$dir/meta.json")
        if "$magnetoc" check "$dir/model.onnx" --data "$dir/test_data_set_0" --threads 2 \
             --work-dir "$work/light_$m" --rtol "$rtol" --atol "$atol" -q; then
          echo "PASS light_$m"; passed=$((passed + 1)); passed_work "$work/light_$m"
        else
          echo "FAIL light_$m"; failed=$((failed + 1)); failures+=("light_$m")
        fi
      done
    else
      echo "FAIL light models: models/light.py failed"; failed=$((failed + 1)); failures+=("light.py")
    fi
  else
    echo "FAIL light models: $light_src not found (MAGNETO_LIGHT_DIR)"; failed=$((failed + 1)); failures+=("light models")
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
