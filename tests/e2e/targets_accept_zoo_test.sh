#!/usr/bin/env bash
# Every exported zoo model compiles for the cpu, cuda and hip targets (issue #16: no model is
# refused by any target after the default pipeline). Code generation only (`magnetoc compile`,
# no package build): a refusal (an op a target does not lower, a pass that produced something the
# target cannot run) fails the model with the compiler's message. The packages are written to a
# scratch folder (/dev/shm when it has 2 GB free, else TMPDIR: the light VGG-19's weights are
# 550 MB) and removed at once.
# Inputs that decide output shapes (detect_postprocess's NonMaxSuppression boxes and scores) are
# bound to test_data_set_0's values (every target computes NonMaxSuppression's count at run time,
# and bound the selection folds); meta.json's "bind_inputs" (input name -> file in the model
# folder) names them.
# Run by tests/e2e/run_zoo.sh after its exports, with --targets cuda,hip: its own checks compile
# every one of those models for cpu already, so a cpu refusal fails the stage there.
#   tests/e2e/targets_accept_zoo_test.sh MAGNETOC [--targets cpu,cuda,hip] MODEL_DIR...
set -uo pipefail
magnetoc="$1"; shift
targets="cpu,cuda,hip"
if [ "${1:-}" = --targets ]; then targets="$2"; shift 2; fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch_base="${TMPDIR:-/tmp}"
# /dev/shm only with room for two packages at once (a container's is often 64 MB).
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
   [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -gt 2097152 ] 2>/dev/null; then
  scratch_base=/dev/shm
fi
scratch="$(mktemp -d "$scratch_base/magneto-targets.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

# One job: "MODEL_DIR|TARGET"; its log and exit status go to the scratch folder.
compile_one() {
  local dir target name out rc=0 binds=()
  IFS='|' read -r dir target <<< "$1"
  name="$(basename "$dir")"
  out="$scratch/$name-$target"
  if [ -f "$dir/meta.json" ] && grep -q '"bind_inputs"' "$dir/meta.json"; then
    while read -r b; do [ -n "$b" ] && binds+=(--bind "$b"); done < <(
      /usr/bin/python3 -c "import json,sys,os; d=sys.argv[1]; [print('%s=%s' % (k, os.path.join(d, v))) for k, v in json.load(open(os.path.join(d, 'meta.json')))['bind_inputs'].items()]" "$dir")
  fi
  "$magnetoc" compile "$dir/model.onnx" -o "$out/pkg" --target "$target" -q "${binds[@]}" \
    > "$out.log" 2>&1 || rc=$?
  echo "$rc" > "$out.rc"
  rm -rf "$out"
}
jobs=()
IFS=',' read -ra target_list <<< "$targets"
for dir in "$@"; do
  for t in "${target_list[@]}"; do jobs+=("$dir|$t"); done
done
source "$root/tests/lib/two_at_a_time.sh"
two_at_a_time compile_one "${jobs[@]}"
failed=0
for j in "${jobs[@]}"; do
  IFS='|' read -r dir target <<< "$j"
  out="$scratch/$(basename "$dir")-$target"
  rc="$(cat "$out.rc" 2>/dev/null || echo missing)"
  if [ "$rc" != 0 ]; then
    echo "refused: $(basename "$dir") --target $target (exit status $rc):"
    sed 's/^/  /' "$out.log"
    failed=$((failed + 1))
  fi
done
echo "targets accept the zoo: ${#jobs[@]} compiles ($# models x ${target_list[*]}), $failed refused"
[ "$failed" -eq 0 ]
