#!/usr/bin/env python3
"""A detector's post-processing graph for the zoo, checked against onnxruntime (issue #18):

    boxes [1, N, 4], scores [1, C, N]
      -> NonMaxSuppression(max_output_boxes_per_class, iou_threshold, score_threshold: initializers)
      -> selected_indices [K, 3] (batch, class, box)
      -> Slice column 2 -> Squeeze -> Gather(boxes[0], axis 0)  -> det_boxes   [K, 4]
      -> Slice column 1 -> Squeeze                              -> det_classes [K]
      -> GatherND(scores, selected_indices)                     -> det_scores  [K]

    /usr/bin/python3 models/detect_postprocess.py --out DIR [--force]

writes DIR/detect_postprocess/{model.onnx, test_data_set_0/{input_0.pb, input_1.pb,
output_0..3.pb}, meta.json}; meta.json's bind_inputs names the inputs that decide output shapes
and their files (magnetoc compile --bind boxes=FILE --bind scores=FILE compiles the package check
builds). The expected outputs are onnxruntime-node's on the same inputs.

The data: N = 256 boxes drawn around 16 cluster centres in a unit image (side 0.08-0.3, jittered
by a fraction of the side), so boxes of one cluster overlap heavily and most are suppressed; a
quarter of them have their corners swapped (ONNX allows either corner first); C = 4 classes of
uniform scores. score_threshold 0.2 drops a fifth of the candidates, iou_threshold 0.45
suppresses about two thirds of the rest (66-74 of ~200 per class survive), and
max_output_boxes_per_class 70 cuts two of the four classes' lists. The seed is
advanced until no pair of boxes has an IoU within 1e-4 of iou_threshold and no score is within
1e-4 of score_threshold, so a float32 rounding difference cannot flip a decision; every output
is then an exact copy (indices, gathered boxes and scores): the check's tolerance is 0.

Run-time extents: K, the number of kept boxes, depends on the values of boxes and scores. On the
cpu target it is a data symbol (docs/DYNAMIC_SHAPES.md, "Data-dependent extents"): the package
plans the selection at its bound (4 classes x 70 = 280 rows), NonMaxSuppression and the Gathers
run on every run's boxes and scores, and the package reports K after the run; `magnetoc check`
keeps boxes and scores as run-time inputs there. The cuda and hip targets refuse run-time extents,
so for them check binds the inputs that decide an output's shape to the data set's values
(meta.json's bind_inputs; src/frontend/onnx_import.cpp, shapeDeterminingInputs) and the
selection is computed at compile time. docs/USER_GUIDE.md says the same.
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_reference as ref  # noqa: E402

NAME = "detect_postprocess"
N, C = 256, 4
MAX_PER_CLASS, IOU, SCORE = 70, 0.45, 0.2
MARGIN = 1e-4


def make_data(seed):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.15, 0.85, (16, 2))
    k = rng.integers(0, len(centres), N)
    side = rng.uniform(0.08, 0.3, (N, 2))
    c = centres[k] + rng.normal(0.0, 0.15, (N, 2)) * side
    lo, hi = c - side / 2, c + side / 2
    boxes = np.concatenate([lo, hi], axis=1)  # [y1, x1, y2, x2]
    flip = rng.random(N) < 0.25
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = rng.uniform(0.0, 1.0, (C, N))
    return boxes.astype(np.float32)[None], scores.astype(np.float32)[None]


def ambiguous(boxes, scores):
    """True when an IoU lies within MARGIN of IOU or a score within MARGIN of SCORE (or two
    scores of a class tie): float32 rounding could then decide differently in two engines."""
    b = boxes[0].astype(np.float64)
    y1, y2 = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    x1, x2 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    ih = np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None)
    iw = np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
    inter = ih * iw
    area = (y2 - y1) * (x2 - x1)
    iou = inter / (area[:, None] + area[None] - inter)
    s = scores[0].astype(np.float64)
    ties = any(len(np.unique(row)) != len(row) for row in scores[0])
    return bool((np.abs(iou - IOU) < MARGIN).any() or (np.abs(s - SCORE) < MARGIN).any() or ties)


def graph():
    inits = [
        numpy_helper.from_array(np.array([MAX_PER_CLASS], np.int64), "max_output_boxes_per_class"),
        numpy_helper.from_array(np.array([IOU], np.float32), "iou_threshold"),
        numpy_helper.from_array(np.array([SCORE], np.float32), "score_threshold"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([1], np.int64), "col1"),
        numpy_helper.from_array(np.array([2], np.int64), "col2"),
        numpy_helper.from_array(np.array([3], np.int64), "col3"),
    ]
    nodes = [
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_output_boxes_per_class",
                                               "iou_threshold", "score_threshold"],
                         ["selected_indices"], name="nms", center_point_box=0),
        helper.make_node("Slice", ["selected_indices", "col2", "col3", "axis1"], ["box_col"],
                         name="box_col"),
        helper.make_node("Squeeze", ["box_col", "axis1"], ["box_index"], name="box_index"),
        helper.make_node("Squeeze", ["boxes", "axis0"], ["boxes_2d"], name="boxes_2d"),
        helper.make_node("Gather", ["boxes_2d", "box_index"], ["det_boxes"], name="gather_boxes",
                         axis=0),
        helper.make_node("Slice", ["selected_indices", "col1", "col2", "axis1"], ["class_col"],
                         name="class_col"),
        helper.make_node("Squeeze", ["class_col", "axis1"], ["det_classes"], name="det_classes"),
        helper.make_node("GatherND", ["scores", "selected_indices"], ["det_scores"], name="gather_scores"),
    ]
    g = helper.make_graph(
        nodes, NAME,
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, N, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, C, N])],
        [helper.make_tensor_value_info("selected_indices", TensorProto.INT64, ["K", 3]),
         helper.make_tensor_value_info("det_boxes", TensorProto.FLOAT, ["K", 4]),
         helper.make_tensor_value_info("det_scores", TensorProto.FLOAT, ["K"]),
         helper.make_tensor_value_info("det_classes", TensorProto.INT64, ["K"])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="magneto models/detect_postprocess.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    folder = os.path.join(args.out, NAME)
    dig = ref.digest(os.path.abspath(__file__))
    if not args.force and ref.up_to_date(folder, dig):
        print("[%s] up to date: %s" % (NAME, folder))
        return 0
    t0 = time.time()
    seed = 0
    boxes, scores = make_data(seed)
    while ambiguous(boxes, scores):
        seed += 1
        boxes, scores = make_data(seed)
    model = graph()
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    ins = [os.path.join(data, "input_0.pb"), os.path.join(data, "input_1.pb")]
    ref.save_tensor(boxes, "boxes", ins[0])
    ref.save_tensor(scores, "scores", ins[1])
    sel, det_boxes, det_scores, det_classes = ref.ort_outputs(os.path.join(folder, "model.onnx"), ins,
                                                              data, 4)
    # The gathers must be what they say, and the data must exercise the op: most candidates
    # suppressed by overlap in every class, the per-class limit cutting some classes, not all.
    gathered = (np.array_equal(det_boxes, boxes[0][sel[:, 2]]) and np.array_equal(det_classes, sel[:, 1])
                and np.array_equal(det_scores, scores[0][sel[:, 1], sel[:, 2]]))
    per_class = np.bincount(sel[:, 1], minlength=C)
    candidates = (scores[0] > SCORE).sum(axis=1)
    cut = per_class == MAX_PER_CLASS
    if not gathered or (2 * per_class >= candidates).any() or cut.all() or not cut.any():
        print("[%s] BAD: gathers consistent %s, kept %s of %s candidates per class"
              % (NAME, gathered, per_class.tolist(), candidates.tolist()), file=sys.stderr)
        return 1
    names = [o.name for o in model.graph.output]
    ref.write_meta(folder, {
        "name": NAME, "scripts": dig, "data_seed": seed, "boxes": N, "classes": C,
        "max_output_boxes_per_class": MAX_PER_CLASS, "iou_threshold": IOU, "score_threshold": SCORE,
        "candidates_per_class": candidates.tolist(), "kept_per_class": per_class.tolist(),
        "selected": int(sel.shape[0]),
        # The inputs that decide output shapes, bound to these values when the model is compiled
        # (magnetoc compile --bind NAME=FILE; tests/e2e/targets_accept_zoo_test.sh).
        "bind_inputs": {"boxes": "test_data_set_0/input_0.pb", "scores": "test_data_set_0/input_1.pb"},
        "tolerance": {"rtol": 0.0, "atol": 0.0, "output_atol": {n: 0.0 for n in names},
                      "why": "outputs are indices and exact copies of input values; no decision lies within "
                             "%g of a threshold" % MARGIN},
        "seconds": round(time.time() - t0, 2)})
    print("[%s] ok: %s data seed %d, kept %s of %s candidates per class (%d selected) %.1fs"
          % (NAME, folder, seed, per_class.tolist(), candidates.tolist(), sel.shape[0], time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
