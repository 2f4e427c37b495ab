# Sourced by test scripts: what to do when a tool a test needs is missing.
#   missing_tool "WHAT is missing: WHAT did not run" [INSTALL HINT]
# Prints a loud SKIPPED (or FAILED) line to stdout and stderr and exits: 77 (ctest's skip code) on
# a developer's machine, 1 when MAGNETO_REQUIRE_TOOLS=1. scripts/test.sh (the README's test command
# and CI) sets it after scripts/setup.sh ran: a tool setup.sh installs can then only be missing
# because something is broken, and a check that did not run must not look like one that passed.
# (nvcc is not installed by setup.sh: the scripts keep skipping without it.)
# have_ort SOURCE_DIR: whether node runs and loads onnxruntime-node from SOURCE_DIR/tools/ort.
have_ort() {
  command -v node > /dev/null && (cd "$1/tools/ort" && node -e "require('onnxruntime-node')" > /dev/null 2>&1)
}
missing_tool() {
  local what="$1" hint="${2:-install it with scripts/setup.sh}"
  local word=SKIPPED code=77
  if [ "${MAGNETO_REQUIRE_TOOLS:-0}" = 1 ]; then word=FAILED code=1; fi
  local msg="$word: $what ($hint)"
  [ "$code" = 1 ] && msg="$msg; MAGNETO_REQUIRE_TOOLS=1: scripts/setup.sh should have installed it"
  echo "=================================================================="
  echo "$msg"
  echo "=================================================================="
  echo "$msg" >&2
  exit "$code"
}
