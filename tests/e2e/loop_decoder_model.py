#!/usr/bin/env python3
"""Writes the zoo's gru_greedy_decoder (small) and its early-exit variant for e2e.loop_decoder
(issue #18: a Loop doing greedy decoding matches PyTorch; a data-dependent one is refused).

    OUT/model.onnx, OUT/test_data_set_0/   models/export.py's export of gru_greedy_decoder --small:
                                           one ONNX Loop (12 steps of GRU cell, Linear, ArgMax,
                                           embedding Gather), PyTorch's eager outputs (logits,
                                           tokens, final hidden state) for a seeded h0
    OUT/early_exit/model.onnx              zoo_models.GRUGreedyDecoderEarlyExit, same weights: the
                                           loop stops when every sequence has produced EOS, so
                                           the Loop's condition is computed from the tokens

Both exports are checked here (export_one runs GRUGreedyDecoder.check_export; the early-exit
Loop must have a condition its body computes), so neither test can pass on an unrolled graph.

usage: loop_decoder_model.py OUT_DIR
"""
import os
import shutil
import sys

import onnx
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
import export  # noqa: E402
import zoo_models  # noqa: E402

NAME = "gru_greedy_decoder"


def main():
    out = sys.argv[1]
    args = export.parse_args(["--small", "--force"])
    torch.set_num_threads(1)
    scratch = os.path.join(out, "export")
    if not export.export_one(NAME, scratch, True, args):
        sys.exit(f"{NAME}: export refused its own outputs")
    folder = os.path.join(scratch, NAME + "_small")
    os.replace(os.path.join(folder, "model.onnx"), os.path.join(out, "model.onnx"))
    shutil.rmtree(os.path.join(out, "test_data_set_0"), ignore_errors=True)
    os.replace(os.path.join(folder, "test_data_set_0"), os.path.join(out, "test_data_set_0"))
    shutil.rmtree(scratch)

    # The early-exit variant: the zoo model's constructor arguments and seed, so the same weights.
    torch.manual_seed(args.seed)
    model = zoo_models.GRUGreedyDecoderEarlyExit(40, 16, 32, 12).eval()
    h0 = torch.randn(2, 32, generator=torch.Generator().manual_seed(args.seed + 2))
    os.makedirs(os.path.join(out, "early_exit"), exist_ok=True)
    path = os.path.join(out, "early_exit", "model.onnx")
    export.onnx_export(model.export_module(), [h0], ["h0"], path, model.export_opset,
                       model.output_names)
    g = onnx.load(path).graph
    loops = [n for n in g.node if n.op_type == "Loop"]
    body = loops[0].attribute[0].g if len(loops) == 1 else None
    computed = {o for n in body.node for o in n.output} if body else set()
    if body is None or body.output[0].name not in computed:
        sys.exit("early_exit: expected one Loop whose body computes its condition")


if __name__ == "__main__":
    main()
