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

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_export import export_with_data  # noqa: E402


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
    torch.manual_seed(0)
    model = Siblings().eval()
    x = torch.randn(6, 3, 16)
    export_with_data(model, (x,), out, ["x"], ["ya", "yb", "hb", "yc", "cc"])


if __name__ == "__main__":
    main()
