#!/usr/bin/env python3
"""Writes Magneto's test set for ONNX opsets 18 to 21 (issue #8) and its expected outputs.

    make_opset_tests.py OUT_DIR [--filter REGEX] [--ort tools/ort/run_ort.js] [--jobs N]
                        [--models-only]
    make_opset_tests.py --list          (one line per case: name, opset, op-versions; no files)

For every case: OUT_DIR/NAME/model.onnx and OUT_DIR/NAME/test_data_set_0/input_K.pb (seeded numpy
inputs, one per graph input), then output_K.pb computed by onnxruntime-node (tools/ort/run_ort.js,
one thread). Nothing here computes expected values itself: onnxruntime is the oracle.

Debian's python3-onnx is 1.12 and knows opsets up to 17: its helper API writes newer ops fine
(make_node does not look at schemas), but its checker rejects opsets > 17, so models are saved
unchecked, with IR version 8. OP_VERSIONS below records when each operator used here last changed,
so that --list can say which operator *version* a case covers (docs/CONFORMANCE.md's section
"Opsets 18 to 21" is generated from it by tools/conformance/gen_conformance.py).

The cases themselves are in cases_ops.py (single operators) and cases_graphs.py (small graphs,
control flow), written with opset_case_lib.py's builders.

The output is deterministic: inputs come from numpy generators seeded by the case name, and
onnxruntime runs single-threaded. Run it with /usr/bin/python3 (Debian's onnx and numpy).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opset_case_lib import (CASES, IR_VERSION, OP_VERSIONS, ROOT, UNSUPPORTED, helper,  # noqa: E402,F401
                            numpy_helper, onnx)
from cases_graphs import control_flow_cases, model_cases  # noqa: E402
from cases_ops import (cast_cases, centercroppad_cases, col2im_cases, dft_cases,  # noqa: E402
                       elementwise_cases, groupnorm_cases, pad_cases, pool_cases, quantize_cases,
                       reduce_cases, resize_cases, scatter_cases, split_cases, view_cases)


def build_cases():
    if CASES:
        return CASES
    for f in (reduce_cases, split_cases, pad_cases, resize_cases, scatter_cases, col2im_cases,
              groupnorm_cases, centercroppad_cases, elementwise_cases, quantize_cases, cast_cases,
              view_cases, pool_cases, dft_cases, model_cases, control_flow_cases):
        f()
    return CASES


# ------------------------------------------------------------------------------ writing
def tensor_type(dt):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)]


def write_case(c, out):
    d = os.path.join(out, c.name)
    data = os.path.join(d, "test_data_set_0")
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(data)
    ins = [helper.make_tensor_value_info(name, tensor_type(v.dtype), v.shape)
           for name, v in c.inputs]
    outs = [helper.make_tensor_value_info(name, tensor_type(dt), None)
            for name, dt in c.outputs]
    inits = [numpy_helper.from_array(v, name) for name, v in c.inits]
    graph = helper.make_graph(c.nodes, c.name, ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c.opset)],
                              producer_name="magneto-opset-tests")
    model.ir_version = IR_VERSION
    onnx.save(model, os.path.join(d, "model.onnx"))  # unchecked: 1.12's checker stops at 17
    files = []
    for k, (name, v) in enumerate(c.inputs):
        p = os.path.join(data, "input_%d.pb" % k)
        with open(p, "wb") as f:
            f.write(numpy_helper.from_array(v, name).SerializeToString())
        files.append(p)
    return d, data, files


def ort_args(model, inputs, outdir):
    args = [model, "--outputs-dir", outdir, "--threads", "1", "--quiet"]
    if inputs:
        args += ["--inputs"] + inputs
    return args


def run_ort_batch(ort, runs, tmpdir, k):
    """One node process runs every case of `runs` (run_ort.js --batch: node and onnxruntime start
    once, which was most of a case's time). Returns (exit status, stderr)."""
    path = os.path.join(tmpdir, "batch_%d.jsonl" % k)
    with open(path, "w") as f:
        for args in runs:
            f.write(json.dumps(args) + "\n")
    r = subprocess.run(["node", ort, "--batch", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--filter", default="", help="only cases whose name matches this regex")
    ap.add_argument("--ort", default=os.path.join(ROOT, "tools", "ort", "run_ort.js"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="onnxruntime processes at a time")
    ap.add_argument("--models-only", action="store_true", help="no expected outputs (no node)")
    ap.add_argument("--list", action="store_true",
                    help="print NAME<TAB>OPSET<TAB>OP-VERSIONS<TAB>DOC per case and exit")
    a = ap.parse_args()
    cases = [c for c in build_cases() if re.search(a.filter, c.name)]
    if a.list:
        for c in cases:
            print("%s\t%d\t%s\t%s" % (c.name, c.opset, ",".join(c.covers()), c.doc))
        return 0
    if not a.out:
        ap.error("OUT_DIR is required (unless --list)")
    if onnx is None:
        print("make_opset_tests: needs python3-onnx (run it with /usr/bin/python3)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    written = [(c,) + write_case(c, a.out) for c in cases]
    failed = 0
    if not a.models_only:
        # a.jobs node processes, each running its share of the cases in one session after
        # another. Each case writes only its own folder, so the result does not depend on the order.
        jobs = max(1, min(a.jobs, len(written)))
        shares = [written[k::jobs] for k in range(jobs)]
        with tempfile.TemporaryDirectory() as tmp, \
                concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            runs = [pool.submit(run_ort_batch, a.ort,
                                [ort_args(os.path.join(d, "model.onnx"), inputs, data)
                                 for c, d, data, inputs in share], tmp, k)
                    for k, share in enumerate(shares)]
            logs = [run.result()[1] for run in runs]
        for c, d, data, inputs in written:
            n_out = len([f for f in os.listdir(data) if f.startswith("output_")])
            if n_out != len(c.outputs):
                failed += 1
                model = os.path.join(d, "model.onnx")
                why = [l for log in logs for l in log.splitlines() if "(%s)" % model in l]
                print("make_opset_tests: onnxruntime failed on %s: %s" % (
                    c.name, why[0] if why else "it wrote %d of %d outputs" % (n_out, len(c.outputs))),
                    file=sys.stderr)
    print("make_opset_tests: wrote %d cases to %s%s" % (
        len(cases), a.out, "" if not failed else " (%d without expected outputs)" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
