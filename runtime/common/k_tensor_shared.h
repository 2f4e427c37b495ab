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

// Resize's interpolation as per-axis tap lists (k_tensor_resize.cpp explains the rules): output
// coordinate x of axis d reads input indices taps[x][k].index with weights taps[x][k].weight, and
// an output element is the sum over the product of its axes' taps, taken in odometer order (last
// axis fastest). Nearest mode has exactly one tap of weight 1 per coordinate. The CPU kernel and
// the GPU lowering (codegen/gpu, which bakes the lists into tables) both use these, so they pick
// the same taps with the same weights.
struct ResizeTap {
  int64_t index;
  double weight;
};
struct ResizeAxisPlan {
  std::vector<std::vector<ResizeTap>> taps;  // per output coordinate (empty when outside)
  std::vector<bool> outside;                 // tf_crop_and_resize: maps outside the input
};
// The attributes that shape the taps, with ONNX's defaults.
struct ResizeMode {
  std::string mode = "nearest";  // nearest, linear (bilinear, trilinear), cubic (bicubic)
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};
// Plans every axis of a Resize from `in` to `out` extents. `geo` is resizeGeometry's result for
// these operands, `stretchedSizes` whether they were sizes under the stretch policy (coordinates
// then use out/in exactly), `roi` the roi operand's values (empty when absent). Returns "" on
// success, else what is wrong.
std::string resizePlan(const ResizeMode& m, const std::vector<int64_t>& in,
                       const std::vector<int64_t>& out, const ResizeGeometry& geo,
                       bool stretchedSizes, const std::vector<double>& roi,
                       std::vector<ResizeAxisPlan>* plans);

}  // namespace mgrt
