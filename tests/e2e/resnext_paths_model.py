#!/usr/bin/env python3
"""Writes a ResNeXt bottleneck block in its "aggregated transformations" form (a) — every one of
its 64 paths written out as its own branch, as in ResNeXt-101 64x4d — and its reference outputs
computed with numpy in float64, for an end-to-end check of the batch merges:

    x -> 64 x [Conv1x1 16->4 + Relu -> Conv3x3 4->4 pads 1 + Relu -> Conv1x1 4->16] -> Sum + x -> Relu

With the parallel passes, wide-merge makes the 64 first 1x1s one conv (16 -> 256), and
batch-merge-conv makes the 3x3s and the last 1x1s grouped convs (group 64) reading the previous
result's slices directly: the block becomes ResNeXt's form (c) without a single Concat. 64 paths
are past kMaxJointMembers (32), so no joint kernel competes.

usage: resnext_paths_model.py OUT_DIR   (writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_ref import conv  # noqa: E402

PATHS, CIN, WIDTH, SIZE = 64, 16, 4, 6


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, CIN, SIZE, SIZE)).astype(np.float32)
    x64 = x.astype(np.float64)
    inits, nodes, outs = [], [], []
    total = np.zeros((1, CIN, SIZE, SIZE))
    for p in range(PATHS):
        ws = [(rng.standard_normal((WIDTH, CIN, 1, 1)) * 0.4).astype(np.float32),
              (rng.standard_normal((WIDTH, WIDTH, 3, 3)) * 0.3).astype(np.float32),
              (rng.standard_normal((CIN, WIDTH, 1, 1)) * 0.3).astype(np.float32)]
        bs = [(rng.standard_normal(WIDTH) * 0.1).astype(np.float32),
              (rng.standard_normal(WIDTH) * 0.1).astype(np.float32)]
        for i, w in enumerate(ws):
            inits.append(numpy_helper.from_array(w, f"w{i}_{p}"))
        for i, b in enumerate(bs):
            inits.append(numpy_helper.from_array(b, f"b{i}_{p}"))
        nodes += [
            helper.make_node("Conv", ["x", f"w0_{p}", f"b0_{p}"], [f"a_{p}"], name=f"reduce_{p}",
                             kernel_shape=[1, 1]),
            helper.make_node("Relu", [f"a_{p}"], [f"ar_{p}"], name=f"reduce_relu_{p}"),
            helper.make_node("Conv", [f"ar_{p}", f"w1_{p}", f"b1_{p}"], [f"b_{p}"], name=f"conv3x3_{p}",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [f"b_{p}"], [f"br_{p}"], name=f"conv3x3_relu_{p}"),
            helper.make_node("Conv", [f"br_{p}", f"w2_{p}"], [f"c_{p}"], name=f"expand_{p}",
                             kernel_shape=[1, 1]),
        ]
        outs.append(f"c_{p}")
        a = np.maximum(conv(x64, ws[0], pad=0) + bs[0].reshape(1, -1, 1, 1), 0)
        b = np.maximum(conv(a, ws[1], pad=1) + bs[1].reshape(1, -1, 1, 1), 0)
        total += conv(b, ws[2], pad=0)
    nodes.append(helper.make_node("Sum", outs, ["paths"], name="aggregate"))
    nodes.append(helper.make_node("Add", ["paths", "x"], ["res"], name="shortcut"))
    nodes.append(helper.make_node("Relu", ["res"], ["y"], name="out_relu"))
    y = np.maximum(total + x64, 0).astype(np.float32)
    graph = helper.make_graph(
        nodes, "resnext_paths",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for fname, arr, name in [("input_0.pb", x, "x"), ("output_0.pb", y, "y")]:
        with open(os.path.join(data, fname), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())


if __name__ == "__main__":
    main()
