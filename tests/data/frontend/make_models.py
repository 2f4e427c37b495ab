#!/usr/bin/python3
# Generates the small ONNX models of tests/unit/frontend_test.cpp (run with Debian's python3, which
# has onnx 1.12 and numpy):  /usr/bin/python3 tests/data/frontend/make_models.py
# Each model is a few hundred bytes; the files are committed, this script documents them.
import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8, domains=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(g, opset_imports=imports, producer_name="make_models.py")
    m.ir_version = ir
    return m


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def f32(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def i64(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.int64), name)


# valid.onnx: old-style (the initializer 'b' is also listed as a graph input), Relu + Add + a
# Constant node feeding Mul.
b = f32("b", np.arange(4, dtype=np.float32))
valid = model(
    [helper.make_node("Relu", ["x"], ["r"], name="relu1"),
     helper.make_node("Add", ["r", "b"], ["a"], name="add1"),
     helper.make_node("Constant", [], ["two"], value=f32("", 2.0)),
     helper.make_node("Mul", ["a", "two"], ["y"])],
    [vi("x", [1, 3, 4, 4]), vi("b", [4])], [vi("y", [1, 3, 4, 4])], [b], ir=3, opset=9)
save(valid, "valid.onnx")
data = valid.SerializeToString()
save_raw = lambda name, content: open(os.path.join(HERE, name), "wb").write(content)
save_raw("empty.onnx", b"")
save_raw("truncated.onnx", data[: len(data) * 2 // 3])
rng = random.Random(7)
save_raw("random.onnx", bytes([0x0a, 0xff, 0xff]) + bytes(rng.randrange(256) for _ in range(200)))

# unknown_op.onnx: opset 18 (the checker does not run) with an op nobody defines.
save(model([helper.make_node("FooBar", ["x"], ["y"], name="foo")], [vi("x", [2])], [vi("y", [2])],
           opset=18), "unknown_op.onnx", check=False)
# unknown_op_checked.onnx: the same at opset 13: ONNX's checker rejects it.
save(model([helper.make_node("FooBar", ["x"], ["y"], name="foo")], [vi("x", [2])], [vi("y", [2])]),
     "unknown_op_checked.onnx", check=False)
# unknown_domain.onnx: a com.microsoft op.
save(model([helper.make_node("FusedGemm", ["x", "x"], ["y"], name="fg", domain="com.microsoft")],
           [vi("x", [2, 2])], [vi("y", [2, 2])], domains=["com.microsoft"]),
     "unknown_domain.onnx", check=False)
# opset22.onnx: the opset after 21 (imported since Magneto knows opset 23).
save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=22),
     "opset22.onnx", check=False)
# opset24.onnx: newer than Magneto knows.
save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=24),
     "opset24.onnx", check=False)
# opset18.onnx: newer than libonnx's checker knows, imported unchecked.
save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=18),
     "opset18.onnx", check=False)
# dft20.onnx: DFT-20's axis operand, absent (-2), an initializer (1) and a graph input (ax).
save(model([helper.make_node("DFT", ["x"], ["y0"], name="d0"),
            helper.make_node("DFT", ["x", "", "one"], ["y1"], name="d1"),
            helper.make_node("DFT", ["x", "", "ax"], ["y2"], name="d2")],
           [vi("x", [1, 3, 4, 1]), vi("ax", [], TensorProto.INT64)],
           [vi("y0", [1, 3, 4, 2]), vi("y1", [1, 3, 4, 2]), vi("y2", [1, 3, 4, 2])],
           [i64("one", np.array(1))], opset=20), "dft20.onnx", check=False)
# opset6.onnx: upgraded by ONNX's version converter.
save(model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])],
           [vi("x", [2, 3])], [vi("y", [2, 3])], opset=6, ir=3), "opset6.onnx")
# symbolic.onnx: batch dimension is symbolic.
save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["batch", 3, 8, 8])],
           [vi("y", ["batch", 3, 8, 8])]), "symbolic.onnx")
# init_short.onnx: initializer 'w' says 2x3 but holds 5 floats (raw data).
w = f32("w", np.zeros(6))
w.raw_data = np.zeros(5, dtype=np.float32).tobytes()
save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], [w]),
     "init_short.onnx", check=False)
# init_long_typed.onnx: typed float_data with 7 values for shape 2x3.
w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [0.0] * 6)
w.float_data.append(0.0)
save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], [w]),
     "init_long_typed.onnx", check=False)


def external(name, location, nbytes=24, offset=None):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend([2, 3])
    t.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location), ("offset", offset), ("length", str(nbytes))]:
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    return t


# external_ok.onnx + external_ok.bin: 6 floats at offset 8.
save_raw("external_ok.bin", b"\0" * 8 + np.arange(6, dtype=np.float32).tobytes())
save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])],
           [external("w", "external_ok.bin", offset="8")]), "external_ok.onnx", check=False)
# external_escape.onnx: location leaves the model's folder.
save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])],
           [external("w", "../frontend/../../unit/escape.bin")]), "external_escape.onnx",
     check=False)
# external_missing.onnx: the data file does not exist.
save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])],
           [external("w", "no_such_file.bin")]), "external_missing.onnx", check=False)

# cycle.onnx: a -> b -> a.
save(model([helper.make_node("Add", ["x", "q"], ["p"], name="a"),
            helper.make_node("Relu", ["p"], ["q"], name="b"),
            helper.make_node("Relu", ["p"], ["y"], name="c")],
           [vi("x", [2])], [vi("y", [2])]), "cycle.onnx", check=False)
# undefined_input.onnx: reads a tensor nobody defines.
save(model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")],
           [vi("x", [2])], [vi("y", [2])]), "undefined_input.onnx", check=False)
# duplicate_output.onnx: two nodes write 'y'.
save(model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
            helper.make_node("Neg", ["x"], ["y"], name="r2")],
           [vi("x", [2])], [vi("y", [2])]), "duplicate_output.onnx", check=False)
# unsorted.onnx: a valid graph written out of order.
save(model([helper.make_node("Relu", ["r"], ["y"], name="second"),
            helper.make_node("Neg", ["x"], ["r"], name="first")],
           [vi("x", [2])], [vi("y", [2])]), "unsorted.onnx", check=False)
# subgraph.onnx: an If node.
branch = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "b", [], [vi("o", [2])])
save(model([helper.make_node("If", ["c"], ["y"], name="iff", then_branch=branch,
                             else_branch=branch)],
           [vi("c", [], TensorProto.BOOL), vi("x", [2])], [vi("y", [2])]), "subgraph.onnx")

# shape_reshape.onnx: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, folded on import.
save(model([helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
            helper.make_node("Unsqueeze", ["d0", "axes0"], ["d0v"]),
            helper.make_node("Concat", ["d0v", "minus1"], ["shape"], axis=0),
            helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
           [vi("x", [2, 3, 4])], [vi("y", [2, 12])],
           [i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1])]), "shape_reshape.onnx")
# shape_input.onnx: Reshape's target shape is a graph input (as in ONNX's test_reshape_*), passed
# through Cast.
save(model([helper.make_node("Cast", ["target"], ["t64"], to=TensorProto.INT64),
            helper.make_node("Reshape", ["x", "t64"], ["y"])],
           [vi("x", [2, 3, 4]), vi("target", [2], TensorProto.INT32)], [vi("y", [2, 12])]),
     "shape_input.onnx")

# legacy.onnx (opset 9): forms that normalization rewrites.
save(model([helper.make_node("Slice", ["x"], ["s"], starts=[0, 1], ends=[1, 3], axes=[0, 1]),
            helper.make_node("Pad", ["x"], ["p"], pads=[0, 1, 0, 1], value=0.5),
            helper.make_node("Clip", ["x"], ["c"], min=-1.0, max=1.0),
            helper.make_node("TopK", ["x"], ["tv", "ti"], k=2),
            helper.make_node("Softmax", ["x"], ["sm"]),
            helper.make_node("Upsample", ["x4", "scales"], ["up"], mode="nearest")],
           [vi("x", [2, 4]), vi("x4", [1, 1, 2, 2])],
           [vi("s", [1, 2]), vi("p", [2, 6]), vi("c", [2, 4]), vi("tv", [2, 2]),
            vi("sm", [2, 4]), vi("up", [1, 1, 4, 4])], [f32("scales", [1, 1, 2, 2])], opset=9),
     "legacy.onnx")

# --- Control flow specialised on import (src/frontend/onnx_control_flow.cpp) ---
def scalar_bool(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.bool_), name)


def graph(nodes, name, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))


# if_cond.onnx: If on the graph input 'c' (bound in the tests): then 2*x, else -x; the branches
# read the outer-scope x.
then_b = graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [vi("t", [3])],
               [f32("two", [2.0])])
else_b = graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", [3])])
save(model([helper.make_node("If", ["c"], ["y"], name="iff", then_branch=then_b,
                             else_branch=else_b)],
           [vi("c", [], TensorProto.BOOL), vi("x", [3])], [vi("y", [3])]), "if_cond.onnx")


# loop_*.onnx: Loop(M, cond, y0) with body(i, c, y): y' = y + x (x from the outer scope),
# scan output s = y' * float(i); the cond output is `cond_body` (Identity of c by default).
def loop_model(name, m, cond, cond_nodes=None, cond_out="c_out", extra_inits=(), opset=13,
               body_inputs=None, check=True):
    body_nodes = [helper.make_node("Add", ["y_in", "x"], ["y_out"]),
                  helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", ["y_out", "fi"], ["s_out"])]
    body_nodes += cond_nodes or [helper.make_node("Identity", ["c"], ["c_out"])]
    ins = body_inputs or [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL),
                          vi("y_in", [2])]
    body = graph(body_nodes, "body", ins,
                 [vi(cond_out, [], TensorProto.BOOL), vi("y_out", [2]), vi("s_out", [2])])
    inits = [f32("y0", [1.0, -1.0])] + list(extra_inits)
    loop_in = []
    if m is None:
        loop_in.append("")
    else:
        inits.append(i64("M", m))
        loop_in.append("M")
    if cond is None:
        loop_in.append("")
    else:
        inits.append(scalar_bool("cond", cond))
        loop_in.append("cond")
    save(model([helper.make_node("Loop", loop_in + ["y0"], ["y", "s"], name="loop", body=body)],
               [vi("x", [2])], [vi("y", [2]), vi("s", ["n", 2])], inits, opset=opset), name, check)


loop_model("loop.onnx", 3, True)
# The condition turns false after iteration 1 (i >= 1): two iterations though M is 10.
loop_model("loop_cond.onnx", 10, True,
           [helper.make_node("Less", ["i", "one"], ["c_out"])], extra_inits=[i64("one", 1)])
# The condition depends on the data: y' summed below 10.
loop_model("loop_data_cond.onnx", 10, True,
           [helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "ten"], ["c_out"])], extra_inits=[f32("ten", 10.0)])
loop_model("loop_over_cap.onnx", 5000, None)
# TorchScript's form of a loop with `break`: M = INT64_MAX and a condition the body computes. When
# the condition folds (i < 1) it unrolls like loop_cond.onnx; on the data it is refused for that,
# not for M; a condition that stays true is refused at the cap.
loop_model("loop_while.onnx", 2**63 - 1, True,
           [helper.make_node("Less", ["i", "one"], ["c_out"])], extra_inits=[i64("one", 1)])
loop_model("loop_while_data_cond.onnx", 2**63 - 1, True,
           [helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "ten"], ["c_out"])], extra_inits=[f32("ten", 10.0)])
loop_model("loop_while_true.onnx", 2**63 - 1, True)
loop_model("loop_forever.onnx", None, None)
# Bodies the checker does not see (opset 18): one input too many, a name nothing defines.
loop_model("loop_body_arity.onnx", 3, True, opset=18,
           body_inputs=[vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL),
                        vi("y_in", [2]), vi("extra", [2])], check=False)
loop_model("loop_undefined.onnx", 3, True, opset=18,
           cond_nodes=[helper.make_node("Identity", ["nowhere"], ["c_out"])], check=False)
# loop_fold_budget.onnx: 1024 iterations, each with a 16 MiB ConstantOfShape as scan output (a
# 400-byte file once folded 16 GiB on import and was killed for memory; found by fuzz_onnx_import).
big_body = graph([helper.make_node("Identity", ["c"], ["c_out"]),
                  helper.make_node("ConstantOfShape", ["big_shape"], ["z"],
                                   value=numpy_helper.from_array(np.ones(1, np.float32))),
                  helper.make_node("Add", ["y_in", "x"], ["y_out"])], "body",
                 [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("y_in", [2])],
                 [vi("c_out", [], TensorProto.BOOL), vi("y_out", [2]), vi("z", [4 << 20])])
save(model([helper.make_node("Loop", ["M", "", "y0"], ["y", "s"], name="loop", body=big_body)],
           [vi("x", [2])], [vi("y", [2]), vi("s", [1024, 4 << 20])],
           [i64("M", 1024), f32("y0", [1.0, -1.0]), i64("big_shape", [4 << 20])]),
     "loop_fold_budget.onnx")
# loop_trip_input.onnx: M is a graph input (bound by magnetoc check: shapeDeterminingInputs).
body = graph([helper.make_node("Add", ["y_in", "x"], ["y_out"]),
              helper.make_node("Identity", ["c"], ["c_out"])], "body",
             [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("y_in", [2])],
             [vi("c_out", [], TensorProto.BOOL), vi("y_out", [2])])
save(model([helper.make_node("Cast", ["n"], ["n64"], to=TensorProto.INT64),
            helper.make_node("Loop", ["n64", "", "y0"], ["y"], name="loop", body=body)],
           [vi("x", [2]), vi("n", [], TensorProto.INT32), vi("y0", [2])], [vi("y", [2])]),
     "loop_trip_input.onnx")
# if_loop.onnx: nested control flow: a constant-true If whose then branch runs a 2-iteration Loop
# (y = x + 2*x); the else branch is Identity(x).
inner = graph([helper.make_node("Add", ["acc", "x"], ["acc_out"]),
               helper.make_node("Identity", ["c"], ["c_out"])], "inner",
              [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("acc", [3])],
              [vi("c_out", [], TensorProto.BOOL), vi("acc_out", [3])])
then_b = graph([helper.make_node("Loop", ["two", ""], ["t"], name="inner_loop", body=inner,
                                 )], "then", [], [vi("t", [3])])
# the Loop's initial value is x itself: x + x + x
then_b.node[0].input.append("x")
else_b = graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", [3])])
save(model([helper.make_node("If", ["yes"], ["y"], name="outer_if", then_branch=then_b,
                             else_branch=else_b)],
           [vi("x", [3])], [vi("y", [3])], [scalar_bool("yes", True), i64("two", 2)]),
     "if_loop.onnx")

# scan_reverse.onnx (opset 11): Scan over x[2,3] along axis 1 (3 steps) in reverse, a running sum
# as state; the scan output stacked on axis 1 and prepended (direction 1).
body = graph([helper.make_node("Add", ["sum_in", "col"], ["sum_out"]),
              helper.make_node("Identity", ["sum_out"], ["scan_out"])], "body",
             [vi("sum_in", [2]), vi("col", [2])], [vi("sum_out", [2]), vi("scan_out", [2])])
save(model([helper.make_node("Scan", ["init", "x"], ["final", "z"], name="scan", body=body,
                             num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                             scan_output_axes=[1], scan_output_directions=[1])],
           [vi("init", [2]), vi("x", [2, 3])], [vi("final", [2]), vi("z", [2, 3])], opset=11),
     "scan_reverse.onnx")

# sequence_map.onnx: SequenceMap (Identity body) over a sequence input (tests its per-element import).
body = graph([helper.make_node("Identity", ["e"], ["o"])], "body", [vi("e", [2])], [vi("o", [2])])
seq = helper.make_tensor_sequence_value_info
save(model([helper.make_node("SequenceMap", ["xs"], ["ys"], name="smap", body=body)],
           [seq("xs", TensorProto.FLOAT, [2])], [seq("ys", TensorProto.FLOAT, [2])], opset=17),
     "sequence_map.onnx", check=False)
print("models written to", HERE)
