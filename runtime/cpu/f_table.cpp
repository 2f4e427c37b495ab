// The optimized kernel table: ops for which generated packages call an f_ kernel instead of the
// reference one. Same contract as the reference kernels (mg_runtime.h); each fast kernel falls
// back to the reference kernel for dtypes or attribute combinations it does not cover.
#include "f_gemm.h"
#include "mg_kernels.h"
namespace mgrt {
const KernelEntry* fastKernels() {
  static const KernelEntry kTable[] = {
      {"Conv", fConv},
      {"ConvTranspose", fConvTranspose},
      {"QLinearConv", fQLinearConv},
      {"QuantizeLinear", fQuantizeLinear},
      {"DequantizeLinear", fDequantizeLinear},
      {"MgQuantizedAdd", fMgQuantizedAdd},
      {"Gemm", fGemm},
      {"MatMul", fMatMul},
      {"MaxPool", fMaxPool},
      {"AveragePool", fAveragePool},
      {"GlobalAveragePool", fGlobalAveragePool},
      {"LSTM", fLSTM},
      {"GRU", fGRU},
      {"RNN", fRNN},
      {"MgElementwise", fMgElementwise},
      {"Sum", fSum},
      {"PRelu", fPRelu},
      {"Expand", fExpand},
      {"LRN", fLRN},
      {"Add", fAdd},
      {"Sub", fSub},
      {"Mul", fMul},
      {"Div", fDiv},
      {"Pow", fPow},
      {"Exp", fExp},
      {"Erf", fErf},
      {"Sqrt", fSqrt},
      {"Reciprocal", fReciprocal},
      {"Abs", fAbs},
      {"Neg", fNeg},
      {"Relu", fRelu},
      {"Sigmoid", fSigmoid},
      {"Tanh", fTanh},
      {"Transpose", fTranspose},
      {"Resize", fResize},
      {"Softmax", fSoftmax},
      {"LogSoftmax", fLogSoftmax},
      {"LayerNormalization", fLayerNormalization},
      {"RMSNormalization", fRMSNormalization},
      {"Attention", fAttention},
      {nullptr, nullptr},
  };
  return kTable;
}
}  // namespace mgrt
