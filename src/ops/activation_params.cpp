// activationAttrParams (include/magneto/ir/activation.h).
#include "magneto/ir/activation.h"

namespace magneto {

void activationAttrParams(const Node& n, double& alpha, double& beta) {
  const std::string& k = n.kind();
  const AttrMap& a = n.attrs();
  alpha = beta = 0;
  if (k == "LeakyRelu") alpha = a.getFloat("alpha", 0.01);
  else if (k == "Elu" || k == "Celu" || k == "ThresholdedRelu") alpha = a.getFloat("alpha", 1.0);
  else if (k == "HardSigmoid") alpha = a.getFloat("alpha", 0.2), beta = a.getFloat("beta", 0.5);
  else if (k == "Selu")
    alpha = a.getFloat("alpha", 1.67326319217681884765625),
    beta = a.getFloat("gamma", 1.05070102214813232421875);
}

}  // namespace magneto
