#!/usr/bin/env python3
# The N-D convolutions and pools of the cuda/hip targets (runtime/gpu/kernels/mg_conv_nd.cuh) with
# what fuse-epilogue folds into them, in one model with a numpy reference (float64 loops written
# from the ONNX definitions): Conv 3-D with groups, strides, asymmetric pads and dilations, whose
# residual Add and Relu are fused (operand 3 and mg_act); ConvTranspose 3-D with groups, strides,
# pads, dilations and output_padding, LeakyRelu fused; AveragePool 3-D with ceil_mode and
# count_include_pad (a window cut at the end padding); GlobalAveragePool / GlobalMaxPool of rank 5.
#   conv_nd_model.py OUT_DIR   writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0
# Used by tests/e2e/run_gpu_targets.sh (magnetoc check --target cuda|hip --emulate).
import itertools, os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(5)
out = sys.argv[1]

def conv(x, w, b, group, strides, pb, pe, dil):
    N, C = x.shape[:2]; M = w.shape[0]; k = w.shape[2:]; nsp = len(k)
    ins = x.shape[2:]
    o = [(ins[d] + pb[d] + pe[d] - ((k[d]-1)*dil[d]+1))//strides[d] + 1 for d in range(nsp)]
    y = np.zeros((N, M) + tuple(o))
    cg, mg = C//group, M//group
    for oc in itertools.product(*[range(v) for v in o]):
        for kc in itertools.product(*[range(v) for v in k]):
            pos = [oc[d]*strides[d]-pb[d]+kc[d]*dil[d] for d in range(nsp)]
            if any(p < 0 or p >= ins[d] for d, p in enumerate(pos)): continue
            for g in range(group):
                xv = x[(slice(None), slice(g*cg, (g+1)*cg)) + tuple(pos)].astype(np.float64)  # N x cg
                wv = w[(slice(g*mg, (g+1)*mg), slice(None)) + kc].astype(np.float64)      # mg x cg
                y[(slice(None), slice(g*mg, (g+1)*mg)) + oc] += xv @ wv.T
    return y + b.reshape((1, M) + (1,)*nsp)

def convT(x, w, b, group, strides, pb, pe, dil, opad):
    N, C = x.shape[:2]; mg = w.shape[1]; M = mg*group; k = w.shape[2:]; nsp = len(k)
    ins = x.shape[2:]
    o = [strides[d]*(ins[d]-1) + opad[d] + (k[d]-1)*dil[d] + 1 - pb[d] - pe[d] for d in range(nsp)]
    y = np.zeros((N, M) + tuple(o))
    cg = C//group
    for ic in itertools.product(*[range(v) for v in ins]):
        for kc in itertools.product(*[range(v) for v in k]):
            pos = [ic[d]*strides[d]-pb[d]+kc[d]*dil[d] for d in range(nsp)]
            if any(p < 0 or p >= o[d] for d, p in enumerate(pos)): continue
            for g in range(group):
                xv = x[(slice(None), slice(g*cg, (g+1)*cg)) + ic].astype(np.float64)   # N x cg
                wv = w[(slice(g*cg, (g+1)*cg), slice(None)) + kc].astype(np.float64)  # cg x mg
                y[(slice(None), slice(g*mg, (g+1)*mg)) + tuple(pos)] += xv @ wv
    return y + b.reshape((1, M) + (1,)*nsp)

def avgpool(x, k, strides, pb, pe, outs):
    N, C = x.shape[:2]; ins = x.shape[2:]; nsp = len(k)
    y = np.zeros((N, C) + tuple(outs))
    for oc in itertools.product(*[range(v) for v in outs]):
        s = 0; cntPad = 0
        for kc in itertools.product(*[range(v) for v in k]):
            pos = [oc[d]*strides[d]-pb[d]+kc[d] for d in range(nsp)]
            if all(-pb[d] <= p < ins[d]+pe[d] for d, p in enumerate(pos)): cntPad += 1
            if any(p < 0 or p >= ins[d] for d, p in enumerate(pos)): continue
            s = s + x[(slice(None), slice(None)) + tuple(pos)].astype(np.float64)
        y[(slice(None), slice(None)) + oc] = s / cntPad
    return y

x = rng.uniform(-1, 1, (2, 4, 5, 6, 4)).astype(np.float32)
w = rng.uniform(-1, 1, (6, 2, 3, 2, 3)).astype(np.float32)
b = rng.uniform(-1, 1, (6,)).astype(np.float32)
r = rng.uniform(-1, 1, (2, 6, 3, 5, 3)).astype(np.float32)
t = rng.uniform(-1, 1, (1, 4, 3, 2, 3)).astype(np.float32)
tw = rng.uniform(-1, 1, (4, 3, 2, 3, 2)).astype(np.float32)
tb = rng.uniform(-1, 1, (6,)).astype(np.float32)
p = rng.uniform(-1, 1, (1, 3, 5, 5, 5)).astype(np.float32)

y1 = np.maximum(conv(x, w, b, 2, [2, 1, 1], [1, 0, 1], [1, 1, 0], [1, 2, 1]) + r, 0)
z = convT(t, tw, tb, 2, [2, 1, 2], [0, 1, 1], [1, 0, 0], [1, 1, 2], [1, 0, 1])
y2 = np.where(z >= 0, z, 0.1 * z)
y3 = avgpool(p, [2, 2, 2], [2, 2, 2], [1, 0, 0], [0, 0, 0], [3, 3, 3])
y4 = p.astype(np.float64).mean(axis=(2, 3, 4), keepdims=True)
y5 = p.max(axis=(2, 3, 4), keepdims=True)

nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2, strides=[2, 1, 1], pads=[1, 0, 1, 1, 1, 0], dilations=[1, 2, 1]),
    helper.make_node("Add", ["c", "r"], ["a"]),
    helper.make_node("Relu", ["a"], ["y1"]),
    helper.make_node("ConvTranspose", ["t", "tw", "tb"], ["z"], group=2, strides=[2, 1, 2], pads=[0, 1, 1, 1, 0, 0],
                     dilations=[1, 1, 2], output_padding=[1, 0, 1]),
    helper.make_node("LeakyRelu", ["z"], ["y2"], alpha=0.1),
    helper.make_node("AveragePool", ["p"], ["y3"], kernel_shape=[2, 2, 2], strides=[2, 2, 2], pads=[1, 0, 0, 0, 0, 0],
                     ceil_mode=1, count_include_pad=1),
    helper.make_node("GlobalAveragePool", ["p"], ["y4"]),
    helper.make_node("GlobalMaxPool", ["p"], ["y5"]),
]
def vi(n, a): return helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
graph = helper.make_graph(nodes, "fused_nd", [vi("x", x), vi("r", r), vi("t", t), vi("p", p)],
                          [vi("y1", y1), vi("y2", y2), vi("y3", y3), vi("y4", y4), vi("y5", y5)],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
                           numpy_helper.from_array(tw, "tw"), numpy_helper.from_array(tb, "tb")])
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
os.makedirs(out + "/test_data_set_0", exist_ok=True)
onnx.save(m, out + "/model.onnx")
for i, a in enumerate([x, r, t, p]):
    open(f"{out}/test_data_set_0/input_{i}.pb", "wb").write(numpy_helper.from_array(a, ["x", "r", "t", "p"][i]).SerializeToString())
for i, a in enumerate([y1, y2, y3, y4, y5]):
    open(f"{out}/test_data_set_0/output_{i}.pb", "wb").write(numpy_helper.from_array(a.astype(np.float32), f"y{i+1}").SerializeToString())
