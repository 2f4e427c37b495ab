#!/usr/bin/env python3
"""Three recurrent layers reading the same input (an LSTM, a bidirectional GRU, a bidirectional
LSTM), exported by PyTorch with PyTorch's outputs as test data. ParallelAnalysis makes them one
sibling group that parallel-co-optimize runs as a joint kernel on the GPU targets, so the check
(`magnetoc check --target cuda --emulate`, ctest e2e.gpu_recurrent_joint) covers a joint group
whose members have two phases: the projections and R transposes share the first launch, the
three time loops the second (docs/GPU_TARGET.md, Phases).

    /usr/bin/python3 tests/e2e/recurrent_joint_model.py OUT_DIR
writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/{input_0,output_0..4}.pb.
"""
import os
import sys
import warnings

import torch
from onnx import numpy_helper


class Siblings(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.LSTM(16, 24)
        self.b = torch.nn.GRU(16, 40, bidirectional=True)
        self.c = torch.nn.LSTM(16, 20, bidirectional=True)

    def forward(self, x):
        ya, _ = self.a(x)
        yb, hb = self.b(x)
        yc, (_, cc) = self.c(x)
        return ya, yb, hb, yc, cc


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    torch.manual_seed(0)
    model = Siblings().eval()
    x = torch.randn(6, 3, 16)
    with torch.no_grad():
        ys = model(x)
    names = ["ya", "yb", "hb", "yc", "cc"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"), opset_version=13,
                          input_names=["x"], output_names=names)
    def write(path, array, name):
        with open(os.path.join(out, "test_data_set_0", path), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    write("input_0.pb", x.numpy(), "x")
    for i, (name, y) in enumerate(zip(names, ys)):
        write(f"output_{i}.pb", y.numpy(), name)


if __name__ == "__main__":
    main()
