#!/usr/bin/env python3
"""Compares TensorProto files: compare_pb.py EXPECTED_DIR ACTUAL_DIR [--rtol R] [--atol A].

Every output_K.pb in EXPECTED_DIR is compared with ACTUAL_DIR/output_K.pb (shape, dtype, values
within atol + rtol*|expected|). One line per output; exit 0 iff all match. Run it with
/usr/bin/python3 (needs Debian's python3-onnx and python3-numpy).
"""
import argparse
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("expected")
    ap.add_argument("actual")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.expected, "output_*.pb")))
    if not files:
        print(f"no output_*.pb in {a.expected}")
        return 1
    ok = True
    for f in files:
        name = os.path.basename(f)
        e = load(f)
        g = os.path.join(a.actual, name)
        if not os.path.exists(g):
            print(f"{name}: MISSING")
            ok = False
            continue
        x = load(g)
        if e.shape != x.shape or e.dtype != x.dtype:
            print(f"{name}: MISMATCH shape/dtype expected {e.shape} {e.dtype}, got {x.shape} {x.dtype}")
            ok = False
            continue
        if e.dtype.kind in "fc":
            diff = np.abs(e.astype(np.float64) - x.astype(np.float64))
            bad = ~(diff <= a.atol + a.rtol * np.abs(e.astype(np.float64)))
            bad &= ~(np.isnan(e) & np.isnan(x))
            maxd = float(np.nanmax(diff)) if diff.size else 0.0
            good = not bad.any()
            print(f"{name}: {'ok' if good else 'MISMATCH'} shape={e.shape} dtype={e.dtype} max_abs_diff={maxd:.3g}")
        else:
            good = np.array_equal(e, x)
            print(f"{name}: {'ok' if good else 'MISMATCH'} shape={e.shape} dtype={e.dtype} exact")
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
