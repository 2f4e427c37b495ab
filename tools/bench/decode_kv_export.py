#!/usr/bin/env python3
"""Exports the decode-step benchmark's model (tools/bench/decode_kv.sh): the zoo's GPT-2-style
decoder with a KV cache (models/zoo_models.py, GPT2KV) at a middle size whose position table
reaches past 1024 + seq, with symbolic seq and past axes, and one input set per past length.

  /usr/bin/python3 tools/bench/decode_kv_export.py OUT_DIR [--past 0,128,512,1024]
      [--vocab 4096] [--hidden 256] [--heads 4] [--layers 4] [--max-pos 1040] [--seed 0]

OUT_DIR gets model.onnx (inputs input_ids [1, seq], past_k/past_v [layers, 1, heads, past,
head_dim]; outputs logits [1, seq, vocab], present_k/present_v with past + seq positions),
past_P/input_{0,1,2}.pb (a decode step: one token, a seeded random cache of P positions; what
onnxruntime gets) and dims.txt (layers heads head_dim vocab) for the C benchmark. Seeded random
weights: the benchmark times a step, the tokens do not matter.
"""
import argparse
import os
import sys

import numpy as np
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))
from zoo_models import GPT2KV  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--past", default="0,128,512,1024")
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--max-pos", type=int, default=1040)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    pasts = [int(p) for p in a.past.split(",")]
    if max(pasts) + 1 > a.max_pos:
        sys.exit("decode_kv_export.py: --max-pos must exceed the longest past")
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    model = GPT2KV(a.vocab, a.hidden, a.heads, a.layers, a.max_pos).eval()
    d = a.hidden // a.heads
    ids = torch.tensor([[1, 2, 3]], dtype=torch.int64)
    past = torch.randn(a.layers, 1, a.heads, 5, d)
    path = os.path.join(a.out, "model.onnx")
    # torch 1.13's TorchScript exporter; attention exports outside torch.no_grad() only.
    torch.onnx.export(model, (ids, past, past.clone()), path, opset_version=GPT2KV.export_opset,
                      input_names=["input_ids", "past_k", "past_v"], output_names=GPT2KV.output_names,
                      dynamic_axes={"input_ids": {1: "seq"}, "past_k": {3: "past"}, "past_v": {3: "past"}},
                      do_constant_folding=True)
    rng = np.random.default_rng(a.seed + 1)
    for p in pasts:
        dd = os.path.join(a.out, f"past_{p}")
        os.makedirs(dd, exist_ok=True)
        xs = [("input_ids", np.array([[7]], np.int64))]
        for n in ("past_k", "past_v"):
            xs.append((n, rng.standard_normal((a.layers, 1, a.heads, p, d)).astype(np.float32)))
        for k, (n, x) in enumerate(xs):
            with open(os.path.join(dd, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, n).SerializeToString())
    with open(os.path.join(a.out, "dims.txt"), "w") as f:
        f.write(f"{a.layers} {a.heads} {d} {a.vocab}\n")
    print(f"decode_kv_export.py: {path} (vocab {a.vocab}, hidden {a.hidden}, {a.heads} heads, "
          f"{a.layers} layers, positions {a.max_pos}); inputs at past {pasts}")


if __name__ == "__main__":
    main()
