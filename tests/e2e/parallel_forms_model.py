#!/usr/bin/env python3
"""Two parallel forms real models write (issue #16), exported by PyTorch with PyTorch's outputs as
test data:
  - a mixture of 8 experts: a softmax gate, then sum(w[..., i:i+1] * expert_i(x)) — the eight
    expert MLPs are siblings on one input, and the weighted sum is a 16-operand elementwise chain
    that must stay within what the GPU map kernels take;
  - grouped-query attention: Q projected to 8 heads, K and V to 2 (narrower siblings of Q on the
    same input), each K/V head shared by 4 query heads.
`magnetoc report --target cuda` must show joint groups for both (tests/e2e/model_cases.sh, case
parallel_forms).

    /usr/bin/python3 tests/e2e/parallel_forms_model.py OUT_DIR
writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/{input_0,output_0..1}.pb.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_export import export_with_data  # noqa: E402


class Forms(torch.nn.Module):
    def __init__(self, d=64, experts=8, heads=8, kv_heads=2):
        super().__init__()
        self.gate = torch.nn.Linear(d, experts)
        self.experts = torch.nn.ModuleList(
            [torch.nn.Sequential(torch.nn.Linear(d, 96), torch.nn.GELU(), torch.nn.Linear(96, d))
             for _ in range(experts)])
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q = torch.nn.Linear(d, heads * self.hd)
        self.k = torch.nn.Linear(d, kv_heads * self.hd)
        self.v = torch.nn.Linear(d, kv_heads * self.hd)
        self.o = torch.nn.Linear(heads * self.hd, d)

    def forward(self, x):  # x: [tokens, d]
        w = torch.softmax(self.gate(x), dim=-1)
        moe = sum(w[:, i:i + 1] * e(x) for i, e in enumerate(self.experts))
        t = x.shape[0]
        q = self.q(x).reshape(t, self.heads, self.hd).transpose(0, 1)        # [H, T, hd]
        k = self.k(x).reshape(t, self.kv_heads, self.hd).transpose(0, 1)     # [KV, T, hd]
        v = self.v(x).reshape(t, self.kv_heads, self.hd).transpose(0, 1)
        rep = self.heads // self.kv_heads
        k = k.repeat_interleave(rep, dim=0)
        v = v.repeat_interleave(rep, dim=0)
        a = torch.softmax(q @ k.transpose(1, 2) / self.hd ** 0.5, dim=-1) @ v  # [H, T, hd]
        gqa = self.o(a.transpose(0, 1).reshape(t, -1))
        return moe, gqa


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = Forms().eval()
    x = torch.randn(16, 64)
    export_with_data(model, (x,), out, ["x"], ["moe", "gqa"])


if __name__ == "__main__":
    main()
