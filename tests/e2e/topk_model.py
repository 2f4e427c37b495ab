# Makes the model of e2e.topk (issue #40): TopK with constant K (the MoE router's and top-k
# sampling's form) on shapes that exercise every path of the cuda/hip program (mg_topk.cuh):
#   a  f32[37, 50]    K = 1 largest and K = 50 (the axis' length) smallest over the last axis,
#                     values with many ties and NaNs (NaN above every number, ties by lower index)
#   b  f32[3, 300, 5] K = 7 over axis -2: strided rows of 300 (several chunks of the running top-K)
#   c  i64[5, 2000]   K = 1500 smallest: more than the largest chunk (the counting path)
#   d  f64[4, 33]     K = 33 largest, with -0.0 beside 0.0 (equal: index order)
# Expected outputs from Python's sort with the CPU kernel's order (never our interpreter).
#   /usr/bin/python3 tests/e2e/topk_model.py OUT
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
I = numpy_helper.from_array
rng = np.random.default_rng(40)
a = (rng.integers(-4, 5, (37, 50)) * 0.5).astype(np.float32)
a[rng.random((37, 50)) < 0.05] = np.nan
b = (rng.integers(-20, 21, (3, 300, 5)) * 0.25).astype(np.float32)
c = rng.integers(-1000, 1000, (5, 2000)).astype(np.int64)
d = (rng.integers(-3, 4, (4, 33)) / 3).astype(np.float64)
d[d == 0] = -0.0
d[:, ::4] = 0.0
inputs = [("a", a), ("b", b), ("c", c), ("d", d)]
# (input, K, axis, largest, values name, indices name)
tops = [("a", 1, -1, 1, "a_max", "a_argmax"), ("a", 50, 1, 0, "a_sorted", "a_order"),
        ("b", 7, -2, 1, "b_top", "b_at"), ("c", 1500, 1, 0, "c_low", "c_at"), ("d", 33, -1, 1, "d_desc", "d_at")]


def topk(x, k, axis, largest):
    x = np.moveaxis(x, axis, -1)
    vals, idx = np.empty(x.shape[:-1] + (k,), x.dtype), np.empty(x.shape[:-1] + (k,), np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        row = x[pos]
        def key(j):
            v = float(row[j])
            if math.isnan(v):
                return (0 if largest else 1, 0.0, j)
            return (1 if largest else 0, -v if largest else v, j)
        order = sorted(range(row.shape[0]), key=key)[:k]
        vals[pos], idx[pos] = row[order], order
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


nodes, consts, outs, expected = [], [], [], []
types = {"a": TensorProto.FLOAT, "b": TensorProto.FLOAT, "c": TensorProto.INT64, "d": TensorProto.DOUBLE}
for n, (x, k, axis, largest, vn, iname) in enumerate(tops):
    consts.append(I(np.array([k], np.int64), f"k{n}"))
    nodes.append(helper.make_node("TopK", [x, f"k{n}"], [vn, iname], axis=axis, largest=largest, name=f"top{n}"))
    v, i = topk(dict(inputs)[x], k, axis, largest)
    outs += [helper.make_tensor_value_info(vn, types[x], list(v.shape)),
             helper.make_tensor_value_info(iname, TensorProto.INT64, list(i.shape))]
    expected += [(vn, v), (iname, i)]
graph = helper.make_graph(nodes, "topk", [helper.make_tensor_value_info(n, types[n], list(v.shape)) for n, v in inputs],
                          outs, consts)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
ds = os.path.join(out, "test_data_set_0")
os.makedirs(ds, exist_ok=True)
for i, (name, v) in enumerate(inputs):
    with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
        f.write(I(v, name).SerializeToString())
for i, (name, v) in enumerate(expected):
    with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
        f.write(I(v, name).SerializeToString())
