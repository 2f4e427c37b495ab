#!/usr/bin/env python3
"""Writes the models of cli_test.sh's "check binds only shape-deciding inputs" step (issue #40),
each OUT_DIR/NAME/model.onnx with OUT_DIR/NAME/test_data_set_0/, outputs computed with numpy:

  if_same_shape   a wake-word model: score = ReduceSum(x); If(score > 0.5) runs a second network
                  (Sigmoid(x @ W), [1,1]) else a constant [1,1]. Both branches give f32[1,1]: x
                  decides no shape, check must not bind it; the If is selected at run time (PASS
                  naming no bound input).
  if_other_shape  If(c) then Reshape(x) [4,1] else Concat(x, x) [1,8]: two dims differ, more than a
                  run-time selection joins, so the bool input c decides the output's shape and is
                  bound; x stays a run-time input (PASS naming c).
  reshape_input   y = Relu(Reshape(x, s)): s decides y's shape and is bound; x is read at run time
                  (PASS naming s).
  folds           y = ConstantOfShape(s) (value 2.5): once s is bound, nothing is read at run time
                  (the folded status, exit 5).

usage: check_binding_model.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(40)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def save(name, graph, inputs, outputs):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(d, "test_data_set_0", "input_%d.pb" % k))
    for k, (n, a) in enumerate(outputs):
        onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(d, "test_data_set_0", "output_%d.pb" % k))


# if_same_shape
W = (rng.standard_normal((4, 1)) * 0.5).astype(np.float32)
then_g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["t0"]), helper.make_node("Sigmoid", ["t0"], ["t_out"])],
    "then", [], [helper.make_tensor_value_info("t_out", F, [1, 1])])
else_g = helper.make_graph(
    [helper.make_node("Constant", [], ["e_out"],
                      value=numpy_helper.from_array(np.zeros((1, 1), np.float32), "zero"))],
    "else", [], [helper.make_tensor_value_info("e_out", F, [1, 1])])
g = helper.make_graph(
    [helper.make_node("ReduceSum", ["x"], ["score"], keepdims=0),
     helper.make_node("Greater", ["score", "thr"], ["fire"]),
     helper.make_node("If", ["fire"], ["y"], then_branch=then_g, else_branch=else_g)],
    "wake", [helper.make_tensor_value_info("x", F, [1, 4])],
    [helper.make_tensor_value_info("y", F, [1, 1])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(np.array(0.5, np.float32), "thr")])
x = np.array([[0.4, 0.3, 0.2, 0.1]], np.float32)
y = (1 / (1 + np.exp(-(x @ W)))).astype(np.float32) if x.sum() > 0.5 else np.zeros((1, 1), np.float32)
save("if_same_shape", g, [("x", x)], [("y", y)])

# if_other_shape
then_g = helper.make_graph([helper.make_node("Reshape", ["x", "col"], ["t_out"])], "then", [],
                           [helper.make_tensor_value_info("t_out", F, [4, 1])],
                           [numpy_helper.from_array(np.array([4, 1], np.int64), "col")])
else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e_out"], axis=1)], "else", [],
                           [helper.make_tensor_value_info("e_out", F, [1, 8])])
g = helper.make_graph(
    [helper.make_node("If", ["c"], ["i"], then_branch=then_g, else_branch=else_g),
     helper.make_node("Relu", ["i"], ["y"])],
    "other", [helper.make_tensor_value_info("c", B, []), helper.make_tensor_value_info("x", F, [1, 4])],
    [helper.make_tensor_value_info("y", F, ["m", "n"])])
x = rng.standard_normal((1, 4)).astype(np.float32)
save("if_other_shape", g, [("c", np.array(False)), ("x", x)],
     [("y", np.maximum(np.concatenate([x, x], 1), 0).astype(np.float32))])

# reshape_input
g = helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Relu", ["r"], ["y"])],
    "reshape", [helper.make_tensor_value_info("x", F, [2, 6]), helper.make_tensor_value_info("s", I64, [2])],
    [helper.make_tensor_value_info("y", F, ["a", "b"])])
x = rng.standard_normal((2, 6)).astype(np.float32)
s = np.array([3, 4], np.int64)
save("reshape_input", g, [("x", x), ("s", s)], [("y", np.maximum(x.reshape(3, 4), 0))])

# folds
g = helper.make_graph(
    [helper.make_node("ConstantOfShape", ["s"], ["y"],
                      value=numpy_helper.from_array(np.array([2.5], np.float32), "v"))],
    "folds", [helper.make_tensor_value_info("s", I64, [2])], [helper.make_tensor_value_info("y", F, ["a", "b"])])
save("folds", g, [("s", np.array([2, 3], np.int64))], [("y", np.full((2, 3), 2.5, np.float32))])
