#!/usr/bin/env bash
# End-to-end cases on one generated model each (ctest's e2e.wide_merge, e2e.batch_merge_conv,
# e2e.ab_parallel, e2e.gpu_recurrent_joint, e2e.gpu_variadic, e2e.parallel_roots,
# e2e.parallel_forms, e2e.qdq, e2e.control_flow, e2e.loop_decoder, e2e.dynamic_cnn,
# e2e.data_extent, e2e.sequences, e2e.empty_past, e2e.topk, e2e.kv_bind, e2e.runtime_if). One helper does
# what each needs: generate the model and its expected outputs (tests/e2e/*_model.py: numpy or
# PyTorch, never our interpreter; onnxruntime-node's outputs for qdq) into a scratch folder, check
# it on the targets named, assert on what the compiler printed or emitted, and remove the folder
# however the case ends.
#
#   model_cases.sh MAGNETOC SOURCE_DIR CASE
#
# Prints one line per check; exits 0 when all pass, 1 at the first failure (with its output).
set -euo pipefail
magnetoc=${1:?usage: model_cases.sh MAGNETOC SOURCE_DIR CASE}
src=${2:?source dir}
case_name=${3:?case}
dir="$(mktemp -d "${TMPDIR:-/tmp}/magneto-e2e-$case_name.XXXXXX")"
trap 'rm -rf "$dir"' EXIT

fail() { echo "FAIL: $case_name: $*"; exit 1; }
# model GENERATOR [SUBFOLDER]: runs tests/e2e/GENERATOR into the scratch folder (or a subfolder).
model() {
  local out="$dir${2:+/$2}"
  mkdir -p "$out"
  /usr/bin/python3 "$src/tests/e2e/$1" "$out" || fail "the generator $1 failed"
}
# run DESCRIPTION -- COMMAND...: runs it, keeps its output in $dir/out; fails the case with it.
run() {
  local what=$1
  shift 2
  if "$@" >"$dir/out" 2>&1; then echo "ok: $what"; else cat "$dir/out"; fail "$what"; fi
}
# check_on TARGET...: magnetoc check of the model on each target (cpu, cpu2 = 2 threads, cpu-serial
# = --no-parallel-opt, cuda and hip on the CPU emulation) against the generator's expected outputs.
check_on() {
  local t args
  for t in "$@"; do
    case $t in
      cpu) args=() ;;
      cpu2) args=(--threads 2) ;;
      cpu-serial) args=(--no-parallel-opt) ;;
      cuda | hip) args=(--target "$t" --emulate) ;;
      *) fail "unknown target $t" ;;
    esac
    run "check on $t" -- "$magnetoc" check "$dir/model.onnx" --data "$dir/test_data_set_0" -q "${args[@]}"
  done
}
# ort_outputs: onnxruntime-node's outputs on the generated input become the expected outputs
# (exit 77, a skip, when node or onnxruntime-node is missing; a failure under
# MAGNETO_REQUIRE_TOOLS=1, where scripts/setup.sh has installed them).
ort_outputs() {
  if ! command -v node >/dev/null || ! (cd "$src/tools/ort" && node -e "require('onnxruntime-node')" >/dev/null 2>&1); then
    [ "${MAGNETO_REQUIRE_TOOLS:-0}" = 1 ] && fail "node or onnxruntime-node is missing though scripts/setup.sh installs them"
    echo "SKIPPED: node or onnxruntime-node missing (scripts/setup.sh installs them)"
    exit 77
  fi
  run "onnxruntime-node's outputs" -- node "$src/tools/ort/run_ort.js" "$dir/model.onnx" \
    --inputs "$dir"/test_data_set_0/input_*.pb --outputs-dir "$dir/test_data_set_0" --threads 1
}
# expect_in FILE REGEX DESCRIPTION: grep -E in a file the case produced.
expect_in() { grep -Eq "$2" "$1" || { tail -20 "$1"; fail "$3 (no line matching '$2' in $1)"; }; echo "ok: $3"; }

case "$case_name" in
  wide_merge)  # four same-input convolutions of different kernel sizes become one wide conv
    model wide_merge_model.py
    check_on cpu
    ;;
  batch_merge_conv)  # a ResNeXt block written as its 64 paths: a wide conv and two grouped convs
    model resnext_paths_model.py
    run "report" -- "$magnetoc" report "$dir/model.onnx" -q
    expect_in "$dir/out" 'parallel groups: 3 \(2 batch, 1 wide\)' "the report shows 2 batch and 1 wide group"
    check_on cpu cpu2 cuda hip
    ;;
  ab_parallel)  # tools/bench/ab_parallel.sh's table row, interval and closing line (format only)
    model resnext_paths_model.py resnext_paths
    run "ab_parallel.sh" -- bash "$src/tools/bench/ab_parallel.sh" --pairs 3 --runs 3 \
      --magnetoc "$magnetoc" "$dir/resnext_paths"
    cat "$dir/out"
    expect_in "$dir/out" '^[|] resnext_paths [|] 3 [(]2 batch, 1 wide[)] [|] [0-9.]+ [|] [0-9.]+ [|] [0-9.]+ [|] [0-9.]+-[0-9.]+ [|] (faster|slower|within noise) [|]$' \
      "the model's table row"
    expect_in "$dir/out" '^geomean gain over the 1 models with groups: [0-9.]+$' "the closing line"
    ;;
  gpu_recurrent_joint)  # three LSTM/GRU siblings: one joint group, its second phase a joint kernel
    model recurrent_joint_model.py
    check_on cuda
    run "compile --target cuda" -- "$magnetoc" compile "$dir/model.onnx" --target cuda --name rj -o "$dir/pkg" -q
    expect_in "$dir/pkg/rj.cu" 'joint kernel.*phase 2 of 2' "the second phase is a joint kernel"
    ;;
  gpu_variadic)  # Sum/Mean/Max/Min with more operands than a GPU map item takes: launch phases
    model variadic_model.py
    check_on cuda hip
    run "compile --target cuda" -- "$magnetoc" compile "$dir/model.onnx" --target cuda --name vs -o "$dir/pkg" -q
    n=$(grep -o '^// launch [0-9]*: step [0-9]* sum13 (Sum)' "$dir/pkg/vs.cu" | sort -u | wc -l)
    [ "$n" -eq 3 ] || fail "the 13-operand Sum takes $n launches, expected 3"
    echo "ok: the 13-operand Sum takes 3 launches"
    ;;
  parallel_roots)  # towers on Split outputs, two-input towers, heads on three feature-map inputs
    model parallel_roots_model.py
    run "report --target cuda" -- "$magnetoc" report "$dir/model.onnx" --target cuda -q --resources estimate
    expect_in "$dir/out" '^parallel groups: 4 \(4 joint\)' "cuda: 4 joint groups (Split towers x2, input roots x2)"
    expect_in "$dir/out" '^launch resources \([0-9]+ launches, source estimate' "cuda: every launch's resources listed"
    expect_in "$dir/out" 'kernel launches +23 -> 9 ' "cuda: 23 launches become 9"
    check_on cpu cpu2 cpu-serial cuda hip
    ;;
  parallel_forms)  # MoE of 8 experts (16-operand weighted sum), grouped-query attention (narrow K/V)
    model parallel_forms_model.py
    run "report --target cuda" -- "$magnetoc" report "$dir/model.onnx" --target cuda -q --resources estimate
    expect_in "$dir/out" '^parallel groups: 3 \(3 joint\)' "cuda: 3 joint groups"
    expect_in "$dir/out" 'joint +12 -> 1 .*/experts.7/experts.7.0/Gemm, /q/Gemm, /k/Gemm, /v/Gemm' \
      "cuda: the gate, 8 experts and the Q/K/V projections (K, V narrower) in one joint kernel"
    # 16 tokens: every member of that launch is the split-K GEMV program (the gate's 4 outputs
    # transposed), and they still share the one launch.
    run "compile --target cuda" -- "$magnetoc" compile "$dir/model.onnx" --target cuda --name pf -o "$dir/pkg" -q
    n=$(sed -n '/^struct L0Args/,/^};/p' "$dir/pkg/pf.cu" | grep -c '// step [0-9]*, gemv 16x8 t256')
    [ "$n" -eq 12 ] || fail "the joint launch has $n gemvBlock<16, 8, 256> members, expected 12"
    echo "ok: cuda: the joint launch's 12 members run gemvBlock<16, 8, 256>"
    check_on cpu cpu-serial cuda hip
    ;;
  qdq)  # Q/DQ around a Conv and a MatMul: onnxruntime's outputs exactly, CPU and GPU emulations
    model qdq_model.py
    ort_outputs
    for t in "" "--threads 2" "--target cuda --emulate" "--target hip --emulate"; do
      # shellcheck disable=SC2086  # $t is a list of arguments
      run "check ${t:-on cpu (1 thread)} at tolerance 0" -- "$magnetoc" check "$dir/model.onnx" \
        --data "$dir/test_data_set_0" --rtol 0 --atol 0 -q $t
    done
    ;;
  control_flow)  # a Loop with an If in its body and a Scan, unrolled on import: numpy's outputs
    model control_flow_model.py
    run "compile without the trip count" -- sh -c "! '$magnetoc' compile '$dir/model.onnx' -o '$dir/pkg' -q"
    expect_in "$dir/out" "node 'rows' \(Loop\): the trip count M is not a compile-time constant" \
      "compile refuses the Loop while its trip count is an input"
    run "check -v on cpu" -- "$magnetoc" check "$dir/model.onnx" --data "$dir/test_data_set_0" -v
    expect_in "$dir/out" "node 'rows' \(Loop\): unrolled 4 iterations" "check binds n and unrolls the Loop"
    expect_in "$dir/out" "node 'parity_if' \(If\): condition constant false, else_branch" \
      "the If in the body is specialised per iteration"
    expect_in "$dir/out" "node 'columns' \(Scan\): unrolled 3 steps" "the Scan is unrolled"
    check_on cpu2 cuda hip
    ;;
  runtime_if)  # issue #40: Ifs on the data, both branches imported and selected at run time
    model runtime_if_model.py
    sets=()
    for k in 0 1 2 3; do sets+=(--data "$dir/test_data_set_$k"); done
    run "check -v on cpu (four data sets, each condition true and false)" -- \
      "$magnetoc" check "$dir/model.onnx" "${sets[@]}" -v
    expect_in "$dir/out" "node 'same_if' \(If\): the condition is computed at run time: both branches imported, 1 output selected by Where" \
      "same-shaped branches select with Where"
    expect_in "$dir/out" "node 'keep_if' \(If\): the condition is computed at run time: both branches imported, 0 outputs selected by Where, 1 by Compress" \
      "[4] against [0] selects with Compress (a run-time extent)"
    ! grep -q "binding input" "$dir/out" || fail "check bound an input: the conditions would fold"
    echo "ok: no input bound (the package decides both conditions)"
    for t in cpu2 cuda hip; do
      local_args=()
      case $t in cpu2) local_args=(--threads 2) ;; *) local_args=(--target "$t" --emulate) ;; esac
      run "check on $t (four data sets, one build)" -- "$magnetoc" check "$dir/model.onnx" "${sets[@]}" -q "${local_args[@]}"
    done
    run "compile the If whose branches differ in rank" -- sh -c \
      "'$magnetoc' compile '$dir/ranks/model.onnx' -o '$dir/pkg' -q; test \$? -eq 2"
    expect_in "$dir/out" "node 'rank_if' \(If\): output 'odd' of an If whose condition is known only at run time: then_branch gives rank 2 and else_branch rank 1" \
      "compile refuses branches of two ranks (exit 2), naming the node and the output"
    ;;
  loop_decoder)  # the zoo's gru_greedy_decoder: a real Loop, PyTorch's tokens; early exit refused
    model loop_decoder_model.py
    run "check -v on cpu" -- "$magnetoc" check "$dir/model.onnx" --data "$dir/test_data_set_0" -v
    expect_in "$dir/out" "node '[^']*' \(Loop\): unrolled 12 iterations" "the Loop unrolls its 12 steps"
    ! grep -q "binding input" "$dir/out" || fail "check bound an input: the decoder would run folded"
    echo "ok: no input bound (the package computes the decoding)"
    grep '^output ' "$dir/out" | sed 's/^/  cpu: /'
    for t in cpu-serial cuda hip; do
      check_on "$t"
      grep '^output ' "$dir/out" | sed "s/^/  $t: /"
    done
    # Greedy decoding that stops at EOS: TorchScript's break is an If in the body on the tokens.
    run "compile the early-exit decoder" -- sh -c \
      "'$magnetoc' compile '$dir/early_exit/model.onnx' -o '$dir/pkg' -q; test \$? -eq 2"
    # The If in the body (the break) imports as a run-time selection; the Loop's condition it
    # computes is then data after the first iteration.
    expect_in "$dir/out" "node '[^']*' \(Loop\): the condition after iteration 0 is not a compile-time constant \(it depends on the model's data\)" \
      "compile refuses the early exit (exit 2), naming the Loop and its data-dependent condition"
    ;;
  dynamic_cnn)  # issue #17: one build of a model with symbolic batch and length, run at four shapes
    # on cpu (1 and 2 threads, serial), cuda and hip (emulated)
    # sets at (batch, seq) 1:5, 3:17, 8:64 and 16:9, the last past the compiled range
    /usr/bin/python3 "$src/tests/e2e/dynamic_cnn_model.py" "$dir" 1:5 3:17 8:64 16:9 >/dev/null ||
      fail "the generator dynamic_cnn_model.py failed"
    sets=(--data "$dir/test_data_set_0" --data "$dir/test_data_set_1" --data "$dir/test_data_set_2")
    for extra in "" "--threads 2" "--no-parallel-opt"; do
      # shellcheck disable=SC2086  # EXTRA are words
      run "check one build at three shapes ${extra:-(1 thread)}" -- "$magnetoc" check "$dir/model.onnx" \
        "${sets[@]}" --dynamic batch=1..8 --dynamic seq=1..64 --opt batch=1,8 -q $extra
      expect_in "$dir/out" "PASS: 3 output\(s\) in 3 data set\(s\)" "all three shapes match PyTorch"
    done
    run "a batch past the range" -- sh -c "! '$magnetoc' check '$dir/model.onnx' --data '$dir/test_data_set_3' \
      --dynamic batch=1..8 --dynamic seq=1..64 -q"
    expect_in "$dir/out" "input 0 \('x'\) dim 0 \(symbol 'batch'\) must be in \[1, 8\], got 16" \
      "the package refuses batch 16 by name and range"
    # bench: one dynamic library timed at two shapes (an input's --shape given twice); a static
    # bench given two shapes of one input is refused, not silently timed at the last.
    run "bench one dynamic library at two shapes" -- "$magnetoc" bench "$dir/model.onnx" \
      --dynamic batch=1..8 --dynamic seq=1..64 --shape x=1x4x5 --shape x=8x4x64 --runs 1 --warmup 0 --threads 1 \
      --work-dir "$dir/bench" -q
    expect_in "$dir/out" "^shape x=1x4x5$" "bench heads the first shape's timing"
    expect_in "$dir/out" "^shape x=8x4x64$" "bench heads the second shape's timing"
    [ "$(grep -c '^median_ms=' "$dir/out")" = 2 ] || fail "bench at two shapes printed $(grep -c '^median_ms=' "$dir/out") medians"
    run "bench without --dynamic refuses a second shape" -- sh -c "! '$magnetoc' bench '$dir/model.onnx' \
      --shape x=1x4x5 --shape x=8x4x64 -q"
    expect_in "$dir/out" "error: .*shape x is given twice" "the second --shape of x is named"
    run "compile without --dynamic" -- sh -c "! '$magnetoc' compile '$dir/model.onnx' -o '$dir/pkg' -q"
    expect_in "$dir/out" "symbolic dimension 'batch'.*--dynamic NAME=LO..HI" "the import error suggests --dynamic"
    # cuda and hip (CPU emulation): the launch parameters are expressions of batch and seq, refilled
    # when the shape changes; one build runs the three shapes and refuses batch 16 by name.
    for t in cuda hip; do
      run "check one $t build at three shapes (emulated)" -- "$magnetoc" check "$dir/model.onnx" "${sets[@]}" \
        --dynamic batch=1..8 --dynamic seq=1..64 --opt batch=1,8 --target "$t" --emulate -q
      expect_in "$dir/out" "PASS: 3 output\(s\) in 3 data set\(s\)" "all three shapes match PyTorch on $t"
    done
    # One handle switching shapes (batch 1 -> 8 -> 3 -> 1 -> 8 -> 1, in one Python process through
    # NAME.py): the cuda/hip packages keep a graph per binding seen, each with its own launch
    # arguments; with room for 2 the least recently used are replaced (and their buffers reused).
    # Compiled with --opt batch=1,8 --opt seq=5: at (1, 5) and (8, 5) some launches run a variant
    # with the tiles the cost model chose for exactly that shape (a GEMV for the classifier), the
    # general launches elsewhere; the sets visit both points and two general shapes.
    /usr/bin/python3 "$src/tests/e2e/dynamic_cnn_model.py" "$dir/sw" 1:5 8:64 1:5 3:17 8:64 8:5 >/dev/null ||
      fail "the generator dynamic_cnn_model.py failed (switch sets)"
    sw_sets=("$dir/sw/test_data_set_0" "$dir/sw/test_data_set_1" "$dir/sw/test_data_set_3" "$dir/sw/test_data_set_2"
             "$dir/sw/test_data_set_5" "$dir/sw/test_data_set_4" "$dir/sw/test_data_set_0")
    # magnetoc report names each variant: its point, the general launch it replaces, both tiles and
    # both modeled latencies there (text and --json's "opt_variant").
    run "report the cuda variants" -- "$magnetoc" report "$dir/sw/model.onnx" --dynamic batch=1..8 --dynamic seq=1..64 \
      --opt batch=1,8 --opt seq=5 --target cuda --json "$dir/sw/report.json" -q
    expect_in "$dir/out" "tiles per --opt size \([1-9][0-9]* launch variants" "report: a section of the opt variants"
    expect_in "$dir/out" "tiles gemv 1x8 .* instead of default GEMM tile" "report: the batch-1 classifier's GEMV variant"
    expect_in "$dir/sw/report.json" '"opt_variant": \{"point": 0, "binding": "batch=1,seq=5", "instead_of": "launch[0-9]+"' \
      "report --json: opt_variant of a launch at opt point 0"
    for t in cuda hip; do
      run "compile the $t package" -- "$magnetoc" compile "$dir/sw/model.onnx" --dynamic batch=1..8 --dynamic seq=1..64 \
        --opt batch=1,8 --opt seq=5 --target "$t" -o "$dir/sw/$t" --name dcnn -q
      code="$dir/sw/$t/dcnn.$([ "$t" = cuda ] && echo cu || echo hip)"
      expect_in "$code" "variant for opt point 0 \(batch=1,seq=5\): gemv" "$t: the classifier at batch 1 is a GEMV variant"
      expect_in "$code" "if \(opt == 1\) MG_LAUNCH_STEP" "$t: a launch has a variant for batch 8"
      run "build the $t package for the emulation" -- sh -c "cmake -S '$dir/sw/$t' -B '$dir/sw/$t/build' \
        -Ddcnn_EMULATE=ON -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build '$dir/sw/$t/build' -j2 >/dev/null"
      for keep in 8 2; do
        run "$t: one handle at batch 1, 8, 3, 1, 8 (seq 5), 8, 1 (graphs kept: $keep)" -- env MAGNETO_GRAPH_LOG=1 \
          MAGNETO_GRAPH_CACHE=$keep /usr/bin/python3 "$src/tests/e2e/dynamic_switch.py" "$dir/sw/$t" dcnn "${sw_sets[@]}"
        expect_in "$dir/out" "switch: 7 runs ok" "$t: every run matches PyTorch after the switches (graphs kept: $keep)"
      done
      # 8 kept: 4 shapes, 4 captures (the create-time one included).
      run "$t: graphs kept per shape" -- env MAGNETO_GRAPH_LOG=1 /usr/bin/python3 "$src/tests/e2e/dynamic_switch.py" \
        "$dir/sw/$t" dcnn "${sw_sets[@]}"
      expect_in "$dir/out" "replaying the kept graph of this binding \(4 captures\)" "$t: a shape seen before replays its graph"
      [ "$(grep -c 'captured the forward pass' "$dir/out")" = 4 ] ||
        fail "$t: $(grep -c 'captured the forward pass' "$dir/out") captures for 4 shapes"
    done
    run "a batch past the range on cuda" -- sh -c "! '$magnetoc' check '$dir/model.onnx' --data '$dir/test_data_set_3' \
      --dynamic batch=1..8 --dynamic seq=1..64 --target cuda --emulate -q"
    expect_in "$dir/out" "model_set_input_dims: input 0 \('x'\) dim 0 \(symbol 'batch'\) must be in \[1, 8\], got 16" \
      "the cuda package refuses batch 16 by name and range"
    # A Concat along the batch axis: its second operand's place in the result moves with the batch
    # (the memory plan must copy, not write in place by one binding's offsets). numpy's outputs.
    /usr/bin/python3 "$src/tests/e2e/dynamic_batch_concat_model.py" "$dir/cat" >/dev/null ||
      fail "the generator dynamic_batch_concat_model.py failed"
    for t in cpu cuda; do
      run "batch-axis Concat on $t at batch 1, 3, 8" -- "$magnetoc" check "$dir/cat/model.onnx" \
        --data "$dir/cat/test_data_set_0" --data "$dir/cat/test_data_set_1" --data "$dir/cat/test_data_set_2" \
        --dynamic batch=1..8 --target "$t" --emulate -q
      expect_in "$dir/out" "PASS: 3 output\(s\) in 3 data set\(s\)" "the batch-axis Concat matches numpy on $t"
    done
    ;;
  data_extent)  # issue #17: NonZero -> Transpose -> GatherND -> ReduceSum, the count as shape data,
    # Compress on a computed mask, TopK with K an input and with K = min(3, count), Unique of the
    # NonZero's rows (a count decided by another's values), with a dynamic batch: one cpu build
    # run at four data sets whose counts differ (0, some, every element) against numpy; the
    # producers on cuda and hip (emulated) too
    /usr/bin/python3 "$src/tests/e2e/data_extent_model.py" "$dir" >/dev/null ||
      fail "the generator data_extent_model.py failed"
    sets=()
    for k in 0 1 2 3; do sets+=(--data "$dir/test_data_set_$k"); done
    for extra in "" "--threads 2"; do
      # shellcheck disable=SC2086  # EXTRA are words
      run "check one build at four counts ${extra:-(1 thread)}" -- "$magnetoc" check "$dir/model.onnx" \
        "${sets[@]}" --dynamic batch=1..4 -q $extra
      expect_in "$dir/out" "PASS: 40 output\(s\) in 4 data set\(s\)" "every count matches numpy"
    done
    run "the package's symbols" -- "$magnetoc" compile "$dir/model.onnx" -o "$dir/pkg" --dynamic batch=1..4 \
      --shared -q
    # NAME.py on one handle, the largest count first: after a small count, the next run's buffers
    # must again hold the capacity (set_input_dims puts the data symbols back at their maximum).
    run "NAME.py returns the actual extents" -- env PYTHONPATH="$dir/pkg" /usr/bin/python3 -c "
import sys, numpy as np, onnx, model
from onnx import numpy_helper as nh
def rd(p):
    t = onnx.TensorProto(); t.ParseFromString(open(p, 'rb').read()); return nh.to_array(t)
m = model.Model()
for k in (2, 1, 0, 3):
    d = '$dir/test_data_set_%d' % k
    outs = m.run([rd('%s/input_%d.pb' % (d, i)) for i in range(3)])
    for i, (name, o) in enumerate(outs.items()):
        want = rd('%s/output_%d.pb' % (d, i))
        if o.shape != want.shape or not np.allclose(o, want, atol=1e-5):
            sys.exit('set %d output %s: %s, want %s' % (k, name, o.shape, want.shape))
print('NAME.py: 4 sets ok')"
    expect_in "$dir/out" "NAME.py: 4 sets ok" "NAME.py's arrays have the counts of each run"
    expect_in "$dir/pkg/model.cpp" '\{"nonzero_count", 0, 32, -1, 1, [0-9]+\},  // data: step #[0-9]+ \(nonzero\)' \
      "the NonZero's count is a data symbol bound from its step"
    # TopK with the constant K = 3 over the values above the threshold: the count's lower bound is
    # 3; 5 values pass (numpy's top 3), 1 is refused by the package naming the NonZero and range.
    run "top 3 of a run-time count" -- "$magnetoc" check "$dir/top3/model.onnx" --data "$dir/top3/test_data_set_0" -q
    expect_in "$dir/out" "PASS: 2 output\\(s\\) in 1 data set\\(s\\)" "the top 3 of 5 values match numpy"
    run "fewer values than K" -- sh -c "! '$magnetoc' check '$dir/top3/model.onnx' --data '$dir/top3/test_data_set_1' -q"
    expect_in "$dir/out" "step [0-9]+ \\(NonZero, node 'nonzero'\\) computed extent 1 for data symbol 'nonzero_count', outside its range \\[3, 12\\]" \
      "a count below what TopK needs is refused by node and range"
    # cuda and hip compute every producer's count at run time: Unique of the NonZero's rows, TopK
    # with K an input (and a Mul over its K values), TopK by min(3, Compress' count) and
    # NonMaxSuppression, one build per target (and cpu) at counts 0, 10 and 24 with K 0, 3, 24.
    ssets=(--data "$dir/gpu_select/test_data_set_0" --data "$dir/gpu_select/test_data_set_1"
           --data "$dir/gpu_select/test_data_set_2")
    for t in cpu cuda hip; do
      targs=()
      [ "$t" = cpu ] || targs=(--target "$t" --emulate)
      run "$t: Unique, TopK and NonMaxSuppression counts at run time" -- "$magnetoc" check \
        "$dir/gpu_select/model.onnx" "${ssets[@]}" "${targs[@]}" -q
      expect_in "$dir/out" "PASS: 30 output\(s\) in 3 data set\(s\)" "$t: every count and value matches numpy"
    done
    # cuda and hip compute NonZero's and Compress' counts at run time: one build per target at
    # counts 0, 10 and 24 (the deciding input stays a run-time input), and one cuda handle through
    # NAME.py at counts 24, 0, 10, 24, 0 (each run binds its count again).
    gsets=(--data "$dir/gpu/test_data_set_0" --data "$dir/gpu/test_data_set_1" --data "$dir/gpu/test_data_set_2")
    for t in cuda hip; do
      run "$t: NonZero and Compress at counts 0, some, all (emulated)" -- "$magnetoc" check "$dir/gpu/model.onnx" \
        "${gsets[@]}" --target "$t" --emulate -q
      expect_in "$dir/out" "PASS: 9 output\(s\) in 3 data set\(s\)" "$t: every count matches numpy"
    done
    run "compile the cuda package" -- "$magnetoc" compile "$dir/gpu/model.onnx" --target cuda -o "$dir/gpu/cu" --name sel -q
    expect_in "$dir/gpu/cu/sel.cu" '\{"nonzero_count", 0, 24, -1, 1, [0-9]+\}' "the NonZero's count is a data symbol of the cuda package"
    run "build the cuda package for the emulation" -- sh -c "cmake -S '$dir/gpu/cu' -B '$dir/gpu/cu/build' \
      -Dsel_EMULATE=ON -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build '$dir/gpu/cu/build' -j2 >/dev/null"
    run "cuda: one handle at counts 24, 0, 10, 24, 0" -- /usr/bin/python3 "$src/tests/e2e/dynamic_switch.py" "$dir/gpu/cu" sel \
      "$dir/gpu/test_data_set_2" "$dir/gpu/test_data_set_0" "$dir/gpu/test_data_set_1" "$dir/gpu/test_data_set_2" \
      "$dir/gpu/test_data_set_0"
    expect_in "$dir/out" "switch: 5 runs ok" "cuda: each run's outputs have its own count"
    ;;
  topk)  # issue #40: TopK with a constant K (MoE routers, top-k sampling) on rows of 50, 300 (strided,
    # several chunks) and 2000 (K = 1500: the counting path), K = 1 and K = the axis' length,
    # negative axes, ties, NaN and -0.0, float32/int64/float64, against Python's sort
    model topk_model.py
    check_on cpu cuda hip
    ;;
  empty_past)  # issue #40: a KV cache that may be empty: `--dynamic past=0..8`, Concat with an
    # empty operand, MatMul with K = 0 (the bias), ReduceSum over nothing (zeros), Softmax over an
    # empty axis, Slice and Relu of empty tensors; one build per target at (seq, past) 3:0, 1:5,
    # 2:4 and 4:0 against numpy (the empty sets first and last: a shape switch to and from 0)
    model empty_past_model.py
    sets=(--data "$dir/test_data_set_0" --data "$dir/test_data_set_1" --data "$dir/test_data_set_2"
          --data "$dir/test_data_set_3")
    for t in cpu cpu2 cuda hip; do
      case $t in
        cpu) args=() ;;
        cpu2) args=(--threads 2) ;;
        *) args=(--target "$t" --emulate) ;;
      esac
      run "check one $t build at past 0 and past > 0" -- "$magnetoc" check "$dir/model.onnx" "${sets[@]}" \
        --dynamic seq=1..4 --dynamic past=0..8 --opt past=0 -q "${args[@]}"
      expect_in "$dir/out" "PASS: 32 output\(s\) in 4 data set\(s\)" "all four sets match numpy on $t"
    done
    # the flag: a range may start at 0; LO > HI is still refused
    run "--dynamic past=0..4 is accepted" -- "$magnetoc" report "$dir/model.onnx" --dynamic seq=1..4 \
      --dynamic past=0..4
    run "--dynamic past=5..4 is refused" -- sh -c "! '$magnetoc' report '$dir/model.onnx' \
      --dynamic seq=1..4 --dynamic past=5..4"
    expect_in "$dir/out" "past=5\\.\\.4: LO is greater than HI" "LO > HI is refused by the flag"
    ;;
  kv_bind)  # issue #40 item 5: KV-cache binding (docs/ABI.md): a stacked per-layer cache (GPT-2's
    # export form), empty_past's direct caches and a model without one, each compiled --shared;
    # kv_bind_test.py checks bound == copied bit for bit over several steps (1 and 2 threads),
    # numpy, and the refusals through the C functions and NAME.py
    model kv_bind_model.py
    model empty_past_model.py direct
    run "compile the stacked cache" -- "$magnetoc" compile "$dir/stacked/model.onnx" --name kvs -o "$dir/kvs" \
      --dynamic seq=1..4 --dynamic past=0..12 --shared -q
    grep -q "output 1 %present appends to input 1 %past along axis 3" "$dir/kvs/kvs.cpp" ||
      fail "the stacked cache output was not found (kvs.cpp has no KV table row for it)"
    echo "ok: the compiler finds the stacked cache (present appends to past along axis 3)"
    grep -q "(also read through a view: written densely too)" "$dir/kvs/kvs.cpp" ||
      fail "full_1's Reshape view did not make its piece dense"
    echo "ok: the piece read through a view is written densely too"
    run "compile the direct caches" -- "$magnetoc" compile "$dir/direct/model.onnx" --name kvd -o "$dir/kvd" \
      --dynamic seq=1..4 --dynamic past=0..12 --shared -q
    run "compile a model without a cache" -- "$magnetoc" compile "$dir/none/model.onnx" --name kvn -o "$dir/kvn" \
      --dynamic seq=1..4 --shared -q
    ! grep -q "kKvs" "$dir/kvn/kvn.cpp" || fail "a model without a cache output got a KV table"
    run "bound == copied, numpy, refusals (kv_bind_test.py)" -- /usr/bin/python3 "$src/tests/e2e/kv_bind_test.py" \
      "$dir/kvs" "$dir/kvd" "$dir/kvn" "$dir"
    expect_in "$dir/out" "kv_bind: [0-9]+ checks passed" "kv_bind_test.py passed"
    grep "^ok: kv[sd] at\|^ok: C a NULL\|^ok: a step needing" "$dir/out"
    ;;
  sequences)  # issue #40: exporters' sequence ops resolved on import into tensor ops; numpy's
    # outputs (checked against onnxruntime-node when the generator was written); refusals by name
    model sequence_model.py
    for m in repeat_interleave unbind_stack chunk_erase construct_insert if_seq; do
      run "$m: check on cpu" -- "$magnetoc" check "$dir/$m/model.onnx" --data "$dir/$m/test_data_set_0" -q
    done
    run "repeat_interleave: check -v" -- "$magnetoc" check "$dir/repeat_interleave/model.onnx" \
      --data "$dir/repeat_interleave/test_data_set_0" -v
    expect_in "$dir/out" "node 'split_heads' \(SplitToSequence\): a sequence of 2 tensors \(Split on axis 1\)" \
      "SplitToSequence becomes a Split"
    expect_in "$dir/out" "node 'repeat_loop' \(Loop\): unrolled 2 iterations" \
      "the Loop that builds the sequence unrolls (its trip count from Shape)"
    ! grep -q "binding input" "$dir/out" || fail "check bound an input: the model would run folded"
    echo "ok: no input bound (the package computes the interleave)"
    for m in repeat_interleave unbind_stack; do
      for t in cuda hip; do
        run "$m: check on $t (emulated)" -- "$magnetoc" check "$dir/$m/model.onnx" \
          --data "$dir/$m/test_data_set_0" -q --target "$t" --emulate
      done
    done
    run "a constant position past the end is refused" -- sh -c \
      "! '$magnetoc' compile '$dir/bad_at/model.onnx' -o '$dir/pkg' -q"
    expect_in "$dir/out" "node 'bad_at' \(SequenceAt\): position 5 is out of range for a sequence of 3 tensors \(valid: -3 to 2\)" \
      "SequenceAt out of range names the node, the position and the length"
    run "an op reading a sequence is refused" -- sh -c \
      "! '$magnetoc' compile '$dir/seq_reader/model.onnx' -o '$dir/pkg' -q"
    expect_in "$dir/out" "node 'relu_of_seq' \(Relu\): operand 0 is a sequence \(of 3 tensors\)" \
      "a Relu of a sequence names the node"
    # Sequence graph inputs and outputs: a length fixed at compile time, from the SequenceProto data.
    run "seq_output: check on cpu" -- "$magnetoc" check "$dir/seq_output/model.onnx" \
      --data "$dir/seq_output/test_data_set_0" -q
    expect_in "$dir/out" "PASS: 3 output\(s\)" "a sequence output of 3 tensors is 3 outputs"
    run "seq_input: check on cpu" -- "$magnetoc" check "$dir/seq_input/model.onnx" \
      --data "$dir/seq_input/test_data_set_0" -q
    run "a sequence input without its length is refused" -- sh -c \
      "! '$magnetoc' compile '$dir/seq_input/model.onnx' -o '$dir/pkg' -q"
    expect_in "$dir/out" "input 'xs' is a sequence, and its length and element shapes are not given" \
      "compile names the sequence input"
    ;;
  *) fail "unknown case (see the case list in this script)" ;;
esac
