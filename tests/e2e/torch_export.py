"""Exports a PyTorch module for the end-to-end model scripts of tests/e2e/: OUT/model.onnx and
OUT/test_data_set_0/{input_K,output_K}.pb with PyTorch's own outputs as the expected data (never
our interpreter's)."""
import os
import warnings

import torch
from onnx import numpy_helper


def export_with_data(model, inputs, out, input_names, output_names, opset=13):
    """Runs `model` on `inputs` (a tuple of tensors) under no_grad, exports it with the given names
    and writes the inputs and PyTorch's outputs as TensorProto files."""
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with torch.no_grad():
        outputs = model(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, os.path.join(out, "model.onnx"), opset_version=opset,
                          input_names=input_names, output_names=output_names)

    def write(path, array, name):
        with open(os.path.join(data, path), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    for i, (name, x) in enumerate(zip(input_names, inputs)):
        write(f"input_{i}.pb", x.numpy(), name)
    for i, (name, y) in enumerate(zip(output_names, outputs)):
        write(f"output_{i}.pb", y.numpy(), name)
