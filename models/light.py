#!/usr/bin/env python3
"""Prepares the nine 'light' model-zoo graphs (ONNX's backend-test copies of AlexNet, DenseNet-121,
Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512) for checks and benchmarks.

The shipped files replace every float weight by a ConstantOfShape node (value 0.02), which makes
every channel identical and hides wrong indexing. This script gives each weight seeded random
values instead, keeping the graph exactly as the exporter wrote it otherwise (opset 9, weights
also listed as graph inputs, unfused BatchNormalization, LRN, Sum, Reshape-based channel shuffle):

  - a ConstantOfShape that feeds a Conv or Gemm weight becomes an initializer of He-normal values
    (std sqrt(2 / fan_in)), so activations keep their scale through 100+ layers;
  - BatchNormalization's scale ~ 1, bias and mean ~ 0, variance ~ 1 (all positive), and the
    Caffe2-style per-channel Mul/Add after it get values near 1 and near 0;
  - any other float weight: small values (std 0.02).

Each model becomes OUT/light_NAME/model.onnx, test_data_set_0/input_0.pb (seeded randn),
test_data_set_0/output_K.pb (onnxruntime-node's outputs on that input: the independent reference
`magnetoc check` compares against; onnxruntime-node is required) and meta.json (the suggested
tolerance, as the zoo's). A graph ending in Softmax gets its logits as a second output (expose_logits).
Existing folders are kept unless --force.

    /usr/bin/python3 models/light.py --out models/zoo          # from models/light/ (see its README)
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAMES = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
         "squeezenet", "vgg19", "zfnet512"]


def consumers(graph):
    use = {}
    for node in graph.node:
        for k, name in enumerate(node.input):
            use.setdefault(name, []).append((node, k))
    return use


def weight_values(shape, uses, all_uses, rng):
    """Seeded values for one float weight, chosen by the op and operand slot that reads it."""
    shape = [int(d) for d in shape]
    n = int(np.prod(shape)) if shape else 1
    for node, k in uses:
        op = node.op_type
        if op == "Conv" and k == 1:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            return rng.normal(0.0, np.sqrt(2.0 / max(fan_in, 1)), shape)
        if op == "Gemm" and k == 1:
            trans_b = any(a.name == "transB" and a.i for a in node.attribute)
            fan_in = shape[1] if trans_b and len(shape) == 2 else shape[0]
            return rng.normal(0.0, np.sqrt(1.0 / max(fan_in, 1)), shape)
        if op == "BatchNormalization":
            if k == 1:
                return 1.0 + rng.uniform(-0.1, 0.1, shape)
            if k in (2, 3):
                return rng.uniform(-0.05, 0.05, shape)
            if k == 4:
                return rng.uniform(0.9, 1.1, shape)
        if op in ("Unsqueeze", "Reshape") and k == 0:
            # Caffe2's scale layer: per-channel parameters unsqueezed for Mul (scale) or Add (shift).
            for o in node.output:
                for nxt, _ in all_uses.get(o, []):
                    if nxt.op_type == "Mul":
                        return 1.0 + rng.uniform(-0.1, 0.1, shape)
            return rng.uniform(-0.05, 0.05, shape)
        if op == "Mul":
            return 1.0 + rng.uniform(-0.1, 0.1, shape)
    return rng.normal(0.0, 0.02, n).reshape(shape)


def randomize(model, seed):
    g = model.graph
    rng = np.random.default_rng(seed)
    uses_of = consumers(g)
    inits = {t.name: t for t in g.initializer}
    keep_nodes, new_inits, drop = [], [], set()
    for node in g.node:
        if node.op_type != "ConstantOfShape":
            keep_nodes.append(node)
            continue
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        shape_name = node.input[0]
        if value is None or value.data_type != onnx.TensorProto.FLOAT or shape_name not in inits:
            keep_nodes.append(node)
            continue
        shape = numpy_helper.to_array(inits[shape_name]).tolist()
        vals = weight_values(shape, uses_of.get(node.output[0], []), uses_of, rng)
        new_inits.append(numpy_helper.from_array(np.asarray(vals, np.float32), node.output[0]))
        drop.add(shape_name)
    # Float initializers that were shipped as values (BatchNorm parameters, biases) get seeded
    # values too, chosen by their consumers.
    out_inits = []
    for t in g.initializer:
        if t.name in drop:
            continue
        if t.data_type == onnx.TensorProto.FLOAT:
            arr = numpy_helper.to_array(t)
            vals = weight_values(arr.shape, uses_of.get(t.name, []), uses_of, rng)
            t = numpy_helper.from_array(np.asarray(vals, np.float32), t.name)
        out_inits.append(t)
    del g.node[:]
    g.node.extend(keep_nodes)
    del g.initializer[:]
    g.initializer.extend(out_inits + new_inits)
    # Old IR versions list every initializer among the graph inputs: keep that form.
    listed = {i.name for i in g.input}
    dropped_inputs = [i for i in g.input if i.name in drop]
    for i in dropped_inputs:
        g.input.remove(i)
    if model.ir_version < 4:
        for t in new_inits:
            if t.name not in listed:
                g.input.append(helper.make_tensor_value_info(t.name, onnx.TensorProto.FLOAT, list(t.dims)))
    return model


def expose_logits(model):
    """A graph that ends in Softmax also outputs the Softmax's input: random weights can make the
    probabilities one-hot (a check of them would then compare zeros and ones), the logits keep
    every difference visible."""
    g = model.graph
    outs = {o.name for o in g.output}
    infos = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(model).graph.value_info}
    for node in g.node:
        if node.op_type == "Softmax" and node.output[0] in outs and node.input[0] in infos:
            g.output.append(infos[node.input[0]])


def real_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def prepare(name, src, out, seed, force):
    path = os.path.join(src, "light_%s.onnx" % name)
    dest = os.path.join(out, "light_" + name)
    data = os.path.join(dest, "test_data_set_0")
    if os.path.exists(os.path.join(dest, "meta.json")) and not force:
        print("light.py: %s exists (--force to redo)" % dest)
        return True
    if not os.path.exists(path):
        print("light.py: missing %s" % path, file=sys.stderr)
        return False
    model = randomize(onnx.load(path), seed)
    expose_logits(model)
    onnx.checker.check_model(model)
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(dest, "model.onnx"))
    rng = np.random.default_rng(seed + 1)
    inputs = []
    for k, vi in enumerate(real_inputs(model)):
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in vi.type.tensor_type.shape.dim]
        x = rng.standard_normal(shape).astype(np.float32)
        f = os.path.join(data, "input_%d.pb" % k)
        with open(f, "wb") as fh:
            fh.write(numpy_helper.from_array(x, vi.name).SerializeToString())
        inputs.append(f)
    ort = os.path.join(ROOT, "tools", "ort", "run_ort.js")
    r = subprocess.run(["node", ort, os.path.join(dest, "model.onnx"), "--inputs", *inputs,
                        "--outputs-dir", data, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        print("light.py: onnxruntime failed on %s: %s" % (name, r.stderr.strip()[-400:]), file=sys.stderr)
        return False
    ys = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_%d.pb" % k)))
          for k in range(len(model.graph.output))]
    y = ys[0]
    for k, t in enumerate(ys):
        if not np.all(np.isfinite(t)) or float(np.std(t)) <= 1e-6:
            print("light.py: %s: output %d is not finite or dead (std %g)" % (name, k, float(np.std(t))),
                  file=sys.stderr)
            return False
    # Tolerance as the zoo's (models/export.py): rtol 1e-3, atol 1e-3 x the output's deviation,
    # so that a softmax output of 1e-3-sized probabilities is not checked with an atol above them.
    # Each output gets its own (output_atol, `magnetoc check --atol NAME=A`): the logits beside the
    # probabilities are ~1000x larger, and float32 sums of thousands of terms miss their near-zero
    # entries by ~1e-5 (VGG19's fc8 on an AVX2 machine: Magneto 1.4e-5, onnxruntime 5.2e-6 from a
    # float64 evaluation), far above the probabilities' atol.
    atols = [max(1e-3 * float(np.std(t)), 1e-9) for t in ys]
    meta = {"source": os.path.abspath(path), "seed": seed, "output_shape": list(y.shape),
            "output_std": [float(np.std(t)) for t in ys],
            "tolerance": {"rtol": 1e-3, "atol": min(atols),
                          "output_atol": {o.name: a for o, a in zip(model.graph.output, atols)}}}
    with open(os.path.join(dest, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    print("light.py: wrote %s (output %s, std %.3g)" % (dest, list(y.shape), float(np.std(y))))
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=os.path.join(HERE, "light"), help="folder of light_NAME.onnx (default models/light)")
    ap.add_argument("--out", default=os.path.join(HERE, "zoo"))
    ap.add_argument("--models", default=",".join(NAMES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    ok = all([prepare(n, args.src, args.out, args.seed, args.force) for n in args.models.split(",")])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
