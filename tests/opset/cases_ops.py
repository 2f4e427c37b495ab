"""The single-operator cases of the opset 18-21 set (make_opset_tests.py): reductions, Split, Pad,
Resize, Scatter, Col2Im, normalizations, elementwise ops, quantization, DFT, casts, views, pools
and convolutions. Each *_cases() function adds its cases to opset_case_lib.CASES."""
import numpy as np

from opset_case_lib import F, TensorProto, add, f32, i64, node, numpy_helper, onnx, rng_for  # noqa: F401

# ------------------------------------------------------------------------------ reductions
REDUCE_OPS = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


def reduce_input(op, r, shape):
    if op == "ReduceLogSum":
        return f32(r, shape, 0.5, 2.0)  # ln of a positive sum
    if op == "ReduceProd":
        return f32(r, shape, 0.6, 1.4)
    return f32(r, shape)


def reduce_cases():
    for op in REDUCE_OPS:
        s = op[len("Reduce"):].lower()
        n = "reduce_%s_axes_input_keepdims" % s
        r = rng_for(n)
        add(n, 18, [node(op, ["x", "axes"], ["y"], keepdims=1)],
            [("x", reduce_input(op, r, (3, 4, 5))), ("axes", i64([1]))], [("y", F)],
            doc="axes as a graph input (bound at compile time), keepdims=1")
        n = "reduce_%s_axes_neg_nokeep" % s
        r = rng_for(n)
        add(n, 18, [node(op, ["x", "axes"], ["y"], keepdims=0)],
            [("x", reduce_input(op, r, (3, 4, 5)))], [("y", F)], [("axes", i64([0, -1]))],
            doc="axes [0, -1] as an initializer, keepdims=0")
        n = "reduce_%s_empty_axes_noop" % s
        r = rng_for(n)
        add(n, 18, [node(op, ["x", "axes"], ["y"], keepdims=1, noop_with_empty_axes=1)],
            [("x", reduce_input(op, r, (2, 3, 4)))], [("y", F)],
            [("axes", np.zeros((0,), np.int64))], doc="empty axes with noop_with_empty_axes=1")
        n = "reduce_%s_empty_axes_all" % s
        r = rng_for(n)
        add(n, 18, [node(op, ["x", "axes"], ["y"], keepdims=0)],
            [("x", reduce_input(op, r, (2, 3, 4)))], [("y", F)],
            [("axes", np.zeros((0,), np.int64))],
            doc="empty axes, noop_with_empty_axes=0: reduces everything")
        n = "reduce_%s_no_axes_keepdims_op21" % s
        r = rng_for(n)
        add(n, 21, [node(op, ["x"], ["y"], keepdims=1)],
            [("x", reduce_input(op, r, (2, 3, 4)))], [("y", F)],
            doc="no axes operand, keepdims=1, opset 21")
    for opset, op in [(19, "ReduceMean"), (19, "ReduceL2"), (20, "ReduceMax"), (20, "ReduceMin"),
                      (20, "ReduceLogSumExp"), (21, "ReduceSumSquare")]:
        n = "reduce_%s_axes_op%d" % (op[len("Reduce"):].lower(), opset)
        r = rng_for(n)
        add(n, opset, [node(op, ["x", "axes"], ["y"], keepdims=0)],
            [("x", reduce_input(op, r, (2, 3, 4, 5))), ("axes", i64([-1, 1]))], [("y", F)],
            doc="axes [-1, 1] as a graph input at opset %d" % opset)
    for op in ["ReduceMax", "ReduceMin"]:
        n = "reduce_%s_bool_op20" % op[len("Reduce"):].lower()
        r = rng_for(n)
        add(n, 20, [node(op, ["x", "axes"], ["y"], keepdims=1)],
            [("x", r.integers(0, 2, size=(3, 4)).astype(bool))], [("y", np.bool_)],
            [("axes", i64([1]))], doc="bool input (added in version 20)")


# ------------------------------------------------------------------------------ Split
def split_cases():
    for opset in (18, 21):
        n = "split_num_outputs_even_op%d" % opset
        r = rng_for(n)
        add(n, opset, [node("Split", ["x"], ["y0", "y1", "y2"], axis=0, num_outputs=3)],
            [("x", f32(r, (6, 4)))], [("y0", F), ("y1", F), ("y2", F)],
            doc="6 rows into 3 equal parts")
    n = "split_num_outputs_uneven"
    r = rng_for(n)
    add(n, 18, [node("Split", ["x"], ["y0", "y1", "y2"], axis=1, num_outputs=3)],
        [("x", f32(r, (2, 7)))], [("y0", F), ("y1", F), ("y2", F)],
        doc="7 columns into 3 parts: 3, 3, 1")
    n = "split_num_outputs_uneven_neg_axis"
    r = rng_for(n)
    add(n, 18, [node("Split", ["x"], ["y0", "y1"], axis=-1, num_outputs=2)],
        [("x", f32(r, (2, 3, 5)))], [("y0", F), ("y1", F)], doc="5 into 2 parts: 3, 2")
    n = "split_num_outputs_uneven_4"
    r = rng_for(n)
    add(n, 19, [node("Split", ["x"], ["y0", "y1", "y2", "y3"], axis=1, num_outputs=4)],
        [("x", r.integers(-100, 100, size=(2, 10, 3)).astype(np.int32))],
        [("y0", np.int32), ("y1", np.int32), ("y2", np.int32), ("y3", np.int32)],
        doc="10 into 4 parts: 3, 3, 3, 1 (int32)")
    n = "split_sizes_input_op18"
    r = rng_for(n)
    add(n, 18, [node("Split", ["x", "split"], ["y0", "y1"], axis=1)],
        [("x", f32(r, (2, 5)))], [("y0", F), ("y1", F)], [("split", i64([2, 3]))],
        doc="sizes as operand 1 (the opset-13 form, still valid)")


# ------------------------------------------------------------------------------ Pad
def pad_cases():
    n = "pad18_constant_axes"
    r = rng_for(n)
    add(n, 18, [node("Pad", ["x", "pads", "value", "axes"], ["y"], mode="constant")],
        [("x", f32(r, (1, 3, 4, 5)))], [("y", F)],
        [("pads", i64([1, 2, 0, 1])), ("value", np.array(1.5, F)), ("axes", i64([2, 3]))],
        doc="constant value 1.5 on axes [2, 3]")
    n = "pad18_constant_axes_input"
    r = rng_for(n)
    add(n, 18, [node("Pad", ["x", "pads", "", "axes"], ["y"])],
        [("x", f32(r, (2, 3, 4))), ("pads", i64([2, 1])), ("axes", i64([1]))], [("y", F)],
        doc="pads and axes as graph inputs, no constant value (0)")
    n = "pad18_reflect_axes_neg"
    r = rng_for(n)
    add(n, 18, [node("Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")],
        [("x", f32(r, (2, 3, 5)))], [("y", F)], [("pads", i64([2, 3])), ("axes", i64([-1]))],
        doc="reflect on axis -1")
    n = "pad18_edge_axes"
    r = rng_for(n)
    add(n, 18, [node("Pad", ["x", "pads", "", "axes"], ["y"], mode="edge")],
        [("x", f32(r, (1, 2, 3, 4)))], [("y", F)],
        [("pads", i64([1, 0, 2, 1])), ("axes", i64([3, 1]))],
        doc="edge on axes [3, 1] (not sorted)")
    n = "pad18_negative_pads_axes"
    r = rng_for(n)
    add(n, 18, [node("Pad", ["x", "pads", "", "axes"], ["y"])],
        [("x", f32(r, (3, 6, 4)))], [("y", F)], [("pads", i64([-1, 2, 1, -2])),
                                                 ("axes", i64([1, 2]))],
        doc="negative pads crop")
    n = "pad19_wrap"
    r = rng_for(n)
    add(n, 19, [node("Pad", ["x", "pads"], ["y"], mode="wrap")],
        [("x", f32(r, (2, 3, 4)))], [("y", F)], [("pads", i64([0, 1, 2, 0, 2, 3]))],
        doc="wrap mode (new in version 19)")
    n = "pad19_wrap_axes"
    r = rng_for(n)
    add(n, 19, [node("Pad", ["x", "pads", "", "axes"], ["y"], mode="wrap")],
        [("x", f32(r, (1, 2, 3, 4)))], [("y", F)], [("pads", i64([2, 1, 3, 4])),
                                                    ("axes", i64([2, 3]))],
        doc="wrap on axes [2, 3], pads larger than the axis")
    n = "pad21_constant_axes_int32"
    r = rng_for(n)
    add(n, 21, [node("Pad", ["x", "pads", "value", "axes"], ["y"])],
        [("x", r.integers(-50, 50, size=(3, 4)).astype(np.int32))], [("y", np.int32)],
        [("pads", i64([1, 2])), ("value", np.array(7, np.int32)), ("axes", i64([0]))],
        doc="int32 with a constant value, opset 21")
    n = "pad21_reflect_axes"
    r = rng_for(n)
    add(n, 21, [node("Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")],
        [("x", f32(r, (1, 2, 5, 5)))], [("y", F)], [("pads", i64([1, 2, 2, 1])),
                                                    ("axes", i64([-2, -1]))],
        doc="reflect on the two spatial axes, opset 21")


# ------------------------------------------------------------------------------ Resize
def resize_cases():
    def resize(n, opset, x, outs_dtype=F, scales=None, sizes=None, doc="", **attrs):
        ins = ["x", "", "scales" if scales is not None else "", "sizes" if sizes is not None else ""]
        while ins[-1] == "":
            ins.pop()
        inits = []
        if scales is not None:
            inits.append(("scales", np.array(scales, F)))
        if sizes is not None:
            inits.append(("sizes", i64(sizes)))
        add(n, opset, [node("Resize", ins, ["y"], **attrs)], [("x", x)], [("y", outs_dtype)],
            inits, doc=doc)

    n = "resize18_linear_antialias_scales"
    resize(n, 18, f32(rng_for(n), (1, 2, 8, 10)), scales=[1, 1, 0.5, 0.6], mode="linear",
           antialias=1, doc="antialiased linear downscale by scales")
    n = "resize18_linear_antialias_sizes"
    resize(n, 18, f32(rng_for(n), (1, 1, 9, 12)), sizes=[1, 1, 4, 5], mode="linear",
           antialias=1, doc="antialiased linear downscale to sizes")
    n = "resize18_linear_antialias_align_corners"
    resize(n, 18, f32(rng_for(n), (1, 1, 8, 8)), sizes=[1, 1, 3, 5], mode="linear", antialias=1,
           coordinate_transformation_mode="align_corners",
           doc="antialias with align_corners coordinates")
    n = "resize18_linear_antialias_upscale"
    resize(n, 18, f32(rng_for(n), (1, 1, 3, 4)), scales=[1, 1, 2.0, 1.5], mode="linear",
           antialias=1, doc="antialias on an upscale (no effect: the filter is not widened)")
    n = "resize18_linear_antialias_mixed"
    resize(n, 18, f32(rng_for(n), (1, 2, 4, 12)), sizes=[1, 2, 7, 5], mode="linear",
           antialias=1, doc="antialias: one axis up, one down")
    n = "resize18_cubic_antialias_scales"
    resize(n, 18, f32(rng_for(n), (1, 2, 10, 10)), scales=[1, 1, 0.6, 0.5], mode="cubic",
           antialias=1, doc="antialiased cubic downscale by scales")
    n = "resize18_cubic_antialias_sizes"
    resize(n, 18, f32(rng_for(n), (1, 1, 12, 9)), sizes=[1, 1, 5, 4], mode="cubic",
           antialias=1, doc="antialiased cubic downscale to sizes")
    n = "resize18_cubic_antialias_exclude_outside"
    resize(n, 18, f32(rng_for(n), (1, 1, 9, 9)), sizes=[1, 1, 4, 4], mode="cubic",
           antialias=1, exclude_outside=1, cubic_coeff_a=-0.5,
           doc="antialiased cubic with exclude_outside and A = -0.5")
    n = "resize18_axes_scales_nearest"
    resize(n, 18, f32(rng_for(n), (1, 2, 3, 4)), scales=[2.0, 1.5], mode="nearest",
           axes=[2, 3], doc="scales for axes [2, 3] only")
    n = "resize18_axes_sizes_linear"
    resize(n, 18, f32(rng_for(n), (2, 3, 4)), sizes=[7, 6], mode="linear", axes=[-1, 1],
           doc="sizes for axes [-1, 1] (negative, not sorted)")
    n = "resize18_axes_2d_cubic"
    resize(n, 18, f32(rng_for(n), (5, 6)), scales=[1.4], mode="cubic", axes=[1],
           doc="cubic on one axis of a 2-D tensor")
    for pol in ("not_larger", "not_smaller"):
        n = "resize18_%s_axes" % pol
        resize(n, 18, f32(rng_for(n), (1, 1, 4, 6)), sizes=[7, 7], mode="linear", axes=[2, 3],
               keep_aspect_ratio_policy=pol, doc="keep_aspect_ratio_policy %s, sizes on axes" % pol)
        n = "resize18_%s_full_rank" % pol
        resize(n, 18, f32(rng_for(n), (1, 2, 6, 4)), sizes=[1, 2, 3, 5], mode="nearest",
               keep_aspect_ratio_policy=pol, doc="keep_aspect_ratio_policy %s, full-rank sizes" % pol)
    n = "resize18_not_larger_antialias"
    resize(n, 18, f32(rng_for(n), (1, 1, 10, 8)), sizes=[5, 5], mode="linear", axes=[2, 3],
           antialias=1, keep_aspect_ratio_policy="not_larger",
           doc="not_larger with an antialiased downscale")
    n = "resize18_stretch_sizes"
    resize(n, 18, f32(rng_for(n), (1, 1, 4, 6)), sizes=[7, 5], mode="linear", axes=[2, 3],
           keep_aspect_ratio_policy="stretch", doc="the default policy, stated")
    for mode, extra in (("linear", {}), ("cubic", {}), ("nearest", {})):
        n = "resize19_half_pixel_symmetric_%s_up" % mode
        resize(n, 19, f32(rng_for(n), (1, 1, 4, 5)), sizes=[1, 1, 7, 9], mode=mode,
               coordinate_transformation_mode="half_pixel_symmetric",
               doc="half_pixel_symmetric (new in version 19), %s upscale" % mode)
    n = "resize19_half_pixel_symmetric_linear_down"
    resize(n, 19, f32(rng_for(n), (1, 1, 9, 7)), scales=[1, 1, 0.5, 0.6], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric",
           doc="half_pixel_symmetric, linear downscale by scales")
    n = "resize19_half_pixel_symmetric_antialias"
    resize(n, 19, f32(rng_for(n), (1, 1, 10, 9)), sizes=[1, 1, 4, 4], mode="cubic", antialias=1,
           coordinate_transformation_mode="half_pixel_symmetric",
           doc="half_pixel_symmetric with an antialiased cubic downscale")
    n = "resize21_linear_antialias_axes"
    resize(n, 21, f32(rng_for(n), (1, 3, 8, 8)), scales=[0.5, 0.75], mode="linear", antialias=1,
           axes=[2, 3], doc="antialias and axes, opset 21")
    n = "resize21_nearest_uint8"
    resize(n, 21, rng_for(n).integers(0, 255, size=(1, 1, 3, 3)).astype(np.uint8), np.uint8,
           scales=[1, 1, 2.0, 2.0], mode="nearest", doc="nearest on uint8, opset 21")


# ------------------------------------------------------------------------------ Scatter
def scatter_cases():
    for red in ("add", "mul", "max", "min"):
        n = "scatternd18_%s" % red
        r = rng_for(n)
        idx = i64([[0], [2], [0], [3], [2]])  # duplicates: the reduction combines them
        add(n, 18, [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=red)],
            [("data", f32(r, (4, 3, 2))), ("indices", idx), ("updates", f32(r, (5, 3, 2)))],
            [("y", F)], doc="reduction=%s with repeated indices" % red)
        n = "scatternd18_%s_int32_elements" % red
        r = rng_for(n)
        idx = i64([[1, 0], [0, 1], [1, 0], [2, 2]])
        add(n, 18, [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=red)],
            [("data", r.integers(-9, 9, size=(3, 3)).astype(np.int32)), ("indices", idx),
             ("updates", r.integers(-9, 9, size=(4,)).astype(np.int32))],
            [("y", np.int32)], doc="reduction=%s on single elements of int32" % red)
        n = "scatterelements18_%s" % red
        r = rng_for(n)
        idx = i64([[1, 0, 1], [3, 3, 0], [0, 1, 3]])
        add(n, 18, [node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1,
                         reduction=red)],
            [("data", f32(r, (3, 4))), ("indices", idx), ("updates", f32(r, (3, 3)))],
            [("y", F)], doc="axis 1, reduction=%s with repeated indices" % red)
        n = "scatterelements18_%s_neg_axis_int64" % red
        r = rng_for(n)
        idx = i64([[[0, 1], [1, 1]], [[0, 0], [-1, 0]]])
        add(n, 18, [node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=-2,
                         reduction=red)],
            [("data", r.integers(-5, 5, size=(2, 2, 3)).astype(np.int64)), ("indices", idx),
             ("updates", r.integers(-5, 5, size=(2, 2, 2)).astype(np.int64))],
            [("y", np.int64)], doc="axis -2, negative index, reduction=%s on int64" % red)
    n = "scatternd18_none"
    r = rng_for(n)
    add(n, 18, [node("ScatterND", ["data", "indices", "updates"], ["y"], reduction="none")],
        [("data", f32(r, (4, 4))), ("indices", i64([[3], [1]])), ("updates", f32(r, (2, 4)))],
        [("y", F)], doc="reduction=none stated")


# ------------------------------------------------------------------------------ Col2Im
def col2im_cases():
    def col2im(n, x, image, block, doc, **attrs):
        add(n, 18, [node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], **attrs)],
            [("x", x)], [("y", F)], [("image_shape", i64(image)), ("block_shape", i64(block))],
            doc=doc)

    n = "col2im18_basic"
    col2im(n, f32(rng_for(n), (1, 5, 5)), [5, 5], [1, 5], "the ONNX example: 5x5 from 1x5 blocks")
    n = "col2im18_strides_pads"
    col2im(n, f32(rng_for(n), (1, 8, 9)), [5, 5], [2, 2], "2 channels, strides 2, pads 1",
           strides=[2, 2], pads=[1, 1, 1, 1])
    n = "col2im18_dilations"
    col2im(n, f32(rng_for(n), (2, 4, 16)), [6, 6], [2, 2], "batch 2, dilations 2",
           dilations=[2, 2])
    n = "col2im18_asymmetric_pads"
    # L = ((5 + 0 + 2 - 3) / 1 + 1) * ((4 + 1 + 0 - 2) / 2 + 1) = 5 * 2
    col2im(n, f32(rng_for(n), (1, 6, 10)), [5, 4], [3, 2], "asymmetric pads, strides [1, 2]",
           pads=[0, 1, 2, 0], strides=[1, 2])
    n = "col2im18_3d"
    col2im(n, f32(rng_for(n), (1, 4, 36)), [3, 4, 5], [1, 2, 2], "3 spatial dims")


# ------------------------------------------------------------------------------ normalization
def groupnorm_cases():
    n = "groupnorm18"
    r = rng_for(n)
    add(n, 18, [node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=3)],
        [("x", f32(r, (2, 6, 3, 3)))], [("y", F)],
        [("scale", f32(r, (3,))), ("bias", f32(r, (3,)))],
        doc="version 18: scale and bias per group")
    n = "groupnorm18_epsilon"
    r = rng_for(n)
    add(n, 18, [node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2,
                     epsilon=1e-2)],
        [("x", f32(r, (1, 4, 5))), ("scale", f32(r, (2,))), ("bias", f32(r, (2,)))], [("y", F)],
        doc="version 18, epsilon 1e-2, rank 3, scale/bias as graph inputs")
    n = "groupnorm21"
    r = rng_for(n)
    add(n, 21, [node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=3)],
        [("x", f32(r, (2, 6, 3, 3)))], [("y", F)],
        [("scale", f32(r, (6,))), ("bias", f32(r, (6,)))],
        doc="version 21: scale and bias per channel")
    n = "groupnorm21_one_group_inputs"
    r = rng_for(n)
    add(n, 21, [node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=1,
                     epsilon=1e-3, stash_type=1)],
        [("x", f32(r, (2, 4, 2, 3, 2))), ("scale", f32(r, (4,))), ("bias", f32(r, (4,)))],
        [("y", F)], doc="version 21, one group, rank 5, stash_type stated")
    n = "groupnorm21_groups_eq_channels"
    r = rng_for(n)
    add(n, 21, [node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=4)],
        [("x", f32(r, (1, 4, 6)))], [("y", F)], [("scale", f32(r, (4,))), ("bias", f32(r, (4,)))],
        doc="version 21, a group per channel")


def centercroppad_cases():
    def ccp(n, xshape, shape, doc, axes=None, dtype=F):
        r = rng_for(n)
        x = f32(r, xshape) if dtype == F else r.integers(-9, 9, size=xshape).astype(dtype)
        attrs = {} if axes is None else {"axes": axes}
        add(n, 18, [node("CenterCropPad", ["x", "shape"], ["y"], **attrs)], [("x", x)],
            [("y", dtype)], [("shape", i64(shape))], doc=doc)

    ccp("centercroppad18_crop", (20, 10, 3), [10, 7, 3], "crops two axes")
    ccp("centercroppad18_pad", (10, 7, 3), [20, 10, 3], "pads two axes with zeros")
    ccp("centercroppad18_crop_and_pad", (20, 8, 3), [10, 11, 3], "crops one axis, pads another")
    ccp("centercroppad18_axes_hwc", (11, 10, 3), [8, 9], "axes [0, 1], odd differences",
        axes=[0, 1])
    ccp("centercroppad18_axes_chw", (3, 9, 10), [12, 7], "axes [1, 2], odd differences",
        axes=[1, 2])
    ccp("centercroppad18_neg_axes_int32", (2, 5, 6), [4, 9], "axes [-1, -2] on int32",
        axes=[-1, -2], dtype=np.int32)


# ------------------------------------------------------------------------------ elementwise
def elementwise_cases():
    r = rng_for("bitwise")
    for op, dt in (("BitwiseAnd", np.int32), ("BitwiseOr", np.uint8), ("BitwiseXor", np.int64),
                   ("BitwiseAnd", np.uint16)):
        n = "%s18_%s" % (op.lower(), np.dtype(dt).name)
        r = rng_for(n)
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        add(n, 18, [node(op, ["a", "b"], ["y"])],
            [("a", r.integers(lo, hi, size=(3, 4)).astype(dt)),
             ("b", r.integers(lo, hi, size=(4,)).astype(dt))], [("y", dt)],
            doc="%s on %s with broadcasting" % (op, np.dtype(dt).name))
    for dt in (np.int8, np.uint32):
        n = "bitwisenot18_%s" % np.dtype(dt).name
        r = rng_for(n)
        info = np.iinfo(dt)
        add(n, 18, [node("BitwiseNot", ["x"], ["y"])],
            [("x", r.integers(info.min, min(info.max, 100000), size=(3, 5)).astype(dt))],
            [("y", dt)], doc="BitwiseNot on %s" % np.dtype(dt).name)
    n = "mish18"
    add(n, 18, [node("Mish", ["x"], ["y"])], [("x", f32(rng_for(n), (3, 4, 5), -6, 6))],
        [("y", F)], doc="x * tanh(softplus(x))")
    n = "mish18_double"
    add(n, 18, [node("Mish", ["x"], ["y"])],
        [("x", rng_for(n).uniform(-30, 30, size=(17,)).astype(np.float64))], [("y", np.float64)],
        doc="Mish on float64 with large magnitudes")
    for approx in ("none", "tanh"):
        n = "gelu20_%s" % approx
        add(n, 20, [node("Gelu", ["x"], ["y"], approximate=approx)],
            [("x", f32(rng_for(n), (2, 3, 4), -4, 4))], [("y", F)],
            doc="Gelu (new in opset 20), approximate=%s" % approx)
    n = "isnan_isinf20"
    x = f32(rng_for(n), (2, 6))
    x[0, 1], x[1, 2], x[1, 4], x[0, 5] = np.nan, np.inf, -np.inf, np.nan
    add(n, 20, [node("IsNaN", ["x"], ["nan"]), node("IsInf", ["x"], ["inf"]),
                node("IsInf", ["x"], ["neg_inf"], detect_positive=0)],
        [("x", x)], [("nan", np.bool_), ("inf", np.bool_), ("neg_inf", np.bool_)],
        doc="IsNaN-20 and IsInf-20")
    n = "equal19"
    r = rng_for(n)
    add(n, 19, [node("Equal", ["a", "b"], ["y"]), node("Equal", ["c", "d"], ["z"])],
        [("a", r.integers(0, 3, size=(3, 4)).astype(np.int32)),
         ("b", r.integers(0, 3, size=(4,)).astype(np.int32)),
         ("c", np.array([1.0, 2.0, np.nan, -0.0], F)), ("d", np.array([1.0, 3.0, np.nan, 0.0], F))],
        [("y", np.bool_), ("z", np.bool_)], doc="Equal-19 on int32 (broadcast) and float")


# ------------------------------------------------------------------------------ quantization
def quantize_cases():
    # int8/uint8 at versions 19 and 21 (float8, int4 and block_size are not supported). Scales are
    # powers of two and x a multiple of 1/8, so x / scale is exact and often a tie (k + 0.5):
    # round half to even decides, and many values saturate.
    for opset in (19, 21):
        n = "quantizelinear_per_axis_op%d" % opset
        r = rng_for(n)
        x = (r.integers(-2400, 2400, size=(2, 3, 4)) / 8.0).astype(np.float32)
        add(n, opset, [node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, saturate=1)],
            [("x", x)], [("y", np.uint8)],
            [("s", np.array([0.25, 1.0, 4.0], np.float32)), ("z", np.array([0, 128, 255], np.uint8))],
            doc="uint8 per slice of axis 1 (scales 0.25, 1, 4; zero points 0, 128, 255), ties and "
                "saturation")
        n = "dequantizelinear_per_axis_op%d" % opset
        r = rng_for(n)
        add(n, opset, [node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)],
            [("x", r.integers(-128, 128, size=(3, 2, 2)).astype(np.int8))], [("y", F)],
            [("s", np.array([0.5, 0.125, 2.0], np.float32)), ("z", np.array([-128, 0, 127], np.int8))],
            doc="int8 per slice of axis 0, zero points at both ends of the range")
    n = "quantizelinear_output_dtype_op21"
    r = rng_for(n)
    x = (r.integers(-1200, 1200, size=(3, 4)) / 8.0).astype(np.float32)
    add(n, 21, [node("QuantizeLinear", ["x", "s"], ["y"], axis=-1, output_dtype=TensorProto.INT8),
                node("DequantizeLinear", ["y", "s"], ["d"], axis=-1)],
        [("x", x)], [("y", np.int8), ("d", F)],
        [("s", np.array([0.5, 1.0, 0.25, 2.0], np.float32))],
        doc="output_dtype int8 without a zero point, per slice of axis -1, and back")


# ------------------------------------------------------------------------------ signal
def dft_cases():
    # DFT-20 moved axis from an attribute (default 1) to an operand (default -2); the importer
    # makes the operand the attribute again.
    n = "dft20_default_axis"
    add(n, 20, [node("DFT", ["x"], ["y"])], [("x", f32(rng_for(n), (2, 3, 5, 1)))], [("y", F)],
        doc="real input of rank 4, no axis operand: the last signal dim (-2)")
    n = "dft20_axis_length_inverse"
    add(n, 20, [node("DFT", ["x", "len", "axis"], ["y"], inverse=1)],
        [("x", f32(rng_for(n), (2, 5, 3, 2)))], [("y", F)],
        [("len", i64(8)), ("axis", i64(1))],
        doc="complex input, axis operand 1, dft_length 8 (zero-padded), inverse")
    n = "dft20_onesided_cut"
    add(n, 20, [node("DFT", ["x", "len", "axis"], ["y"], onesided=1)],
        [("x", f32(rng_for(n), (1, 4, 6, 1)))], [("y", F)],
        [("len", i64(5)), ("axis", i64(-2))],
        doc="real input, onesided, dft_length 5 cutting the last signal dim")


# ------------------------------------------------------------------------------ casts, views
def cast_cases():
    for opset in (19, 21):
        n = "cast%d" % opset
        r = rng_for(n)
        x = f32(r, (3, 4), -300, 300)
        add(n, opset, [node("Cast", ["x"], ["i32"], to=TensorProto.INT32),
                       node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
                       node("Cast", ["x"], ["d"], to=TensorProto.DOUBLE, saturate=1),
                       node("Cast", ["x"], ["u8"], to=TensorProto.UINT8),
                       node("Cast", ["i32"], ["back"], to=TensorProto.FLOAT),
                       node("Cast", ["x"], ["b"], to=TensorProto.BOOL)],
            [("x", x)], [("i32", np.int32), ("h", np.float16), ("d", np.float64),
                         ("back", F), ("b", np.bool_)],
            doc="Cast-%d: float to int32, float16, double (saturate stated), bool and back" % opset)
        n = "castlike%d" % opset
        r = rng_for(n)
        add(n, opset, [node("CastLike", ["x", "like"], ["y"]), node("CastLike", ["i", "x"], ["z"])],
            [("x", f32(r, (2, 5), -50, 50)), ("like", np.zeros((1,), np.int64)),
             ("i", r.integers(-100, 100, size=(4,)).astype(np.int16))], [("y", np.int64), ("z", F)],
            doc="CastLike-%d: float to int64, int16 to float" % opset)


def view_cases():
    for opset in (19, 21):
        n = "constant_identity%d" % opset
        r = rng_for(n)
        add(n, opset, [node("Constant", [], ["c"], value_floats=[1.5, -2.0, 0.25]),
                       node("Constant", [], ["k"], value=numpy_helper.from_array(
                           np.array([[1], [2]], np.float32), "k") if onnx else None),
                       node("Add", ["x", "c"], ["s"]), node("Mul", ["s", "k"], ["m"]),
                       node("Identity", ["m"], ["y"])],
            [("x", f32(r, (2, 3)))], [("y", F)],
            doc="Constant-%d (value_floats, value), Identity-%d" % (opset, opset))
        n = "reshape%d" % opset
        r = rng_for(n)
        add(n, opset, [node("Reshape", ["x", "shape"], ["y"]),
                       node("Reshape", ["x", "shape2"], ["z"], allowzero=1)],
            [("x", f32(r, (2, 3, 4)))], [("y", F), ("z", F)],
            [("shape", i64([0, -1, 2])), ("shape2", i64([4, 6]))],
            doc="Reshape-%d: 0 copies a dim, -1 infers; allowzero=1 without zeros" % opset)
        n = "shape_size%d" % opset
        r = rng_for(n)
        add(n, opset, [node("Shape", ["x"], ["s"]), node("Shape", ["x"], ["t"], start=1, end=-1),
                       node("Shape", ["x"], ["u"], start=-2), node("Size", ["x"], ["n"])],
            [("x", f32(r, (2, 3, 4, 5)))],
            [("s", np.int64), ("t", np.int64), ("u", np.int64), ("n", np.int64)],
            doc="Shape-%d (start, end) and Size-%d" % (opset, opset))
        n = "squeeze_unsqueeze%d" % opset
        r = rng_for(n)
        add(n, opset, [node("Unsqueeze", ["x", "ax"], ["u"]),
                       node("Squeeze", ["u", "ax2"], ["y"]),
                       node("Squeeze", ["x"], ["z"])],
            [("x", f32(r, (3, 1, 4)))], [("u", F), ("y", F), ("z", F)],
            [("ax", i64([0, -1])), ("ax2", i64([0, 2]))],
            doc="Unsqueeze-%d and Squeeze-%d with axes operands" % (opset, opset))
    n = "flatten_transpose21"
    r = rng_for(n)
    add(n, 21, [node("Flatten", ["x"], ["f"], axis=2), node("Flatten", ["x"], ["g"], axis=-1),
                node("Transpose", ["x"], ["t"], perm=[2, 0, 3, 1]),
                node("Transpose", ["x"], ["u"])],
        [("x", f32(r, (2, 3, 4, 5)))], [("f", F), ("g", F), ("t", F), ("u", F)],
        doc="Flatten-21 (axis 2, -1) and Transpose-21 (perm, default)")
    for opset in (20, 21):
        n = "constantofshape%d" % opset
        add(n, opset, [node("ConstantOfShape", ["shape"], ["y"],
                            value=numpy_helper.from_array(np.array([7], np.int32), "v")
                            if onnx else None),
                       node("ConstantOfShape", ["shape"], ["z"])],
            [], [("y", np.int32), ("z", F)], [("shape", i64([2, 3]))],
            doc="ConstantOfShape-%d with an int32 value and the default" % opset)


# ------------------------------------------------------------------------------ pools, convs
def pool_cases():
    n = "averagepool19_dilations"
    add(n, 19, [node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2])],
        [("x", f32(rng_for(n), (1, 2, 5, 5)))], [("y", F)], doc="dilations 2 (new in version 19)")
    n = "averagepool19_dilations_pads_count_include_pad"
    add(n, 19, [node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2], dilations=[2, 3],
                     pads=[1, 1, 2, 1], strides=[2, 1], count_include_pad=1)],
        [("x", f32(rng_for(n), (2, 1, 7, 8)))], [("y", F)],
        doc="dilations with pads, strides, count_include_pad=1")
    n = "averagepool19_dilations_pads_ceil"
    add(n, 19, [node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2],
                     pads=[1, 1, 1, 1], strides=[2, 2], ceil_mode=1)],
        [("x", f32(rng_for(n), (1, 1, 6, 7)))], [("y", F)],
        doc="dilations with pads and ceil_mode, padding excluded from the count")
    n = "averagepool19_dilations_1d"
    add(n, 19, [node("AveragePool", ["x"], ["y"], kernel_shape=[3], dilations=[2], strides=[2])],
        [("x", f32(rng_for(n), (2, 3, 11)))], [("y", F)], doc="1-D with dilation 2")
    n = "lppool18"
    add(n, 18, [node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=2)],
        [("x", f32(rng_for(n), (1, 2, 5, 5)))], [("y", F)], doc="p=2")
    n = "lppool18_dilations_ceil"
    add(n, 18, [node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3, dilations=[2, 2],
                     strides=[2, 2], ceil_mode=1)],
        [("x", f32(rng_for(n), (1, 1, 7, 6)))], [("y", F)],
        doc="p=3, dilations and ceil_mode (new in version 18)")
    n = "lppool18_pads_p1"
    add(n, 18, [node("LpPool", ["x"], ["y"], kernel_shape=[3, 3], p=1, pads=[1, 1, 1, 1],
                     strides=[2, 2])],
        [("x", f32(rng_for(n), (1, 2, 6, 6)))], [("y", F)], doc="p=1 with pads and strides")
    n = "deformconv19"
    r = rng_for(n)
    add(n, 19, [node("DeformConv", ["x", "w", "offset", "b", "mask"], ["y"], kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1])],
        [("x", f32(r, (1, 2, 5, 5))), ("offset", f32(r, (1, 18, 5, 5), -1.5, 1.5))], [("y", F)],
        [("w", f32(r, (3, 2, 3, 3), -0.5, 0.5)), ("b", f32(r, (3,))),
         ("mask", f32(r, (1, 9, 5, 5), 0, 1))], doc="offsets, bias and mask, pads 1")
    n = "deformconv19_groups"
    r = rng_for(n)
    add(n, 19, [node("DeformConv", ["x", "w", "offset"], ["y"], kernel_shape=[2, 2],
                     strides=[2, 1], dilations=[1, 2], group=2, offset_group=2)],
        [("x", f32(r, (2, 4, 6, 6))), ("offset", f32(r, (2, 16, 3, 4), -2, 2))], [("y", F)],
        [("w", f32(r, (4, 2, 2, 2), -0.5, 0.5))],
        doc="group 2, offset_group 2, strides and dilations, no bias or mask")
