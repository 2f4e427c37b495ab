#!/usr/bin/python3
# Writes the bad-model corpus of tests/bad_models/run_bad_models.sh into OUT_DIR:
#   /usr/bin/python3 tests/bad_models/make_bad_models.py OUT_DIR
# Every model is broken in one way (the table expected.tsv says how magnetoc must refuse it). The
# models are written WITHOUT ONNX's checker (most would not pass it) and have fixed content: the
# same bytes on every run (random bytes come from a seeded generator), so a failure reproduces.
# Layout: OUT_DIR/models/*.onnx (+ the external data files they name) and OUT_DIR/outside.bin,
# the file that models/external_escape.onnx reaches for with '../outside.bin'.
import os
import random
import struct
import sys

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else "bad_models_out"
MODELS = os.path.join(OUT, "models")
os.makedirs(MODELS, exist_ok=True)
written = []


def write_raw(name, data):
    with open(os.path.join(MODELS, name), "wb") as f:
        f.write(data)
    written.append(name)


def save(name, m):
    write_raw(name, m.SerializeToString())


def vi(name, dims, t=TensorProto.FLOAT):
    # ONNX's checker wants a shape on every graph input and output; outputs whose shape does not
    # matter (dims None) get one symbolic dimension.
    return helper.make_tensor_value_info(name, t, ["any"] if dims is None else dims)


def f32(name, shape, seed=0):
    n = int(np.prod(shape)) if len(shape) else 1
    data = (np.arange(n, dtype=np.float32) * 0.01 + seed).reshape(shape)
    return numpy_helper.from_array(data, name)


def i64(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_bad_models.py")
    m.ir_version = 8
    return m


X = vi("x", [1, 3, 8, 8])


def unary(op, name, opset=13, **attrs):
    return model([helper.make_node(op, ["x"], ["y"], name=name, **attrs)], [X],
                 [vi("y", None)], opset=opset)


# A valid model to damage: Conv + Relu.
valid = model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
               helper.make_node("Relu", ["c"], ["y"], name="relu1")],
              [X], [vi("y", [1, 4, 8, 8])], [f32("w", [4, 3, 3, 3])])
valid_bytes = valid.SerializeToString()

# --- Files that are not ONNX models ----------------------------------------------------------------
write_raw("empty.onnx", b"")
rng = random.Random(20240611)
write_raw("random_bytes.onnx", bytes(rng.randrange(256) for _ in range(512)))
write_raw("truncated.onnx", valid_bytes[: len(valid_bytes) * 2 // 3])
# Field 7 (graph) declared as 1 GiB long in a 20-byte file.
write_raw("huge_length_prefix.onnx", b"\x08\x08\x3a\x80\x80\x80\x80\x04" + b"\x00" * 12)
# A valid protobuf of the wrong message: a TensorProto.
write_raw("tensor_not_model.onnx", f32("w", [4]).SerializeToString())
no_graph = helper.make_model(helper.make_graph([], "g", [], []))
no_graph.ClearField("graph")
save("no_graph.onnx", no_graph)

# --- Opsets, domains, operators ------------------------------------------------------------------
# Opset 18: libonnx's checker does not know it, so our own op table answers.
save("unknown_op.onnx", unary("FooBar", "foo1", opset=18))
# Opset 13: ONNX's checker rejects the unknown op first.
save("unknown_op_checked.onnx", unary("FooBar", "foo1"))
m = model([helper.make_node("FusedGemm", ["x", "x"], ["y"], name="fg1", domain="com.microsoft")],
          [vi("x", [2, 2])], [vi("y", [2, 2])])
m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
save("unknown_domain.onnx", m)
save("opset_too_new.onnx", unary("Relu", "relu1", opset=24))
m = model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [X], [vi("y", None)])
del m.opset_import[:]
m.opset_import.append(helper.make_opsetid("com.example", 1))
save("no_default_opset.onnx", m)
# An If on a graph input whose branches give values of two ranks: its condition is data, and no
# run-time selection joins a rank-4 and a rank-2 value.
then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", None)])
other = helper.make_graph([helper.make_node("Flatten", ["x"], ["e"])], "else", [], [vi("e", None)])
save("subgraph_if.onnx", model(
    [helper.make_node("If", ["c"], ["y"], name="if1", then_branch=then, else_branch=other)],
    [vi("c", [], TensorProto.BOOL), X], [vi("y", None)]))

# --- Graph structure --------------------------------------------------------------------------
save("undefined_input.onnx", model([helper.make_node("Relu", ["nope"], ["y"], name="relu1")], [X],
                                   [vi("y", None)]))
save("duplicate_tensor.onnx", model(
    [helper.make_node("Relu", ["x"], ["t"], name="relu_a"),
     helper.make_node("Sigmoid", ["x"], ["t"], name="sigmoid_b"),
     helper.make_node("Relu", ["t"], ["y"], name="relu_c")], [X], [vi("y", None)]))
save("cycle.onnx", model(
    [helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
     helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
     helper.make_node("Relu", ["a"], ["y"], name="relu_y")], [X], [vi("y", None)]))
save("no_outputs.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [X], []))
save("output_not_produced.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [X],
                                       [vi("z", None)]))
save("missing_required_input.onnx", model(
    [helper.make_node("Conv", ["x"], ["y"], name="conv_noweight")], [X], [vi("y", None)],
    opset=18))
save("missing_required_input_checked.onnx", model(
    [helper.make_node("Conv", ["x"], ["y"], name="conv_noweight")], [X], [vi("y", None)]))
# Opset 6 goes through ONNX's version converter, which crashed on an undefined graph output
# (found by fuzz_onnx_import).
save("converter_undefined_output.onnx", model(
    [helper.make_node("Relu", ["x"], ["r"], name="relu1")], [X], [vi("}", [1, 3, 8, 8])], opset=6))
# Opset 3: ONNX's shape inference, run before its converter, divides by the stride of 0 (SIGFPE;
# found by fuzz_onnx_import). The upgrade runs in a child process, so it is an error.
save("converter_zero_stride.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_old", strides=[2, 0])], [X],
    [vi("y", None)], [f32("w", [4, 3, 3, 3])], opset=3))
save("output_writes_input.onnx", model([helper.make_node("Relu", ["x"], ["x"], name="relu_self")],
                                       [X], [vi("x", None)]))

# --- Shapes and element counts ------------------------------------------------------------------
save("negative_dim.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                                [vi("x", [1, -3, 8])], [vi("y", None)]))
save("dynamic_dim.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                               [vi("x", ["batch", 3, 8, 8])], [vi("y", None)]))
save("unknown_dim.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                               [vi("x", [None, 3])], [vi("y", None)]))
save("dims_overflow.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                                 [vi("x", [1 << 32, 1 << 32, 4])], [vi("y", None)]))
big = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 31, 1 << 31, 1 << 31])
save("initializer_dims_overflow.onnx", model(
    [helper.make_node("Add", ["x", "w"], ["y"], name="add1")], [X], [vi("y", None)], [big]))
neg = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, -2], float_data=[1, 2, 3, 4])
save("initializer_negative_dim.onnx", model(
    [helper.make_node("Add", ["x", "w"], ["y"], name="add1")], [X], [vi("y", None)], [neg]))
# A 3x0x3 kernel: Conv needs at least one weight per input channel group and kernel position.
save("conv_zero_kernel.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_zero")], [X], [vi("y", None)],
    [TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 0, 3])]))

# A rank-16 shape operand with no elements once reached the kernels' 8-entry dims (found by
# fuzz_onnx_import).
save("constant_of_shape_rank16.onnx", model(
    [helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos16")], [X], [vi("y", None)],
    [TensorProto(name="s", data_type=TensorProto.INT64, dims=[2, 6, 0] + [1] * 13)]))

# --- Initializer data -----------------------------------------------------------------------------
short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3],
                    float_data=[0.5] * 100)
save("initializer_short.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], [X], [vi("y", None)], [short]))
long_ = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3],
                    float_data=[0.5] * 120)
save("initializer_long.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], [X], [vi("y", None)], [long_]))
raw = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3],
                  raw_data=b"\x00" * (108 * 4 - 2))
save("raw_data_wrong_length.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], [X], [vi("y", None)], [raw]))
save("initializer_string.onnx", model(
    [helper.make_node("Identity", ["s"], ["y"], name="id1")], [X], [vi("y", None)],
    [TensorProto(name="s", data_type=TensorProto.STRING, dims=[1], string_data=[b"hi"])]))
save("initializer_undefined_type.onnx", model(
    [helper.make_node("Add", ["x", "w"], ["y"], name="add1")], [X], [vi("y", None)],
    [TensorProto(name="w", data_type=0, dims=[1], float_data=[1.0])]))
save("input_bad_dtype.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                                   [vi("x", [2, 2], 99)], [vi("y", None)]))
# An element type of a newer ONNX than the protobuf Magneto is built with (17: FLOAT8E4M3FN, as
# QuantizeLinear's opset 19 zero point): not supported, which is not the same as no ONNX type.
save("quantize_float8_zero_point.onnx", model(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q1")], [X],
    [vi("y", None)], [numpy_helper.from_array(np.array(1.0, np.float32), "s"),
                      TensorProto(name="z", data_type=17, raw_data=b"\x00")], opset=19))
# The integer quantization ops have no GPU lowering yet: --target hip refuses the node by name.
save("qlinearmatmul_gpu.onnx", model(
    [helper.make_node("QLinearMatMul", ["a", "s", "z", "b", "s", "z", "s", "z"], ["y"],
                      name="qmm1")],
    [vi("a", [2, 3], TensorProto.UINT8)], [vi("y", None, TensorProto.UINT8)],
    [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
     numpy_helper.from_array(np.array(3, np.uint8), "z"),
     numpy_helper.from_array(np.arange(12, dtype=np.uint8).reshape(3, 4), "b")]))
# Opset 21's block quantization: refused by name, never computed per tensor instead.
save("quantize_block_size.onnx", model(
    [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q1", axis=3, block_size=4)],
    [X], [vi("y", None)], [f32("s", [1, 3, 8, 2])], opset=21))


# --- External data ------------------------------------------------------------------------------
def external(name, dims, location, offset=None, length=None):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    kv = [("location", location)]
    if offset is not None:
        kv.append(("offset", str(offset)))
    if length is not None:
        kv.append(("length", str(length)))
    for k, v in kv:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def ext_model(t):
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], [X],
                 [vi("y", None)], [t])


weights = struct.pack("<108f", *[0.25] * 108)
with open(os.path.join(MODELS, "weights.bin"), "wb") as f:
    f.write(weights)
with open(os.path.join(OUT, "outside.bin"), "wb") as f:
    f.write(weights)
save("external_missing.onnx", ext_model(external("w", [4, 3, 3, 3], "no_such_weights.bin")))
save("external_escape.onnx", ext_model(external("w", [4, 3, 3, 3], "../outside.bin")))
save("external_absolute.onnx", ext_model(external("w", [4, 3, 3, 3], "/etc/passwd")))
save("external_offset_past_end.onnx",
     ext_model(external("w", [4, 3, 3, 3], "weights.bin", offset=1 << 20)))
save("external_length_past_end.onnx",
     ext_model(external("w", [4, 3, 3, 3], "weights.bin", offset=16, length=432)))
save("external_bad_offset.onnx",
     ext_model(external("w", [4, 3, 3, 3], "weights.bin", offset="-5")))

# --- Operators with bad operands or attributes -----------------------------------------------------
W = f32("w", [4, 3, 3, 3])
save("conv_zero_strides.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_s0", strides=[0, 0])], [X],
    [vi("y", None)], [W]))
save("conv_kernel_rank_mismatch.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_rank")], [X], [vi("y", None)],
    [f32("w", [4, 3, 3])]))
save("conv_pads_wrong_length.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_pads", pads=[1, 1, 1])], [X],
    [vi("y", None)], [W]))
save("conv_kernel_too_big.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_big")], [X], [vi("y", None)],
    [f32("w", [4, 3, 11, 11])]))
save("conv_group_zero.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_g0", group=0)], [X],
    [vi("y", None)], [W]))
save("maxpool_zero_kernel.onnx", unary("MaxPool", "pool0", kernel_shape=[0, 0]))
save("matmul_mismatch.onnx", model(
    [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm1")],
    [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", None)]))
save("add_not_broadcastable.onnx", model(
    [helper.make_node("Add", ["a", "b"], ["y"], name="add1")],
    [vi("a", [2, 3]), vi("b", [4, 3])], [vi("y", None)]))
save("reshape_incompatible.onnx", model(
    [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape1")], [X], [vi("y", None)],
    [i64("s", [5, 7])]))
save("reshape_two_minus_one.onnx", model(
    [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape2")], [X], [vi("y", None)],
    [i64("s", [-1, -1])]))
save("concat_axis_out_of_range.onnx", model(
    [helper.make_node("Concat", ["x", "x"], ["y"], name="concat1", axis=4)], [X],
    [vi("y", None)]))
save("gather_float_indices.onnx", model(
    [helper.make_node("Gather", ["x", "i"], ["y"], name="gather1", axis=1)], [X],
    [vi("y", None)], [numpy_helper.from_array(np.asarray([0.0, 1.0], np.float32), "i")]))
save("gather_index_out_of_range.onnx", model(
    [helper.make_node("Gather", ["d", "i"], ["y"], name="gather2", axis=0)],
    [vi("x", [2])], [vi("y", None)],
    [f32("d", [3, 2]), i64("i", [0, 7])]))
save("not_on_float.onnx", model([helper.make_node("Not", ["x"], ["y"], name="not1")], [X],
                                [vi("y", None)]))
strides_float = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_attr")
strides_float.attribute.append(helper.make_attribute("strides", [1.0, 1.0]))
save("attribute_wrong_type.onnx", model([strides_float], [X], [vi("y", None)], [W], opset=18))
save("attribute_wrong_type_checked.onnx", model([strides_float], [X], [vi("y", None)], [W]))
untyped = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_untyped")
a = untyped.attribute.add()
a.name, a.type = "strides", AttributeProto.UNDEFINED
save("attribute_no_value.onnx", model([untyped], [X], [vi("y", None)], [W], opset=18))
save("transpose_not_permutation.onnx", unary("Transpose", "tr1", perm=[0, 1, 1, 3]))
save("transpose_perm_out_of_range.onnx", unary("Transpose", "tr2", perm=[0, 1, 2, 9]))
save("split_sizes_not_summing.onnx", model(
    [helper.make_node("Split", ["x", "s"], ["y1", "y2"], name="split1", axis=1)], [X],
    [vi("y1", None), vi("y2", None)], [i64("s", [1, 1])]))
save("softmax_axis_out_of_range.onnx", unary("Softmax", "softmax1", axis=-7))
save("slice_steps_zero.onnx", model(
    [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="slice1")], [X],
    [vi("y", None)], [i64("st", [0]), i64("en", [2]), i64("ax", [1]), i64("sp", [0])]))
save("constant_no_value.onnx", model(
    [helper.make_node("Constant", [], ["c"], name="const1"),
     helper.make_node("Add", ["x", "c"], ["y"], name="add1")], [X], [vi("y", None)], opset=18))

# --- Sizes past what any buffer can hold (regressions: crashes or overflows before the fix) -----------
# Shape of a 2^50-element input: folding Shape once allocated the input (std::bad_alloc).
save("shape_of_huge_input.onnx", model(
    [helper.make_node("Shape", ["x"], ["s"], name="shape1"),
     helper.make_node("Reshape", ["z", "s"], ["y"], name="reshape1")],
    [vi("x", [1 << 20, 1 << 20, 1 << 10]), vi("z", [2, 3])], [vi("y", None)]))
# 2^62 f64 elements: 2^65 bytes overflowed int64 (a segfault while folding ConstantOfShape).
save("bytes_overflow_f64.onnx", model(
    [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos1",
                      value=numpy_helper.from_array(np.asarray([1.0]), "v")),
     helper.make_node("Add", ["c", "c"], ["y"], name="add1")],
    [X], [vi("y", None, TensorProto.DOUBLE)], [i64("s", [1 << 31, 1 << 31])]))
save("input_bytes_overflow.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                                        [vi("x", [1 << 31, 1 << 31], TensorProto.DOUBLE)],
                                        [vi("y", None, TensorProto.DOUBLE)]))
# Two live 2^62-byte intermediates: the arena would pass int64.
save("arena_overflow.onnx", model(
    [helper.make_node("Expand", ["x1", "s"], ["a"], name="expand_a"),
     helper.make_node("Expand", ["x1", "s"], ["b"], name="expand_b"),
     helper.make_node("Add", ["a", "b"], ["y"], name="add1")],
    [vi("x1", [1])], [vi("y", None)], [i64("s", [1 << 60])]))
save("pad_overflow.onnx", model(
    [helper.make_node("Pad", ["x", "p"], ["y"], name="pad1")], [X], [vi("y", None)],
    [i64("p", [1 << 61, 0, 0, 0, 1 << 61, 0, 0, 0])]))
save("conv_huge_pads.onnx", model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_hp", pads=[1 << 62] * 4)], [X],
    [vi("y", None)], [W]))
save("input_rank_9.onnx", model([], [vi("x", [1] * 9)], [vi("x", [1] * 9)]))

# Sequences (issue #40): resolved on import only when lengths and positions are constants.
XS = vi("x", [3, 2])
ROWS = helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, name="split_rows")
save("seq_at_out_of_range.onnx", model(
    [ROWS, helper.make_node("SequenceAt", ["rows", "p"], ["y"], name="at_past_end")],
    [XS], [vi("y", None)], [i64("p", 3)]))
save("seq_at_data_position.onnx", model(
    [ROWS, helper.make_node("SequenceAt", ["rows", "p"], ["y"], name="at_data")],
    [XS, vi("p", [], TensorProto.INT64)], [vi("y", None)]))
save("seq_split_sum.onnx", model(
    [helper.make_node("SplitToSequence", ["x", "s"], ["rows"], axis=0, name="split_sum"),
     helper.make_node("ConcatFromSequence", ["rows"], ["y"], axis=0)],
    [XS], [vi("y", None)], [i64("s", [1, 1])]))
save("seq_concat_empty.onnx", model(
    [helper.make_node("SequenceEmpty", [], ["e"]),
     helper.make_node("ConcatFromSequence", ["e"], ["y"], axis=0, name="concat_empty")],
    [XS], [vi("y", None)]))
save("seq_insert_type.onnx", model(
    [helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.INT64),
     helper.make_node("SequenceInsert", ["e", "x"], ["s"], name="insert_f32"),
     helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
    [XS], [vi("y", None)]))
save("seq_at_of_tensor.onnx", model(
    [helper.make_node("SequenceAt", ["x", "p"], ["y"], name="at_tensor")],
    [XS], [vi("y", None)], [i64("p", 0)]))

# Optionals (issue #40): resolved on import; what an optional holds is a compile-time fact.
OPT_F = helper.make_tensor_type_proto(TensorProto.FLOAT, [3, 2])
save("opt_get_empty.onnx", model(
    [helper.make_node("Optional", [], ["o"], type=OPT_F, name="make_empty"),
     helper.make_node("OptionalGetElement", ["o"], ["y"], name="get_empty")],
    [XS], [vi("y", None)], opset=15))
save("opt_reader.onnx", model(
    [helper.make_node("Optional", ["x"], ["o"], name="wrap"),
     helper.make_node("Relu", ["o"], ["y"], name="relu_of_opt")],
    [XS], [vi("y", None)], opset=15))
save("opt_of_opt.onnx", model(
    [helper.make_node("Optional", ["x"], ["o"], name="wrap"),
     helper.make_node("Optional", ["o"], ["oo"], name="wrap_again"),
     helper.make_node("OptionalGetElement", ["oo"], ["y"])],
    [XS], [vi("y", None)], opset=15))
save("opt_seq_input.onnx", model(
    [helper.make_node("OptionalGetElement", ["os"], ["s"]),
     helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
    [helper.make_value_info("os", helper.make_optional_type_proto(
        helper.make_sequence_type_proto(OPT_F)))], [vi("y", None)], opset=15))

# A data set for the rows run through `magnetoc check`: x and a y for the valid Conv + Relu.
data = os.path.join(OUT, "data")
os.makedirs(data, exist_ok=True)
with open(os.path.join(data, "input_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.zeros((1, 3, 8, 8), np.float32), "x").SerializeToString())
with open(os.path.join(data, "output_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(np.zeros((1, 4, 8, 8), np.float32), "y").SerializeToString())

with open(os.path.join(OUT, "index.txt"), "w") as f:
    f.write("".join(n + "\n" for n in sorted(set(written))))
print(f"make_bad_models.py: {len(set(written))} models in {MODELS}")
