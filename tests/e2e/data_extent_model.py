# Makes the model of e2e.data_extent (issue #17, data-dependent extents): detector-style post-
# processing whose output extents are known only at run time, compiled once for the cpu target.
#   scores f32[batch, 8], feats f32[batch, 8, 4], k i64[1] (batch a dynamic dim)
#   mask = scores > 0.5; idx = NonZero(mask) [2, n]; picked = GatherND(feats, idx^T) [n, 4];
#   total = ReduceSum(picked, axis 0) [4]; count = Shape(idx)[1] (shape data of the count);
#   kept = Compress(flat scores, flat mask) [n]; topv, topi = TopK(flat scores, k) [k];
#   rows, per_row = Unique(idx[0]) (values and counts): an extent decided by another's values;
#   best, best_at = TopK(kept, Min(Shape(kept), 3)): exported detectors' top min(K, count).
# Writes OUT/model.onnx and one test data set per (batch, threshold fraction, k) in SETS (numpy's
# outputs): the counts differ between sets, including 0 and every element. OUT/top3/: TopK with
# a constant K after the NonZero (below); OUT/gpu/: NonZero, Compress and a Mul of Compress'
# result at counts 0, some and all, for the cuda/hip targets (below); OUT/gpu_select/: Unique,
# TopK and NonMaxSuppression with run-time counts, for all three targets (below).
#   /usr/bin/python3 tests/e2e/data_extent_model.py OUT [B:FRAC:K ...]   (default 2:0.4:3 ...)
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
sets = [s.split(":") for s in sys.argv[2:]] or [["2", "0.4", "3"], ["1", "0", "0"], ["4", "1", "32"],
                                                 ["3", "0.7", "5"]]
os.makedirs(out, exist_ok=True)
I = numpy_helper.from_array
nodes = [
    helper.make_node("Greater", ["scores", "thr"], ["mask"], name="threshold"),
    helper.make_node("NonZero", ["mask"], ["idx"], name="nonzero"),
    helper.make_node("Transpose", ["idx"], ["idxT"], perm=[1, 0], name="pairs"),
    helper.make_node("GatherND", ["feats", "idxT"], ["picked"], name="pick"),
    helper.make_node("ReduceSum", ["picked", "axis0"], ["total"], keepdims=0, name="total"),
    helper.make_node("Shape", ["idx"], ["idx_shape"], name="shape"),
    helper.make_node("Gather", ["idx_shape", "one"], ["count"], axis=0, name="count"),
    helper.make_node("Reshape", ["scores", "flat"], ["fscores"], name="flat_scores"),
    helper.make_node("Reshape", ["mask", "flat"], ["fmask"], name="flat_mask"),
    helper.make_node("Compress", ["fscores", "fmask"], ["kept"], axis=0, name="compress"),
    helper.make_node("TopK", ["fscores", "k"], ["topv", "topi"], name="topk"),
    helper.make_node("Gather", ["idx", "zero"], ["row_of"], axis=0, name="row_of"),
    helper.make_node("Unique", ["row_of"], ["rows", "first", "inverse", "per_row"], name="unique"),
    helper.make_node("Shape", ["kept"], ["kept_shape"], name="kept_shape"),
    helper.make_node("Min", ["kept_shape", "three"], ["kmin"], name="min_k"),
    helper.make_node("TopK", ["kept", "kmin"], ["best", "best_at"], name="best"),
]
graph = helper.make_graph(
    nodes, "data_extent",
    [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", 8]),
     helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["batch", 8, 4]),
     helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("picked", TensorProto.FLOAT, ["n", 4]),
     helper.make_tensor_value_info("total", TensorProto.FLOAT, [4]),
     helper.make_tensor_value_info("count", TensorProto.INT64, []),
     helper.make_tensor_value_info("kept", TensorProto.FLOAT, ["n"]),
     helper.make_tensor_value_info("topv", TensorProto.FLOAT, ["k"]),
     helper.make_tensor_value_info("topi", TensorProto.INT64, ["k"]),
     helper.make_tensor_value_info("rows", TensorProto.INT64, ["r"]),
     helper.make_tensor_value_info("per_row", TensorProto.INT64, ["r"]),
     helper.make_tensor_value_info("best", TensorProto.FLOAT, ["b"]),
     helper.make_tensor_value_info("best_at", TensorProto.INT64, ["b"])],
    [I(np.array(0.5, np.float32), "thr"), I(np.array([0], np.int64), "axis0"),
     I(np.array(1, np.int64), "one"), I(np.array([-1], np.int64), "flat"),
     I(np.array(0, np.int64), "zero"), I(np.array([3], np.int64), "three")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "model.onnx"))
rng = np.random.default_rng(7)
for n, (b, frac, k) in enumerate(sets):
    b, frac, k = int(b), float(frac), int(k)
    scores = rng.random((b, 8)).astype(np.float32) * 0.5  # all below the threshold
    lift = rng.random((b, 8)) < frac
    scores[lift] += 0.5 + 1e-3
    feats = rng.standard_normal((b, 8, 4)).astype(np.float32)
    mask = scores > 0.5
    idx = np.array(np.nonzero(mask), dtype=np.int64)
    picked = feats[mask].astype(np.float32).reshape(-1, 4)
    flat = scores.reshape(-1)
    order = np.argsort(-flat, kind="stable")[:k]
    outs = {"picked": picked, "total": picked.sum(0).astype(np.float32),
            "count": np.array(idx.shape[1], np.int64), "kept": flat[mask.reshape(-1)],
            "topv": flat[order], "topi": order.astype(np.int64)}
    rows, per_row = np.unique(idx[0], return_counts=True)
    outs["rows"], outs["per_row"] = rows.astype(np.int64), per_row.astype(np.int64)
    best_at = np.argsort(-outs["kept"], kind="stable")[:3]
    outs["best"], outs["best_at"] = outs["kept"][best_at], best_at.astype(np.int64)
    d = os.path.join(out, f"test_data_set_{n}")
    os.makedirs(d, exist_ok=True)
    for i, (name, v) in enumerate([("scores", scores), ("feats", feats), ("k", np.array([k], np.int64))]):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(I(v, name).SerializeToString())
    for i, name in enumerate(["picked", "total", "count", "kept", "topv", "topi", "rows", "per_row", "best",
                              "best_at"]):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(I(outs[name], name).SerializeToString())
    print(f"set {n}: batch {b}, {idx.shape[1]} above the threshold, k {k}")

# OUT/top3/: the top 3 of the values above the threshold (TopK with the constant K = 3 after the
# NonZero): the count's lower bound becomes 3; set 0 has 5 values above it (numpy's top 3), set 1
# only 1, which the package refuses by name at run time.
top3 = os.path.join(out, "top3")
os.makedirs(top3, exist_ok=True)
nodes3 = [helper.make_node("Greater", ["x", "thr"], ["m"], name="threshold"),
          helper.make_node("NonZero", ["m"], ["nz"], name="nonzero"),
          helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0], name="pairs"),
          helper.make_node("GatherND", ["x", "t"], ["v"], name="values"),
          helper.make_node("TopK", ["v", "three"], ["tv", "ti"], name="top3")]
g3 = helper.make_graph(nodes3, "top3", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                       [helper.make_tensor_value_info("tv", TensorProto.FLOAT, [3]),
                        helper.make_tensor_value_info("ti", TensorProto.INT64, [3])],
                       [I(np.array(0.5, np.float32), "thr"), I(np.array([3], np.int64), "three")])
m3 = helper.make_model(g3, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m3)
onnx.save(m3, os.path.join(top3, "model.onnx"))
for n, above in enumerate([5, 1]):
    x = np.full((3, 4), 0.25, np.float32)
    x.reshape(-1)[[1, 4, 6, 9, 11][:above]] = np.array([0.9, 0.6, 0.8, 0.7, 0.95][:above], np.float32)
    v = x[x > 0.5]
    order = np.argsort(-v, kind="stable")[:3]
    d = os.path.join(top3, f"test_data_set_{n}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(I(x, "x").SerializeToString())
    for i, (name, val) in enumerate([("tv", v[order]), ("ti", order.astype(np.int64))]):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(I(val, name).SerializeToString())

# OUT/gpu/: what the cuda/hip packages compute at run time (docs/DYNAMIC_SHAPES.md): NonZero of a
# computed mask, Compress of the flattened scores by it, and a Mul of the kept values (a launch
# whose grid is the count); one build, data sets at 0, 10 and all 24 above the threshold.
gpu = os.path.join(out, "gpu")
os.makedirs(gpu, exist_ok=True)
nodes_g = [helper.make_node("Greater", ["scores", "thr"], ["mask"], name="threshold"),
           helper.make_node("NonZero", ["mask"], ["idx"], name="nonzero"),
           helper.make_node("Reshape", ["scores", "flat"], ["fscores"], name="flat_scores"),
           helper.make_node("Reshape", ["mask", "flat"], ["fmask"], name="flat_mask"),
           helper.make_node("Compress", ["fscores", "fmask"], ["kept"], axis=0, name="compress"),
           helper.make_node("Mul", ["kept", "two"], ["doubled"], name="double")]
gg = helper.make_graph(nodes_g, "gpu_extent", [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [3, 8])],
                       [helper.make_tensor_value_info("idx", TensorProto.INT64, [2, "n"]),
                        helper.make_tensor_value_info("kept", TensorProto.FLOAT, ["m"]),
                        helper.make_tensor_value_info("doubled", TensorProto.FLOAT, ["m"])],
                       [I(np.array(0.5, np.float32), "thr"), I(np.array([-1], np.int64), "flat"),
                        I(np.array(2, np.float32), "two")])
mg = helper.make_model(gg, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(mg)
onnx.save(mg, os.path.join(gpu, "model.onnx"))
for n, above in enumerate([0, 10, 24]):
    scores = rng.random((3, 8)).astype(np.float32) * 0.5
    scores.reshape(-1)[rng.permutation(24)[:above]] += 0.5 + 1e-3
    mask = scores > 0.5
    kept = scores.reshape(-1)[mask.reshape(-1)]
    d = os.path.join(gpu, f"test_data_set_{n}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(I(scores, "scores").SerializeToString())
    for i, (name, val) in enumerate([("idx", np.array(np.nonzero(mask), np.int64)), ("kept", kept),
                                     ("doubled", (kept * 2).astype(np.float32))]):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(I(val, name).SerializeToString())

# OUT/gpu_select/: the other producers of counts that the cuda/hip packages compute at run time:
# Unique of the NonZero's rows (values, first indices, inverse, counts), TopK with K an input and a
# Mul of its values (a launch whose grid is K), TopK of the Compress' values by K = min(3, count)
# (shape data of a count), NonMaxSuppression of boxes by the scores with a score threshold; one
# build, data sets at counts 0, 10 and all 24 with K 0, 3 and 24.
sel = os.path.join(out, "gpu_select")
os.makedirs(sel, exist_ok=True)
nodes_s = [helper.make_node("Greater", ["scores", "thr"], ["mask"], name="threshold"),
           helper.make_node("NonZero", ["mask"], ["idx"], name="nonzero"),
           helper.make_node("Gather", ["idx", "zero"], ["row_of"], axis=0, name="row_of"),
           helper.make_node("Unique", ["row_of"], ["rows", "first", "inverse", "per_row"], name="unique"),
           helper.make_node("Reshape", ["scores", "flat"], ["fscores"], name="flat_scores"),
           helper.make_node("Reshape", ["mask", "flat"], ["fmask"], name="flat_mask"),
           helper.make_node("Compress", ["fscores", "fmask"], ["kept"], axis=0, name="compress"),
           helper.make_node("TopK", ["fscores", "k"], ["topv", "topi"], name="topk"),
           helper.make_node("Mul", ["topv", "two"], ["doubled"], name="double"),
           helper.make_node("Shape", ["kept"], ["kept_shape"], name="kept_shape"),
           helper.make_node("Min", ["kept_shape", "three"], ["kmin"], name="min_k"),
           helper.make_node("TopK", ["kept", "kmin"], ["best", "best_at"], name="best"),
           helper.make_node("Reshape", ["scores", "nms_shape"], ["nms_scores"], name="nms_scores"),
           helper.make_node("NonMaxSuppression", ["boxes", "nms_scores", "max_out", "iou", "thr"], ["selected"],
                            name="nms")]
outs_s = ["rows", "first", "inverse", "per_row", "topv", "topi", "doubled", "best", "best_at", "selected"]
gs = helper.make_graph(
    nodes_s, "gpu_select",
    [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [3, 8]),
     helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
     helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 8, 4])],
    [helper.make_tensor_value_info(n, TensorProto.INT64 if n not in ("topv", "doubled", "best") else TensorProto.FLOAT,
                                   {"inverse": ["n"], "selected": ["s", 3]}.get(n, [n + "_extent"]))
     for n in outs_s],
    [I(np.array(0.5, np.float32), "thr"), I(np.array([-1], np.int64), "flat"), I(np.array(0, np.int64), "zero"),
     I(np.array(2, np.float32), "two"), I(np.array([3], np.int64), "three"), I(np.array([1, 3, 8], np.int64), "nms_shape"),
     I(np.array([4], np.int64), "max_out"), I(np.array([0.3], np.float32), "iou")])
ms = helper.make_model(gs, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(ms)
onnx.save(ms, os.path.join(sel, "model.onnx"))


def iou(a, b):
    ay0, ax0, ay1, ax1 = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    by0, bx0, by1, bx1 = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    ih, iw = min(ay1, by1) - max(ay0, by0), min(ax1, bx1) - max(ax0, bx0)
    if ih <= 0 or iw <= 0:
        return 0.0
    inter = ih * iw
    return inter / ((ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - inter)


for n, (above, k) in enumerate([(0, 0), (10, 3), (24, 24)]):
    scores = rng.random((3, 8)).astype(np.float32) * 0.5
    scores.reshape(-1)[rng.permutation(24)[:above]] += 0.5 + 1e-3
    k0 = rng.random((1, 8, 2)).astype(np.float32) * 2
    boxes = np.concatenate([k0, k0 + 0.5 + rng.random((1, 8, 2)).astype(np.float32)], axis=2)
    mask = scores > 0.5
    idx = np.array(np.nonzero(mask), np.int64)
    rows, first, inverse, per_row = np.unique(idx[0], return_index=True, return_inverse=True, return_counts=True)
    flat = scores.reshape(-1)
    kept = flat[mask.reshape(-1)]
    order = np.argsort(-flat, kind="stable")[:k]
    best_at = np.argsort(-kept, kind="stable")[:3]
    selected = []
    for c in range(3):
        cand = [i for i in np.argsort(-scores[c], kind="stable") if scores[c, i] > 0.5]
        keep = []
        for i in cand:
            if len(keep) < 4 and all(iou(boxes[0, j], boxes[0, i]) <= 0.3 for j in keep):
                keep.append(i)
        selected += [[0, c, i] for i in keep]
    vals = {"rows": rows, "first": first, "inverse": inverse.reshape(-1), "per_row": per_row, "topv": flat[order],
            "topi": order, "doubled": flat[order] * 2, "best": kept[best_at], "best_at": best_at,
            "selected": np.array(selected, np.int64).reshape(-1, 3)}
    d = os.path.join(sel, f"test_data_set_{n}")
    os.makedirs(d, exist_ok=True)
    for i, (name, v) in enumerate([("scores", scores), ("k", np.array([k], np.int64)), ("boxes", boxes)]):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(I(v, name).SerializeToString())
    for i, name in enumerate(outs_s):
        v = vals[name]
        v = v.astype(np.float32) if name in ("topv", "doubled", "best") else v.astype(np.int64)
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(I(v, name).SerializeToString())
