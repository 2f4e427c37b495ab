#include "magneto/ir/attribute.h"

namespace magneto {

bool Attribute::operator==(const Attribute& o) const {
  if (kind() != o.kind()) return false;
  if (kind() == Kind::kTensor)
    return tensor().type() == o.tensor().type() && tensor().checksum() == o.tensor().checksum();
  return v_ == o.v_;
}

const char* attrKindName(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::kInt: return "int";
    case Attribute::Kind::kFloat: return "float";
    case Attribute::Kind::kString: return "string";
    case Attribute::Kind::kInts: return "ints";
    case Attribute::Kind::kFloats: return "floats";
    case Attribute::Kind::kStrings: return "strings";
    case Attribute::Kind::kTensor: return "tensor";
  }
  return "?";
}

const Attribute* AttrMap::find(const std::string& name) const {
  auto it = m_.find(name);
  return it == m_.end() ? nullptr : &it->second;
}

int64_t AttrMap::getInt(const std::string& name, int64_t def) const {
  const Attribute* a = find(name);
  return a && a->kind() == Attribute::Kind::kInt ? a->i() : def;
}
double AttrMap::getFloat(const std::string& name, double def) const {
  const Attribute* a = find(name);
  if (a && a->kind() == Attribute::Kind::kFloat) return a->f();
  if (a && a->kind() == Attribute::Kind::kInt) return static_cast<double>(a->i());
  return def;
}
std::string AttrMap::getString(const std::string& name, const std::string& def) const {
  const Attribute* a = find(name);
  return a && a->kind() == Attribute::Kind::kString ? a->s() : def;
}
std::vector<int64_t> AttrMap::getInts(const std::string& name, std::vector<int64_t> def) const {
  const Attribute* a = find(name);
  return a && a->kind() == Attribute::Kind::kInts ? a->ints() : def;
}
std::vector<double> AttrMap::getFloats(const std::string& name, std::vector<double> def) const {
  const Attribute* a = find(name);
  return a && a->kind() == Attribute::Kind::kFloats ? a->floats() : def;
}
std::vector<std::string> AttrMap::getStrings(const std::string& name,
                                             std::vector<std::string> def) const {
  const Attribute* a = find(name);
  return a && a->kind() == Attribute::Kind::kStrings ? a->strings() : def;
}

}  // namespace magneto
