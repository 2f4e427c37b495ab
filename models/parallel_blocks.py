"""Small hand-written models whose whole point is parallel structure (forks, sibling groups,
joins), for testing Magneto's ParallelAnalysis / ParallelCoOptimize quickly. Exported by
export.py like the torchvision models (`--models inception_block,mha_block,multi_tower`).

- inception_block: stem conv, then an Inception-A-like block: 1x1 / 1x1->3x3 / 1x1->3x3->3x3 /
  avgpool->1x1 branches on one fork, joined by Concat; three 1x1 heads share the input (wide
  merge), the second-step 3x3 convs of two branches are siblings (joint kernel).
- mha_block: transformer encoder layer written out by hand: Q, K, V projections share the input
  (wide merge into one GEMM), per-head attention, output projection, residual Add, layer norm,
  MLP.
- multi_tower: three MLP towers of different depth and width on one input, joined by Concat
  (batch merge / joint kernel across towers of different shapes).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, k, stride=1):
        super().__init__(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class InceptionBlock(nn.Module):
    def __init__(self, cin=16, width=32, classes=10):
        super().__init__()
        self.stem = ConvBNReLU(cin, width, 3)
        self.b1 = ConvBNReLU(width, 16, 1)
        self.b3 = nn.Sequential(ConvBNReLU(width, 16, 1), ConvBNReLU(16, 24, 3))
        self.b33 = nn.Sequential(ConvBNReLU(width, 16, 1), ConvBNReLU(16, 24, 3), ConvBNReLU(24, 24, 3))
        self.bp = ConvBNReLU(width, 8, 1)
        self.head = nn.Conv2d(16 + 24 + 24 + 8, classes, 1)

    def forward(self, x):
        x = self.stem(x)
        pooled = F.avg_pool2d(x, 3, 1, 1)
        y = torch.cat([self.b1(x), self.b3(x), self.b33(x), self.bp(pooled)], 1)
        return self.head(y).mean(dim=(2, 3))


class MHABlock(nn.Module):
    def __init__(self, dim=64, heads=4, mlp=128):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(dim // heads)  # a Python float: no traced shape arithmetic
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)

    def forward(self, x):  # x: [B, T, C]
        b, t, c = x.shape
        h, d = self.heads, c // self.heads

        def split(z):
            return z.reshape(b, t, h, d).transpose(1, 2)  # [B, H, T, D]

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * self.scale, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, c)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class MultiTower(nn.Module):
    def __init__(self, dim=256, classes=16):
        super().__init__()
        self.t1 = nn.Sequential(nn.Linear(dim, 128), nn.ReLU())
        self.t2 = nn.Sequential(nn.Linear(dim, 192), nn.ReLU(), nn.Linear(192, 96), nn.ReLU())
        self.t3 = nn.Sequential(nn.Linear(dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Sigmoid(),
                                nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(128 + 96 + 32, classes)

    def forward(self, x):
        return self.head(torch.cat([self.t1(x), self.t2(x), self.t3(x)], 1))


# name -> (constructor, full input shape, small input shape, description)
MODELS = {
    "inception_block": (InceptionBlock, (1, 16, 56, 56), (1, 16, 12, 12),
                        "hand-written Inception-A-like block (models/parallel_blocks.py)"),
    "mha_block": (MHABlock, (1, 128, 64), (1, 16, 64),
                  "hand-written transformer encoder layer, Q/K/V siblings (models/parallel_blocks.py)"),
    "multi_tower": (MultiTower, (8, 256), (2, 256),
                    "three MLP towers joined by Concat (models/parallel_blocks.py)"),
}
