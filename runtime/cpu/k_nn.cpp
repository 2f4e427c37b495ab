#include "mg_kernels.h"
namespace mgrt {
const KernelEntry* nnKernels() {
  static const KernelEntry kTable[] = {{nullptr, nullptr}};
  return kTable;
}
}  // namespace mgrt
