#include "families.h"

namespace magneto {

void registerAllOps(OpRegistry& r) {
  registerElementwiseOps(r);
  registerReductionOps(r);
  registerTensorOps(r);
  registerNNOps(r);
  registerRecurrentOps(r);
  registerLossOps(r);
  registerSelectionOps(r);
  registerVisionOps(r);
  registerQuantizeOps(r);
  registerSignalOps(r);
  registerRandomOps(r);
  registerInternalOps(r);
}

}  // namespace magneto
