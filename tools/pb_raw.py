#!/usr/bin/env python3
"""Small helpers for the demo: TensorProto (.pb) <-> raw little-endian files, and a top-5 print.

    pb_raw.py to-raw IN.pb OUT.bin            # the raw element data of a TensorProto
    pb_raw.py top5 OUT.bin EXPECTED.pb        # top-5 of our float32 output vs the expected .pb
Run with /usr/bin/python3 (Debian's onnx and numpy).
"""
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main(argv):
    if len(argv) == 4 and argv[1] == "to-raw":
        arr = load_pb(argv[2])
        np.ascontiguousarray(arr).tofile(argv[3])
        return 0
    if len(argv) == 4 and argv[1] == "top5":
        expected = load_pb(argv[3]).astype(np.float32).ravel()
        got = np.fromfile(argv[2], dtype=np.float32)
        if got.size != expected.size:
            print(f"output has {got.size} values, expected {expected.size}")
            return 1
        print("top-5 (class: magneto | pytorch):")
        for k in np.argsort(-got)[:5]:
            print(f"  {k:4d}: {got[k]: .6f} | {expected[k]: .6f}")
        print(f"same top-5 as PyTorch: {list(np.argsort(-got)[:5]) == list(np.argsort(-expected)[:5])}; "
              f"max |magneto - pytorch| = {np.max(np.abs(got - expected)):.3g}")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
