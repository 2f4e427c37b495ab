#!/usr/bin/python3
"""Writes the opset 23 cases of tests/e2e/opset23_test.sh: one small graph per case (Attention,
RotaryEmbedding, RMSNormalization at opset 23, written with onnx.helper), each into
OUT/NAME/model.onnx with seeded random inputs as OUT/NAME/test_data_set_0/input_K.pb. The expected
outputs are onnxruntime-node's (the shell script runs tools/ort/run_ort.js on these inputs).

    /usr/bin/python3 tests/e2e/opset23_model.py OUT_DIR      (prints one case name per line)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 23
IR_VERSION = 10
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def bool_mask(rng, shape):
    m = rng.random(shape) > 0.35
    m[..., 0] = True  # every row keeps at least one key (a row of -inf only is NaN everywhere)
    return m


def elem(a):
    return {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.bool_): TensorProto.BOOL,
            np.dtype(np.int64): TensorProto.INT64}[a.dtype]


def write(out, name, nodes, inputs, outputs, inits=(), opset=OPSET):
    """inputs: [(name, array)]; outputs: [(name, shape)] (float32); inits: [(name, array)]."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, elem(a), a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="opset23_model.py")
    m.ir_version = IR_VERSION
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(out, name, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    print(name)




@case
def attn_3d_gqa_causal(out, rng):
    # 3-D Q/K/V, q heads 8 over kv heads 2 (grouped-query), causal.
    B, S, D = 2, 5, 4
    write(out, "attn_3d_gqa_causal",
          [helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=8, kv_num_heads=2,
                            is_causal=1, name="attn")],
          [("q", f32(rng, B, S, 8 * D)), ("k", f32(rng, B, S, 2 * D)), ("v", f32(rng, B, S, 2 * 6))],
          [("y", [B, S, 8 * 6])])


@case
def attn_4d_bool_mask(out, rng):
    # 4-D MHA (4 heads) with a boolean mask broadcast over the heads, cross attention (Skv != Sq).
    B, H, Sq, Skv, D = 2, 4, 3, 6, 8
    write(out, "attn_4d_bool_mask",
          [helper.make_node("Attention", ["q", "k", "v", "m"], ["y"], name="attn")],
          [("q", f32(rng, B, H, Sq, D)), ("k", f32(rng, B, H, Skv, D)), ("v", f32(rng, B, H, Skv, D)),
           ("m", bool_mask(rng, (B, 1, Sq, Skv)))],
          [("y", [B, H, Sq, D])])


@case
def attn_4d_add_mask_scale_softcap(out, rng):
    # 4-D GQA (4 over 2) with an additive [Sq, L] mask, an explicit scale and softcap; the QK
    # output after softcap and mask (mode 2).
    B, Sq, D = 1, 4, 8
    write(out, "attn_4d_add_mask_scale_softcap",
          [helper.make_node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"], scale=0.3,
                            softcap=2.5, qk_matmul_output_mode=2, name="attn")],
          [("q", f32(rng, B, 4, Sq, D)), ("k", f32(rng, B, 2, Sq, D)), ("v", f32(rng, B, 2, Sq, D)),
           ("m", f32(rng, Sq, Sq))],
          [("y", [B, 4, Sq, D]), ("qk", [B, 4, Sq, Sq])])


@case
def attn_past_present(out, rng):
    # KV cache: past_key/past_value in, present_key/present_value out, causal offset by the past
    # length, GQA 4 over 2, a boolean mask over the whole sequence.
    B, Sq, P, D = 2, 3, 4, 4
    write(out, "attn_past_present",
          [helper.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "present_k", "present_v"],
                            is_causal=1, name="attn")],
          [("q", f32(rng, B, 4, Sq, D)), ("k", f32(rng, B, 2, Sq, D)), ("v", f32(rng, B, 2, Sq, D)),
           ("m", bool_mask(rng, (B, 1, Sq, P + Sq))),
           ("pk", f32(rng, B, 2, P, D)), ("pv", f32(rng, B, 2, P, D))],
          [("y", [B, 4, Sq, D]), ("present_k", [B, 2, P + Sq, D]), ("present_v", [B, 2, P + Sq, D])])


@case
def attn_3d_past_additive(out, rng):
    # 3-D Q/K/V with a 4-D KV cache (present_key/present_value come out 4-D), GQA 6 over 3,
    # causal plus an additive [B, 1, Sq, L] mask, V's head size differing from K's.
    B, Sq, P, D, Dv = 1, 2, 3, 4, 5
    write(out, "attn_3d_past_additive",
          [helper.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "present_k", "present_v"],
                            q_num_heads=6, kv_num_heads=3, is_causal=1, name="attn")],
          [("q", f32(rng, B, Sq, 6 * D)), ("k", f32(rng, B, Sq, 3 * D)), ("v", f32(rng, B, Sq, 3 * Dv)),
           ("m", f32(rng, B, 1, Sq, P + Sq)), ("pk", f32(rng, B, 3, P, D)), ("pv", f32(rng, B, 3, P, Dv))],
          [("y", [B, Sq, 6 * Dv]), ("present_k", [B, 3, P + Sq, D]), ("present_v", [B, 3, P + Sq, Dv])])


@case
def attn_3d_softmax_output(out, rng):
    # 3-D MHA with an additive mask over batch and heads, the softmax probabilities as the QK
    # output (mode 3), and the QK matmul itself (mode 0) from a second node.
    B, S, H, D = 2, 4, 2, 3
    q, k, v = f32(rng, B, S, H * D), f32(rng, B, S, H * D), f32(rng, B, S, H * D)
    m = f32(rng, B, H, S, S)
    write(out, "attn_3d_softmax_output",
          [helper.make_node("Attention", ["q", "k", "v", "m"], ["y", "", "", "p"], q_num_heads=H,
                            kv_num_heads=H, qk_matmul_output_mode=3, name="attn"),
           helper.make_node("Attention", ["q", "k", "v"], ["y0", "", "", "qk0"], q_num_heads=H,
                            kv_num_heads=H, softcap=1.5, name="attn0")],
          [("q", q), ("k", k), ("v", v), ("m", m)],
          [("y", [B, S, H * D]), ("p", [B, H, S, S]), ("y0", [B, S, H * D]), ("qk0", [B, H, S, S])])


@case
def rope_4d_positions(out, rng):
    # 4-D [B, H, S, D], halves (not interleaved), position_ids into a [max_pos, D/2] cache.
    B, H, S, D, MAXP = 2, 3, 5, 8, 16
    write(out, "rope_4d_positions",
          [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], name="rope")],
          [("x", f32(rng, B, H, S, D)), ("pos", rng.integers(0, MAXP, (B, S)).astype(np.int64))],
          [("y", [B, H, S, D])],
          inits=[("cos", f32(rng, MAXP, D // 2)), ("sin", f32(rng, MAXP, D // 2))])


@case
def rope_3d_interleaved(out, rng):
    # 3-D [B, S, H*D] with num_heads, interleaved pairs, no position_ids ([B, S, D/2] caches).
    B, S, H, D = 2, 4, 2, 6
    write(out, "rope_3d_interleaved",
          [helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], interleaved=1,
                            num_heads=H, name="rope")],
          [("x", f32(rng, B, S, H * D)), ("cos", f32(rng, B, S, D // 2)), ("sin", f32(rng, B, S, D // 2))],
          [("y", [B, S, H * D])])


@case
def rope_partial(out, rng):
    # Partial rotary: the first 4 of 10 dims rotate, interleaved, with position_ids; and the same
    # input through halves without position_ids (3-D).
    B, H, S, D, R, MAXP = 1, 2, 3, 10, 4, 8
    write(out, "rope_partial",
          [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], interleaved=1,
                            rotary_embedding_dim=R, name="rope"),
           helper.make_node("RotaryEmbedding", ["x3", "cos3", "sin3"], ["y3"], num_heads=H,
                            rotary_embedding_dim=R, name="rope3")],
          [("x", f32(rng, B, H, S, D)), ("pos", rng.integers(0, MAXP, (B, S)).astype(np.int64)),
           ("cos", f32(rng, MAXP, R // 2)), ("sin", f32(rng, MAXP, R // 2)),
           ("x3", f32(rng, B, S, H * D)), ("cos3", f32(rng, B, S, R // 2)), ("sin3", f32(rng, B, S, R // 2))],
          [("y", [B, H, S, D]), ("y3", [B, S, H * D])])


@case
def rmsnorm(out, rng):
    # axis -1 with a [D] scale, and axis 1 with a [C, D] scale (normalized over the last two dims).
    write(out, "rmsnorm",
          [helper.make_node("RMSNormalization", ["x", "s"], ["y"], name="rms"),
           helper.make_node("RMSNormalization", ["x", "s2"], ["y2"], axis=1, epsilon=1e-3, name="rms1")],
          [("x", f32(rng, 2, 3, 8))],
          [("y", [2, 3, 8]), ("y2", [2, 3, 8])],
          inits=[("s", f32(rng, 8)), ("s2", f32(rng, 3, 8))])


@case
def llama_block(out, rng):
    # A decoder block's attention half: RMSNormalization, Q/K/V projections, RotaryEmbedding on
    # Q and K (3-D, num_heads), grouped-query causal Attention, the output projection, residual.
    B, S, H, KV, D = 1, 6, 4, 2, 8
    E = H * D
    write(out, "llama_block",
          [helper.make_node("RMSNormalization", ["x", "g"], ["n"], epsilon=1e-6, name="norm"),
           helper.make_node("MatMul", ["n", "wq"], ["q"], name="q_proj"),
           helper.make_node("MatMul", ["n", "wk"], ["k"], name="k_proj"),
           helper.make_node("MatMul", ["n", "wv"], ["v"], name="v_proj"),
           helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "pos"], ["qr"], num_heads=H, name="rope_q"),
           helper.make_node("RotaryEmbedding", ["k", "cos", "sin", "pos"], ["kr"], num_heads=KV, name="rope_k"),
           helper.make_node("Attention", ["qr", "kr", "v"], ["a"], q_num_heads=H, kv_num_heads=KV,
                            is_causal=1, name="attn"),
           helper.make_node("MatMul", ["a", "wo"], ["o"], name="o_proj"),
           helper.make_node("Add", ["x", "o"], ["y"], name="residual")],
          [("x", f32(rng, B, S, E)), ("pos", np.arange(S, dtype=np.int64).reshape(B, S))],
          [("y", [B, S, E])],
          inits=[("g", f32(rng, E)), ("wq", f32(rng, E, E) * 0.2), ("wk", f32(rng, E, KV * D) * 0.2),
                 ("wv", f32(rng, E, KV * D) * 0.2), ("wo", f32(rng, E, E) * 0.2),
                 ("cos", np.cos(np.outer(np.arange(16), 1e-2 ** (np.arange(D // 2) / (D // 2)))).astype(np.float32)),
                 ("sin", np.sin(np.outer(np.arange(16), 1e-2 ** (np.arange(D // 2) / (D // 2)))).astype(np.float32))])


@case
def opset22_revisions(out, rng):
    # Operators whose version 22 only added bfloat16, at opset 22 on float32: Conv, InstanceNorm,
    # Elu, HardSwish, MaxPool, AveragePool, GlobalAveragePool, Sin, Softplus, ThresholdedRelu.
    write(out, "opset22_revisions",
          [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
           helper.make_node("InstanceNormalization", ["c", "g", "b"], ["n"], name="inorm"),
           helper.make_node("Elu", ["n"], ["e"], alpha=0.5, name="elu"),
           helper.make_node("HardSwish", ["e"], ["h"], name="hswish"),
           helper.make_node("MaxPool", ["h"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
           helper.make_node("AveragePool", ["h"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                            count_include_pad=0, name="apool"),
           helper.make_node("Sin", ["ap"], ["s"], name="sin"),
           helper.make_node("Softplus", ["s"], ["sp"], name="softplus"),
           helper.make_node("ThresholdedRelu", ["sp"], ["t"], alpha=0.7, name="trelu"),
           helper.make_node("GlobalAveragePool", ["p"], ["y"], name="gap")],
          [("x", f32(rng, 1, 3, 8, 8))],
          [("y", [1, 4, 1, 1]), ("t", [1, 4, 8, 8])],
          inits=[("w", f32(rng, 4, 3, 3, 3)), ("g", f32(rng, 4)), ("b", f32(rng, 4))], opset=22)


@case
def opset23_revisions(out, rng):
    # Operators whose version 23 only added float4e2m1, at opset 23 on float32/int64: Reshape,
    # Transpose, Flatten, Squeeze, Unsqueeze, Pad, Shape, Size, Cast, CastLike, ConstantOfShape,
    # Identity, Constant.
    x = f32(rng, 2, 3, 4)
    write(out, "opset23_revisions",
          [helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1], name="tr"),
           helper.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(
               np.array([4, 6], dtype=np.int64), "shape"), name="cst"),
           helper.make_node("Reshape", ["t", "shape"], ["r"], name="reshape"),
           helper.make_node("Unsqueeze", ["r", "ax"], ["u"], name="unsq"),
           helper.make_node("Squeeze", ["u", "ax"], ["sq"], name="sq"),
           helper.make_node("Flatten", ["x"], ["f"], axis=2, name="flat"),
           helper.make_node("Pad", ["sq", "pads"], ["pd"], mode="reflect", name="pad"),
           helper.make_node("Shape", ["pd"], ["shp"], name="shape_of"),
           helper.make_node("Size", ["pd"], ["sz"], name="size_of"),
           helper.make_node("Cast", ["shp"], ["shpf"], to=TensorProto.FLOAT, name="cast"),
           helper.make_node("CastLike", ["sz", "x"], ["szf"], name="castlike"),
           helper.make_node("ConstantOfShape", ["shp"], ["ones"], value=numpy_helper.from_array(
               np.array([1.5], dtype=np.float32), "v"), name="cos"),
           helper.make_node("Identity", ["f"], ["fi"], name="ident"),
           helper.make_node("Mul", ["pd", "ones"], ["m"], name="mul"),
           helper.make_node("Add", ["m", "szf"], ["y"], name="add")],
          [("x", x)],
          [("y", [4, 10]), ("fi", [6, 4]), ("shpf", [2])],
          inits=[("ax", np.array([0], dtype=np.int64)), ("pads", np.array([0, 2, 0, 2], dtype=np.int64))])


# Graphs Magneto must refuse at compile time with an error naming the node (never a crash): the
# generator writes them as bad_NAME/model.onnx and prints "bad_NAME<TAB>EXIT<TAB>expected message
# part" (exit 1: inconsistent input; 2: a type Magneto lacks).
BAD = [
    ("bad_heads", "q_num_heads 6 is not a multiple of kv_num_heads 4",
     dict(q_num_heads=6, kv_num_heads=4), (2, 3, 24), (2, 5, 16), None),
    ("bad_hidden", "Q's hidden size 24 is not divisible by q_num_heads 5",
     dict(q_num_heads=5, kv_num_heads=1), (2, 3, 24), (2, 5, 16), None),
    ("bad_no_heads", "3-D Q/K/V need q_num_heads > 0 and kv_num_heads > 0",
     dict(), (2, 3, 24), (2, 5, 16), None),
    ("bad_mask", "attn_mask f32[3,4] does not broadcast",
     dict(q_num_heads=4, kv_num_heads=2), (2, 3, 16), (2, 5, 8), (3, 4)),
]


def write_bad(out):
    for name, msg, attrs, qs, ks, ms in BAD:
        ins = ["q", "k", "v"] + (["m"] if ms else [])
        vis = [helper.make_tensor_value_info("q", TensorProto.FLOAT, qs),
               helper.make_tensor_value_info("k", TensorProto.FLOAT, ks),
               helper.make_tensor_value_info("v", TensorProto.FLOAT, ks)]
        if ms:
            vis.append(helper.make_tensor_value_info("m", TensorProto.FLOAT, ms))
        g = helper.make_graph([helper.make_node("Attention", ins, ["y"], name=name, **attrs)], name,
                              vis, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = IR_VERSION
        os.makedirs(os.path.join(out, name), exist_ok=True)
        onnx.save(m, os.path.join(out, name, "model.onnx"))
        print(f"{name}\t1\tnode '{name}' (Attention): Attention: {msg}")
    # bfloat16, which opset 22 added to Conv: refused by name (Magneto's Conv is f32/f64).
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="bad_bf16_conv")], "bf16",
                          [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 3, 4, 4]),
                           helper.make_tensor_value_info("w", TensorProto.BFLOAT16, [2, 3, 1, 1])],
                          [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = IR_VERSION
    os.makedirs(os.path.join(out, "bad_bf16_conv"), exist_ok=True)
    onnx.save(m, os.path.join(out, "bad_bf16_conv", "model.onnx"))
    print("bad_bf16_conv\t2\tnode 'bad_bf16_conv' (Conv): Conv: input must be f32 or f64, got bf16")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for k, fn in enumerate(CASES):
        fn(out, np.random.default_rng(2300 + k))
    write_bad(out)


if __name__ == "__main__":
    main()
