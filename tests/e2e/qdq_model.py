#!/usr/bin/env python3
"""Writes a QDQ model (QuantizeLinear/DequantizeLinear around a Conv and a MatMul, as quantization
tools emit them) and its input; the expected outputs are onnxruntime-node's (model_cases.sh runs
tools/ort/run_ort.js on this input):

    x -> Q(uint8, zp 128) -> DQ -> Conv(DQ(int8 W, per output channel, axis 0), float bias)
      -> Relu -> Q(uint8) -> DQ -> Flatten -> MatMul(DQ(int8 W, per column, axis 1))
      -> Q(int8, zp -3) -> yq;  DQ(yq) -> y

Every scale is a power of two and every value a small multiple of one, so each float32 sum and
product on the way is exact in any order: Magneto (which dequantizes and computes the Conv and
MatMul in float) and onnxruntime (which may fuse the same pattern into integer QLinearConv /
QLinearMatMul) must agree exactly. The input and the scales are chosen so that many quotients
are exact ties (x / scale = k + 0.5: round half to even decides) and many saturate at 0/255 and
-128/127.

usage: qdq_model.py OUT_DIR   (writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/input_0.pb)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(18)
    n, c, hw, m, k_out = 2, 3, 4, 4, 10
    # x / 2^-5 is a half-integer for odd multiples of 2^-6: ties; |x| up to 5 saturates 0 and 255.
    x = (rng.integers(-320, 321, size=(n, c, hw, hw)) * 2.0**-6).astype(np.float32)
    wc = rng.integers(-2, 3, size=(m, c, 3, 3)).astype(np.int8)
    wc_scale = np.array([2.0**-3, 2.0**-4, 2.0**-3, 2.0**-2], dtype=np.float32)
    bias = (rng.integers(-64, 65, size=(m,)) * 2.0**-8).astype(np.float32)
    wm = rng.integers(-1, 2, size=(m * hw * hw, k_out)).astype(np.int8)
    wm_scale = np.full((k_out,), 2.0**-3, dtype=np.float32)
    wm_scale[::2] = 2.0**-2
    inits = [
        scalar("x_scale", 2.0**-5, np.float32), scalar("x_zp", 128, np.uint8),
        numpy_helper.from_array(wc, "wc_q"), numpy_helper.from_array(wc_scale, "wc_scale"),
        numpy_helper.from_array(np.zeros((m,), np.int8), "wc_zp"),
        numpy_helper.from_array(bias, "bias"),
        scalar("h_scale", 2.0**-6, np.float32), scalar("h_zp", 0, np.uint8),
        numpy_helper.from_array(wm, "wm_q"), numpy_helper.from_array(wm_scale, "wm_scale"),
        numpy_helper.from_array(np.zeros((k_out,), np.int8), "wm_zp"),
        scalar("y_scale", 2.0**-5, np.float32), scalar("y_zp", -3, np.int8),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="q_x"),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["wc_q", "wc_scale", "wc_zp"], ["wc"], name="dq_wc",
                         axis=0),
        helper.make_node("Conv", ["xd", "wc", "bias"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        helper.make_node("QuantizeLinear", ["relu", "h_scale", "h_zp"], ["hq"], name="q_h"),
        helper.make_node("DequantizeLinear", ["hq", "h_scale", "h_zp"], ["hd"], name="dq_h"),
        helper.make_node("Flatten", ["hd"], ["flat"], name="flatten", axis=1),
        helper.make_node("DequantizeLinear", ["wm_q", "wm_scale", "wm_zp"], ["wm"], name="dq_wm",
                         axis=1),
        helper.make_node("MatMul", ["flat", "wm"], ["mm"], name="matmul"),
        helper.make_node("QuantizeLinear", ["mm", "y_scale", "y_zp"], ["yq"], name="q_y"),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="dq_y"),
    ]
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("yq", TensorProto.INT8, [n, k_out]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k_out])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())


if __name__ == "__main__":
    main()
