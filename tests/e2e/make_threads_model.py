#!/usr/bin/python3
# Writes the model that scripts/sanitize.sh compiles for its ThreadSanitizer and LeakSanitizer
# runs of a generated package (tests/e2e/threads_test.cpp): small, but through the kernels that use
# the thread pool (im2col and 1x1 convolutions, pools, GEMM, fused elementwise) and a pair of
# parallel branches joined by a Concat:
#   x -> Conv3x3+Relu -> MaxPool -> { Conv1x1+Relu, Conv3x3+Sigmoid } -> Concat -> Add(bias)
#     -> GlobalAveragePool -> Flatten -> Gemm -> Softmax -> y
# usage: make_threads_model.py OUT_DIR   (writes OUT_DIR/model.onnx)
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(3)


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


inits = [w("w0", 16, 3, 3, 3), w("b0", 16), w("w1", 8, 16, 1, 1), w("w2", 8, 16, 3, 3),
         w("bias", 1, 16, 1, 1), w("fc", 10, 16), w("fcb", 10)]
nodes = [
    helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
    helper.make_node("MaxPool", ["r0"], ["p0"], name="pool0", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p0", "w1"], ["c1"], name="branch1_conv"),
    helper.make_node("Relu", ["c1"], ["r1"], name="branch1_relu"),
    helper.make_node("Conv", ["p0", "w2"], ["c2"], name="branch2_conv", pads=[1, 1, 1, 1]),
    helper.make_node("Sigmoid", ["c2"], ["s2"], name="branch2_sigmoid"),
    helper.make_node("Concat", ["r1", "s2"], ["cat"], name="join", axis=1),
    helper.make_node("Add", ["cat", "bias"], ["a"], name="add_bias"),
    helper.make_node("GlobalAveragePool", ["a"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "fc", "fcb"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=1),
]
graph = helper.make_graph(
    nodes, "threads", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 32, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10]),
     helper.make_tensor_value_info("p0", TensorProto.FLOAT, [2, 16, 16, 16])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
