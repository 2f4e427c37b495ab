#!/usr/bin/env python3
"""Compiles a torchvision model with Magneto from Python and compares it with PyTorch.

    PYTHONPATH=python /usr/bin/python3 examples/python/classify_torchvision.py [--model squeezenet1_1]
        [--out DIR] [--runs N] [--threads N]

1. builds the torchvision model with seeded random weights (no download), settles its BatchNorm
   statistics if it has any (random weights and default running statistics give a dead or
   exploding network in eval mode), and exports it to ONNX with torch.onnx.export;
2. magneto.compile: magnetoc compiles it and builds the package's shared library; the result is
   the package's own Model (NAME.py in the package folder);
3. runs it on a seeded random image and compares with PyTorch's output (tolerance and top-5);
4. times Magneto, PyTorch and, if its Python package is installed, onnxruntime (median of --runs);
5. runs the package's NAME.py in a fresh interpreter that has only the package folder on its path
   (no magneto, no magnetoc): what an application that ships the package does.

Exits 1 when Magneto's output differs from PyTorch's. Needs Debian's python3-torch,
python3-torchvision, python3-onnx and python3-numpy.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

import magneto


def settle_batchnorm(model, shape, batches=4):
    """Running statistics of every BatchNorm as the average over a few random batches."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((2,) + tuple(shape[1:])))


def median_ms(fn, runs):
    fn()  # warm-up (Magneto packs weights on the first run)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="squeezenet1_1", help="a torchvision.models constructor")
    ap.add_argument("--size", type=int, default=224, help="image height and width")
    ap.add_argument("--out", help="work folder (default: a temporary one, kept)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="magneto-example-")
    os.makedirs(out, exist_ok=True)

    torch.manual_seed(0)
    shape = (1, 3, args.size, args.size)
    net = getattr(torchvision.models, args.model)(weights=None)
    settle_batchnorm(net, shape)
    net.eval()
    x = torch.randn(shape)
    onnx_path = os.path.join(out, args.model + ".onnx")
    with torch.no_grad():
        expected = net(x).numpy()
        torch.onnx.export(net, x, onnx_path, opset_version=13, input_names=["input"],
                          output_names=["output"])
    print("exported %s to %s" % (args.model, onnx_path))

    print("magnetoc: %s" % magneto.find_magnetoc())
    t = time.perf_counter()
    m = magneto.compile(onnx_path, out_dir=os.path.join(out, "package"), name=args.model,
                        threads=args.threads)
    print("magneto.compile: %.1f s -> %r" % (time.perf_counter() - t, m))

    got = m.run({"input": x.numpy()})["output"]
    err = float(np.abs(got - expected).max())
    scale = float(np.abs(expected).max())
    top5 = lambda y: list(np.argsort(-y.reshape(-1), kind="stable")[:5])  # noqa: E731
    print("max |magneto - pytorch| = %.3g (outputs up to %.3g); top-5 magneto %s, pytorch %s"
          % (err, scale, top5(got), top5(expected)))
    ok = err <= 1e-3 * max(1.0, scale) and top5(got) == top5(expected)

    xs = x.numpy()
    torch.set_num_threads(args.threads)
    with torch.no_grad():
        rows = [("magneto", median_ms(lambda: m.run({"input": xs}), args.runs)),
                ("pytorch", median_ms(lambda: net(x), args.runs))]
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        rows.append(("onnxruntime", median_ms(lambda: sess.run(None, {"input": xs}), args.runs)))
    except ImportError:
        print("onnxruntime: no Python package (Debian has none); not timed")
    for who, ms in rows:
        print("%-12s median %8.2f ms (%d runs, %d threads)" % (who, ms, args.runs, args.threads))

    # The package alone: its NAME.py and libNAME.so, no magneto and no magnetoc on the paths.
    np.save(os.path.join(out, "input.npy"), xs)
    code = ("import sys, numpy as np, {n}; m = {n}.Model(threads=1); "
            "y = m.run([np.load(sys.argv[1])])['output']; "
            "print(' '.join(str(i) for i in np.argsort(-y.reshape(-1), kind='stable')[:5]))").format(n=args.model)
    r = subprocess.run([sys.executable, "-c", code, os.path.join(out, "input.npy")],
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": m.package_dir},
                       stdout=subprocess.PIPE, universal_newlines=True)
    alone = [int(i) for i in r.stdout.split()] if r.returncode == 0 else None
    print("%s.py alone (PYTHONPATH=%s): top-5 %s" % (args.model, m.package_dir, alone))
    ok = ok and alone == top5(expected)

    m.close()
    print("example: %s" % ("PASS" if ok else "FAIL: Magneto's output differs from PyTorch's"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
