# e2e.kv_bind (issue #40 item 5): KV-cache binding (docs/ABI.md, "KV-cache binding") on three
# packages compiled with --shared by model_cases.sh:
#   kvs: kv_bind_model.py's stacked two-layer cache (present = stack of Concat(Gather(past, j), new_j))
#   kvd: empty_past_model.py's direct caches (present_k/v = Concat(past_k/v, new_k/v)), whose past
#        and present are also read by other ops (ReduceSum, Slice, Softmax: densified reads)
#   kvn: kv_bind_model.py's Relu, with no KV-cache output
# Checks, at 1 and 2 threads: the bound path equals the copying path bit for bit over several
# steps (prefill at past 0, decodes, a multi-row step), both match numpy, a bound output's dims
# and its buffer (rows past the cache untouched), and the refusals through the C functions
# (ctypes, status and message) and NAME.py: a too-small capacity at run time, a NULL buffer,
# wrong output and input indices, capacity 0, an output that is no cache, a model without one.
#   /usr/bin/python3 tests/e2e/kv_bind_test.py KVS_DIR KVD_DIR KVN_DIR MODELS_DIR
import ctypes
import importlib
import os
import sys

import numpy as np

kvs_dir, kvd_dir, kvn_dir, models = sys.argv[1:5]
for d in (kvs_dir, kvd_dir, kvn_dir):
    sys.path.insert(0, d)
kvs, kvd, kvn = (importlib.import_module(n) for n in ("kvs", "kvd", "kvn"))
checks = 0


def ok(cond, what):
    global checks
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)
    checks += 1


def refused(fn, want, what):
    try:
        fn()
    except (ValueError, kvs.Error, kvd.Error, kvn.Error) as e:
        ok(all(w in str(e) for w in want), "%s: the message %r names %s" % (what, str(e), want))
        print("ok: %s: %s" % (what, e))
        return
    ok(False, what + ": was accepted")


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


w = np.load(os.path.join(models, "stacked", "weights.npz"))


def stacked_ref(x, past):
    fulls, ctx = [], 0
    for j in range(2):
        new = (x @ w["w%d" % j]).reshape(1, -1, 2, 4).transpose(0, 2, 1, 3)
        full = np.concatenate([past[j], new], 2)
        ctx = ctx + softmax(new @ full.transpose(0, 1, 3, 2)) @ full
        fulls.append(full)
    return ctx + fulls[1].reshape(1, -1).sum(1, keepdims=True), np.stack(fulls)


rng = np.random.default_rng(5)
CAP = 16
steps = [3, 1, 1, 2, 1, 4]  # 12 rows in all
for threads in (1, 2):
    ref_m, bound = kvs.Model(threads=threads), kvs.Model(threads=threads)
    buf = bound.bind_kv("present", capacity=CAP)
    ok(buf.shape == (2, 1, 2, CAP, 4) and buf.dtype == np.float32, "the buffer is the past's shape at capacity")
    past_r, past_b, past_np = np.zeros((2, 1, 2, 0, 4), np.float32), bound.kv_view("present", 0), None
    past_np = past_r
    for seq in steps:
        x = rng.standard_normal((1, seq, 8)).astype(np.float32)
        r = ref_m.run({"x": x, "past": past_r})
        b = bound.run({"x": x, "past": past_b})
        total = past_r.shape[3] + seq
        ok(np.array_equal(r["y"], b["y"]), "kvs %dt past %d seq %d: y bound == y copied, bit for bit" % (threads, past_r.shape[3], seq))
        ok(np.array_equal(r["present"], b["present"]), "kvs: present bound == present copied, bit for bit")
        ok(b["present"].shape == (2, 1, 2, total, 4) and np.shares_memory(b["present"], buf),
           "kvs: the bound present is the buffer's first %d rows" % total)
        dims = bound._fn("model_output_dims")(bound._handle, 1)
        ok([dims[k] for k in range(5)] == [2, 1, 2, total, 4], "kvs: model_output_dims reports past + new rows")
        ok(not buf[:, :, :, total:].any(), "kvs: the rows after the cache are untouched")
        y_np, present_np = stacked_ref(x, past_np)
        ok(np.allclose(r["y"], y_np, rtol=1e-4, atol=1e-4) and np.allclose(r["present"], present_np, atol=1e-5),
           "kvs: matches numpy")
        past_r, past_b, past_np = r["present"], b["present"], present_np
    print("ok: kvs at %d thread(s): %d steps, bound == copied bit for bit, numpy agrees" % (threads, len(steps)))

    # direct caches with past/present read by other ops too
    ref_m2, bound2 = kvd.Model(threads=threads), kvd.Model(threads=threads)
    for name in ("present_k", "present_v"):
        bound2.bind_kv(name, buffer=np.zeros((1, 2, CAP, 8), np.float32))
    pr = {n: np.zeros((1, 2, 0, 8), np.float32) for n in ("past_k", "past_v")}
    pb = {"past_k": bound2.kv_view("present_k", 0), "past_v": bound2.kv_view("present_v", 0)}
    for seq in steps:
        xs = {n: rng.standard_normal((1, 2, seq, 8)).astype(np.float32) for n in ("q", "new_k", "new_v")}
        r = ref_m2.run({**xs, **pr})
        b = bound2.run({**xs, **pb})
        for n in r:
            ok(np.array_equal(r[n], b[n]), "kvd %dt seq %d: %s bound == copied, bit for bit" % (threads, seq, n))
        ok(np.array_equal(r["present_k"], np.concatenate([pr["past_k"], xs["new_k"]], 2)), "kvd: present_k is past + new")
        ok(np.shares_memory(b["present_k"], bound2._kv[0][2]) and np.shares_memory(b["present_v"], bound2._kv[1][2]), "kvd: the bound presents are views of their buffers")
        pr = {"past_k": r["present_k"], "past_v": r["present_v"]}
        pb = {"past_k": b["present_k"], "past_v": b["present_v"]}
    print("ok: kvd at %d thread(s): every output bound == copied bit for bit" % threads)

# refusals: NAME.py
small = kvs.Model(threads=1)
small.bind_kv("present", capacity=4)
x3 = rng.standard_normal((1, 3, 8)).astype(np.float32)
y = small.run({"x": x3, "past": small.kv_view("present", 0)})
x2 = rng.standard_normal((1, 2, 8)).astype(np.float32)
refused(lambda: small.run({"x": x2, "past": y["present"]}),
        ["kvs_run", "output 1 ('present', node 'present')", "capacity 4", "3 past rows", "needs 5"],
        "a step needing more rows than the capacity")
refused(lambda: small.run({"x": x2, "past": np.zeros((2, 1, 2, 3, 4), np.float32)}),
        ["input 'past' is bound", "'present'"], "a bound input given as another array")
refused(lambda: small.bind_kv("y", capacity=4), ["output 0 ('y') is not a KV-cache output"], "bind_kv of a non-cache output")
refused(lambda: small.bind_kv("present", capacity=0), ["capacity must be at least 1"], "capacity 0")
refused(lambda: small.bind_kv("present", buffer=np.zeros((2, 1, 2, 4, 5), np.float32)), ["buffer must be"],
        "a buffer of the wrong shape")
refused(lambda: kvn.Model(threads=1).bind_kv("y", capacity=4),
        ["output 0 ('y') is not a KV-cache output", "this model has no KV-cache output"], "a model without a cache")
small.unbind_kv("present")
y2 = small.run({"x": x2, "past": np.ascontiguousarray(y["present"])})
ok(y2["present"].shape == (2, 1, 2, 5, 4) and not np.shares_memory(y2["present"], y["present"]),
   "unbound again: run takes and returns arrays")

# refusals: the C functions
lib, h = kvs.load_library(), ctypes.c_void_p(small._handle.value)
err = lambda handle: kvs._text(lib.kvs_last_error(handle))  # noqa: E731
buf = np.zeros((2, 1, 2, 8, 4), np.float32)
p = buf.ctypes.data


def c_refused(status, handle, want, what):
    ok(status == 1, "%s: status %d is kvs_ERR_INVALID_ARGUMENT" % (what, status))
    ok(all(x in err(handle) for x in want), "%s: the message %r names %s" % (what, err(handle), want))
    print("ok: C %s: %s" % (what, err(handle)))


c_refused(lib.kvs_bind_kv(h, 1, 1, None, 8), h, ["kvs_bind_kv", "buffer is NULL", "output 1 ('present')"], "a NULL buffer")
c_refused(lib.kvs_bind_kv(h, 5, 1, p, 8), h, ["output index 5 is out of range [0, 2)"], "a wrong output index")
c_refused(lib.kvs_bind_kv(h, 1, 0, p, 8), h, ["appends to input 1 ('past'), not to input 0 ('x')"], "another input")
c_refused(lib.kvs_bind_kv(h, 1, 9, p, 8), h, ["not to input 9 (out of range [0, 2))"], "an input index out of range")
c_refused(lib.kvs_bind_kv(h, 0, 0, p, 8), h, ["output 0 ('y') is not a KV-cache output"], "a non-cache output")
c_refused(lib.kvs_bind_kv(h, 1, 1, p, 0), h, ["capacity must be at least 1", "got 0"], "capacity 0")
c_refused(lib.kvs_bind_kv(None, 1, 1, p, 8), None, ["not a live handle"], "a NULL handle")
c_refused(lib.kvs_unbind_kv(h, 3), h, ["kvs_unbind_kv", "output index 3"], "unbind of a wrong index")
ok(lib.kvs_kv_input(1) == 1 and lib.kvs_kv_axis(1) == 3 and lib.kvs_kv_input(0) == -1 and lib.kvs_kv_axis(2) == -1,
   "kv_input / kv_axis: present appends to past along axis 3; y is none")
ok(lib.kvs_kv_buffer_bytes(h, 1, 8) == buf.nbytes and lib.kvs_kv_buffer_bytes(h, 0, 8) == 0,
   "kv_buffer_bytes: the past's dims at the capacity")
# a C run with the bound buffers and NULL cache pointers; capacity too small gives status 1
ok(lib.kvs_bind_kv(h, 1, 1, p, 4) == 0, "bind through C")
dims = (ctypes.c_int64 * 5)(2, 1, 2, 3, 4)
ok(lib.kvs_set_input_dims(h, 1, dims, 5) == 0 and lib.kvs_set_input_dims(h, 0, (ctypes.c_int64 * 3)(1, 2, 8), 3) == 0,
   "set dims past 3, seq 2")
yb = np.zeros((1, 2, 2, 4), np.float32)
ins = (ctypes.c_void_p * 2)(x2.ctypes.data, None)
outs = (ctypes.c_void_p * 2)(yb.ctypes.data, None)
c_refused(lib.kvs_run(h, ins, outs), h, ["capacity 4", "needs 5"], "a C run past the capacity")
ok(lib.kvs_bind_kv(h, 1, 1, p, 8) == 0 and lib.kvs_run(h, ins, outs) == 0, "the same run with capacity 8 succeeds")
mn = kvn.Model(threads=1)
hn = ctypes.c_void_p(mn._handle.value)
libn = kvn.load_library()
ok(libn.kvn_bind_kv(hn, 0, 0, p, 4) == 1 and "this model has no KV-cache output" in kvn._text(libn.kvn_last_error(hn)),
   "C: a model without a cache output refuses by name")
print("kv_bind: %d checks passed" % checks)
