#!/usr/bin/env bash
# End-to-end test of magnetoc: compile a tiny ONNX model (made with onnx.helper), build the package
# with its own CMake, link it into a C program, install it and find_package it, check it against
# numpy's output (and fail on a wrong one), bench it, --weights-file, determinism, help and errors.
# usage: cli_test.sh BIN_DIR SOURCE_DIR        (exit 77: skipped, no python3 with onnx)
set -uo pipefail
bindir="$1"
srcdir="$2"
magnetoc="$bindir/magnetoc"
here="$srcdir/tests/e2e"
py=/usr/bin/python3
work="$(mktemp -d "${TMPDIR:-/tmp}/magneto-cli-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fails=0
step() { echo "== $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_rc() {  # expect_rc CODE DESCRIPTION -- command...
  local want="$1" what="$2"
  shift 3
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  if [ "$rc" != "$want" ]; then
    fail "$what: exit $rc, expected $want"
    cat "$work/out.txt" "$work/err.txt" | tail -20
  fi
}

source "$srcdir/tests/lib/missing_tool.sh"
if ! $py -c 'import onnx, numpy' 2>/dev/null; then
  missing_tool "$py with onnx and numpy is needed: the CLI tests did not run"
fi
$py "$here/make_tiny_model.py" "$work/m" || { echo "cannot make the test model"; exit 1; }
model="$work/m/tiny.onnx"

step "help, version and bad arguments"
expect_rc 0 "--help" -- "$magnetoc" --help
grep -q "compile" "$work/out.txt" || fail "--help lists no commands"
expect_rc 0 "--version" -- "$magnetoc" --version
for cmd in compile check bench; do
  expect_rc 0 "$cmd --help" -- "$magnetoc" $cmd --help
  grep -q "e.g." "$work/out.txt" || fail "$cmd --help has no examples"
done
expect_rc 1 "unknown flag" -- "$magnetoc" compile "$model" -o "$work/x" --bogus
grep -q "magnetoc: error: unknown option '--bogus'" "$work/err.txt" || fail "no message for a bad flag"
expect_rc 1 "no -o" -- "$magnetoc" compile "$model"
expect_rc 1 "missing model" -- "$magnetoc" compile "$work/nope.onnx" -o "$work/x"
grep -q "magnetoc: error:" "$work/err.txt" || fail "no message for a missing model"
expect_rc 0 "cuda target" -- "$magnetoc" compile "$model" -o "$work/cu" --target cuda
grep -q "__global__ void" "$work/cu/tiny.cu" || fail "--target cuda wrote no kernels"
grep -q "^TARGET = \"cuda\"" "$work/cu/tiny.py" || fail "--target cuda wrote no tiny.py"
expect_rc 1 "unknown target" -- "$magnetoc" compile "$model" -o "$work/x" --target tpu
grep -q "unknown target 'tpu'" "$work/err.txt" || fail "no message for an unknown target"
expect_rc 1 "bad shape" -- "$magnetoc" compile "$model" -o "$work/x" --shape x=1xfoo
expect_rc 1 "bad name" -- "$magnetoc" compile "$model" -o "$work/x" --name 9lives
# --bind INPUT=FILE.pb compiles the input as a constant (what check does with shape-deciding inputs).
expect_rc 0 "--bind" -- "$magnetoc" compile "$model" -o "$work/bound" --bind x="$work/m/test_data_set_0/input_0.pb" -v
grep -q "input 'x' bound to a constant f32\[1,3,8,8\]" "$work/err.txt" || fail "--bind did not bind x"
expect_rc 1 "--bind without a file" -- "$magnetoc" compile "$model" -o "$work/x" --bind x
grep -q "expects INPUT=FILE.pb" "$work/err.txt" || fail "no message for --bind without a file"
expect_rc 1 "--bind of no input" -- "$magnetoc" compile "$model" -o "$work/x" --bind y="$work/m/test_data_set_0/input_0.pb"
grep -q "which is not a graph input" "$work/err.txt" || fail "no message for --bind of an unknown input"

step "compile --build"
expect_rc 0 "compile --build" -- "$magnetoc" compile "$model" -o "$work/pkg" --name tiny --build -q
for f in tiny.h tiny.cpp tiny_weights.bin tiny_weights.S CMakeLists.txt README.md report.json \
         tiny.py runtime/mg_runtime.h build/libtiny.a build/libtiny.so build/tiny_runner; do
  [ -e "$work/pkg/$f" ] || fail "package lacks $f"
done
grep -q '"kernels": ' "$work/pkg/report.json" || fail "report.json has no kernels"
if grep -rq "$work" "$work/pkg"/*.h "$work/pkg"/*.cpp "$work/pkg"/*.txt "$work/pkg"/*.json "$work/pkg"/*.md "$work/pkg"/*.py; then
  fail "generated files contain an absolute path"
fi

step "determinism"
expect_rc 0 "second compile" -- "$magnetoc" compile "$model" -o "$work/pkg2" --name tiny -q
diff -r -q -x build "$work/pkg" "$work/pkg2" || fail "two compiles of the same model differ"

step "link the package into a C program"
cc -O1 -c "$here/use_tiny.c" -I "$work/pkg" -o "$work/use_tiny.o" &&
  c++ "$work/use_tiny.o" "$work/pkg/build/libtiny.a" -lpthread -o "$work/use_tiny" ||
  fail "cannot link the package into a C program"
expect_rc 0 "C program" -- "$work/use_tiny" "$work/m/x.bin" "$work/m/y.bin"
cat "$work/out.txt" "$work/err.txt"

step "runner"
expect_rc 0 "runner --info" -- "$work/pkg/build/tiny_runner" --info
grep -q "input 0 x dtype=1 dims=1x3x8x8" "$work/out.txt" || fail "runner --info: $(cat "$work/out.txt")"
# --dims: a static package takes exactly its own shape (and reports the outputs'), refuses others.
expect_rc 0 "runner --dims (own shape)" -- "$work/pkg/build/tiny_runner" --quiet --dims 0=1x3x8x8
grep -q "output 0 dims=1x4x8x8" "$work/out.txt" || fail "runner --dims: $(cat "$work/out.txt")"
expect_rc 1 "runner --dims (another shape)" -- "$work/pkg/build/tiny_runner" --quiet --dims x=2x3x8x8
grep -q "tiny_set_input_dims: input 0 ('x') dim 0 is static: it must be 1, got 2" "$work/err.txt" ||
  fail "runner --dims: no message for a refused shape: $(cat "$work/err.txt")"

step "install and find_package"
expect_rc 0 "cmake --install" -- cmake --install "$work/pkg/build" --prefix "$work/prefix"
mkdir -p "$work/app"
cat >"$work/app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(app C CXX)
find_package(tiny REQUIRED)
add_executable(app use_tiny.c)
target_link_libraries(app PRIVATE tiny::tiny)
set_target_properties(app PROPERTIES LINKER_LANGUAGE CXX)
CMAKE
cp "$here/use_tiny.c" "$work/app/"
expect_rc 0 "find_package(tiny)" -- bash -c "cmake -S '$work/app' -B '$work/app/build' -DCMAKE_PREFIX_PATH='$work/prefix' && cmake --build '$work/app/build'"
expect_rc 0 "installed package runs" -- "$work/app/build/app" "$work/m/x.bin" "$work/m/y.bin"

step "Python: tiny.py on the CMake-built build/libtiny.so, and on the installed one"
# NAME.py finds the library beside itself, in build/, or (installed: PREFIX/lib/python) in ../.
py_run='import sys, numpy as np, tiny
m = tiny.Model(threads=2)
y = m.run({"x": np.fromfile(sys.argv[1], np.float32).reshape(1, 3, 8, 8)})["y"]
err = float(abs(y - np.fromfile(sys.argv[2], np.float32).reshape(y.shape)).max())
print(tiny._lib._name, err)
sys.exit(0 if err < 1e-4 else 1)'
expect_rc 0 "tiny.py with build/libtiny.so" -- env PYTHONPATH="$work/pkg" $py -c "$py_run" "$work/m/x.bin" "$work/m/y.bin"
grep -q "/build/libtiny.so " "$work/out.txt" || fail "tiny.py: $(cat "$work/out.txt" "$work/err.txt")"
expect_rc 0 "installed tiny.py" -- env PYTHONPATH="$work/prefix/lib/python" $py -c "$py_run" "$work/m/x.bin" "$work/m/y.bin"
grep -q "prefix/lib/libtiny.so " "$work/out.txt" || fail "installed tiny.py: $(cat "$work/out.txt" "$work/err.txt")"

step "check"
expect_rc 0 "check" -- "$magnetoc" check "$model" --data "$work/m/test_data_set_0"
grep -q "output y: max_abs_err=.* ok" "$work/out.txt" || fail "check printed no ok line: $(cat "$work/out.txt")"
expect_rc 1 "check against a wrong output" -- "$magnetoc" check "$model" --data "$work/m/test_data_set_wrong" -q
grep -q "output y: .*FAIL" "$work/out.txt" || fail "check printed no FAIL line"
# A per-output tolerance (--atol NAME=A) applies to that output; an unknown output name is an error.
expect_rc 0 "check with --atol y=1e9 against the wrong output" -- "$magnetoc" check "$model" \
  --data "$work/m/test_data_set_wrong" --atol y=1e9 -q
expect_rc 1 "check --atol for an output the model lacks" -- "$magnetoc" check "$model" \
  --data "$work/m/test_data_set_0" --atol nosuch=1
grep -q "no output 'nosuch'" "$work/err.txt" || fail "check --atol nosuch=1 did not name the output: $(cat "$work/err.txt")"
# --unordered-rows names outputs too; rows paired in any order are reported on the output's line.
expect_rc 1 "check --unordered-rows of an unknown output" -- "$magnetoc" check "$model" \
  --data "$work/m/test_data_set_0" --unordered-rows y,nosuch
grep -q "unordered-rows y,nosuch: the model has no output 'nosuch'" "$work/err.txt" ||
  fail "check --unordered-rows y,nosuch did not name the output: $(cat "$work/err.txt")"
expect_rc 0 "check --unordered-rows y" -- "$magnetoc" check "$model" --data "$work/m/test_data_set_0" \
  --unordered-rows y
grep -q "^output y: .* ok (rows matched in any order: 0 of [0-9]* paired out of place)" "$work/out.txt" ||
  fail "check --unordered-rows y printed no row pairing: $(cat "$work/out.txt")"
# Two references for the same inputs: the runner runs once, and each reference is compared.
expect_rc 1 "check against a right and a wrong output of the same input" -- "$magnetoc" check "$model" \
  --data "$work/m/test_data_set_0" --data "$work/m/test_data_set_wrong" -v
[ "$(grep -c "output y: max_abs_err=.* ok" "$work/out.txt")" = 1 ] && grep -q "output y: .*FAIL" "$work/out.txt" ||
  fail "the right and the wrong reference were not each compared: $(cat "$work/out.txt")"
[ "$(grep -c "magnetoc: running on" "$work/err.txt")" = 1 ] && grep -q "were run above" "$work/err.txt" ||
  fail "the runner did not run once for two data sets with the same inputs: $(cat "$work/err.txt")"
expect_rc 1 "check without data" -- "$magnetoc" check "$model"
expect_rc 0 "check --target hip --emulate" -- "$magnetoc" check "$model" --data "$work/m/test_data_set_0" --target hip --emulate -q
grep -q "output y: max_abs_err=.* ok" "$work/out.txt" || fail "check --target hip --emulate printed no ok line"
expect_rc 0 "check --weights-file --threads 2" -- "$magnetoc" check "$model" --data "$work/m/test_data_set_0" --weights-file --threads 2 -q

step "check binds only shape-deciding inputs, names them, and refuses a folded PASS (issue #40)"
$py "$here/check_binding_model.py" "$work/cb" || fail "cannot make the binding models"
cb="$work/cb"
# An If on data whose branches both give f32[1,1]: x decides no shape, so it is not bound (never a
# PASS of a model folded for x's value); the package selects between both branches at run time.
expect_rc 0 "check of an If on data with same-shaped branches" -- "$magnetoc" check "$cb/if_same_shape/model.onnx" \
  --data "$cb/if_same_shape/test_data_set_0" -v
grep -q "binding input" "$work/err.txt" && fail "check bound x of if_same_shape: $(grep "binding input" "$work/err.txt")"
grep -q "the condition is computed at run time: both branches imported, 1 output selected by Where" "$work/err.txt" ||
  fail "check of if_same_shape did not select at run time: $(tail -3 "$work/err.txt")"
grep -q "^check: PASS" "$work/out.txt" || fail "check of if_same_shape printed no PASS: $(cat "$work/out.txt")"
grep -q "bound at compile time" "$work/out.txt" && fail "the PASS line of if_same_shape names a bound input"
# An If whose branches differ in two dims: its condition c is bound, x stays a run-time input.
expect_rc 0 "check of an If choosing a shape" -- "$magnetoc" check "$cb/if_other_shape/model.onnx" \
  --data "$cb/if_other_shape/test_data_set_0" -q
grep -q "^check: PASS.*(bound at compile time: c)$" "$work/out.txt" ||
  fail "the PASS line of if_other_shape does not name c: $(cat "$work/out.txt")"
# A Reshape whose shape is an input: s is bound and named, x is read at run time.
expect_rc 0 "check of a Reshape by an input" -- "$magnetoc" check "$cb/reshape_input/model.onnx" \
  --data "$cb/reshape_input/test_data_set_0" -q
grep -q "^check: PASS.*(bound at compile time: s)$" "$work/out.txt" ||
  fail "the PASS line of reshape_input does not name s: $(cat "$work/out.txt")"
# ConstantOfShape(s): once s is bound the package reads nothing at run time: FOLDED, exit 5.
expect_rc 5 "check of a model that folds to a constant" -- "$magnetoc" check "$cb/folds/model.onnx" \
  --data "$cb/folds/test_data_set_0" -q
grep -q "^check: FOLDED: the model folded to a constant once inputs s were bound: this check tests only constant folding" \
  "$work/out.txt" || fail "check of folds printed no FOLDED line: $(cat "$work/out.txt")"
grep -q "check: PASS" "$work/out.txt" && fail "check of folds printed a PASS"

step "--weights-file"
expect_rc 0 "compile --weights-file" -- "$magnetoc" compile "$model" -o "$work/wf" --name tiny --weights-file -q
[ -e "$work/wf/tiny_weights.S" ] && fail "--weights-file still writes tiny_weights.S"
# The runtime library this magnetoc links (its check's link line, -v), not the newest one in a
# cache that other checkouts' builds may share.
"$magnetoc" check "$model" --data "$work/m/test_data_set_0" -v >"$work/rt.txt" 2>&1
lib="$(grep -o '[^ ]*/runtime-cpu-[^ /]*/libmagneto_rt.a' "$work/rt.txt" | head -1)"
if [ -n "$lib" ]; then
  c++ -O1 -std=c++17 -I "$work/wf" "$work/wf/tiny.cpp" "$work/use_tiny.o" "$lib" -lpthread -o "$work/use_wf" ||
    fail "cannot link the --weights-file package"
  expect_rc 0 "weights from a file" -- "$work/use_wf" "$work/m/x.bin" "$work/m/y.bin" "$work/wf/tiny_weights.bin"
  expect_rc 2 "NULL weights path without embedded weights" -- "$work/use_wf" "$work/m/x.bin" "$work/m/y.bin" -
  grep -q "weights-file" "$work/err.txt" || fail "no message for a NULL weights path"
  head -c 100 "$work/wf/tiny_weights.bin" >"$work/short.bin"
  expect_rc 2 "truncated weights" -- "$work/use_wf" "$work/m/x.bin" "$work/m/y.bin" "$work/short.bin"
  grep -q "wrong size" "$work/err.txt" || fail "no message for truncated weights"
else
  fail "no cached runtime library found after check"
fi

step "bench"
expect_rc 0 "bench" -- "$magnetoc" bench "$model" --runs 3 --threads 1 --work-dir "$work/bench" -q
[ "$(tail -1 "$work/out.txt" | cut -d= -f1)" = "median_ms" ] || fail "bench's last line is not median_ms=: $(cat "$work/out.txt")"
expect_rc 0 "bench (cached)" -- "$magnetoc" bench "$model" --runs 2 --work-dir "$work/bench"
grep -q "using the cached build" "$work/err.txt" || fail "bench did not reuse its build"
# --profile: the roofline probed on this machine, then per op kind and per step the achieved
# GFLOP/s and GB/s (the tiny model's steps know their work at compile time). bench prints the
# runner's output, the profile included, on stdout.
expect_rc 0 "bench --profile" -- "$magnetoc" bench "$model" --runs 5 --threads 1 --profile --work-dir "$work/bench"
grep -Eq "roofline \(probed now\): FMA peak [1-9][0-9.]* GFLOP/s per thread .*bandwidth [0-9.]*[1-9][0-9.]* GB/s" "$work/out.txt" ||
  fail "bench --profile printed no probed roofline: $(tail -n 12 "$work/out.txt")"
grep -Eq "^ +[0-9.]+ ms +[0-9.]+% +[A-Za-z]+ +[0-9]+ step\(s\) +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9]+%$" "$work/out.txt" ||
  fail "bench --profile's op kinds have no GFLOP/s and GB/s columns: $(tail -n 12 "$work/out.txt")"
# The default cache (MAGNETO_CACHE_DIR/bench) keeps the 8 most recently used builds.
mkdir -p "$work/cache/bench"
if [ -n "${MAGNETO_CACHE_DIR:-}" ]; then  # reuse the built runtime: link all but the bench folder
  for e in "$MAGNETO_CACHE_DIR"/*; do [ "$(basename "$e")" = bench ] || ln -s "$e" "$work/cache/"; done
fi
for i in 1 2 3 4 5 6 7 8 9; do mkdir -p "$work/cache/bench/old$i"; touch -d "2026-01-0$i" "$work/cache/bench/old$i"; done
expect_rc 0 "bench (default cache)" -- env MAGNETO_CACHE_DIR="$work/cache" "$magnetoc" bench "$model" --runs 1 -q
[ "$(ls "$work/cache/bench" | wc -l)" = 8 ] || fail "the bench cache was not pruned to 8 builds: $(ls "$work/cache/bench")"
[ ! -e "$work/cache/bench/old2" ] && [ -e "$work/cache/bench/old3" ] || fail "the bench cache pruned the wrong builds: $(ls "$work/cache/bench")"

relu=/usr/share/libonnx-testdata/data/node/test_relu
if [ -e "$relu/model.onnx" ]; then
  step "ONNX backend test: test_relu"
  expect_rc 0 "check test_relu" -- "$magnetoc" check "$relu/model.onnx" --data "$relu/test_data_set_0"
  cat "$work/out.txt"
  # bench of a GPU target on the CPU emulation: the cache key hashes the GPU runtime (runtime/gpu);
  # it once looked for a runtime/cuda folder and stopped before building anything.
  for t in cuda hip; do
    expect_rc 0 "bench --target $t --emulate" -- "$magnetoc" bench "$relu/model.onnx" --target $t --emulate --runs 1 -q
    [ "$(tail -1 "$work/out.txt" | cut -d= -f1)" = "median_ms" ] || fail "bench --target $t --emulate printed no median_ms=: $(cat "$work/out.txt" "$work/err.txt" | tail -5)"
  done
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all passed"
