// The optimized kernel table: ops for which generated packages call an f_ kernel instead of the
// reference one. Same contract as the reference kernels (mg_runtime.h).
#include "mg_kernels.h"
namespace mgrt {
const KernelEntry* fastKernels() {
  static const KernelEntry kTable[] = {{nullptr, nullptr}};
  return kTable;
}
}  // namespace mgrt
