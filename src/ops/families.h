// One registration function per op family; each lives in its own file in src/ops/.
#pragma once

#include "magneto/ir/op_schema.h"

namespace magneto {

void registerElementwiseOps(OpRegistry& r);  // unary/binary math, activations, logic, Cast, Where
void registerReductionOps(OpRegistry& r);    // Reduce*, Softmax, ArgMax, CumSum, TopK, ...
void registerTensorOps(OpRegistry& r);       // Concat, Split, Slice, Reshape, Gather, Resize, ...
void registerNNOps(OpRegistry& r);           // Conv, ConvTranspose, Gemm, MatMul, pools, norms
void registerRecurrentOps(OpRegistry& r);    // LSTM, GRU, RNN
void registerLossOps(OpRegistry& r);         // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void registerSelectionOps(OpRegistry& r);    // NonMaxSuppression, Unique, Compress, TfIdfVectorizer
void registerVisionOps(OpRegistry& r);       // GridSample, RoiAlign, MaxUnpool
void registerQuantizeOps(OpRegistry& r);     // Q/DQ, DynamicQuantizeLinear, QLinear*, *Integer
void registerSignalOps(OpRegistry& r);       // Hann/Hamming/BlackmanWindow, MelWeightMatrix, DFT, STFT
void registerRandomOps(OpRegistry& r);       // RandomUniform/Normal(Like), Bernoulli, Multinomial
void registerInternalOps(OpRegistry& r);     // Magneto's own ops (MgElementwise, ...)

}  // namespace magneto
