#!/usr/bin/env python3
"""Writes a model with two Ifs whose conditions are computed from the data, and its reference
outputs computed with numpy at four inputs (each condition true and false). The importer imports
both branches of each and selects (src/frontend/onnx_control_flow.cpp):

    same = If(ReduceSum(x) > 0)  then Relu(x) * 2     else Neg(x) - 1        both f32[6]: Where
    keep = If(ReduceMax(x) > 1)  then Slice(x, 0, 4)  else an empty f32[0]   [4] or [0]: Compress
    scaled = keep * 3                                  (a consumer of the run-time extent)
    odd  = If(ReduceMin(x) < -2) then x[:, None] (rank 2) else x             (a second model,
                                                                              refused by name)

torchvision's detectors guard NonMaxSuppression with the second form (`if boxes.numel() == 0:
return empty`).

usage: runtime_if_model.py OUT_DIR   (writes OUT_DIR/model.onnx, test_data_set_0..3/,
                                      OUT_DIR/ranks/model.onnx)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def const(name, a):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(a), name))


def save(path, nodes, inputs, outputs, inits=(), check=True):
    g = helper.make_graph(nodes, "runtime_if", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="runtime_if_model.py")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(m, path)


def main():
    out = sys.argv[1]
    c = lambda name, a: numpy_helper.from_array(np.asarray(a), name)
    then_same = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "two"], ["then_same"])],
        "then_same", [], [vi("then_same", [6])])
    else_same = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Sub", ["n", "one"], ["else_same"])],
        "else_same", [], [vi("else_same", [6])])
    then_keep = helper.make_graph(
        [helper.make_node("Slice", ["x", "start", "end"], ["then_keep"])],
        "then_keep", [], [vi("then_keep", [4])])
    else_keep = helper.make_graph(
        [const("else_keep", np.zeros(0, np.float32))], "else_keep", [], [vi("else_keep", [0])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
        helper.make_node("Greater", ["sum", "zero"], ["pos"]),
        helper.make_node("If", ["pos"], ["same"], name="same_if", then_branch=then_same,
                         else_branch=else_same),
        helper.make_node("ReduceMax", ["x"], ["max"], keepdims=0),
        helper.make_node("Greater", ["max", "one"], ["big"]),
        helper.make_node("If", ["big"], ["keep"], name="keep_if", then_branch=then_keep,
                         else_branch=else_keep),
        helper.make_node("Mul", ["keep", "three"], ["scaled"]),
    ]
    inits = [c("zero", np.float32(0)), c("one", np.float32(1)), c("two", np.float32(2)),
             c("three", np.float32(3)), c("start", np.array([0], np.int64)),
             c("end", np.array([4], np.int64))]
    save(f"{out}/model.onnx", nodes, [vi("x", [6])],
         [vi("same", [6]), vi("keep", ["keep_n"]), vi("scaled", ["keep_n"])], inits)
    inputs = [
        np.array([0.5, 1.5, -0.25, 2.0, 0.1, 0.3], np.float32),     # sum > 0, max > 1
        np.array([0.5, 0.2, -0.25, 0.9, 0.1, 0.3], np.float32),     # sum > 0, max <= 1
        np.array([-3.0, 1.5, -0.25, -2.0, 0.1, 0.3], np.float32),   # sum <= 0, max > 1
        np.array([-3.0, 0.5, -0.25, -2.0, 0.1, 0.3], np.float32),   # sum <= 0, max <= 1
    ]
    for k, x in enumerate(inputs):
        same = np.maximum(x, 0) * 2 if x.sum() > 0 else -x - 1
        keep = x[:4] if x.max() > 1 else np.zeros(0, np.float32)
        d = f"{out}/test_data_set_{k}"
        os.makedirs(d, exist_ok=True)
        for name, a, i in (("x", x, "input_0"), ("same", same, "output_0"), ("keep", keep, "output_1"),
                           ("scaled", keep * 3, "output_2")):
            with open(f"{d}/{i}.pb", "wb") as f:
                f.write(numpy_helper.from_array(a.astype(np.float32), name).SerializeToString())

    then_rank = helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes"], ["then_rank"])],
                                  "then_rank", [], [vi("then_rank", [6, 1])])
    else_rank = helper.make_graph([helper.make_node("Identity", ["x"], ["else_rank"])],
                                  "else_rank", [], [vi("else_rank", [6])])
    save(f"{out}/ranks/model.onnx",
         [helper.make_node("ReduceMin", ["x"], ["min"], keepdims=0),
          helper.make_node("Less", ["min", "minus2"], ["low"]),
          helper.make_node("If", ["low"], ["odd"], name="rank_if", then_branch=then_rank,
                           else_branch=else_rank)],
         [vi("x", [6])], [vi("odd", [6])],
         [c("minus2", np.float32(-2)), c("axes", np.array([1], np.int64))], check=False)


if __name__ == "__main__":
    main()
