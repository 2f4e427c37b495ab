"""The zoo's hand-written workloads (issue #5): well-known architectures with parallel structure,
written out in PyTorch with seeded random weights and exported by export.py like the torchvision
models (`--models nasnet_a_mobile,lstm_lm,...`). Each entry of MODELS has a full-size and a small
(CI) constructor; the small ones keep the structure and shrink widths, depths and sizes.

- nasnet_a_mobile: NASNet-A Mobile (Zoph et al. 2018), normal and reduction cells written out:
  separable convs, avg/max pools and identity branches combined pairwise by Add, cell outputs
  joined by Concat; factorized reductions where the previous cell's output is twice as large.
- lstm_lm: word-level LSTM language model (embedding, 2-layer nn.LSTM -> two ONNX LSTM ops,
  linear decoder over the vocabulary).
- seq2seq: LSTM encoder (ONNX LSTM op) and an 8-step unrolled LSTMCell decoder with dot
  attention over the encoder outputs; teacher-forced target tokens are a graph input.
- deepspeech2: DeepSpeech 2 acoustic model: 2 Conv2d+BN+Hardtanh over a spectrogram, then
  bidirectional GRU layers (ONNX GRU ops, directions summed), then a linear classifier.
- bert_layers: BERT encoder layers (post-LN, separate Q/K/V nn.Linear, erf GELU FFN).
- switch_moe: Switch-Transformer MoE feed-forward layer: router + softmax + top-1, every expert
  computed densely and combined by a one-hot mask times the router probability (static graph).
- mixtral_moe: Mixtral-style sparse MoE feed-forward block: x + the top-2 experts of a router
  over 8 SwiGLU experts, weighted by the softmax of the two chosen logits (TopK with K = 2, the
  MoE router's op); every expert computed densely, combined through a one-hot of the top-2
  indices (static graph).
- yolox_heads: YOLOX decoupled heads over three feature levels (stem, cls and reg towers,
  cls/reg/obj predictions, concatenated over levels).
- yolov8: YOLOv8n end to end as ultralytics exports it: C2f blocks (Split, chained bottlenecks,
  Concat), SPPF (chained max pools), SiLU everywhere, a PAN neck of Upsample + Concat, decoupled
  box (DFL) and class heads per level, the DFL expectation and the box decoding against the
  anchor grid (issue #41's YOLOv8-style detector, issue #40's modern zoo).
- din: Deep Interest Network: behaviour-sequence and candidate embeddings, attention MLP (local
  activation unit) over the sequence, masked sum pooling, deep tower + linear part, sigmoid.
- gru_greedy_decoder: greedy decoding with a GRU decoder, exported as a real ONNX Loop (a constant
  trip count; the hidden state and the token loop-carried, the tokens and logits scan outputs):
  Magneto unrolls it on import (src/frontend/onnx_control_flow.cpp). Its early-exit variant
  (eos=...) stops on a data-dependent condition, which Magneto refuses.
- gpt2_kv: GPT-2-style decoder with a KV cache (issue #40): token + position embeddings, pre-LN
  blocks (fused QKV Linear, causal attention over the cache's keys and the new ones, GELU MLP),
  final LayerNorm, tied LM head. Inputs input_ids [batch, seq], past_k/past_v [layers, batch,
  heads, past, head_dim]; outputs logits and present_k/present_v (past + seq positions). One
  library serves prefill (past = 0, an empty cache) and decode (seq = 1).
"""
import math
from typing import List, NamedTuple, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Input(NamedTuple):
    """One graph input: export.py makes seeded data for it (randn, or integers in [low, high))."""
    name: str
    shape: Tuple[int, ...]
    dtype: str = "float32"
    low: int = 0
    high: int = 0


# ---------------------------------------------------------------------------------------- NASNet
class SeparableConv(nn.Sequential):
    """Depthwise kxk (stride s) then pointwise 1x1, no bias (TF's separable_conv2d)."""

    def __init__(self, cin, cout, k, stride):
        super().__init__(nn.Conv2d(cin, cin, k, stride, k // 2, groups=cin, bias=False),
                         nn.Conv2d(cin, cout, 1, bias=False))


class BranchSeparables(nn.Sequential):
    """NASNet's sep branch: ReLU-sep(stride s)-BN-ReLU-sep-BN; the first sep keeps cin channels
    unless `stem` (cell_stem_0's right branches go straight to cout)."""

    def __init__(self, cin, cout, k, stride, stem=False):
        mid = cout if stem else cin
        super().__init__(nn.ReLU(), SeparableConv(cin, mid, k, stride), nn.BatchNorm2d(mid, eps=1e-3),
                         nn.ReLU(), SeparableConv(mid, cout, k, 1), nn.BatchNorm2d(cout, eps=1e-3))


class ReluConvBN(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.ReLU(), nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout, eps=1e-3))


class FactorizedReduction(nn.Module):
    """Halves the spatial size of the previous cell's output: two 1x1 stride-2 paths, the second
    shifted by one pixel (pad right/bottom, crop top/left), concatenated, then BN."""

    def __init__(self, cin, cout):
        super().__init__()
        self.path_1 = nn.Conv2d(cin, cout // 2, 1, bias=False)
        self.path_2 = nn.Conv2d(cin, cout - cout // 2, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=1e-3)

    def forward(self, x):
        x = F.relu(x)
        p1 = self.path_1(F.avg_pool2d(x, 1, 2))
        p2 = F.pad(x, (0, 1, 0, 1))[:, :, 1:, 1:]
        p2 = self.path_2(F.avg_pool2d(p2, 1, 2))
        return self.bn(torch.cat([p1, p2], 1))


def _avg3(stride):
    return nn.AvgPool2d(3, stride, 1, count_include_pad=False)


def _max3(stride):
    return nn.MaxPool2d(3, stride, 1)


class NormalCell(nn.Module):
    """NASNet-A normal cell: 5 pairwise combinations of the two adjusted inputs (left: previous
    cell, right: this cell's input), concatenated with the left input: 6*f channels out."""

    def __init__(self, c_prev, c_in, f, reduce_prev):
        super().__init__()
        self.adjust_left = FactorizedReduction(c_prev, f) if reduce_prev else ReluConvBN(c_prev, f)
        self.adjust_right = ReluConvBN(c_in, f)
        self.c0_left, self.c0_right = BranchSeparables(f, f, 5, 1), BranchSeparables(f, f, 3, 1)
        self.c1_left, self.c1_right = BranchSeparables(f, f, 5, 1), BranchSeparables(f, f, 3, 1)
        self.c2_left = _avg3(1)
        self.c3_left, self.c3_right = _avg3(1), _avg3(1)
        self.c4_left = BranchSeparables(f, f, 3, 1)

    def forward(self, x, x_prev):
        left, right = self.adjust_left(x_prev), self.adjust_right(x)
        c0 = self.c0_left(right) + self.c0_right(left)
        c1 = self.c1_left(left) + self.c1_right(left)
        c2 = self.c2_left(right) + left
        c3 = self.c3_left(left) + self.c3_right(left)
        c4 = self.c4_left(right) + right
        return torch.cat([left, c0, c1, c2, c3, c4], 1)


class ReductionCell(nn.Module):
    """NASNet-A reduction cell: stride-2 separable convs and pools, 4*f channels out at half the
    size. `stem` is cell_stem_0 (its right input is the raw stem: no adjustment, sep branches
    from c_in channels)."""

    def __init__(self, c_prev, c_in, f, reduce_prev=False, stem=False):
        super().__init__()
        self.stem = stem
        if not stem:
            self.adjust_left = FactorizedReduction(c_prev, f) if reduce_prev else ReluConvBN(c_prev, f)
        self.adjust_right = ReluConvBN(c_in, f)
        cl = c_in if stem else f  # channels of the left operand
        self.c0_left = BranchSeparables(f, f, 5, 2)
        self.c0_right = BranchSeparables(cl, f, 7, 2, stem=stem)
        self.c1_left, self.c1_right = _max3(2), BranchSeparables(cl, f, 7, 2, stem=stem)
        self.c2_left, self.c2_right = _avg3(2), BranchSeparables(cl, f, 5, 2, stem=stem)
        self.c3_left = _avg3(1)
        self.c4_left, self.c4_right = BranchSeparables(f, f, 3, 1), _max3(2)

    def forward(self, x, x_prev):
        right = self.adjust_right(x)
        left = x if self.stem else self.adjust_left(x_prev)
        c0 = self.c0_left(right) + self.c0_right(left)
        c1 = self.c1_left(right) + self.c1_right(left)
        c2 = self.c2_left(right) + self.c2_right(left)
        c3 = self.c3_left(c0) + c1
        c4 = self.c4_left(c0) + self.c4_right(right)
        return torch.cat([c1, c2, c3, c4], 1)


class NASNetAMobile(nn.Module):
    """NASNet-A Mobile: stem conv, two reduction stem cells, then `repeats` normal cells per stage
    with reduction cells between the three stages (NASNet-A 4 @ 1056: repeats=4, filters=44)."""

    def __init__(self, repeats=4, filters=44, stem_filters=32, classes=1000):
        super().__init__()
        self.conv0 = nn.Sequential(nn.Conv2d(3, stem_filters, 3, 2, 0, bias=False),
                                   nn.BatchNorm2d(stem_filters, eps=1e-3))
        f0, f1 = filters // 4, filters // 2
        self.cell_stem_0 = ReductionCell(stem_filters, stem_filters, f0, stem=True)
        self.cell_stem_1 = ReductionCell(stem_filters, 4 * f0, f1, reduce_prev=True)
        cells = []
        c_prev, c_in = 4 * f0, 4 * f1
        for stage in range(3):
            f = filters * 2 ** stage
            if stage > 0:
                cells.append(ReductionCell(c_prev, c_in, f))
                c_prev, c_in = c_in, 4 * f
            for i in range(repeats):
                cells.append(NormalCell(c_prev, c_in, f, reduce_prev=(i == 0)))
                c_prev, c_in = c_in, 6 * f
        self.cells = nn.ModuleList(cells)
        self.classifier = nn.Linear(c_in, classes)

    def forward(self, x):
        x_conv0 = self.conv0(x)
        x_stem_0 = self.cell_stem_0(x_conv0, None)
        prev, cur = x_conv0, x_stem_0
        prev, cur = cur, self.cell_stem_1(cur, prev)
        for cell in self.cells:
            prev, cur = cur, cell(cur, prev)
        return self.classifier(F.relu(cur).mean(dim=(2, 3)))


# ------------------------------------------------------------------------------ recurrent models
class LSTMLanguageModel(nn.Module):
    """Word-level LM (PyTorch's word_language_model, Zaremba's medium config): embedding, 2-layer
    LSTM, linear decoder. tokens: [seq, batch] int64 -> logits [seq, batch, vocab]."""

    def __init__(self, vocab=10000, emb=650, hidden=650, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        y, _ = self.rnn(self.embed(tokens))
        return self.decoder(y)


class Seq2Seq(nn.Module):
    """LSTM encoder-decoder with Luong dot attention. The decoder is unrolled for the target's
    fixed length and teacher-forced (target tokens are an input); each step: LSTMCell, attention
    over the encoder outputs, tanh(W[h; context]), projection onto the vocabulary.
    src: [S, B] int64, tgt: [T, B] int64 -> logits [T, B, vocab]."""

    def __init__(self, vocab=10000, emb=512, hidden=512):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, emb)
        self.tgt_embed = nn.Embedding(vocab, emb)
        self.encoder = nn.LSTM(emb, hidden)
        self.cell = nn.LSTMCell(emb, hidden)
        self.combine = nn.Linear(2 * hidden, hidden)
        self.project = nn.Linear(hidden, vocab)

    def forward(self, src, tgt):
        enc, (h, c) = self.encoder(self.src_embed(src))  # enc: [S, B, H]; h, c: [1, B, H]
        keys = enc.transpose(0, 1)  # [B, S, H]
        h, c = h[0], c[0]
        emb = self.tgt_embed(tgt)  # [T, B, E]
        logits = []
        for t in range(tgt.shape[0]):  # unrolled: the length is static
            h, c = self.cell(emb[t], (h, c))
            att = torch.softmax(torch.bmm(keys, h.unsqueeze(2)), dim=1)  # [B, S, 1]
            context = (att * keys).sum(1)  # [B, H]
            out = torch.tanh(self.combine(torch.cat([h, context], 1)))
            logits.append(self.project(out))
        return torch.stack(logits, 0)


class DeepSpeech2(nn.Module):
    """DeepSpeech 2 (deepspeech.pytorch layout): two Conv2d+BN+Hardtanh(0,20) over the
    spectrogram [B, 1, freq, time], features flattened per frame, bidirectional GRU layers
    (directions summed), linear classifier over characters. -> [time', B, classes]."""

    def __init__(self, freq=161, channels=32, hidden=512, layers=3, classes=29):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, channels, (41, 11), (2, 2), (20, 5), bias=False), nn.BatchNorm2d(channels),
            nn.Hardtanh(0, 20),
            nn.Conv2d(channels, channels, (21, 11), (2, 1), (10, 5), bias=False),
            nn.BatchNorm2d(channels), nn.Hardtanh(0, 20))
        f = (freq + 2 * 20 - 41) // 2 + 1
        f = (f + 2 * 10 - 21) // 2 + 1
        dims = [channels * f] + [hidden] * layers
        self.rnns = nn.ModuleList(nn.GRU(dims[i], hidden, bidirectional=True) for i in range(layers))
        self.fc = nn.Linear(hidden, classes, bias=False)

    def forward(self, spect):
        x = self.conv(spect)  # [B, C, F, T]
        b, c, f, t = x.shape
        x = x.reshape(b, c * f, t).permute(2, 0, 1)  # [T, B, C*F]
        for rnn in self.rnns:
            y, _ = rnn(x)  # [T, B, 2H]
            x = y.reshape(t, b, 2, -1).sum(2)
        return self.fc(x)


# ---------------------------------------------------------------------------- attention and MoE
class BertLayer(nn.Module):
    """One BERT encoder layer (HuggingFace's BertLayer in eval mode): separate Q/K/V Linear,
    scaled dot-product attention per head, output dense + residual + LayerNorm, erf-GELU FFN +
    residual + LayerNorm (eps 1e-12)."""

    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(hidden // heads)
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):  # [B, T, C]
        b, t, c = x.shape
        h, d = self.heads, c // self.heads

        def heads(z):
            return z.reshape(b, t, h, d).permute(0, 2, 1, 3)  # [B, H, T, D]

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        probs = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * self.scale, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, t, c)
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertLayers(nn.Module):
    def __init__(self, layers=2, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class SwitchMoE(nn.Module):
    """Switch-Transformer feed-forward block: x + MoE(LayerNorm(x)). The router picks one expert
    per token (argmax of the softmax); every expert (Linear-ReLU-Linear) runs densely on all
    tokens and the outputs are combined by a one-hot mask times the router probability, so the
    graph is static and the experts are sibling branches of one input."""

    def __init__(self, dim=768, ffn=3072, experts=8):
        super().__init__()
        self.experts_n = experts
        self.norm = nn.LayerNorm(dim)
        self.router = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(dim, ffn), nn.ReLU(), nn.Linear(ffn, dim)) for _ in range(experts))

    def forward(self, x):  # [B, T, C]
        z = self.norm(x)
        probs = torch.softmax(self.router(z), dim=-1)  # [B, T, E]
        gate, index = probs.max(dim=-1)
        weights = F.one_hot(index, self.experts_n).to(z.dtype) * gate.unsqueeze(-1)  # [B, T, E]
        outs = torch.stack([expert(z) for expert in self.experts], dim=-2)  # [B, T, E, C]
        return x + (weights.unsqueeze(-1) * outs).sum(dim=-2)


class MixtralMoE(nn.Module):
    """Mixtral-style sparse MoE block (pre-norm): x + sum over the top-2 experts of each token of
    softmax(top-2 router logits)[j] * expert_j(RMSNorm(x)), the experts SwiGLU MLPs
    (w2(silu(w1 z) * w3 z), bias-free). The router's choice is torch.topk (ONNX TopK with the
    constant K = 2); the experts run densely on every token and are combined by the top-2 indices'
    one-hot times their weights, so the graph is static and the experts' gate and up projections
    are siblings of one input."""

    def __init__(self, dim=512, ffn=1792, experts=8, top_k=2, eps=1e-5):
        super().__init__()
        self.experts_n, self.top_k, self.eps = experts, top_k, eps
        self.norm = nn.Parameter(1 + 0.1 * torch.randn(dim))
        self.router = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.ModuleList(nn.Linear(dim, ffn, bias=False) for _ in range(experts))
        self.w3 = nn.ModuleList(nn.Linear(dim, ffn, bias=False) for _ in range(experts))
        self.w2 = nn.ModuleList(nn.Linear(ffn, dim, bias=False) for _ in range(experts))

    def check_export(self, m, xs, ys):
        if not any(n.op_type == "TopK" for n in m.graph.node):
            raise RuntimeError("mixtral_moe: the export has no TopK: the router op this model is in the zoo for")

    def forward(self, x):  # [B, T, C]
        z = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.norm
        logits = self.router(z)  # [B, T, E]
        top, index = torch.topk(logits, self.top_k, dim=-1)  # [B, T, 2]
        gate = torch.softmax(top, dim=-1)
        weights = (F.one_hot(index, self.experts_n).to(z.dtype) * gate.unsqueeze(-1)).sum(dim=-2)  # [B, T, E]
        outs = torch.stack([self.w2[e](F.silu(self.w1[e](z)) * self.w3[e](z)) for e in range(self.experts_n)],
                           dim=-2)  # [B, T, E, C]
        return x + (weights.unsqueeze(-1) * outs).sum(dim=-2)

# ------------------------------------------------------------------------------- detection head
class ConvBNSiLU(nn.Sequential):  # YOLOX's BaseConv
    def __init__(self, cin, cout, k):
        super().__init__(nn.Conv2d(cin, cout, k, 1, k // 2, bias=False), nn.BatchNorm2d(cout, eps=1e-3),
                         nn.SiLU())


class YOLOXHeads(nn.Module):
    """YOLOX decoupled head (YOLOX-S widths: levels of 128/256/512 channels, 128 hidden, 80
    classes), before box decoding: per level a 1x1 stem, a cls tower and a reg tower of two 3x3
    convs each, cls (sigmoid), reg and obj (sigmoid, on the reg tower) 1x1 predictions joined by
    Concat; levels flattened and concatenated -> [B, anchors, 5 + classes]."""

    def __init__(self, in_channels=(128, 256, 512), hidden=128, classes=80):
        super().__init__()
        self.stems = nn.ModuleList(ConvBNSiLU(c, hidden, 1) for c in in_channels)
        self.cls_convs = nn.ModuleList(
            nn.Sequential(ConvBNSiLU(hidden, hidden, 3), ConvBNSiLU(hidden, hidden, 3)) for _ in in_channels)
        self.reg_convs = nn.ModuleList(
            nn.Sequential(ConvBNSiLU(hidden, hidden, 3), ConvBNSiLU(hidden, hidden, 3)) for _ in in_channels)
        self.cls_preds = nn.ModuleList(nn.Conv2d(hidden, classes, 1) for _ in in_channels)
        self.reg_preds = nn.ModuleList(nn.Conv2d(hidden, 4, 1) for _ in in_channels)
        self.obj_preds = nn.ModuleList(nn.Conv2d(hidden, 1, 1) for _ in in_channels)

    def forward(self, p3, p4, p5):
        outs = []
        for i, x in enumerate((p3, p4, p5)):
            x = self.stems[i](x)
            cls_feat, reg_feat = self.cls_convs[i](x), self.reg_convs[i](x)
            out = torch.cat([self.reg_preds[i](reg_feat), self.obj_preds[i](reg_feat).sigmoid(),
                             self.cls_preds[i](cls_feat).sigmoid()], 1)
            outs.append(out.flatten(2))  # [B, 5 + classes, H*W]
        return torch.cat(outs, 2).permute(0, 2, 1)


class YOLOv8Conv(nn.Sequential):  # ultralytics' Conv: Conv2d (no bias) + BN + SiLU
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, bias=False),
                         nn.BatchNorm2d(cout, eps=1e-3, momentum=0.03), nn.SiLU())


class YOLOv8Bottleneck(nn.Module):
    def __init__(self, c, shortcut):
        super().__init__()
        self.cv1, self.cv2 = YOLOv8Conv(c, c, 3), YOLOv8Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    """YOLOv8's CSP block: a 1x1 conv split in two halves (Split), n bottlenecks chained on the
    second half, every intermediate joined by Concat, then a 1x1 conv."""

    def __init__(self, cin, cout, n=1, shortcut=False):
        super().__init__()
        self.c = cout // 2
        self.cv1 = YOLOv8Conv(cin, 2 * self.c, 1)
        self.cv2 = YOLOv8Conv((2 + n) * self.c, cout, 1)
        self.m = nn.ModuleList(YOLOv8Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    """Spatial pyramid pooling, fast: three chained 5x5 stride-1 max pools, all joined by Concat."""

    def __init__(self, cin, cout, k=5):
        super().__init__()
        c = cin // 2
        self.cv1, self.cv2 = YOLOv8Conv(cin, c, 1), YOLOv8Conv(4 * c, cout, 1)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))


class YOLOv8(nn.Module):
    """YOLOv8 (ultralytics' yolov8.yaml at width w, depth d: n = 0.25 / 0.33) end to end as its
    ONNX export computes it: backbone (stride-2 convs, C2f, SPPF), PAN neck (nearest x2 Upsample
    + Concat top-down, stride-2 conv + Concat bottom-up), decoupled Detect head per level (box
    branch of 4 x 16 DFL bins, class branch), then the DFL softmax expectation (as a 1x1 conv
    with weights 0..15), dist2bbox against the anchor grid times the stride, and sigmoid class
    scores: output [B, 4 + classes, anchors] (xywh boxes in input pixels)."""

    def __init__(self, width=0.25, depth=0.33, classes=80, image=320):
        super().__init__()
        ch = lambda c: max(8, int(math.ceil(c * width / 8) * 8))  # noqa: E731
        n = lambda k: max(1, round(k * depth))  # noqa: E731
        c1, c2, c3, c4, c5 = ch(64), ch(128), ch(256), ch(512), ch(1024)
        self.b = nn.ModuleList([
            YOLOv8Conv(3, c1, 3, 2), YOLOv8Conv(c1, c2, 3, 2), C2f(c2, c2, n(3), True),
            YOLOv8Conv(c2, c3, 3, 2), C2f(c3, c3, n(6), True),        # P3 (stride 8): index 4
            YOLOv8Conv(c3, c4, 3, 2), C2f(c4, c4, n(6), True),        # P4 (stride 16): index 6
            YOLOv8Conv(c4, c5, 3, 2), C2f(c5, c5, n(3), True), SPPF(c5, c5)])  # P5: index 9
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.h12, self.h15 = C2f(c5 + c4, c4, n(3)), C2f(c4 + c3, c3, n(3))
        self.d16, self.h18 = YOLOv8Conv(c3, c3, 3, 2), C2f(c3 + c4, c4, n(3))
        self.d19, self.h21 = YOLOv8Conv(c4, c4, 3, 2), C2f(c4 + c5, c5, n(3))
        self.reg_max, self.classes = 16, classes
        levels = (c3, c4, c5)
        cb, cc = max(16, levels[0] // 4, 4 * self.reg_max), max(levels[0], min(classes, 100))
        self.box = nn.ModuleList(nn.Sequential(YOLOv8Conv(c, cb, 3), YOLOv8Conv(cb, cb, 3),
                                               nn.Conv2d(cb, 4 * self.reg_max, 1)) for c in levels)
        self.cls = nn.ModuleList(nn.Sequential(YOLOv8Conv(c, cc, 3), YOLOv8Conv(cc, cc, 3),
                                               nn.Conv2d(cc, classes, 1)) for c in levels)
        self.dfl = nn.Conv2d(self.reg_max, 1, 1, bias=False)
        self.dfl.weight.data[:] = torch.arange(self.reg_max, dtype=torch.float32).view(1, -1, 1, 1)
        self.dfl.weight.requires_grad_(False)
        anchors, strides = [], []
        for s in (8, 16, 32):
            h = w = image // s
            sy, sx = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
            anchors.append(torch.stack((sx, sy), 0).view(2, -1))
            strides.append(torch.full((1, h * w), float(s)))
        self.register_buffer("anchors", torch.cat(anchors, 1).unsqueeze(0))  # [1, 2, A]
        self.register_buffer("strides", torch.cat(strides, 1).unsqueeze(0))  # [1, 1, A]

    def forward(self, x):
        feats = []
        for i, m in enumerate(self.b):
            x = m(x)
            feats.append(x)
        p3, p4, p5 = feats[4], feats[6], feats[9]
        t4 = self.h12(torch.cat([self.up(p5), p4], 1))
        o3 = self.h15(torch.cat([self.up(t4), p3], 1))
        o4 = self.h18(torch.cat([self.d16(o3), t4], 1))
        o5 = self.h21(torch.cat([self.d19(o4), p5], 1))
        b = x.shape[0]
        outs = [torch.cat([self.box[i](f), self.cls[i](f)], 1).view(b, 4 * self.reg_max + self.classes, -1)
                for i, f in enumerate((o3, o4, o5))]
        y = torch.cat(outs, 2)
        box, cls = y.split((4 * self.reg_max, self.classes), 1)
        a = box.shape[2]
        dist = self.dfl(box.view(b, 4, self.reg_max, a).transpose(2, 1).softmax(1)).view(b, 4, a)
        lt, rb = dist.chunk(2, 1)
        x1y1, x2y2 = self.anchors - lt, self.anchors + rb
        boxes = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.strides
        return torch.cat((boxes, cls.sigmoid()), 1)


# ------------------------------------------------------------------------------- recommendation
class DIN(nn.Module):
    """Deep Interest Network (Zhou et al. 2018). Item and category embeddings of the behaviour
    sequence and of the candidate; the local activation unit (MLP over [q, k, q-k, q*k], PReLU)
    scores each behaviour against the candidate; masked (by history length) weighted sum
    pooling; a deep tower (PReLU MLP) over [user features, pooled interest, candidate] plus a
    linear part over [user features, candidate]; sigmoid -> click probability [B, 1]."""

    def __init__(self, items=50000, cats=1000, emb=32, user_dim=16, att=(80, 40), tower=(200, 80)):
        super().__init__()
        self.item_embed = nn.Embedding(items, emb)
        self.cat_embed = nn.Embedding(cats, emb)
        d = 2 * emb
        layers, w = [], 4 * d
        for h in att:
            layers += [nn.Linear(w, h), nn.PReLU(h)]
            w = h
        self.attention = nn.Sequential(*layers, nn.Linear(w, 1))
        layers, w = [], user_dim + 2 * d
        for h in tower:
            layers += [nn.Linear(w, h), nn.PReLU(h)]
            w = h
        self.tower = nn.Sequential(*layers, nn.Linear(w, 1))
        self.linear = nn.Linear(user_dim + d, 1)

    def forward(self, hist_items, hist_cats, hist_len, cand_item, cand_cat, user):
        b, l = hist_items.shape
        keys = torch.cat([self.item_embed(hist_items), self.cat_embed(hist_cats)], -1)  # [B, L, D]
        query = torch.cat([self.item_embed(cand_item), self.cat_embed(cand_cat)], -1)  # [B, D]
        q = query.unsqueeze(1).expand(-1, l, -1)
        unit_in = torch.cat([q, keys, q - keys, q * keys], -1).reshape(b * l, -1)
        scores = self.attention(unit_in).reshape(b, l)
        mask = (torch.arange(l).unsqueeze(0) < hist_len.unsqueeze(1)).to(scores.dtype)
        interest = ((scores * mask).unsqueeze(-1) * keys).sum(1)  # [B, D]
        deep = self.tower(torch.cat([user, interest, query], -1))
        wide = self.linear(torch.cat([user, query], -1))
        return torch.sigmoid(deep + wide)


# -------------------------------------------------------------------- greedy decoding (ONNX Loop)
class GRUGreedyDecoder(nn.Module):
    """Greedy decoding with a GRU decoder (issue #18: a Loop whose control is known at compile
    time). From the start token `bos`, each of `max_len` steps embeds the previous token, runs one
    GRU cell step, projects to logits and takes their argmax as the next token.
    h0: [B, hidden] (an encoder's final state) -> logits [max_len, B, vocab], tokens [max_len, B]
    int64, final hidden state [B, hidden].

    Exported (export_module) with torch.jit.script at opset 12, which gives one ONNX Loop: trip
    count the initializer `steps`, condition constant true, loop-carried (h, token), scan outputs
    (token, logits). Why each choice:
    - the step count is a buffer, not an int attribute: the exporter freezes the module, an int
      attribute becomes a constant and TorchScript then unrolls the loop before ONNX sees it;
    - opset 12: torch 1.13 turns list appends inside a loop into Loop scan outputs at opset 11-12
      only; at 13 it keeps them as Sequence values (SequenceInsert), which Magneto does not import;
    - the GRU cell is written out with nn.GRUCell's parameters (torch 1.13 cannot export
      aten::gru_cell); check_export compares it with nn.GRUCell.
    GRUGreedyDecoderEarlyExit is the variant that stops on a data-dependent condition."""

    export_opset = 12
    output_names = ["logits", "tokens", "h"]

    def __init__(self, vocab=40, emb=16, hidden=32, max_len=12, bos=1):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.cell = nn.GRUCell(emb, hidden)
        self.proj = nn.Linear(hidden, vocab)
        self.register_buffer("steps", torch.tensor(max_len))
        self.bos = bos

    def gru_step(self, x, h):
        """nn.GRUCell's update (gates r, z, n in PyTorch's order) written out."""
        gi = F.linear(x, self.cell.weight_ih, self.cell.bias_ih)
        gh = F.linear(h, self.cell.weight_hh, self.cell.bias_hh)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return n + z * (h - n)

    def forward(self, h):
        tok = torch.full([h.shape[0]], self.bos, dtype=torch.long)
        tokens: List[torch.Tensor] = []
        logits: List[torch.Tensor] = []
        for _ in range(int(self.steps)):
            h = self.gru_step(self.embed(tok), h)
            step_logits = self.proj(h)
            tok = step_logits.argmax(-1)
            tokens.append(tok)
            logits.append(step_logits)
        return torch.stack(logits), torch.stack(tokens), h

    def export_module(self):
        return torch.jit.script(self)

    def check_export(self, onnx_model, inputs, outputs):
        """Raises ValueError unless the export is what the test needs: one top-level Loop with a
        constant trip count, two loop-carried values and two scan outputs, no Sequence values (so
        a test cannot pass on an unrolled export); the written-out GRU step equal to nn.GRUCell's;
        and reference tokens that are robust: every step's best logit ahead of the runner-up by
        at least 1e-4 (the float32 reorderings of ORT and Magneto move these logits by ~2e-7, so
        no target can flip an argmax) and not one token repeated throughout."""
        g = onnx_model.graph
        loops = [n for n in g.node if n.op_type == "Loop"]
        if len(loops) != 1:
            raise ValueError(f"expected one Loop node, the export has {len(loops)}: "
                             f"{sorted(set(n.op_type for n in g.node))}")
        loop = loops[0]
        inits = {t.name for t in g.initializer}
        if loop.input[0] not in inits:
            raise ValueError(f"the Loop's trip count {loop.input[0]!r} is not an initializer")
        if len(loop.input) != 4 or len(loop.output) != 4:
            raise ValueError(f"expected Loop(M, cond, h, token) -> (h, token, tokens, logits), got "
                             f"{list(loop.input)} -> {list(loop.output)}")
        body_ops = {n.op_type for n in loop.attribute[0].g.node}
        if "ArgMax" not in body_ops or "Gather" not in body_ops:
            raise ValueError(f"the Loop body lacks the argmax or the embedding: "
                             f"{sorted(body_ops)}")
        seq = [n.op_type for n in g.node if n.op_type.startswith(("Sequence", "ConcatFromSequence",
                                                                   "SplitToSequence"))]
        if seq:
            raise ValueError(f"the export keeps Sequence values: {seq}")
        gen = torch.Generator().manual_seed(5)
        x = torch.randn(3, self.cell.input_size, generator=gen)
        h = torch.randn(3, self.cell.hidden_size, generator=gen)
        with torch.no_grad():
            err = (self.gru_step(x, h) - self.cell(x, h)).abs().max().item()
        if err > 1e-6:
            raise ValueError(f"the written-out GRU step differs from nn.GRUCell by {err:.3g}")
        logits, tokens = outputs[0], outputs[1]
        top2 = torch.topk(logits, 2, dim=-1).values
        margin = (top2[..., 0] - top2[..., 1]).min().item()
        if margin < 1e-4:
            raise ValueError(f"an argmax is nearly tied (margin {margin:.3g} < 1e-4)")
        if tokens.unique().numel() < 2:
            raise ValueError("greedy decoding repeats one token throughout")


class GRUGreedyDecoderEarlyExit(GRUGreedyDecoder):
    """The decoder that stops as soon as every sequence has produced `eos` (at most max_len
    steps): TorchScript exports the `break` as a Loop whose condition is computed from the
    tokens, so it depends on the model's data and Magneto refuses the model, naming the Loop.
    (A `break` in the source turns the loop into a while loop, trip count INT64_MAX and a
    condition, even where the break can never be taken: GRUGreedyDecoder has none.)"""

    def __init__(self, vocab=40, emb=16, hidden=32, max_len=12, bos=1, eos=2):
        super().__init__(vocab, emb, hidden, max_len, bos)
        self.eos = eos

    def forward(self, h):
        tok = torch.full([h.shape[0]], self.bos, dtype=torch.long)
        tokens: List[torch.Tensor] = []
        logits: List[torch.Tensor] = []
        for _ in range(int(self.steps)):
            h = self.gru_step(self.embed(tok), h)
            step_logits = self.proj(h)
            tok = step_logits.argmax(-1)
            tokens.append(tok)
            logits.append(step_logits)
            if bool((tok == self.eos).all()):
                break
        return torch.stack(logits), torch.stack(tokens), h


class LlamaLayer(nn.Module):
    """One Llama-style decoder layer (pre-norm): RMSNorm, rotary position embeddings (rotate-half,
    precomputed cos/sin buffers), grouped-query attention with causal mask whose K/V heads are
    repeated with `repeat_interleave` (torch 1.13 exports that as SplitToSequence -> Loop ->
    ConcatFromSequence: issue #40), SwiGLU MLP, residual adds. Written in plain torch ops (no
    opset-23 RMSNormalization / RotaryEmbedding) so the TorchScript exporter takes it."""

    def __init__(self, hidden=4096, heads=32, kv_heads=8, ffn=11008, max_seq=2048, eps=1e-6):
        super().__init__()
        self.heads, self.kv_heads, self.eps = heads, kv_heads, eps
        self.d = hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.d, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.d, bias=False)
        self.o_proj = nn.Linear(heads * self.d, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)
        # RMSNorm weights: random around 1 so that they matter in the check.
        self.attn_norm = nn.Parameter(1 + 0.1 * torch.randn(hidden))
        self.mlp_norm = nn.Parameter(1 + 0.1 * torch.randn(hidden))
        inv = 1.0 / (10000 ** (torch.arange(0, self.d, 2).float() / self.d))
        freqs = torch.outer(torch.arange(max_seq).float(), inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        # Causal mask as a buffer (aten::triu exports only from opset 14).
        self.register_buffer("mask", torch.triu(torch.full((max_seq, max_seq), float("-inf")), 1))

    # Exported with symbolic batch and sequence axes, as Llama exports are: that is what makes torch
    # 1.13 write repeat_interleave of the K/V heads as SplitToSequence -> Loop -> ConcatFromSequence
    # (models/export.py gives the graph's inputs and outputs their static sizes back).
    export_dynamic_axes = {"input": {0: "batch", 1: "seq"}}

    def check_export(self, m, xs, ys):
        ops = {n.op_type for n in m.graph.node}
        missing = {"SplitToSequence", "Loop", "ConcatFromSequence"} - ops
        if missing:
            raise RuntimeError(f"llama_layer: the export has no {sorted(missing)}: the sequence "
                               "form of repeat_interleave this model is in the zoo for is gone")

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    @staticmethod
    def rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([-x2, x1], dim=-1)

    def forward(self, x):  # [B, T, C]
        b, t, c = x.shape
        h = self.rms(x, self.attn_norm)
        q = self.q_proj(h).view(b, t, self.heads, self.d)
        k = self.k_proj(h).view(b, t, self.kv_heads, self.d)
        v = self.v_proj(h).view(b, t, self.kv_heads, self.d)
        cos, sin = self.cos[:t].unsqueeze(1), self.sin[:t].unsqueeze(1)  # [T, 1, D]
        q = (q * cos + self.rotate_half(q) * sin).transpose(1, 2)  # [B, H, T, D]
        k = k * cos + self.rotate_half(k) * sin  # [B, T, KV, D]
        # GQA: each K/V head serves `rep` query heads. The heads are repeated on the LAST axis:
        # torch 1.13's dynamic-shape export of repeat_interleave (SplitToSequence -> Loop ->
        # ConcatFromSequence, used for k, whose head count the exporter lost after the rotary
        # Add) ends each iteration with a Reshape whose 0s copy the wrong dims when a dynamic dim
        # follows the repeated one (onnxruntime then fails on the attention MatMul).
        rep = self.heads // self.kv_heads
        k = k.transpose(2, 3).repeat_interleave(rep, dim=3).permute(0, 3, 1, 2)  # [B, H, T, D]
        v = v.transpose(2, 3).repeat_interleave(rep, dim=3).permute(0, 3, 1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
        probs = torch.softmax(scores + self.mask[:t, :t], dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, self.heads * self.d)
        x = x + self.o_proj(ctx)
        h = self.rms(x, self.mlp_norm)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class GPT2KV(nn.Module):
    """GPT-2-style decoder with a KV cache. The position embeddings and the causal mask are
    buffers sliced at [past, past + seq) (Slice with run-time starts), so one export serves every
    past length, 0 included: there the cache is an empty tensor and Concat gives the new keys."""

    output_names = ["logits", "present_k", "present_v"]
    export_opset = 13

    def __init__(self, vocab=50257, hidden=768, heads=12, layers=12, max_pos=1024):
        super().__init__()
        self.heads, self.layers, self.d = heads, layers, hidden // heads
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Parameter(0.1 * torch.randn(max_pos, hidden))
        self.ln1 = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.qkv = nn.ModuleList(nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.fc = nn.ModuleList(nn.Linear(hidden, 4 * hidden) for _ in range(layers))
        self.fc_proj = nn.ModuleList(nn.Linear(4 * hidden, hidden) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        # -inf above the diagonal: row i (absolute position) sees keys 0..i.
        self.register_buffer("mask", torch.triu(torch.full((max_pos, max_pos), float("-inf")), 1))

    def forward(self, input_ids, past_k, past_v):
        b, t = input_ids.shape
        past = past_k.shape[3]
        x = self.wte(input_ids) + self.wpe[past:past + t]
        mask = self.mask[past:past + t, :past + t]
        pks, pvs = [], []
        for i in range(self.layers):
            h = self.ln1[i](x)
            q, k, v = self.qkv[i](h).split(x.shape[-1], dim=-1)
            q = q.reshape(b, t, self.heads, self.d).transpose(1, 2)  # [B, H, T, D]
            k = torch.cat([past_k[i], k.reshape(b, t, self.heads, self.d).transpose(1, 2)], dim=2)
            v = torch.cat([past_v[i], v.reshape(b, t, self.heads, self.d).transpose(1, 2)], dim=2)
            pks.append(k)
            pvs.append(v)
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + mask
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
            x = x + self.proj[i](ctx.transpose(1, 2).reshape(b, t, self.heads * self.d))
            x = x + self.fc_proj[i](F.gelu(self.fc[i](self.ln2[i](x))))
        logits = torch.matmul(self.ln_f(x), self.wte.weight.t())
        return logits, torch.stack(pks), torch.stack(pvs)


# name -> ((full constructor, small constructor), full inputs, small inputs, description)
class TorchvisionDetector(nn.Module):
    """A torchvision detector end to end (issue #40 item 8): preprocessing, backbone, heads, box
    decoding, score threshold, NonMaxSuppression guarded by torchvision's run-time If (`if
    boxes.numel() == 0`), top detections. One image [1, 3, H, W] in; boxes [n, 4], scores [n]
    and labels [n] out, n known only at run time.

    Random weights give every class nearly the same probability (1 / classes), and detections
    whose scores differ in the 7th digit swap places under any float reordering, PyTorch's own
    included: the classification head's last layer is scaled so that scores spread (still random),
    and the zoo compares the detections as a set (unordered_rows).
    In train mode (export.py settling BatchNorm) only the backbone runs."""

    output_names = ["boxes", "scores", "labels"]
    # Sorted by score: the zoo compares them as one set of rows (check --unordered-rows).
    unordered_rows = [output_names]

    def __init__(self, kind, classes=5, spread=2.0):
        super().__init__()
        tv = torchvision.models.detection
        if kind == "ssdlite":
            self.det = tv.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                         num_classes=classes)
            last = [m[-1] for m in self.det.head.classification_head.module_list]
        elif kind == "fasterrcnn":
            self.det = tv.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None,
                                                                 num_classes=classes)
            last = [self.det.roi_heads.box_predictor.cls_score]
        elif kind == "retinanet":
            self.det = tv.retinanet_resnet50_fpn(weights=None, weights_backbone=None,
                                                 num_classes=classes, min_size=320, max_size=320)
            last = [self.det.head.classification_head.cls_logits]
            # Its prior bias starts every score near 0.01, under the 0.05 threshold: none pass.
            torch.nn.init.zeros_(self.det.head.classification_head.cls_logits.bias)
        else:
            raise ValueError(kind)
        with torch.no_grad():
            for m in last:
                m.weight.mul_(spread)

    def forward(self, x):
        if self.training:
            return self.det.backbone(x)
        out = self.det(list(x))[0]
        return out["boxes"], out["scores"], out["labels"]


MODELS = {
    "nasnet_a_mobile": (
        (lambda: NASNetAMobile(repeats=4, filters=44),
               lambda: NASNetAMobile(repeats=1, filters=16, stem_filters=16, classes=100)),
        (1, 3, 224, 224), (1, 3, 64, 64),
        "NASNet-A Mobile 4@1056 (models/zoo_models.py): normal and reduction cells written out; "
        "separable convs, avg/max pools and identity branches added pairwise, joined by Concat"),
    "lstm_lm": (
        (lambda: LSTMLanguageModel(10000, 650, 650), lambda: LSTMLanguageModel(1000, 64, 64)),
        [Input("tokens", (35, 4), "int64", 0, 10000)], [Input("tokens", (32, 2), "int64", 0, 1000)],
        "LSTM language model (models/zoo_models.py): embedding, 2-layer LSTM (ONNX LSTM), "
        "linear decoder"),
    "seq2seq": (
        (lambda: Seq2Seq(10000, 512, 512), lambda: Seq2Seq(500, 64, 64)),
        [Input("src", (32, 4), "int64", 0, 10000), Input("tgt", (8, 4), "int64", 0, 10000)],
        [Input("src", (12, 2), "int64", 0, 500), Input("tgt", (8, 2), "int64", 0, 500)],
        "LSTM encoder + 8-step unrolled LSTMCell decoder with dot attention, teacher-forced "
        "(models/zoo_models.py)"),
    "deepspeech2": (
        (lambda: DeepSpeech2(161, 32, 512, 3), lambda: DeepSpeech2(41, 8, 64, 2)),
        (1, 1, 161, 200), (1, 1, 41, 32),
        "DeepSpeech 2 (models/zoo_models.py): 2 Conv2d+BN+Hardtanh, bidirectional GRU layers "
        "(ONNX GRU), linear"),
    "bert_layers": (
        (lambda: BertLayers(2, 768, 12, 3072), lambda: BertLayers(2, 128, 2, 512)),
        (1, 128, 768), (1, 32, 128),
        "BERT-base encoder layers x2 (models/zoo_models.py): separate Q/K/V Linear, GELU FFN, "
        "post-LayerNorm"),
    "switch_moe": (
        (lambda: SwitchMoE(768, 3072, 8), lambda: SwitchMoE(64, 128, 4)),
        (1, 128, 768), (1, 16, 64),
        "Switch-Transformer MoE FFN layer (models/zoo_models.py): router, top-1, dense experts "
        "combined by a one-hot mask"),
    "mixtral_moe": (
        (lambda: MixtralMoE(512, 1792, 8), lambda: MixtralMoE(64, 128, 8)),
        (1, 128, 512), (1, 16, 64),
        "Mixtral-style sparse MoE FFN block (models/zoo_models.py): RMSNorm, router, top-2 (TopK) with "
        "softmax over the chosen logits, 8 SwiGLU experts computed densely, combined by the top-2 one-hot"),
    "yolox_heads": (
        (lambda: YOLOXHeads((128, 256, 512), 128, 80), lambda: YOLOXHeads((32, 64, 128), 32, 80)),
        [Input("p3", (1, 128, 80, 80)), Input("p4", (1, 256, 40, 40)), Input("p5", (1, 512, 20, 20))],
        [Input("p3", (1, 32, 16, 16)), Input("p4", (1, 64, 8, 8)), Input("p5", (1, 128, 4, 4))],
        "YOLOX-S decoupled heads over three feature levels (models/zoo_models.py)"),
    "yolov8": (
        (lambda: YOLOv8(0.25, 0.33, 80, 320), lambda: YOLOv8(0.25, 0.33, 80, 64)),
        (1, 3, 320, 320), (1, 3, 64, 64),
        "YOLOv8n detector end to end at 320x320 (models/zoo_models.py): C2f (Split, bottlenecks, "
        "Concat), SPPF, SiLU, nearest Upsample + Concat neck, decoupled heads, DFL and box decoding"),
    # torchvision's detectors with run-time If (issue #40 item 8); the input is resized inside.
    "ssdlite": (
        (lambda: TorchvisionDetector("ssdlite"), lambda: TorchvisionDetector("ssdlite")),
        (1, 3, 320, 320), (1, 3, 96, 96),
        "SSDlite320 MobileNet v3 (torchvision, 5 classes): depthwise heads on six maps, "
        "per-class score threshold and top-k, NonMaxSuppression behind a run-time If"),
    "fasterrcnn": (
        (lambda: TorchvisionDetector("fasterrcnn", spread=0.02), lambda: TorchvisionDetector("fasterrcnn", spread=0.02)),
        (1, 3, 320, 320), (1, 3, 96, 96),
        "Faster R-CNN MobileNet v3 320 FPN (torchvision, 5 classes): RPN with NMS, RoIAlign over "
        "FPN levels, box head, per-class NMS; run-time Ifs"),
    "retinanet": (
        (lambda: TorchvisionDetector("retinanet", spread=0.3), lambda: TorchvisionDetector("retinanet", spread=0.3)),
        (1, 3, 320, 320), (1, 3, 96, 96),
        "RetinaNet ResNet-50 FPN (torchvision, 5 classes, 320x320): per-level top-1000 of a "
        "run-time count, Concat, NonMaxSuppression behind a run-time If"),
    "din": (
        (lambda: DIN(50000, 1000, 32, 16), lambda: DIN(1000, 100, 8, 8, (32, 16), (64, 32))),
        [Input("hist_items", (128, 50), "int64", 0, 50000), Input("hist_cats", (128, 50), "int64", 0, 1000),
         Input("hist_len", (128,), "int64", 1, 51), Input("cand_item", (128,), "int64", 0, 50000),
         Input("cand_cat", (128,), "int64", 0, 1000), Input("user", (128, 16))],
        [Input("hist_items", (8, 16), "int64", 0, 1000), Input("hist_cats", (8, 16), "int64", 0, 100),
         Input("hist_len", (8,), "int64", 1, 17), Input("cand_item", (8,), "int64", 0, 1000),
         Input("cand_cat", (8,), "int64", 0, 100), Input("user", (8, 8))],
        "Deep Interest Network (models/zoo_models.py): attention MLP over the behaviour "
        "sequence, sum pooling, MLP towers, sigmoid"),
    "gru_greedy_decoder": (
        (lambda: GRUGreedyDecoder(1000, 64, 256, 32), lambda: GRUGreedyDecoder(40, 16, 32, 12)),
        [Input("h0", (4, 256))], [Input("h0", (2, 32))],
        "greedy decoding with a GRU decoder as one ONNX Loop (models/zoo_models.py): constant trip "
        "count, GRU step, Linear, ArgMax, embedding Gather; tokens and logits scan outputs"),
    "llama_layer": (
        (lambda: LlamaLayer(512, 8, 2, 1376, 256), lambda: LlamaLayer(64, 4, 2, 160, 32)),
        (1, 128, 512), (1, 16, 64),
        "Llama-style decoder layer (models/zoo_models.py): RMSNorm, rotary embeddings, grouped-query "
        "attention (K/V heads by repeat_interleave: SplitToSequence/Loop/ConcatFromSequence), "
        "causal mask, SwiGLU MLP"),
    "gpt2_kv": (
        (lambda: GPT2KV(), lambda: GPT2KV(256, 64, 4, 2, 128)),
        [Input("input_ids", (1, 1), "int64", 0, 50257), Input("past_k", (12, 1, 12, 16, 64)),
         Input("past_v", (12, 1, 12, 16, 64))],
        [Input("input_ids", (2, 3), "int64", 0, 256), Input("past_k", (2, 2, 4, 5, 16)),
         Input("past_v", (2, 2, 4, 5, 16))],
        "GPT-2-style decoder with a KV cache (models/zoo_models.py): embeddings, pre-LN blocks "
        "(fused QKV, causal attention over past + new keys, GELU MLP), tied LM head; inputs "
        "input_ids, past_k, past_v; outputs logits, present_k, present_v"),
}
