# Sourced by the CI stage scripts: `section TITLE` prints "--- TITLE" and, first, the previous
# section's wall time and the CPU time of the processes it ran (user + system of the script's
# finished children, which is what the 2-core CI machine pays); `section_end` closes the last one.
# CI must stay under 35 minutes: these lines show where a stage's time goes.
_section_name=""
_section_t0=0
_section_c0=0
_section_tick=$(getconf CLK_TCK 2>/dev/null || echo 100)
_section_cpu() {  # CPU centiseconds of this shell's finished children
  local st
  read -r -a st < "/proc/$$/stat"
  echo $(( (st[15] + st[16]) * 100 / _section_tick ))
}
section_end() {
  if [ -n "$_section_name" ]; then
    local w=$(( $(date +%s) - _section_t0 )) c=$(( $(_section_cpu) - _section_c0 ))
    printf '    (%s: %d s, CPU %d s)\n' "$_section_name" "$w" $((c / 100))
  fi
  _section_name=""
}
section() {
  section_end
  _section_name="$1"; _section_t0=$(date +%s); _section_c0=$(_section_cpu)
  echo "--- $1"
}
