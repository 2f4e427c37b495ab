#include "mg_kernels.h"
namespace mgrt {
const KernelEntry* elementwiseKernels() {
  static const KernelEntry kTable[] = {{nullptr, nullptr}};
  return kTable;
}
}  // namespace mgrt
