"""Shared by the zoo models whose reference is onnxruntime (models/resnet_qdq.py,
models/detect_postprocess.py): they write OUT/NAME/model.onnx and test_data_set_0/input_K.pb,
then onnxruntime-node's outputs on those inputs (tools/ort/run_ort.js) become
test_data_set_0/output_K.pb, and OUT/NAME/meta.json holds the tolerance that tests/e2e/run_zoo.sh
passes to `magnetoc check` (rtol, atol, and per output `output_atol`, as models/light.py writes it).

A folder whose meta.json names the same script digest is up to date and not redone (--force redoes
it); the digest covers the model's script and this file.
"""
import hashlib
import json
import os
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def digest(script):
    h = hashlib.sha1()
    for f in (script, os.path.abspath(__file__)):
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:12]


def up_to_date(folder, script_digest):
    """True when folder holds a finished export made by the same scripts."""
    try:
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    return (meta.get("scripts") == script_digest and
            os.path.exists(os.path.join(folder, "test_data_set_0", "output_0.pb")))


def save_tensor(arr, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(arr), name).SerializeToString())


def load_tensor(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def ort_outputs(model_path, input_paths, data_dir, n_outputs):
    """Runs onnxruntime-node (CPU, all graph optimizations: it may fuse QDQ patterns into integer
    kernels) on the inputs, writes data_dir/output_K.pb and returns the outputs as arrays."""
    for k in range(n_outputs):
        p = os.path.join(data_dir, "output_%d.pb" % k)
        if os.path.exists(p):
            os.remove(p)
    ort = os.path.join(ROOT, "tools", "ort", "run_ort.js")
    r = subprocess.run(["node", ort, model_path, "--inputs", *input_paths, "--outputs-dir", data_dir,
                        "--threads", "1", "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("onnxruntime-node failed on %s: %s" % (model_path, r.stderr.strip()[-400:]))
    return [load_tensor(os.path.join(data_dir, "output_%d.pb" % k)) for k in range(n_outputs)]


def write_meta(folder, meta):
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
