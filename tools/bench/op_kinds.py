#!/usr/bin/env python3
"""Where Magneto loses time against onnxruntime on one model, by op family.

    op_kinds.py MAGNETO_LOG ORT_LOG [--top 5] [--model NAME] [--threads T]

MAGNETO_LOG: the output of `magnetoc bench --profile` (its "by op kind:" table, ms per run).
ORT_LOG: the output of `node tools/ort/run_ort.js ... --profile RUNS` (op_kind_ms lines).

The two sides name their kernels differently (onnxruntime fuses Conv+activation into FusedConv and
reorders to NCHWc around NchwcConv; Magneto fuses elementwise chains into MgElementwise), so both
are mapped to families first: conv (with onnxruntime's layout reorders), matmul/gemm, elementwise,
normalization, pool, data movement, and the op's own name for the rest. Prints one Markdown row per
family among the `--top` largest losses (Magneto ms - onnxruntime ms), or a line saying none lost.
"""
import argparse
import re
import sys

FAMILIES = {
    "conv": {"Conv", "FusedConv", "NchwcConv", "ReorderInput", "ReorderOutput", "ConvTranspose",
             "QLinearConv"},
    "matmul/gemm": {"MatMul", "FusedMatMul", "Gemm", "FusedGemm", "MatMulInteger", "QLinearMatMul",
                    "MatMulNBits", "MgBatchMatMul"},
    "elementwise": {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Erf", "Abs", "Neg",
                    "Reciprocal", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid",
                    "HardSwish", "Elu", "Selu", "Softplus", "Gelu", "FastGelu", "BiasGelu", "QuickGelu",
                    "Sum", "Max", "Min", "Mean", "MgElementwise", "Where", "Equal", "Less", "Greater",
                    "Not", "Cast", "BiasAdd", "PRelu", "Floor", "Ceil", "Round", "Mish"},
    "normalization": {"BatchNormalization", "LayerNormalization", "SkipLayerNormalization",
                      "SimplifiedLayerNormalization", "InstanceNormalization", "GroupNormalization",
                      "LRN", "Softmax", "LogSoftmax", "ReduceMean", "ReduceSum", "ReduceMax",
                      "ReduceL2"},
    "pool": {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "NchwcMaxPool",
             "NchwcAveragePool", "NchwcGlobalAveragePool", "NchwcGlobalMaxPool"},
    "data movement": {"Transpose", "Concat", "Split", "Slice", "Gather", "Reshape", "Flatten",
                      "Squeeze", "Unsqueeze", "Pad", "Expand", "Tile", "Identity", "Resize",
                      "Upsample", "MgChannelSlice", "DepthToSpace", "SpaceToDepth"},
    "recurrent": {"LSTM", "GRU", "RNN", "DynamicQuantizeLSTM"},
    "attention": {"Attention", "MultiHeadAttention"},
}
FAMILY_OF = {op: fam for fam, ops in FAMILIES.items() for op in ops}


def family(op):
    return FAMILY_OF.get(op, op)


def read_magneto(path):
    kinds, on = {}, False
    for line in open(path, errors="replace"):
        if "by op kind:" in line:
            on = True
            continue
        if on:
            m = re.match(r"\s+([0-9.]+) ms\s+[0-9.]+%\s+(\S+)\s+\d+ step", line)
            if not m:
                break
            kinds[m.group(2)] = kinds.get(m.group(2), 0.0) + float(m.group(1))
    return kinds


def read_ort(path):
    kinds = {}
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3 and parts[0] == "op_kind_ms":
            kinds[parts[1]] = kinds.get(parts[1], 0.0) + float(parts[2])
    return kinds


def by_family(kinds):
    out = {}
    for op, ms in kinds.items():
        f = family(op)
        out.setdefault(f, [0.0, set()])
        out[f][0] += ms
        out[f][1].add(op)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("magneto_log")
    ap.add_argument("ort_log")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--model", default="")
    ap.add_argument("--threads", default="")
    args = ap.parse_args()
    mg, ort = by_family(read_magneto(args.magneto_log)), by_family(read_ort(args.ort_log))
    if not mg or not ort:
        print("| %s | %s | (no profile: %s) | | | | |" % (args.model, args.threads,
              "magnetoc" if not mg else "onnxruntime"))
        return 1
    rows = []
    for f in set(mg) | set(ort):
        a, b = mg.get(f, [0.0, set()]), ort.get(f, [0.0, set()])
        rows.append((a[0] - b[0], f, a[0], b[0], sorted(a[1]), sorted(b[1])))
    rows.sort(reverse=True)
    losses = [r for r in rows if r[0] > 0][: args.top]
    if not losses:
        print("| %s | %s | (no family slower than onnxruntime) | | | | |" % (args.model, args.threads))
    for loss, f, a, b, mk, ok in losses:
        print("| %s | %s | %s | %.3f | %.3f | %+.3f | %s / %s |" % (
            args.model, args.threads, f, a, b, loss, ",".join(mk) or "-", ",".join(ok) or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
