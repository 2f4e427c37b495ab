// The one list of passes, and the default pipeline (with per-target edits, not copies).
#include "magneto/passes/passes.h"

namespace magneto {

const std::vector<PassInfo>& allPasses() {
  static const std::vector<PassInfo> kPasses = [] {
    std::vector<PassInfo> v;
    auto add = [&v](PassFactory f) {
      auto p = f();
      v.push_back({p->name(), p->summary(), std::move(f)});
    };
    add(makeDecomposeAttentionPass);
    add(makeCanonicalizePass);
    add(makeFuseQdqPass);
    add(makeFoldPass);
    add(makeFuseLayerNormPass);
    add(makeFuseAttentionPass);
    add(makeFoldBatchNormPass);
    add(makeFoldAffinePass);
    add(makeFoldConvScalePass);
    add(makeFoldPadPass);
    add(makeFuseEpiloguePass);
    add(makeFuseElementwisePass);
    add(makeWideMergePass);
    add(makeSharedWeightMergePass);
    add(makeBatchMergePass);
    add(makeBatchMergeConvPass);
    add(makePlaceConcatSlicesPass);
    add(makeRecurrentWavefrontPass);
    add(makeDcePass);
    add(makePrintParallelGroupsPass);
    add(makeParallelCoOptimizePass);
    return v;
  }();
  return kPasses;
}

std::string defaultPipeline(const std::string& target, bool parallelOpt) {
  // Opset 23's transformer ops become plain ops first (every target compiles those, and the
  // fusion and parallel passes see them); then canonical cleanup so that folding and fusion
  // see the plain graph; then the exporters' decomposed LayerNorm/RMSNorm chains become one op
  // each (before fold-affine and fuse-elementwise take their Mul/Add apart; RMSNormalization only
  // where the target runs it, so on cpu decompose-attention's chain comes back as the op).
  // fuse-qdq before fold, which would turn the weights' DequantizeLinear into float32 constants
  // (it changes nothing on targets without an integer convolution). fuse-attention before
  // fuse-epilogue and fold-affine take the score chain's scaling and mask Add apart (only where
  // the target has the fused kernel: on cpu decompose-attention's Attention comes back as one).
  std::string p = std::string("decompose-attention,canonicalize,fuse-qdq,fold,fuse-layernorm,fuse-attention,fold-batchnorm,fold-affine,fold-conv-scale,fold-pad,fuse-epilogue,") +
                  (parallelOpt ? "wide-merge,shared-weight-merge,batch-merge,batch-merge-conv," : "") + "fuse-elementwise,dce";
  (void)target;
  // Parallel structures (docs/DESIGN.md): decide per sibling group on the cost model of the
  // PassContext's device; --no-parallel-opt leaves them out.
  if (parallelOpt) p += ",place-concat-slices,recurrent-wavefront,parallel-co-optimize";
  return p;
}

}  // namespace magneto
