#!/usr/bin/env python3
"""Exports Magneto's model zoo to ONNX, with test data computed by PyTorch.

    /usr/bin/python3 models/export.py --out models/zoo [--models a,b,c] [--small] [--force]

For each model: torchvision definition with seeded random weights (no download: weights=None),
BatchNorm running statistics settled on random data (train mode, momentum=None so they are the
cumulative average over the batches, under no_grad), then eval mode, ONNX export (opset 13,
constant folding) to OUT/NAME/model.onnx and one test data set OUT/NAME/test_data_set_0/
{input_0.pb, output_0.pb} holding a seeded random input and PyTorch's output for it, plus
OUT/NAME/meta.json (shapes, versions, timings, output statistics).

--dynamic (issue #17) exports the models of DYNAMIC_AXES with their batch (and sequence) axes
symbolic (`dim_param`s "batch", "seq") into OUT/NAME[_small]_dynamic/, with one test data set per
binding of DYNAMIC_AXES[NAME]["sets"] (test_data_set_K, each at its own shape, PyTorch's outputs)
and meta.json's "dynamic" giving the ranges for `magnetoc check --dynamic batch=LO..HI ...`
("export_inputs": the shapes it was traced at, those of the static export).

--small exports the same architectures at small spatial sizes (for fast CI) into OUT/NAME_small/
(the models of zoo_models.py also shrink widths and depths there). A model whose model.onnx and
test data already exist is skipped unless --force is given.

Models with several inputs (zoo_models.Input: name, shape, dtype, integer range) get one
test_data_set_0/input_K.pb per input, named like the graph input; integer inputs (token ids) are
seeded uniform integers, float inputs seeded randn.

A module may ask for more (zoo_models.GRUGreedyDecoder does): `output_names` (several outputs, each
saved as test_data_set_0/output_K.pb), `export_opset` (an opset other than --opset),
`export_module()` (what to hand the exporter, e.g. torch.jit.script(self); the reference outputs
always come from the eager module), `check_export(onnx_model, inputs, outputs)` (raises when
the export lacks what the model is for) and `unordered_rows` (groups of outputs that
tests/e2e/run_zoo.sh checks with `--unordered-rows`, from meta.json: a detector's sorted boxes,
scores and labels).

Run with Debian's interpreter (/usr/bin/python3: torch, torchvision, onnx, numpy). Works with
torch 1.13 and 2.x (TorchScript-based exporter; dynamo=False where the argument exists).
Exits non-zero when an export fails or an output is dead (all values equal) or exploding
(non-finite, or standard deviation <= 1e-3).
"""
import argparse
import hashlib
import inspect
import json
import os
import sys
import time

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parallel_blocks  # noqa: E402  (our own small models with parallel structure)
import zoo_models  # noqa: E402  (hand-written well-known architectures, full and small)
from zoo_models import Input  # noqa: E402


def _tv(name, **kw):
    fn = getattr(torchvision.models, name)
    return lambda: fn(weights=None, **kw)


def _vit(**kw):
    """torchvision's VisionTransformer (vit_b_16 when no arguments), its classifier head drawn at
    random: torchvision zero-initialises it, which would make every output 0."""
    def make():
        if kw:
            m = torchvision.models.vision_transformer.VisionTransformer(**kw)
        else:
            m = torchvision.models.vit_b_16(weights=None)
        head = m.heads.head
        torch.nn.init.normal_(head.weight, std=head.in_features ** -0.5)
        torch.nn.init.normal_(head.bias, std=0.1)
        return m
    return make


# name -> (constructor or (full, small) constructors, full input shape or [Input, ...], small
# input shape or [Input, ...], what it is). A bare shape is one float32 input named "input".
MODELS = {
    "inception_v3": (
        _tv("inception_v3", aux_logits=False, init_weights=True),
        (1, 3, 299, 299), (1, 3, 75, 75),
        "Inception v3 (torchvision): Inception-A/B/C blocks, 1x1 heads sharing an input, "
        "parallel 3x3/5x5/pool branches joined by Concat"),
    "squeezenet1_1": (
        _tv("squeezenet1_1"),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "SqueezeNet 1.1 (torchvision): Fire modules, squeeze 1x1 then parallel expand 1x1 and "
        "3x3 convs on the same input joined by Concat"),
    "resnext50_32x4d": (
        _tv("resnext50_32x4d"),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "ResNeXt-50 32x4d (torchvision): bottlenecks with 32-group 3x3 convs, residual forks "
        "with a projection shortcut beside the main path, joined by Add"),
    # Mobile CNNs (benchmarks of depthwise convolutions, squeeze-excitation and hard-swish; not in
    # the CI regression, which keeps to the models above).
    "mobilenet_v3_large": (
        _tv("mobilenet_v3_large"),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "MobileNet v3 large (torchvision): depthwise separable blocks, squeeze-excitation "
        "(pool, two 1x1 convs, hard-sigmoid, channel Mul), hard-swish"),
    "efficientnet_b0": (
        _tv("efficientnet_b0"),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "EfficientNet-B0 (torchvision): MBConv blocks with depthwise 3x3/5x5, squeeze-excitation, SiLU"),
    "mnasnet1_0": (
        _tv("mnasnet1_0"),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "MnasNet 1.0 (torchvision): inverted residuals with depthwise 3x3/5x5"),
    # The other torchvision classifiers of issue #41's benchmark (not in the CI regression either).
    "resnet18": (
        _tv("resnet18"), (1, 3, 224, 224), (1, 3, 64, 64),
        "ResNet-18 (torchvision): basic blocks of two 3x3 convs, residual Add"),
    "mobilenet_v2": (
        _tv("mobilenet_v2"), (1, 3, 224, 224), (1, 3, 64, 64),
        "MobileNet v2 (torchvision): inverted residuals, depthwise 3x3, ReLU6"),
    "efficientnet_b1": (
        _tv("efficientnet_b1"), (1, 3, 240, 240), (1, 3, 64, 64),
        "EfficientNet-B1 (torchvision): MBConv blocks, squeeze-excitation, SiLU, at 240x240"),
    "convnext_tiny": (
        _tv("convnext_tiny"), (1, 3, 224, 224), (1, 3, 64, 64),
        "ConvNeXt-T (torchvision): 7x7 depthwise convs, LayerNorm over channels, GELU MLPs, layer scale"),
    "densenet121": (
        _tv("densenet121"), (1, 3, 224, 224), (1, 3, 64, 64),
        "DenseNet-121 (torchvision): dense blocks, every layer's output joined by Concat"),
    "regnet_x_400mf": (
        _tv("regnet_x_400mf"), (1, 3, 224, 224), (1, 3, 64, 64),
        "RegNetX-400MF (torchvision): bottlenecks with grouped 3x3 convs (group width 16)"),
    "shufflenet_v2_x1_0": (
        _tv("shufflenet_v2_x1_0"),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "ShuffleNet v2 1.0 (torchvision): channel split into two branches (one a depthwise "
        "separable chain), Concat, channel shuffle by Reshape/Transpose"),
    # A transformer classifier (issue #40 item 9): patches by a strided Conv, a class token,
    # pre-LN encoder blocks of nn.MultiheadAttention (fused QKV in_proj, 12 heads at full size),
    # GELU MLPs.
    "vit": (
        (_vit(), _vit(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64,
                      mlp_dim=128, num_classes=100)),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "ViT-B/16 (torchvision): 16x16 patches by a strided Conv, class token, 12 pre-LN encoder "
        "blocks of multi-head attention (one fused QKV projection) and GELU MLPs"),
}
for _name, (_ctor, _full, _small, _doc) in parallel_blocks.MODELS.items():
    MODELS[_name] = (_ctor, _full, _small, _doc)
MODELS.update(zoo_models.MODELS)

DEFAULT_MODELS = ["inception_v3", "squeezenet1_1", "resnext50_32x4d"]

# --dynamic: model -> the symbolic axes of each input ({input: {axis: dim_param}}), the declared
# range of each dim_param, and the bindings the test data sets are made at. A binding may leave a
# symbol out: it then keeps the export's size.
DYNAMIC_AXES = {
    "inception_v3": {"axes": {"input": {0: "batch"}}, "ranges": {"batch": (1, 8)},
                     "sets": [{"batch": 1}, {"batch": 3}, {"batch": 8}]},
    "resnext50_32x4d": {"axes": {"input": {0: "batch"}}, "ranges": {"batch": (1, 8)},
                        "sets": [{"batch": 1}, {"batch": 3}, {"batch": 8}]},
    # x: [B, T, C]
    "bert_layers": {"axes": {"input": {0: "batch", 1: "seq"}},
                    "ranges": {"batch": (1, 8), "seq": (1, 64)},
                    "sets": [{"batch": 1, "seq": 5}, {"batch": 3, "seq": 32}, {"batch": 8, "seq": 17}]},
    # src: [S, B], tgt: [T, B] (T is the unrolled decoder's length: static)
    "seq2seq": {"axes": {"src": {0: "seq", 1: "batch"}, "tgt": {1: "batch"}},
                "ranges": {"batch": (1, 8), "seq": (1, 40)},
                "sets": [{"batch": 1, "seq": 3}, {"batch": 3, "seq": 12}, {"batch": 8, "seq": 27}]},
    # input_ids: [B, T], past_k/past_v: [layers, B, heads, past, head_dim]; the sets are a
    # prefill (an empty cache) and decodes (one new token)
    "gpt2_kv": {"axes": {"input_ids": {0: "batch", 1: "seq"},
                         "past_k": {1: "batch", 3: "past"}, "past_v": {1: "batch", 3: "past"}},
                "ranges": {"batch": (1, 2), "seq": (1, 8), "past": (0, 64)},
                "sets": [{"batch": 1, "seq": 8, "past": 0}, {"batch": 1, "seq": 1, "past": 8},
                         {"batch": 2, "seq": 3, "past": 17}]},
}
# The other zoo models of the modeled H200 table (docs/PERFORMANCE.md): batch only, 1..32, so one
# export can be reported at batch 1, 8 and 32 (tools/bench/modeled_batches.py).
_BATCH_SETS = [{"batch": 1}, {"batch": 3}, {"batch": 8}]
for _name, _axes in {
        "squeezenet1_1": {"input": {0: "batch"}},
        "inception_block": {"input": {0: "batch"}},
        "mha_block": {"input": {0: "batch"}},  # x: [B, T, C]
        "multi_tower": {"input": {0: "batch"}},  # x: [B, C] (exported at batch 8)
        "nasnet_a_mobile": {"input": {0: "batch"}},
        "lstm_lm": {"tokens": {1: "batch"}},  # tokens: [T, B]
        "deepspeech2": {"input": {0: "batch"}},  # spectrogram [B, 1, freq, time]
        "switch_moe": {"input": {0: "batch"}},  # x: [B, T, C]
        "yolox_heads": {"p3": {0: "batch"}, "p4": {0: "batch"}, "p5": {0: "batch"}},
        # every input has its batch at dim 0 (exported at batch 128, the full size)
        "din": {n: {0: "batch"} for n in ("hist_items", "hist_cats", "hist_len", "cand_item",
                                          "cand_cat", "user")},
}.items():
    DYNAMIC_AXES[_name] = {"axes": _axes, "ranges": {"batch": (1, 32)}, "sets": _BATCH_SETS}


def _scripts_digest():
    h = hashlib.sha1()
    for f in ("export.py", "parallel_blocks.py", "zoo_models.py"):
        with open(os.path.join(HERE, f), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:12]


def input_specs(shape):
    """The model's inputs: a bare shape is one float32 tensor named "input"."""
    if all(isinstance(d, int) for d in shape):
        return [Input("input", tuple(shape))]
    return list(shape)


def make_input(spec, gen, batch_size=None):
    """Seeded data for one input; batch_size replaces dimension 0 (BatchNorm settling)."""
    shape = tuple(spec.shape) if batch_size is None else (batch_size,) + tuple(spec.shape[1:])
    if spec.dtype == "float32":
        return torch.randn(shape, generator=gen)
    return torch.randint(spec.low, spec.high, shape, generator=gen, dtype=getattr(torch, spec.dtype))


def settle_batchnorm(model, specs, batches, batch_size, gen):
    """Cumulative-average BN statistics over `batches` random batches, then eval mode. A model
    with one input gets batches of `batch_size`; one with several, batches of its inputs' shapes
    (their batch dimension is not always dimension 0)."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None
        model.train()
        with torch.no_grad():
            for _ in range(batches):
                if len(specs) == 1:
                    model(make_input(specs[0], gen, batch_size))
                else:
                    model(*[make_input(s, gen) for s in specs])
    model.eval()
    return len(bns)


def onnx_export(model, xs, names, path, opset, output_names=("output",), dynamic_axes=None):
    kw = dict(export_params=True, opset_version=opset, do_constant_folding=True,
              input_names=list(names), output_names=list(output_names))
    if dynamic_axes:
        kw["dynamic_axes"] = dynamic_axes
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False  # torch >= 2.5: keep the TorchScript exporter (static, opset 13)
    # Not under torch.no_grad(): some layers (attention) only export outside it.
    torch.onnx.export(model, tuple(xs), path, **kw)


def fix_dims(path, xs, ys):
    """Gives the graph inputs and outputs of the model at `path` the static shapes of xs and ys
    (an export with dynamic_axes leaves dim_params there)."""
    m = onnx.load(path)
    for vis, ts in ((m.graph.input, xs), (m.graph.output, ys)):
        for vi, t in zip(vis, ts):
            for d, n in zip(vi.type.tensor_type.shape.dim, t.shape):
                d.Clear()
                d.dim_value = int(n)
    onnx.save(m, path)


def save_tensor(arr, name, path):
    t = numpy_helper.from_array(np.ascontiguousarray(arr), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export_one(name, out_dir, small, args, keep=None):
    """Exports one model; with `keep` (a dict) it always exports and leaves the PyTorch module and
    its inputs there (keep["model"], keep["inputs"]) for a caller that also runs it
    (tools/gpu/device_bench.py)."""
    ctor, full, small_shape, doc = MODELS[name]
    if isinstance(ctor, tuple):  # (full, small) constructors
        ctor = ctor[1] if small else ctor[0]
    shape = small_shape if small else full
    specs = input_specs(shape)
    folder = os.path.join(out_dir, name + ("_small" if small else ""))
    model_path = os.path.join(folder, "model.onnx")
    data_dir = os.path.join(folder, "test_data_set_0")
    config = {"shape": _shape_json(shape), "opset": args.opset, "seed": args.seed,
              "bn_batches": args.bn_batches, "bn_batch_size": args.bn_batch_size,
              "torch": torch.__version__, "torchvision": torchvision.__version__,
              "scripts": _scripts_digest()}
    meta_path = os.path.join(folder, "meta.json")
    if (keep is None and not args.force and os.path.exists(model_path)
            and os.path.exists(os.path.join(data_dir, "output_0.pb")) and os.path.exists(meta_path)):
        try:
            with open(meta_path) as f:
                old = json.load(f)
        except ValueError:
            old = {}
        if old.get("config") == config and old.get("output_ok"):
            print(f"[{name}] up to date: {folder}")
            return True
    os.makedirs(data_dir, exist_ok=True)
    t0 = time.time()
    torch.manual_seed(args.seed)
    model = ctor()
    opset = getattr(model, "export_opset", args.opset)  # the opset the export actually uses
    gen = torch.Generator().manual_seed(args.seed + 1)
    n_bn = settle_batchnorm(model, specs, args.bn_batches, args.bn_batch_size, gen)
    t_settle = time.time() - t0

    data_gen = torch.Generator().manual_seed(args.seed + 2)
    xs = [make_input(s, data_gen) for s in specs]
    with torch.no_grad():
        ys = model(*xs)
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    out_names = list(getattr(model, "output_names", ["output"]))
    ys = ys[:len(out_names)]  # a model without output_names: its first output
    y_np = ys[0].detach().numpy()

    t1 = time.time()
    tmp = model_path + ".tmp"
    exported = model.export_module() if hasattr(model, "export_module") else model
    # A model may ask for symbolic axes in the export (llama_layer: torch writes the exporter's
    # dynamic-shape forms, repeat_interleave as SplitToSequence/Loop/ConcatFromSequence); its
    # graph inputs and outputs then get the export's sizes back, so the zoo checks it at one shape.
    dyn = getattr(model, "export_dynamic_axes", None)
    onnx_export(exported, xs, [s.name for s in specs], tmp, opset, out_names, dynamic_axes=dyn)
    if dyn:
        fix_dims(tmp, xs, ys)
    m = onnx.load(tmp)
    onnx.checker.check_model(m)
    in_names = [i.name for i in m.graph.input]
    if in_names != [s.name for s in specs]:
        raise RuntimeError(f"graph inputs {in_names} are not the model's inputs {[s.name for s in specs]}")
    if hasattr(model, "check_export"):
        model.check_export(m, xs, ys)
    graph_outs = [o.name for o in m.graph.output]
    if len(graph_outs) != len(ys):
        raise RuntimeError(f"graph outputs {graph_outs} are not the model's {len(ys)} outputs")
    out_name = graph_outs[0]
    os.replace(tmp, model_path)
    t_export = time.time() - t1

    for f in os.listdir(data_dir):  # a re-export may have fewer inputs or outputs
        if f.startswith(("input_", "output_")) and f.endswith(".pb"):
            os.remove(os.path.join(data_dir, f))
    for k, (x, in_name) in enumerate(zip(xs, in_names)):
        save_tensor(x.numpy(), in_name, os.path.join(data_dir, f"input_{k}.pb"))
    for k, (y, y_name) in enumerate(zip(ys, graph_outs)):
        save_tensor(y.detach().numpy(), y_name, os.path.join(data_dir, f"output_{k}.pb"))

    finite = bool(np.isfinite(y_np).all())
    std = float(y_np.std()) if finite else float("nan")
    dead = bool(np.all(y_np == y_np.flat[0]))
    ok = finite and not dead and std > 1e-3
    ops = {}
    for node in m.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    meta = {
        "name": name, "small": small, "description": doc,
        "input": {"name": in_names[0], "shape": list(specs[0].shape), "dtype": specs[0].dtype},
        "inputs": [{"name": s.name, "shape": list(s.shape), "dtype": s.dtype} for s in specs],
        "output": {"name": out_name, "shape": list(y_np.shape), "dtype": str(y_np.dtype),
                   "mean": float(y_np.mean()), "std": std, "min": float(y_np.min()),
                   "max": float(y_np.max())},
        "outputs": [{"name": n, "shape": list(y.shape), "dtype": str(y.detach().numpy().dtype)}
                    for n, y in zip(graph_outs, ys)],
        "opset": opset, "seed": args.seed, "batchnorm_layers": n_bn,
        "bn_settle": {"batches": args.bn_batches, "batch_size": args.bn_batch_size},
        "nodes": len(m.graph.node), "ops": dict(sorted(ops.items())),
        "params": int(sum(p.numel() for p in model.parameters())),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "onnx": onnx.__version__,
        "seconds": {"construct_and_settle": round(t_settle, 2), "export": round(t_export, 2)},
        "output_ok": ok,
        "config": config,  # what an up-to-date check compares
        # Float32 reorderings (ORT, Magneto) differ from PyTorch by ~1e-4 of the output's scale.
        "tolerance": {"rtol": 1e-3, "atol": max(1e-5, round(1e-3 * std, 6)) if ok else 1e-5},
    }
    if hasattr(model, "unordered_rows"):  # outputs compared as sets of rows (check --unordered-rows)
        meta["unordered_rows"] = [list(g) for g in model.unordered_rows]
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    if keep is not None:
        keep["model"], keep["inputs"] = model, xs
    status = "ok" if ok else "BAD OUTPUT"
    print(f"[{name}] {status}: {model_path} input={_shape_text(shape)} output={list(y_np.shape)} "
          f"nodes={len(m.graph.node)} std={std:.4g} dead={dead} finite={finite} "
          f"settle={t_settle:.1f}s export={t_export:.1f}s")
    return ok


def bound_spec(spec, axes, binding):
    """`spec` with its symbolic axes (axis -> dim_param) set to the binding's values."""
    shape = list(spec.shape)
    for axis, sym in axes.get(spec.name, {}).items():
        if sym in binding:
            shape[axis] = binding[sym]
    return spec._replace(shape=tuple(shape))


def export_dynamic(name, out_dir, small, args):
    """Exports NAME with the symbolic axes of DYNAMIC_AXES[NAME] into NAME[_small]_dynamic/, one
    test data set per binding (inputs seeded per set, outputs from PyTorch at that shape)."""
    dyn = DYNAMIC_AXES[name]
    ctor, full, small_shape, doc = MODELS[name]
    if isinstance(ctor, tuple):
        ctor = ctor[1] if small else ctor[0]
    specs = input_specs(small_shape if small else full)
    folder = os.path.join(out_dir, name + ("_small" if small else "") + "_dynamic")
    model_path = os.path.join(folder, "model.onnx")
    meta_path = os.path.join(folder, "meta.json")
    config = {"opset": args.opset, "seed": args.seed, "bn_batches": args.bn_batches,
              "bn_batch_size": args.bn_batch_size, "torch": torch.__version__,
              "scripts": _scripts_digest(), "dynamic": repr(dyn)}
    if not args.force and os.path.exists(model_path) and os.path.exists(meta_path):
        try:
            with open(meta_path) as f:
                old = json.load(f)
        except ValueError:
            old = {}
        if old.get("config") == config and all(
                os.path.exists(os.path.join(folder, f"test_data_set_{k}", "output_0.pb"))
                for k in range(len(dyn["sets"]))):
            print(f"[{name}] dynamic, up to date: {folder}")
            return True
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(args.seed)
    model = ctor()
    opset = getattr(model, "export_opset", args.opset)
    gen = torch.Generator().manual_seed(args.seed + 1)
    settle_batchnorm(model, specs, args.bn_batches, args.bn_batch_size, gen)
    out_names = list(getattr(model, "output_names", ["output"]))

    data_gen = torch.Generator().manual_seed(args.seed + 2)
    xs = [make_input(s, data_gen) for s in specs]
    axes = {n: dict(a) for n, a in dyn["axes"].items()}
    tmp = model_path + ".tmp"
    onnx_export(model, xs, [s.name for s in specs], tmp, opset, out_names, dynamic_axes=axes)
    m = onnx.load(tmp)
    onnx.checker.check_model(m)
    for vi in m.graph.input:  # the exporter must have kept every declared axis symbolic
        dims = vi.type.tensor_type.shape.dim
        for axis, sym in axes.get(vi.name, {}).items():
            if dims[axis].dim_param != sym:
                raise RuntimeError(f"input {vi.name} dim {axis} is not symbolic '{sym}' in the export")
    graph_outs = [o.name for o in m.graph.output]
    os.replace(tmp, model_path)

    sets = []
    for k, binding in enumerate(dyn["sets"]):
        data_dir = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data_dir, exist_ok=True)
        for f in os.listdir(data_dir):
            if f.startswith(("input_", "output_")) and f.endswith(".pb"):
                os.remove(os.path.join(data_dir, f))
        bxs = [make_input(bound_spec(s, dyn["axes"], binding), data_gen) for s in specs]
        with torch.no_grad():
            ys = model(*bxs)
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        ys = ys[:len(graph_outs)]
        for i, (x, s) in enumerate(zip(bxs, specs)):
            save_tensor(x.numpy(), s.name, os.path.join(data_dir, f"input_{i}.pb"))
        for i, (y, y_name) in enumerate(zip(ys, graph_outs)):
            save_tensor(y.detach().numpy(), y_name, os.path.join(data_dir, f"output_{i}.pb"))
        y0 = ys[0].detach().numpy()
        # One value (din's click probability at batch 1) has no spread to judge: finite is all.
        if not np.isfinite(y0).all() or (y0.size > 1 and float(y0.std()) <= 1e-3):
            raise RuntimeError(f"binding {binding}: dead or exploding output (std {float(y0.std()):.3g})")
        sets.append({"binding": binding, "inputs": [list(x.shape) for x in bxs],
                     "outputs": [list(y.shape) for y in ys], "std": float(y0.std()),
                     "values": int(y0.size)})
    spread = [st["std"] for st in sets if st["values"] > 1]
    if not spread:
        raise RuntimeError("every binding's output is a single value: no spread to check or scale "
                           "the tolerance by (add a binding with a larger batch)")
    meta = {"name": name, "small": small, "description": doc, "opset": opset, "seed": args.seed,
            "dynamic": {sym: list(r) for sym, r in dyn["ranges"].items()},
            "dynamic_flags": [t for sym, (lo, hi) in dyn["ranges"].items() for t in ("--dynamic", f"{sym}={lo}..{hi}")],
            "axes": {n: {str(a): sym for a, sym in ax.items()} for n, ax in dyn["axes"].items()},
            # the shapes the export was traced at (the static export's): what a symbol that a
            # caller leaves unbound stands for (tools/bench/modeled_batches.py binds batch only)
            "export_inputs": [{"name": s.name, "shape": list(s.shape), "dtype": s.dtype} for s in specs],
            "sets": sets, "nodes": len(m.graph.node), "config": config,
            "torch": torch.__version__, "onnx": onnx.__version__,
            "tolerance": {"rtol": 1e-3, "atol": max(1e-5, round(1e-3 * min(spread), 6))}}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"[{name}] dynamic ok: {model_path} " + " ".join(meta["dynamic_flags"]) + " sets: " +
          "; ".join(",".join(f"{k}={v}" for k, v in st["binding"].items()) for st in sets))
    return True


def _shape_json(shape):
    specs = input_specs(shape)
    if len(specs) == 1 and specs[0].name == "input" and specs[0].dtype == "float32":
        return list(specs[0].shape)
    return [[s.name, list(s.shape), s.dtype, s.low, s.high] for s in specs]


def _shape_text(shape):
    specs = input_specs(shape)
    if len(specs) == 1 and specs[0].name == "input" and specs[0].dtype == "float32":
        return "x".join(map(str, specs[0].shape))
    return ",".join(f"{s.name}={'x'.join(map(str, s.shape))}" + ("" if s.dtype == "float32" else f":{s.dtype}")
                    for s in specs)


def parse_args(argv=None):
    """The command line (argv, default sys.argv[1:]); other scripts get the defaults with []."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "zoo"), help="output folder (default models/zoo)")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated; 'all' for every model. Known: " + ", ".join(MODELS))
    ap.add_argument("--small", action="store_true", help="small spatial sizes, folders NAME_small")
    ap.add_argument("--force", action="store_true", help="re-export even when up to date")
    ap.add_argument("--dynamic", action="store_true",
                    help="symbolic batch/sequence axes, one test data set per binding, folders "
                         "NAME[_small]_dynamic (models: " + ", ".join(DYNAMIC_AXES) + ")")
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bn-batches", type=int, default=10)
    ap.add_argument("--bn-batch-size", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    return ap.parse_args(argv)


def main():
    args = parse_args()
    if args.list:
        for n, (_, full, small, doc) in MODELS.items():
            print(f"{n:18s} full={_shape_text(full)} small={_shape_text(small)}\n    {doc}")
        return 0
    torch.set_num_threads(args.threads)
    names = list(MODELS) if args.models == "all" else [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    failed = []
    if args.dynamic:
        unknown = [n for n in names if n not in DYNAMIC_AXES]
        if unknown:
            print(f"no dynamic axes declared for: {', '.join(unknown)} (known: {', '.join(DYNAMIC_AXES)})",
                  file=sys.stderr)
            return 2
    for n in names:
        try:
            if not (export_dynamic if args.dynamic else export_one)(n, args.out, args.small, args):
                failed.append(n)
        except Exception as e:  # keep going: report every model
            print(f"[{n}] FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(n)
    if failed:
        print(f"export failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
