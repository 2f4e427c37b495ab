#!/usr/bin/env python3
"""Turns tools/bench/perf_tables.sh's raw rows into docs/PERFORMANCE.md's CPU table.

    /usr/bin/python3 tools/bench/perf_doc.py CPU_TSV --command CMD --when WHEN [--load L]
                                             [--splice docs/PERFORMANCE.md]

CPU_TSV lines: class<TAB>model<TAB>threads<TAB>magneto ms<TAB>ort ms ("error" where a side
failed). Prints the section body (Markdown): the command and when it ran, one row per model with
the 1- and 2-thread milliseconds and ratios (ort / magneto: above 1 means Magneto is faster), the
geomean of each class and over all models, and the worst model. --splice also writes it into
the file between the lines `<!-- cpu-table:begin -->` and `<!-- cpu-table:end -->` (both must be
there).
"""
import argparse
import collections
import math
import sys

BEGIN, END = "<!-- cpu-table:begin -->", "<!-- cpu-table:end -->"


def ratio(mg, ort):
    try:
        a, b = float(ort), float(mg)
    except ValueError:
        return None
    return a / b if b > 0 else None


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def body(rows, command, when, load):
    # class -> model -> threads -> (mg, ort)
    by = collections.OrderedDict()
    for cls, model, threads, mg, ort in rows:
        by.setdefault(cls, collections.OrderedDict()).setdefault(model, {})[threads] = (mg, ort)
    out = [f"`{command}` on {when} (2-core VM, load average at the end {load}; onnxruntime-node "
           "1.30, its default graph optimizations; each figure the median of its rounds' medians). "
           "ratio = onnxruntime ms / Magneto ms: above 1, Magneto is faster.", ""]
    out.append("| class | model | 1 thread: magneto / ort ms | ratio | 2 threads: magneto / ort ms | ratio |")
    out.append("|---|---|---|---|---|---|")
    all_r = {"1": [], "2": []}
    cls_r = collections.OrderedDict()
    worst = {"1": None, "2": None}
    for cls, models in by.items():
        cls_r[cls] = {"1": [], "2": []}
        for model, per in models.items():
            cells = []
            for t in ("1", "2"):
                mg, ort = per.get(t, ("-", "-"))
                r = ratio(mg, ort)
                if r:
                    all_r[t].append(r)
                    cls_r[cls][t].append(r)
                    if worst[t] is None or r < worst[t][0]:
                        worst[t] = (r, model)
                cells += [f"{mg} / {ort}", fmt(r)]
            out.append(f"| {cls} | {model} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("| class | models | geomean 1 thread | geomean 2 threads |")
    out.append("|---|---|---|---|")
    for cls, r in cls_r.items():
        out.append(f"| {cls} | {len(by[cls])} | {fmt(geomean(r['1']))} | {fmt(geomean(r['2']))} |")
    out.append(f"| all | {sum(len(m) for m in by.values())} | {fmt(geomean(all_r['1']))} | "
               f"{fmt(geomean(all_r['2']))} |")
    out.append("")
    for t in ("1", "2"):
        if worst[t]:
            out.append(f"Worst at {t} thread{'s' if t == '2' else ''}: {worst[t][1]} ({worst[t][0]:.2f}).")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tsv")
    ap.add_argument("--command", required=True)
    ap.add_argument("--when", required=True)
    ap.add_argument("--load", default="?")
    ap.add_argument("--splice")
    a = ap.parse_args()
    rows = []
    for line in open(a.tsv):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 5:
            rows.append(f[:5])
    text = body(rows, a.command, a.when, a.load)
    sys.stdout.write(text)
    if not a.splice:
        return 0
    doc = open(a.splice).read()
    if BEGIN not in doc or END not in doc:
        sys.stderr.write(f"perf_doc: {a.splice} lacks the markers {BEGIN} and {END}\n")
        return 2
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    open(a.splice, "w").write(head + BEGIN + "\n" + text + END + tail)
    sys.stderr.write(f"perf_doc: wrote the CPU table ({len(rows)} rows) into {a.splice}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
