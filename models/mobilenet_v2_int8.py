#!/usr/bin/env python3
"""torchvision's MobileNet v2 quantized to int8 in QDQ form, for the zoo (issue #42):

    /usr/bin/python3 models/mobilenet_v2_int8.py --out DIR [--force]

writes DIR/mobilenet_v2_int8/{model.onnx, test_data_set_0/{input_0.pb, output_0.pb}, meta.json}
the way models/resnet18_int8.py does for ResNet-18 (its docstring: the float export, the
quantizer, the reference of onnxruntime-node with its graph optimizations off). MobileNet v2 adds
depthwise convolutions (17 of its 52) and ReLU6, which the quantizer folds into the producer's
quantization as onnxruntime's does: the model is 35 pointwise and 17 depthwise QDQ convolutions,
10 residual Adds, the float classifier.

Tolerance: the output is the logits' DequantizeLinear, whole steps of its scale. Integer
convolutions round once where the float reading of the graph rounds its float sums, and over 52
layers such one-step differences grow: onnxruntime's own int8 kernels (graph optimizations on)
differ from the float reading by up to 10 output steps on this input, on 87% of the logits
(measured 2026-12-07; Magneto's output was byte-identical to those kernels'). atol = 12 steps. The
script checks that the quantized model keeps the float model's top class and stays within one
standard deviation of the float logits (measured: 0.69; ResNet-18's bound is half of one: random
depthwise weights quantize worse). A dropped zero point or a wrong per-channel scale moves the
logits by far more.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import resnet18_int8  # noqa: E402

if __name__ == "__main__":
    sys.exit(resnet18_int8.build("mobilenet_v2_int8", "mobilenet_v2", 12.0, __doc__, os.path.abspath(__file__),
                                      drift=1.0))
