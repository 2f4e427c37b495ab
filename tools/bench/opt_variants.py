#!/usr/bin/env python3
"""Sums the modeled effect of the --opt launch variants of a cuda/hip package (issue #17).

    /usr/bin/python3 tools/bench/opt_variants.py PACKAGE_DIR [PACKAGE_DIR...]

A package compiled with --dynamic ... --opt NAME=V1,V2 names each variant in its launch comments:
"variant for opt point K (NAME=V): TILES (X us modeled there) instead of GENERAL (Y us)". Per
package and opt point this prints how many launches have a variant and the sum of their modeled
latency at that point with the general tiles (chosen at the maximum binding) and with the
variants' tiles. Modeled figures of the package's device profile, not measurements.
"""
import glob
import os
import re
import sys

PATTERN = re.compile(r"// launch (\d+): [^\n]*\n//   variant for opt point (\d+) \(([^)]*)\): (.*?) "
                     r"\(([\d.]+) us modeled there\) instead of (.*?)(?: \(([\d.]+) us\))?\n")


def summarize(folder):
    sources = glob.glob(os.path.join(folder, "*.cu")) + glob.glob(os.path.join(folder, "*.hip"))
    if not sources:
        print(f"{folder}: no .cu or .hip file (compile with --target cuda or hip)", file=sys.stderr)
        return False
    text = open(sources[0]).read()
    seen, per = set(), {}
    for m in PATTERN.finditer(text):
        if m.group(1) in seen:  # the comment heads both the argument struct and the kernel
            continue
        seen.add(m.group(1))
        row = per.setdefault(m.group(3), [0, 0.0, 0.0, 0])
        row[0] += 1
        if m.group(7):
            row[1] += float(m.group(7))
            row[2] += float(m.group(5))
        else:
            row[3] += 1
    name = os.path.basename(os.path.normpath(folder))
    if not per:
        print(f"{name}: no launch variants (no --opt, or the general tiles are the best at every opt point)")
    for point, (n, general, variant, unpriced) in sorted(per.items()):
        ratio = f"{general / variant:.2f}x" if variant > 0 else "-"
        extra = f" ({unpriced} of them replace the default GEMM tile, not priced: left out of both sums)" if unpriced else ""
        print(f"{name} {point}: {n} launches with a variant{extra}; modeled {general:.1f} us with the general "
              f"tiles -> {variant:.1f} us with the variants ({ratio})")
    return True


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    ok = all([summarize(d) for d in sys.argv[1:]])
    sys.exit(0 if ok else 1)
