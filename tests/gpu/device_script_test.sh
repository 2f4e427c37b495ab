#!/usr/bin/env bash
# The CPU parts of the GPU machine's script (tools/gpu/run_on_device.sh), tested here where no GPU
# is: the device kit packs and runs, and the whole pipeline (export with torch, magnetoc compile,
# the packages' CMake, check against PyTorch, device-event timing, magnetoc tune and a --tuning
# package, the table) runs on a small model with --cpu-test (the CPU emulation, torch on the
# CPU). The figures mean nothing; the table's shape and the checks do.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$root/build/device-script-test"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$root/tools/gpu/pack_device_kit.sh" --out "$work/kit" || fail "pack_device_kit.sh"
"$work/kit/bin/magnetoc" --version | grep -q magnetoc || fail "the packed magnetoc does not run"
MAGNETO_CACHE_DIR="$root/build/cache" OUT="$work/results" \
  "$root/tools/gpu/run_on_device.sh" --cpu-test --models inception_block --fp16-models inception_block --runs 2 \
  --magnetoc "$work/kit/bin/magnetoc" --work "$work/run" > "$work/log.txt" 2>&1
rc=$?
tail -8 "$work/log.txt"
[ $rc -eq 0 ] || fail "run_on_device.sh --cpu-test exited $rc (log: $work/log.txt)"
for f in table.md results.json log.txt; do [ -s "$work/results/$f" ] || fail "no $f in \$OUT"; done
# One row per model, checked ok, with the tuned package checked too.
for m in inception_block; do
  grep -q "^| $m | ok (" "$work/results/table.md" || fail "$m: not checked ok in the table"
done
/usr/bin/python3 - "$work/results/results.json" <<'PY' || fail "results.json"
import json, sys
r = json.load(open(sys.argv[1]))
for m in ("inception_block",):
    for k in ("opt", "noopt", "tuned", "fp16"):
        assert r[m][k]["check"] == "ok", (m, k, r[m][k])
        assert r[m][k]["ms"] > 0, (m, k)
    assert r[m]["eager_ms"] > 0
print("results.json: every package checked ok and timed")
PY
echo "device script (CPU parts): PASS"
