#!/usr/bin/env python3
"""Writes docs/CONFORMANCE.md from the results of tests/e2e/run_backend_tests.sh.

    /usr/bin/python3 tools/conformance/gen_conformance.py build/backend_results.tsv \
        [-o docs/CONFORMANCE.md] [--data-root /usr/share/libonnx-testdata/data/node] \
        [--known tests/e2e/backend_known_failures.txt] \
        [--opset-results build/opset_tests/results.tsv] \
        [--opset-target-results 'cuda --emulate=build/opset_tests/results-cuda-emulate.tsv']...

results.tsv lines: `test<TAB>pass|fail|known|skip|folded<TAB>first error line or reason`
(folded: every output matched, but the model folded to a constant once check bound its
shape-deciding inputs: counted as run and not passed, apart from the failures).
The operators of a test are read from its model.onnx (node op types, subgraphs included), not
guessed from the test's name. Per operator the report gives pass/total over the tests whose
graph uses only that operator ("single-op": the direct test of the operator) and over every test
whose graph uses it ("all"; includes the *_expanded function-body tests). Skipped tests are
counted apart, known failures count as failures.

The section "Opsets 18 to 21" comes from Magneto's own test set for those opsets: the case list of
tests/opset/make_opset_tests.py (imported; its OP_VERSIONS and UNSUPPORTED tables say which
operator versions each case runs and which are not supported) and, when the file exists, the
results.tsv that tests/opset/run_opset_tests.sh writes (`case<TAB>pass|fail<TAB>reason`).
Each --opset-target-results LABEL=FILE adds a result column for another target's run of the same
set (run_opset_tests.sh --target cuda --emulate writes results-cuda-emulate.tsv), headed LABEL.
"""
import argparse
import collections
import datetime
import importlib.util
import os
import shlex
import sys

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def graph_ops(graph, out):
    for n in graph.node:
        dom = n.domain if n.domain not in ("", "ai.onnx") else ""
        out.add(f"{dom}.{n.op_type}" if dom else n.op_type)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                graph_ops(a.g, out)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    graph_ops(g, out)
    return out


# The operators the compiler spine (issue #2) lists: its 90% goal counts the tests whose graphs
# use only these (function expansions included, since they run through the same operators).
SPINE_OPS = set("""
Conv ConvTranspose Gemm MatMul MaxPool AveragePool GlobalAveragePool GlobalMaxPool
BatchNormalization InstanceNormalization LayerNormalization
Relu LeakyRelu PRelu Elu Selu Sigmoid HardSigmoid HardSwish Tanh Softplus Softsign Gelu Erf Mish Clip
Softmax LogSoftmax
Abs Neg Floor Ceil Round Sqrt Reciprocal Exp Log Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh
Atanh Sign IsNaN IsInf Not BitwiseNot
Add Sub Mul Div Pow Mod Max Min Sum Mean BitShift BitwiseAnd BitwiseOr BitwiseXor
ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp
ReduceSumSquare
Concat Split Slice Reshape Flatten Transpose Squeeze Unsqueeze Expand Tile Pad Gather GatherElements
ScatterND Where Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor Cast CastLike Shape
ConstantOfShape Constant Range CumSum ArgMax ArgMin TopK Resize Einsum LSTM GRU RNN Identity
""".split())


def model_ops(path):
    try:
        m = onnx.load(path, load_external_data=False)
    except Exception as e:  # unreadable model: report it, do not crash the report
        return {f"<unreadable: {type(e).__name__}>"}
    return graph_ops(m.graph, set())


def read_known(path):
    known = {}
    if path and os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            name, _, reason = line.partition("#")
            name = name.strip()
            if name:
                known[name] = reason.strip()
    return known


def md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ").strip()


def load_opset_tests():
    path = os.path.join(ROOT, "tests", "opset", "make_opset_tests.py")
    spec = importlib.util.spec_from_file_location("make_opset_tests", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_results(path):
    res = {}
    if path and os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[0]:
                res[parts[0]] = parts[1]
    return res


def opset_section(w, results_path, rel, targets=()):
    """The section "Opsets 18 to 21": opsets, then every operator version above 17 with its cases.
    `targets`: (label, results path) of other targets' runs, one more result column each."""
    mod = load_opset_tests()
    cases = mod.build_cases()
    res = read_results(results_path)
    extra = [(label, read_results(path), path) for label, path in targets]
    first, last = 18, 21

    def verdict(names, r=None):
        r = res if r is None else r
        if not r:
            return "not run"
        ran = [n for n in names if n in r]
        passed = sum(1 for n in ran if r[n] == "pass")
        missing = len(names) - len(ran)
        return f"{passed}/{len(names)} pass" + (f" ({missing} not run)" if missing else "")

    def verdicts(names):
        return " | ".join([verdict(names)] + [verdict(names, r) for _, r, _ in extra])

    heads = "".join(f" {label} |" for label, _, _ in extra)
    dashes = "---|" * len(extra)
    result = "result (cpu)" if extra else "result"

    w("## Opsets 18 to 21")
    w("")
    w("libonnx 1.12 knows opsets up to 17: models of opsets 18 to 21 are imported with Magneto's own "
      "operator table, without libonnx's checker. ONNX's backend test data in Debian stops at opset 17 "
      "too, so these opsets are tested by Magneto's own set: `tests/opset/make_opset_tests.py` writes "
      f"{len(cases)} cases (a model and seeded inputs each; expected outputs computed by onnxruntime-node "
      "1.30 through tools/ort/run_ort.js) and `tests/opset/run_opset_tests.sh` (ctest `e2e.opset`) checks "
      "every one with `magnetoc check` (rtol 1e-3, atol 1e-4).")
    if res:
        counts = collections.Counter(res.get(c.name, "not run") for c in cases)
        w("")
        w(f"Results from `{rel(os.path.abspath(results_path))}`: {counts['pass']} passed, "
          f"{counts['fail']} failed" + (f", {counts['not run']} not run" if counts["not run"] else "") + ".")
    else:
        w("")
        w("No results of `tests/opset/run_opset_tests.sh` were given when this page was generated: "
          "the result columns say `not run`.")
    for label, r, path in extra:
        counts = collections.Counter(r.get(c.name, "not run") for c in cases)
        when = (datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
                .strftime("%Y-%m-%d") if os.path.exists(path) else "never")
        failed = [c.name for c in cases if r.get(c.name) == "fail"]
        w("")
        w(f"Column `{label}`: the same cases through `magnetoc check --target {label}` "
          f"(`tests/opset/run_opset_tests.sh --target {label}`), results from "
          f"`{rel(os.path.abspath(path))}` of {when}: {counts['pass']} passed, {counts['fail']} failed"
          + (f", {counts['not run']} not run" if counts["not run"] else "") + "."
          + (f" Failing: {', '.join(failed)}." if failed else ""))
    w("")
    w(f"| opset | cases declaring it | {result} |" + heads)
    w("|---|---|---|" + dashes)
    for v in range(first, last + 1):
        names = [c.name for c in cases if c.opset == v]
        w(f"| {v} | {len(names)} | {verdicts(names)} |")
    w("")
    w("### Operator versions above 17")
    w("")
    w("Every operator version that ONNX introduced in opsets 18 to 21, the opsets that run it, and the "
      "cases whose model runs it (a model of opset V runs the newest version <= V).")
    w("")
    w(f"| operator version | opsets | cases | {result} |" + heads)
    w("|---|---|---|---|" + dashes)
    rows = []
    for op, versions in mod.OP_VERSIONS.items():
        for i, v in enumerate(versions):
            if v < first:
                continue
            upto = min(versions[i + 1] - 1, last) if i + 1 < len(versions) else last
            names = [c.name for c in cases if f"{op}-{v}" in c.covers()]
            rows.append((op, v, upto, names, None))
    for op, (versions, reason) in mod.UNSUPPORTED.items():
        for i, v in enumerate(versions):
            upto = min(versions[i + 1] - 1, last) if i + 1 < len(versions) else last
            rows.append((op, v, upto, [], reason))
    for op, v, upto, names, reason in sorted(rows, key=lambda r: (r[0].lower(), r[1])):
        span = f"{v}" if v == upto else f"{v}-{upto}"
        if reason:
            w(f"| {op}-{v} | {span} | - | not supported: {md_escape(reason)} |" + " - |" * len(extra))
        elif not names:
            w(f"| {op}-{v} | {span} | - | NO CASE |" + " - |" * len(extra))
        else:
            w(f"| {op}-{v} | {span} | {', '.join(names)} | {verdicts(names)} |")
    older = sorted({cv for c in cases for cv in c.covers()
                    if int(cv.rsplit("-", 1)[1]) < first}, key=str.lower)
    w("")
    w("Older operator versions that these models also run: " + ", ".join(older) + ".")
    w("")
    w("### Cases")
    w("")
    w(f"| case | opset | operator versions | what it checks | {result} |" + heads)
    w("|---|---|---|---|---|" + dashes)
    for c in cases:
        r = " | ".join(x.get(c.name, "not run") if x else "not run" for x in [res] + [e[1] for e in extra])
        w(f"| {c.name} | {c.opset} | {', '.join(c.covers())} | {md_escape(c.doc)} | {r} |")
    w("")


# Opsets 22 and 23 (issue #40): a fixed text, the cases live in tests/e2e/opset23_model.py.
OPSET23_SECTION = [
    "## Opsets 22 and 23",
    "",
    "Opset 22 added bfloat16 to many operators and opset 23 float4e2m1 to Cast, Constant, Reshape "
    "and the other storage operators; neither changed the signature of an operator Magneto had, so "
    "models of both import with the same operator table (an element type Magneto lacks, float8, "
    "4-bit or float4e2m1, stops the compile naming the node or tensor; bfloat16 runs where it ran "
    "before). Opset 23's new operators, Attention-23, RotaryEmbedding-23 and RMSNormalization-23, "
    "are decomposed into plain operators by the `decompose-attention` pass (docs/PASSES.md) and so "
    "run on every target; on cpu, `fuse-attention` and `fuse-layernorm` then make one Attention and "
    "one RMSNormalization node of those chains again for the fused kernels (an Attention with "
    "softcap or a QK output stays decomposed). `tests/e2e/opset23_model.py` writes 13 cases (Attention 3-D and 4-D, "
    "grouped-query heads 8 over 2, is_causal, bool and additive masks, past/present KV, scale, "
    "softcap, qk_matmul_output_mode 0, 2 and 3; RotaryEmbedding interleaved or not, with and "
    "without position_ids, partial rotary; RMSNormalization on axis -1 and 1; a decoder block of "
    "all three; opset 22's revised Conv, pools, InstanceNormalization and activations and opset 23's "
    "revised Reshape, Transpose, Pad, Cast and other storage operators, on float32) and 5 that "
    "compile must refuse naming the node (inconsistent head counts, hidden size, missing heads, an "
    "unbroadcastable mask, a bfloat16 Conv), and `tests/e2e/opset23_test.sh` (ctest `e2e.opset23`) checks each with "
    "`magnetoc check` against onnxruntime-node 1.30's outputs on cpu, and four of them on "
    "`--target cuda --emulate` and `--target hip --emulate`. Where the specification is loose, "
    "Magneto does what onnxruntime does: q head h reads kv head h / (q_heads / kv_heads); the "
    "causal mask is offset by the past length; softcap comes before the mask; "
    "qk_matmul_output_mode 1 is the QK product after softcap, 2 after the mask, 3 after softmax; "
    "attn_mask's last dimension must be the total sequence length (no padding, as in onnxruntime). "
    "Not supported: softmax_precision other than the input type is ignored (Softmax computes in "
    "the input type); stash_type other than 1; dynamic dimensions around these three operators.",
    "",
]


# The GPU targets on the node tests (issue #40): a fixed text; the sample lives in
# tests/e2e/run_gpu_targets.sh.
GPU_SECTION = [
    "## The cuda and hip targets",
    "",
    "The tables above are the cpu target's. The cuda and hip targets are checked on a sample of the "
    "node tests through their CPU emulation (`magnetoc check --target cuda|hip --emulate`, "
    "tests/e2e/run_gpu_targets.sh, docs/GPU_TARGET.md), in three thread orders, some under the race "
    "check. The sample holds every node test of TopK (3), Unique (5) and NonMaxSuppression (9): "
    "all 17 pass on cuda, and test_top_k, test_unique_sorted_with_axis and "
    "test_nonmaxsuppression_two_batches on hip and under the race check on both. Their K (TopK's "
    "second input), Unique's input and NonMaxSuppression's boxes and scores are run-time inputs "
    "there, so the results' extents are counts the GPU programs compute (docs/DYNAMIC_SHAPES.md, "
    "\"Data-dependent extents\"); none of them is refused by the GPU targets.",
    "",
]

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "docs", "CONFORMANCE.md"))
    ap.add_argument("--data-root", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--known", default=os.path.join(ROOT, "tests", "e2e", "backend_known_failures.txt"))
    ap.add_argument("--opset-results", default=os.path.join(ROOT, "build", "opset_tests", "results.tsv"),
                    help="results.tsv of tests/opset/run_opset_tests.sh (optional)")
    ap.add_argument("--opset-target-results", action="append", default=[], metavar="LABEL=FILE",
                    help="another target's results of the same set, e.g. 'cuda --emulate="
                         "build/opset_tests/results-cuda-emulate.tsv' (repeatable)")
    a = ap.parse_args()

    rows = []
    for line in open(a.results, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        parts = line.split("\t")
        while len(parts) < 3:
            parts.append("")
        rows.append((parts[0], parts[1], parts[2]))
    if not rows:
        print(f"gen_conformance: no results in {a.results}", file=sys.stderr)
        return 1
    known = read_known(a.known)

    ops_of = {t: model_ops(os.path.join(a.data_root, t, "model.onnx")) for t, _, _ in rows}
    # op -> {"single": Counter(status), "all": Counter(status)}
    per_op = collections.defaultdict(lambda: {"single": collections.Counter(), "all": collections.Counter()})
    for t, status, _ in rows:
        ops = ops_of[t]
        for op in ops:
            per_op[op]["all"][status] += 1
            if len(ops) == 1:
                per_op[op]["single"][status] += 1

    counts = collections.Counter(s for _, s, _ in rows)
    ran = len(rows) - counts["skip"]

    def frac(c):
        total = c["pass"] + c["fail"] + c["known"] + c["folded"]
        return f"{c['pass']}/{total}" if total else "-"

    rel = lambda p: os.path.relpath(p, ROOT) if os.path.isabs(p) and p.startswith(ROOT) else p
    cmd = " ".join(["/usr/bin/python3", rel(os.path.abspath(sys.argv[0]))] +
                   [shlex.quote(rel(x)) for x in sys.argv[1:]])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    out = []
    w = out.append
    w("# ONNX backend conformance (CPU target)")
    w("")
    w(f"Generated by `{cmd}` on {now}, from the results of "
      "`tests/e2e/run_backend_tests.sh` (`magnetoc check` on every node test of Debian's "
      "libonnx-testdata). Do not edit by hand.")
    w("")
    w("## Summary")
    w("")
    pct = f" ({100.0 * counts['pass'] / ran:.1f}% of those run)" if ran else ""
    w(f"- tests: {len(rows)}; run: {ran}; skipped: {counts['skip']} (training mode, non-default domains)")
    w(f"- passed: {counts['pass']}{pct}")
    w(f"- failed: {counts['fail'] + counts['known']} "
      f"({counts['known']} listed in {rel(os.path.abspath(a.known))}, {counts['fail']} not)")
    w(f"- folded: {counts['folded']} (every output matched, but the model folded to a constant once "
      "`check` bound the inputs that decide its shapes: a test of constant folding only, not a pass)")
    single_ops = [op for op, c in per_op.items() if sum(c["single"].values()) - c["single"]["skip"] > 0]
    full_ops = [op for op in single_ops
                if per_op[op]["single"]["pass"] == sum(per_op[op]["single"].values()) - per_op[op]["single"]["skip"]]
    w(f"- operators with a direct (single-op) test: {len(single_ops)}; all of their direct tests pass: {len(full_ops)}")
    spine = [(t, st) for t, st, _ in rows if st != "skip" and ops_of[t] and ops_of[t] <= SPINE_OPS]
    spine_pass = sum(1 for _, st in spine if st == "pass")
    if spine:
        w(f"- tests of the spine's operators (issue #2's list; graphs using only those operators): "
          f"{spine_pass}/{len(spine)} pass ({100.0 * spine_pass / len(spine):.1f}%)")
    w("")
    w("## Per operator")
    w("")
    w("`single-op`: tests whose graph uses only this operator. `all`: every test whose graph uses it "
      "(including function expansions and subgraphs). Known failures count as failures; skipped tests are "
      "not counted.")
    w("")
    w("| operator | single-op pass/total | all pass/total | skipped |")
    w("|---|---|---|---|")
    for op in sorted(per_op, key=lambda s: s.lower()):
        c = per_op[op]
        w(f"| {md_escape(op)} | {frac(c['single'])} | {frac(c['all'])} | {c['all']['skip'] or ''} |")
    w("")
    targets = []
    for spec in a.opset_target_results:
        label, sep, path = spec.rpartition("=")
        if not sep or not label:
            print(f"gen_conformance: --opset-target-results wants LABEL=FILE, got '{spec}'", file=sys.stderr)
            return 2
        targets.append((label, path))
    opset_section(w, a.opset_results, rel, targets)
    for line in OPSET23_SECTION + GPU_SECTION:
        w(line)
    w("## Every test")
    w("")
    w("| test | operators | result | reason |")
    w("|---|---|---|---|")
    label = {"pass": "pass", "fail": "FAIL", "known": "known failure", "skip": "skipped",
             "folded": "folded (not a pass)"}
    for t, status, msg in sorted(rows):
        reason = msg
        if status == "known" and known.get(t):
            reason = f"{known[t]} ({msg})" if msg else known[t]
        ops = ", ".join(sorted(ops_of[t]))
        w(f"| {t} | {md_escape(ops)} | {label.get(status, status)} | {md_escape(reason)} |")
    w("")
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    with open(a.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    print(f"gen_conformance: {a.output}: {len(rows)} tests, {counts['pass']} passed, "
          f"{counts['fail'] + counts['known']} failed, {counts['skip']} skipped, {len(per_op)} operators")
    return 0


if __name__ == "__main__":
    sys.exit(main())
