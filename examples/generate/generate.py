#!/usr/bin/env python3
"""Greedy generation with a decoder package, from Python: the same loop as generate.c, through the
package's own loader (decoder.py: ctypes and NumPy, the shapes set from the arrays each run).

  /usr/bin/python3 examples/generate/generate.py PACKAGE_DIR DIMS_FILE PROMPT_FILE TOKENS [bind|copy]

PACKAGE_DIR holds decoder.py and libdecoder.so (magnetoc compile ... --name decoder --shared).
Prints the generated token ids on one line. bind (the default): present_k and present_v are bound
to one buffer each with room for the longest cache (Model.bind_kv, docs/ABI.md "KV-cache
binding"): a step writes only its new positions, and run() returns views of the buffers, which are
the next step's past; copy: new present arrays every step.
"""
import sys

import numpy as np


def main():
    if len(sys.argv) not in (5, 6) or sys.argv[5:] not in ([], ["bind"], ["copy"]):
        sys.exit(__doc__)
    package, dims_file, prompt_file, tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    bind = sys.argv[5:] != ["copy"]
    sys.path.insert(0, package)
    import decoder  # noqa: E402  (the package's loader, found in PACKAGE_DIR)

    layers, heads, hd, vocab, max_seq, max_past = map(int, open(dims_file).read().split())
    ids = np.array([[int(t) for t in open(prompt_file).read().split()]], dtype=np.int64)
    past_k = np.zeros((layers, 1, heads, 0, hd), dtype=np.float32)
    past_v = np.zeros_like(past_k)
    out = []
    with decoder.Model(threads=1) as m:
        if bind:  # one buffer per cache, [layers, 1, heads, capacity, head_dim]; past: its first 0 rows
            for name in ("present_k", "present_v"):
                m.bind_kv(name, capacity=max_past + max_seq)
            past_k, past_v = m.kv_view("present_k", 0), m.kv_view("present_v", 0)
        for _ in range(tokens):
            y = m.run({"input_ids": ids, "past_k": past_k, "past_v": past_v})
            tok = int(np.argmax(y["logits"][0, -1]))  # the first of equal maxima, as generate.c
            out.append(tok)
            past_k, past_v = y["present_k"], y["present_v"]
            ids = np.array([[tok]], dtype=np.int64)
    print(" ".join(map(str, out)))


if __name__ == "__main__":
    main()
