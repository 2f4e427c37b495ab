// Internal to codegen/gpu's lower_opset*.cpp: the helpers they share. Their lowerings of the
// operators of opsets 18-21 (and of the element types the float32 lowerings refuse) are declared
// in gpu_lowering.h, split by kind of program:
//   lower_opset.cpp          the generated map functors: Cast / CastLike, bitwise ops, IsNaN /
//                            IsInf, float64 math, Reduce* on bool / integer / float64 tensors,
//                            CenterCropPad, QuantizeLinear / DequantizeLinear
//   lower_opset_compute.cpp  the programs of runtime/gpu/kernels/mg_opset.cuh: Resize (tap tables),
//                            ScatterND / ScatterElements, GroupNormalization, Col2Im, LpPool,
//                            DeformConv
#pragma once

#include <string>
#include <vector>

#include "gpu_lowering.h"

namespace magneto {
namespace gpu {
namespace opset {

// The C++ type generated code stores an element of `t` as: ctypeOf's, except mgk::Bool,
// mgk::Half and mgk::BFloat16 for bool and the 16-bit floats (runtime/gpu/kernels/mg_typed.cuh);
// nullptr when the GPU targets cannot hold it (strings).
const char* storageType(DType t);

// "{1, 2, 3}" with doubles printed so that they read back exactly.
std::string doubleList(const std::vector<double>& v);

}  // namespace opset
}  // namespace gpu
}  // namespace magneto
