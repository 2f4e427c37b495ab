#!/usr/bin/env python3
"""Writes a model with a Loop, an If nested in its body and a Scan, whose control is known at
compile time once the trip count (a graph input, which `magnetoc check` binds from the test data)
is; and its reference outputs computed with numpy. The importer unrolls all of it
(src/frontend/onnx_control_flow.cpp):

    Loop(n, "", acc0) over the rows of x [4, 3]:
        row = Gather(x, i)
        acc' = If(i % 2 == 0) then acc * 0.5 + row else acc - row     (i is constant per iteration)
        scan output: Relu(acc')
    Scan over the columns of x in reverse (scan_input_axes 1, direction 1):
        state m' = Max(m, col); scan output m' prepended on axis 0

usage: control_flow_model.py OUT_DIR   (writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    acc0 = rng.standard_normal(3).astype(np.float32)
    m0 = np.full(4, -10.0, dtype=np.float32)
    n = np.array(4, dtype=np.int64)
    c = lambda name, a: numpy_helper.from_array(np.asarray(a), name)

    then_b = helper.make_graph(
        [helper.make_node("Mul", ["acc", "half"], ["scaled"]),
         helper.make_node("Add", ["scaled", "row"], ["then_out"])],
        "then", [], [vi("then_out", [3])])
    else_b = helper.make_graph([helper.make_node("Sub", ["acc", "row"], ["else_out"])], "else", [],
                               [vi("else_out", [3])])
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Mod", ["i", "two"], ["parity"]),
         helper.make_node("Equal", ["parity", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["acc_out"], name="parity_if", then_branch=then_b,
                          else_branch=else_b),
         helper.make_node("Relu", ["acc_out"], ["relu_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [vi("i", [], TensorProto.INT64), vi("cond", [], TensorProto.BOOL), vi("acc", [3])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [3]), vi("relu_out", [3])])
    scan_body = helper.make_graph(
        [helper.make_node("Max", ["m", "col"], ["m_out"]),
         helper.make_node("Identity", ["m_out"], ["m_scan"])],
        "scan_body", [vi("m", [4]), vi("col", [4])], [vi("m_out", [4]), vi("m_scan", [4])])
    nodes = [
        helper.make_node("Loop", ["n", "", "acc0"], ["acc", "relus"], name="rows", body=body),
        helper.make_node("Scan", ["m0", "x"], ["colmax", "colmaxes"], name="columns",
                         body=scan_body, num_scan_inputs=1, scan_input_axes=[1],
                         scan_input_directions=[1]),
    ]
    inits = [c("half", np.float32(0.5)), c("two", np.int64(2)), c("zero", np.int64(0)),
             c("m0", m0)]
    graph = helper.make_graph(
        nodes, "control_flow",
        [vi("n", [], TensorProto.INT64), vi("x", [4, 3]), vi("acc0", [3])],
        [vi("acc", [3]), vi("relus", [4, 3]), vi("colmax", [4]), vi("colmaxes", [3, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)

    acc, relus = acc0.copy(), []
    for i in range(int(n)):
        acc = (acc * np.float32(0.5) + x[i]) if i % 2 == 0 else (acc - x[i])
        relus.append(np.maximum(acc, 0))
    m, maxes = m0.copy(), []
    for t in range(3):
        m = np.maximum(m, x[:, 2 - t])
        maxes.append(m)
    expected = [("acc", acc), ("relus", np.stack(relus)), ("colmax", m),
                ("colmaxes", np.stack(maxes))]

    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for k, (name, arr) in enumerate([("n", n), ("x", x), ("acc0", acc0)]):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    for k, (name, arr) in enumerate(expected):
        with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr.astype(np.float32), name).SerializeToString())


if __name__ == "__main__":
    main()
