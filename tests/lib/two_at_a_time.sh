# Sourced by test scripts: runs independent jobs on the two cores of the CI machine.
#   two_at_a_time FUNC ITEM...
# Runs "FUNC ITEM" for every item in the background, at most two at a time, and returns 0 when all
# have finished; each job reports its own result (a file, a log), its exit status is not kept, so
# the function is safe under `set -e`. Each job is waited for by its pid: a bare `wait` after
# `wait -n` was seen returning before the last job had finished.
two_at_a_time() {
  local fn=$1 item running=0 pids=() p
  shift
  for item in "$@"; do
    "$fn" "$item" &
    pids+=($!); running=$((running + 1))
    if [ "$running" -ge 2 ]; then wait -n || true; running=$((running - 1)); fi
  done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
