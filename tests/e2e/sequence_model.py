#!/usr/bin/env python3
"""Writes small models with sequence-typed values in the forms exporters write them (issue #40),
each with its reference outputs computed with numpy, for the sequence resolution on import
(src/frontend/onnx_sequence.cpp):

    repeat_interleave  torch 1.13's repeat_interleave on a dim it does not know statically (GQA's
                       K/V heads): SplitToSequence(ones) -> Loop(trip count from Shape) {
                       SequenceAt(i), Unsqueeze, Expand, Reshape, SequenceInsert } ->
                       ConcatFromSequence; x is computed from the input (Relu), so nothing folds
    unbind_stack       unbind (SplitToSequence keepdims=0), SequenceAt with negative and positive
                       positions, stack (ConcatFromSequence new_axis=1, axis=-1)
    chunk_erase        chunk (SplitToSequence with a scalar split: parts 2, 2, 1), SequenceLength
                       (an int64 output), SequenceErase, ConcatFromSequence
    construct_insert   SequenceConstruct, SequenceInsert at position 0 and appended, SequenceEmpty
                       filled by inserts, Identity of a sequence (opset 14), SequenceAt
    if_seq             an If (constant condition) whose branches yield sequences, and a Loop whose
                       body erases from a carried sequence
and models that must be refused with a message naming the node:
    bad_at             SequenceAt with the constant position 5 of a sequence of 3 tensors
    seq_reader         a Relu reading a sequence (no run-time sequences)
and sequence graph inputs and outputs, whose length check takes from the SequenceProto data:
    seq_output         a sequence graph output (the package has one output per element)
    seq_input          a sequence graph input (one input per element) through SequenceMap

usage: sequence_model.py OUT_DIR   (writes OUT_DIR/NAME/model.onnx and OUT_DIR/NAME/test_data_set_0/)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def seq_vi(name, t=F):
    return helper.make_value_info(name, helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(t, None)))


def c(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def const(out, a):
    return helper.make_node("Constant", [], [out], value=c(out + "_v", a))


def save(out, name, nodes, inputs, outputs, feeds, expected, inits=(), opset=13):
    folder = os.path.join(out, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="sequence_model.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for k, (n, a) in enumerate(feeds):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, (n, a) in enumerate(expected):
        with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.array(a, order="C"), n).SerializeToString())


def repeat_interleave(out, rng):
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("SequenceAt", ["parts", "i"], ["part"]),
         const("axes2", np.array([2], np.int64)),
         helper.make_node("Unsqueeze", ["part", "axes2"], ["u"]),
         const("shape5", np.array([1, 1, 2, 3, 4], np.int64)),
         helper.make_node("Expand", ["u", "shape5"], ["e"]),
         const("shape4", np.array([1, 2, 3, 4], np.int64)),
         helper.make_node("Reshape", ["e", "shape4"], ["r"]),
         helper.make_node("SequenceInsert", ["acc_in", "r"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", [], TensorProto.INT64), vi("cond", [], TensorProto.BOOL), seq_vi("acc_in")],
        [vi("cond_out", [], TensorProto.BOOL), seq_vi("acc_out")])
    nodes = [
        helper.make_node("Relu", ["x"], ["k"]),
        helper.make_node("Shape", ["k"], ["shape"]),
        const("one", np.array(1, np.int64)),
        helper.make_node("Gather", ["shape", "one"], ["heads"], axis=0),
        const("axes0", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", ["heads", "axes0"], ["trip"]),
        const("ones", np.array([1, 1], np.int64)),
        helper.make_node("SplitToSequence", ["k", "ones"], ["parts"], axis=1, name="split_heads"),
        helper.make_node("SequenceEmpty", [], ["acc0"], dtype=F),
        const("true", np.array(True)),
        helper.make_node("Loop", ["trip", "true", "acc0"], ["acc"], body=body, name="repeat_loop"),
        helper.make_node("ConcatFromSequence", ["acc"], ["y"], axis=1, name="join_heads"),
    ]
    save(out, "repeat_interleave", nodes, [vi("x", [1, 2, 3, 4])], [vi("y", [1, 4, 3, 4])],
         [("x", x)], [("y", np.repeat(np.maximum(x, 0), 2, axis=1))])


def unbind_stack(out, rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    nodes = [
        helper.make_node("Neg", ["x"], ["nx"]),
        helper.make_node("SplitToSequence", ["nx"], ["rows"], axis=0, keepdims=0, name="unbind"),
        const("last", np.array(-1, np.int64)),
        const("first", np.array(0, np.int64)),
        helper.make_node("SequenceAt", ["rows", "last"], ["a"]),
        helper.make_node("SequenceAt", ["rows", "first"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1,
                         name="stack"),
    ]
    nx = -x
    save(out, "unbind_stack", nodes, [vi("x", [3, 4, 5])],
         [vi("sum", [4, 5]), vi("stacked", [4, 5, 3])], [("x", x)],
         [("sum", nx[-1] + nx[0]), ("stacked", np.stack(list(nx), axis=-1))])


def chunk_erase(out, rng):
    x = rng.standard_normal((2, 5)).astype(np.float32)
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["s"]),
        const("two", np.array(2, np.int64)),
        helper.make_node("SplitToSequence", ["s", "two"], ["chunks"], axis=1, name="chunk"),
        helper.make_node("SequenceLength", ["chunks"], ["n"]),
        const("one", np.array(1, np.int64)),
        helper.make_node("SequenceErase", ["chunks", "one"], ["kept"]),
        helper.make_node("SequenceErase", ["kept"], ["kept1"]),  # default: the last
        helper.make_node("ConcatFromSequence", ["kept"], ["y"], axis=1),
        helper.make_node("ConcatFromSequence", ["kept1"], ["z"], axis=0),
    ]
    s = 1 / (1 + np.exp(-x))
    save(out, "chunk_erase", nodes, [vi("x", [2, 5])],
         [vi("n", [], TensorProto.INT64), vi("y", [2, 3]), vi("z", [2, 2])], [("x", x)],
         [("n", np.array(3, np.int64)), ("y", s[:, [0, 1, 4]]), ("z", s[:, 0:2])])


def construct_insert(out, rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Abs", ["b"], ["ab"]),
        helper.make_node("SequenceConstruct", ["a", "ab"], ["s"]),
        const("zero", np.array(0, np.int64)),
        helper.make_node("Mul", ["a", "ab"], ["m"]),
        helper.make_node("SequenceInsert", ["s", "m", "zero"], ["s2"]),  # [m, a, ab]
        helper.make_node("SequenceInsert", ["s2", "a"], ["s3"]),         # [m, a, ab, a]
        helper.make_node("Identity", ["s3"], ["s4"]),
        helper.make_node("ConcatFromSequence", ["s4"], ["cat"], axis=0),
        const("pos", np.array(2, np.int32)),
        helper.make_node("SequenceAt", ["s4", "pos"], ["third"]),
        helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
        helper.make_node("SequenceInsert", ["e", "ab"], ["e1"]),
        helper.make_node("SequenceInsert", ["e1", "a", "zero"], ["e2"]),  # [a, ab]
        helper.make_node("ConcatFromSequence", ["e2"], ["pair"], axis=0, new_axis=1),
    ]
    ab = np.abs(b)
    save(out, "construct_insert", nodes, [vi("a", [2, 3]), vi("b", [2, 3])],
         [vi("cat", [8, 3]), vi("third", [2, 3]), vi("pair", [2, 2, 3])], [("a", a), ("b", b)],
         [("cat", np.concatenate([a * ab, a, ab, a], 0)), ("third", ab),
          ("pair", np.stack([a, ab], 0))], opset=14)  # Identity of a sequence: opset 14


def if_seq(out, rng):
    x = rng.standard_normal((4, 2)).astype(np.float32)
    then_b = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["sq"]),
         helper.make_node("SequenceConstruct", ["x", "sq", "x"], ["ts"])],
        "then", [], [seq_vi("ts")])
    else_b = helper.make_graph([helper.make_node("SequenceConstruct", ["x"], ["es"])], "else", [],
                               [seq_vi("es")])
    body = helper.make_graph(
        [helper.make_node("SequenceErase", ["s_in", "zero"], ["s_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", [], TensorProto.INT64), vi("cond", [], TensorProto.BOOL), seq_vi("s_in")],
        [vi("cond_out", [], TensorProto.BOOL), seq_vi("s_out")])
    nodes = [
        const("flag", np.array(True)),
        const("zero", np.array(0, np.int64)),
        const("trip", np.array(2, np.int64)),
        helper.make_node("If", ["flag"], ["picked"], then_branch=then_b, else_branch=else_b,
                         name="pick"),
        helper.make_node("ConcatFromSequence", ["picked"], ["y"], axis=1),
        helper.make_node("Loop", ["trip", "", "picked"], ["rest"], body=body, name="drop2"),
        helper.make_node("ConcatFromSequence", ["rest"], ["z"], axis=0),
    ]
    save(out, "if_seq", nodes, [vi("x", [4, 2])], [vi("y", [4, 6]), vi("z", [4, 2])], [("x", x)],
         [("y", np.concatenate([x, x * x, x], 1)), ("z", x)])


def refused(out, rng):
    x = rng.standard_normal((3, 2)).astype(np.float32)
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0),
        const("five", np.array(5, np.int64)),
        helper.make_node("SequenceAt", ["rows", "five"], ["y"], name="bad_at"),
    ]
    save(out, "bad_at", nodes, [vi("x", [3, 2])], [vi("y", [1, 2])], [("x", x)], [("y", x[:1])])
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0),
        helper.make_node("Relu", ["rows"], ["y"], name="relu_of_seq"),
    ]
    save(out, "seq_reader", nodes, [vi("x", [3, 2])], [vi("y", [3, 2])], [("x", x)], [("y", x)])


def seq_io(out, rng):
    """Sequence graph inputs and outputs: their length is fixed at compile time (check takes it
    from the SequenceProto test data); the package has one input or output per element."""
    x = rng.standard_normal((3, 2)).astype(np.float32)
    nodes = [helper.make_node("Tanh", ["x"], ["t"]),
             helper.make_node("SplitToSequence", ["t"], ["rows"], axis=0)]
    save(out, "seq_output", nodes, [vi("x", [3, 2])], [seq_vi("rows")], [("x", x)], [])
    write_seq(out, "seq_output", "output_0.pb", "rows", list(np.tanh(x)[:, None, :]))
    xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    body = helper.make_graph([helper.make_node("Mul", ["e", "e"], ["sq"])], "body",
                             [vi("e", [2, 3])], [vi("sq", [2, 3])])
    nodes = [helper.make_node("SequenceMap", ["xs"], ["squares"], body=body, name="square_each"),
             helper.make_node("ConcatFromSequence", ["squares"], ["y"], axis=0)]
    save(out, "seq_input", nodes, [seq_vi("xs")], [vi("y", [6, 3])], [],
         [("y", np.concatenate([e * e for e in xs], 0))], opset=17)
    write_seq(out, "seq_input", "input_0.pb", "xs", xs)


def write_seq(out, name, file, seq_name, arrays):
    with open(os.path.join(out, name, "test_data_set_0", file), "wb") as f:
        f.write(numpy_helper.from_list(arrays, seq_name).SerializeToString())


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(40)
    for f in (repeat_interleave, unbind_stack, chunk_erase, construct_insert, if_seq, refused,
              seq_io):
        f(out, rng)


if __name__ == "__main__":
    main()
