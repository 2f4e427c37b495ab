#include "mg_kernels.h"
namespace mgrt {
const KernelEntry* tensorKernels() {
  static const KernelEntry kTable[] = {{nullptr, nullptr}};
  return kTable;
}
}  // namespace mgrt
