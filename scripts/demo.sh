#!/usr/bin/env bash
# The main job on a bundled model: SqueezeNet 1.1 (Fire modules: a squeeze 1x1 conv, then
# expand 1x1 and expand 3x3 convs in parallel on the same tensor, joined by a Concat).
#   1. set up the machine and build magnetoc,
#   2. export the model from torchvision's definition (seeded weights, BatchNorm-free) with its
#      PyTorch output as test data,
#   3. compile it to a CPU library package with magnetoc and build it with the package's CMake,
#   4. run the package's runner on the test input: print the top-5 outputs, PyTorch's top-5, the
#      largest difference, and the latency.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
threads="${MAGNETO_THREADS:-2}"

bash scripts/setup.sh
echo "== building magnetoc"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j 2 --target magnetoc >/dev/null

echo "== exporting SqueezeNet 1.1 (torchvision definition, seeded weights)"
/usr/bin/python3 models/export.py --out build/zoo --models squeezenet1_1 >/dev/null
model=build/zoo/squeezenet1_1

echo "== magnetoc compile"
build/bin/magnetoc compile "$model/model.onnx" -o build/demo/squeezenet --name squeezenet --build
pkg=build/demo/squeezenet

echo "== running the library (runner built from the package's CMake)"
/usr/bin/python3 tools/pb_raw.py to-raw "$model/test_data_set_0/input_0.pb" build/demo/input_0.bin
"$pkg/build/squeezenet_runner" --input build/demo/input_0.bin --output build/demo/output_0.bin \
  --runs 20 --warmup 3 --threads "$threads" --quiet | tail -3
/usr/bin/python3 tools/pb_raw.py top5 build/demo/output_0.bin "$model/test_data_set_0/output_0.pb"
