# Makes the model of e2e.empty_past (issue #40 item 2): the KV-cache ops of a decoder over a
# cache that may be empty (the dynamic dim `past` ranges from 0), with numpy's outputs.
#   q, new_k, new_v f32[1, 2, seq, 8]; past_k, past_v f32[1, 2, past, 8]
#   present_k/v = Concat(past, new, axis 2)        [1, 2, past+seq, 8]  (an empty operand at 0)
#   probs = Softmax(q @ present_k^T / sqrt(8))       [1, 2, seq, past+seq]
#   ctx = probs @ present_v                          [1, 2, seq, 8]
#   gram = past_k^T @ past_k + bias                  [1, 2, 8, 8]  (MatMul with K = past: the bias at 0)
#   ksum = ReduceSum(past_k, axis 2)                 [1, 2, 1, 8]  (zeros at 0)
#   ksm = Softmax(past_k^T, axis -1) [1, 2, 8, past] (empty at 0)
#   tail = Relu(Slice(past_v, past axis from 1))     [1, 2, max(past-1, 0), 8]
# Writes OUT/model.onnx and one test data set per SEQ:PAST (default 3:0 1:5 2:4 4:0).
#   /usr/bin/python3 tests/e2e/empty_past_model.py OUT [SEQ:PAST ...]
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
sets = [tuple(int(v) for v in s.split(":")) for s in sys.argv[2:]] or [(3, 0), (1, 5), (2, 4), (4, 0)]
os.makedirs(out, exist_ok=True)
I = numpy_helper.from_array
rng = np.random.default_rng(7)
bias = rng.standard_normal((8, 8)).astype(np.float32)
nodes = [
    helper.make_node("Concat", ["past_k", "new_k"], ["present_k"], axis=2, name="cat_k"),
    helper.make_node("Concat", ["past_v", "new_v"], ["present_v"], axis=2, name="cat_v"),
    helper.make_node("Transpose", ["present_k"], ["kT"], perm=[0, 1, 3, 2], name="kT"),
    helper.make_node("MatMul", ["q", "kT"], ["raw"], name="scores"),
    helper.make_node("Mul", ["raw", "scale"], ["scores"], name="scale"),
    helper.make_node("Softmax", ["scores"], ["probs"], axis=-1, name="softmax"),
    helper.make_node("MatMul", ["probs", "present_v"], ["ctx"], name="ctx"),
    helper.make_node("Transpose", ["past_k"], ["pkT"], perm=[0, 1, 3, 2], name="pkT"),
    helper.make_node("MatMul", ["pkT", "past_k"], ["gram0"], name="gram"),
    helper.make_node("Add", ["gram0", "bias"], ["gram"], name="gram_bias"),
    helper.make_node("ReduceSum", ["past_k", "axis2"], ["ksum"], keepdims=1, name="ksum"),
    helper.make_node("Softmax", ["pkT"], ["ksm"], axis=-1, name="empty_softmax"),
    helper.make_node("Slice", ["past_v", "one", "big", "axis2"], ["vtail"], name="tail"),
    helper.make_node("Relu", ["vtail"], ["tail"], name="relu"),
]
graph = helper.make_graph(
    nodes, "empty_past",
    [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 2, "seq", 8]),
     helper.make_tensor_value_info("new_k", TensorProto.FLOAT, [1, 2, "seq", 8]),
     helper.make_tensor_value_info("new_v", TensorProto.FLOAT, [1, 2, "seq", 8]),
     helper.make_tensor_value_info("past_k", TensorProto.FLOAT, [1, 2, "past", 8]),
     helper.make_tensor_value_info("past_v", TensorProto.FLOAT, [1, 2, "past", 8])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in (
        ("present_k", [1, 2, "total", 8]), ("present_v", [1, 2, "total", 8]),
        ("probs", [1, 2, "seq", "total"]), ("ctx", [1, 2, "seq", 8]), ("gram", [1, 2, 8, 8]),
        ("ksum", [1, 2, 1, 8]), ("ksm", [1, 2, 8, "past"]), ("tail", [1, 2, "tail", 8]))],
    [I(np.array(1 / np.sqrt(8), np.float32), "scale"), I(bias, "bias"),
     I(np.array([2], np.int64), "axis2"), I(np.array([1], np.int64), "one"),
     I(np.array([1 << 30], np.int64), "big")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))


def softmax(x):
    if x.shape[-1] == 0:
        return x.copy()
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


for k, (seq, past) in enumerate(sets):
    d = os.path.join(out, f"test_data_set_{k}")
    os.makedirs(d, exist_ok=True)
    xs = {n: rng.standard_normal((1, 2, seq if n.startswith(("q", "new")) else past, 8)).astype(np.float32)
          for n in ("q", "new_k", "new_v", "past_k", "past_v")}
    pk = np.concatenate([xs["past_k"], xs["new_k"]], 2)
    pv = np.concatenate([xs["past_v"], xs["new_v"]], 2)
    probs = softmax((xs["q"] @ pk.transpose(0, 1, 3, 2)) * np.float32(1 / np.sqrt(8)))
    pkT = xs["past_k"].transpose(0, 1, 3, 2)
    ys = {"present_k": pk, "present_v": pv, "probs": probs, "ctx": probs @ pv,
          "gram": pkT @ xs["past_k"] + bias, "ksum": xs["past_k"].sum(2, keepdims=True),
          "ksm": softmax(pkT), "tail": np.maximum(xs["past_v"][:, :, 1:], 0)}
    for i, n in enumerate(("q", "new_k", "new_v", "past_k", "past_v")):
        onnx.save_tensor(I(xs[n], n), os.path.join(d, f"input_{i}.pb"))
    for i, n in enumerate(("present_k", "present_v", "probs", "ctx", "gram", "ksum", "ksm", "tail")):
        onnx.save_tensor(I(ys[n].astype(np.float32), n), os.path.join(d, f"output_{i}.pb"))
