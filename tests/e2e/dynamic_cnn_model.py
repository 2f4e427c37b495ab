# Makes the dynamic-shape test model of issue #17 (docs/DYNAMIC_SHAPES.md): a tiny 1-D CNN
# exported from PyTorch with dynamic_axes {x: batch, seq}: Conv1d(stride 2) + BatchNorm + ReLU,
# a second Conv1d, a mean over the length, x.view(x.size(0), -1) (Shape -> Gather -> Unsqueeze ->
# Concat -> Reshape: shape data of the batch) and a Linear. Writes OUT/model.onnx and one test data
# set per binding (batch, seq) in BINDINGS, computed by PyTorch.
#   /usr/bin/python3 tests/e2e/dynamic_cnn_model.py OUT [B:T ...]   (default 1:5 3:17 8:64)
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

out = sys.argv[1]
bindings = [tuple(int(x) for x in b.split(":")) for b in sys.argv[2:]] or [(1, 5), (3, 17), (8, 64)]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


class DynCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(4, 8, 3, stride=2, padding=1)
        self.bn = torch.nn.BatchNorm1d(8)
        self.conv2 = torch.nn.Conv1d(8, 6, 3, padding=1)
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv1(x)))
        y = torch.relu(self.conv2(y))
        y = y.mean(dim=2, keepdim=True)
        y = y.view(y.size(0), -1)
        return self.fc(y)


m = DynCnn()
# Settle BatchNorm's running statistics on random data, then freeze them.
m.train()
with torch.no_grad():
    for _ in range(20):
        m(torch.randn(16, 4, 32) * 1.5 + 0.3)
m.eval()
path = os.path.join(out, "model.onnx")
torch.onnx.export(m, torch.randn(2, 4, 16), path, input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "batch", 2: "seq"}, "y": {0: "batch"}}, opset_version=13)
onnx.checker.check_model(onnx.load(path))
rng = np.random.default_rng(1)
for k, (b, t) in enumerate(bindings):
    x = rng.standard_normal((b, 4, t)).astype(np.float32)
    with torch.no_grad():
        y = m(torch.from_numpy(x)).numpy()
    d = os.path.join(out, f"test_data_set_{k}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
