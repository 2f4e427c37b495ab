#!/usr/bin/env python3
"""The Python half of tools/gpu/run_on_device.sh: exports the zoo with the machine's own PyTorch,
builds every model's cuda package (with and without --no-parallel-opt; --precision fp16 too for the
--fp16-models), checks each against PyTorch's CPU outputs, and times it against PyTorch eager and
torch.compile. Prints one table last.

    device_bench.py --out DIR --magnetoc PATH [--models a,b|all] [--fp16-models a,b|none]
                    [--deadline-s S] [--runs N] [--warmup N] [--jobs N] [--arch 90] [--cpu-test]

Timing (docs/PERFORMANCE.md, "GPU figures"): every figure is the median of --runs runs after
--warmup untimed ones, each run bracketed by CUDA events on the model's stream: Magneto through
its runner's --device-time (NAME_time_device: the captured graph replayed, no host copies),
PyTorch through torch.cuda.Event around model(*inputs) under inference_mode. torch.compile is
timed after its compile (the first calls), for as many models as the deadline allows; a model it
has no time for says "skipped (time)".

--cpu-test runs the same pipeline on a machine without a GPU: small models, packages built for
the CPU emulation (-DNAME_EMULATE=ON), PyTorch on the CPU with wall-clock timers. Its figures mean
nothing; it tests that the script works before a GPU is lent (tests/gpu/device_script_test.sh).

Never changes the card's settings (no clocks, no persistence mode, no MIG): it only reads them.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "models"))
import export  # noqa: E402  (models/export.py: the zoo's definitions and exporter)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from onnx import numpy_helper  # noqa: E402

T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def left(args):
    return args.deadline_s - (time.time() - T0)


def run(cmd, timeout, cwd=None):
    """(exit code, output); 124 when the timeout expired."""
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=max(1, timeout), text=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out + f"\n(timed out after {timeout:.0f} s)"


def build_package(args, name, folder, ablation, tuning=None, precision=None):
    """magnetoc compile + the package's CMake; returns (runner path or None, message)."""
    tag = "tuned" if tuning else "noopt" if ablation else precision if precision else "opt"
    pkg = os.path.join(args.out, "pkg", f"{name}-{tag}")
    shutil.rmtree(pkg, ignore_errors=True)
    cmd = [args.magnetoc, "compile", os.path.join(folder, "model.onnx"), "--target", "cuda",
           "--arch", f"sm_{args.arch}", "--name", name, "-o", pkg]
    if ablation:
        cmd.append("--no-parallel-opt")
    if tuning:
        cmd += ["--tuning", tuning]
    if precision:
        cmd += ["--precision", precision]
    rc, out = run(cmd, left(args))
    if rc != 0:
        return None, "compile failed: " + out.strip().splitlines()[-1] if out.strip() else f"compile exit {rc}"
    launches = re.search(r"(\d+) launches of (\d+) kernels \((\d+) joint\)", out)
    cfg = ["cmake", "-S", pkg, "-B", pkg + "/build", "-DCMAKE_BUILD_TYPE=Release", f"-D{name}_ARCH={args.arch}"]
    if args.cpu_test:
        cfg.append(f"-D{name}_EMULATE=ON")
    else:
        cfg.append("-DCMAKE_CUDA_COMPILER=" + args.nvcc)
    rc, out2 = run(cfg, left(args))
    if rc == 0:
        rc, out2 = run(["cmake", "--build", pkg + "/build", "-j", "2"], left(args))
    if rc != 0:
        return None, f"build failed (exit {rc}); log tail: " + " | ".join(out2.strip().splitlines()[-3:])
    info = launches.groups() if launches else None
    return os.path.join(pkg, "build", f"{name}_runner"), info


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check_and_time(args, name, folder, runner, fp16=False):
    """Runs the package on the test data (max abs error vs PyTorch's CPU output) and times it.
    fp16: tolerance rtol 2e-2 and atol 2e-2 x the output's largest magnitude (float16 activations
    and weights, one rounding per stored tensor, over deep sums; `magnetoc check --precision fp16`
    uses rtol 2e-2, atol 2e-3)."""
    data = os.path.join(folder, "test_data_set_0")
    raws, k = [], 0
    while os.path.exists(os.path.join(data, f"input_{k}.pb")):
        raw = os.path.join(os.path.dirname(runner), f"input_{k}.raw")
        load_pb(os.path.join(data, f"input_{k}.pb")).tofile(raw)
        raws.append(raw)
        k += 1
    expected = load_pb(os.path.join(data, "output_0.pb"))
    n_out = len(re.findall(r"^output \d+ ", run([runner, "--info"], 60)[1], re.M))
    outs = [os.path.join(os.path.dirname(runner), f"output_{i}.raw") for i in range(n_out)]
    cmd = [runner] + sum((["--input", r] for r in raws), []) + sum((["--output", o] for o in outs), [])
    rc, out = run(cmd, min(300, left(args)))
    if rc != 0:
        return {"check": f"run failed (exit {rc}): " + out.strip().splitlines()[-1]}
    got = np.fromfile(outs[0], dtype=expected.dtype).reshape(expected.shape)
    err = float(np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64)))) if expected.size else 0.0
    with open(os.path.join(folder, "meta.json")) as f:
        tol = json.load(f).get("tolerance", {"rtol": 1e-3, "atol": 1e-4})
    if fp16:
        scale = float(np.max(np.abs(expected))) if expected.size else 1.0
        tol = {"rtol": 2e-2, "atol": max(tol["atol"], 2e-2 * scale)}
    bound = np.abs(expected.astype(np.float64)) * tol["rtol"] + tol["atol"]
    ok = bool(np.all(np.abs(got.astype(np.float64) - expected.astype(np.float64)) <= bound))
    res = {"check": "ok" if ok else "FAIL", "max_abs_err": err}
    cmd = [runner, "--device-time", "--runs", str(args.runs), "--warmup", str(args.warmup), "--quiet"] + \
        sum((["--input", r] for r in raws), [])
    rc, out = run(cmd, min(300, left(args)))
    m = re.search(r"median_ms=([0-9.eE+-]+)", out)
    res["ms"] = float(m.group(1)) if rc == 0 and m else None
    return res


def time_torch(args, model, xs):
    """Median ms of model(*xs): CUDA events on the GPU, perf_counter on the CPU (--cpu-test)."""
    ts = []
    with torch.inference_mode():
        for i in range(args.warmup + args.runs):
            if args.device == "cuda":
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                model(*xs)
                b.record()
                b.synchronize()
                t = a.elapsed_time(b)
            else:
                t0 = time.perf_counter()
                model(*xs)
                t = (time.perf_counter() - t0) * 1e3
            if i >= args.warmup:
                ts.append(t)
    return statistics.median(ts)


def fmt(v, digits=3):
    return "-" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--magnetoc", required=True)
    ap.add_argument("--models", default="all")
    ap.add_argument("--deadline-s", type=float, default=480, help="stop starting new work after this (default 480)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=max(2, min(12, (os.cpu_count() or 2) - 2)))
    ap.add_argument("--arch", default="90", help="CUDA architecture of the packages (default 90: H100/H200)")
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--cpu-test", action="store_true", help="no GPU: small models, emulated packages, torch on CPU")
    ap.add_argument("--fp16-models", default="inception_v3,resnext50_32x4d,squeezenet1_1,bert_layers,switch_moe,yolox_heads",
                    help="models also built with --precision fp16 (tensor cores), checked and timed; 'none' for none")
    args = ap.parse_args()
    args.device = "cpu" if args.cpu_test else "cuda"
    if not args.cpu_test and not torch.cuda.is_available():
        print("device_bench: torch sees no CUDA device (use --cpu-test on a machine without one)", file=sys.stderr)
        return 2
    names = list(export.MODELS) if args.models == "all" else [n for n in args.models.split(",") if n]
    fp16_names = set() if args.fp16_models == "none" else set(n for n in args.fp16_models.split(",") if n)
    unknown = [n for n in names if n not in export.MODELS]
    if unknown:
        print(f"device_bench: unknown model(s) {unknown}; known: {', '.join(export.MODELS)}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    zoo = os.path.join(args.out, "zoo")
    xargs = types.SimpleNamespace(opset=13, seed=0, bn_batches=10, bn_batch_size=2, force=True)
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    log(f"torch {torch.__version__}, onnx {onnx.__version__}, device "
        f"{torch.cuda.get_device_name(0) if args.device == 'cuda' else 'cpu (--cpu-test)'}, "
        f"{len(names)} model(s), {args.jobs} build jobs, deadline {args.deadline_s:.0f} s")

    # 1. Export (one at a time: torch uses the cores) while the packages build in the background.
    rows, modules, builds = {}, {}, {}
    pool = cf.ThreadPoolExecutor(max_workers=args.jobs)
    for n in names:
        if left(args) < 60:
            rows[n] = {"note": "skipped (time)"}
            continue
        keep = {}
        try:
            ok = export.export_one(n, zoo, args.cpu_test, xargs, keep=keep)
        except Exception as e:  # noqa: BLE001  (report every model)
            rows[n] = {"note": f"export failed: {type(e).__name__}: {e}"}
            continue
        folder = os.path.join(zoo, n + ("_small" if args.cpu_test else ""))
        rows[n] = {"folder": folder, "export_ok": ok}
        modules[n] = keep
        for abl in (False, True):
            builds[(n, abl)] = pool.submit(build_package, args, n, folder, abl)
        if n in fp16_names:
            builds[(n, "fp16")] = pool.submit(build_package, args, n, folder, False, None, "fp16")
    log(f"exported {len(modules)} model(s); waiting for {len(builds)} package builds")

    # 2. Check and time, one model at a time (the GPU is not shared between measurements).
    for n in names:
        r = rows[n]
        if n not in modules:
            continue
        for abl in (False, True, "fp16"):
            if (n, abl) not in builds:
                continue
            key = abl if abl == "fp16" else "noopt" if abl else "opt"
            try:
                runner, info = builds[(n, abl)].result(timeout=max(1, left(args) + 60))
            except cf.TimeoutError:
                r[key] = {"check": "build not finished (time)"}
                continue
            if runner is None:
                r[key] = {"check": info}
                continue
            r[key] = check_and_time(args, n, r["folder"], runner, fp16=abl == "fp16")
            if info:
                r[key]["launches"], r[key]["kernels"], r[key]["joint"] = map(int, info)
        model, xs = modules[n]["model"].eval(), modules[n]["inputs"]
        model = model.to(args.device)
        xs = [x.to(args.device) for x in xs]
        r["eager_ms"] = time_torch(args, model, xs)
        if not hasattr(torch, "compile"):
            r["compile_ms"] = "n/a (torch " + torch.__version__ + ")"
        elif left(args) < 90:
            r["compile_ms"] = "skipped (time)"
        else:
            try:
                t0 = time.time()
                cm = torch.compile(model)
                with torch.inference_mode():
                    cm(*xs)
                r["compile_s"] = round(time.time() - t0, 1)
                r["compile_ms"] = time_torch(args, cm, xs)
            except Exception as e:  # noqa: BLE001
                r["compile_ms"] = f"error: {type(e).__name__}"
        log(f"{n}: {json.dumps({k: v for k, v in r.items() if k != 'folder'})}")
        modules[n] = None  # free the module
        if args.device == "cuda":
            torch.cuda.empty_cache()
    pool.shutdown(wait=False, cancel_futures=True)

    # 3. Measured co-tuning (magnetoc tune) for the models time allows, then the tuned package.
    for n in names:
        r = rows[n]
        if r.get("opt", {}).get("check") != "ok":
            continue
        if left(args) < 150:
            r["tuned"] = {"check": "skipped (time)"}
            continue
        record = os.path.join(args.out, "pkg", f"{n}-tuning.json")
        cmd = [args.magnetoc, "tune", os.path.join(r["folder"], "model.onnx"), "--target", "cuda",
               "--arch", f"sm_{args.arch}", "--variants", "3", "--runs", "10" if args.cpu_test else "30",
               "-o", record, "-q"]
        if args.cpu_test:
            cmd.append("--emulate")
        rc, out = run(cmd, left(args))
        if rc != 0:
            r["tuned"] = {"check": f"tune failed (exit {rc}): " + (out.strip().splitlines() or [""])[-1]}
            continue
        m = re.search(r"tuned: (\d+) of (\d+) launches changed", out)
        runner, info = build_package(args, n, r["folder"], False, tuning=record)
        r["tuned"] = check_and_time(args, n, r["folder"], runner) if runner else {"check": info}
        if m:
            r["tuned"]["changed"] = f"{m.group(1)}/{m.group(2)}"
        log(f"{n}: tuned {json.dumps(r['tuned'])}")

    # 3. The table, last.
    head = ("| model | check | Magneto ms | --no-parallel-opt ms | parallel gain | tuned ms (launches changed) "
            "| fp16 ms (check) | launches (kernels) | eager ms | torch.compile ms | vs eager | vs compile |")
    lines = [head, "|" + "---|" * 12]
    for n in names:
        r = rows[n]
        o, u = r.get("opt", {}), r.get("noopt", {})
        ms, ums, ems, cms = o.get("ms"), u.get("ms"), r.get("eager_ms"), r.get("compile_ms")
        check = r.get("note") or o.get("check", "-")
        if check == "ok":
            check = f"ok ({o['max_abs_err']:.1e})"
            if u.get("check") not in (None, "ok"):
                check += f"; noopt {u.get('check')}"
        ratio = lambda a, b: f"{a / b:.2f}x" if isinstance(a, float) and isinstance(b, float) and b > 0 else "-"  # noqa: E731
        t = r.get("tuned", {})
        tuned = (f"{fmt(t.get('ms'))} ({t.get('changed', '-')})" if t.get("check") == "ok"
                 else t.get("check", "-"))
        h = r.get("fp16")
        half = ("-" if h is None else
                f"{fmt(h.get('ms'))} ({h['check']} {h['max_abs_err']:.1e})" if "max_abs_err" in h else h.get("check", "-"))
        lines.append(f"| {n} | {check} | {fmt(ms)} | {fmt(ums)} | {ratio(ums, ms)} | {tuned} | {half} | "
                     f"{o.get('launches', '-')} ({o.get('kernels', '-')}) | {fmt(ems)} | {fmt(cms)} | "
                     f"{ratio(ems, ms)} | {ratio(cms, ms) if isinstance(cms, float) else '-'} |")
    table = "\n".join(lines)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({k: {kk: vv for kk, vv in v.items() if kk != "folder"} for k, v in rows.items()}, f, indent=1)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(table + "\n")
    log("done")
    print("\n" + table)
    bad = [n for n in names if rows[n].get("opt", {}).get("check") != "ok"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
