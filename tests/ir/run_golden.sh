#!/usr/bin/env bash
# Runs the "// RUN:" lines of one golden IR test. %s is the test file, magneto-opt and FileCheck
# are found in the build's bin folder and LLVM 14's tools.
set -euo pipefail
test_file="$1"
bindir="$2"
filecheck="$(command -v FileCheck || true)"
[ -z "$filecheck" ] && [ -x /usr/lib/llvm-14/bin/FileCheck ] && filecheck=/usr/lib/llvm-14/bin/FileCheck
if [ -z "$filecheck" ]; then echo "FileCheck not found: run scripts/setup.sh (llvm-14-tools)"; exit 1; fi
export PATH="$bindir:$(dirname "$filecheck"):$PATH"
n=0
while IFS= read -r line; do
  cmd="${line#*RUN: }"
  cmd="${cmd//%s/$test_file}"
  echo "RUN: $cmd"
  bash -o pipefail -c "$cmd"
  n=$((n + 1))
done < <(grep -E '^// RUN: ' "$test_file")
[ "$n" -gt 0 ] || { echo "no RUN lines in $test_file"; exit 1; }
