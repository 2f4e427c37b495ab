# Makes the tiny model of cli_test.sh: Conv -> Relu -> Add(relu, conv), with a test data set
# computed by numpy, the raw input and expected output files for the C program, and a data set
# with a wrong expected output (check must fail on it).
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
W = (rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
B = rng.standard_normal((4,)).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="relu1"),
    helper.make_node("Add", ["r", "c"], ["y"], name="add1"),
]
g = helper.make_graph(
    nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "tiny.onnx"))

x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
c = np.zeros((1, 4, 8, 8), np.float32)
for o in range(4):
    for i in range(8):
        for j in range(8):
            c[0, o, i, j] = (xp[0, :, i:i + 3, j:j + 3] * W[o]).sum() + B[o]
y = (np.maximum(c, 0) + c).astype(np.float32)


def save(d, expected):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(expected, "y").SerializeToString())


save(os.path.join(out, "test_data_set_0"), y)
wrong = y.copy()
wrong[0, 1, 2, 3] += 0.5
save(os.path.join(out, "test_data_set_wrong"), wrong)
x.tofile(os.path.join(out, "x.bin"))
y.tofile(os.path.join(out, "y.bin"))
