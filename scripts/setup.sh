#!/usr/bin/env bash
# Installs everything Magneto needs on a fresh Debian 12 machine. Idempotent: a second run
# checks what is there and installs nothing new. Called by the README's commands and by CI.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

pkgs=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libfmt-dev libgtest-dev llvm-14-tools nlohmann-json3-dev
  python3-onnx python3-numpy python3-torch python3-torchvision python3-protobuf
  graphviz
  # clang: the sanitizer/fuzz build (scripts/sanitize.sh) and the GPU emulation's race check
  # (magnetoc check --emulate --racecheck: ThreadSanitizer with fibers).
  clang libclang-rt-14-dev
  # HIP compiler for tests/gpu's compile check of the GPU kernels (gfx90a; no AMD GPU needed).
  hipcc libamdhip64-dev rocm-device-libs
  # ccache: the examples stage builds one package twice (add_subdirectory, then on its own for
  # find_package); a cache private to that run compiles its runtime once (examples/run_examples.sh).
  ccache
)
# Node.js and npm: any install that provides both commands will do (NodeSource's nodejs package
# bundles npm and conflicts with Debian's npm package, so test for the commands, not the packages).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# onnxruntime-node: our independent CPU reference and rival. Its post-install tries to download
# CUDA binaries, which fails on machines without internet access, hence the skip.
# The npm package ships prebuilt CPU binaries for linux x64 in bin/napi-v6/linux/x64/; the skip
# only skips the CUDA download. Reinstall when the package does not load (missing or broken).
if ! (cd "$here/tools/ort" && node -e "require('onnxruntime-node')" >/dev/null 2>&1); then
  echo "setup: installing onnxruntime-node (npm)"
  (cd "$here/tools/ort" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --silent >/dev/null)
fi
echo "setup: ok"
