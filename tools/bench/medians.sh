# Sourced by the benchmark scripts (compare_ort.sh, dynamic_vs_static.sh): the figures they read
# from `magnetoc bench` and run_ort.js, whose last line is `median_ms=X`.
#   median_of LOG COMMAND...   runs COMMAND (output to LOG), prints its last median_ms or "error"
#   median_of_list X...        the median of the figures, or "error" when any is

median_of() {
  local log="$1"; shift
  if "$@" >"$log" 2>&1; then
    local v
    v="$(grep -o 'median_ms=[0-9.eE+-]*' "$log" | tail -n1 | cut -d= -f2)"
    [ -n "$v" ] && { echo "$v"; return; }
  fi
  echo "error"
}

median_of_list() {
  local v
  for v in "$@"; do [ "$v" = error ] && { echo error; return; }; done
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
