// Helpers of the tensor op family that both the compiler's shape inference (src/ops/tensor_ops*.cpp)
// and the reference kernels (runtime/cpu/k_tensor*.cpp) need, so that the two can never disagree on
// how an ONNX Slice clamps its bounds or how an Einsum equation is read. Plain C++17, no dependency
// beyond the standard library (generated packages carry it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgrt {

// One axis of an ONNX Slice after clamping (opset 13 rules): the first element taken, the step, and
// how many elements are taken. Precondition: step != 0.
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t size = 0;
};
SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step);

// An Einsum equation resolved against operand shapes. Labels are numbered densely; the ellipsis
// dimensions get their own labels (broadcast among operands, numpy style).
struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // per operand, per dimension: its label
  std::vector<int> output;               // per output dimension: its label
  std::vector<int64_t> labelSize;        // per label: the (broadcast) extent
};
// Parses `equation` for operands of the given dims. Returns "" on success, else what is wrong.
std::string parseEinsum(const std::string& equation, const std::vector<std::vector<int64_t>>& dims,
                        EinsumSpec* spec);

}  // namespace mgrt
