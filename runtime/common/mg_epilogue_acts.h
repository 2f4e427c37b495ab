// The epilogue activations: what the IR's mg_act attribute names (on Conv, ConvTranspose, Gemm and
// MatMul, set by passes/fuse_epilogue.cpp) and what MgElementwise programs call as a unary op.
// One table for every layer that names or numbers them: the CPU runtime's enum Act and parseAct
// (mg_kernels.h), the compiler's check of mg_act (src/ops), the passes that fuse them, and the
// codes the GPU lowering writes into launch parameters (codegen/gpu, checked against the device
// enum mgk::Act of runtime/gpu/kernels/mg_kparams.h at compile time).
//
// Adding one: a line here, then its formula in each place that computes (CPU applyAct in
// mg_kernels.h, optionally vm::v16::act in f_vmath.h; the device applyAct in mg_kcommon.cuh and
// the MgElementwise expression in codegen/gpu/lower_map.cpp), the device enum entry, and tests.
//
// X(Id, "Name", code, params): Id makes Act::k<Id> and mgk::kAct<Id>; "Name" is the ONNX op (and
// mg_act value); code is the number both runtimes and the GPU launch parameters use; params is
// how many of mg_alpha / mg_beta it reads (0, 1: alpha, 2: alpha and beta).
#pragma once

#include <cstring>

#define MG_EPILOGUE_ACTS(X)             \
  X(None, "", 0, 0)                     \
  X(Relu, "Relu", 1, 0)                 \
  X(LeakyRelu, "LeakyRelu", 2, 1)       \
  X(Clip, "Clip", 3, 2)                 \
  X(Sigmoid, "Sigmoid", 4, 0)           \
  X(Tanh, "Tanh", 5, 0)                 \
  X(HardSigmoid, "HardSigmoid", 6, 2)   \
  X(Elu, "Elu", 7, 1)                   \
  X(Gelu, "Gelu", 8, 0)                 \
  X(HardSwish, "HardSwish", 9, 0)       \
  X(Selu, "Selu", 10, 2)                \
  X(Softplus, "Softplus", 11, 0)        \
  X(Swish, "Swish", 12, 0)

namespace mgrt {
namespace acts {

struct ActInfo {
  const char* name;
  int code;
  int params;
};

#define MG_ACT_INFO(id, name, code, params) {name, code, params},
inline constexpr ActInfo kTable[] = {MG_EPILOGUE_ACTS(MG_ACT_INFO)};
#undef MG_ACT_INFO
inline constexpr int kCount = static_cast<int>(sizeof(kTable) / sizeof(kTable[0]));

// The entry of a name (an ONNX op name or an mg_act value), or null; "" is None.
inline const ActInfo* find(const char* name) {
  for (const ActInfo& a : kTable)
    if (std::strcmp(a.name, name) == 0) return &a;
  return nullptr;
}

// The code of a name, -1 when it is not an epilogue activation.
inline int codeOf(const char* name) {
  const ActInfo* a = find(name);
  return a ? a->code : -1;
}

}  // namespace acts
}  // namespace mgrt
