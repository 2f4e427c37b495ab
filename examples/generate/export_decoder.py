#!/usr/bin/env python3
"""Exports the GPT-2-style decoder of the zoo (models/zoo_models.py, GPT2KV at its small size:
vocabulary 256, hidden 64, 4 heads, 2 layers) with a KV cache and symbolic seq and past axes, and
writes what PyTorch's greedy loop generates from a prompt, for examples/generate to reproduce.

  /usr/bin/python3 examples/generate/export_decoder.py OUT_DIR [--tokens 32] [--seed 0]

OUT_DIR gets model.onnx (inputs input_ids [1, seq], past_k/past_v [layers, 1, heads, past,
head_dim]; outputs logits [1, seq, vocab], present_k/present_v with past + seq positions),
prompt.txt (the prompt's token ids), expected.txt (PyTorch's generated token ids), and dims.txt
(layers heads head_dim vocab max_seq max_past, for the C program). The weights are seeded random
weights: the tokens mean nothing, but every implementation must produce the same ones. (With its
zoo initialization the tied LM head makes such a decoder repeat its last token for ever, which
would test little: the token embeddings are scaled by 0.3 and the layers' weights by 3, so that
the blocks, not the embedding, decide the next token.)

A greedy step picks the largest logit; where the two largest are almost equal, float rounding in
another implementation could legitimately pick the other. The prompt is therefore chosen (the
first of a seeded series) so that at every step the top two logits differ by at least 1e-3 of
the logits' spread, a mismatch then being a real error and not a tie, and so that the generated
tokens hold at least MIN_DISTINCT different ids.
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))
from zoo_models import GPT2KV  # noqa: E402

VOCAB, HIDDEN, HEADS, LAYERS, MAX_POS = 256, 64, 4, 2, 128
PROMPT_LEN = 8
MIN_MARGIN = 1e-3
MIN_DISTINCT = 8


def greedy(model, prompt, n):
    """PyTorch's greedy loop: a prefill over the prompt (an empty cache), then one token a step.
    Returns the generated tokens and the smallest top-2 margin over the steps (relative)."""
    d = HIDDEN // HEADS
    past_k = torch.zeros(LAYERS, 1, HEADS, 0, d)
    past_v = torch.zeros(LAYERS, 1, HEADS, 0, d)
    ids = torch.tensor([prompt], dtype=torch.int64)
    out, margin = [], float("inf")
    with torch.no_grad():
        for _ in range(n):
            logits, past_k, past_v = model(ids, past_k, past_v)
            last = logits[0, -1]
            top2 = torch.topk(last, 2).values
            margin = min(margin, float(top2[0] - top2[1]) / max(float(last.std()), 1e-12))
            tok = int(torch.argmax(last))
            out.append(tok)
            ids = torch.tensor([[tok]], dtype=torch.int64)
    return out, margin


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if PROMPT_LEN + args.tokens - 1 > 64:
        sys.exit("export_decoder.py: prompt + tokens must fit past <= 64 (the package's range)")
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    model = GPT2KV(VOCAB, HIDDEN, HEADS, LAYERS, MAX_POS).eval()
    with torch.no_grad():
        model.wte.weight.mul_(0.3)
        for layer in [*model.qkv, *model.proj, *model.fc, *model.fc_proj]:
            layer.weight.mul_(3.0)
    gen = np.random.default_rng(args.seed + 1)
    for attempt in range(100):
        prompt = [int(t) for t in gen.integers(0, VOCAB, PROMPT_LEN)]
        tokens, margin = greedy(model, prompt, args.tokens)
        if margin >= MIN_MARGIN and len(set(tokens)) >= MIN_DISTINCT:
            break
    else:
        sys.exit(f"export_decoder.py: no prompt of 100 gives a greedy run without near ties and with "
                 f"{MIN_DISTINCT} different tokens")

    d = HIDDEN // HEADS
    ids = torch.tensor([prompt[:3]], dtype=torch.int64)
    past = torch.randn(LAYERS, 1, HEADS, 5, d)
    path = os.path.join(args.out, "model.onnx")
    # torch 1.13's TorchScript exporter; attention exports outside torch.no_grad() only.
    torch.onnx.export(model, (ids, past, past.clone()), path, opset_version=GPT2KV.export_opset,
                      input_names=["input_ids", "past_k", "past_v"], output_names=GPT2KV.output_names,
                      dynamic_axes={"input_ids": {1: "seq"}, "past_k": {3: "past"}, "past_v": {3: "past"}},
                      do_constant_folding=True)
    with open(os.path.join(args.out, "prompt.txt"), "w") as f:
        f.write(" ".join(map(str, prompt)) + "\n")
    with open(os.path.join(args.out, "expected.txt"), "w") as f:
        f.write(" ".join(map(str, tokens)) + "\n")
    with open(os.path.join(args.out, "dims.txt"), "w") as f:
        f.write(f"{LAYERS} {HEADS} {d} {VOCAB} {PROMPT_LEN} 64\n")
    print(f"export_decoder.py: {path}; prompt {prompt}; PyTorch's {args.tokens} greedy tokens: "
          f"{' '.join(map(str, tokens))} (smallest top-2 margin {margin:.3g} of the logits' spread)")


if __name__ == "__main__":
    main()
