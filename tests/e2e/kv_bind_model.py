# Makes the models of e2e.kv_bind (issue #40 item 5, KV-cache binding; docs/ABI.md), with the
# weights in OUT/NAME/weights.npz for kv_bind_test.py's numpy reference:
#   stacked: a two-layer cache laid out as GPT-2 exports do (torch.stack of per-layer Concats):
#     x f32[1, seq, 8]; past f32[2, 1, 2, past, 4] (the cache axis is 3, not the outermost)
#     new_j = Transpose(Reshape(x @ W_j, [1, -1, 2, 4]), [0, 2, 1, 3])     [1, 2, seq, 4]
#     full_j = Concat(Gather(past, j), new_j, axis 2)                       [1, 2, past+seq, 4]
#     ctx_j = Softmax(new_j @ full_j^T) @ full_j                            [1, 2, seq, 4]
#     total = ReduceSum(Reshape(full_1, [1, -1]), axis 1)                    [1, 1] (a view of full_1)
#     y = ctx_0 + ctx_1 + total;  present = Concat(Unsqueeze(full_0, 0), Unsqueeze(full_1, 0), axis 0)
#   none: y = Relu(x) over x f32[1, seq, 8]: no KV-cache output at all.
#   /usr/bin/python3 tests/e2e/kv_bind_model.py OUT
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
I = numpy_helper.from_array
rng = np.random.default_rng(11)
w = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(2)]


def save(name, graph):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name, "model.onnx"))


nodes, inits = [], [I(np.array([1, -1, 2, 4], np.int64), "shape4"), I(np.array([1, -1], np.int64), "flat"),
                    I(np.array([0], np.int64), "axis0"), I(np.array([1], np.int64), "axis1")]
for j in range(2):
    inits += [I(w[j], f"w{j}"), I(np.array(j, np.int64), f"j{j}")]
    nodes += [
        helper.make_node("MatMul", ["x", f"w{j}"], [f"h{j}"], name=f"proj{j}"),
        helper.make_node("Reshape", [f"h{j}", "shape4"], [f"r{j}"], name=f"split_heads{j}"),
        helper.make_node("Transpose", [f"r{j}"], [f"new{j}"], perm=[0, 2, 1, 3], name=f"heads{j}"),
        helper.make_node("Gather", ["past", f"j{j}"], [f"past{j}"], axis=0, name=f"layer{j}"),
        helper.make_node("Concat", [f"past{j}", f"new{j}"], [f"full{j}"], axis=2, name=f"cat{j}"),
        helper.make_node("Transpose", [f"full{j}"], [f"fullT{j}"], perm=[0, 1, 3, 2], name=f"keysT{j}"),
        helper.make_node("MatMul", [f"new{j}", f"fullT{j}"], [f"s{j}"], name=f"scores{j}"),
        helper.make_node("Softmax", [f"s{j}"], [f"p{j}"], axis=-1, name=f"softmax{j}"),
        helper.make_node("MatMul", [f"p{j}", f"full{j}"], [f"ctx{j}"], name=f"ctx{j}"),
        helper.make_node("Unsqueeze", [f"full{j}", "axis0"], [f"u{j}"], name=f"stack{j}"),
    ]
nodes += [
    helper.make_node("Reshape", ["full1", "flat"], ["flat1"], name="flatten1"),
    helper.make_node("ReduceSum", ["flat1", "axis1"], ["total"], keepdims=1, name="total"),
    helper.make_node("Add", ["ctx0", "ctx1"], ["ctx"], name="ctx_sum"),
    helper.make_node("Add", ["ctx", "total"], ["y"], name="y"),
    helper.make_node("Concat", ["u0", "u1"], ["present"], axis=0, name="present"),
]
f32 = TensorProto.FLOAT
save("stacked", helper.make_graph(
    nodes, "kv_stacked",
    [helper.make_tensor_value_info("x", f32, [1, "seq", 8]),
     helper.make_tensor_value_info("past", f32, [2, 1, 2, "past", 4])],
    [helper.make_tensor_value_info("y", f32, [1, 2, "seq", 4]),
     helper.make_tensor_value_info("present", f32, [2, 1, 2, "total", 4])], inits))
np.savez(os.path.join(out, "stacked", "weights.npz"), w0=w[0], w1=w[1])

save("none", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="relu")], "kv_none",
    [helper.make_tensor_value_info("x", f32, [1, "seq", 8])],
    [helper.make_tensor_value_info("y", f32, [1, "seq", 8])]))
print("kv_bind_model.py: wrote", os.path.join(out, "stacked"), "and", os.path.join(out, "none"))
