#include "families.h"
namespace magneto {
void registerRecurrentOps(OpRegistry& r) {}
}  // namespace magneto
