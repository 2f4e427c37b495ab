#!/usr/bin/env python3
"""torchvision's ResNet-18 quantized to int8 in QDQ form, for the zoo (issue #42):

    /usr/bin/python3 models/resnet18_int8.py --out DIR [--force]

writes DIR/resnet18_int8/{model.onnx, test_data_set_0/{input_0.pb, output_0.pb}, meta.json}.

1. The float model: models/export.py's resnet18 (torchvision, settled random weights, 224x224),
   exported into DIR/resnet18 when it is not there yet.
2. tools/quantize/quantize.py rewrites it as onnxruntime's quantize_static writes QDQ models
   (uint8 activations, int8 weights per output channel, int32 biases, Relus folded), calibrated on
   8 seeded standard-normal inputs through onnxruntime-node.
3. Expected output: onnxruntime-node with its graph optimizations off on export.py's input, i.e.
   the graph as the ONNX operators define it (dequantize, compute in float32, quantize).

Tolerance: the output is the logits' DequantizeLinear, whole steps of its scale. Magneto runs the
convolutions as QLinearConv (int32 sums, one rounding: what onnxruntime with optimizations does
too), which differs from the float reading by one step wherever float rounding put a sum next to a
half step, and such steps propagate through 20 layers: measured 2 output steps against the float
reading (onnxruntime with and without its optimizations: also 2). atol = 4 steps, rtol 0. A
dropped zero point or a wrong per-channel scale moves the logits by tens of steps.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "quantize"))
import ort_reference as ref  # noqa: E402
import quantize  # noqa: E402

NAME = "resnet18_int8"
FLOAT = "resnet18"
STEPS = 4.0


def main():
    return build(NAME, FLOAT, STEPS, __doc__, os.path.abspath(__file__))


def build(NAME, FLOAT, STEPS, doc, script, drift=0.5):
    """Quantizes export.py's FLOAT into OUT/NAME with an atol of STEPS output steps (the command
    line of the calling script: --out DIR [--force]). Shared by the *_int8.py scripts. The
    quantized model must keep the float model's top class and stay within drift times the float
    output's standard deviation of it (else the quantizer is wrong)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    folder = os.path.join(args.out, NAME)
    # The calling script, this one, ort_reference.py and the quantizer decide the model.
    with open(quantize.__file__, "rb") as f:
        dig = hashlib.sha1((ref.digest(script) + ref.digest(os.path.abspath(__file__)) + f.read().hex()).encode()
                           ).hexdigest()[:12]
    if not args.force and ref.up_to_date(folder, dig):
        print("[%s] up to date: %s" % (NAME, folder))
        return 0
    t0 = time.time()
    src = os.path.join(args.out, FLOAT)
    if not os.path.exists(os.path.join(src, "model.onnx")):
        r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export.py"), "--out", args.out, "--models", FLOAT])
        if r.returncode != 0:
            print("[%s] the float export failed" % NAME, file=sys.stderr)
            return 1
    fmodel = onnx.load(os.path.join(src, "model.onnx"))
    qmodel, counts = quantize.quantize_model(fmodel, calibration=8, seed=0)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(qmodel, os.path.join(folder, "model.onnx"))
    x = ref.load_tensor(os.path.join(src, "test_data_set_0", "input_0.pb"))
    ref.save_tensor(x, qmodel.graph.input[0].name, os.path.join(data, "input_0.pb"))
    r = subprocess.run(["node", os.path.join(ROOT, "tools", "ort", "run_ort.js"), os.path.join(folder, "model.onnx"),
                        "--inputs", os.path.join(data, "input_0.pb"), "--outputs-dir", data, "--threads", "2",
                        "--no-graph-opt", "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        print("[%s] onnxruntime-node failed: %s" % (NAME, r.stderr[-400:]), file=sys.stderr)
        return 1
    y = ref.load_tensor(os.path.join(data, "output_0.pb"))
    y_float = ref.load_tensor(os.path.join(src, "test_data_set_0", "output_0.pb"))
    # The output's quantization step: the last QuantizeLinear's scale.
    inits = {t.name: t for t in qmodel.graph.initializer}
    last_q = [n for n in qmodel.graph.node if n.op_type == "QuantizeLinear"][-1]
    y_scale = float(onnx.numpy_helper.to_array(inits[last_q.input[1]]))
    q_err = float(np.abs(y - y_float).max())
    std = float(np.std(y_float))
    # The quantized model must stay close to the float one (else the rewrite is wrong) and agree on
    # the top class.
    if not np.all(np.isfinite(y)) or q_err > drift * std or int(np.argmax(y)) != int(np.argmax(y_float)):
        print("[%s] BAD: quantized output off the float model's (max diff %g, std %g, top-1 %d vs %d)"
              % (NAME, q_err, std, int(np.argmax(y)), int(np.argmax(y_float))), file=sys.stderr)
        return 1
    atol = STEPS * y_scale
    ref.write_meta(folder, {
        "name": NAME, "scripts": dig, "input_shape": list(x.shape), "output_shape": list(y.shape),
        "nodes": len(qmodel.graph.node), "quantized": counts,
        "ops": {op: [n.op_type for n in qmodel.graph.node].count(op)
                for op in sorted({n.op_type for n in qmodel.graph.node})},
        "output_scale": y_scale, "float_output_std": std, "quantized_vs_float_max_diff": q_err,
        "tolerance": {"rtol": 0.0, "atol": atol, "output_atol": {qmodel.graph.output[0].name: atol},
                      "why": "%g output quantization steps: the integer convolutions round once where the float "
                             "reading of the QDQ graph rounds its float sums (see models/%s.py)" % (STEPS, NAME)},
        "seconds": round(time.time() - t0, 2)})
    print("[%s] ok: %s nodes=%d output scale=%.4g atol=%.4g (|quantized - float| max %.4g, float std %.4g) %.1fs"
          % (NAME, folder, len(qmodel.graph.node), y_scale, atol, q_err, std, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
