#!/usr/bin/env python3
"""Writes a model whose variadic ops have more operands than one GPU map item takes (6), and its
reference outputs computed with numpy (folded left to right, as the CPU runtime does):

    x -> 13 x Mul(x, k_i) -> Sum (13), Mean (13), Max (13), Min (first 7)

The cuda and hip targets lower each into launches in phases (codegen/gpu/lower_map.cpp,
variadicInPhases): 6 operands, then the partial result and 5 more, ...

usage: variadic_model.py OUT_DIR   (writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N = 13


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    ks = [np.array([rng.standard_normal()], dtype=np.float32) for _ in range(N)]
    inits = [numpy_helper.from_array(k, f"k{i}") for i, k in enumerate(ks)]
    nodes = [helper.make_node("Mul", ["x", f"k{i}"], [f"v{i}"], name=f"scale{i}") for i in range(N)]
    names = [f"v{i}" for i in range(N)]
    nodes += [helper.make_node("Sum", names, ["sum"], name="sum13"),
              helper.make_node("Mean", names, ["mean"], name="mean13"),
              helper.make_node("Max", names, ["max"], name="max13"),
              helper.make_node("Min", names[:7], ["min"], name="min7")]
    v = [x * k for k in ks]
    total = v[0].copy()
    for a in v[1:]:
        total = total + a
    expected = [("sum", total), ("mean", total / np.float32(N)), ("max", np.max(np.stack(v), 0)),
                ("min", np.min(np.stack(v[:7]), 0))]
    graph = helper.make_graph(
        nodes, "variadic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(x.shape)) for n, _ in expected], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    for i, (name, arr) in enumerate(expected):
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr.astype(np.float32), name).SerializeToString())


if __name__ == "__main__":
    main()
