// What one Resize call computes, as the reference kernel (k_tensor_resize.cpp) reads it from the
// attributes and operands: the mode and the per-axis tap lists. Shared with the fast nearest
// kernel (f_resize.cpp), so that both take the very same source index for every output element.
#pragma once

#include <string>
#include <vector>

#include "k_tensor_shared.h"
#include "mg_runtime.h"

namespace mgrt {

// Fills *mode and *plans (one per axis of in[0]) for a Resize of in[0] into y. Returns "" on
// success, else what is wrong (without the "Resize: " prefix).
std::string resizeCallPlan(const Attrs& a, const Tensor* in, int nin, const Tensor& y, ResizeMode* mode,
                           std::vector<ResizeAxisPlan>* plans);

}  // namespace mgrt
