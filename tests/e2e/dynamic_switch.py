#!/usr/bin/env python3
# One handle of a package compiled with --dynamic, run at data sets of different shapes in the
# given order (e.g. batch 1, 8, 1, 3, 8) in ONE process, each output compared with the data set's
# expected output: going back to a shape seen before must give that shape's results (the cuda/hip
# packages replay the graph they kept for it, with its own launch arguments; docs/DYNAMIC_SHAPES.md).
#   dynamic_switch.py PKG_DIR NAME DATA_DIR... [--rtol R] [--atol A]
# PKG_DIR holds NAME.py and build/libNAME.so. Exit 0 when every output matches; prints one line
# per run and "switch: N runs ok".
import importlib
import os
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main(argv):
    rtol, atol = 1e-3, 1e-4
    args = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--rtol", "--atol"):
            v = float(argv[i + 1])
            rtol, atol = (v, atol) if argv[i] == "--rtol" else (rtol, v)
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 3:
        print(__doc__ or "usage: dynamic_switch.py PKG_DIR NAME DATA_DIR...", file=sys.stderr)
        return 2
    pkg, name, sets = args[0], args[1], args[2:]
    sys.path.insert(0, pkg)
    mod = importlib.import_module(name)
    failures = 0
    with mod.Model() as m:
        for k, d in enumerate(sets):
            ins = [read_pb(os.path.join(d, f"input_{j}.pb")) for j in range(len(m.inputs))]
            outs = m.run(ins)
            got = list(outs.values())
            for j, y in enumerate(got):
                want = read_pb(os.path.join(d, f"output_{j}.pb"))
                if y.shape != want.shape:
                    print(f"run {k} ({d}): output {j} has shape {y.shape}, expected {want.shape}")
                    failures += 1
                    continue
                err = np.abs(y.astype(np.float64) - want)
                bad = err > atol + rtol * np.abs(want)
                status = "ok" if not bad.any() else f"WRONG ({int(bad.sum())} of {bad.size} elements)"
                failures += bool(bad.any())
                print(f"run {k} shape {'x'.join(map(str, ins[0].shape))}: output {j} max_abs_err={(err.max() if err.size else 0):.3g} {status}")
    if failures:
        print(f"switch: {failures} failure(s)")
        return 1
    print(f"switch: {len(sets)} runs ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
