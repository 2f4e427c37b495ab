#include "magneto/ir/kernel_attrs.h"

#include <fmt/format.h>

namespace magneto {
namespace {

std::string fmtF(double d) { return fmt::format("{:.9g}", d); }

}  // namespace

std::string encodeAttrs(const Node& n) {
  std::string s;
  for (const auto& [name, a] : n.attrs()) {
    std::string v;
    using K = Attribute::Kind;
    switch (a.kind()) {
      case K::kInt: v = "i:" + std::to_string(a.i()); break;
      case K::kFloat: v = "f:" + fmtF(a.f()); break;
      case K::kString: v = "s:" + a.s(); break;
      case K::kInts:
        v = "i:";
        for (size_t i = 0; i < a.ints().size(); ++i) v += (i ? "," : "") + std::to_string(a.ints()[i]);
        break;
      case K::kFloats:
        v = "f:";
        for (size_t i = 0; i < a.floats().size(); ++i) v += (i ? "," : "") + fmtF(a.floats()[i]);
        break;
      case K::kStrings:
        v = "S:";
        for (size_t i = 0; i < a.strings().size(); ++i) v += (i ? "|" : "") + a.strings()[i];
        break;
      case K::kTensor: continue;  // tensor attributes are folded away before kernels run
    }
    if (!s.empty()) s += ";";
    s += name + "=" + v;
  }
  return s;
}

}  // namespace magneto
