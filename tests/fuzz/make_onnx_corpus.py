#!/usr/bin/python3
# Writes the seed corpus of fuzz_onnx_import into tests/fuzz/corpus_onnx (committed; run again
# only to change it):  /usr/bin/python3 tests/fuzz/make_onnx_corpus.py
#   - node_*.onnx: small models of ONNX's backend node tests (Debian's libonnx-testdata), one per
#     op family, with integer inputs (shapes, axes, indices) made initializers from the test's
#     data, so that they import without --bind;
#   - frontend_*.onnx: the models of tests/data/frontend (old opsets, legacy forms, unsorted,
#     control flow);
#   - bad_*.onnx: a selection of the bad-model corpus (tests/bad_models/make_bad_models.py);
#   - regress_*.onnx (not written here): inputs that crashed fuzz_onnx_import before their fix.
import os
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "corpus_onnx")
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
NODES = """conv_with_strides_padding gemm_default_no_bias lstm_defaults gru_defaults
resize_upsample_scales_nearest slice gather_0 constant_pad einsum_batch_matmul
reshape_reduced_dims maxpool_2d_pads averagepool_2d_same_upper batchnorm_example softmax_axis_1
transpose_all_permutations_0 split_variable_parts_1d concat_2d_axis_0 expand_dim_changed shape
cast_FLOAT_to_DOUBLE reduce_mean_keepdims_example where_example convtranspose instancenorm_example
tile onehot_with_axis range_float_type_positive_delta squeeze unsqueeze_axis_0 matmul_3d
depthtospace_example clip_default_min argmax_default_axis_example""".split()
FRONTEND = """valid legacy opset6 shape_reshape unsorted symbolic init_short cycle
unknown_domain loop loop_cond if_loop scan_reverse loop_undefined""".split()
BAD = """truncated random_bytes huge_length_prefix duplicate_tensor conv_zero_strides
conv_pads_wrong_length matmul_mismatch reshape_incompatible concat_axis_out_of_range
gather_index_out_of_range split_sizes_not_summing transpose_not_permutation attribute_no_value
raw_data_wrong_length initializer_dims_overflow shape_of_huge_input bytes_overflow_f64
arena_overflow external_escape input_bytes_overflow pad_overflow converter_zero_stride
constant_of_shape_rank16""".split()
INT_TYPES = {TensorProto.INT64, TensorProto.INT32}

os.makedirs(OUT, exist_ok=True)
for name in NODES:
    d = os.path.join(NODE_TESTS, "test_" + name)
    m = onnx.load(os.path.join(d, "model.onnx"))
    inputs = list(m.graph.input)
    for k, vi in enumerate(inputs):
        if vi.type.tensor_type.elem_type not in INT_TYPES:
            continue
        t = TensorProto()
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "rb") as f:
            t.ParseFromString(f.read())
        t.name = vi.name
        m.graph.initializer.append(t)
        m.graph.input.remove(vi)
    with open(os.path.join(OUT, "node_%s.onnx" % name), "wb") as f:
        f.write(m.SerializeToString())
for name in FRONTEND:
    shutil.copy(os.path.join(ROOT, "tests/data/frontend", name + ".onnx"),
                os.path.join(OUT, "frontend_%s.onnx" % name))
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([sys.executable, os.path.join(ROOT, "tests/bad_models/make_bad_models.py"), tmp],
                   check=True, stdout=subprocess.DEVNULL)
    for name in BAD:
        shutil.copy(os.path.join(tmp, "models", name + ".onnx"), os.path.join(OUT, "bad_%s.onnx" % name))
print("corpus_onnx: %d files" % len(os.listdir(OUT)))
