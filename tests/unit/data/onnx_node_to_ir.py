#!/usr/bin/python3
"""Converts ONNX backend node tests (model.onnx + test_data_set_0) into Magneto textual IR.

Each test becomes one .mlir file: the inputs as dense<> constants, the node(s), and each expected
output as a constant named expected_<output>. The NNConformance gtest (tests/unit/ops_nn_test.cpp)
runs every file of $MAGNETO_NN_IR_DIR through the reference interpreter and compares.

  /usr/bin/python3 tests/unit/data/onnx_node_to_ir.py OUT_DIR [name_prefix ...]
Tests from data/pytorch-* are named pytorch-converted.test_X.mlir.
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data"
# Legacy attributes the frontend drops when it upgrades old opsets.
LEGACY = {"spatial", "is_test", "consumed_inputs", "broadcast"}
DT = {np.float32: "f32", np.float64: "f64", np.int64: "i64", np.int32: "i32", np.uint8: "u8",
      np.int8: "i8", np.bool_: "bool"}


def ty(a):
    return "%s[%s]" % (DT[a.dtype.type], ",".join(str(d) for d in a.shape))


def num(v):
    if isinstance(v, (float, np.floating)):
        r = repr(float(v))
        return r if any(c in r for c in ".ein") else r + ".0"
    return str(int(v))


def dense(a):
    return "dense<[%s]>" % ", ".join(num(v) for v in a.reshape(-1).tolist())


def attr(a):
    t = a.type
    A = onnx.AttributeProto
    if t == A.INT: return str(a.i)
    if t == A.FLOAT: return num(a.f)
    if t == A.STRING: return '"%s"' % a.s.decode()
    if t == A.INTS: return "[%s]" % ", ".join(str(i) for i in a.ints)
    if t == A.FLOATS: return "[%s]" % ", ".join(num(f) for f in a.floats) if a.floats else "[]:f"
    if t == A.STRINGS: return "[%s]" % ", ".join('"%s"' % s.decode() for s in a.strings)
    raise ValueError("attribute kind %d" % t)


def name(n):
    return "%" + ("".join(c if c.isalnum() or c in "_." else "_" for c in n))


def convert(d, out_dir):
    m = onnx.load(os.path.join(d, "model.onnx"))
    ds = os.path.join(d, "test_data_set_0")
    ins = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(ds + "/input_*.pb"))]
    outs = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(ds + "/output_*.pb"))]
    g = m.graph
    lines = ["graph @t {"]
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for k, a in inits.items():
        lines.append("  const %s : %s = %s" % (name(k), ty(a), dense(a)))
    for vi, a in zip([i for i in g.input if i.name not in inits], ins):
        lines.append("  const %s : %s = %s" % (name(vi.name), ty(a), dense(a)))
    for vi, a in zip(g.output, outs):
        lines.append("  const %s : %s = %s" % (name("expected_" + vi.name), ty(a), dense(a)))
    for n in g.node:
        res = ", ".join(name(o) if o else name("unused_%s_%d" % (n.output[0] or "x", i))
                        for i, o in enumerate(n.output))
        ops = ", ".join(name(i) if i else "_" for i in n.input)
        at = ", ".join("%s = %s" % (a.name, attr(a)) for a in n.attribute if a.name not in LEGACY)
        lines.append("  %s = %s(%s)%s" % (res, n.op_type, ops, " {%s}" % at if at else ""))
    lines.append("  output " + ", ".join(name(o.name) for o in g.output))
    lines.append("}")
    base = os.path.basename(d)
    if not d.startswith(DATA + "/node/"):
        base = os.path.basename(os.path.dirname(d)) + "." + base
    with open(os.path.join(out_dir, base + ".mlir"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    out_dir = sys.argv[1]
    prefixes = sys.argv[2:] or ["test_"]
    os.makedirs(out_dir, exist_ok=True)
    for d in sorted(glob.glob(DATA + "/*/test_*")):
        b = os.path.basename(d)
        if not any(b.startswith(p) for p in prefixes) or b.endswith("_expanded"):
            continue
        try:
            convert(d, out_dir)
        except Exception as e:  # noqa: BLE001 - report and continue
            print("skip %s: %s" % (b, e))


if __name__ == "__main__":
    main()
