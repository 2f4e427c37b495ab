"""What the opset 18-21 cases are made of (tests/opset/make_opset_tests.py): the operator-version
tables, the Case record and its registry CASES, and the small builders (node, add, graph, seeded
inputs) that tests/opset/cases_ops.py and cases_graphs.py write their cases with."""
import os
import zlib

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper  # noqa: F401 (used by the case files)
except ImportError:  # --list works without onnx (the conformance generator may run anywhere)
    onnx = None
    TensorProto = helper = numpy_helper = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IR_VERSION = 8

# The opset versions in which each operator used by the cases changed (ONNX's Changelog.md).
# A model of opset V runs version max(v <= V) of an operator.
OP_VERSIONS = {
    "Add": [1, 6, 7, 13, 14], "AveragePool": [1, 7, 10, 11, 19],
    "BitwiseAnd": [18], "BitwiseNot": [18], "BitwiseOr": [18], "BitwiseXor": [18],
    "Cast": [1, 6, 9, 13, 19, 21], "CastLike": [15, 19, 21], "CenterCropPad": [18],
    "Col2Im": [18], "Concat": [1, 4, 11, 13], "Constant": [1, 9, 11, 12, 13, 19, 21],
    "ConstantOfShape": [9, 20, 21], "Conv": [1, 11], "DeformConv": [19], "DFT": [17, 20],
    "Div": [1, 6, 7, 13, 14],
    "Equal": [1, 7, 11, 13, 19], "Flatten": [1, 9, 11, 13, 21], "Gelu": [20],
    "GroupNormalization": [18, 21], "Identity": [1, 13, 14, 16, 19, 21], "IsInf": [10, 20],
    "IsNaN": [9, 13, 20], "If": [1, 11, 13, 16, 19, 21], "Loop": [1, 11, 13, 16, 19, 21], "LayerNormalization": [17], "LpPool": [1, 2, 11, 18],
    "MatMul": [1, 9, 13], "Mish": [18], "QuantizeLinear": [10, 13, 19, 21],
    "DequantizeLinear": [10, 13, 19, 21], "Mul": [1, 6, 7, 13, 14], "Pad": [1, 2, 11, 13, 18, 19, 21],
    "ReduceL1": [1, 11, 13, 18], "ReduceL2": [1, 11, 13, 18], "ReduceLogSum": [1, 11, 13, 18],
    "ReduceLogSumExp": [1, 11, 13, 18], "ReduceMax": [1, 11, 12, 13, 18, 20],
    "ReduceMean": [1, 11, 13, 18], "ReduceMin": [1, 11, 12, 13, 18, 20],
    "ReduceProd": [1, 11, 13, 18], "ReduceSum": [1, 11, 13], "ReduceSumSquare": [1, 11, 13, 18],
    "Relu": [1, 6, 13, 14], "Reshape": [1, 5, 13, 14, 19, 21], "Resize": [10, 11, 13, 18, 19],
    "Scan": [8, 9, 11, 16, 19, 21], "ScatterElements": [11, 13, 16, 18], "ScatterND": [11, 13, 16, 18],
    "Shape": [1, 13, 15, 19, 21], "Sigmoid": [1, 6, 13], "Size": [1, 13, 19, 21],
    "Softmax": [1, 11, 13], "Split": [1, 2, 11, 13, 18], "Squeeze": [1, 11, 13, 21],
    "Transpose": [1, 13, 21], "Unsqueeze": [1, 11, 13, 21],
}

# Operator versions of opsets 18 to 21 that no case covers, because Magneto does not support the
# operator, or what the version added, at all (docs/CONFORMANCE.md lists them with the reason). With OP_VERSIONS this is every
# operator version ONNX introduced in opsets 18 to 21.
UNSUPPORTED = {
    "OptionalGetElement": ([18], "optional types are not supported"),
    "OptionalHasElement": ([18], "optional types are not supported"),
    "QLinearMatMul": ([21], "version 21 adds float8 operands, which Magneto lacks; int8/uint8 "
                            "QLinearMatMul runs on the CPU target only (docs/QUANTIZATION.md)"),
    "AffineGrid": ([20], "not implemented"),
    "GridSample": ([20], "version 20's N-d inputs are not implemented; 4-D inputs run version "
                         "16's CPU kernel (which accepts 20's mode names linear and cubic)"),
    "ImageDecoder": ([20], "string/bytes inputs are not supported"),
    "RegexFullMatch": ([20], "string tensors are not supported"),
    "StringConcat": ([20], "string tensors are not supported"),
    "StringSplit": ([20], "string tensors are not supported"),
}


def op_version(op, opset):
    return max(v for v in OP_VERSIONS[op] if v <= opset)


class Case:
    def __init__(self, name, opset, nodes, inputs, outputs, inits=(), doc=""):
        self.name, self.opset, self.nodes, self.doc = name, opset, nodes, doc
        self.inputs = list(inputs)    # [(name, np.ndarray)]: graph inputs, written as input_K.pb
        self.outputs = list(outputs)  # [(name, np dtype)]
        self.inits = list(inits)      # [(name, np.ndarray)]: initializers

    def ops(self):
        seen = []
        for n in self.nodes:
            if n.op_type not in seen:
                seen.append(n.op_type)
        return seen

    def covers(self):
        return ["%s-%d" % (op, op_version(op, self.opset)) for op in self.ops()]


CASES = []


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def node(op, ins, outs, **attrs):
    if onnx is None:  # --list only needs op types
        class N:
            op_type = op
        return N()
    return helper.make_node(op, ins, outs, name=outs[0] + "_node", **attrs)


def add(name, opset, nodes, inputs, outputs, inits=(), doc=""):
    assert not any(c.name == name for c in CASES), name
    for n in nodes:
        assert n.op_type in OP_VERSIONS, n.op_type
    CASES.append(Case(name, opset, nodes, inputs, outputs, inits, doc))


def f32(rng, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i64(v):
    return np.array(v, dtype=np.int64)


F = np.float32


def graph(nodes, name, ins, outs):
    """A subgraph (If branch, Loop or Scan body); None under --list, which needs no attributes."""
    if onnx is None:
        return None
    vi = lambda n, t, shape: helper.make_tensor_value_info(n, t, shape)
    return helper.make_graph(nodes, name, [vi(*i) for i in ins], [vi(*o) for o in outs])
