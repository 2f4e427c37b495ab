#!/usr/bin/env python3
"""Parallel branches with no shared input tensor (issue #16), exported by PyTorch with PyTorch's
outputs as test data:
  - four MLP towers, each on its own part of torch.split(x) (a Split node with four outputs),
    joined by a concat;
  - a two-tower recommender: a user tower on input 1 and an item tower on input 2, joined by
    their dot product;
  - three detector heads, each on its own feature-map input of a different spatial size.
ParallelAnalysis groups their layers step by step from the Split's outputs and from the graph
inputs; `magnetoc report --target cuda` must show the groups and fewer launches
(tests/e2e/model_cases.sh, case parallel_roots).

    /usr/bin/python3 tests/e2e/parallel_roots_model.py OUT_DIR
writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/{input_0..5,output_0..2}.pb.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_export import export_with_data  # noqa: E402


def mlp(i, h, o):
    return torch.nn.Sequential(torch.nn.Linear(i, h), torch.nn.ReLU(), torch.nn.Linear(h, o))


class Roots(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.towers = torch.nn.ModuleList([mlp(32, 64, 16) for _ in range(4)])
        self.user = mlp(48, 64, 32)
        self.item = mlp(24, 64, 32)
        self.heads = torch.nn.ModuleList(
            [torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.Conv2d(16, 6, 1)) for _ in range(3)])

    def forward(self, x, user, item, p3, p4, p5):
        parts = torch.split(x, 32, dim=1)
        towers = torch.cat([t(p) for t, p in zip(self.towers, parts)], dim=1)
        score = (self.user(user) * self.item(item)).sum(dim=1)
        heads = [h(p).flatten(2) for h, p in zip(self.heads, (p3, p4, p5))]
        return towers, score, torch.cat(heads, dim=2)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = Roots().eval()
    inputs = (torch.randn(8, 128), torch.randn(8, 48), torch.randn(8, 24),
              torch.randn(1, 16, 16, 16), torch.randn(1, 16, 8, 8), torch.randn(1, 16, 4, 4))
    in_names = ["x", "user", "item", "p3", "p4", "p5"]
    out_names = ["towers", "score", "heads"]
    export_with_data(model, inputs, out, in_names, out_names)


if __name__ == "__main__":
    main()
