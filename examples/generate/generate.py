#!/usr/bin/env python3
"""Greedy generation with a decoder package, from Python: the same loop as generate.c, through the
package's own loader (decoder.py: ctypes and NumPy, the shapes set from the arrays each run).

  /usr/bin/python3 examples/generate/generate.py PACKAGE_DIR DIMS_FILE PROMPT_FILE TOKENS

PACKAGE_DIR holds decoder.py and libdecoder.so (magnetoc compile ... --name decoder --shared).
Prints the generated token ids on one line.
"""
import sys

import numpy as np


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    package, dims_file, prompt_file, tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sys.path.insert(0, package)
    import decoder  # noqa: E402  (the package's loader, found in PACKAGE_DIR)

    layers, heads, hd, vocab, _max_seq, _max_past = map(int, open(dims_file).read().split())
    ids = np.array([[int(t) for t in open(prompt_file).read().split()]], dtype=np.int64)
    past_k = np.zeros((layers, 1, heads, 0, hd), dtype=np.float32)
    past_v = np.zeros_like(past_k)
    out = []
    with decoder.Model(threads=1) as m:
        for _ in range(tokens):
            y = m.run({"input_ids": ids, "past_k": past_k, "past_v": past_v})
            tok = int(np.argmax(y["logits"][0, -1]))  # the first of equal maxima, as generate.c
            out.append(tok)
            past_k, past_v = y["present_k"], y["present_v"]
            ids = np.array([[tok]], dtype=np.int64)
    print(" ".join(map(str, out)))


if __name__ == "__main__":
    main()
