// The block programs and device helpers of the operators that opsets 18 to 21 brought to the
// cuda/hip targets (codegen/gpu/lower_opset.cpp lowers to them): conversions and reductions on
// every numeric type, Resize's tap tables, the scatters, GroupNormalization, and the window ops
// Col2Im, LpPool and DeformConv. Same contract as the rest of the library (mg_kparams.h); their
// parameter structs live beside their programs.
//
// Part of runtime/gpu/, which generated packages copy verbatim.
#pragma once

#include "mg_typed.cuh"
#include "mg_resize.cuh"
#include "mg_scatter.cuh"
#include "mg_norm.cuh"
#include "mg_window.cuh"
#include "mg_select.cuh"
