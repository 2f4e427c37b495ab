#!/usr/bin/env python3
"""Writes a small ONNX model with Inception-style parallel convolutions on one input, and its
reference outputs computed with numpy, for an end-to-end check of the wide-merge pass:

    x -> Conv1x1(4)+Relu, Conv1x1(6)+Relu, Conv1x1(2)+Relu, Conv3x3 pads 1 (32)+Relu -> Concat
                              \\-> Sigmoid (a second reader of one head)

On the CPU target the three 1x1 heads and the 3x3 merge into one 3x3 Conv of 44 channels
(1.32x the FLOPs), the Concat of the four slices is the merged result itself, and the 6-channel
slice is a zero-copy view read by the Sigmoid.

usage: wide_merge_model.py OUT_DIR   (writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_ref import conv  # noqa: E402


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    cin = 8
    heads = [("a", 4, 1, 0), ("b", 6, 1, 0), ("c", 2, 1, 0), ("d", 32, 3, 1)]
    x = rng.standard_normal((1, cin, 6, 6)).astype(np.float32)
    inits, nodes, ys = [], [], []
    for name, m, k, p in heads:
        w = (rng.standard_normal((m, cin, k, k)) * 0.3).astype(np.float32)
        b = (rng.standard_normal(m) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w_" + name), numpy_helper.from_array(b, "b_" + name)]
        nodes.append(helper.make_node("Conv", ["x", "w_" + name, "b_" + name], ["c_" + name],
                                      name="conv_" + name, pads=[p] * 4, kernel_shape=[k, k]))
        nodes.append(helper.make_node("Relu", ["c_" + name], ["r_" + name], name="relu_" + name))
        ys.append(np.maximum(conv(x.astype(np.float64), w, b, p), 0))
    nodes.append(helper.make_node("Concat", ["r_" + h[0] for h in heads], ["cat"], axis=1))
    nodes.append(helper.make_node("Sigmoid", ["r_b"], ["sig"]))
    cat = np.concatenate(ys, axis=1).astype(np.float32)
    sig = (1 / (1 + np.exp(-ys[1]))).astype(np.float32)
    graph = helper.make_graph(
        nodes, "wide_merge_e2e",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("cat", TensorProto.FLOAT, list(cat.shape)),
         helper.make_tensor_value_info("sig", TensorProto.FLOAT, list(sig.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for fname, arr, name in [("input_0.pb", x, "x"), ("output_0.pb", cat, "cat"),
                             ("output_1.pb", sig, "sig")]:
        with open(os.path.join(data, fname), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())


if __name__ == "__main__":
    main()
