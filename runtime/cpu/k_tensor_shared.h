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

// Resize's per-axis scales and output extents (opset 18/19 rules), from the operand values:
// `scales` or `sizes` (exactly one non-empty) holds one value per entry of `axes`, or one per
// dimension when `axes` is empty. `policy` is keep_aspect_ratio_policy: stretch, or, with sizes,
// not_larger / not_smaller, which resize every listed axis by the smallest / largest of the
// ratios size / extent and round the extents. The scales are what coordinates are transformed
// with: out / in for stretched sizes, the policy's ratio otherwise, 1 on axes not listed.
struct ResizeGeometry {
  std::vector<int64_t> axes;    // normalized; every axis when the attribute is empty
  std::vector<double> scales;   // per dimension
  std::vector<int64_t> out;     // per dimension
};
// Returns "" on success, else what is wrong.
std::string resizeGeometry(const std::vector<int64_t>& in, const std::vector<int64_t>& axes,
                           const std::vector<float>& scales, const std::vector<int64_t>& sizes,
                           const std::string& policy, ResizeGeometry* g);

}  // namespace mgrt
