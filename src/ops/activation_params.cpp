// activationAttrParams (include/magneto/ir/activation.h): the ONNX attributes and defaults of the
// activation table (runtime/common/mg_acts.h).
#include "magneto/ir/activation.h"
#include "mg_acts.h"

namespace magneto {

void activationAttrParams(const Node& n, double& alpha, double& beta) {
  alpha = beta = 0;
  const mgrt::acts::ActInfo* e = mgrt::acts::find(n.kind().c_str(), mgrt::acts::kO);
  if (!e) return;
  const AttrMap& a = n.attrs();
  if (e->alphaAttr[0]) alpha = a.getFloat(e->alphaAttr, e->alphaDefault);
  if (e->betaAttr[0]) beta = a.getFloat(e->betaAttr, e->betaDefault);
}

}  // namespace magneto
