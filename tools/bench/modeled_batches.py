#!/usr/bin/env python3
"""The modeled GPU table of the zoo at several batch sizes (issue #17): kernel launches and modeled
latency without -> with the parallel passes, and the speedup, per model and batch.

    /usr/bin/python3 tools/bench/modeled_batches.py [--export] [--zoo build/zoo] [--batches 1,8,32]
        [--models a,b,...] [--device h200] [--target cuda] [--passes LIST] [--json FILE]
        [--magnetoc PATH]

Reads the full-size batch-polymorphic exports ZOO/NAME_dynamic/ (models/export.py --dynamic;
--export runs that first, for the models asked) and, for every batch B, runs

    magnetoc report ZOO/NAME_dynamic/model.onnx --target cuda --device h200 --resources estimate \\
        --shape INPUT=DIMS ...

with every input fixed: each axis meta.json names "batch" set to B, every other dimension the
export's own (meta.json "export_inputs", the static export's shapes; a sequence axis keeps the
export's length). The report's totals are the pipeline without the parallel passes ("unfused")
and with them ("fused"), both priced by the device profile's cost model; --resources estimate only
skips the device compiler's register counts, which the report lists per launch but which do not
enter the totals. One model and batch at a time.

Prints a Markdown table (per model: speedup at each batch, launches and modeled latency at each
batch, how many parallel groups the report formed of each strategy: wide merge, joint kernel,
streams) and the geometric mean of the speedups per batch; --json also writes every figure. Exits 1
when a report fails (the table then shows "error" there and the failure is printed), 2 on bad
arguments or a missing export.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOURTEEN = ["inception_v3", "squeezenet1_1", "resnext50_32x4d", "inception_block", "mha_block",
            "multi_tower", "nasnet_a_mobile", "lstm_lm", "seq2seq", "deepspeech2", "bert_layers",
            "switch_moe", "yolox_heads", "din"]


def shapes_at(meta, batch, symbol="batch"):
    """Every input's dims with the axes named `symbol` set to `batch`, the rest as exported."""
    if "export_inputs" not in meta:
        raise ValueError("meta.json has no export_inputs (an export of an older models/export.py: "
                         "re-export with --dynamic --force)")
    axes = meta.get("axes", {})
    if not any(sym == symbol for ax in axes.values() for sym in ax.values()):
        raise ValueError(f"no input axis is named '{symbol}' (axes: {axes})")
    out = []
    for spec in meta["export_inputs"]:
        dims = list(spec["shape"])
        for axis, sym in axes.get(spec["name"], {}).items():
            if sym == symbol:
                dims[int(axis)] = batch
        out.append((spec["name"], dims))
    return out


def export_batch(meta, symbol="batch"):
    """The batch the static export uses (the first input with a batch axis)."""
    for spec in meta["export_inputs"]:
        for axis, sym in meta["axes"].get(spec["name"], {}).items():
            if sym == symbol:
                return spec["shape"][int(axis)]
    return None


def report(magnetoc, model, shapes, target, device, passes=None):
    """One `magnetoc report --json`: (launches unfused, fused, latency unfused, fused) or an error."""
    with tempfile.TemporaryDirectory(prefix="modeled_batches_") as tmp:
        js = os.path.join(tmp, "report.json")
        cmd = [magnetoc, "report", model, "--target", target, "--device", device,
               "--resources", "estimate", "--json", js]
        for name, dims in shapes:
            cmd += ["--shape", f"{name}={'x'.join(map(str, dims))}"]
        if passes:
            cmd += ["--passes", passes]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or not os.path.exists(js):
            tail = "\n".join(p.stdout.strip().splitlines()[-5:])
            return None, f"{' '.join(cmd)}\n  exit {p.returncode}: {tail}"
        with open(js) as f:
            d = json.load(f)
    lat = d["modeled_latency_us"]
    if lat["unfused"] is None or lat["fused"] is None:
        return None, f"{model}: the report has no modeled latency (null)"
    strategies = {}
    for grp in d.get("groups", []):
        strategies[grp["strategy"]] = strategies.get(grp["strategy"], 0) + 1
    return {"launches": [d["kernels_unfused"], d["kernels_fused"]],
            "latency_us": [lat["unfused"], lat["fused"]],
            "speedup": lat["unfused"] / lat["fused"], "groups": strategies}, None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


# The report's group strategies, abbreviated in the table (legend printed under it).
STRATEGY_LETTERS = {"wide": "w", "joint": "j", "streams": "s", "batch": "b", "wavefront": "f",
                    "none": "n"}


def groups_text(counts):
    """'10w 2j 15s': how many groups of each strategy (known ones in a fixed order, others in full)."""
    parts = [f"{counts[k]}{a}" for k, a in STRATEGY_LETTERS.items() if counts.get(k)]
    parts += [f"{v} {k}" for k, v in sorted(counts.items()) if k not in STRATEGY_LETTERS and v]
    return " ".join(parts) or "-"


def markdown(rows, batches):
    bs = " / ".join(map(str, batches))
    lines = [f"| model | export batch | speedup at batch {bs} | kernel launches at batch {bs} "
             f"| modeled latency (us) at batch {bs} | parallel groups at batch {bs} |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        sp, ln, lt, gr = [], [], [], []
        for b in batches:
            f = r["batches"].get(str(b))
            if f is None:
                for col in (sp, ln, lt, gr):
                    col.append("error")
                continue
            sp.append(f"{f['speedup']:.2f}x")
            ln.append(f"{f['launches'][0]} -> {f['launches'][1]}")
            lt.append(f"{f['latency_us'][0]:.1f} -> {f['latency_us'][1]:.1f}")
            gr.append(groups_text(f["groups"]))
        lines.append(f"| {r['model']} | {r['export_batch']} | {' / '.join(sp)} | {' / '.join(ln)} "
                     f"| {' / '.join(lt)} | {' / '.join(gr)} |")
    gm = []
    for b in batches:
        xs = [r["batches"][str(b)]["speedup"] for r in rows if r["batches"].get(str(b))]
        n = len(xs)
        gm.append(f"{geomean(xs):.2f}x" + ("" if n == len(rows) else f" (of {n})"))
    lines.append(f"| **geomean** | | **{' / '.join(gm)}** | | | |")
    lines.append("")
    lines.append("Parallel groups: w wide merge (one wider op), j joint kernel, s streams, b batch merge, "
                 "f wavefront (stacked recurrent layers), n none (kept apart: no strategy gains, or a wide merge "
                 "the cost model declined, its convs left to the other groups).")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"),
                    help="folder of the NAME_dynamic exports (default build/zoo)")
    ap.add_argument("--models", default=",".join(FOURTEEN), help="comma-separated (default: the fourteen)")
    ap.add_argument("--batches", default="1,8,32", help="comma-separated batch sizes (default 1,8,32)")
    ap.add_argument("--target", default="cuda", help="cuda (default) or hip")
    ap.add_argument("--device", default="h200", help="device profile (default h200)")
    ap.add_argument("--magnetoc", default=os.path.join(ROOT, "build", "bin", "magnetoc"))
    ap.add_argument("--export", action="store_true",
                    help="first run models/export.py --dynamic --out ZOO --models ... (full size; "
                         "skips exports that are up to date)")
    ap.add_argument("--passes", help="magnetoc report --passes: this pipeline instead of the target's "
                    "default (the baseline is it without the parallel passes), e.g. to see one pass's share")
    ap.add_argument("--json", help="also write every figure to this file")
    args = ap.parse_args()

    models = [m.strip() for m in args.models.split(",") if m.strip()]
    try:
        batches = [int(b) for b in args.batches.split(",") if b.strip()]
    except ValueError:
        print(f"--batches expects integers, got '{args.batches}'", file=sys.stderr)
        return 2
    if not models or not batches or min(batches) < 1:
        print("need at least one model and batch sizes >= 1", file=sys.stderr)
        return 2
    if not os.access(args.magnetoc, os.X_OK):
        print(f"no magnetoc at {args.magnetoc} (build it: cmake --build build --target magnetoc)",
              file=sys.stderr)
        return 2
    if args.export:
        cmd = [sys.executable, os.path.join(ROOT, "models", "export.py"), "--dynamic", "--out", args.zoo,
               "--models", ",".join(models)]
        print("+ " + " ".join(cmd), file=sys.stderr)
        if subprocess.run(cmd).returncode != 0:
            print("export failed", file=sys.stderr)
            return 1

    rows, failed = [], []
    for m in models:
        folder = os.path.join(args.zoo, m + "_dynamic")
        meta_path = os.path.join(folder, "meta.json")
        if not os.path.exists(meta_path):
            print(f"{m}: no export at {folder} (models/export.py --dynamic --out {args.zoo} "
                  f"--models {m}, or --export)", file=sys.stderr)
            return 2
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("small"):
            print(f"{m}: {folder} is a --small export", file=sys.stderr)
            return 2
        try:
            row = {"model": m, "export_batch": export_batch(meta), "batches": {}}
            for b in batches:
                shapes = shapes_at(meta, b)
                figures, err = report(args.magnetoc, os.path.join(folder, "model.onnx"), shapes,
                                      args.target, args.device, args.passes)
                if err:
                    print(f"{m} batch {b}: report failed: {err}", file=sys.stderr)
                    failed.append(f"{m}@{b}")
                    continue
                figures["shapes"] = {n: d for n, d in shapes}
                row["batches"][str(b)] = figures
                print(f"{m} batch {b}: launches {figures['launches'][0]} -> {figures['launches'][1]}, "
                      f"{figures['latency_us'][0]:.2f} -> {figures['latency_us'][1]:.2f} us "
                      f"({figures['speedup']:.2f}x)", file=sys.stderr)
        except ValueError as e:
            print(f"{m}: {e}", file=sys.stderr)
            return 2
        rows.append(row)

    print(markdown(rows, batches))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target, "device": args.device, "passes": args.passes or "default",
                       "batches": batches, "models": rows},
                      f, indent=1)
            f.write("\n")
    if failed:
        print(f"reports failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
