"""The multi-operator cases of the opset 18-21 set (make_opset_tests.py): realistic small graphs
and control flow (If, Loop, Scan) whose control is known at compile time."""
import numpy as np

from opset_case_lib import F, TensorProto, add, f32, graph, i64, node, onnx, rng_for  # noqa: F401

# ------------------------------------------------------------------------------ realistic graphs
def model_cases():
    # conv -> layer norm over channels -> reduce-mean (axes operand) -> split(num_outputs): the
    # shape of what torch.onnx.export(..., opset_version=18) writes for a small conv block.
    n = "model18_conv_layernorm_reducemean_split"
    r = rng_for(n)
    add(n, 18, [
        node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("Relu", ["c"], ["r"]),
        node("Transpose", ["r"], ["t"], perm=[0, 2, 3, 1]),
        node("LayerNormalization", ["t", "ln_w", "ln_b"], ["ln"], axis=-1, epsilon=1e-5),
        node("ReduceMean", ["ln", "axes"], ["m"], keepdims=0),
        node("Split", ["m"], ["s0", "s1"], axis=-1, num_outputs=2),
        node("Sigmoid", ["s1"], ["g"]),
        node("Mul", ["s0", "g"], ["y"])],
        [("x", f32(r, (2, 3, 6, 6)))], [("y", F)],
        [("w", f32(r, (8, 3, 3, 3), -0.4, 0.4)), ("b", f32(r, (8,), -0.1, 0.1)),
         ("ln_w", f32(r, (8,), 0.5, 1.5)), ("ln_b", f32(r, (8,), -0.1, 0.1)),
         ("axes", i64([1, 2]))],
        doc="Conv, LayerNormalization, ReduceMean with axes operand, Split num_outputs, GLU")
    # A transformer attention block as exported at opset 18: qkv projection split in three with
    # num_outputs, heads by Reshape/Transpose, softmax attention, and a mean-pooled output.
    n = "model18_attention_split_qkv"
    r = rng_for(n)
    d, h, t = 16, 2, 5
    add(n, 18, [
        node("MatMul", ["x", "wqkv"], ["qkv"]),
        node("Split", ["qkv"], ["q", "k", "v"], axis=-1, num_outputs=3),
        node("Reshape", ["q", "heads"], ["qh"]), node("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3]),
        node("Reshape", ["k", "heads"], ["kh"]), node("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1]),
        node("Reshape", ["v", "heads"], ["vh"]), node("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qt", "kt"], ["att"]), node("Div", ["att", "scale"], ["atts"]),
        node("Softmax", ["atts"], ["p"], axis=-1), node("MatMul", ["p", "vt"], ["o"]),
        node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]), node("Reshape", ["ot", "flat"], ["of"]),
        node("Add", ["of", "x"], ["res"]),
        node("ReduceMean", ["res", "ax1"], ["y"], keepdims=1)],
        [("x", f32(r, (1, t, d)))], [("y", F)],
        [("wqkv", f32(r, (d, 3 * d), -0.3, 0.3)), ("heads", i64([1, t, h, d // h])),
         ("scale", np.array(np.sqrt(d // h), F)), ("flat", i64([1, t, d])), ("ax1", i64([1]))],
        doc="attention: MatMul, Split num_outputs=3, Softmax, ReduceMean with axes operand")
    # Decoder-style upsampling: conv, Mish, Resize-18 by scales on the spatial axes only
    # (axes attribute), Pad-18 with axes, ReduceMax over channels.
    n = "model18_conv_mish_resize_axes_pad"
    r = rng_for(n)
    add(n, 18, [
        node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
        node("Mish", ["c"], ["m"]),
        node("Resize", ["m", "", "scales"], ["u"], mode="linear", axes=[2, 3]),
        node("Pad", ["u", "pads", "", "pad_axes"], ["p"], mode="reflect"),
        node("ReduceMax", ["p", "rax"], ["y"], keepdims=1)],
        [("x", f32(r, (1, 4, 3, 5)))], [("y", F)],
        [("w", f32(r, (6, 4, 1, 1), -0.5, 0.5)), ("scales", np.array([2.0, 2.0], F)),
         ("pads", i64([1, 1, 1, 1])), ("pad_axes", i64([2, 3])), ("rax", i64([1]))],
        doc="Conv, Mish, Resize with axes, Pad with axes, ReduceMax with axes operand")
    # GroupNorm as opset-21 exporters write it, in a conv block with a residual.
    n = "model21_conv_groupnorm_residual"
    r = rng_for(n)
    add(n, 21, [
        node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("GroupNormalization", ["c", "gs", "gb"], ["g"], num_groups=2, epsilon=1e-5),
        node("Mish", ["g"], ["a"]),
        node("Add", ["a", "x"], ["y"])],
        [("x", f32(r, (1, 4, 5, 5)))], [("y", F)],
        [("w", f32(r, (4, 4, 3, 3), -0.3, 0.3)), ("b", f32(r, (4,), -0.1, 0.1)),
         ("gs", f32(r, (4,), 0.5, 1.5)), ("gb", f32(r, (4,), -0.2, 0.2))],
        doc="Conv, GroupNormalization-21, Mish, residual Add")


def control_flow_cases():
    # Control flow whose control is known at compile time, specialised on import
    # (src/frontend/onnx_control_flow.cpp); versions 19 and 21 only widened the types.
    FT, BT, IT = (TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64) if onnx else (0, 0, 0)
    n = "if19_bound_cond"
    r = rng_for(n)
    add(n, 19, [node("If", ["cond"], ["y"],
                     then_branch=graph([node("Mul", ["x", "x"], ["t"])], "then", [],
                                       [("t", FT, [3, 4])]),
                     else_branch=graph([node("Transpose", ["x"], ["e"])], "else", [],
                                       [("e", FT, [4, 3])]))],
        [("cond", np.array(True)), ("x", f32(r, (3, 4)))], [("y", F)],
        doc="condition a graph input that decides the output shape ([3,4] or [4,3]), so check "
            "binds it at compile time: the then branch; x stays a run-time input")
    n = "if21_folded_cond"
    r = rng_for(n)
    add(n, 21, [node("Size", ["x"], ["size"]), node("Equal", ["size", "twelve"], ["cond"]),
                node("If", ["cond"], ["y"],
                     then_branch=graph([node("Neg", ["x"], ["t"])], "then", [],
                                       [("t", FT, [3, 5])]),
                     else_branch=graph([node("Add", ["x", "x"], ["e"])], "else", [],
                                       [("e", FT, [3, 5])]))],
        [("x", f32(r, (3, 5)))], [("y", F)], [("twelve", i64(12))],
        doc="condition folded from Size(x) on import: the else branch")
    loop_body = graph([node("Add", ["acc", "x"], ["acc_out"]),
                       node("Cast", ["i"], ["fi"], to=FT),
                       node("Mul", ["acc_out", "fi"], ["scan_out"]),
                       node("Identity", ["c"], ["c_out"])], "body",
                      [("i", IT, []), ("c", BT, []), ("acc", FT, [4])],
                      [("c_out", BT, []), ("acc_out", FT, [4]), ("scan_out", FT, [4])])
    n = "loop19_trip_input"
    r = rng_for(n)
    add(n, 19, [node("Loop", ["m", "", "acc0"], ["acc", "scan"], body=loop_body)],
        [("m", i64(3)), ("x", f32(r, (4,))), ("acc0", f32(r, (4,)))], [("acc", F), ("scan", F)],
        doc="trip count a graph input (bound at compile time), a carried value, a scan output")
    n = "loop21_cond_ends"
    r = rng_for(n)
    cond_body = graph([node("Add", ["acc", "x"], ["acc_out"]),
                       node("Less", ["i", "two"], ["c_out"]),
                       node("Neg", ["acc_out"], ["scan_out"])], "body",
                      [("i", IT, []), ("c", BT, []), ("acc", FT, [2, 3])],
                      [("c_out", BT, []), ("acc_out", FT, [2, 3]), ("scan_out", FT, [2, 3])])
    add(n, 21, [node("Loop", ["m", "go", "x"], ["acc", "scan"], body=cond_body)],
        [("x", f32(r, (2, 3)))], [("acc", F), ("scan", F)],
        [("m", i64(10)), ("go", np.array(True)), ("two", i64(2))],
        doc="trip count 10, the body's condition i < 2 ends it after 3 iterations")
    scan_body = graph([node("Add", ["s", "col"], ["s_out"]),
                       node("Mul", ["s_out", "col"], ["y_out"])], "body",
                      [("s", FT, [3]), ("col", FT, [3])], [("s_out", FT, [3]), ("y_out", FT, [3])])
    n = "scan19_reverse_axis1"
    r = rng_for(n)
    add(n, 19, [node("Scan", ["s0", "x"], ["s", "ys"], body=scan_body, num_scan_inputs=1,
                     scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1])],
        [("s0", f32(r, (3,))), ("x", f32(r, (3, 5)))], [("s", F), ("ys", F)],
        doc="scan input axis 1 in reverse, the scan output stacked on axis 1")
    two_body = graph([node("Max", ["m", "a"], ["m1"]), node("Sub", ["m1", "b"], ["m_out"]),
                      node("Identity", ["m_out"], ["y_out"])], "body",
                     [("m", FT, [2]), ("a", FT, [2]), ("b", FT, [2])],
                     [("m_out", FT, [2]), ("y_out", FT, [2])])
    n = "scan21_two_inputs_prepend"
    r = rng_for(n)
    add(n, 21, [node("Scan", ["m0", "a", "b"], ["m", "ys"], body=two_body, num_scan_inputs=2,
                     scan_input_axes=[0, -1], scan_input_directions=[0, 1],
                     scan_output_directions=[1])],
        [("m0", f32(r, (2,))), ("a", f32(r, (4, 2))), ("b", f32(r, (2, 4)))], [("m", F), ("ys", F)],
        doc="two scan inputs (axes 0 and -1, the second reversed), the scan output prepended")
