#!/usr/bin/env bash
# torchvision's detectors end to end (issue #40 item 8): SSDlite320 MobileNet v3 and RetinaNet
# ResNet-50 FPN (models/zoo_models.py TorchvisionDetector: 5 classes, settled random weights,
# the class head scaled so that scores spread) exported by models/export.py --small, whose graphs
# hold torchvision's run-time If (`if boxes.numel() == 0`) before NonMaxSuppression, per-level
# top-k of run-time counts (min(count, 1000)) and the kept detections' Gathers. Each is checked
# with `magnetoc check` on the cpu target against PyTorch's outputs and onnxruntime-node's on the
# same image, the detections compared as a set of rows (--unordered-rows boxes,scores,labels),
# at 1 and 2 threads; the check must import the If by selection and bind no input.
#   tests/e2e/detectors_test.sh MAGNETOC [SOURCE_DIR]
# Exit 0 when all pass, 1 on a failure, 77 (SKIPPED, loudly) when torch, torchvision, node or
# onnxruntime-node is missing. About 60 CPU-s (the two exports, RetinaNet's 148 MB of weights).
set -uo pipefail
magnetoc="$1"
src="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
py=/usr/bin/python3
. "$src/tests/lib/missing_tool.sh"
have_ort "$src" ||
  missing_tool "node or onnxruntime-node is missing: the detectors were not checked"
$py -c "import torch, torchvision, onnx" 2> /dev/null ||
  missing_tool "/usr/bin/python3 with torch, torchvision and onnx is missing: the detectors were not checked" \
    "apt-get install python3-torch python3-torchvision python3-onnx"

work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-detectors.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export MAGNETO_CACHE_DIR="${MAGNETO_CACHE_DIR:-$(dirname "$magnetoc")/../cache}"
fail() { echo "FAIL: $*"; exit 1; }
$py "$src/models/export.py" --out "$work" --models ssdlite,retinanet --small > "$work/export.log" 2>&1 ||
  { tail -20 "$work/export.log"; fail "the export failed"; }
for m in ssdlite retinanet; do
  d="$work/${m}_small"
  mkdir -p "$d/test_data_set_ort"
  cp "$d"/test_data_set_0/input_*.pb "$d/test_data_set_ort/"
  node "$src/tools/ort/run_ort.js" "$d/model.onnx" --inputs "$d"/test_data_set_ort/input_*.pb \
    --outputs-dir "$d/test_data_set_ort" --threads 1 > /dev/null || fail "$m: onnxruntime-node failed"
  read -r rtol atol rows < <($py -c "import json,sys; m=json.load(open(sys.argv[1])); t=m['tolerance']; print(t['rtol'], t['atol'], ' '.join('--unordered-rows ' + ','.join(g) for g in m['unordered_rows']))" "$d/meta.json")
  for threads in 1 2; do
    # shellcheck disable=SC2086  # $rows is words
    "$magnetoc" check "$d/model.onnx" --data "$d/test_data_set_0" --data "$d/test_data_set_ort" \
      --rtol "$rtol" --atol "$atol" $rows --threads $threads -v > "$work/out" 2>&1 ||
      { tail -30 "$work/out"; fail "$m at $threads thread(s): check failed"; }
    grep -q "(If): the condition is computed at run time: both branches imported, 0 outputs selected by Where, 1 by Compress" "$work/out" ||
      fail "$m: no If was selected at run time"
    ! grep -q "binding input" "$work/out" || fail "$m: check bound an input: $(grep "binding input" "$work/out")"
    echo "ok: $m at $threads thread(s): $(grep '^check:' "$work/out")"
    grep '^output ' "$work/out" | sed "s/^/  /"
  done
done
echo "detectors: all passed"
