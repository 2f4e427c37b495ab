// Every pass's factory and the plain functions behind them (tests call the functions directly).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "magneto/interp/fold_node.h"  // foldNode, the fold pass's step
#include "magneto/passes/pass.h"

namespace magneto {

Expected<bool> eliminateDeadCode(Graph& g);
Expected<bool> foldConstants(Graph& g);

Expected<bool> canonicalize(Graph& g);
Expected<bool> foldBatchNorm(Graph& g);
// passes/fold_affine.cpp: Mul/Add chains by constants -> one Mul and one Add.
Expected<bool> foldAffine(Graph& g);
// passes/fold_conv_scale.cpp: Conv then a per-channel constant Mul/Div -> Conv with scaled weights.
Expected<bool> foldConvScale(Graph& g);
Expected<bool> fuseEpilogues(Graph& g);
// maxInputs: the most inputs a fused chain may read (0: any; the target's limit, target_limits.h).
Expected<bool> fuseElementwise(Graph& g, int maxInputs = 0);
Expected<bool> foldPads(Graph& g);
// Same-input Convs -> one wider Conv + MgChannelSlice views; the zero-padding limit depends on
// ctx.target ("cpu", "cuda", "hip"); decisions go to ctx.trace (-debug-only=wide-merge); the
// profile of ctx.device prices each set against the members left to parallel-co-optimize (merged
// only where cheaper; a declined set is an advisory "none" group). The second form: a default
// context (device "host").
Expected<bool> wideMerge(Graph& g, PassContext& ctx);
Expected<bool> wideMerge(Graph& g, const std::string& target = "cpu");

// passes/half_storage.cpp (--precision fp16 on cuda, run by the driver after the pipeline):
// float32 tensors of the nodes for which readsHalf is true become float16, with Casts at the
// interface and around the other nodes (float islands, listed in floatNodes).
struct HalfStorageResult {
  int halfValues = 0;     // node results now stored as float16
  int halfConstants = 0;  // constants converted to float16
  int casts = 0;          // Cast nodes inserted
  std::vector<std::string> floatNodes;  // nodes that keep float32 tensors (n.describe())
};
Expected<HalfStorageResult> storeActivationsInHalf(Graph& g, const std::function<bool(const Node&)>& readsHalf);

std::unique_ptr<Pass> makeDcePass();
// passes/decompose_attention.cpp: opset 23's Attention, RotaryEmbedding and RMSNormalization ->
// plain ops (MatMul, Softmax, elementwise, views); first in the default pipeline.
Expected<bool> decomposeAttentionOps(Graph& g);
std::unique_ptr<Pass> makeDecomposeAttentionPass();
std::unique_ptr<Pass> makeCanonicalizePass();
// passes/fuse_layernorm.cpp: decomposed LayerNorm / RMSNorm chains -> LayerNormalization /
// RMSNormalization, as far as `target` ("cpu", "cuda", "hip") runs them (target_limits.h).
Expected<bool> fuseLayerNorm(Graph& g, const std::string& target = "cpu");
std::unique_ptr<Pass> makeFuseLayerNormPass();
// passes/fuse_attention.cpp: MatMul -> [scale] -> [+ mask] -> Softmax -> MatMul -> one Attention
// node, on the targets with a fused attention kernel (target_limits.h: cpu).
Expected<bool> fuseAttention(Graph& g, const std::string& target = "cpu");
std::unique_ptr<Pass> makeFuseAttentionPass();
// passes/fuse_qdq.cpp: DequantizeLinear -> Conv [-> Relu] -> QuantizeLinear -> QLinearConv, on the
// targets that run QLinearConv (nothing changes elsewhere).
Expected<bool> fuseQdq(Graph& g, const std::string& target = "cpu");
// The ops of a compiled graph that compute in float32 between an activation's DequantizeLinear and
// a QuantizeLinear (what fuse-qdq left, and why), for `magnetoc report`.
struct QdqFloatOp {
  std::string node, op, why;
};
std::vector<QdqFloatOp> floatBetweenQdq(const Graph& g, const std::string& target);
std::unique_ptr<Pass> makeFuseQdqPass();
std::unique_ptr<Pass> makeFoldBatchNormPass();
std::unique_ptr<Pass> makeFoldAffinePass();
std::unique_ptr<Pass> makeFoldConvScalePass();
std::unique_ptr<Pass> makeFuseEpiloguePass();
std::unique_ptr<Pass> makeFuseElementwisePass();
std::unique_ptr<Pass> makeFoldPadPass();
std::unique_ptr<Pass> makeWideMergePass();
// passes/shared_weight_merge.cpp: GEMMs sharing one weight Value on different, mutually
// independent inputs -> one GEMM over their stacked rows, decided on the cost model of
// ctx.device; nothing when ctx.parallelOpt is off.
Expected<bool> sharedWeightMerge(Graph& g, PassContext& ctx);
std::unique_ptr<Pass> makeSharedWeightMergePass();
// passes/batch_merge.cpp: same-shape sibling GEMMs on different inputs -> one batched MatMul,
// decided on the cost model of ctx.device; nothing when ctx.parallelOpt is off.
Expected<bool> batchMerge(Graph& g, PassContext& ctx);
std::unique_ptr<Pass> makeBatchMergePass();
// passes/batch_merge_conv.cpp: same-shape sibling Convs on different inputs -> one grouped Conv,
// decided on the cost model of ctx.device; nothing when ctx.parallelOpt is off.
Expected<bool> batchMergeConv(Graph& g, PassContext& ctx);
std::unique_ptr<Pass> makeBatchMergeConvPass();
// passes/place_concat_slices.cpp: slice operands of a Concat copied into its result where that
// elides the Concat; nothing when ctx.parallelOpt is off.
Expected<bool> placeConcatSlices(Graph& g);
std::unique_ptr<Pass> makePlaceConcatSlicesPass();
// passes/recurrent_wavefront.cpp: stacked unidirectional recurrent layers -> one "wavefront"
// group (GPU devices, on the cost model of ctx.device); nothing when ctx.parallelOpt is off.
std::unique_ptr<Pass> makeRecurrentWavefrontPass();
std::unique_ptr<Pass> makePrintParallelGroupsPass();
std::unique_ptr<Pass> makeFoldPass();
// passes/parallel_co_optimize.cpp (plain function: include/magneto/passes/parallel_co_optimize.h)
std::unique_ptr<Pass> makeParallelCoOptimizePass();

}  // namespace magneto
