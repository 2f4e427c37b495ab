#!/usr/bin/env bash
# Builds and runs examples/classify the two ways an application links a generated package, with a
# magnetoc installed by `cmake --install` (not the build tree's), on SqueezeNet 1.1 from the zoo:
#   1. cmake --install of Magneto into a prefix; that magnetoc compiles the model (--name classifier)
#   2. the example with add_subdirectory(package); its top-5 must equal PyTorch's
#   3. the package built and installed on its own; the example with find_package(classifier)
#   4. a cuda package (--target cuda): built for the CPU emulation and run (top-5 again), from C++
#      and from Python (the package's classifier.py on the libclassifier.so its CMake built), then
#      built with nvcc for sm_80;sm_90 (built only: running needs a GPU)
#   5. examples/python/classify_torchvision.py with the installed magneto Python package: exports
#      SqueezeNet 1.1 with torch.onnx.export, magneto.compile, compared with PyTorch
#   6. examples/generate: a GPT-2-style decoder with a KV cache (--dynamic seq and past), 32 tokens
#      generated greedily from C (1 and 2 threads) and from Python, the caches bound to one buffer each
#      (decoder_bind_kv) and copied each step, every run equal to PyTorch's greedy loop
# Called by scripts/test.sh (stage "examples").   examples/run_examples.sh [--build-dir DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
[ "${1:-}" = "--build-dir" ] && build="$2"
work="$build/examples"
py=/usr/bin/python3
source "$root/tests/lib/section_clock.sh"
step() { echo; section "$*"; }
rm -rf "$work"; mkdir -p "$work"

step "cmake --install of Magneto into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
magnetoc="$work/prefix/bin/magnetoc"
"$magnetoc" --version

step "export SqueezeNet 1.1 (seeded weights, PyTorch's output as test data)"
$py "$root/models/export.py" --out "$build/zoo" --models squeezenet1_1 >/dev/null
model="$build/zoo/squeezenet1_1"
# The example reads raw float32; PyTorch's top-5 is what it must print.
expected="$($py - "$model/test_data_set_0" "$work/input.raw" <<'PY'
import sys, numpy as np, onnx
from onnx import numpy_helper
d, raw = sys.argv[1], sys.argv[2]
def load(p):
    t = onnx.TensorProto(); t.ParseFromString(open(p, "rb").read()); return numpy_helper.to_array(t)
load(d + "/input_0.pb").astype(np.float32).tofile(raw)
y = load(d + "/output_0.pb").reshape(-1)
print(" ".join(str(i) for i in np.argsort(-y, kind="stable")[:5]))
PY
)"
echo "PyTorch's top-5: $expected"

step "compile with the installed magnetoc (no MAGNETO_HOME: it finds share/magneto beside itself)"
env -u MAGNETO_HOME "$magnetoc" compile "$model/model.onnx" --name classifier -o "$work/classifier" -q
ls "$work/classifier"

top5() { grep '^top-5:' | sed -E 's/ \([^)]*\)//g; s/^top-5: //'; }
check_top5() {
  local got; got="$(echo "$1" | top5)"
  if [ "$got" != "$expected" ]; then echo "FAIL: $2: top-5 '$got', PyTorch's '$expected'"; exit 1; fi
  echo "ok: $2: top-5 $got equals PyTorch's"
}

# The package is built twice below, inside the application (add_subdirectory) and on its own (for
# find_package), from the same files with the same flags: a compiler cache private to this run
# (deleted with the work folder, so nothing carries over between runs) compiles its runtime once.
# Both builds still configure, link and install as a user's would. Without ccache: two compiles.
cache_args=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR="$work/ccache" CCACHE_NOHASHDIR=1
  cache_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
step "examples/classify with add_subdirectory(package)"
cmake -S "$root/examples/classify" -B "$work/app-subdir" -DCMAKE_BUILD_TYPE=Release \
  -DCLASSIFIER_PACKAGE="$work/classifier" "${cache_args[@]}" >/dev/null
cmake --build "$work/app-subdir" -j 2 >/dev/null
out="$("$work/app-subdir/classify" "$work/input.raw" --runs 3)"; echo "$out"
check_top5 "$out" "add_subdirectory"

step "the package built and installed on its own; examples/classify with find_package(classifier)"
cmake -S "$work/classifier" -B "$work/classifier/build" -DCMAKE_BUILD_TYPE=Release "${cache_args[@]}" >/dev/null
cmake --build "$work/classifier/build" -j 2 >/dev/null
[ -n "${CCACHE_DIR:-}" ] && echo "compiler cache: $(ccache --print-stats 2>/dev/null | awk -F'\t' '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" {h += $2} $1 == "cache_miss" {m = $2} END {print h + 0 " hits, " m + 0 " misses"}')"
cmake --install "$work/classifier/build" --prefix "$work/pkg-prefix" >/dev/null
cmake -S "$root/examples/classify" -B "$work/app-installed" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/pkg-prefix" >/dev/null
cmake --build "$work/app-installed" -j 2 >/dev/null
out="$("$work/app-installed/classify" "$work/input.raw" --runs 3 --threads 2)"; echo "$out"
check_top5 "$out" "find_package"

step "the same application on a cuda package (--target cuda), run through the CPU emulation of the GPU"
env -u MAGNETO_HOME "$magnetoc" compile "$model/model.onnx" --target cuda --name classifier -o "$work/classifier-cuda" -q
cmake -S "$root/examples/classify" -B "$work/app-cuda-emu" -DCMAKE_BUILD_TYPE=Release \
  -DCLASSIFIER_PACKAGE="$work/classifier-cuda" -Dclassifier_EMULATE=ON >/dev/null
cmake --build "$work/app-cuda-emu" -j 2 >/dev/null
out="$(MG_EMU_THREADS=2 "$work/app-cuda-emu/classify" "$work/input.raw" --runs 1)"; echo "$out"
check_top5 "$out" "cuda package, emulated"

step "the cuda package from Python: classifier.py on the emulated libclassifier.so (classifier_SHARED)"
out="$(env PYTHONPATH="$work/classifier-cuda" MG_EMU_THREADS=2 $py - "$work/input.raw" \
  "$work/app-cuda-emu/classifier/libclassifier.so" <<'PY'
import sys, numpy as np, classifier
m = classifier.Model(library=sys.argv[2], threads=None)
x = np.fromfile(sys.argv[1], np.float32).reshape(m.inputs[0].shape)
y = m.run([x])[m.outputs[0].name]
print("top-5: " + " ".join(str(i) for i in np.argsort(-y.reshape(-1), kind="stable")[:5]))
PY
)"; echo "$out"
check_top5 "$out" "cuda package from Python (classifier.py), emulated"

step "the same application built for NVIDIA GPUs with nvcc (sm_80;sm_90; running it needs a GPU)"
nvcc=/usr/local/cuda/bin/nvcc
if [ -x "$nvcc" ]; then
  cmake -S "$root/examples/classify" -B "$work/app-cuda" -DCMAKE_BUILD_TYPE=Release \
    -DCLASSIFIER_PACKAGE="$work/classifier-cuda" -DCMAKE_CUDA_COMPILER="$nvcc" -Dclassifier_WERROR=ON >/dev/null
  cmake --build "$work/app-cuda" -j 2 >/dev/null
  [ -x "$work/app-cuda/classify" ] || { echo "FAIL: the nvcc build made no classify"; exit 1; }
  echo "ok: classify built with nvcc and linked to the CUDA runtime: $(ldd "$work/app-cuda/classify" | grep -o 'libcudart[^ ]*' | head -1)"
else
  echo "SKIPPED: $nvcc not found (it comes with this machine image): the CUDA build of the example is NOT checked"
fi

step "examples/python: magneto.compile of a torchvision model exported by the script, with the installed magneto package"
pyout="$(env -u MAGNETO_HOME -u MAGNETOC PYTHONPATH="$work/prefix/lib/python3/dist-packages" \
  $py "$root/examples/python/classify_torchvision.py" --out "$work/python" --runs 5)" ||
  { echo "$pyout"; echo "FAIL: examples/python/classify_torchvision.py"; exit 1; }
echo "$pyout"
grep -q "^magnetoc: $work/prefix/bin/magnetoc$" <<<"$pyout" ||
  { echo "FAIL: the installed magneto package did not use the installed magnetoc"; exit 1; }

step "a wrong-sized input file gets a message, not a crash"
head -c 100 "$work/input.raw" > "$work/short.raw"
if "$work/app-installed/classify" "$work/short.raw" 2>"$work/err.txt"; then
  echo "FAIL: a short input file was accepted"; exit 1
fi
grep -q "must hold exactly" "$work/err.txt" && echo "ok: $(cat "$work/err.txt")"

step "examples/generate: greedy decoding with a KV-cache decoder from C and from Python, against PyTorch"
gen="$work/generate"
$py "$root/examples/generate/export_decoder.py" "$gen" --tokens 32 2>&1 | grep -v "Warning" | tail -1
want="$(cat "$gen/expected.txt")"
env -u MAGNETO_HOME "$magnetoc" compile "$gen/model.onnx" --name decoder -o "$gen/pkg" \
  --dynamic seq=1..8 --dynamic past=0..64 --shared -q
cc -O1 -std=c99 -Wall -Wextra -Werror -I "$gen/pkg" "$root/examples/generate/generate.c" \
  -L "$gen/pkg" -ldecoder -Wl,-rpath,"$gen/pkg" -o "$gen/generate"
# bind: the caches bound to one buffer each (decoder_bind_kv: a step writes only its new
# positions); copy: a present buffer per step, swapped with the past
for mode in bind copy; do
  for threads in 1 2; do
    got="$("$gen/generate" "$gen/dims.txt" "$gen/prompt.txt" 32 "$threads" "$mode")"
    [ "$got" = "$want" ] || { echo "FAIL: generate.c ($mode) at $threads thread(s): '$got', PyTorch's '$want'"; exit 1; }
    echo "ok: generate.c ($mode) at $threads thread(s): the 32 tokens equal PyTorch's"
  done
  got="$($py "$root/examples/generate/generate.py" "$gen/pkg" "$gen/dims.txt" "$gen/prompt.txt" 32 "$mode")"
  [ "$got" = "$want" ] || { echo "FAIL: generate.py ($mode): '$got', PyTorch's '$want'"; exit 1; }
  echo "ok: generate.py ($mode): the 32 tokens equal PyTorch's ($want)"
done
section_end
echo "examples: PASS"
