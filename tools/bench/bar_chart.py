#!/usr/bin/env python3
"""Draws a benchmark's latencies as an SVG bar chart (no plotting library needed).

    bar_chart.py ROWS.tsv -o CHART.svg [--title TEXT]

ROWS.tsv: one line per model and thread count, tab-separated: model, threads, magneto ms,
magneto --no-parallel-opt ms (may be empty), onnxruntime ms ("error" where a run failed), as
tools/bench/compare_ort.sh --tsv writes them. One group of horizontal bars per model, one bar per
configuration (Magneto, Magneto without the parallel passes, onnxruntime; at each thread count),
each labelled with its milliseconds. Latencies span orders of magnitude across a zoo, so each
model's bars are scaled to that model's slowest bar: compare within a group, read the numbers
across groups.
"""
import argparse
import html
import sys

COLOURS = {"magneto": "#2b6cb0", "no-parallel-opt": "#90cdf4", "onnxruntime": "#dd6b20"}


def load(path):
    rows = {}
    order = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            model, threads, mg, mgn, ort = parts[:5]
            if model not in rows:
                rows[model] = []
                order.append(model)

            def num(v):
                try:
                    return float(v)
                except ValueError:
                    return None
            for label, v in (("magneto", mg), ("no-parallel-opt", mgn), ("onnxruntime", ort)):
                if v != "":
                    rows[model].append((f"{label}, {threads} thr", label, num(v)))
    return order, rows


def render(order, rows, title):
    bar_h, gap, left, width = 16, 14, 330, 420
    y = 50
    parts = []
    for model in order:
        bars = rows[model]
        top = max([v for _, _, v in bars if v is not None] or [1.0])
        parts.append(f'<text x="10" y="{y + 12}" font-weight="bold">{html.escape(model)}</text>')
        y += 18
        for text, kind, v in bars:
            parts.append(f'<text x="24" y="{y + 12}">{html.escape(text)}</text>')
            if v is None:
                parts.append(f'<text x="{left}" y="{y + 12}" fill="#c53030">failed</text>')
            else:
                w = max(1.0, width * v / top)
                parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                             f'fill="{COLOURS[kind]}"><title>{html.escape(model)}: {html.escape(text)}: '
                             f'{v:.3f} ms</title></rect>')
                parts.append(f'<text x="{left + w + 6:.1f}" y="{y + 12}">{v:.2f} ms</text>')
            y += bar_h
        y += gap
    legend = []
    lx = 10
    for kind, colour in COLOURS.items():
        legend.append(f'<rect x="{lx}" y="{y}" width="12" height="12" fill="{colour}"/>'
                      f'<text x="{lx + 16}" y="{y + 11}">{kind}</text>')
        lx += 170
    y += 30
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 110}" height="{y}" '
            f'font-family="sans-serif" font-size="12">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n'
            f'<text x="10" y="24" font-size="15" font-weight="bold">{html.escape(title)}</text>\n'
            f'<text x="10" y="40" fill="#555">milliseconds per run, lower is better; bars scaled per model</text>\n')
    return head + "\n".join(parts + legend) + "\n</svg>\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--title", default="Magneto benchmark")
    a = ap.parse_args()
    order, rows = load(a.rows)
    if not order:
        print(f"bar_chart.py: no rows in {a.rows}", file=sys.stderr)
        return 1
    with open(a.output, "w") as f:
        f.write(render(order, rows, a.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
