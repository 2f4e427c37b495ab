#!/usr/bin/env python3
"""Three small graphs with the shapes of issue #41 (OCR and audio models from other exporters that
ran 10-1000x slower than onnxruntime on shapes that are small GEMMs in disguise), for the zoo,
checked against onnxruntime:

  dbnet_head    a DBNet text detector's probability head after its 3x3 conv:
                x [1, 24, 120, 160] -> ConvTranspose(24 -> 24, kernel 2, stride 2, bias) -> Relu
                -> ConvTranspose(24 -> 1, kernel 2, stride 2, bias) -> Sigmoid -> [1, 1, 480, 640]
  dbnet_fpn     its FPN neck: four levels of 96 channels at 1/32 .. 1/4 of a 480x640 image, the
                top-down path (nearest 2x Resize + Add, three times) and the concatenation of all
                four levels upsampled to 1/4 (nearest 8x, 4x, 2x) -> [1, 384, 120, 160]; the Resizes
                as PyTorch's F.interpolate(scale_factor=k, mode="nearest") exports them (scales,
                asymmetric, floor)
  stft_mel      a mel-spectrogram front end with the STFT written as two 1-D convolutions:
                signal [1, 1, 48000] (3 s at 16 kHz) -> Conv(1 -> 257, kernel 512, stride 160,
                pads 256 / 256: Hann-windowed cosines) and the same with sines -> re^2 + im^2
                -> MatMul(mel filters [80, 257]) -> Log(x + 1e-6) -> [1, 80, 301]

    /usr/bin/python3 models/gemm_in_disguise.py --out DIR [--force] [--models dbnet_head,...]

writes DIR/NAME/{model.onnx, test_data_set_0/{input_K.pb, output_0.pb}, meta.json}: seeded
weights (dbnet_*: uniform in +-1/sqrt(fan-in); stft_mel: the real DFT basis and triangular mel
filters), seeded inputs, and onnxruntime-node's outputs on them (models/ort_reference.py), so
that `magnetoc check DIR/NAME/model.onnx --data DIR/NAME/test_data_set_0` and
tools/bench/compare_ort.sh take each folder as it is.
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_reference as ref  # noqa: E402


def uniform(rng, shape, fan_in):
    b = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-b, b, shape).astype(np.float32)


def model(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs,
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="magneto models/gemm_in_disguise.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def dbnet_head(rng):
    inits = {"w1": uniform(rng, (24, 24, 2, 2), 24 * 4), "b1": uniform(rng, (24,), 24 * 4),
             "w2": uniform(rng, (24, 1, 2, 2), 24 * 4), "b2": uniform(rng, (1,), 24 * 4)}
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w1", "b1"], ["up1"], name="up1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Relu", ["up1"], ["r1"], name="relu1"),
        helper.make_node("ConvTranspose", ["r1", "w2", "b2"], ["up2"], name="up2", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Sigmoid", ["up2"], ["prob"], name="prob"),
    ]
    m = model("dbnet_head", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 120, 160])],
              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 1, 480, 640])], inits)
    return m, [("x", rng.standard_normal((1, 24, 120, 160)).astype(np.float32))]


def dbnet_fpn(rng):
    sizes = {"p5": (15, 20), "p4": (30, 40), "p3": (60, 80), "p2": (120, 160)}
    inits = {"s2": np.array([1, 1, 2, 2], np.float32), "s4": np.array([1, 1, 4, 4], np.float32),
             "s8": np.array([1, 1, 8, 8], np.float32)}
    def up(src, scale, dst):
        return helper.make_node("Resize", [src, "", scale], [dst], name=dst, mode="nearest",
                                coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    nodes = [
        up("p5", "s2", "u5"), helper.make_node("Add", ["u5", "p4"], ["t4"], name="t4"),
        up("t4", "s2", "u4"), helper.make_node("Add", ["u4", "p3"], ["t3"], name="t3"),
        up("t3", "s2", "u3"), helper.make_node("Add", ["u3", "p2"], ["t2"], name="t2"),
        up("p5", "s8", "o5"), up("t4", "s4", "o4"), up("t3", "s2", "o3"),
        helper.make_node("Concat", ["o5", "o4", "o3", "t2"], ["fuse"], name="fuse", axis=1),
    ]
    ins = [helper.make_tensor_value_info(k, TensorProto.FLOAT, [1, 96, h, w]) for k, (h, w) in sizes.items()]
    m = model("dbnet_fpn", nodes, ins, [helper.make_tensor_value_info("fuse", TensorProto.FLOAT, [1, 384, 120, 160])],
              inits)
    return m, [(k, rng.standard_normal((1, 96, h, w)).astype(np.float32)) for k, (h, w) in sizes.items()]


def mel_filters(n_mels, n_bins, sr):
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)
    def mel_to_hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    pts = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    freqs = np.linspace(0, sr / 2, n_bins)
    fb = np.zeros((n_mels, n_bins))
    for i in range(n_mels):
        lo, c, hi = pts[i], pts[i + 1], pts[i + 2]
        fb[i] = np.maximum(0, np.minimum((freqs - lo) / (c - lo), (hi - freqs) / (hi - c)))
    return fb.astype(np.float32)


def stft_mel(rng):
    n_fft, hop, n_bins, samples = 512, 160, 257, 48000
    t = np.arange(n_fft)
    win = 0.5 - 0.5 * np.cos(2 * np.pi * t / n_fft)
    k = np.arange(n_bins)[:, None]
    cos = (win * np.cos(2 * np.pi * k * t / n_fft)).astype(np.float32)[:, None, :]
    sin = (-win * np.sin(2 * np.pi * k * t / n_fft)).astype(np.float32)[:, None, :]
    inits = {"wcos": cos, "wsin": sin, "mel": mel_filters(80, n_bins, 16000), "eps": np.array([1e-6], np.float32)}
    conv = dict(kernel_shape=[n_fft], strides=[hop], pads=[n_fft // 2, n_fft // 2])
    nodes = [
        helper.make_node("Conv", ["signal", "wcos"], ["re"], name="stft_re", **conv),
        helper.make_node("Conv", ["signal", "wsin"], ["im"], name="stft_im", **conv),
        helper.make_node("Mul", ["re", "re"], ["re2"], name="re2"),
        helper.make_node("Mul", ["im", "im"], ["im2"], name="im2"),
        helper.make_node("Add", ["re2", "im2"], ["power"], name="power"),
        helper.make_node("MatMul", ["mel", "power"], ["melspec"], name="melspec"),
        helper.make_node("Add", ["melspec", "eps"], ["floor"], name="floor"),
        helper.make_node("Log", ["floor"], ["logmel"], name="logmel"),
    ]
    frames = samples // hop + 1
    m = model("stft_mel", nodes, [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [1, 1, samples])],
              [helper.make_tensor_value_info("logmel", TensorProto.FLOAT, [1, 80, frames])], inits)
    # A chirp with noise: energy in every band, so no log of a near-zero power decides the check.
    tt = np.arange(samples) / 16000.0
    sig = 0.5 * np.sin(2 * np.pi * (100 + 2500 * tt) * tt) + 0.05 * rng.standard_normal(samples)
    return m, [("signal", sig.astype(np.float32)[None, None])]


MODELS = {"dbnet_head": dbnet_head, "dbnet_fpn": dbnet_fpn, "stft_mel": stft_mel}
TOLERANCE = {  # float32 sums in another order than onnxruntime's: relative 1e-4 of typical values
    "dbnet_head": {"rtol": 1e-4, "atol": 1e-5},
    "dbnet_fpn": {"rtol": 0.0, "atol": 1e-6},    # copies and one Add per element: exact
    "stft_mel": {"rtol": 1e-3, "atol": 1e-3},    # log of 512-term sums of squares
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    dig = ref.digest(os.path.abspath(__file__))
    for seed, name in enumerate(MODELS):
        if name not in args.models.split(","):
            continue
        folder = os.path.join(args.out, name)
        if not args.force and ref.up_to_date(folder, dig):
            print("[%s] up to date: %s" % (name, folder))
            continue
        t0 = time.time()
        m, inputs = MODELS[name](np.random.default_rng(seed))
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(m, os.path.join(folder, "model.onnx"))
        paths = []
        for k, (iname, arr) in enumerate(inputs):
            paths.append(os.path.join(data, "input_%d.pb" % k))
            ref.save_tensor(arr, iname, paths[-1])
        (out,) = ref.ort_outputs(os.path.join(folder, "model.onnx"), paths, data, 1)
        if not np.isfinite(out).all() or out.std() <= 1e-3:
            print("[%s] BAD: output dead or not finite (std %g)" % (name, out.std()), file=sys.stderr)
            return 1
        tol = dict(TOLERANCE[name])
        tol["output_atol"] = {m.graph.output[0].name: tol["atol"]}
        ref.write_meta(folder, {"name": name, "scripts": dig, "seed": seed, "output_shape": list(out.shape),
                                "output_std": float(out.std()), "tolerance": tol,
                                "seconds": round(time.time() - t0, 2)})
        print("[%s] ok: %s output %s std %.3g %.1fs" % (name, folder, list(out.shape), out.std(), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
