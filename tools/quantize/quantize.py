#!/usr/bin/env python3
"""Static QDQ quantization of a float ONNX model, in the form onnxruntime's quantize_static writes
(QuantFormat.QDQ, per_channel=True, QUInt8 activations, QInt8 weights, MinMax calibration):

    /usr/bin/python3 tools/quantize/quantize.py FLOAT.onnx OUT.onnx [--calibration N] [--seed S]
                                                [--reduce-range]

Calibration: N seeded random inputs (standard normal, the model's static input shapes) run through
onnxruntime-node (tools/ort/run_ort.js --ranges) on a copy of the model whose every float
intermediate is a graph output; each activation's range is the min/max over the N runs.

The rewrite:
  - every float activation a quantizable operator produces (and every float graph input) gets a
    QuantizeLinear -> DequantizeLinear pair (uint8, scale (max - min) / 255 over a range that
    includes 0, zero point round(-min / scale)); all its readers read the DequantizeLinear;
  - data movement (Flatten, Reshape, Transpose, Squeeze, Unsqueeze, MaxPool, Identity) reuses its
    input's scale and zero point, as onnxruntime's tool does;
  - a Relu or Clip whose input is a Conv, Gemm or Add read by nothing else is removed and that
    input quantized with the activation output's range (min 0, so zero point 0: the saturation is
    the Relu; a ReLU6's upper bound becomes the calibrated maximum, at most 6), as onnxruntime's
    QDQ quantizer removes them;
  - Conv, Gemm and MatMul weights (initializers) become int8, symmetric per output channel (scale
    max|w| / 127, or / 64 with --reduce-range), through a DequantizeLinear on the channel axis;
    their biases int32 at scale x_scale * w_scale, zero point 0;
  - the graph output is the last DequantizeLinear (its name kept).
Other operators stay float: their float inputs read the dequantized values.

Needs opset 13 or newer (per-axis DequantizeLinear) and static input shapes; refuses otherwise.
Prints one line per quantized tensor count; the caller writes reference outputs (models/*_int8.py:
onnxruntime-node with its graph optimizations off, the ONNX reference semantics).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

QUANT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "AveragePool", "GlobalAveragePool", "Concat",
             "Relu", "Clip", "Sigmoid", "Resize", "MaxPool", "Flatten", "Reshape", "Transpose",
             "Squeeze", "Unsqueeze", "Identity"}
MOVE_OPS = {"Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "MaxPool", "Identity"}
RELU_FUSED_INTO = {"Conv", "Gemm", "Add"}


def act_qparams(lo, hi):
    """onnxruntime's uint8 activation parameters: a range including 0, 255 levels."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    return scale, zp


def weight_q(w, axis, qmax):
    """int8 symmetric per channel along axis: scale max|w| / qmax, zero point 0."""
    moved = np.moveaxis(w, axis, 0)
    absmax = np.abs(moved.reshape(moved.shape[0], -1)).max(axis=1)
    scale = np.where(absmax > 0, absmax / qmax, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -qmax, qmax).astype(np.int8)
    return q, scale


def float_tensors(model):
    """Names of the float32 values the nodes produce (onnx shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input)}
    out = []
    for n in model.graph.node:
        for o in n.output:
            if o and types.get(o) == TensorProto.FLOAT:
                out.append(o)
    return out


def calibrate(model, names, count, seed):
    """{tensor: (min, max)} over `count` seeded standard-normal inputs, by onnxruntime-node."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    inputs = [i for i in g.input if i.name not in inits]
    shapes = []
    for i in inputs:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type != TensorProto.FLOAT or any(d <= 0 for d in dims):
            raise SystemExit("quantize: input %s must be float32 with a static shape" % i.name)
        shapes.append(dims)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    have = {o.name for o in probe.graph.output}
    for n in names:
        if n not in have:
            probe.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    rng = np.random.default_rng(seed)
    ranges = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.onnx")
        onnx.save(probe, path)
        lines = []
        for k in range(count):
            files = []
            for i, dims in zip(inputs, shapes):
                f = os.path.join(tmp, "in_%d_%s.pb" % (k, len(files)))
                arr = rng.standard_normal(dims).astype(np.float32)
                with open(f, "wb") as fh:
                    fh.write(numpy_helper.from_array(arr, i.name).SerializeToString())
                files.append(f)
            r = subprocess.run(["node", os.path.join(ROOT, "tools", "ort", "run_ort.js"), path, "--inputs", *files,
                                "--ranges", "--quiet", "--threads", "2"], capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit("quantize: onnxruntime-node failed on the calibration model: %s" % r.stderr[-400:])
            lines += [ln.split("\t") for ln in r.stdout.splitlines() if ln.startswith("range\t")]
            # Graph inputs: their ranges from the generated data.
            for i, f in zip(inputs, files):
                arr = numpy_helper.to_array(onnx.load_tensor(f))
                lo, hi = ranges.get(i.name, (np.inf, -np.inf))
                ranges[i.name] = (min(lo, float(arr.min())), max(hi, float(arr.max())))
    for _, name, lo, hi in lines:
        a, b = ranges.get(name, (np.inf, -np.inf))
        ranges[name] = (min(a, float(lo)), max(b, float(hi)))
    return ranges


def to_qdq(model, ranges, qmax):
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    outputs = {o.name for o in g.output}
    graph_inputs = [i.name for i in g.input if i.name not in inits]

    # Relus and Clips folded into their producer's quantization.
    alias = {}
    for n in g.node:
        if n.op_type not in ("Relu", "Clip") or n.input[0] not in producer:
            continue
        src = n.input[0]
        if producer[src].op_type in RELU_FUSED_INTO and readers.get(src) == 1 and src not in outputs:
            alias[n.output[0]] = src
            ranges[src] = ranges[n.output[0]]

    new_nodes, new_inits, qp, dq = [], [], {}, {}
    used_names = set(inits) | {o for n in g.node for o in n.output} | set(graph_inputs)

    def fresh(base):
        name, k = base, 1
        while name in used_names:
            name, k = "%s_%d" % (base, k), k + 1
        used_names.add(name)
        return name

    def add_init(arr, base):
        name = fresh(base)
        new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def quantize(t, params, final=None):
        scale, zp = params
        qp[t] = params
        s = add_init(np.array(scale, np.float32), t + "_scale")
        z = add_init(np.array(zp, np.uint8), t + "_zero_point")
        q = fresh(t + "_QuantizeLinear_Output")
        out = final or fresh(t + "_DequantizeLinear_Output")
        new_nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [q], name=fresh(t + "_QuantizeLinear")))
        new_nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [out], name=fresh(t + "_DequantizeLinear")))
        dq[t] = out

    def weight_dq(wname, axis):
        q, scale = weight_q(inits[wname], axis, qmax)
        qn = add_init(q, wname + "_quantized")
        sn = add_init(scale, wname + "_scale")
        zn = add_init(np.zeros(scale.shape, np.int8), wname + "_zero_point")
        out = fresh(wname + "_DequantizeLinear_Output")
        new_nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [out],
                                          name=fresh(wname + "_DequantizeLinear"), axis=axis))
        return out, scale

    def bias_dq(bname, xscale, wscale):
        bscale = (np.float32(xscale) * wscale).astype(np.float32)
        bq = np.round(inits[bname] / bscale).astype(np.int32)
        qn = add_init(bq, bname + "_quantized")
        sn = add_init(bscale, bname + "_quantized_scale")
        zn = add_init(np.zeros(bscale.shape, np.int32), bname + "_quantized_zero_point")
        out = fresh(bname + "_DequantizeLinear_Output")
        new_nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [out],
                                          name=fresh(bname + "_DequantizeLinear"), axis=0))
        return out

    renamed_out = {}  # graph output -> the float value now feeding its final Q/DQ
    for name in graph_inputs:
        if name in ranges:
            quantize(name, act_qparams(*ranges[name]))
    counts = {"activations": 0, "weights": 0}
    for n in g.node:
        if n.output and n.output[0] in alias:
            continue  # the folded Relu or Clip
        ins = []
        for i in n.input:
            src = alias.get(i, i)
            ins.append(dq.get(src, src))
        outs = list(n.output)
        for k, o in enumerate(outs):
            if o in outputs and n.op_type in QUANT_OPS and o in ranges:
                renamed_out[o] = fresh(o + "_QuantizeLinear_Input")
                outs[k] = renamed_out[o]
                ranges[outs[k]] = ranges[o]
        x = alias.get(n.input[0], n.input[0]) if n.input else None
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        weight_axis = None
        if n.op_type == "Conv" and n.input[1] in inits:
            weight_axis = 0
        elif n.op_type == "Gemm" and n.input[1] in inits and not attrs.get("transA", 0):
            weight_axis = 0 if attrs.get("transB", 0) else 1
        elif n.op_type == "MatMul" and n.input[1] in inits and inits[n.input[1]].ndim == 2:
            weight_axis = 1
        if weight_axis is not None and x in qp:
            ins[1], wscale = weight_dq(n.input[1], weight_axis)
            counts["weights"] += 1
            if len(n.input) > 2 and n.input[2] in inits and inits[n.input[2]].ndim == 1:
                ins[2] = bias_dq(n.input[2], qp[x][0], wscale)
        node = helper.make_node(n.op_type, ins, outs, name=n.name)
        node.attribute.extend(n.attribute)
        new_nodes.append(node)
        o = outs[0] if outs else None
        if not o or n.op_type not in QUANT_OPS or o not in ranges:
            continue
        final = next((orig for orig, r in renamed_out.items() if r == o), None)
        if n.op_type in MOVE_OPS and x in qp:
            quantize(o, qp[x], final)
        else:
            quantize(o, act_qparams(*ranges[o]), final)
        counts["activations"] += 1
    graph = helper.make_graph(new_nodes, g.name, list(g.input), list(g.output), list(g.initializer) + new_inits)
    out = helper.make_model(graph, opset_imports=list(model.opset_import), producer_name="magneto tools/quantize")
    out.ir_version = model.ir_version
    # Drop Constant nodes and initializers nothing reads any more (a folded Clip's bounds, the
    # float weights).
    read = {i for n in out.graph.node for i in n.input} | {o.name for o in out.graph.output}
    kept_nodes = [n for n in out.graph.node if n.op_type != "Constant" or any(o in read for o in n.output)]
    del out.graph.node[:]
    out.graph.node.extend(kept_nodes)
    read = {i for n in out.graph.node for i in n.input}
    keep = [t for t in out.graph.initializer if t.name in read]
    del out.graph.initializer[:]
    out.graph.initializer.extend(keep)
    onnx.checker.check_model(out)
    return out, counts


def quantize_model(model, calibration=8, seed=0, reduce_range=False):
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset < 13:
        raise SystemExit("quantize: opset %d: per-channel DequantizeLinear needs opset 13 or newer" % opset)
    names = float_tensors(model)
    ranges = calibrate(model, names, calibration, seed)
    return to_qdq(model, ranges, 64 if reduce_range else 127)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--calibration", type=int, default=8, help="calibration inputs (default 8)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reduce-range", action="store_true", help="7-bit weights (for int8 kernels without VNNI)")
    a = ap.parse_args()
    model, counts = quantize_model(onnx.load(a.model), a.calibration, a.seed, a.reduce_range)
    onnx.save(model, a.out)
    print("quantize: %s -> %s: %d activations, %d weights quantized, %d nodes"
          % (a.model, a.out, counts["activations"], counts["weights"], len(model.graph.node)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
