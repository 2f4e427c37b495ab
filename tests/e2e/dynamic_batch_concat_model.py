# Makes the batch-axis Concat model of e2e.dynamic_cnn (issue #17): x[batch, 4] -> MatMul and
# Sigmoid(x + 1), concatenated along the batch axis -> Relu. With a dynamic batch, the second
# operand's place in the Concat's result moves with the batch (it starts after the first's rows),
# so a memory plan that writes operands in place by one binding's offsets is wrong at the others.
# Writes OUT/model.onnx and one test data set per batch in BATCHES (numpy's outputs).
#   /usr/bin/python3 tests/e2e/dynamic_batch_concat_model.py OUT [B ...]   (default 1 3 8)
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
batches = [int(b) for b in sys.argv[2:]] or [1, 3, 8]
os.makedirs(out, exist_ok=True)
w = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
nodes = [
    helper.make_node("MatMul", ["x", "W"], ["a"], name="proj"),
    helper.make_node("Add", ["x", "one"], ["b0"], name="shift"),
    helper.make_node("Sigmoid", ["b0"], ["b"], name="gate"),
    helper.make_node("Concat", ["a", "b"], ["c"], axis=0, name="stack"),
    helper.make_node("Relu", ["c"], ["y"], name="relu"),
]
graph = helper.make_graph(
    nodes, "dynamic_batch_concat",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", 4])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array(1, np.float32), "one")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
rng = np.random.default_rng(1)
for k, b in enumerate(batches):
    x = rng.standard_normal((b, 4)).astype(np.float32)
    y = np.maximum(np.concatenate([x @ w, 1 / (1 + np.exp(-(x + 1)))], 0), 0).astype(np.float32)
    d = os.path.join(out, f"test_data_set_{k}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
